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
//   5. Composites: the ops marked with one `amp.composite` name are the
//      lowering of one source op whose kernel computes in f32 and rounds
//      its results once (torch-mlir lowers aten.gelu to five TOSA ops,
//      aten.gelu_backward to eight; PyTorch's CPU and CUDA kernels compute
//      them in f32 for f16 tensors). Those of them in ALLOW leave it: they
//      compute in f32, each input they would take in low precision from
//      outside composites (not a constant) is read rounded to the low type,
//      and each result that an op outside composites reads is rounded to
//      the low type for it (the rewrite casts it down and back), as the
//      source op reads and returns them. A read by another composite's op
//      stays f32: torch-mlir's gelu_backward recomputes erf(x / sqrt 2),
//      which CSE merges with the forward's. A member the painting keeps in
//      f32 anyway (a type promotion) is left as it is. Rounding after each
//      of GELU's five ops instead changed 45% of its f16 results against
//      PyTorch's kernel.
//   6. An f32 accumulating reduction that can read low precision reads an
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
// Code: PrecisionGraph::build makes the graph (nodes, effective categories,
// edges, each decision's initial reason); PrecisionPainter has one method per
// numbered step (seedAllow, spreadDeny, joinBetweenAllow, spreadThroughClear,
// computeCompositesInF32, readLowInputs). Another placement (a cost-based
// min-cut of the same graph) would replace the painter and keep the graph
// and the result type.
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
#include "llvm/ADT/MapVector.h"
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
  case DecisionReason::Composite:
    return "f32 inside a composite op (its results rounded once, as its "
           "source op's kernel does)";
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

namespace mlir::amp::detail {
/// The graph of one function's float ops (the file comment's "Graph" and
/// "Effective category"), with each op's decision initialised from its
/// category. A placement algorithm reads it and fills in the decisions: the
/// painter below, or another one (a cost-based min-cut over the same nodes
/// and edges) behind the same result type.
class PrecisionGraph {
public:
  /// Collects the float ops of `function`, classifies them and adds the
  /// edges. Fails (with a diagnostic) on an invalid `amp.precision` pin.
  static FailureOr<PrecisionGraph> build(FunctionOpInterface function,
                                         const PrecisionPolicy &policy,
                                         Precision lowPrecision);

  FunctionOpInterface function;
  PrecisionPlacement placement;
  SmallVector<Node> nodes;
  llvm::DenseMap<Operation *, unsigned> index;

  bool is(unsigned idx, Effective e) const {
    return nodes[idx].effective == e;
  }
  OpDecision &decision(unsigned idx) {
    return placement.decisions[nodes[idx].op];
  }

private:
  /// The effective category of `op` (pins, unranked tensors and
  /// accumulating reductions first, then the policy), recorded with its
  /// reason in `decision`.
  static FailureOr<Effective> classify(Operation *op, OpDecision &decision,
                                       FunctionOpInterface function,
                                       const PrecisionPolicy &policy,
                                       Precision lowPrecision);
};

/// TensorFlow's painting over a PrecisionGraph: one method per numbered step
/// of the file comment, run in order by paint().
class PrecisionPainter {
public:
  explicit PrecisionPainter(PrecisionGraph &graph) : graph(graph) {}

  PrecisionPlacement paint() {
    seedAllow();
    spreadDeny();
    joinBetweenAllow();
    spreadThroughClear();
    for (unsigned idx : allow)
      graph.decision(idx).lowPrecision = true;
    computeCompositesInF32();
    readLowInputs();
    LLVM_DEBUG(llvm::dbgs() << "[amp] " << graph.function.getName() << ": "
                            << allow.size() << "/" << graph.nodes.size()
                            << " float ops in low precision\n");
    return std::move(graph.placement);
  }

private:
  /// 1. Allow nodes (and nodes pinned low) are low precision.
  void seedAllow();
  /// 2. Deny spreads forward from deny nodes through clear / infer nodes
  /// that lie upstream of another deny or infer node.
  void spreadDeny();
  /// 3. Clear / infer nodes on a path between two allow nodes join them,
  /// except an infer node that promotes (fullSizeF32Input).
  void joinBetweenAllow();
  /// 4. Allow spreads through clear nodes in both directions (not forward
  /// out of a node whose results stay f32).
  void spreadThroughClear();
  /// 5. The low-precision ops of a composite compute in f32, their inputs
  /// and the results read outside composites rounded to the low type.
  void computeCompositesInF32();
  /// 6. f32 accumulating reductions read inputs that exist in low precision
  /// anyway in the low type.
  void readLowInputs();

  /// True if an op other than `except` reads `value` in the low type: an
  /// ALLOW node through one of its low-precision operands, or (step 5) an
  /// f32 reduction that reads it low. The rewrite casts such a value once,
  /// right after its definition, so it exists in low precision anyway.
  bool readInLowPrecision(Value value, Operation *except);
  /// True if infer node `idx` promotes: one of its data inputs is a
  /// full-size f32 tensor (a function argument of its result's shape that
  /// nothing reads low anyway, or a DENY node's result).
  bool fullSizeF32Input(unsigned idx);
  /// Records that `idx`'s precision spread from `root`.
  void setReason(unsigned idx, unsigned root) {
    OpDecision &decision = graph.decision(idx);
    decision.reason = DecisionReason::InferredFrom;
    decision.cause = graph.nodes[root].op;
  }
  /// The ALLOW nodes in program order (traversal roots, deterministic).
  SmallVector<unsigned> sortedAllow() const {
    SmallVector<unsigned> roots = llvm::to_vector(allow);
    llvm::sort(roots);
    return roots;
  }
  template <typename Enter, typename Visit>
  void traverse(unsigned root, bool inputs, bool outputs, Enter enter,
                Visit visit, bool stopAtF32Results = false) {
    ::traverse(graph.nodes, root, inputs, outputs, enter, visit,
               stopAtF32Results);
  }
  bool is(unsigned idx, Effective e) const { return graph.is(idx, e); }
  unsigned size() const { return graph.nodes.size(); }

  PrecisionGraph &graph;
  llvm::DenseSet<unsigned> allow, deny;
};
} // namespace mlir::amp::detail

using mlir::amp::detail::PrecisionGraph;
using mlir::amp::detail::PrecisionPainter;

FailureOr<Effective> PrecisionGraph::classify(Operation *op,
                                              OpDecision &decision,
                                              FunctionOpInterface function,
                                              const PrecisionPolicy &policy,
                                              Precision lowPrecision) {
  MLIRContext *ctx = op->getContext();
  StringAttr pinName =
      StringAttr::get(ctx, AmpDialect::PrecisionAttrHelper::getNameStr());
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
  if (hasUnrankedF32Tensor(op)) {
    // Stays f32 and spreads nothing, whatever its category or pin.
    decision.reason = DecisionReason::UnrankedTensor;
    op->emitRemark() << "stays f32: an unranked tensor operand or result "
                        "cannot be cast to "
                     << stringifyPrecision(lowPrecision);
    return Effective::Unknown;
  }
  if (pin && *pin == Precision::f32) {
    decision.reason = DecisionReason::UserOverride;
    return Effective::Deny;
  }
  if (iface && iface.isAccumulatingReduction()) {
    if (pin)
      op->emitWarning() << "accumulating reduction stays f32 despite "
                           "its amp.precision pin";
    decision.reason = decision.category == PrecisionCategory::deny
                          ? DecisionReason::DenyList
                          : DecisionReason::AccumulatingReduction;
    return Effective::Deny;
  }
  if (pin) {
    decision.reason = DecisionReason::UserOverride;
    return Effective::Allow;
  }
  if (!cls.category) {
    decision.reason = DecisionReason::UnknownOp;
    return Effective::Unknown;
  }
  switch (*cls.category) {
  case PrecisionCategory::allow:
    decision.reason = DecisionReason::AllowList;
    return Effective::Allow;
  case PrecisionCategory::deny:
    decision.reason = DecisionReason::DenyList;
    return Effective::Deny;
  case PrecisionCategory::infer:
    decision.reason = DecisionReason::InferredFromNeighbours;
    return Effective::Infer;
  case PrecisionCategory::clear:
    decision.reason = DecisionReason::InferredFromNeighbours;
    return Effective::Clear;
  }
  llvm_unreachable("unknown PrecisionCategory");
}

FailureOr<PrecisionGraph>
PrecisionGraph::build(FunctionOpInterface function,
                      const PrecisionPolicy &policy, Precision lowPrecision) {
  PrecisionGraph graph;
  graph.function = function;
  PrecisionPlacement &placement = graph.placement;

  // Collect float ops in program order; linalg payloads belong to their op.
  function->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == function.getOperation())
      return WalkResult::advance();
    if (isa<FunctionOpInterface>(op))
      return WalkResult::skip();
    if (!PrecisionAnalysis::isBoundary(op) && hasF32Tensor(op))
      placement.floatOps.push_back(op);
    return isa<AmpPolicyOpInterface>(op) ? WalkResult::skip()
                                         : WalkResult::advance();
  });

  // Nodes: the effective category and the operands that would go low.
  ArrayRef<Operation *> ops = placement.floatOps;
  graph.nodes.reserve(ops.size());
  for (auto [i, op] : llvm::enumerate(ops)) {
    graph.index[op] = i;
    OpDecision &decision = placement.decisions[op];
    auto iface = dyn_cast<AmpPolicyOpInterface>(op);
    decision.lowPrecisionOperands.resize(op->getNumOperands());
    for (OpOperand &operand : op->getOpOperands()) {
      unsigned number = operand.getOperandNumber();
      if (isF32Tensor(operand.get().getType()) &&
          (!iface || iface.isLowPrecisionOperand(number)))
        decision.lowPrecisionOperands.set(number);
    }
    FailureOr<Effective> effective =
        classify(op, decision, function, policy, lowPrecision);
    if (failed(effective))
      return failure();
    graph.nodes.push_back(
        Node{op, *effective, {}, {}, iface && iface.keepsF32Results()});
  }

  // Edges: f32 tensors flowing into operands that would go low precision.
  for (auto [consumerIdx, op] : llvm::enumerate(ops)) {
    const llvm::BitVector &lowOperands =
        placement.decisions[op].lowPrecisionOperands;
    for (OpOperand &operand : op->getOpOperands()) {
      if (!lowOperands.test(operand.getOperandNumber()))
        continue;
      Operation *producer = operand.get().getDefiningOp();
      auto it = producer ? graph.index.find(producer) : graph.index.end();
      if (it == graph.index.end())
        continue;
      unsigned producerIdx = it->second;
      if (!llvm::is_contained(graph.nodes[consumerIdx].fanin, producerIdx)) {
        graph.nodes[consumerIdx].fanin.push_back(producerIdx);
        graph.nodes[producerIdx].fanout.push_back(consumerIdx);
      }
    }
  }
  return graph;
}

void PrecisionPainter::seedAllow() {
  for (unsigned i = 0, e = size(); i < e; ++i)
    if (is(i, Effective::Allow))
      allow.insert(i);
}

void PrecisionPainter::spreadDeny() {
  llvm::DenseSet<unsigned> upstreamOfDenyOrInfer;
  for (unsigned root = 0, e = size(); root < e; ++root) {
    if (!is(root, Effective::Deny) && !is(root, Effective::Infer))
      continue;
    traverse(
        root, /*inputs=*/true, /*outputs=*/false,
        [&](unsigned idx) {
          return !upstreamOfDenyOrInfer.contains(idx) &&
                 is(idx, Effective::Clear);
        },
        [&](unsigned idx) { upstreamOfDenyOrInfer.insert(idx); });
  }
  for (unsigned root = 0, e = size(); root < e; ++root) {
    if (deny.contains(root) || !is(root, Effective::Deny))
      continue;
    traverse(
        root, /*inputs=*/false, /*outputs=*/true,
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
}

bool PrecisionPainter::readInLowPrecision(Value value, Operation *except) {
  return llvm::any_of(value.getUses(), [&](OpOperand &use) {
    Operation *owner = use.getOwner();
    auto it = graph.index.find(owner);
    if (owner == except || it == graph.index.end())
      return false;
    const OpDecision &decision = graph.decision(it->second);
    unsigned number = use.getOperandNumber();
    return (allow.contains(it->second) &&
            decision.lowPrecisionOperands.test(number)) ||
           (decision.readsLowPrecision &&
            decision.lowPrecisionInputs.test(number));
  });
}

bool PrecisionPainter::fullSizeF32Input(unsigned idx) {
  Operation *op = graph.nodes[idx].op;
  const llvm::BitVector &lowOperands = graph.decision(idx).lowPrecisionOperands;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  for (OpOperand &operand : op->getOpOperands()) {
    if (!lowOperands.test(operand.getOperandNumber()))
      continue;
    // An init that the payload never reads (elementwise outs) holds no data.
    if (linalgOp && !linalgOp.payloadUsesValueFromOperand(&operand))
      continue;
    Value value = operand.get();
    if (Operation *producer = value.getDefiningOp()) {
      auto it = graph.index.find(producer);
      if (it != graph.index.end() && deny.contains(it->second))
        return true;
      continue;
    }
    auto arg = cast<BlockArgument>(value);
    auto type = dyn_cast<RankedTensorType>(value.getType());
    // An argument that an allow op reads in low precision anyway exists in
    // low precision: reusing that cast costs nothing.
    if (!readInLowPrecision(arg, nullptr) && arg.getOwner()->isEntryBlock() &&
        arg.getOwner()->getParentOp() == graph.function.getOperation() &&
        type && llvm::any_of(op->getResultTypes(), [&](Type result) {
          auto shaped = dyn_cast<RankedTensorType>(result);
          return shaped && shaped.getShape() == type.getShape();
        }))
      return true;
  }
  return false;
}

void PrecisionPainter::joinBetweenAllow() {
  llvm::DenseSet<unsigned> promotes;
  for (unsigned idx = 0, e = size(); idx < e; ++idx)
    if (is(idx, Effective::Infer) && !deny.contains(idx) &&
        fullSizeF32Input(idx)) {
      promotes.insert(idx);
      graph.decision(idx).reason = DecisionReason::TypePromotion;
    }
  // D: reachable forward from ALLOW through clear / infer nodes.
  llvm::DenseSet<unsigned> downstreamOfAllow;
  for (unsigned root : llvm::to_vector(allow)) {
    traverse(
        root, /*inputs=*/false, /*outputs=*/true,
        [&](unsigned idx) {
          return !downstreamOfAllow.contains(idx) && !allow.contains(idx) &&
                 !deny.contains(idx) && !promotes.contains(idx) &&
                 (is(idx, Effective::Clear) || is(idx, Effective::Infer));
        },
        [&](unsigned idx) { downstreamOfAllow.insert(idx); });
  }
  // Backwards from each ALLOW node through D: every node met joins ALLOW.
  llvm::DenseSet<unsigned> upstreamOfAllow;
  for (unsigned root : sortedAllow()) {
    traverse(
        root, /*inputs=*/true, /*outputs=*/false,
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
}

void PrecisionPainter::spreadThroughClear() {
  llvm::DenseSet<unsigned> clearProp;
  SmallVector<std::pair<unsigned, unsigned>> joined;
  for (unsigned root : sortedAllow()) {
    if (clearProp.contains(root))
      continue;
    traverse(
        root, /*inputs=*/true, /*outputs=*/true,
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
}

/// The `amp.composite` name of `op`, or null.
static StringAttr compositeName(Operation *op) {
  return op->getAttrOfType<StringAttr>(
      AmpDialect::CompositeAttrHelper::getNameStr());
}

void PrecisionPainter::computeCompositesInF32() {
  llvm::MapVector<StringAttr, SmallVector<unsigned>> composites;
  for (unsigned idx = 0, e = size(); idx < e; ++idx)
    if (StringAttr name = compositeName(graph.nodes[idx].op))
      composites[name].push_back(idx);
  for (auto &[name, members] : composites) {
    if (llvm::none_of(members, [&](unsigned idx) {
          return graph.decision(idx).lowPrecision;
        }))
      continue;
    for (unsigned idx : members) {
      Operation *op = graph.nodes[idx].op;
      OpDecision &decision = graph.decision(idx);
      // A member the painting kept in f32 (a type promotion) keeps its
      // decision, inputs and results.
      if (!decision.lowPrecision)
        continue;
      allow.erase(idx);
      decision.lowPrecision = false;
      decision.reason = DecisionReason::Composite;
      decision.cause = nullptr;
      decision.roundedResults.resize(op->getNumResults());
      for (OpResult result : op->getResults())
        if (isF32Tensor(result.getType()) &&
            llvm::any_of(result.getUsers(), [](Operation *reader) {
              return !compositeName(reader);
            }))
          decision.roundedResults.set(result.getResultNumber());
      // Its low-precision inputs from outside composites (a matmul's f32
      // accumulator, which the source op reads rounded); not constants, which
      // the kernel holds in f32.
      decision.roundedOperands.resize(op->getNumOperands());
      for (OpOperand &operand : op->getOpOperands()) {
        Operation *producer = operand.get().getDefiningOp();
        if (decision.lowPrecisionOperands.test(operand.getOperandNumber()) &&
            !(producer && (compositeName(producer) ||
                           producer->hasTrait<OpTrait::ConstantLike>())))
          decision.roundedOperands.set(operand.getOperandNumber());
      }
    }
  }
}

void PrecisionPainter::readLowInputs() {
  // Inputs that exist in low precision anyway: results of low-precision ops
  // (other than f32-accumulator ops), and values that a low-precision user
  // takes in the low type (the rewrite casts those once, right after their
  // definition).
  auto availableLow = [&](Value value, Operation *reader) {
    if (Operation *producer = value.getDefiningOp()) {
      auto it = graph.index.find(producer);
      if (it != graph.index.end() && allow.contains(it->second) &&
          !graph.nodes[it->second].keepsF32Results)
        return true;
    }
    return readInLowPrecision(value, reader);
  };
  for (unsigned idx = 0, e = size(); idx < e; ++idx) {
    Operation *op = graph.nodes[idx].op;
    OpDecision &decision = graph.decision(idx);
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
}

FailureOr<PrecisionPlacement>
PrecisionAnalysis::run(FunctionOpInterface function) const {
  FailureOr<PrecisionGraph> graph =
      PrecisionGraph::build(function, policy, lowPrecision);
  if (failed(graph))
    return failure();
  return PrecisionPainter(*graph).paint();
}
