//===- GradientFlowAnalysis.cpp - which values carry the loss scale -------===//
//
// A sparse forward data-flow analysis on MLIR's DataFlowSolver. Its lattice
// (one element per SSA value) is
//
//   Uninitialized < Zero < Scaled < Mixed,   Zero < Unscaled < Mixed
//
// times a `tainted` bit (joined by or). Scaled: multiplied by s when the seed
// is; Zero: a constant zero, consistent with both; Unscaled: independent of
// the seed; Mixed: scaled on some paths and not on others (treated as
// unscaled and tainted). Tainted: computed from a value that left the
// backward pass unscaled.
//
// The solver runs on the symbol table around the function with three
// analyses: DeadCodeAnalysis and SparseConstantPropagation (required: they
// find the live blocks, regions and call edges) and this one. The solver
// itself carries the lattice through control flow: into scf.for / scf.while
// iteration arguments and out of their results, through both branches of an
// scf.if (a branch that constant propagation proves dead stays
// uninitialized), and across func.call into private callees and back from
// their returns. This file supplies the transfer function for the other ops:
//
//   - the op defining the seed: Scaled;
//   - no operand Scaled: Zero for a constant zero (a zero splat, a
//     linalg.fill of 0.0), else Unscaled;
//   - some operand Scaled and none tainted: the op's linearity (its
//     AmpGradientOpInterface, below) decides: every float result Scaled, or
//     the op is an exit for each of its scaled operands and its results are
//     Unscaled and tainted;
//   - results are tainted whenever an operand is, and for an op with regions
//     the solver does not look into (linalg.generic, ...), whenever a value
//     captured by its regions is scaled (that use is an exit) or tainted.
//
// Whether an op is linear in its scaled operands is the op's
// AmpGradientOpInterface (the models for tosa, arith, tensor and linalg are
// in lib/amp/Interfaces/GradientInterfaceImpl.cpp; any dialect can add its
// own); an op without it is an exit (always correct).
//
// Once the solver reaches its fixpoint, one walk in program order collects
// the exits: the uses of Scaled values by an op that is not linear in them;
// a value passed on through control flow (scf.yield, a region op's operands,
// a branch, a call's arguments, a callee's return) exits when what receives
// it is not Scaled (it merges with unscaled values); a return from the
// analysed function, a call to an external function and a use captured by an
// opaque region are exits.
//
//===----------------------------------------------------------------------===//

#include "amp/Analysis/GradientFlowAnalysis.h"
#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/SparseAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"

using namespace mlir;
using namespace mlir::amp;

//===----------------------------------------------------------------------===//
// The lattice
//===----------------------------------------------------------------------===//

namespace {
/// What scaling the seed does to a value, and whether the value depends on
/// one that left the backward pass.
class FlowValue {
public:
  enum class Kind : uint8_t { Uninitialized, Zero, Scaled, Unscaled, Mixed };

  FlowValue() = default;
  FlowValue(Kind kind, bool tainted) : kind(kind), tainted(tainted) {}

  static FlowValue join(const FlowValue &lhs, const FlowValue &rhs) {
    if (lhs.kind == Kind::Uninitialized)
      return rhs;
    if (rhs.kind == Kind::Uninitialized)
      return lhs;
    bool tainted = lhs.tainted || rhs.tainted;
    if (lhs.kind == rhs.kind)
      return {lhs.kind, tainted};
    if (lhs.kind == Kind::Zero)
      return {rhs.kind, tainted};
    if (rhs.kind == Kind::Zero)
      return {lhs.kind, tainted};
    // Scaled with Unscaled, or anything with Mixed.
    return {Kind::Mixed, tainted};
  }
  bool operator==(const FlowValue &rhs) const {
    return kind == rhs.kind && tainted == rhs.tainted;
  }

  bool isUninitialized() const { return kind == Kind::Uninitialized; }
  bool isScaled() const { return kind == Kind::Scaled; }
  /// The value in the terms of the public API: a Mixed value is unscaled once
  /// its scaled inputs are unscaled where they merge.
  Scaling getScaling() const {
    switch (kind) {
    case Kind::Zero:
      return Scaling::Zero;
    case Kind::Scaled:
      return Scaling::Scaled;
    default:
      return Scaling::Unscaled;
    }
  }
  /// Tainted, or Mixed (computed from an unscaled exit on some path).
  bool isTainted() const { return tainted || kind == Kind::Mixed; }

  void print(raw_ostream &os) const {
    static const char *const names[] = {"uninitialized", "zero", "scaled",
                                        "unscaled", "mixed"};
    os << names[static_cast<unsigned>(kind)] << (tainted ? " tainted" : "");
  }

private:
  Kind kind = Kind::Uninitialized;
  bool tainted = false;
};

class GradientFlowLattice : public dataflow::Lattice<FlowValue> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(GradientFlowLattice)
  using Lattice::Lattice;
};

/// How an op (outside control flow the solver follows) treats the scale.
struct OpFlow {
  /// Some operand is Scaled.
  bool anyScaled = false;
  /// Some operand, or a value captured by its regions, is tainted.
  bool anyTainted = false;
  /// Its linearity rule holds: its float results are Scaled.
  bool linear = false;
  /// A Scaled value is captured by one of its regions (an exit).
  bool nestedExit = false;
  /// Some operand or captured value is not known yet.
  bool incomplete = false;
};

/// True if `value` is defined outside `op` (a capture when used inside it).
static bool isDefinedOutside(Value value, Operation *op) {
  return !op->isAncestor(value.getParentRegion()->getParentOp());
}

/// Calls `fn` on every use, inside the regions of `op`, of a value defined
/// outside `op`; in post order, like Operation::walk.
static void forEachCapturedUse(Operation *op,
                               function_ref<void(OpOperand &)> fn) {
  op->walk([&](Operation *inner) {
    if (inner == op)
      return;
    for (OpOperand &use : inner->getOpOperands())
      if (isDefinedOutside(use.get(), op))
        fn(use);
  });
}

/// Evaluates the transfer function of `op` over the states `state` returns.
static OpFlow evaluate(Operation *op,
                       function_ref<FlowValue(Value)> state) {
  OpFlow flow;
  for (Value v : op->getOperands()) {
    FlowValue s = state(v);
    flow.incomplete |= s.isUninitialized();
    flow.anyScaled |= s.isScaled();
    flow.anyTainted |= s.isTainted();
  }
  forEachCapturedUse(op, [&](OpOperand &use) {
    FlowValue s = state(use.get());
    flow.incomplete |= s.isUninitialized();
    flow.nestedExit |= s.isScaled();
    flow.anyTainted |= s.isTainted();
  });
  if (!flow.anyScaled || flow.anyTainted)
    return flow;
  // How the gradient passes through the op is the op's to say; ops with
  // regions other than linalg's (which interpret their body) are exits.
  auto iface = dyn_cast<AmpGradientOpInterface>(op);
  if (iface && (op->getNumRegions() == 0 || isa<linalg::LinalgOp>(op))) {
    auto scaling = [&](Value v) { return state(v).getScaling(); };
    flow.linear = iface.isLinearInScaledOperands(scaling);
  }
  return flow;
}

/// The state of result `result` of an op evaluated as `flow`.
static FlowValue resultState(const OpFlow &flow, Value result) {
  bool tainted = (flow.anyScaled && !flow.linear) || flow.anyTainted ||
                 flow.nestedExit;
  if (flow.anyScaled && flow.linear)
    return {isa<FloatType>(getElementTypeOrSelf(result.getType()))
                ? FlowValue::Kind::Scaled
                : FlowValue::Kind::Unscaled,
            tainted};
  if (!flow.anyScaled && isZeroConstant(result))
    return {FlowValue::Kind::Zero, tainted};
  return {FlowValue::Kind::Unscaled, tainted};
}

//===----------------------------------------------------------------------===//
// The data-flow analysis
//===----------------------------------------------------------------------===//

/// The transfer functions of the lattice for the DataFlowSolver, from `seed`
/// in `function`.
class GradientFlowDataFlowAnalysis
    : public dataflow::SparseForwardDataFlowAnalysis<GradientFlowLattice> {
public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(GradientFlowDataFlowAnalysis)

  GradientFlowDataFlowAnalysis(DataFlowSolver &solver,
                               FunctionOpInterface function, Value seed)
      : SparseForwardDataFlowAnalysis(solver), function(function),
        seed(seed) {}

  LogicalResult initialize(Operation *top) override {
    if (failed(SparseForwardDataFlowAnalysis::initialize(top)))
      return failure();
    // The analysed function runs, whoever calls it: a private step without
    // callers would otherwise be dead code, its arguments never set.
    Block &entry = function.getFunctionBody().front();
    auto *live = getOrCreate<dataflow::Executable>(getProgramPointBefore(&entry));
    propagateIfChanged(live, live->setToLive());
    for (BlockArgument arg : entry.getArguments())
      setToEntryState(getLatticeElement(arg));
    return success();
  }

  LogicalResult visitOperation(Operation *op,
                               ArrayRef<const GradientFlowLattice *> operands,
                               ArrayRef<GradientFlowLattice *> results) override {
    if (op == seed.getDefiningOp()) {
      for (auto [result, lattice] : llvm::zip(op->getResults(), results))
        propagateIfChanged(
            lattice,
            lattice->join(FlowValue(result == seed ? FlowValue::Kind::Scaled
                                                   : FlowValue::Kind::Unscaled,
                                    false)));
      return success();
    }
    ProgramPoint *point = getProgramPointAfter(op);
    OpFlow flow = evaluate(op, [&](Value v) {
      return getLatticeElementFor(point, v)->getValue();
    });
    // Wait until every input is known: the lattice only grows.
    if (flow.incomplete)
      return success();
    for (auto [result, lattice] : llvm::zip(op->getResults(), results))
      propagateIfChanged(lattice, lattice->join(resultState(flow, result)));
    return success();
  }

  /// A call: the solver carries the lattice into the callee and back from
  /// its returns. A scaled argument the callee does not receive as scaled (a
  /// public callee, one with other callers) leaves the backward pass at the
  /// call, so its results are tainted.
  LogicalResult visitCallOperation(
      CallOpInterface call,
      ArrayRef<const dataflow::AbstractSparseLattice *> operands,
      ArrayRef<dataflow::AbstractSparseLattice *> results) override {
    if (failed(SparseForwardDataFlowAnalysis::visitCallOperation(
            call, operands, results)))
      return failure();
    auto callee = dyn_cast_or_null<CallableOpInterface>(
        call.resolveCallableInTable(&symbolTables));
    Region *body = callee ? callee.getCallableRegion() : nullptr;
    if (!body || body->empty())
      return success(); // visitExternalCall taints.
    ProgramPoint *point = getProgramPointAfter(call);
    bool exits = false;
    for (auto [arg, param] :
         llvm::zip(call.getArgOperands(), body->front().getArguments())) {
      FlowValue argState = getLatticeElementFor(point, arg)->getValue();
      FlowValue paramState = getLatticeElementFor(point, param)->getValue();
      exits |= argState.isScaled() && !paramState.isUninitialized() &&
               !paramState.isScaled();
    }
    if (!exits)
      return success();
    for (dataflow::AbstractSparseLattice *result : results) {
      auto *lattice = static_cast<GradientFlowLattice *>(result);
      if (lattice->getValue().isUninitialized())
        continue;
      // Zero joins as the identity of the other kinds: only the taint bit.
      propagateIfChanged(lattice, lattice->join(FlowValue(FlowValue::Kind::Zero,
                                                          /*tainted=*/true)));
    }
    return success();
  }

  /// A call into a function without a body: an exit for every scaled
  /// argument; its results are unscaled.
  void visitExternalCall(CallOpInterface call,
                         ArrayRef<const GradientFlowLattice *> arguments,
                         ArrayRef<GradientFlowLattice *> results) override {
    bool tainted = false;
    for (const GradientFlowLattice *arg : arguments) {
      if (arg->getValue().isUninitialized())
        return;
      tainted |= arg->getValue().isScaled() || arg->getValue().isTainted();
    }
    for (GradientFlowLattice *result : results)
      propagateIfChanged(result, result->join(FlowValue(
                                     FlowValue::Kind::Unscaled, tainted)));
  }

  void setToEntryState(GradientFlowLattice *lattice) override {
    FlowValue::Kind kind = lattice->getAnchor() == seed
                               ? FlowValue::Kind::Scaled
                               : FlowValue::Kind::Unscaled;
    propagateIfChanged(lattice, lattice->join(FlowValue(kind, false)));
  }

private:
  FunctionOpInterface function;
  Value seed;
  SymbolTableCollection symbolTables;
};

//===----------------------------------------------------------------------===//
// Collecting the exits
//===----------------------------------------------------------------------===//

/// Walks the solved IR in program order and records the exits.
class ExitCollector {
public:
  ExitCollector(DataFlowSolver &solver, FunctionOpInterface function,
                Operation *symbolTableOp, GradientFlow &flow)
      : solver(solver), function(function), symbolTableOp(symbolTableOp),
        flow(flow) {}

  void collect() {
    visitRegion(function.getFunctionBody());
    // Private callees the scaled values reach.
    if (!symbolTableOp)
      return;
    for (Region &region : symbolTableOp->getRegions())
      for (Block &block : region)
        for (auto callee : block.getOps<FunctionOpInterface>())
          if (callee != function && !callee.isExternal())
            visitRegion(callee.getFunctionBody());
  }

private:
  FlowValue state(Value v) {
    if (const auto *lattice = solver.lookupState<GradientFlowLattice>(v))
      return lattice->getValue();
    return {};
  }

  void record(Value v) {
    FlowValue s = state(v);
    if (s.getScaling() != Scaling::Unscaled)
      flow.scaling[v] = s.getScaling();
    if (s.isTainted())
      flow.tainted.insert(v);
  }

  void addExit(OpOperand &use) {
    Value v = use.get();
    if (exitSet.insert(v).second)
      flow.exits.push_back(v);
    flow.exitUses[v].push_back(&use);
  }

  /// A Scaled value passed on to `targets` exits unless all of them are
  /// Scaled (they do not merge it with unscaled values).
  void forward(OpOperand &use, ValueRange targets) {
    if (!state(use.get()).isScaled())
      return;
    if (targets.empty() ||
        llvm::any_of(targets, [&](Value t) { return !state(t).isScaled(); }))
      addExit(use);
  }

  void visitRegion(Region &region) {
    for (Block &block : region) {
      // Dead code (a branch constant propagation ruled out) has no state.
      const auto *live = solver.lookupState<dataflow::Executable>(
          solver.getProgramPointBefore(&block));
      if (!live || !live->isLive())
        continue;
      for (BlockArgument arg : block.getArguments())
        record(arg);
      for (Operation &op : block)
        visitOp(&op);
    }
  }

  /// The values `use` (an operand of a terminator) is passed on to, or
  /// std::nullopt if it leaves the analysed control flow.
  std::optional<SmallVector<Value>> forwardTargets(OpOperand &use) {
    Operation *op = use.getOwner();
    unsigned number = use.getOperandNumber();
    SmallVector<Value> targets;
    if (op->hasTrait<OpTrait::ReturnLike>() &&
        isa<FunctionOpInterface>(op->getParentOp())) {
      // A return from the analysed function leaves the step; a return from a
      // private callee whose every use is a call goes to the call results.
      auto callee = dyn_cast<FunctionOpInterface>(op->getParentOp());
      if (!callee || callee == function || !symbolTableOp ||
          callee.isPublic())
        return std::nullopt;
      std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(callee, symbolTableOp);
      if (!uses)
        return std::nullopt;
      for (const SymbolTable::SymbolUse &symbolUse : *uses) {
        auto call = dyn_cast<CallOpInterface>(symbolUse.getUser());
        if (!call || number >= call->getNumResults())
          return std::nullopt;
        targets.push_back(call->getResult(number));
      }
      return targets;
    }
    if (auto term = dyn_cast<RegionBranchTerminatorOpInterface>(op)) {
      auto parent = dyn_cast<RegionBranchOpInterface>(op->getParentOp());
      if (!parent)
        return std::nullopt;
      SmallVector<RegionSuccessor> successors;
      parent.getSuccessorRegions(RegionBranchPoint(term), successors);
      bool forwarded = false;
      for (RegionSuccessor &successor : successors) {
        OperandRange operands = term.getSuccessorOperands(successor);
        if (operands.empty() ||
            number < operands.getBeginOperandIndex() ||
            number >= operands.getBeginOperandIndex() + operands.size())
          continue;
        forwarded = true;
        targets.push_back(successor.getSuccessorInputs()
                              [number - operands.getBeginOperandIndex()]);
      }
      if (!forwarded)
        return std::nullopt;
      return targets;
    }
    if (auto branch = dyn_cast<BranchOpInterface>(op)) {
      for (unsigned i = 0, e = op->getNumSuccessors(); i < e; ++i) {
        SuccessorOperands operands = branch.getSuccessorOperands(i);
        OperandRange forwarded = operands.getForwardedOperands();
        if (forwarded.empty() ||
            number < forwarded.getBeginOperandIndex() ||
            number >= forwarded.getBeginOperandIndex() + forwarded.size())
          continue;
        targets.push_back(op->getSuccessor(i)->getArgument(
            operands.getProducedOperandCount() + number -
            forwarded.getBeginOperandIndex()));
      }
      if (targets.empty())
        return std::nullopt;
      return targets;
    }
    return std::nullopt;
  }

  void visitOp(Operation *op) {
    // Not reached by the solver.
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return state(v).isUninitialized(); }))
      return;
    auto recordResults = [&]() {
      for (Value result : op->getResults())
        record(result);
    };

    if (op->hasTrait<OpTrait::IsTerminator>() &&
        (isa<RegionBranchTerminatorOpInterface, BranchOpInterface>(op) ||
         op->hasTrait<OpTrait::ReturnLike>())) {
      for (OpOperand &use : op->getOpOperands()) {
        if (!state(use.get()).isScaled())
          continue;
        if (std::optional<SmallVector<Value>> targets = forwardTargets(use))
          forward(use, *targets);
        else
          addExit(use);
      }
      return;
    }

    if (auto call = dyn_cast<CallOpInterface>(op)) {
      auto callee = dyn_cast_or_null<CallableOpInterface>(
          call.resolveCallableInTable(&symbolTables));
      Region *body = callee ? callee.getCallableRegion() : nullptr;
      OperandRange args = call.getArgOperands();
      for (OpOperand &use : op->getOpOperands()) {
        if (!state(use.get()).isScaled())
          continue;
        unsigned number = use.getOperandNumber();
        bool isArg = !args.empty() && number >= args.getBeginOperandIndex() &&
                     number < args.getBeginOperandIndex() + args.size();
        if (!body || body->empty() || !isArg) {
          addExit(use);
          continue;
        }
        forward(use, body->front().getArgument(
                         number - args.getBeginOperandIndex()));
      }
      recordResults();
      return;
    }

    if (auto branch = dyn_cast<RegionBranchOpInterface>(op)) {
      SmallVector<RegionSuccessor> successors;
      branch.getSuccessorRegions(RegionBranchPoint::parent(), successors);
      for (OpOperand &use : op->getOpOperands()) {
        if (!state(use.get()).isScaled())
          continue;
        unsigned number = use.getOperandNumber();
        SmallVector<Value> targets;
        for (RegionSuccessor &successor : successors) {
          OperandRange operands = branch.getEntrySuccessorOperands(successor);
          if (operands.empty() || number < operands.getBeginOperandIndex() ||
              number >= operands.getBeginOperandIndex() + operands.size())
            continue;
          targets.push_back(successor.getSuccessorInputs()
                                [number - operands.getBeginOperandIndex()]);
        }
        // An operand that is not passed on (a loop bound, a condition).
        if (targets.empty())
          addExit(use);
        else
          forward(use, targets);
      }
      for (Region &region : op->getRegions())
        visitRegion(region);
      recordResults();
      return;
    }

    OpFlow opFlow = evaluate(op, [&](Value v) { return state(v); });
    // Uses captured by regions the solver does not look into exit first, as
    // they come first in the op's body.
    if (op->getNumRegions() != 0)
      forEachCapturedUse(op, [&](OpOperand &use) {
        if (state(use.get()).isScaled())
          addExit(use);
      });
    if (opFlow.anyScaled && !opFlow.linear)
      for (OpOperand &use : op->getOpOperands())
        if (state(use.get()).isScaled())
          addExit(use);
    recordResults();
  }

  DataFlowSolver &solver;
  FunctionOpInterface function;
  Operation *symbolTableOp;
  GradientFlow &flow;
  SymbolTableCollection symbolTables;
  llvm::DenseSet<Value> exitSet;
};
} // namespace

FailureOr<GradientFlow> mlir::amp::analyzeGradientFlow(
    FunctionOpInterface function, Value seed) {
  Region &body = function.getFunctionBody();
  if (!llvm::hasSingleElement(body))
    return function.emitOpError()
           << "amp-loss-scaling expects a single-block function body";
  // The solver runs on the symbol table around the function, so that calls
  // resolve and private callees are analysed with their call sites.
  Operation *parent = function->getParentOp();
  Operation *symbolTableOp =
      parent ? SymbolTable::getNearestSymbolTable(parent) : nullptr;
  Operation *top = symbolTableOp ? symbolTableOp : function.getOperation();

  DataFlowSolver solver;
  solver.load<dataflow::DeadCodeAnalysis>();
  solver.load<dataflow::SparseConstantPropagation>();
  solver.load<GradientFlowDataFlowAnalysis>(function, seed);
  if (failed(solver.initializeAndRun(top)))
    return function.emitOpError() << "the gradient-flow analysis failed";

  GradientFlow flow;
  ExitCollector(solver, function, symbolTableOp, flow).collect();
  return flow;
}
