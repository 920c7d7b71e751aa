//===- PrecisionAnalysis.cpp - where low precision goes -------------------===//
//
// TensorFlow's auto_mixed_precision "painting" (grappler
// auto_mixed_precision.cc), transcribed onto MLIR def-use edges.
//
// Graph. Nodes are the float ops of one function: ops outside linalg payloads
// with an f32 tensor operand or result, except boundaries (constants, casts,
// calls, terminators, region-holding control flow), whose types never change.
// An edge A -> B exists when B uses an f32 tensor result of A through an
// operand that B would take in low precision (a matmul's accumulator init is
// not such an operand, so it never pulls its producer into low precision).
//
// Effective category of a node: an op with an unranked f32 tensor operand or
// result stays f32 and spreads nothing (no cast verifies on an unranked
// tensor), with a remark; else an `amp.precision` pin on the op or an
// enclosing op ("user override": f32 acts as deny, the low type as allow);
// else accumulating reductions are deny whatever the policy says; else the
// policy's category; else unknown (stays f32 and spreads nothing).
//
// Painting (each set only grows):
//   1. ALLOW = allow nodes.
//   2. U = deny/infer nodes plus clear nodes from which one is reachable
//      forward through clear nodes only. Deny spreads forward from each deny
//      node into nodes of U: DENY = deny nodes plus what that reaches.
//   3. D = nodes reachable forward from ALLOW through clear/infer nodes not
//      in ALLOW or DENY. Walking backwards from each ALLOW node through D,
//      every node met joins ALLOW: it lies between two low-precision ops.
//      An infer node that *promotes* is kept out of D: one of its inputs is a
//      full-size f32 tensor, a function argument of the node's result shape
//      (data such as a regression target or the residual stream's input;
//      a broadcast bias is smaller) that no allow op reads in low precision
//      anyway, or a DENY node's result. PyTorch runs
//      such an op in f32 by type promotion (f16 - f32 is f32), and a
//      low-precision `prediction - target` would cancel exactly the digits a
//      regression's gradient is made of.
//   4. From every ALLOW node, low precision spreads in both directions
//      through clear nodes that are in neither set, except forward out of an
//      op whose results stay f32 (tosa.matmul, linalg contractions): data
//      movement after such an op follows its f32 result, instead of rounding
//      the f32 accumulator to low precision and back.
// Nodes in ALLOW compute in low precision; all others stay f32. Every
// decision records why, naming the op that caused it.
//   5. An f32 accumulating reduction that can read low precision reads an
//      input in the low type when the input exists in low precision anyway:
//      its producer is in ALLOW (and returns the low type, unlike a matmul's
//      f32 accumulator), or another user takes it in the low type, so the
//      rewrite casts it once anyway. The reduction still accumulates in f32
//      (f16 in, f32 init), the way PyTorch sums an f16 tensor, instead of
//      reading a whole f32 copy of its input.
//
// Cost: every traversal marks each node at most once per root, so the whole
// analysis is O(N + E) per root set in practice (linear on the benchmarks).
//
//===----------------------------------------------------------------------===//

#include "amp/Analysis/PrecisionAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Interfaces/ShapedOpInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "amp-precision-analysis"

using namespace mlir;
using namespace mlir::amp;

bool PrecisionAnalysis::isBoundary(Operation *op) {
  // Ops their dialect marks (tensor.empty holds no data: the rewrite
  // re-creates it in any type, so it must not tie its users together;
  // tensor.rank and tosa.dim read no data; tosa.cast is an explicit cast) and
  // shape queries.
  if (isa<AmpBoundaryOpInterface, ShapedDimOpInterface>(op))
    return true;
  if (isa<AmpPolicyOpInterface>(op))
    return false;
  return op->hasTrait<OpTrait::IsTerminator>() || isa<CallOpInterface>(op) ||
         op->hasTrait<OpTrait::ConstantLike>() || isa<CastOpInterface>(op) ||
         op->getNumRegions() > 0;
}

static bool hasF32Tensor(Operation *op) {
  return llvm::any_of(op->getOperandTypes(), isF32Tensor) ||
         llvm::any_of(op->getResultTypes(), isF32Tensor);
}

/// True if `op` reads or produces an unranked f32 tensor: no cast verifies
/// on one (arith.truncf/extf need ranked tensors, and the TOSA lowering
/// needs ranks), so such an op keeps its f32 types.
static bool hasUnrankedF32Tensor(Operation *op) {
  auto unranked = [](Type type) {
    return isa<UnrankedTensorType>(type) && isF32Tensor(type);
  };
  return llvm::any_of(op->getOperandTypes(), unranked) ||
         llvm::any_of(op->getResultTypes(), unranked);
}

bool PrecisionPlacement::isLowPrecisionOperand(Operation *op,
                                               unsigned index) const {
  auto it = decisions.find(op);
  if (it == decisions.end())
    return false;
  const OpDecision &decision = it->second;
  if (decision.readsLowPrecision)
    return decision.lowPrecisionInputs.test(index);
  return decision.lowPrecision && decision.lowPrecisionOperands.test(index);
}

/// "file:line:col" for file locations, the printed location otherwise.
static std::string describe(Operation *op);

StringRef mlir::amp::stringifyDecisionReason(DecisionReason reason) {
  switch (reason) {
  case DecisionReason::AllowList:
    return "allow list";
  case DecisionReason::DenyList:
    return "deny list";
  case DecisionReason::AccumulatingReduction:
    return "deny list (accumulating reduction)";
  case DecisionReason::UserOverride:
    return "user override";
  case DecisionReason::UnknownOp:
    return "unknown op";
  case DecisionReason::UnrankedTensor:
    return "unranked tensor";
  case DecisionReason::InferredFromNeighbours:
    return "inferred from f32 neighbours";
  case DecisionReason::TypePromotion:
    return "type promotion (a full-size f32 input)";
  case DecisionReason::InferredFrom:
    return "inferred from";
  }
  llvm_unreachable("unknown DecisionReason");
}

std::string OpDecision::describeReason() const {
  std::string text = stringifyDecisionReason(reason).str();
  if (cause)
    text += " " + describe(cause);
  return text;
}

static std::string describe(Operation *op) {
  return op->getName().getStringRef().str() + " at " +
         formatLocation(op->getLoc());
}

namespace {
/// The category that drives painting, after pins and reductions.
enum class Effective { Allow, Deny, Infer, Clear, Unknown };

struct Node {
  Operation *op;
  Effective effective;
  SmallVector<unsigned> fanin, fanout;
  /// A low-precision op whose results stay f32 (it accumulates into them,
  /// like tosa.matmul): its users see f32 data.
  bool keepsF32Results = false;
};

/// Depth-first traversal from `root`. `enter(idx)` says whether a neighbour
/// may be entered; `visit(idx)` runs once for the root and each entered node.
template <typename Enter, typename Visit>
void traverse(ArrayRef<Node> nodes, unsigned root, bool inputs, bool outputs,
              Enter enter, Visit visit, bool stopAtF32Results = false) {
  llvm::DenseSet<unsigned> seen{root};
  SmallVector<unsigned> stack{root};
  visit(root);
  while (!stack.empty()) {
    unsigned idx = stack.pop_back_val();
    auto step = [&](ArrayRef<unsigned> next) {
      for (unsigned n : next)
        if (!seen.contains(n) && enter(n)) {
          seen.insert(n);
          visit(n);
          stack.push_back(n);
        }
    };
    if (inputs)
      step(nodes[idx].fanin);
    if (outputs && !(stopAtF32Results && nodes[idx].keepsF32Results))
      step(nodes[idx].fanout);
  }
}
} // namespace

FailureOr<PrecisionPlacement>
PrecisionAnalysis::run(FunctionOpInterface function) const {
  PrecisionPlacement placement;
  MLIRContext *ctx = function->getContext();
  StringAttr pinName =
      StringAttr::get(ctx, AmpDialect::PrecisionAttrHelper::getNameStr());

  // Collect float ops in program order; linalg payloads belong to their op.
  function->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == function.getOperation())
      return WalkResult::advance();
    if (isa<FunctionOpInterface>(op))
      return WalkResult::skip();
    if (!isBoundary(op) && hasF32Tensor(op))
      placement.floatOps.push_back(op);
    return isa<AmpPolicyOpInterface>(op) ? WalkResult::skip()
                                         : WalkResult::advance();
  });

  ArrayRef<Operation *> ops = placement.floatOps;
  llvm::DenseMap<Operation *, unsigned> index;
  SmallVector<Node> nodes;
  nodes.reserve(ops.size());
  for (auto [i, op] : llvm::enumerate(ops)) {
    index[op] = i;
    OpDecision &decision = placement.decisions[op];
    Classification cls = policy.classify(op);
    decision.category = cls.category;
    decision.source = cls.source;

    // A pin on the op or on any op enclosing it (up to the function).
    std::optional<Precision> pin;
    for (Operation *cur = op; cur; cur = cur->getParentOp()) {
      if (auto attr = cur->getAttrOfType<PrecisionAttr>(pinName)) {
        pin = attr.getValue();
        if (*pin != Precision::f32 && *pin != lowPrecision)
          return cur->emitOpError()
                 << "pins precision " << attr
                 << ", but amp-autocast runs with precision="
                 << stringifyPrecision(lowPrecision) << " (expected "
                 << PrecisionAttr::get(ctx, Precision::f32) << " or "
                 << PrecisionAttr::get(ctx, lowPrecision) << ")";
        break;
      }
      if (cur == function.getOperation())
        break;
    }

    auto iface = dyn_cast<AmpPolicyOpInterface>(op);
    bool accumulating = iface && iface.isAccumulatingReduction();
    decision.lowPrecisionOperands.resize(op->getNumOperands());
    for (OpOperand &operand : op->getOpOperands()) {
      unsigned number = operand.getOperandNumber();
      if (isF32Tensor(operand.get().getType()) &&
          (!iface || iface.isLowPrecisionOperand(number)))
        decision.lowPrecisionOperands.set(number);
    }
    Effective effective;
    if (hasUnrankedF32Tensor(op)) {
      // Stays f32 and spreads nothing, whatever its category or pin.
      effective = Effective::Unknown;
      decision.reason = DecisionReason::UnrankedTensor;
      op->emitRemark() << "stays f32: an unranked tensor operand or result "
                          "cannot be cast to "
                       << stringifyPrecision(lowPrecision);
    } else if (pin && *pin == Precision::f32) {
      effective = Effective::Deny;
      decision.reason = DecisionReason::UserOverride;
    } else if (accumulating) {
      if (pin)
        op->emitWarning() << "accumulating reduction stays f32 despite "
                             "its amp.precision pin";
      effective = Effective::Deny;
      decision.reason = decision.category == PrecisionCategory::deny
                            ? DecisionReason::DenyList
                            : DecisionReason::AccumulatingReduction;
    } else if (pin) {
      effective = Effective::Allow;
      decision.reason = DecisionReason::UserOverride;
    } else if (!cls.category) {
      effective = Effective::Unknown;
      decision.reason = DecisionReason::UnknownOp;
    } else {
      switch (*cls.category) {
      case PrecisionCategory::allow:
        effective = Effective::Allow;
        decision.reason = DecisionReason::AllowList;
        break;
      case PrecisionCategory::deny:
        effective = Effective::Deny;
        decision.reason = DecisionReason::DenyList;
        break;
      case PrecisionCategory::infer:
        effective = Effective::Infer;
        decision.reason = DecisionReason::InferredFromNeighbours;
        break;
      case PrecisionCategory::clear:
        effective = Effective::Clear;
        decision.reason = DecisionReason::InferredFromNeighbours;
        break;
      }
    }
    nodes.push_back(Node{op, effective, {}, {},
                         iface && iface.keepsF32Results()});
  }

  // Edges: f32 tensors flowing into operands that would go low precision.
  for (auto [consumerIdx, op] : llvm::enumerate(ops)) {
    const llvm::BitVector &lowOperands =
        placement.decisions[op].lowPrecisionOperands;
    for (OpOperand &operand : op->getOpOperands()) {
      Value value = operand.get();
      if (!lowOperands.test(operand.getOperandNumber()))
        continue;
      Operation *producer = value.getDefiningOp();
      auto it = producer ? index.find(producer) : index.end();
      if (it == index.end())
        continue;
      unsigned producerIdx = it->second;
      if (!llvm::is_contained(nodes[consumerIdx].fanin, producerIdx)) {
        nodes[consumerIdx].fanin.push_back(producerIdx);
        nodes[producerIdx].fanout.push_back(consumerIdx);
      }
    }
  }

  auto is = [&](unsigned idx, Effective e) { return nodes[idx].effective == e; };
  llvm::DenseSet<unsigned> allow, deny;
  auto setReason = [&](unsigned idx, unsigned root) {
    OpDecision &decision = placement.decisions[nodes[idx].op];
    decision.reason = DecisionReason::InferredFrom;
    decision.cause = nodes[root].op;
  };

  // 1. allow ops.
  for (unsigned i = 0, e = nodes.size(); i < e; ++i)
    if (is(i, Effective::Allow))
      allow.insert(i);

  // 2. deny spreads forward through clear/infer ops upstream of deny/infer.
  llvm::DenseSet<unsigned> upstreamOfDenyOrInfer;
  for (unsigned root = 0, e = nodes.size(); root < e; ++root) {
    if (!is(root, Effective::Deny) && !is(root, Effective::Infer))
      continue;
    traverse(
        nodes, root, /*inputs=*/true, /*outputs=*/false,
        [&](unsigned idx) {
          return !upstreamOfDenyOrInfer.contains(idx) &&
                 is(idx, Effective::Clear);
        },
        [&](unsigned idx) { upstreamOfDenyOrInfer.insert(idx); });
  }
  for (unsigned root = 0, e = nodes.size(); root < e; ++root) {
    if (deny.contains(root) || !is(root, Effective::Deny))
      continue;
    traverse(
        nodes, root, /*inputs=*/false, /*outputs=*/true,
        [&](unsigned idx) {
          return !deny.contains(idx) && upstreamOfDenyOrInfer.contains(idx) &&
                 !allow.contains(idx);
        },
        [&](unsigned idx) {
          if (deny.insert(idx).second && idx != root &&
              !is(idx, Effective::Deny))
            setReason(idx, root);
        });
  }

  // True if an op other than `except` reads `value` in the low type: an
  // ALLOW node through one of its low-precision operands, or (step 5) an f32
  // reduction that reads it low. The rewrite casts such a value once, right
  // after its definition, so it exists in low precision anyway.
  auto readInLowPrecision = [&](Value value, Operation *except) {
    return llvm::any_of(value.getUses(), [&](OpOperand &use) {
      Operation *owner = use.getOwner();
      auto it = index.find(owner);
      if (owner == except || it == index.end())
        return false;
      const OpDecision &decision = placement.decisions[owner];
      unsigned number = use.getOperandNumber();
      return (allow.contains(it->second) &&
              decision.lowPrecisionOperands.test(number)) ||
             (decision.readsLowPrecision &&
              decision.lowPrecisionInputs.test(number));
    });
  };

  // 3. clear/infer ops between two allow ops join them, except an infer op
  // that promotes: it combines a full-size f32 input (a function argument of
  // its result's shape, or a DENY op's result) with the rest.
  auto fullSizeF32Input = [&](unsigned idx) -> bool {
    Operation *op = nodes[idx].op;
    const llvm::BitVector &lowOperands =
        placement.decisions[op].lowPrecisionOperands;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    for (OpOperand &operand : op->getOpOperands()) {
      if (!lowOperands.test(operand.getOperandNumber()))
        continue;
      // An init that the payload never reads (elementwise outs) holds no data.
      if (linalgOp && !linalgOp.payloadUsesValueFromOperand(&operand))
        continue;
      Value value = operand.get();
      if (Operation *producer = value.getDefiningOp()) {
        auto it = index.find(producer);
        if (it != index.end() && deny.contains(it->second))
          return true;
        continue;
      }
      auto arg = cast<BlockArgument>(value);
      auto type = dyn_cast<RankedTensorType>(value.getType());
      // An argument that an allow op reads in low precision anyway exists
      // in low precision: reusing that cast costs nothing.
      if (!readInLowPrecision(arg, nullptr) && arg.getOwner()->isEntryBlock() &&
          arg.getOwner()->getParentOp() == function.getOperation() && type &&
          llvm::any_of(op->getResultTypes(), [&](Type result) {
            auto shaped = dyn_cast<RankedTensorType>(result);
            return shaped && shaped.getShape() == type.getShape();
          }))
        return true;
    }
    return false;
  };
  llvm::DenseSet<unsigned> promotes;
  for (unsigned idx = 0, e = nodes.size(); idx < e; ++idx)
    if (is(idx, Effective::Infer) && !deny.contains(idx) &&
        fullSizeF32Input(idx)) {
      promotes.insert(idx);
      placement.decisions[nodes[idx].op].reason =
          DecisionReason::TypePromotion;
    }
  llvm::DenseSet<unsigned> downstreamOfAllow;
  for (unsigned root : llvm::to_vector(allow)) {
    traverse(
        nodes, root, /*inputs=*/false, /*outputs=*/true,
        [&](unsigned idx) {
          return !downstreamOfAllow.contains(idx) && !allow.contains(idx) &&
                 !deny.contains(idx) && !promotes.contains(idx) &&
                 (is(idx, Effective::Clear) || is(idx, Effective::Infer));
        },
        [&](unsigned idx) { downstreamOfAllow.insert(idx); });
  }
  llvm::DenseSet<unsigned> upstreamOfAllow;
  SmallVector<unsigned> allowRoots = llvm::to_vector(allow);
  llvm::sort(allowRoots);
  for (unsigned root : allowRoots) {
    traverse(
        nodes, root, /*inputs=*/true, /*outputs=*/false,
        [&](unsigned idx) {
          return !upstreamOfAllow.contains(idx) &&
                 downstreamOfAllow.contains(idx);
        },
        [&](unsigned idx) {
          upstreamOfAllow.insert(idx);
          if (allow.insert(idx).second)
            setReason(idx, root);
        });
  }

  // 4. allow spreads through clear ops in both directions.
  allowRoots = llvm::to_vector(allow);
  llvm::sort(allowRoots);
  llvm::DenseSet<unsigned> clearProp;
  SmallVector<std::pair<unsigned, unsigned>> joined;
  for (unsigned root : allowRoots) {
    if (clearProp.contains(root))
      continue;
    traverse(
        nodes, root, /*inputs=*/true, /*outputs=*/true,
        [&](unsigned idx) {
          return !allow.contains(idx) && !deny.contains(idx) &&
                 !clearProp.contains(idx) && is(idx, Effective::Clear);
        },
        [&](unsigned idx) {
          if (clearProp.insert(idx).second && idx != root)
            joined.push_back({idx, root});
        },
        /*stopAtF32Results=*/true);
  }
  for (auto [idx, root] : joined)
    if (allow.insert(idx).second)
      setReason(idx, root);

  for (unsigned idx : allow)
    placement.decisions[nodes[idx].op].lowPrecision = true;

  // 5. f32 accumulating reductions read inputs that exist in low precision
  // anyway: results of low-precision ops (other than f32-accumulator ops),
  // and values that a low-precision user takes in the low type (the rewrite
  // casts those once, right after their definition).
  auto availableLow = [&](Value value, Operation *reader) {
    if (Operation *producer = value.getDefiningOp()) {
      auto it = index.find(producer);
      if (it != index.end() && allow.contains(it->second) &&
          !nodes[it->second].keepsF32Results)
        return true;
    }
    return readInLowPrecision(value, reader);
  };
  for (unsigned idx = 0, e = nodes.size(); idx < e; ++idx) {
    Operation *op = nodes[idx].op;
    OpDecision &decision = placement.decisions[op];
    auto iface = dyn_cast<AmpPolicyOpInterface>(op);
    if (decision.lowPrecision || !iface || !iface.isAccumulatingReduction() ||
        !iface.canReadLowPrecision() ||
        decision.reason == DecisionReason::UserOverride ||
        decision.reason == DecisionReason::UnrankedTensor)
      continue;
    decision.lowPrecisionInputs.resize(op->getNumOperands());
    for (OpOperand &operand : op->getOpOperands())
      if (decision.lowPrecisionOperands.test(operand.getOperandNumber()) &&
          availableLow(operand.get(), op))
        decision.lowPrecisionInputs.set(operand.getOperandNumber());
    decision.readsLowPrecision = decision.lowPrecisionInputs.any();
  }

  LLVM_DEBUG(llvm::dbgs() << "[amp] " << function.getName() << ": "
                          << allow.size() << "/" << nodes.size()
                          << " float ops in low precision\n");
  return placement;
}
