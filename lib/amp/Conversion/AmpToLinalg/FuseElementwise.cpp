//===- FuseElementwise.cpp - the amp-fuse-elementwise pass ----------------===//
//
// Upstream's elementwise fusion on tensors (LinalgElementwiseOpFusionPass:
// the same patterns, the same greedy top-down driver) with one more rule in
// the control function: nothing is fused into a contraction.
//
// Why: the lowerings that call a GEMM library for contractions
// (amp-lower-contractions-to-runtime) need each operand to be a buffer of
// the GEMM's input type. Fusing an elementwise producer into a contraction
// moves its arithmetic into the multiply-add body: the autocast's truncf of
// an f32 activation lands inside an f16 matmul, whose A operand is then f32
// and rounded per multiply-add, and no GEMM can compute that. Unfused, the
// producer is one elementwise op writing an f16 buffer and the contraction a
// GEMM call on it: the traffic of one extra buffer against a matmul run as
// naive loops.
//
// Algorithm: the control function of every pattern accepts a fusion when the
// producer has one use (upstream's default) and, with keep-contractions,
// the consumer is not a contraction (amp::isGemmContraction).
// Reductions that become contractions by fusion (a sum of products, such as
// the row-wise dot product of a loss) still fuse: their consumer is a plain
// reduction before the fusion. With keep-contractions, a reshape that only
// adds or drops unit dimensions of a contraction's result is not folded
// into its elementwise reader by expansion: the reader stays in its own
// shape, where it fuses with the ops that read it (a linear layer's weight
// gradient, 1 x M x N from TOSA's batched matmul, unscaled for an M x N
// optimizer update).
//
// With multi-use, a second phase fuses a producer whose results other ops
// read too. Upstream's patterns would keep such a producer for its other
// readers and recompute it inside the fused op; here the other readers read
// the fused op's copy of the result (upstream yields it as an extra result),
// so nothing is computed twice. Conditions: producer and consumer are
// linalg.generic ops with only parallel loops, the consumer reads the
// producer's result through the identity map and the producer writes it
// through the identity map (the fused loop walks both in the same order),
// the fused op stays within kMaxFusedOperands operands, and every other
// reader comes after the consumer in the block (the fused op is created
// where the consumer was and must dominate them). One walk over each block
// in order checks positions against a numbering taken once (the fused op
// takes the consumer's number); a fused op is offered as a consumer again
// before the walk moves on. Where the consumer read several results of the
// producer, the fused op reads the others from its own body too (Adam's
// update reads both moments, made in one op by the fusions before it).
// A fused op whose body computes one value twice (a gradient that two
// consumers each rounded to f16, for its two GEMMs, now both in one body)
// has its body CSE'd and yields it once: the readers of the second result
// read the first, and no loop writes the same tensor twice.
// (Upstream's patterns are not run again after it: their reshape
// propagation would move a fused update into the unit dimensions of its
// gradient's shape, and the state it returns would be a reshape, copied
// into the result's buffer, instead of the buffer itself.)
//
// With recompute, after that phase: an all-parallel reader of an
// all-parallel producer's results (each read through the identity map)
// computes the producer again from its inputs when the producer's
// full-size inputs that the reader does not read already take fewer bytes
// per element than the results it reads (inputs read through a broadcast
// map count nothing). A clone of the producer is fused into the reader once
// per result it reads (upstream's fusion inlines a producer with one use);
// the cleanup merges the inputs the copies share, CSEs their bodies and
// drops the producer's results nothing reads now. The values are the same
// ops on the same elements, bit for bit. What it is for: the backward pass
// reads values the forward pass computed in the same loop as its output
// (a tanh-approximated GELU's x^2, x/2, tanh and 1 + tanh: 16 bytes an
// element written and read again), where reading x (4 bytes) and computing
// them again moves a fraction of the bytes; PyTorch's GELU backward also
// recomputes from x. Producers with more than kMaxRecomputedOps ops, or
// that read their inits, are not recomputed. Readers that would read as
// many bytes from the inputs as from the results recompute the producer
// too when that leaves exactly one other reader, a generic (not a
// contraction) that reads one of its results through one operand: that
// reader then takes the producer itself, and no tensor is written for any
// of them (nor when no other reader is left). A softmax over scaled scores: the
// scaling, read by the max and the exponentials, and the exponentials, read by
// their sum and the division, were two f32 tensors of the scores' size written
// and read twice each; now the max, the sum and the division each read the
// scores. The phase repeats while it changes something (a reader that took a
// producer may be recomputable in turn), at most kMaxRecomputeRounds times.
//
// With reductions, first: every linalg.reduce (TOSA's reductions lower to
// it) is generalized, so that the patterns fuse an elementwise producer
// that only the reduction reads into it, as into any linalg.generic (the
// patterns take generic consumers only). A layer norm's variance summed
// (x - mean)^2 from a loop that wrote the squares as an f32 tensor for it
// alone (the deviations themselves, read by the normalization too, were
// fused into that loop by the multi-use phase). The fused reduction walks
// its elements in the same order: the values are unchanged.
//
// What it is for: an optimizer update whose new state several ops read
// (SGD's momentum buffer, which the parameter update reads and, under
// dynamic loss scaling, the skip guard selects) was a loop per op over
// every parameter (three for SGD with momentum under loss scaling), and is
// one loop now that reads each input once and writes each state once.
//
// With transposes, a third phase: a linalg.transpose whose input is the
// only use of an all-parallel linalg.generic is generalized (its input map
// the inverse permutation) and the producer fused into it. The autocast
// rounds a convolution's NHWC output to f16 and TOSA then transposes it to
// NCHW: two passes over the activation (f32 in, f16 out, f16 in, f16 out)
// become one (f32 in, f16 out), which amp-cpu-vectorize tiles in 2-D like a
// transpose. It runs last so that nothing is fused into the transposing op's
// readers: a many-operand loop that reads one operand transposed (an
// optimizer update reading its gradient in the filter layout) tiles in 2-D
// for every operand and was 2.6x slower than the transpose and the update
// apart (resnet18's bf16 step, when the phase ran before the patterns).
// Transposes that a contraction or convolution reads, through reshapes,
// transposes and copies, stay named: amp-convolutions-to-gemm traces a
// filter back to PyTorch's OIHW weight through them, and the GEMM lowerings
// read a transposed operand in place.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "amp/Support/Contractions.h"
#include "amp/Support/Elementwise.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPFUSEELEMENTWISEPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Most operands (inputs and outputs) a multi-use fusion may give the fused
/// op: beyond this, one loop streams more buffers than it gains by reading
/// the shared ones once.
static constexpr unsigned kMaxFusedOperands = 12;

static bool hasOnlyParallelLoops(linalg::GenericOp op) {
  return op.hasPureTensorSemantics() &&
         op.getNumParallelLoops() == op.getNumLoops();
}

/// Whether `operand` of an all-parallel consumer may fuse its multi-use
/// producer (file comment, second phase); `position` numbers the block's ops.
static bool isMultiUseFusable(OpOperand &operand,
                              const DenseMap<Operation *, unsigned> &position) {
  auto consumer = cast<linalg::GenericOp>(operand.getOwner());
  auto producer = operand.get().getDefiningOp<linalg::GenericOp>();
  if (!producer || producer->hasOneUse() ||
      producer->getBlock() != consumer->getBlock() ||
      !hasOnlyParallelLoops(producer) ||
      !linalg::areElementwiseOpsFusable(&operand) ||
      !consumer.getMatchingIndexingMap(&operand).isIdentity() ||
      !producer
           .getIndexingMapMatchingResult(cast<OpResult>(operand.get()))
           .isIdentity() ||
      producer->getNumOperands() + consumer->getNumOperands() >
          kMaxFusedOperands + 1)
    return false;
  auto consumerPosition = position.find(consumer);
  if (consumerPosition == position.end())
    return false;
  Block *block = consumer->getBlock();
  for (Value result : producer->getResults())
    for (Operation *user : result.getUsers()) {
      if (user == consumer)
        continue;
      auto userPosition = position.find(block->findAncestorOpInBlock(*user));
      if (userPosition == position.end() ||
          userPosition->second <= consumerPosition->second)
        return false;
    }
  return true;
}

/// After `producer` is fused into a consumer through one operand, the fused
/// op still reads the producer's other results where the consumer read
/// several (the parameter update reading both of Adam's moments, which an
/// earlier fusion made in one op): the producer would stay, computed twice.
/// Those reads take the value the fused body computes for that result
/// instead (the same element: the consumer read and the producer wrote it
/// through identity maps), and the cleanup drops the unused operands.
static void readInlinedResults(RewriterBase &rewriter,
                               linalg::GenericOp fused, Operation *producer,
                               const DenseMap<Value, Value> &replacements) {
  Operation *yield = fused.getBody()->getTerminator();
  for (OpOperand *input : fused.getDpsInputOperands()) {
    auto result = dyn_cast<OpResult>(input->get());
    if (!result || result.getOwner() != producer)
      continue;
    auto replacement = replacements.find(result);
    if (replacement == replacements.end())
      continue;
    auto fusedResult = dyn_cast<OpResult>(replacement->second);
    if (!fusedResult || fusedResult.getOwner() != fused ||
        fused.getMatchingIndexingMap(input) !=
            fused.getIndexingMapMatchingResult(fusedResult))
      continue;
    Value inlined = yield->getOperand(fusedResult.getResultNumber());
    BlockArgument argument = fused.getMatchingBlockArgument(input);
    Operation *definition = inlined.getDefiningOp();
    if (definition && llvm::any_of(argument.getUsers(), [&](Operation *user) {
          return !definition->isBeforeInBlock(user);
        }))
      continue;
    rewriter.replaceAllUsesWith(argument, inlined);
  }
}

/// Where a fused op yields one value under several results (file comment,
/// second phase: equivalent ops in its body, CSE'd first), the later results'
/// readers read the first of them; the cleanup then drops the later ones.
/// The results must have one type and the same permutation map: each holds
/// the yielded value at every element.
static void mergeEquivalentResults(RewriterBase &rewriter,
                                   linalg::GenericOp op) {
  if (!hasOnlyParallelLoops(op))
    return;
  DominanceInfo dominance(op);
  eliminateCommonSubExpressions(rewriter, dominance, op);
  Operation *yield = op.getBody()->getTerminator();
  for (OpResult result : op->getResults()) {
    AffineMap map = op.getIndexingMapMatchingResult(result);
    if (result.use_empty() || !map.isPermutation())
      continue;
    for (OpResult first :
         op->getResults().take_front(result.getResultNumber())) {
      if (first.getType() == result.getType() &&
          yield->getOperand(first.getResultNumber()) ==
              yield->getOperand(result.getResultNumber()) &&
          op.getIndexingMapMatchingResult(first) == map) {
        rewriter.replaceAllUsesWith(result, first);
        break;
      }
    }
  }
}

/// The second phase of the file comment on one block; the fused ops left at
/// the end are in `fusedOps`.
static void fuseMultiUseProducers(RewriterBase &rewriter, Block &block,
                                  llvm::SetVector<Operation *> &fusedOps) {
  DenseMap<Operation *, unsigned> position;
  unsigned next = 0;
  for (Operation &op : block)
    position[&op] = next++;
  for (Operation *op = block.empty() ? nullptr : &block.front(); op;) {
    auto consumer = dyn_cast<linalg::GenericOp>(op);
    if (!consumer || !hasOnlyParallelLoops(consumer)) {
      op = op->getNextNode();
      continue;
    }
    Operation *fusedOp = nullptr;
    for (OpOperand &operand : consumer->getOpOperands()) {
      if (!isMultiUseFusable(operand, position))
        continue;
      Operation *producer = operand.get().getDefiningOp();
      rewriter.setInsertionPoint(consumer);
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        continue;
      fusedOp = fused->fusedOp;
      readInlinedResults(rewriter, cast<linalg::GenericOp>(fusedOp),
                         producer, fused->replacements);
      fusedOps.insert(fusedOp);
      position[fusedOp] = position.lookup(consumer);
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceAllUsesExcept(original, replacement, fusedOp);
      // (Erased ops leave the numbering: a new op may reuse their address.)
      position.erase(consumer);
      fusedOps.remove(consumer);
      rewriter.eraseOp(consumer);
      if (producer->use_empty()) {
        position.erase(producer);
        fusedOps.remove(producer);
        rewriter.eraseOp(producer);
      }
      break;
    }
    // A fused op is offered as a consumer again.
    op = fusedOp ? fusedOp : op->getNextNode();
  }
}

/// Most ops the body of a producer recomputed by a reader (file comment,
/// recompute) may have: the reader's loop computes them once more per
/// element.
static constexpr unsigned kMaxRecomputedOps = 32;

/// Most rounds of the recompute phase.
static constexpr unsigned kMaxRecomputeRounds = 4;

/// Bytes of one element of `value`'s tensor type.
static int64_t elementBytes(Value value) {
  return llvm::divideCeil(
      getElementTypeOrSelf(value.getType()).getIntOrFloatBitWidth(), 8);
}

/// Whether `reader` may recompute `producer` (file comment, recompute):
/// an all-parallel generic of the same loops in `block` that reads the
/// producer's results through identity maps only (none as an init), whose
/// fused op stays within kMaxFusedOperands. Sets the bytes an element the
/// reads of those results take (`saved`) and the producer's full-size inputs
/// the reader does not read yet take (`added`; broadcast ones are small and
/// count nothing).
static bool mayRecompute(linalg::GenericOp producer, Operation *readerOp,
                         Block &block, int64_t &saved, int64_t &added) {
  auto reader = dyn_cast<linalg::GenericOp>(readerOp);
  if (!reader || reader->getBlock() != &block ||
      !hasOnlyParallelLoops(reader) ||
      reader.getNumLoops() != producer.getNumLoops())
    return false;
  SmallVector<OpOperand *> reads;
  for (OpOperand *input : reader.getDpsInputOperands()) {
    if (input->get().getDefiningOp() != producer)
      continue;
    if (!reader.getMatchingIndexingMap(input).isIdentity())
      return false;
    reads.push_back(input);
  }
  if (reads.empty() ||
      llvm::any_of(reader.getDpsInitsMutable(), [&](OpOperand &init) {
        return init.get().getDefiningOp() == producer;
      }))
    return false;
  llvm::SmallDenseSet<Value> results, inputs;
  saved = added = 0;
  for (OpOperand *read : reads)
    if (results.insert(read->get()).second)
      saved += elementBytes(read->get());
  for (OpOperand *input : producer.getDpsInputOperands()) {
    if (!producer.getMatchingIndexingMap(input).isIdentity() ||
        !inputs.insert(input->get()).second ||
        llvm::any_of(reader.getDpsInputOperands(), [&](OpOperand *own) {
          return own->get() == input->get() &&
                 reader.getMatchingIndexingMap(own).isIdentity();
        }))
      continue;
    added += elementBytes(input->get());
  }
  return reader->getNumOperands() - reads.size() + producer.getNumDpsInputs() <=
         kMaxFusedOperands;
}

/// Fuses a clone of `producer` into `reader` once per read of its results
/// (upstream's fusion inlines a producer with one use); the cleanup then
/// merges the inputs the clones share and CSEs the copies. Returns the
/// fused op.
static Operation *recomputeIn(RewriterBase &rewriter,
                              linalg::GenericOp producer, Operation *reader,
                              DenseSet<Operation *> &erased,
                              llvm::SetVector<Operation *> &fusedOps) {
  Operation *current = reader;
  while (true) {
    OpOperand *read = nullptr;
    for (OpOperand *input :
         cast<linalg::GenericOp>(current).getDpsInputOperands())
      if (input->get().getDefiningOp() == producer) {
        read = input;
        break;
      }
    if (!read)
      break;
    rewriter.setInsertionPoint(current);
    Operation *clone = rewriter.clone(*producer);
    unsigned number = cast<OpResult>(read->get()).getResultNumber();
    rewriter.modifyOpInPlace(current,
                             [&] { read->set(clone->getResult(number)); });
    FailureOr<Operation *> fused =
        amp::fuseElementwiseProducer(rewriter, *read);
    if (failed(fused)) {
      // (Not expected: the maps were checked.) The reader reads the
      // producer again and the clone goes.
      rewriter.modifyOpInPlace(current,
                               [&] { read->set(producer->getResult(number)); });
      rewriter.eraseOp(clone);
      break;
    }
    erased.insert(current);
    fusedOps.remove(current);
    current = *fused;
  }
  // (The cleanup then visits every generic of the block, the producer among
  // them.)
  fusedOps.insert(current);
  return current;
}

/// The recompute phase of the file comment on one block: each all-parallel
/// reader of an all-parallel producer's results that would read fewer bytes
/// per element from the producer's inputs fuses a clone of the producer;
/// and where the readers that would read as many bytes recompute it too,
/// leaving one reader that can take the producer itself (a reduction: a
/// softmax's exponentials, which its sum and its division both read) or
/// none, the producer goes: no tensor is written for them. Returns whether
/// anything changed.
static bool recomputeInReaders(RewriterBase &rewriter, Block &block,
                               llvm::SetVector<Operation *> &fusedOps) {
  SmallVector<linalg::GenericOp> producers;
  for (Operation &op : block) {
    auto producer = dyn_cast<linalg::GenericOp>(&op);
    if (!producer || !hasOnlyParallelLoops(producer) ||
        producer.getBody()->getOperations().size() > kMaxRecomputedOps + 1 ||
        llvm::any_of(producer.getDpsInitsMutable(), [&](OpOperand &init) {
          return producer.payloadUsesValueFromOperand(&init) ||
                 !producer.getMatchingIndexingMap(&init).isIdentity();
        }) ||
        llvm::any_of(producer.getBody()->without_terminator(),
                     [](Operation &op) {
          return !isPure(&op) || op.getNumRegions() != 0;
        }))
      continue;
    producers.push_back(producer);
  }

  // Readers fused below are erased; one may also be a later producer. (A
  // new op may take an erased one's address: it is skipped too.)
  DenseSet<Operation *> erased;
  bool changed = false;
  for (linalg::GenericOp producer : producers) {
    if (erased.contains(producer))
      continue;
    llvm::SetVector<Operation *> readers;
    for (Value result : producer->getResults())
      for (Operation *user : result.getUsers())
        readers.insert(user);
    SmallVector<Operation *> fewer, asMany, others;
    for (Operation *reader : readers) {
      int64_t saved = 0, added = 0;
      if (!mayRecompute(producer, reader, block, saved, added) || added > saved)
        others.push_back(reader);
      else
        (added < saved ? fewer : asMany).push_back(reader);
    }
    // The one other reader that takes the producer itself once the others
    // recompute it: a generic reading one of its results through one
    // operand, not a contraction (keep-contractions).
    OpOperand *last = nullptr;
    if (others.size() == 1 && !asMany.empty()) {
      auto other = dyn_cast<linalg::GenericOp>(others.front());
      if (other && other->getBlock() == &block &&
          !amp::isGemmContraction(other)) {
        unsigned reads = 0;
        for (OpOperand &operand : other->getOpOperands())
          if (operand.get().getDefiningOp() == producer) {
            last = &operand;
            ++reads;
          }
        if (last && (reads != 1 || !other.isDpsInput(last) ||
                     !linalg::areElementwiseOpsFusable(last)))
          last = nullptr;
      }
    }
    // (With no other reader at all, the recomputing readers leave the
    // producer unused.)
    if (!last && !others.empty())
      asMany.clear();
    for (Operation *reader : llvm::concat<Operation *>(fewer, asMany)) {
      recomputeIn(rewriter, producer, reader, erased, fusedOps);
      changed = true;
    }
    if (last && producer->hasOneUse()) {
      Operation *other = last->getOwner();
      FailureOr<Operation *> fused =
          amp::fuseElementwiseProducer(rewriter, *last);
      if (succeeded(fused)) {
        erased.insert(other);
        erased.insert(producer);
        fusedOps.remove(other);
        fusedOps.insert(*fused);
      }
    }
  }
  return changed;
}

/// Whether `op` is a reshape that only adds or drops unit dimensions of a
/// contraction's result (a TOSA matmul's 1 x M x N as M x N). Such a reshape
/// stays where it is (file comment, first phase): folding it into its
/// elementwise reader by expansion gains nothing (the contraction is never
/// fused, and the reshape of its buffer is a view) and moves the reader into
/// the contraction's shape, where the next reader, in the other shape, no
/// longer fuses with it: the unscaling of a linear layer's weight gradient
/// was a loop and a buffer of its own before its optimizer update.
static bool isUnitReshapeOfContraction(Operation *op) {
  if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(op))
    return false;
  auto source = op->getOperand(0).getDefiningOp<linalg::LinalgOp>();
  if (!source || !amp::isGemmContraction(source))
    return false;
  auto [small, large] =
      isa<tensor::CollapseShapeOp>(op)
          ? std::pair(op->getResult(0).getType(), op->getOperand(0).getType())
          : std::pair(op->getOperand(0).getType(), op->getResult(0).getType());
  auto withoutUnits = [](Type type) {
    SmallVector<int64_t> shape;
    for (int64_t size : cast<RankedTensorType>(type).getShape())
      if (size != 1)
        shape.push_back(size);
    return shape;
  };
  return withoutUnits(small) == withoutUnits(large);
}

/// Whether a contraction or a convolution reads `value`, directly or
/// through reshapes and copies (which amp-convolutions-to-gemm and the GEMM
/// lowerings trace to read in place).
static bool readByContraction(Value value) {
  SmallVector<Value> work{value};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    for (Operation *user : v.getUsers()) {
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
              linalg::TransposeOp>(user)) {
        work.push_back(user->getResult(0));
        continue;
      }
      auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
      if (!linalgOp)
        continue;
      if (amp::isGemmContraction(linalgOp) ||
          linalg::isaConvolutionOpInterface(linalgOp))
        return true;
      // A copy (one input, a body that yields it: a reverse, a broadcast).
      auto generic = dyn_cast<linalg::GenericOp>(user);
      if (generic && generic.getNumDpsInputs() == 1 &&
          generic->getNumResults() == 1 &&
          generic.getBody()->getTerminator()->getOperand(0) ==
              generic.getBody()->getArgument(0))
        work.push_back(generic->getResult(0));
    }
  }
  return false;
}

/// The third phase of the file comment (`transposes`): each transpose whose
/// input an all-parallel linalg.generic makes for it alone, and which no
/// contraction or convolution reads, generalized and that producer fused
/// into it.
static void fuseProducersIntoTransposes(RewriterBase &rewriter,
                                        Operation *root) {
  SmallVector<linalg::TransposeOp> transposes;
  root->walk([&](linalg::TransposeOp op) {
    auto producer = op.getInput().getDefiningOp<linalg::GenericOp>();
    if (op.hasPureTensorSemantics() && producer &&
        producer->hasOneUse() && hasOnlyParallelLoops(producer) &&
        !readByContraction(op->getResult(0)))
      transposes.push_back(op);
  });
  for (linalg::TransposeOp op : transposes) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generic =
        linalg::generalizeNamedOp(rewriter, op);
    if (succeeded(generic))
      (void)amp::fuseElementwiseProducer(rewriter,
                                         *generic->getDpsInputOperand(0));
  }
}

/// After the multi-use and recompute phases: the fused ops read an input
/// twice where producer and consumer both read it, and yield results nothing
/// reads, or a value twice: deduplicated and dropped (upstream's
/// populateEraseUnusedOperandsAndResultsPatterns, on `fusedOps` only). The
/// producers that only those dropped inputs read go too.
static void cleanUp(RewriterBase &rewriter,
                    llvm::SetVector<Operation *> &fusedOps) {
  SmallVector<Block *> blocks;
  for (Operation *op : fusedOps)
    if (!llvm::is_contained(blocks, op->getBlock()))
      blocks.push_back(op->getBlock());
  MLIRContext *context = rewriter.getContext();
  FrozenRewritePatternSet patterns = [&] {
    RewritePatternSet set(context);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(set);
    return FrozenRewritePatternSet(std::move(set));
  }();
  auto erase = [&](ArrayRef<Operation *> ops) {
    (void)applyOpPatternsGreedily(ops, patterns,
                                  GreedyRewriteConfig().setStrictness(
                                      GreedyRewriteStrictness::ExistingOps));
  };
  erase(fusedOps.takeVector());
  // Then, the inputs merged, each generic's body CSE'd and a value it
  // yields twice yielded once; the results that frees dropped.
  SmallVector<Operation *> generics;
  for (Block *block : blocks)
    for (Operation &op : *block)
      if (auto generic = dyn_cast<linalg::GenericOp>(&op)) {
        mergeEquivalentResults(rewriter, generic);
        generics.push_back(generic);
      }
  erase(generics);
  for (Block *block : blocks)
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*block)))
      if (isa<linalg::GenericOp>(op) && isOpTriviallyDead(&op))
        rewriter.eraseOp(&op);
}

namespace {
struct AmpFuseElementwisePass
    : public amp::impl::AmpFuseElementwisePassBase<AmpFuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    IRRewriter rewriter(context);
    if (reductions) {
      SmallVector<linalg::ReduceOp> reduceOps;
      getOperation()->walk(
          [&](linalg::ReduceOp op) { reduceOps.push_back(op); });
      for (linalg::ReduceOp op : reduceOps) {
        rewriter.setInsertionPoint(op);
        (void)linalg::generalizeNamedOp(rewriter, op);
      }
    }
    bool keep = keepContractions;
    linalg::ControlFusionFn control = [keep](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      if (!producer || !producer->hasOneUse())
        return false;
      if (!keep)
        return true;
      auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
      if (consumer && isUnitReshapeOfContraction(producer))
        return false;
      return !consumer || !amp::isGemmContraction(consumer);
    };
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, control);
    (void)applyPatternsGreedily(
        getOperation(), std::move(patterns),
        GreedyRewriteConfig().setUseTopDownTraversal(true));
    if (multiUse) {
      SmallVector<Block *> blocks;
      getOperation()->walk([&](Block *block) { blocks.push_back(block); });
      llvm::SetVector<Operation *> fusedOps;
      for (Block *block : blocks)
        fuseMultiUseProducers(rewriter, *block, fusedOps);
      cleanUp(rewriter, fusedOps);
      if (recompute) {
        // (The blocks again: the bodies of the ops fused above are gone.)
        SmallVector<Block *> outerBlocks;
        getOperation()->walk([&](Block *block) {
          if (!isa_and_nonnull<linalg::LinalgOp>(block->getParentOp()))
            outerBlocks.push_back(block);
        });
        // Again while it changes something (a producer fused away may leave
        // its reader, a new op, recomputable in turn), at most
        // kMaxRecomputeRounds times.
        for (unsigned round = 0; round < kMaxRecomputeRounds; ++round) {
          bool changed = false;
          for (Block *block : outerBlocks)
            changed |= recomputeInReaders(rewriter, *block, fusedOps);
          cleanUp(rewriter, fusedOps);
          if (!changed)
            break;
        }
      }
    }
    if (transposes)
      fuseProducersIntoTransposes(rewriter, getOperation());
  }
};
} // namespace
