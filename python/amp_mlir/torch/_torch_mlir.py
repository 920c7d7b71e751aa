"""The torch-mlir front end: a whole PyTorch training step, captured functionally and imported by
torch-mlir's FX importer into TOSA and linalg on tensors, with amp-mlir's training-step contract.

The algorithm:

1. **One functional step.** ``_step_function`` builds ``step(params, state, buffers, inputs, seed)``:
   the forward pass and the loss on detached copies of the parameters that require grad (buffers,
   e.g. batch-norm running statistics, are cloned inside the forward and returned with the loss, so
   their in-place update becomes a result), the backward pass from
   ``torch.autograd.backward(loss, seed)`` as AOTAutograd traces it, the gradients what it accumulates
   into the copies' ``.grad`` (the seed of d(loss)/d(loss) is an *argument*, which ``amp-loss-scaling``
   scales: no constant has to be found in the graph; a custom ``autograd.Function``'s Python backward is
   traced like any other, which ``torch.func.vjp`` refuses without ``setup_context``; the model holds the
   copies through the backward, so activation checkpointing's recomputation and reversible layers run on
   them), then the optimizer update written out as torch.optim computes it (``_optim``: SGD, Adam, AdamW
   by name, or a torch.optim instance of those or RMSprop, Adagrad, Adamax, NAdam, RAdam with its param
   groups and state; single-tensor forms), the gradients
   clipped first with ``max_grad_norm``.
2. **Capture.** In torch.export's tracing state (PyTorch's own where the model fails there, or where the
   loss the captured graph computes on the example differs from the eager model's and PyTorch's own state
   agrees with it: transformers' Gemma builds a causal mask under export tracing for a bidirectional
   model), ``make_fx`` with the decompositions of ops that mutate without declaring it (batch
   norm's running statistics become a functional op plus ``copy_``), then ``make_fx`` over
   ``functionalize`` of that graph, replayed with each ``view`` as a ``reshape`` (``_Replay``), with
   torch-mlir's decomposition table and ours (_decompositions.py) gives one flat aten graph without
   mutation, each node with its Python source location. A step with random ops (dropout) is captured
   with one more argument, its random-number state, which the replay's random ops draw from
   (``_decompositions.RANDOM``; traced as they are, they would be constants). A step with complex values
   (rotary embeddings as complex products, FFTs) is recorded once more with each as a pair of real numbers
   (``_complex``), its complex buffers arguments in that form already. A ``.item()`` (also
   ``bool(t)``, ``int(t)``, a 0-d tensor as a size: ``aten._local_scalar_dense``) on a traced tensor is
   *specialized*: the first capture runs on the real example tensors, so the value is read from them and
   the model goes on with it as a Python constant, as torch.export specializes; ``nonzero`` gets the
   count of the example's non-zero elements as its static row count (``_Specializer``). The step then
   holds for those values only, which a :class:`SpecializationWarning` names with the model's source
   lines, and checks them: each value read from integer or boolean data is computed again in the step from
   the batch and compared with the example's (``aten._assert_async``, imported as ``cf.assert``;
   ``_guards_as_asserts``), so a batch that would take another branch or another count stops the step
   with that line instead of training on a wrong graph (where torch-mlir cannot lower an op that computes
   such a value, the step is imported without its checks, with a warning); a value the parameters decide
   (a router's) is an error instead, and Switch Transformers' experts run densely so that theirs is never
   read (``_static_experts``). A few functions torch-mlir lowers no backward of are computed, in that
   first capture, above autograd as compositions whose backward it does lower: ``grid_sample``,
   ``ctc_loss``, grouped ``conv3d`` (``_decompositions``). The int64 adds whose example values leave the
   int32 range are recorded as sums (``_wide_integer_sums``).
3. **Import.** ``torch_mlir.fx.stateless_fx_import`` makes the torch dialect (backend contract), then
   one pass pipeline lowers it: ``convert-torch-to-tosa`` first (named ops our autocast policy knows
   best; scatter becomes ``tosa.scatter``), ``convert-torch-to-linalg`` / ``-scf`` / ``-arith`` /
   ``-tensor`` for what TOSA does not take (``dialect="linalg"`` swaps the first two; torch-mlir's
   ``tm_tensor`` dialect is never used, our pipelines do not know it). An op no pass converted is an
   :class:`UnsupportedOpError` naming the op and its Python source location.
4. **Contract.** The arguments and results get the attributes of docs/TrainingStep.md (``amp.init``,
   ``amp.grad_seed`` on the seed argument, ``amp.update_of``, ``amp.loss``); the initial values are
   written as ``arg<N>.npy`` and a manifest describes every argument and result.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import os
import re
import sys
import traceback
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import torch
import torch.utils._pytree as pytree
from torch.func import functionalize
from torch.nn.utils.stateless import _reparametrize_module
from torch.fx.experimental.proxy_tensor import make_fx

from . import _complex, _decompositions, _ema, _fake_quantize, _optim
from ._lower import UnsupportedOpError
from ._reference import micro_batches

OPTIMIZERS = _optim.OPTIMIZERS
DIALECTS = ("tosa", "linalg")


def available() -> bool:
    """Whether torch-mlir can be imported."""
    try:
        import torch_mlir.fx  # noqa: F401
    except Exception:  # pragma: no cover - depends on the environment
        return False
    return True


def _pipeline(dialect: str) -> str:
    """torch backend contract -> TOSA + linalg + tensor + scf + arith, still with torch types at the
    edges (``_FINALIZE`` removes them once nothing torch is left)."""
    tosa = "func.func(convert-torch-to-tosa{require-full-tosa-conversion=false})"
    linalg = "func.func(convert-torch-to-linalg{allow-non-finites=true})"
    first, second = (tosa, linalg) if dialect == "tosa" else (linalg, tosa)
    return ("builtin.module(func.func(torch-restructure-non-constant-axes),func.func(torch-fuse-quantized-ops),"
            f"{first},func.func(canonicalize),{second},func.func(canonicalize),"
            "func.func(convert-torch-to-scf),func.func(convert-torch-to-arith),func.func(convert-torch-to-tensor),"
            "func.func(canonicalize),func.func(resolve-shaped-type-result-dims),func.func(cse))")


_FINALIZE = ("builtin.module(torch-func-backend-type-conversion,func.func(canonicalize),"
             "func.func(torch-finalizing-backend-type-conversion))")

# torch ops that only carry constants, lists and the type casts at converted ops' edges: they go away
# with the ops that use them.
_GLUE = ("torch.constant.", "torch.prim.ListConstruct", "torch_c.")


_LOSS_PREFIX = "loss_fn."  # the names of a loss module's own parameters among the step's


def _step_function(model, loss_fn, names, buffer_names, n_params, n_state, n_buffers, n_inputs, plan,
                   random_state=False, forward_context=contextlib.nullcontext, complex_buffers=frozenset(),
                   max_grad_norm=None, grad_norm_type=2.0, lr_input=False, accumulation_steps=1, ema_plan=None,
                   rebuild=None):
    """``step(*params, *state, *buffers, *ema, [rng], [lrs], *inputs, seed) -> (*params', *state', *buffers',
    *ema', [rng + 1], loss)``; ``ema`` the tensors of ``ema_plan`` (a weight average, ``_ema``), updated after
    the optimizer from the new parameters and buffers; with ``accumulation_steps`` k > 1 the inputs are split along dim 0 into k
    micro-batches, each one's loss divided by k and backpropagated in turn (the gradients accumulate, the
    buffers update once per micro-batch), then one update; the loss is the sum of those parts (the
    micro-batches' mean). ``rng`` (with ``random_state``) is the random-number state the step's random ops draw
    from (``_Replay`` draws them), advanced by one each step; ``lrs`` (with ``lr_input``) each param group's
    learning rate, a 0-d float32 tensor the caller sets (a schedule's value), else the constants of ``plan``
    (the optimizer update, ``_optim``). The buffers named in ``complex_buffers`` come and go as real tensors
    in ``view_as_real`` form (``_complex``). ``rebuild`` (:func:`_input_leaves`) puts the input tensors back
    into the example inputs' containers: ``(model_inputs, target)``."""
    n_lrs = len(plan.groups) if lr_input else 0
    n_ema = len(ema_plan.initial) if ema_plan is not None else 0

    def step(*flat):
        params = list(flat[:n_params])
        state = list(flat[n_params:n_params + n_state])
        buffers = list(flat[n_params + n_state:n_params + n_state + n_buffers])
        ema = list(flat[n_params + n_state + n_buffers:n_params + n_state + n_buffers + n_ema])
        rest = flat[n_params + n_state + n_buffers + n_ema:]
        new_rng = (rest[0] + torch.ones_like(rest[0]),) if random_state else ()
        rest = rest[1 if random_state else 0:]
        lrs = list(rest[:n_lrs]) if lr_input else [g.lr for g in plan.groups]
        inputs = rest[n_lrs:-1]
        seed = flat[-1]
        model_inputs, target = rebuild(inputs) if rebuild else (inputs[:-1], inputs[-1])

        # The backward pass as AOTAutograd traces it: the autograd engine run by torch.autograd.backward
        # under make_fx records every backward op, a custom autograd.Function's backward included
        # (torch.func.vjp would need each such Function to define setup_context, which models such as
        # transformers' BLOOM do not); the gradients are what it accumulates into the parameters' .grad,
        # as loss.backward() does. The model holds the step's parameters (as functional_call makes it)
        # through the backward too: a backward that runs layers again (activation checkpointing's
        # recomputation; a reversible layer's, Reformer's, which calls torch.autograd.backward itself) runs
        # them on those. (On the model's own parameters, checkpointed layers' gradients used the initial
        # weights at every step, silently.)
        leaves = [p.detach().requires_grad_(True) for p in params]
        bufs = {k: torch.view_as_complex(b.clone()) if k in complex_buffers else b.clone()
                for k, b in zip(buffer_names, buffers)}
        def forward(model_inputs, target):  # the name FX keeps a recorded op's stack trace from (the model's
            with forward_context():            # lines below it)
                return loss_fn(model(*model_inputs), target)

        given = {**dict(zip(names, leaves)), **bufs}
        of_loss = {k[len(_LOSS_PREFIX):]: v for k, v in given.items() if k.startswith(_LOSS_PREFIX)}
        of_model = {k: v for k, v in given.items() if not k.startswith(_LOSS_PREFIX)}
        with _reparametrize_module(model, of_model, tie_weights=True, strict=False), \
                (_reparametrize_module(loss_fn, of_loss, strict=False) if of_loss else contextlib.nullcontext()):
            loss = None
            for part_inputs, part_target in micro_batches(model_inputs, target, accumulation_steps):
                part = forward(part_inputs, part_target)
                if accumulation_steps > 1:
                    part = part / accumulation_steps
                # read back from the module: a buffer the forward pass reassigns (``self.queue = new``: MoCo's
                # queues, running sums) is a new tensor there, not the clone handed in
                now = {k: _module_tensor(model, k, loss_fn) for k in buffer_names}
                _annotate_backward_of_regions(part)
                torch.autograd.backward(part, seed)
                loss = part if loss is None else loss + part.detach()
            new_buffers = tuple(torch.view_as_real(now[k]) if k in complex_buffers else now[k]
                                for k in buffer_names)
        # A parameter the loss does not reach (an unused head, one read through .detach()) has no
        # gradient, and torch.optim skips it: no weight decay, no momentum, its state kept. Whether a
        # gradient exists is the graph's structure, the same at every step.
        has_grad = [leaf.grad is not None for leaf in leaves]
        grads = [torch.zeros_like(leaf) if leaf.grad is None else leaf.grad for leaf in leaves]
        # Clipping and the update run outside autocast in PyTorch (after GradScaler.unscale_): pinned f32, so
        # that amp-autocast keeps an optimizer's matmuls (Adafactor's outer product of its row and column
        # variances) and elementwise math in f32 (an f16 outer product of variances near 1e-10 is zeros).
        with torch.autocast("cpu", enabled=False):
            if max_grad_norm is not None:  # over the optimizer's parameters, as after GradScaler.unscale_
                held = [h and n is not None for h, n in zip(has_grad, plan.group_of)]
                clipped = iter(clip_grad_norm([g for g, h in zip(grads, held) if h], max_grad_norm,
                                              grad_norm_type))
                grads = [next(clipped) if h else g for g, h in zip(grads, held)]
            new_params, new_state = _optim.update(plan, params, grads, state, lrs, has_grad)
            new_ema = []
            if ema_plan is not None:  # after the optimizer, from the model's new tensors (_ema)
                updated = {**dict(zip(names, new_params)), **dict(zip(buffer_names, new_buffers))}
                constants = _ema.model_tensors(model)
                new_ema = ema_plan.update(ema, lambda key: updated[key] if key in updated
                                          else constants[key].detach())
        return (*new_params, *new_state, *new_buffers, *new_ema, *new_rng, loss)

    return step


def _owner(model, name, loss_fn=None):
    """The submodule of ``model`` (of ``loss_fn`` for a name with ``_LOSS_PREFIX``) that holds dotted ``name``
    (a buffer, a parameter), and the name there."""
    if name.startswith(_LOSS_PREFIX) and isinstance(loss_fn, torch.nn.Module):
        model, name = loss_fn, name[len(_LOSS_PREFIX):]
    *path, leaf = name.split(".")
    for part in path:
        model = getattr(model, part)
    return model, leaf


def _module_tensor(model, name, loss_fn=None):
    """The tensor at dotted ``name`` (a buffer, or a frozen parameter the step updates) of ``model``, or of
    ``loss_fn`` for a name with ``_LOSS_PREFIX``."""
    return getattr(*_owner(model, name, loss_fn))


def clip_grad_norm(grads, max_norm, norm_type=2.0):
    """``grads`` clipped as ``torch.nn.utils.clip_grad_norm_`` clips them (its single-tensor form): the
    total norm is the ``norm_type`` norm of the per-gradient norms, and every gradient is multiplied by
    ``min(max_norm / (total + 1e-6), 1)``. Under loss scaling, amp-loss-scaling unscales each gradient where
    the norm reads it (docs/LossScaling.md), as ``GradScaler.unscale_`` before the clip."""
    norms = [torch.linalg.vector_norm(g, norm_type) for g in grads]
    total = torch.linalg.vector_norm(torch.stack(norms), norm_type)
    coef = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    return [g * coef for g in grads]


def _input_leaves(example_inputs):
    """The step's input arguments for ``example_inputs`` (model inputs..., target): every tensor, also those
    inside a container (a ``(labels, boxes)`` target, a dict of model inputs: pytree order), the other values
    (None, numbers, strings) constants of the step. Returns ``(tensors, names, kinds, rebuild)``: one name
    (``x``, ``x<i>``, ``target``, a container's element as ``target[0]``, ``x1['mask']``) and one kind
    (``input``, ``target``) per tensor, and ``rebuild(tensors) -> (model_inputs, target)`` with the containers
    and the constants put back; None for ``rebuild`` when every example input is a tensor."""
    n = len(example_inputs)
    bases = (["x"] if n == 2 else [f"x{i}" for i in range(n - 1)]) + ["target"]
    if all(isinstance(t, torch.Tensor) for t in example_inputs):
        return list(example_inputs), bases, ["input"] * (n - 1) + ["target"], None
    tensors, names, kinds, specs = [], [], [], []
    for i, (base, value) in enumerate(zip(bases, example_inputs)):
        paths, spec = pytree.tree_flatten_with_path(value)
        specs.append((spec, [leaf for _, leaf in paths]))
        for path, leaf in paths:
            if isinstance(leaf, torch.Tensor):
                tensors.append(leaf)
                names.append(base + pytree.keystr(path))
                kinds.append("target" if i == n - 1 else "input")
    if not tensors or kinds[-1] != "target":
        raise ValueError("the target (the last example input) holds no tensor: the step's loss compares the "
                         "model's output with a tensor of the batch")

    def rebuild(args):
        args = iter(args)
        values = [pytree.tree_unflatten([next(args) if isinstance(leaf, torch.Tensor) else leaf
                                         for leaf in leaves], spec) for spec, leaves in specs]
        return tuple(values[:-1]), values[-1]

    return tensors, names, kinds, rebuild


@contextlib.contextmanager
def _state_kept(model, loss_fn):
    """Runs its block with the model's buffers (batch norm's running statistics, which the forward updates),
    frozen parameters and plain tensor attributes (and the loss module's buffers) put back afterwards,
    reassigned ones too (not a copy of the model: twice the memory of a large one)."""
    saved = [(k, b, b.detach().clone()) for k, b in model.named_buffers()]
    saved += [(k, p, p.detach().clone()) for k, p in model.named_parameters() if not p.requires_grad]  # EMAs
    saved += [(k, t, t.detach().clone()) for k, t in _plain_tensors(model).items()]
    if isinstance(loss_fn, torch.nn.Module):
        saved += [(_LOSS_PREFIX + k, b, b.detach().clone()) for k, b in loss_fn.named_buffers()]
    try:
        yield
    finally:
        with torch.no_grad():
            for name, tensor, value in saved:
                tensor.copy_(value)
                if _module_tensor(model, name, loss_fn) is not tensor:  # reassigned by the forward pass
                    setattr(*_owner(model, name, loss_fn), tensor)


def _eager_loss(model, loss_fn, model_inputs, target, accumulation_steps=1):
    """``loss_fn(model(*model_inputs), target)`` (the mean over ``accumulation_steps`` micro-batches, one
    after the other) in PyTorch's own state, without autograd, the model's state kept (:func:`_state_kept`);
    None where that cannot run."""
    try:
        with _state_kept(model, loss_fn), torch.no_grad():
            return sum(float(loss_fn(model(*part), part_target))
                       for part, part_target in micro_batches(model_inputs, target, accumulation_steps)) \
                / accumulation_steps
    except Exception:
        return None


def _eager_failure(model, loss_fn, model_inputs, target, accumulation_steps=1):
    """What fails when PyTorch itself runs the forward pass and the loss on the example inputs, autograd on
    as in training (a forward that takes gradients itself, a gradient penalty, fails without it), the model's
    state kept: ``(what, exception)``, ``what`` saying which part fails and how, ``exception`` what it raised
    (None for a loss that is not one value); None when both run."""
    with _state_kept(model, loss_fn), torch.enable_grad():
        for part, part_target in micro_batches(model_inputs, target, accumulation_steps):
            try:
                output = model(*part)
            except Exception as e:
                return f"the forward pass on the example inputs raises {type(e).__name__}: {e}", e
            try:
                loss = loss_fn(output, part_target)
            except Exception as e:
                return f"the loss function on the example inputs raises {type(e).__name__}: {e}", e
            if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
                what = f"a tensor of shape {list(loss.shape)}" if isinstance(loss, torch.Tensor) else \
                    f"a {type(loss).__name__}"
                return (f"the loss function on the example inputs returns {what}, not one value: a training step "
                        "minimizes a single loss (reduce it, e.g. with .mean() or reduction='mean')"), None
    return None


def _raised_at(error) -> str | None:
    """Where ``error`` was raised from, as its traceback's innermost frame outside PyTorch and amp_mlir (the
    model's or the user's line that called the failing op): ``path:line in function (`source`)``; None when
    every frame is PyTorch's or ours (a loss function such as ``F.cross_entropy`` given as is)."""
    torch_dir = str(Path(torch.__file__).resolve().parent) + os.sep
    ours = str(Path(__file__).resolve().parents[1]) + os.sep
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        path = str(Path(frame.filename).resolve())
        if frame.filename.startswith("<") or path.startswith((torch_dir, ours)):
            continue
        return f"{frame.filename}:{frame.lineno} in {frame.name}" + (f" (`{frame.line}`)" if frame.line else "")
    return None


def _plain_tensors(model):
    """The tensors a model keeps as plain attributes (``self.stats = torch.zeros(n)``: neither parameters nor
    registered buffers), by dotted name."""
    return {(f"{name}." if name else "") + key: value for name, module in model.named_modules()
            for key, value in vars(module).items()
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter)
            and not key.startswith("_")}


def _state_beyond_buffers(model, loss_fn, model_inputs, target):
    """The names of the tensors besides the registered buffers that the forward pass or the loss updates: frozen
    parameters (``requires_grad=False``) changed in place (an EMA kept as a ``Parameter``) and plain tensor
    attributes changed in place or reassigned (``self.stats = ...``, a running statistic not registered as a
    buffer). They are state of the step like the buffers. Found by running the model once in PyTorch's own state
    on copies of them and of the buffers, the loss module's too (version counters move, attributes get other
    tensors; the user's own tensors are not touched); none when the model has no such tensors (nothing is run
    then)."""
    frozen = {k: p.detach().clone() for k, p in model.named_parameters() if not p.requires_grad}
    plain = {k: t.detach().clone() for k, t in _plain_tensors(model).items()}
    candidates = {**frozen, **plain}
    if not candidates:
        return []
    copies = {**candidates, **{k: b.detach().clone() for k, b in model.named_buffers()}}
    loss_copies = ({k: b.detach().clone() for k, b in loss_fn.named_buffers()}
                   if isinstance(loss_fn, torch.nn.Module) else {})  # a loss module's state (DINO's center)
    versions = {k: t._version for k, t in candidates.items()}
    changed = []
    try:
        with torch.no_grad(), torch.random.fork_rng(devices=[]), \
                _reparametrize_module(model, copies, tie_weights=True, strict=False), \
                (_reparametrize_module(loss_fn, loss_copies, strict=False) if loss_copies
                 else contextlib.nullcontext()):
            loss_fn(model(*model_inputs), target)
            changed = [k for k, t in candidates.items()
                       if t._version != versions[k] or _module_tensor(model, k) is not t]
    except Exception:
        return []
    return changed


def _size_observers(model, loss_fn, model_inputs, target):
    """QAT's per-channel observers start empty (``min_val = torch.tensor([])``) and take their size at the
    first forward pass, which resizes them in place; a step's state has one shape. Buffers that start empty
    are sized here as that first call sizes them, found by one run on copies (nothing is run when no buffer is
    empty): ``FusedMovingAvgObsFakeQuantize`` (every ``get_default_qat_qconfig``) gets a running minimum of
    +inf and a maximum of -inf (its moving average takes the input's own values where they are infinite) and
    its scale and zero point repeated to the new size (ATen resizes them and then writes every element before
    reading it). This changes the user's module only as its own first forward pass would. The per-channel
    observers of a plain ``FakeQuantize`` (``default_per_channel_weight_fake_quant``), whose first call takes
    another branch than the later ones, keep their empty buffers: their sizes and fills (+inf / -inf, as
    ``_fake_quantize`` reads them) are returned, ``{name: (shape, fill)}``, for the step's state. A buffer any
    other code resizes is refused by name: run the model once before exporting."""
    if not any(b.numel() == 0 for b in model.buffers()):
        return {}
    copies = {k: b.detach().clone() for k, b in model.named_buffers()}
    try:
        with torch.no_grad(), torch.random.fork_rng(devices=[]), \
                _reparametrize_module(model, copies, tie_weights=True, strict=False):
            loss_fn(model(*model_inputs), target)
    except Exception:
        return {}  # the capture reports what fails
    resized = {k: t.shape for k, t in copies.items() if t.shape != _module_tensor(model, k).shape}
    in_state = _fake_quantize.empty_range_sizes(model, resized)
    fused = torch.ao.quantization.FusedMovingAvgObsFakeQuantize
    in_module = _fake_quantize.empty_range_sizes(model, resized, lambda module: isinstance(module, fused))
    with torch.no_grad():
        for name, (shape, fill) in in_module.items():
            _module_tensor(model, name).resize_(shape).fill_(fill)
    if resized:
        k, shape = next(iter(resized.items()))
        raise UnsupportedOpError(
            f"buffer {k} changes shape from {list(_module_tensor(model, k).shape)} to {list(shape)} in the first "
            "forward pass (a per-channel observer sized by its first call): run the model once before exporting "
            "so that the step's state has its final shape")
    return in_state


def _captured_loss(graph, flat):
    """The loss the first captured graph computes on the example (its last output), on copies of the
    arguments (it writes batch norm's running statistics into them); None where it cannot run."""
    try:
        with torch.no_grad():
            return float(graph(*[t.clone() for t in flat])[-1])
    except Exception:
        return None


def _same_loss(captured, eager, rtol=1e-4):
    """Whether two losses agree (or one of them could not be computed: nothing to compare)."""
    if captured is None or eager is None or not (math.isfinite(captured) and math.isfinite(eager)):
        return True
    return abs(captured - eager) <= rtol * max(abs(eager), 1e-6)


def _export_tracing():
    """The state torch.export traces a model in (``torch.compiler.is_compiling()`` and ``is_exporting()``
    true): libraries then skip their data-dependent input checks, which a capture cannot trace
    (transformers' padding warning on the input ids: DeBERTa-v2). Nothing when this torch has no such
    state."""
    try:
        from torch._export.utils import _compiling_state_context
    except ImportError:
        return contextlib.nullcontext()
    return _compiling_state_context()


#: The FX annotation (``node.meta["custom"]``) and MLIR location name of an op the model computes inside
#: ``torch.autocast(enabled=False)`` (``_autocast_regions``).
_AUTOCAST_KEY = _decompositions.AUTOCAST_KEY
_F32_REGION_LOC = "torch.autocast(enabled=False)"
_COMPOSITE_LOC = "amp.composite:"


@contextlib.contextmanager
def _one_fake_mode():
    """One ``FakeTensorMode`` for the metadata of every value ``make_fx`` records while capturing. Tracing
    real tensors, ``make_fx`` makes each value's ``node.meta["val"]`` under a new mode, and a new mode
    records the Python stack (``traceback.extract_stack``): 0.4 ms a value, 14 s of the 72 s export of timm's
    densenetblur121d (33 thousand values)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental import proxy_tensor
    shared = FakeTensorMode(allow_fallback_kernels=True)

    def one(**kwargs):
        return shared if kwargs == {"allow_fallback_kernels": True} else FakeTensorMode(**kwargs)

    proxy_tensor.FakeTensorMode = one
    try:
        yield
    finally:
        proxy_tensor.FakeTensorMode = FakeTensorMode


@contextlib.contextmanager
def _autocast_regions():
    """While the step is captured, each ``torch.autocast`` region the model enters annotates the ops it
    records (and their backward ops, ``_annotate_backward_of_regions``): ``enabled=False`` (a region the
    model's authors keep in float32 under PyTorch's AMP: rotary angles, positions times frequencies;
    GPT-2's upcast attention scores) as ``"f32"``, an enabled one (re-enabled inside such a region) as
    ``"auto"``. The import then names those ops' locations and pins them ``#amp.precision<f32>``
    (``_pin_autocast_regions``), so that amp-autocast keeps them in f32 as PyTorch's autocast does. The
    capture itself runs no autocast: entering a region changes nothing else.

    transformers' ``maybe_autocast`` enters a region only when autocast is already on (never while
    capturing): the loaded transformers modules that call it get one that enters ``enabled=False`` regions
    always (GPT-2's upcast attention, Nemotron's layer norm, ...), restored afterwards."""
    import sys
    import torch.fx.traceback as fx_traceback
    cls = torch.amp.autocast_mode.autocast
    enter, leave = cls.__enter__, cls.__exit__
    annotations = []
    generic = sys.modules.get("transformers.utils.generic")
    maybe = getattr(generic, "maybe_autocast", None)
    callers = [m for name, m in list(sys.modules.items()) if maybe is not None
               and name.startswith("transformers.") and getattr(m, "maybe_autocast", None) is maybe]

    def maybe_autocast(device_type, dtype=None, enabled=True, cache_enabled=None):
        if not enabled and device_type != "meta":
            return torch.autocast(device_type, dtype=dtype, enabled=False, cache_enabled=cache_enabled)
        return maybe(device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)

    def __enter__(self):
        result = enter(self)
        annotation = fx_traceback.annotate({_AUTOCAST_KEY: "auto" if self._enabled else "f32"})
        annotation.__enter__()
        annotations.append(annotation)
        return result

    def __exit__(self, *exc):
        annotations.pop().__exit__(*exc)
        return leave(self, *exc)

    cls.__enter__, cls.__exit__ = __enter__, __exit__
    for module in callers:
        module.maybe_autocast = maybe_autocast
    try:
        with fx_traceback.preserve_node_meta():
            yield
    finally:
        cls.__enter__, cls.__exit__ = enter, leave
        for module in callers:
            module.maybe_autocast = maybe


def _annotate_backward_of_regions(loss):
    """The backward ops of the forward ops ``_autocast_regions`` annotated get the same annotation: the
    autograd nodes those ops made (the forward FX nodes' ``seq_nr``) set it while they run, as AOTAutograd
    carries forward metadata to the backward. PyTorch computes them in the forward's types: a region's
    backward stays f32 too. Nothing outside a capture that preserves node metadata."""
    import torch.fx.traceback as fx_traceback
    from torch.fx.experimental.proxy_tensor import get_proxy_mode
    mode = get_proxy_mode()
    if mode is None or not fx_traceback.has_preserved_node_meta() or loss.grad_fn is None:
        return
    annotated = {n.meta["seq_nr"]: n.meta["custom"] for n in mode.tracer.graph.nodes
                 if _AUTOCAST_KEY in (n.meta.get("custom") or {}) and "seq_nr" in n.meta}
    if not annotated:
        return

    def prehook(custom):
        def hook(grad_outputs):
            fx_traceback.get_current_meta()["custom"] = dict(custom)
        return hook

    def posthook(grad_inputs, grad_outputs):
        fx_traceback.get_current_meta().pop("custom", None)

    seen, work = set(), [loss.grad_fn]
    while work:
        node = work.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        custom = annotated.get(node._sequence_nr())
        if custom is not None:
            node.register_prehook(prehook(custom))
            node.register_hook(posthook)
        work.extend(next_node for next_node, _ in node.next_functions)


def _literal_tracker():
    """torch-mlir's importer caches each tensor constant's literal by ``id()`` of the tensor, holding the
    tensor weakly (its finalizer removed upstream). A bool constant is imported through a ``uint8`` copy freed
    at once, so a later bool constant whose copy got the same ``id()`` was imported as the earlier one's
    literal: silently the wrong mask, or a type error when the sizes differ (timm's EfficientNet with layer
    norm, found by the tenth batch). This tracker holds every tensor it tracks until the import ends: no
    ``id()`` is reused."""
    from torch_mlir.extras.fx_importer import RefTracker

    class Holding(RefTracker):
        def __init__(self):
            super().__init__()
            self.held = []

        def track(self, referrent):
            self.held.append(referrent)
            return super().track(referrent)

    return Holding()


def _locate_in_the_loss(gm, loss_fn):
    """The ops of a loss of torch's own (``F.cross_entropy``: FX records no frame inside
    torch.nn.functional) are recorded at this file's call of ``loss_fn`` alone, a location that tells the user
    nothing. They get the loss function's own source line as the innermost frame below that call, so that a
    diagnostic (a label outside the classes, an op torch-mlir cannot lower) names the loss. The nodes after
    one of them that have no stack trace (the backward pass's: the importer gives them the last location it
    was given) keep the call's location, which ``backward_note`` recognises."""
    try:
        fn = inspect.unwrap(loss_fn.forward if isinstance(loss_fn, torch.nn.Module) else loss_fn)
        source = inspect.getsourcefile(fn)
        line = inspect.getsourcelines(fn)[1]
    except (TypeError, OSError):
        return
    if source is None:
        return
    frame = f'  File "{source}", line {line}, in {fn.__name__}\n    {fn.__name__}(...)'
    here = Path(__file__).resolve()
    call = None  # the stack trace of the last node changed, while no node with one of its own follows it
    for node in gm.graph.nodes:
        trace = node.meta.get("stack_trace")
        if not trace:
            if call is not None:
                node.meta["stack_trace"] = call
            continue
        call = None
        frames = re.findall(r'File "([^"]+)", line [0-9]+, in \w+\n\s*(.*)', trace)
        if frames and frames[-1][1].startswith("return loss_fn(") and Path(frames[-1][0]).resolve() == here:
            node.meta["stack_trace"] = trace.rstrip("\n") + "\n" + frame
            call = trace


def _name_autocast_regions(importer):
    """The locations ``importer`` gives the ops of ``torch.autocast(enabled=False)`` regions
    (``_autocast_regions``) are named ``_F32_REGION_LOC``, and those of one composite op's call
    (``_decompositions.COMPOSITE_KEY``, ``COMPOSITE_NODES``) ``_COMPOSITE_LOC`` and the call; the names survive
    torch-mlir's conversions."""
    from torch_mlir import ir
    # The importer gives a node without a location (a backward op: no stack trace) the last one it was
    # given: after a named one, the next unnamed node gets the plain location back.
    last = {"plain": None, "named": False}

    class Naming(type(importer._cc)):
        __slots__ = ()

        def get_node_location(self, node):
            loc = super().get_node_location(node)
            if loc is not None:
                last["plain"] = loc
            plain = last["plain"] or ir.Location.unknown(context=self._c)
            custom = node.meta.get("custom") or {}
            if custom.get(_AUTOCAST_KEY) == "f32":
                last["named"] = True
                return ir.Location.name(_F32_REGION_LOC, childLoc=plain, context=plain.context)
            composite = custom.get(_decompositions.COMPOSITE_KEY)
            if composite is None and node.op == "call_function" and \
                    getattr(node.target, "overloadpacket", None) in _decompositions.COMPOSITE_NODES:
                composite = node.name
            if composite is not None:
                last["named"] = True
                return ir.Location.name(_COMPOSITE_LOC + composite, childLoc=plain, context=plain.context)
            if last["named"]:
                last["named"] = False
                return plain
            return loc

    importer._cc.__class__ = Naming


def _pin_autocast_regions(module):
    """``amp.precision = #amp.precision<f32>`` on every op whose location is named as in a
    ``torch.autocast(enabled=False)`` region (docs/Policy.md, the pin), and ``amp.composite = "<call>"`` on
    every op whose location names a composite op's call (docs/Policy.md §5); the number of ops pinned."""
    from torch_mlir import ir
    ctx = module.context
    ctx.allow_unregistered_dialects = True  # the amp dialect's attribute, written as text
    marker = f'"{_F32_REGION_LOC}"'
    composite = re.compile('"' + re.escape(_COMPOSITE_LOC) + '([^"]+)"')
    pinned = 0
    with ctx:
        pin = ir.Attribute.parse("#amp.precision<f32>")

        def walk(op):
            nonlocal pinned
            for region in op.regions:
                for block in region.blocks:
                    for o in block.operations:
                        if o.operation.name not in ("func.func", "func.return"):
                            loc = str(o.location)
                            if marker in loc:
                                o.operation.attributes["amp.precision"] = pin
                                pinned += 1
                            elif (call := composite.search(loc)) is not None:
                                o.operation.attributes["amp.composite"] = ir.StringAttr.get(call.group(1))
                        walk(o.operation)

        walk(module.operation)
    return pinned


@contextlib.contextmanager
def _static_experts(model):
    """Hugging Face mixture-of-experts layers run as ``batched_mm`` while the step is captured: each
    token's chosen experts' weights gathered and applied as batched matrix products, every shape static.
    The default ``grouped_mm`` sorts the tokens by expert and multiplies groups whose sizes the routing
    decides (``aten.histc``, ``aten._grouped_mm``: nothing a static graph holds), and ``eager`` loops
    over the experts a batch selects (data-dependent control flow); both compute the same sums. The
    models' configs are restored afterwards.

    Switch Transformers' experts (a ``ModuleDict`` of MLPs, always that eager loop: ``nonzero`` over the
    experts hit, ``torch.where`` for each one's tokens, values the router's parameters decide) run densely
    instead: every expert on every token, weighted by the token's one-hot routing times its weight (zero
    for the others: the same sums and gradients; ``num_experts`` times the expert work). So do JetMoE's
    mixtures of experts and of attention heads, which split the tokens by expert sizes read with
    ``.tolist()`` (``_DENSE_JETMOE``)."""
    changed = []
    for module in model.modules():
        config = getattr(module, "config", None)
        current = getattr(config, "_experts_implementation", None) if config is not None else None
        if current is not None and current != "batched_mm" and not any(c is config for c, _ in changed):
            changed.append((config, current))
    methods = {"SwitchTransformersExperts": {"forward": _dense_switch_experts}, **_DENSE_JETMOE}
    dense = [(m, methods[type(m).__name__]) for m in model.modules() if type(m).__name__ in methods]
    try:
        for config, _ in changed:
            config._experts_implementation = "batched_mm"
        for module, replaced in dense:
            for name, fn in replaced.items():
                setattr(module, name, functools.partial(fn, module))
        yield
    finally:
        for config, current in changed:
            config._experts_implementation = current
        for module, replaced in dense:
            for name in replaced:
                delattr(module, name)


def _dense_switch_experts(experts, hidden_states, selected_experts, routing_weights):
    """``SwitchTransformersExperts.forward`` without reading the routing (``_static_experts``):
    ``selected_experts`` is the tokens' one-hot choice ``(T, 1, E)`` (all zero for a token over capacity),
    ``routing_weights`` their router probability ``(T, 1)``."""
    out = torch.zeros_like(hidden_states)
    for e in range(experts.num_experts):
        weight = selected_experts[:, 0, e].to(routing_weights.dtype) * routing_weights[:, 0]
        out = out + (experts[f"expert_{e}"](hidden_states) * weight[:, None]).to(hidden_states.dtype)
    return out


def _jetmoe_routing(gating, x):
    """``JetMoeTopKGating.forward`` without ``.tolist()``: ``(top-k expert ids (T, k), None, their gates
    (T, k), None, logits)``, the logits at the index transformers' router-logit recorder reads."""
    logits = gating.layer(x).float()
    top_logits, top_ids = logits.topk(gating.top_k, dim=1)
    return top_ids, None, torch.softmax(top_logits, dim=1).type_as(x), None, logits


def _every_expert(experts, x):
    """``JetMoeParallelExperts`` applied with every expert: ``x (..., in) -> (..., E, out)``."""
    return torch.einsum("...i,eoi->...eo", x, experts.weight)


def _chosen(per_expert, ids):
    """``per_expert (..., E, d)`` at each row's expert ``ids (...)``: ``(..., d)``."""
    index = ids[..., None, None].expand(*ids.shape, 1, per_expert.shape[-1])
    return per_expert.gather(-2, index).squeeze(-2)


def _dense_jetmoe_moe(moe, layer_input):
    """``JetMoeMoE.forward``: every expert's MLP on every token, each token's top-k outputs weighted by
    their gates (the same sums as transformers' grouped form)."""
    bsz, length, emb = layer_input.shape
    x = layer_input.reshape(-1, emb)
    ids, _, gates, _, _ = moe.router(x)
    first, second = _every_expert(moe.input_linear, x).chunk(2, dim=-1)
    hidden = moe.activation(first) * second  # (T, E, hidden): each expert's own
    out = torch.einsum("tei,eoi->teo", hidden, moe.output_linear.weight)  # (T, E, emb)
    out = (_chosen(out[:, None].expand(-1, ids.shape[1], -1, -1), ids) * gates[..., None]).sum(1)
    return out.view(bsz, length, emb) + moe.bias


def _dense_jetmoe_map(moa, layer_input):
    """``JetMoeMoA.map``: each token's query projection by each of its top-k experts."""
    bsz, length, emb = layer_input.shape
    x = layer_input.reshape(-1, emb)
    ids, _, gates, _, logits = moa.router(x)
    queries = _chosen(_every_expert(moa.input_linear, x)[:, None].expand(-1, moa.top_k, -1, -1), ids)
    return queries.view(bsz, length, moa.top_k, -1), logits, (ids, gates)


def _dense_jetmoe_reduce(moa, layer_input, topo_info):
    """``JetMoeMoA.reduce``: each head group's output projection by its expert, weighted by its gate."""
    bsz, length, k, hidden = layer_input.shape
    ids, gates = topo_info
    out = _chosen(_every_expert(moa.output_linear, layer_input.reshape(-1, k, hidden)), ids)  # (T, k, emb)
    return (out * gates[..., None]).sum(1).view(bsz, length, moa.input_size) + moa.bias


#: JetMoE's modules run densely while capturing (``_static_experts``): method name -> replacement.
_DENSE_JETMOE = {"JetMoeTopKGating": {"forward": _jetmoe_routing}, "JetMoeMoE": {"forward": _dense_jetmoe_moe},
                 "JetMoeMoA": {"map": _dense_jetmoe_map, "reduce": _dense_jetmoe_reduce}}


class SpecializationWarning(UserWarning):
    """The captured training step holds values read from the example tensors (``.item()``, ``bool(t)``,
    ``nonzero``'s count): it is right for batches that give the same values (``_Specializer``)."""


@contextlib.contextmanager
def _python_state_kept(model):
    """Plain Python numbers the model keeps on its modules (``self.calls += 1``, a schedule's position) and
    changes in its forward pass are constants of the captured step: the trace runs Python once, as
    torch.export does, so a value the forward pass computes from them is the capture's at every step. Those
    that the capture changed are put back as they were and named in a ``SpecializationWarning``."""
    def numbers():
        return {(name, key): value for name, module in model.named_modules()
                for key, value in vars(module).items()
                if not key.startswith("_") and type(value) in (int, float, bool)}

    before = numbers()
    try:
        yield
    finally:
        after = numbers()
        changed = sorted(k for k in before if after.get(k, before[k]) != before[k])
        for name, key in changed:
            setattr(model.get_submodule(name), key, before[(name, key)])
        if changed:
            warnings.warn(
                "amp_mlir.torch: the model's forward pass changes Python numbers it keeps on its modules ("
                + ", ".join(f"{name + '.' if name else ''}{key} {before[(name, key)]!r} -> {after[(name, key)]!r}"
                            for name, key in changed)
                + "). The captured step runs no Python: whatever the forward pass computes from them keeps the "
                "capture's value at every step (as with torch.export). They were put back as they were; keep such "
                "state in a buffer (a tensor) for the step to update it.", SpecializationWarning, stacklevel=4)


@contextlib.contextmanager
def _data_assignment_as_copy():
    """``t.data = v`` (a buffer or a parameter updated through ``.data``, as older code writes an EMA) as
    ``t.copy_(v)`` without autograd while the step is traced, where ``v`` has ``t``'s shape and type: the same
    new value, and one that functionalization sees (the storage swap itself is no op make_fx records, so the
    update was lost, silently). ``Tensor.data``'s setter is not a torch function a mode intercepts, so the
    property is replaced on ``torch.Tensor`` for the trace and put back."""
    base = torch._C.TensorBase.data

    def assign(self, value):
        if isinstance(value, torch.Tensor) and value.shape == self.shape and value.dtype == self.dtype:
            with torch.no_grad():
                self.copy_(value)
        else:
            base.__set__(self, value)

    if "data" in torch.Tensor.__dict__:  # already in place (a trace within a trace)
        yield
        return
    torch.Tensor.data = property(base.__get__, assign)
    try:
        yield
    finally:
        del torch.Tensor.data


class _Shown(str):
    """A value read as a list, kept as its text (hashable) and shown without quotes."""

    def __repr__(self):
        return str(self)


class _MaskedSelection:
    """``x[mask]`` for a boolean ``mask`` of ``x``'s shape, kept whole until it is assigned back through the
    same mask: the masked elementwise update (``t[mask] = (a[mask] - b[mask]) * (c[mask] - d[mask])``,
    torchvision's box-IoU losses; ``h[m] = h[m] * 2``). Selected, the elements are as many as the mask
    holds, a count the parameters decide when the mask is computed from activations, which no static
    step can have (the capture refused such a model). Whole, the update is ``t = where(mask, f(a, b, ...),
    t)``, one static shape whatever the count, with the same values and the same gradients at the selected
    elements. Only masks the capture would refuse are kept whole (``varies``); a selection through a mask
    the batch alone decides is read and checked as before (its count specialized, and checked in the
    step).

    The whole value is ``f`` applied to ``where(mask, x, s)`` for every selection ``x[mask]`` it reads, ``s``
    a point where ``f`` and its derivative are finite: 0 (``_WHOLE``), 1 for a logarithm, a root, a
    reciprocal (``_AT_ONE``), a denominator, and the base of a power other than 1, 2, 3, ... (an ``x`` that is
    inf or NaN outside the mask, or ``log(0)``, would otherwise give NaN gradients through ``where``'s zeros:
    ``0 * inf``). Each op's result is masked again before the next op reads it, so what lies outside the mask
    is always an op of ``s`` and numbers (no overflow carried along a chain). Divisions and powers stay whole
    when their other operand is a number (or, for a division, a selection through the same mask). Anything
    else (a reduction, a comparison, a selection through another mask, ``.shape``) gets the selected
    elements themselves (:meth:`selected`), as before: a count read from the example (and checked in the
    step), or the refusal."""

    _WHOLE = frozenset(getattr(torch.Tensor, n) for n in (
        "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__neg__", "__abs__", "add", "sub",
        "mul", "neg", "abs", "clamp", "clamp_min", "clamp_max", "clip", "minimum", "maximum", "relu", "sigmoid",
        "tanh", "exp", "expm1", "log1p", "sin", "cos", "atan", "erf", "sign", "square", "float", "double", "half",
        "bfloat16", "to")) | frozenset((
            torch.add, torch.sub, torch.subtract, torch.mul, torch.multiply, torch.neg, torch.abs, torch.clamp,
            torch.clamp_min, torch.clamp_max, torch.clip, torch.minimum, torch.maximum, torch.relu, torch.sigmoid,
            torch.tanh, torch.exp, torch.expm1, torch.log1p, torch.sin, torch.cos, torch.atan, torch.erf,
            torch.sign, torch.square, torch.nn.functional.relu, torch.nn.functional.softplus,
            torch.nn.functional.silu, torch.nn.functional.gelu, torch.nn.functional.elu,
            torch.nn.functional.leaky_relu))
    _AT_ONE = frozenset(getattr(torch.Tensor, n) for n in (
        "log", "log2", "log10", "sqrt", "rsqrt", "reciprocal")) | frozenset((
            torch.log, torch.log2, torch.log10, torch.sqrt, torch.rsqrt, torch.reciprocal))
    _DIVIDE = frozenset((torch.Tensor.__truediv__, torch.Tensor.div, torch.div, torch.true_divide))
    _POWER = frozenset((torch.Tensor.__pow__, torch.Tensor.pow, torch.pow))

    def __init__(self, mask, source=None, full=None):
        # `_outside`: what `full` holds outside the mask where that is known (the zeros of a selection)
        self.mask, self.source, self._full, self._outside = mask, source, full, 0 if full is None else None

    @property
    def full(self):
        if self._full is None:
            self._full = torch.where(self.mask, self.source, torch.zeros((), dtype=self.source.dtype))
        return self._full

    def at(self, safe):
        """``full`` with ``safe`` outside the mask."""
        if self._outside == safe:
            return self.full
        return torch.where(self.mask, self.full, torch.full((), safe, dtype=self.full.dtype))

    @staticmethod
    def _number(v):
        return isinstance(v, (int, float, bool)) or (isinstance(v, torch.Tensor) and v.dim() == 0)

    @staticmethod
    def same_mask(a, b):
        """``a`` is ``b``, or both were computed by the same op from the same traced values (``h[h < 0] =
        g[h < 0]`` writes the mask twice; an in-place update in between gives its operand a new traced value,
        so a mask computed after it is another)."""
        if a is b:
            return True
        from torch.fx.experimental.proxy_tensor import get_proxy_mode, get_proxy_slot

        mode = get_proxy_mode()
        if mode is None or a.shape != b.shape:
            return False
        na, nb = (getattr(get_proxy_slot(t, mode.tracer, None), "proxy", None) for t in (a, b))
        na, nb = getattr(na, "node", None), getattr(nb, "node", None)
        return na is not None and nb is not None and na.op == nb.op == "call_function" and \
            na.target == nb.target and na.args == nb.args and na.kwargs == nb.kwargs

    @classmethod
    def _whole(cls, func, args, leaves, selections):
        """Whether ``func`` stays whole; if so, the point of its domain each positional argument that is a
        selection is read at outside the mask (a list), else None."""
        safe = [0] * len(args)
        if func in cls._DIVIDE:  # x / number, x / y through the same mask: y read at 1
            if len(args) != 2 or not (isinstance(args[1], cls) or cls._number(args[1])):
                return None
            safe[1] = 1
        elif func is torch.Tensor.__rtruediv__:  # number / x
            if len(args) != 2 or not cls._number(args[1]):
                return None
            safe[0] = 1
        elif func in cls._POWER:  # x ** number: x read at 1 unless the power is 1, 2, 3, ...
            if len(args) != 2 or not isinstance(args[0], cls) or not cls._number(args[1]) or isinstance(args[1], cls):
                return None
            safe[0] = 0 if isinstance(args[1], int) and not isinstance(args[1], bool) and args[1] >= 1 else 1
        elif func in cls._AT_ONE:
            safe = [1] * len(args)
        elif func not in cls._WHOLE:
            return None
        mask = selections[0].mask
        if all(cls.same_mask(v.mask, mask) for v in selections) and all(
                isinstance(v, (cls, str, torch.dtype, torch.device)) or v is None or cls._number(v) for v in leaves):
            return safe
        return None

    @classmethod
    def handle(cls, func, args, kwargs, varies=None):
        """What ``func(*args, **kwargs)`` is with selections kept whole; NotImplemented to run it as is (no
        selection among the arguments, nothing to select). A selection is made only through a mask that
        ``varies`` (the capture's: computed from what changes as the model trains, whose count the capture
        would refuse); one through a mask the batch alone decides is read and checked as before."""
        if func is torch.Tensor.__getitem__ and len(args) == 2:
            x, key = args
            if isinstance(x, torch.Tensor) and isinstance(key, torch.Tensor) and key.dtype == torch.bool and \
                    key.shape == x.shape and x.dim() > 0 and x.is_floating_point() and varies is not None and \
                    varies(key):
                return cls(key, source=x)
        if func is torch.Tensor.__setitem__ and len(args) == 3:
            t, key, value = args
            if isinstance(value, cls) and isinstance(key, torch.Tensor) and isinstance(t, torch.Tensor) and \
                    t.shape == key.shape and cls.same_mask(value.mask, key):
                t.copy_(torch.where(key, value.full.to(t.dtype), t))
                return None
        if not any(isinstance(v, (cls, list, tuple, dict)) for v in (*args, *kwargs.values())):
            return NotImplemented  # (most calls: nothing to look into)
        leaves = pytree.tree_leaves((args, kwargs))
        selections = [v for v in leaves if isinstance(v, cls)]
        if not selections:
            return NotImplemented
        safe = cls._whole(func, args, leaves, selections)
        if safe is not None:
            args = tuple(v.at(point) if isinstance(v, cls) else v for v, point in zip(args, safe))
            kwargs = pytree.tree_map(lambda v: v.at(0) if isinstance(v, cls) else v, kwargs)
            return cls(selections[0].mask, full=func(*args, **kwargs))
        args, kwargs = pytree.tree_map(lambda v: v.selected() if isinstance(v, cls) else v, (args, kwargs))
        return func(*args, **kwargs)

    def selected(self):
        """The selected elements themselves: ``x[mask]``, or ``f`` of the selections' (elementwise)."""
        with torch._C.DisableTorchFunction():
            return torch.Tensor.__getitem__(self.source if self._full is None else self._full, self.mask)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = cls.handle(func, args, kwargs or {})
        return func(*args, **(kwargs or {})) if out is NotImplemented else out

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if name in ("dtype", "device", "requires_grad"):  # the same selected or whole: no count read
            return getattr(self.source if self._full is None else self._full, name)
        if name == "ndim":  # the selected elements are a vector
            return 1
        method = getattr(torch.Tensor, name)
        if callable(method):
            return lambda *a, **k: _MaskedSelection.handle(method, (self, *a), k)
        return getattr(self.selected(), name)


def _selection_dunder(name):
    method = getattr(torch.Tensor, name)

    def apply(self, *args):
        return _MaskedSelection.handle(method, (self, *args), {})

    return apply


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
              "__neg__", "__abs__", "__pow__", "__rpow__", "__gt__", "__lt__", "__ge__", "__le__", "__eq__", "__ne__",
              "__getitem__", "__len__", "__bool__", "__float__", "__int__", "__and__", "__or__", "__invert__",
              "__matmul__", "__iter__", "__format__", "__repr__", "__setitem__"):
    setattr(_MaskedSelection, _name, _selection_dunder(_name))
_MaskedSelection.__hash__ = object.__hash__


class _Specializer:
    """The first capture's decompositions of the ops whose result make_fx cannot trace: make_fx's "real"
    mode traces on the example tensors themselves, so the value is read from them, as torch.export
    specializes.

    * ``aten._local_scalar_dense`` (``.item()``, ``bool(t)``, ``int(t)``, ``float(t)``, a 0-d tensor as a
      size) and ``aten.equal`` (``torch.equal``): the value goes on as a Python constant, so the model's
      ``assert`` / ``if`` runs on the real value and no op is recorded; the graph holds the branch taken
      for the example inputs.
    * ``aten.nonzero`` (``torch.where(c)``, boolean-mask indexing's indices): its row count is read, the
      indices computed in the graph with that static shape (``_decompositions.nonzero_static``);
      ``aten.bincount``'s length likewise (``_bincount``).
    * ``aten.index`` / ``index_put`` through a boolean mask (``t[mask]``, ``t[mask] = v`` and the backward of
      ``t[mask]``) and ``masked_select``: the mask becomes its ``nonzero`` indices, as above.

    Each read is recorded (value, the model's source line, what the value depends on: step arguments,
    random ops) for :meth:`warn`. A tensor make_fx already knows as a constant, or a fake one (no value),
    is left to make_fx.

    Each read of integer or boolean data that depends on the step's arguments is also *guarded*: the graph
    computes the value again from the traced tensor and asserts that it equals the example's
    (``aten._assert_async.msg`` with the model's line; ``_guards_as_asserts`` makes it a check torch-mlir
    imports, a ``cf.assert`` in the step). A batch with another mask count, another ``.item()`` or another
    ``bincount`` length then stops the compiled step with that message instead of training on the example's
    graph. Values read from floating-point data are not guarded: the step may compute them in another
    precision than the example (autocast), and an exact comparison would refuse batches that are right."""

    # torch's own directory with its separator: "site-packages/torch" alone also prefixes torchvision's files
    # (SSDlite's reads were all reported at the caller of the model).
    _SKIP = (str(Path(torch.__file__).resolve().parent) + os.sep, str(Path(__file__).resolve()),
             str(Path(_decompositions.__file__).resolve()), str(Path(contextlib.__file__).resolve()))

    _KINDS = {"param": "the parameters", **{k: "the optimizer state" for k in _optim.SLOT_KINDS},
              "buffer": "the buffers", "ema": "the weight average", "rng": "the random-number state",
              "lr": "the learning rate",
              "seed": "the gradient seed"}

    def __init__(self, arg_names, arg_kinds):
        self.arg_names, self.arg_kinds = arg_names, arg_kinds
        self.records = []
        self.foreign = {}  # trainable Parameters the step reads that are none of its own: id -> shape
        self.guarded = set()  # (traced node, what) already checked in the graph

    def table(self, base):
        aten = torch.ops.aten
        return {**base, aten._local_scalar_dense.default: self._item, aten.nonzero.default: self._nonzero,
                aten.equal.default: self._equal, aten.bincount.default: self._bincount,
                aten.index.Tensor: self._index, aten.masked_select.default: self._masked_select,
                aten.masked_scatter_backward.default: self._masked_scatter_backward,
                aten.index_put.default: functools.partial(self._index_put, aten.index_put.default),
                aten.index_put_.default: functools.partial(self._index_put, aten.index_put_.default)}

    def wrap(self, step):
        """``step`` with ``F.one_hot`` given its class count as a comparison: ATen's (composite) one_hot
        checks the indices' range with ``.min().item()`` / ``.max().item()``, values that a router's
        parameters decide (Switch Transformers) and that would otherwise be read (an index out of range
        gives a zero row here, not an error).

        And ``t.tolist()`` / ``t.numpy()``, which read a real tensor's memory without an aten op (make_fx would
        keep the values unseen: JetMoE's expert sizes, which its router decides), are reads like ``.item()``,
        recorded for :meth:`warn`."""
        from torch.overrides import TorchFunctionMode

        specializer = self
        composites = _decompositions.above_autograd()

        class ValueFree(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                lazy = _MaskedSelection.handle(func, args, kwargs, specializer._varies)  # masked updates, whole
                if lazy is not NotImplemented:
                    return lazy
                # The step's own parameters are plain tensors while it is traced (reparametrized): a
                # Parameter that requires a gradient here belongs to nothing the step trains.
                for a in torch.utils._pytree.tree_leaves((args, kwargs)):
                    if isinstance(a, torch.nn.Parameter) and a.requires_grad:
                        specializer.foreign[id(a)] = tuple(a.shape)
                if func in (torch.Tensor.tolist, torch.Tensor.numpy) and isinstance(args[0], torch.Tensor):
                    value = specializer._read(
                        args[0], lambda x: func(x, *args[1:], **kwargs), "values",
                        (lambda x, v: (x == torch.tensor(np.asarray(v), dtype=x.dtype)).all())
                        if specializer._exact(args[0]) else None)
                    if value is not None:
                        return value
                if func in composites:
                    out = composites[func](func, *args, **kwargs)
                    if out is not NotImplemented:
                        return out
                if func is torch.nn.functional.one_hot:
                    t, num_classes = args[0], (args[1] if len(args) > 1 else kwargs.get("num_classes", -1))
                    if num_classes >= 0:
                        return (t.unsqueeze(-1) == torch.arange(num_classes, device=t.device)).to(torch.int64)
                return func(*args, **kwargs)

        def wrapped(*args):
            with ValueFree(), _data_assignment_as_copy():
                return step(*args)

        return wrapped

    def _read(self, t, read, what, guard=None):
        """``read(t)`` on the real tensor ``t``, recorded as ``what``; None when ``t`` is not a traced real
        tensor. ``guard(t, value)``, where given, computes in the graph a boolean tensor that holds when ``t``
        gives ``value`` again: it becomes the step's check of this value (:meth:`_check`)."""
        from torch._subclasses.fake_tensor import is_fake
        from torch.fx.experimental.proxy_tensor import get_proxy_mode, get_proxy_slot
        from torch.utils._mode_utils import no_dispatch

        mode = get_proxy_mode()
        slot = get_proxy_slot(t, mode.tracer, None) if mode is not None else None
        if slot is None or slot.constant is not None or is_fake(t) or \
                type(t) not in (torch.Tensor, torch.nn.Parameter):
            return None
        with no_dispatch():
            value = read(t)
        shown = value.tolist() if isinstance(value, np.ndarray) else value
        shown = _Shown(repr(shown)) if isinstance(shown, list) else shown  # hashable (records are deduplicated)
        where, deps = self._where(), self._depends_on(slot.proxy.node)
        self.records.append((what, shown, where, deps))
        if guard is not None and deps and (slot.proxy.node, what) not in self.guarded:
            self.guarded.add((slot.proxy.node, what))
            self._check(guard(t, value), f"{where} the model reads {what} {shown!r}")
        return value

    @staticmethod
    def _check(ok, read):
        """``aten._assert_async.msg(ok, ...)`` in the graph (make_fx keeps it: an op with side effects), naming
        the value read and its line."""
        torch.ops.aten._assert_async.msg(
            ok, "amp_mlir: the training step was captured for another batch: at " + read + " in the example, and "
                "this batch gives another value (the step is specialized to the example's: see 'Values read from "
                "tensors' in docs/Python.md)")

    @staticmethod
    def _exact(t):
        """True for data whose values the step computes exactly as the example did (integers, booleans)."""
        return not t.is_floating_point() and not t.is_complex()

    def _item(self, t):
        def same(x, v):
            x = x.reshape(())
            return (x if v else torch.logical_not(x)) if x.dtype == torch.bool else x == int(v)

        value = self._read(t, torch.ops.aten._local_scalar_dense.default, "value",
                           same if self._exact(t) and t.numel() == 1 else None)
        return NotImplemented if value is None else value

    def _equal(self, a, b):
        """``torch.equal(a, b)`` (ATen's istft checks its window envelope so): read like ``.item()``."""
        if a.shape != b.shape:
            return False
        value = self._read(torch.eq(a, b).all(), lambda x: bool(x), "equality",
                           (lambda x, v: x if v else torch.logical_not(x)) if self._exact(a) and self._exact(b)
                           else None)
        return NotImplemented if value is None else value

    def _nonzero(self, t):
        count = self._read(t, lambda x: int(torch.count_nonzero(x)), "nonzero count",
                           (lambda x, v: torch.count_nonzero(x) == v) if self._exact(t) else None)
        return NotImplemented if count is None else _decompositions.nonzero_static(t, count)

    def _bincount(self, t, weights=None, minlength=0):
        """``bincount`` (graph sizes from a batch vector, class counts): its length, ``max(t) + 1`` or
        ``minlength``, is read (a value the example decides, as ``nonzero``'s count); the counts are a one-hot
        sum over that length, of the weights where given (in their type, float32 or float64, as ATen)."""
        def same(x, v):
            length = x.max() + 1
            return length == v if v > minlength else length <= minlength

        size = self._read(t, lambda x: int(x.max()) + 1 if x.numel() else 0, "bincount length",
                          same if t.numel() else None)
        if size is None:
            return NotImplemented
        size = max(size, minlength)
        hits = t.reshape(-1, 1) == torch.arange(size, device=t.device)
        if weights is None:
            return hits.to(torch.int64).sum(0)
        w = weights.reshape(-1, 1)
        w = w if w.is_floating_point() else w.to(torch.float64)
        return (hits.to(w.dtype) * w).sum(0)

    def _long_indices(self, indices):
        """Boolean masks among ``indices`` as the integer index tensors they stand for (``t[mask]`` is
        ``t[mask.nonzero(as_tuple=True)]``), through ``_nonzero``; None when there is no mask, or one that is
        not a traced real tensor. torch-mlir lowers a mask index with a dynamic size."""
        if not any(i is not None and i.dtype in (torch.bool, torch.uint8) for i in indices):
            return None
        out = []
        for i in indices:
            if i is None or i.dtype not in (torch.bool, torch.uint8):
                out.append(i)
                continue
            rows = self._nonzero(i)
            if rows is NotImplemented:
                return None
            out.extend(rows.unbind(1))
        return out

    def _masked_select(self, t, mask):
        """``torch.masked_select(t, mask)``: ``t[mask]`` on the two broadcast to one shape (the mask's ``nonzero``
        indices, as above)."""
        t, mask = torch.broadcast_tensors(t, mask)
        return self._index(t, [mask])

    def _index(self, t, indices):
        long = self._long_indices(indices)
        return NotImplemented if long is None else torch.ops.aten.index.Tensor(t, long)

    def _masked_scatter_backward(self, grad_output, mask, sizes):
        """``masked_scatter``'s gradient for its source (vision-language models merge the image features into
        the token embeddings so: ``inputs_embeds.masked_scatter(image_mask, features)``), which torch-mlir
        does not lower: as ATen computes it, the output gradient at the mask's positions (their count read
        like ``nonzero``'s), zeros after them to the source's size."""
        selected = self._index(grad_output, [mask.expand_as(grad_output)])
        if selected is NotImplemented:
            return NotImplemented
        rest = math.prod(sizes) - selected.numel()
        return torch.cat([selected, selected.new_zeros(rest)]).reshape(sizes)

    def _index_put(self, op, t, indices, values, accumulate=False):
        """``op`` (``index_put`` or its in-place form) with the masks among ``indices`` as integer ones."""
        long = self._long_indices(indices)
        return NotImplemented if long is None else op(t, long, values, accumulate)

    def _where(self):
        frame = sys._getframe(1)
        while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(self._SKIP):
            frame = frame.f_back
        if frame is None:
            return "an unknown source line"
        if frame.f_code.co_filename.startswith("<"):
            # generated code: autograd's backward formulas (the backward of t[mask])
            return "the backward pass"
        import linecache

        line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
        return f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno} in {frame.f_code.co_name}" + \
            (f" (`{line}`)" if line else "")

    def _varies(self, t):
        """True when the traced tensor ``t`` is computed from what changes as the model trains (the
        parameters, the optimizer state, the buffers, random numbers), not from the batch alone."""
        from torch.fx.experimental.proxy_tensor import get_proxy_mode, get_proxy_slot

        mode = get_proxy_mode()
        slot = get_proxy_slot(t, mode.tracer, None) if mode is not None else None
        return slot is not None and any(i < 0 or self.arg_kinds[i] not in ("input", "target")
                                        for i in self._depends_on(slot.proxy.node))

    def _depends_on(self, node):
        """What ``node`` is computed from: the step arguments' indices, and -1 for a random op."""
        placeholders = {n: i for i, n in enumerate(n for n in node.graph.nodes if n.op == "placeholder")}
        seen, todo, found = set(), [node], set()
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            if n in placeholders:
                found.add(placeholders[n])
            elif n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload) and \
                    torch.Tag.nondeterministic_seeded in n.target.tags:
                found.add(-1)
            if n.op == "call_function" and getattr(n.target, "overloadpacket", None) in self._SHAPE_ONLY:
                # a tensor made like its first argument reads that one's shape, not its values (UDOP's
                # full_like(embeddings, True) mask, set from the inputs alone, was refused as the parameters')
                todo.extend(a for a in n.all_input_nodes if a is not n.args[0])
            else:
                todo.extend(n.all_input_nodes)
        return tuple(sorted(found))

    _SHAPE_ONLY = frozenset({torch.ops.aten.full_like, torch.ops.aten.zeros_like, torch.ops.aten.ones_like,
                             torch.ops.aten.empty_like, torch.ops.aten.new_full,
                             torch.ops.aten.new_zeros, torch.ops.aten.new_ones, torch.ops.aten.new_empty,
                             torch.ops.aten.new_empty_strided})

    def describe(self, unchanged=frozenset()):
        """One line per distinct value read that the step's arguments or random numbers decide, and those of
        them that depend on more than the example inputs (a value computed from constants alone is the same at
        every step: specializing it changes nothing, it is not listed). The arguments in ``unchanged`` (buffers
        the step returns as they came: position ids, windows) are the same at every step too; a value they
        decide is listed, not refused."""
        lines, varying = [], []
        for what, value, where, deps in dict.fromkeys(self.records):
            if not deps:
                continue
            inputs = [self.arg_names[i] for i in deps if i >= 0 and self.arg_kinds[i] in ("input", "target")]
            fixed = sorted(self.arg_names[i] for i in deps if i in unchanged)
            others = sorted({"random numbers" if i < 0 else self._KINDS.get(self.arg_kinds[i], self.arg_kinds[i])
                             for i in deps if i not in unchanged} - {"input", "target"})
            parts = ["the example inputs " + ", ".join(inputs)] if inputs else []
            if fixed:
                parts.append(", ".join(fixed) + " (which the step does not change)")
            if others:
                parts.append(", ".join(others) + " (which change as it trains)")
            lines.append(f"{where}: {what} {value!r}, from {' and '.join(parts)}")
            if others:
                varying.append(lines[-1])
        return lines, varying

    @staticmethod
    def _from_random(line):
        """Whether a line of :meth:`describe` names random numbers among what its value is read from."""
        return "random numbers" in line.rsplit(", from ", 1)[-1]

    @staticmethod
    def _refuse(varying):
        """The error for values read that training changes (``varying``: their lines)."""
        random = any(_Specializer._from_random(line) for line in varying)
        raise UnsupportedOpError(
            "amp_mlir.torch cannot capture the training step: the model reads values from tensors that "
            "change as it trains (`.item()`, `bool(tensor)`, `.tolist()`, a tensor used as a size, "
            "`nonzero`'s count) and decides its computation by them; a captured step would keep the "
            "example's values at every step. Compute such parts without reading values (masks, "
            "torch.where, every expert on every token weighted by its routing):\n  " + "\n  ".join(varying)
            + ("\nA branch on random numbers, such as LayerDrop's `if torch.rand([]) < layerdrop:` (skip the "
               "layer), draws anew at every step: compute the layer and keep or drop its output with "
               "torch.where on the draw, or turn it off (a transformers model: config.layerdrop = 0)."
               if random else ""))

    def refuse_random(self):
        """The error of :meth:`warn` for values read from random numbers, raised before the step is traced
        again: the next trace draws anew, and a branch on the draw (LayerDrop) may take the other way."""
        varying = self.describe()[1]
        if any(self._from_random(line) for line in varying):
            self._refuse(varying)

    def warn(self, unchanged=frozenset()):
        """The warning naming the values the step is specialized to; returns its lines. A value that the
        parameters, the optimizer state or random numbers decide is an error instead: the step would keep
        the first step's value while training changes it (a mixture of experts' routing: its token counts
        per expert), silently wrong from the second step on."""
        lines, varying = self.describe(unchanged)
        if varying:
            self._refuse(varying)
        if lines:
            warnings.warn(
                "amp_mlir.torch specialized the training step to values read from the example tensors "
                "(`.item()`, `bool(tensor)`, `.tolist()`, a tensor used as a size, `nonzero`'s count), as "
                "torch.export does: the model branched on them, asserted them or sized tensors by them, and the "
                "step computes what it does for these values only. It is right for the example inputs and for "
                "any batch that gives the same values, not for others; the step checks each value read from "
                "integer or boolean data and stops on a batch that gives another:\n  " + "\n  ".join(lines),
                SpecializationWarning, stacklevel=4)
        return lines


class _Replay(torch.fx.Interpreter):
    """Runs the first captured graph again (step 2), each ``view`` as a ``reshape``: the full decomposition
    table can give a tensor other strides than the eager kernel the first capture recorded (BLOOM's fused
    query-key-value gradient: a ``select_backward`` decomposed into a scatter), and a view of the same shape
    is then no longer expressible. A reshape is that view where it still is one (traced as the same
    ``view``) and a copy where not; the functionalized graph computes the same values either way.

    Each random op becomes its ``_decompositions.RANDOM`` function of the step's random-number state
    (argument ``rng_index``) and of its position among the step's random ops.

    An ``index_put`` through index tensors at dimensions apart (``t[i, :, j] = v``) or after a slice
    (``t[:, i] = v``), and an ``index_fill`` along a dimension other than the first, index ``t`` with those
    dimensions moved first (``_decompositions.index_put`` then takes the accumulating one).

    Empty tensors leave the step: a concatenation skips its empty operands, an ``index_put`` or
    ``index_fill`` through an empty index tensor (a ``nonzero`` that found nothing in the example inputs)
    and an in-place op on an empty tensor (``_writes_nothing``) write nothing, and the gradient of an empty
    slice is zeros (Phi-3's rotary embedding concatenates the rotated part with the rest of the head, an
    empty slice when the whole head rotates, and torch-mlir gives such a slice a dynamic extent that
    nothing lowers). The empty slices are then dead code
    (``_clean_graph``)."""

    def __init__(self, gm, rng_index=None):
        super().__init__(gm)
        self.rng_index = rng_index

    def run(self, *args):
        self.rng = args[self.rng_index] if self.rng_index is not None else None
        self.random_ops = 0
        return super().run(*args)

    def call_function(self, target, args, kwargs):
        aten = torch.ops.aten
        if target is aten.view.default:
            target = aten.reshape.default
        elif target is aten.cat.default and any(t.numel() == 0 for t in args[0]):
            kept = [t for t in args[0] if t.numel() != 0]
            if kept:
                args = (kept,) + tuple(args[1:])
        elif target is aten.slice_backward.default and args[0].numel() == 0:
            return args[0].new_zeros(args[1])
        elif target is aten.slice_scatter.default and args[1].numel() == 0:
            return aten.clone.default(args[0])
        elif _writes_nothing(target, args):
            return args[0]
        elif target in (aten.sum.default, aten.sum.dim_IntList) and args[0].numel() == 0:
            # a sum of nothing is zeros: the gradient of a parameter written through a mask that selects
            # nothing in the example (T5Gemma2's ``embeddings[ids == eoi] = eoi_embedding``) gathers an empty
            # tensor, whose zero-size index torch-mlir cannot lower; the gather is then dead code
            return _empty_sum(args[0], *args[1:], **kwargs)
        elif getattr(target, "overloadpacket", None) in (aten.index_fill, aten.index_fill_) and args[2].numel() == 0:
            # no index: nothing written (``t[empty] = 1.0``)
            return args[0] if target.overloadpacket is aten.index_fill_ else aten.clone.default(args[0])
        elif getattr(target, "overloadpacket", None) in (aten.index_fill, aten.index_fill_) and \
                args[1] % max(args[0].dim(), 1) != 0:
            # t[:, i] = 0.5: filled along the first dimension of t with that dimension moved first (torch-mlir's
            # index_put after a slice, which its conversion refuses), moved back
            t, dim = args[0], args[1] % args[0].dim()
            filled = getattr(aten.index_fill, target._overloadname)(t.movedim(dim, 0).contiguous(), 0, *args[2:])
            out = filled.movedim(0, dim)
            return aten.copy_.default(t, out) if target.overloadpacket is aten.index_fill_ else out
        elif target in (aten.index_put.default, aten.index_put_.default):
            in_place = target is aten.index_put_.default
            given = [i for i, t in enumerate(args[1]) if t is not None]
            if any(args[1][i].numel() == 0 for i in given):
                # no index: nothing written (a nonzero that found nothing in the example inputs)
                return args[0] if in_place else aten.clone.default(args[0])
            if given and given != list(range(len(given))):
                # t[i, :, j] (Longformer's global attention), t[:, i] = v (index tensors after a slice, which
                # torch-mlir's conversion of index_put refuses): the same index_put on t with the indexed
                # dimensions moved first, in order, moved back. Advanced indexing puts the indexed result's
                # dimensions first when they are apart (the values keep their layout) and in place when they
                # are adjacent (the values' are moved first too).
                t, values = args[0], args[2]
                order = given + [d for d in range(t.dim()) if d not in given]
                adjacent = given == list(range(given[0], given[0] + len(given)))
                if adjacent:
                    index_shape = torch.broadcast_shapes(*(args[1][i].shape for i in given))
                    first, count = given[0], len(index_shape)
                    values = values.expand(*t.shape[:first], *index_shape, *t.shape[first + len(given):])
                    values = values.movedim(tuple(range(first, first + count)), tuple(range(count)))
                moved = aten.index_put.default(aten.permute.default(t, order), [args[1][i] for i in given], values,
                                               *args[3:], **kwargs)
                out = aten.permute.default(moved, [order.index(d) for d in range(t.dim())])
                return aten.copy_.default(t, out) if in_place else out
        draw = _decompositions.RANDOM.get(target)
        if draw is not None and self.rng is not None:
            self.random_ops += 1
            return draw(self.rng, self.random_ops - 1, *args, **kwargs)
        return super().call_function(target, args, kwargs)


def _empty_sum(t, dim=None, keepdim=False, *, dtype=None):
    """``sum`` of the empty tensor ``t`` (over ``dim``, all dimensions where None or empty): zeros of the
    result's shape and type."""
    dims = {d % t.dim() for d in dim} if dim else set(range(t.dim()))
    shape = [1 if d in dims else n for d, n in enumerate(t.shape) if keepdim or d not in dims]
    if dtype is None:
        dtype = t.dtype if t.is_floating_point() or t.is_complex() else torch.int64
    return t.new_zeros(shape, dtype=dtype)


def _writes_nothing(target, args) -> bool:
    """An in-place op (not a view's metadata change) on an empty tensor: ``mask[2:2] = cnt`` (torchvision
    Swin3D's window mask over slices, some empty when a window covers the input), which functionalization
    would make a scatter of an empty constant that torch-mlir does not lower."""
    schema = getattr(target, "_schema", None)
    return schema is not None and schema.name.endswith("_") and not schema.name.startswith("aten::resize") \
        and torch.Tag.inplace_view not in target.tags and bool(args) and isinstance(args[0], torch.Tensor) \
        and args[0].numel() == 0 and bool(schema.arguments) and schema.arguments[0].is_write


def _unchanged_buffers(gm, kinds):
    """The indices of the buffer arguments that the captured (functional) step ``gm`` returns as they came in,
    through copies and aliases only: constants of the step (position ids, a window), unlike batch norm's
    running statistics."""
    aten = torch.ops.aten
    copies = {aten.clone.default, aten.alias.default, aten.detach.default, aten.lift_fresh_copy.default,
              aten.view_as_real.default, aten.view_as_complex.default}
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    outs = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    unchanged = set()
    for i, kind in enumerate(kinds):
        if kind != "buffer":
            continue
        node = outs[i]
        while isinstance(node, torch.fx.Node) and node.op == "call_function" and node.target in copies:
            node = node.args[0]
        if node is placeholders[i]:
            unchanged.add(i)
    return frozenset(unchanged)


def _clean_graph(gm):
    """Dead code out of the captured graph: make_fx keeps ops whose results nobody reads, e.g. the
    ``empty.memory_format`` workspace that batch norm's decomposition allocates for cuDNN and then
    ignores, which torch-mlir cannot lower. A concatenation's empty operands go first (``torch.block_diag``'s
    decomposition pads with ``[1, 0]`` blocks: an ``empty_strided`` of no elements that torch-mlir leaves),
    as the replay drops those of the first graph's concatenations."""
    aten = torch.ops.aten
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is aten.cat.default:
            parts = node.args[0]
            kept = [p for p in parts if not (isinstance(p, torch.fx.Node) and
                                            getattr(p.meta.get("val"), "numel", lambda: 1)() == 0)]
            if kept and len(kept) < len(parts):
                node.args = (kept, *node.args[1:])
    for node in reversed(list(gm.graph.nodes)):
        if node.op == "call_function" and not node.users and node.target not in _GUARDS:
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()


# The checks of specialized values (_Specializer._check): no result, kept by every clean-up.
_GUARDS = (torch.ops.aten._assert_async.msg, torch.ops.aten._assert_scalar.default)


def _drop_guards(gm):
    """``gm`` without its checks (``_guards_as_asserts``'s ``aten._assert_scalar`` nodes), nor the ops that only
    they read."""
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target in _GUARDS:
            gm.graph.erase_node(node)
    _clean_graph(gm)


def _guards_as_asserts(gm):
    """Each ``aten._assert_async.msg(ok, message)`` (a specialized value's check) as ``aten._assert_scalar`` of
    ``ok`` read as an integer: torch-mlir's importer drops ``_assert_async`` and imports this pair, which its
    pipelines make ``tensor.extract`` + ``cf.assert`` (the CPU step prints the message and aborts; a GPU
    kernel calls ``__assertfail``; IREE returns an error). Returns the number of checks."""
    aten, checks = torch.ops.aten, 0
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target is aten._assert_async.msg:
            with gm.graph.inserting_before(node):
                value = gm.graph.call_function(aten._local_scalar_dense.default, (node.args[0],))
                value.meta = {**node.meta, "val": 1}  # an int: imported as aten.Int.Tensor of the i1 tensor
                check = gm.graph.call_function(aten._assert_scalar.default, (value, node.args[1]))
                check.meta = dict(node.meta)
            gm.graph.erase_node(node)
            checks += 1
    if checks:
        gm.graph.lint()
        gm.recompile()
    return checks


def _wide_integer_sums(gm, flat):
    """``gm`` with each int64 addition or subtraction whose operands or result leave the int32 range in the
    example step (a hash's sums of products plus an offset) computed as a ``sum`` over its two stacked
    operands, recorded again by ``make_fx``; ``gm`` itself when there is none. torch-mlir's TOSA lowering
    computes an int64 ``add`` / ``sub`` in int32 (TOSA's add has no int64), so ``hash + 7`` wrapped modulo
    2^32 without a word; its ``mul`` and ``reduce_sum`` keep int64. The graph is run once on ``flat`` to
    see the values: an index's ``+ 1`` stays an add."""
    aten = torch.ops.aten
    sign = {aten.add.Tensor: 1, aten.add.Scalar: 1, aten.sub.Tensor: -1, aten.sub.Scalar: -1,
            aten.rsub.Scalar: -1, aten.rsub.Tensor: -1}
    candidates = {n for n in gm.graph.nodes if n.op == "call_function" and n.target in sign
                  and getattr(n.meta.get("val"), "dtype", None) == torch.int64}
    if not candidates:
        return gm
    low, high = -(1 << 31), (1 << 31) - 1
    wide = set()

    class Watch(torch.fx.Interpreter):
        def run_node(self, n):
            out = super().run_node(n)
            if n in candidates:
                values = [out] + [self.env[a] if isinstance(a, torch.fx.Node) else torch.tensor(a)
                                  for a in n.args[:2] if isinstance(a, (torch.fx.Node, int))]
                if any(v.numel() and (int(v.min()) < low or int(v.max()) > high) for v in values):
                    wide.add(n)
            return out

    with torch.no_grad():
        Watch(gm).run(*flat)
    if not wide:
        return gm

    class Wide(torch.fx.Interpreter):
        def run_node(self, n):
            if n not in wide:
                return super().run_node(n)
            with self._set_current_node(n):
                args, kwargs = self.fetch_args_kwargs_from_env(n)
                a, b = (x if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=torch.int64) for x in args[:2])
                if n.target in (aten.rsub.Scalar, aten.rsub.Tensor):
                    a, b = b, a
                factor = sign[n.target] * kwargs.get("alpha", args[2] if len(args) > 2 else 1)
                b = b if factor == 1 else b * factor
                return torch.stack(torch.broadcast_tensors(a.to(torch.int64), b.to(torch.int64))).sum(0)

    return _record_again(Wide(gm), flat)


def _record_again(interpreter, flat):
    """The graph ``interpreter`` runs (a ``torch.fx.Interpreter`` that computes some nodes otherwise),
    recorded again by ``make_fx`` on ``flat``, node metadata (source lines) kept."""
    with torch.fx.traceback.preserve_node_meta(), _one_fake_mode():
        return make_fx(lambda *args: interpreter.run(*args), decomposition_table=_decompositions.table(),
                       record_stack_traces=True)(*flat)


def _unsigned_bytes(gm, flat):
    """``gm`` with its uint8 values computed as int32 ones, recorded again by ``make_fx``; ``gm`` itself when
    it has none. TOSA has no unsigned integers: torch-mlir's conversion makes a uint8 tensor an ``i8`` one, so
    ``(x * 255).round().byte()`` saturated at 127 and came back negative from 128 on (``byte / 255.0``:
    diffusers' AutoencoderTiny quantizes its latents so, and trained 0.6% off PyTorch from the first loss,
    silently). A conversion to uint8 is ATen's: a float truncated toward zero, and every value taken modulo
    256; arithmetic that can leave [0, 255] (``+``, ``-``, ``*``, negation, complement, shifts) is taken
    modulo 256 after the int32 operation, as uint8 wraps; the rest (views, copies, selections, comparisons,
    conversions from uint8) computes the same values on int32. A uint8 argument (an image batch as bytes, a
    byte buffer) becomes an int32 one: ``flat``'s tensor is converted in place, so its .npy is int32 too."""
    aten = torch.ops.aten
    u8 = [n for n in gm.graph.nodes if n.op in ("call_function", "placeholder")
          and getattr(n.meta.get("val"), "dtype", None) == torch.uint8]
    if not u8:
        return gm
    for i, n in enumerate(n for n in gm.graph.nodes if n.op == "placeholder"):
        if n in u8:
            flat[i] = flat[i].to(torch.int32)
    wrapping = {aten.add.Tensor, aten.add.Scalar, aten.sub.Tensor, aten.sub.Scalar, aten.rsub.Tensor,
                aten.rsub.Scalar, aten.mul.Tensor, aten.mul.Scalar, aten.neg.default, aten.bitwise_not.default,
                aten.bitwise_left_shift.Tensor, aten.bitwise_left_shift.Tensor_Scalar, aten.__lshift__.Scalar,
                aten.pow.Tensor_Scalar, aten.pow.Tensor_Tensor}
    targets = set(u8)

    def widen(value):
        if isinstance(value, dict):
            return {k: widen(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(widen(v) for v in value)
        return torch.int32 if value is torch.uint8 else value

    class Bytes(torch.fx.Interpreter):
        def run_node(self, n):
            if n not in targets or n.op != "call_function":  # a uint8 argument comes as int32 already
                return super().run_node(n)
            with self._set_current_node(n):
                args, kwargs = self.fetch_args_kwargs_from_env(n)
                source = args[0] if args and isinstance(args[0], torch.Tensor) else None
                if source is not None and source.dtype != torch.int32 and n.target in (
                        aten._to_copy.default, aten.to.dtype,
                        torch.ops.prims.convert_element_type.default):
                    whole = torch.trunc(source) if source.is_floating_point() else source
                    return torch.bitwise_and(whole.to(torch.int64), 255).to(torch.int32)
                out = n.target(*widen(args), **widen(kwargs))
                if isinstance(out, torch.Tensor):
                    out = out.to(torch.int32) if out.dtype == torch.uint8 else out
                    if n.target in wrapping:
                        out = torch.bitwise_and(out, 255)
                return out

    return _record_again(Bytes(gm), flat)


def _scalar_tensor_before(gm, node, value, dtype, like):
    """A new ``aten.scalar_tensor(value, dtype)`` node before ``node``, with ``node``'s location (not its
    tensor_meta: the importer types a node by it) and ``like``'s device."""
    with gm.graph.inserting_before(node):
        constant = gm.graph.call_function(torch.ops.aten.scalar_tensor.default, (value,),
                                          {"dtype": dtype, "layout": torch.strided, "device": like.device})
    constant.meta = {k: v for k, v in node.meta.items() if k in ("stack_trace", "custom", "nn_module_stack")}
    constant.meta["val"] = like.new_full((), value, dtype=dtype)
    return constant


def _float64_scalars(gm):
    """The Python numbers of float64 arithmetic as float64 0-d tensors (``aten.scalar_tensor``):
    torch-mlir's TOSA conversion makes a scalar operand a float32 constant and then casts it, so
    ``t * 1.0000001`` multiplied by 1.00000012 and ``log(0.9999)`` lost half its digits (RAdam's
    rectification, computed in float64 as PyTorch computes it, switched on a step early with a beta2 of
    0.9999). Numbers float32 holds exactly are left as they are; ``*.Scalar`` forms become their tensor
    forms."""
    aten = torch.ops.aten
    tensor_form = {aten.add.Tensor: aten.add.Tensor, aten.sub.Tensor: aten.sub.Tensor, aten.mul.Tensor: aten.mul.Tensor,
                   aten.div.Tensor: aten.div.Tensor, aten.add.Scalar: aten.add.Tensor, aten.sub.Scalar: aten.sub.Tensor,
                   aten.mul.Scalar: aten.mul.Tensor, aten.div.Scalar: aten.div.Tensor, aten.rsub.Scalar: aten.rsub.Tensor,
                   aten.pow.Tensor_Scalar: aten.pow.Tensor_Tensor, aten.pow.Scalar: aten.pow.Tensor_Tensor,
                   aten.maximum.default: aten.maximum.default, aten.minimum.default: aten.minimum.default,
                   aten.where.self: aten.where.self, aten.where.ScalarOther: aten.where.self,
                   aten.where.ScalarSelf: aten.where.self, aten.where.Scalar: aten.where.self}
    for node in list(gm.graph.nodes):
        val = node.meta.get("val") if node.op == "call_function" else None
        if node.target not in tensor_form or not isinstance(val, torch.Tensor) or val.dtype != torch.float64:
            continue
        inexact = [i for i, a in enumerate(node.args) if isinstance(a, float) and math.isfinite(a)
                   and float(np.float32(a)) != a]
        if not inexact:
            continue
        args = list(node.args)
        for i in inexact:
            args[i] = _scalar_tensor_before(gm, node, args[i], torch.float64, val)
        node.target, node.args = tensor_form[node.target], tuple(args)
    gm.graph.lint()
    gm.recompile()


def _float_comparison_scalars(gm):
    """A floating-point tensor compared with a Python number (``g > 0.0``, ``mask < 0``) as compared with a
    0-d tensor of its own type (``gt.Tensor``), as PyTorch compares. torch-mlir's TOSA conversion of the
    ``*.Scalar`` comparisons casts the tensor to f64 first (an f64 copy of every compared tensor, such as each
    dropout mask's uniform numbers; where the tensor is a gradient, logcumsumexp's backward splitting
    log|grad| by sign, amp-loss-scaling found a scaled f64 value leaving the backward and refused the f16
    step), and its folder read an integer scalar against a constant float tensor wrongly: ``x > 1`` with
    ``x`` all 2.0 became all false, so transformers' X-MOD applied its language adapter to the wrong rows and
    trained wrong without a word, and LED's ``attention_mask < 0`` on a mask made in the step crashed the
    import (a read past the folded constant's buffer).

    The mirror, an integer tensor compared with a non-integral float scalar, crashed torch-mlir's folder
    when the tensor is a constant (a segmentation fault: TimesFM-2.5's ``zeros_like(x, dtype=long) >= 0.5``):
    it is compared with the integer bound that gives the same answer (``x >= 0.5`` as ``x >= 1``,
    ``x < 0.5`` as ``x < 1``, ``x > 0.5`` / ``x <= 0.5`` against 0), ``==`` as never and ``!=`` as always
    (``x != x``, ``x == x``). PyTorch compares in float32, which differs only for integers beyond 2^24."""
    aten = torch.ops.aten
    comparisons = {aten.gt.Scalar, aten.ge.Scalar, aten.lt.Scalar, aten.le.Scalar, aten.eq.Scalar,
                   aten.ne.Scalar}
    bound = {aten.ge.Scalar: math.ceil, aten.lt.Scalar: math.ceil, aten.gt.Scalar: math.floor,
             aten.le.Scalar: math.floor}
    tensor_form = {aten.gt.Scalar: aten.gt.Tensor, aten.ge.Scalar: aten.ge.Tensor, aten.lt.Scalar: aten.lt.Tensor,
                   aten.le.Scalar: aten.le.Tensor, aten.eq.Scalar: aten.eq.Tensor, aten.ne.Scalar: aten.ne.Tensor}
    for node in gm.graph.nodes:
        if node.op != "call_function" or node.target not in comparisons or len(node.args) != 2:
            continue
        tensor, scalar = node.args
        val = getattr(tensor, "meta", {}).get("val")
        if val is None:
            continue
        if isinstance(scalar, (int, float)) and not isinstance(scalar, bool) and val.is_floating_point():
            bound_node = _scalar_tensor_before(gm, node, float(scalar), val.dtype, val)
            node.target = tensor_form[node.target]
            node.args = (tensor, bound_node)
        elif isinstance(scalar, float) and math.isfinite(scalar) and not scalar.is_integer() and \
                not val.is_floating_point() and not val.is_complex() and val.dtype != torch.bool:
            if node.target in bound:
                node.args = (tensor, bound[node.target](scalar))
            else:
                node.target = aten.ne.Tensor if node.target is aten.eq.Scalar else aten.eq.Tensor
                node.args = (tensor, tensor)
    gm.recompile()


def _operations(module):
    """Every operation nested in ``module``, outermost first."""
    todo = [module.operation]
    while todo:
        op = todo.pop()
        for region in reversed(op.regions):
            for block in reversed(region.blocks):
                for o in reversed(list(block.operations)):
                    todo.append(o.operation)
        if op is not module.operation:
            yield op


def _unconverted(module, dialects=("torch", "torch_c", "tm_tensor")):
    """(op name, location) of every op of ``dialects`` left in ``module`` that is not glue."""
    left = []
    for op in _operations(module):
        name = op.name
        if (name.split(".")[0] in dialects or name in dialects) and not name.startswith(_GLUE):
            if name == "torch.operator":
                name = "torch.operator " + str(op.attributes["name"])
            left.append((name, str(op.location)))
    return left


def _failing_asserts(module):
    """(message, location) of every ``cf.assert`` in ``module`` whose condition is the constant false: the
    code torch-mlir writes for a case its conversion does not implement (adaptive pooling whose windows are
    not one size at one stride: "unimplemented: only support cases with fixed stride size."), next to a
    lowering that computes something else. Left in, the step aborted at its first run."""
    found = []
    for op in _operations(module):
        if op.name == "cf.assert":
            cond = op.operands[0].owner
            if getattr(cond, "name", None) == "arith.constant" and str(cond.attributes["value"]) == "false":
                found.append((str(op.attributes["msg"]).strip('"'), str(op.location)))
    return found


def import_train_step(model: torch.nn.Module, loss_fn, example_inputs: tuple, *, optimizer: str = "sgd",
                      lr: float | None = None, momentum: float = 0.0, weight_decay: float = 0.0,
                      betas=(0.9, 0.999), eps: float = 1e-8, max_grad_norm: float | None = None,
                      grad_norm_type: float = 2.0, lr_input: bool = False, accumulation_steps: int = 1, out_dir,
                      name: str = "train_step", dialect: str = "tosa", ema=None, ema_step: int | None = None):
    """Capture ``model``'s training step and import it with torch-mlir (see the module comment).
    Returns ``(text, manifest, graph_module)`` and writes ``out_dir/<name>.mlir``, ``arg<N>.npy`` and
    ``manifest.json``."""
    from torch_mlir import fx as tm_fx
    from torch_mlir.compiler_utils import run_pipeline_with_repro_report

    from ._export import _init_hint as init_hint, _mlir_number as mlir_number, write_manifest

    if dialect not in DIALECTS:
        raise ValueError(f"dialect must be one of {DIALECTS}, got {dialect!r}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    named = [(k, p) for k, p in model.named_parameters() if p.requires_grad]
    # A loss that is a module with its own trainable parameters (a learnable temperature, a loss weighting's
    # log-variances) trains them too, as an optimizer given them does: "loss_fn.<name>".
    if isinstance(loss_fn, torch.nn.Module):
        own = {id(p) for _, p in named}
        named += [(_LOSS_PREFIX + k, p) for k, p in loss_fn.named_parameters()
                  if p.requires_grad and id(p) not in own]
    if not named:
        raise ValueError("the model has no trainable parameters (none with requires_grad=True): its training "
                         "step would update nothing")
    complex_params = [k for k, p in named if p.is_complex()]
    example_tensors, in_names, in_kinds, rebuild = _input_leaves(example_inputs)
    if complex_params or any(t.is_complex() for t in example_tensors):
        raise UnsupportedOpError(
            "amp_mlir.torch trains real parameters on real inputs; "
            + (f"{', '.join(complex_params)} {'is' if len(complex_params) == 1 else 'are'} complex"
               if complex_params else "an example input is complex")
            + " (complex values inside the step are fine)")
    names = [k for k, _ in named]
    params = [p.detach().clone().float() for _, p in named]
    n_params = len(params)
    # Buffers that start empty get the size their first forward pass gives them (QAT's observers).
    sized_in_state = _size_observers(model, loss_fn, list(example_inputs[:-1]), example_inputs[-1])
    # Frozen parameters and plain tensor attributes the step updates are state like the buffers (the others
    # stay constants).
    mutated = _state_beyond_buffers(model, loss_fn, list(example_inputs[:-1]), example_inputs[-1])
    extra = {**dict(model.named_parameters()), **_plain_tensors(model)}
    buffer_items = [(k, b) for k, b in model.named_buffers()] + [(k, extra[k]) for k in mutated]
    if isinstance(loss_fn, torch.nn.Module):  # a loss module's buffers (DINO's center) are state too
        buffer_items += [(_LOSS_PREFIX + k, b) for k, b in loss_fn.named_buffers()]
    buffer_names = [k for k, _ in buffer_items]
    buffers = [torch.full(sized_in_state[k][0], sized_in_state[k][1], dtype=b.dtype) if k in sized_in_state
               else b.detach().clone() for k, b in buffer_items]
    buffers = [b.float() if b.is_floating_point() else b for b in buffers]
    # A complex buffer (a precomputed rotary freqs_cis) is an argument in view_as_real form: [..., 2] floats.
    complex_buffers = frozenset(k for k, b in buffer_items if b.is_complex())
    buffers = [torch.view_as_real(b.to(torch.complex64)).clone() if b.is_complex() else b for b in buffers]

    # A weight average (EMA, SWA) updated after the optimizer: its tensors are state of the step (_ema).
    ema_plan = _ema.plan(ema, model, step=ema_step) if ema is not None else None
    if ema_plan is not None:
        averaged_complex = sorted({k for _, k in ema_plan.entries} & complex_buffers)
        if averaged_complex:
            raise ValueError(f"ema averages the complex buffer {averaged_complex[0]}: not supported")
    ema_state = [t.float() if t.is_floating_point() else t for t in ema_plan.initial] if ema_plan else []

    # The optimizer update: each parameter's group and the state slots (from a torch.optim instance's own
    # state when it has stepped already).
    opt_plan = _optim.plan(optimizer, [p for _, p in named], lr=lr, momentum=momentum,
                           weight_decay=weight_decay, betas=betas, eps=eps)
    state = opt_plan.initial
    state_names = opt_plan.state_names(names)
    state_kinds = opt_plan.state_kinds()
    inputs = [t.detach().clone() for t in example_tensors]
    inputs = [t.float() if t.is_floating_point() else t for t in inputs]
    n_in = len(inputs)
    given = rebuild(inputs) if rebuild else (inputs[:-1], inputs[-1])  # (model inputs, target) as the model takes them
    seed = torch.ones((), dtype=torch.float32)

    # The random-number state (dropout, stochastic depth): an argument the step advances, there only when
    # the captured step draws random numbers (below).
    rng = [torch.zeros((), dtype=torch.int32)]
    if lr_input and opt_plan.relative_steps():
        raise ValueError(f"lr_input=True, but the Adafactor's param group {opt_plan.relative_steps()[0]} computes "
                         "its learning rate from the step count (relative_step, lr=None): give it an lr to set one")
    # The learning rate as an argument (``lr_input``), one per param group: the caller sets it at every step.
    lrs = [torch.tensor(g.lr, dtype=torch.float32) for g in opt_plan.groups] if lr_input else []
    lr_names = ["learning rate"] if len(lrs) == 1 else [f"learning rate of param group {n}" for n in range(len(lrs))]

    def layout(random_state):
        r = rng if random_state else []
        flat = params + state + buffers + ema_state + r + lrs + inputs + [seed]
        all_names = names + state_names + \
            [f"buffer {k}" + (" (complex, as real and imaginary parts)" if k in complex_buffers else "")
             for k in buffer_names] + (ema_plan.names if ema_plan else []) + \
            ["random-number state"] * len(r) + lr_names[:len(lrs)] + in_names + ["grad seed"]
        kinds = ["param"] * n_params + state_kinds + ["buffer"] * len(buffers) + [_ema.KIND] * len(ema_state) + \
            ["rng"] * len(r) + ["lr"] * len(lrs) + in_kinds + ["seed"]
        step = _step_function(model, loss_fn, names, buffer_names, n_params, len(state), len(buffers), n_in,
                              opt_plan, random_state=random_state,
                              complex_buffers=complex_buffers, max_grad_norm=max_grad_norm,
                              grad_norm_type=grad_norm_type, lr_input=lr_input,
                              accumulation_steps=accumulation_steps, ema_plan=ema_plan, rebuild=rebuild)
        return flat, all_names, kinds, step

    flat, all_names, kinds, step = layout(False)
    # Each module's own mode, put back afterwards (a batch norm frozen by ``bn.eval()`` in a training model
    # stays frozen: ``model.train(was_training)`` set every submodule to the model's mode).
    modes = [(module, module.training) for module in model.modules()]
    # A backward that writes parameters' .grad itself (a custom autograd.Function calling
    # torch.autograd.backward: Reformer's reversible layers) bypasses the gradients the step takes: those
    # parameters would silently never train. Their .grad is checked after the capture and put back.
    grads_before = [(name, p, p.grad) for name, p in model.named_parameters()]
    for _, p, _ in grads_before:
        p.grad = None
    try:
        # oneDNN off while capturing: its fused kernels (mkldnn_rnn_layer for nn.LSTM, ...) have no
        # decomposition; the reference ops they stand for do.
        # Attention as its math form (matmul, softmax): the fused CPU kernels' backward ops have no
        # decomposition. Mixture-of-experts layers with static shapes (_static_experts).
        from torch.nn.attention import SDPBackend, sdpa_kernel
        with torch.backends.mkldnn.flags(enabled=False), sdpa_kernel([SDPBackend.MATH]), \
                _static_experts(model), _python_state_kept(model), _one_fake_mode(), _fake_quantize.value_free():
            # First the ops that mutate without saying so in their schema (batch norm's running
            # statistics) as functional ops plus explicit copies, then functionalization (which turns
            # the copies into results) and the full decomposition table, replaying the first graph
            # with its source locations.
            # .item() and bool(tensor) read the example tensors' values (_Specializer).
            def trace(tracing_state, flat, all_names, kinds, step):
                specializer = _Specializer(all_names, kinds)
                with tracing_state(), _autocast_regions():
                    first_table = {**_decompositions.mutation_table(), **_decompositions.pinned_table()}
                    return specializer, make_fx(
                        specializer.wrap(step), decomposition_table=specializer.table(first_table),
                        record_stack_traces=True)(*flat)

            # In torch.export's state first (libraries skip their data-dependent input checks); where
            # the model fails in that state and not in PyTorch's own (a library path only compilers
            # take: Switch Transformers' encoder indexes the attention mask it builds only when not
            # compiling), in PyTorch's own state, with its data-dependent reads specialized.
            tracing_state = _export_tracing
            try:
                specializer, first = trace(tracing_state, flat, all_names, kinds, step)
            except UnsupportedOpError:
                raise
            except Exception as in_export_state:
                tracing_state = contextlib.nullcontext
                try:
                    specializer, first = trace(tracing_state, flat, all_names, kinds, step)
                except UnsupportedOpError:
                    raise
                except Exception as e:
                    raise e from in_export_state
            random_ops, other = _decompositions.random_ops(first)
            if not random_ops and not other and tracing_state is _export_tracing:
                # The model may compute another function in torch.export's state than in PyTorch's own
                # (transformers' Gemma with use_bidirectional_attention, PaliGemma's text model: a causal
                # mask under export tracing). The captured loss is compared with the eager one on the example;
                # where it differs, the step is captured in PyTorch's own state, if that one agrees.
                eager = _eager_loss(model, loss_fn, *given, accumulation_steps)
                if not _same_loss(_captured_loss(first, flat), eager):
                    try:
                        retraced = trace(contextlib.nullcontext, flat, all_names, kinds, step)
                    except UnsupportedOpError:
                        raise
                    except Exception:
                        retraced = None
                    if retraced is not None and _same_loss(_captured_loss(retraced[1], flat), eager):
                        tracing_state = contextlib.nullcontext
                        specializer, first = retraced
                        random_ops, other = _decompositions.random_ops(first)
            if other:
                raise UnsupportedOpError(
                    f"the training step draws random numbers with {', '.join(sorted(other))}: amp_mlir.torch "
                    f"draws them for dropout, bernoulli, rand, uniform, randn, normal_, exponential_, randint and rrelu only")
            if random_ops:
                # Captured again with the random-number state as an argument, which the replay's
                # decompositions draw from (a random op traced as is would be a constant, the same
                # dropout mask at every step). A value read from the draws is refused first: the next
                # trace draws again.
                specializer.refuse_random()
                flat, all_names, kinds, step = layout(True)
                specializer, first = trace(tracing_state, flat, all_names, kinds, step)
            rng_index = kinds.index("rng") if random_ops else None

            def replay(*args):
                return _Replay(first, rng_index).run(*args)

            with torch.fx.traceback.preserve_node_meta():
                gm = make_fx(functionalize(replay, remove="mutations"), decomposition_table=_decompositions.table(),
                             record_stack_traces=True)(*flat)
            _clean_graph(gm)
            if _complex.has_complex(gm):
                gm = _complex.to_real_pairs(gm, flat, _decompositions.table(), {_AUTOCAST_KEY: "f32"})
    except UnsupportedOpError:
        raise
    except Exception as e:
        # A step PyTorch cannot run either (a wrong input shape, a model built for another resolution): said
        # as such, at the line that raised, rather than as a capture failure.
        failure = _eager_failure(model, loss_fn, *given, accumulation_steps)
        if failure is not None:
            what, eager = failure
            where = eager is not None and _raised_at(eager)
            raise UnsupportedOpError("the training step fails in PyTorch itself, before any capture: " + what
                                     + (f"\n  at {where}" if where else "")) from eager
        raise UnsupportedOpError(f"amp_mlir.torch could not capture the training step: {type(e).__name__}: {e}") \
            from e
    finally:
        for module, training in modes:
            module.training = training
        written = [name for name, p, _ in grads_before if p.grad is not None]
        for _, p, grad in grads_before:
            p.grad = grad
    if written:
        raise UnsupportedOpError(
            "amp_mlir.torch cannot capture the training step: its backward writes the .grad of "
            f"{', '.join(written[:8])}{' and others' if len(written) > 8 else ''} itself, on the model's "
            "own parameter objects (a custom autograd.Function whose backward calls torch.autograd.backward "
            "on parameters it holds from before the step, not through the module's attributes), outside the "
            "gradients the step computes: those parameters would never train. Reach them through the module "
            "(as reversible layers do: those train) or return their gradients from the Function's backward.")
    if specializer.foreign:
        warnings.warn(
            "amp_mlir.torch: the training step reads trainable parameters that are neither the model's nor the "
            f"loss module's (shapes {', '.join(str(list(s)) for s in specializer.foreign.values())}): a loss "
            "function that closes over a Parameter, a module kept in a plain list or attribute. The step holds "
            "them constant; register them on the model (or on a loss module) to train them.", UserWarning,
            stacklevel=3)
    specialized = specializer.warn(_unchanged_buffers(gm, kinds))
    _clean_graph(gm)
    _float_comparison_scalars(gm)
    _float64_scalars(gm)
    gm = _wide_integer_sums(gm, flat)
    gm = _unsigned_bytes(gm, flat)
    outs = next(n for n in gm.graph.nodes if n.op == "output").args[0]
    loss_meta = outs[-1].meta.get("val")
    if loss_meta is None or tuple(loss_meta.shape) != () or not loss_meta.is_floating_point():
        raise ValueError(f"loss_fn must return a float scalar, got {loss_meta}")

    # torch-mlir's diagnostics (the op that did not legalize, at its Python source line) are collected
    # for the error message instead of going to stderr.
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_d
    from torch_mlir.extras.fx_importer import FxImporter

    ctx = ir.Context()
    torch_d.register_dialect(ctx)
    diagnostics = []

    def collect(d):
        diagnostics.append(f"{d.location}: {d.message}")
        return True

    handler = ctx.attach_diagnostic_handler(collect)  # noqa: F841 (attached while it lives)

    def backward_note(text):
        # The backward pass's ops are recorded while autograd runs, at the step's autograd.grad call: their
        # location is a line of this file alone, not the model line whose gradient they compute (a forward
        # op's is a call site: the model's line, called from here).
        here = f'loc("{Path(__file__).resolve()}"'
        return f"\n  (a location in {Path(__file__).name} alone: an op of the backward pass)" if here in text else ""

    def lower(module, pipeline, what):
        diagnostics.clear()
        try:
            run_pipeline_with_repro_report(module, pipeline, what)
        except Exception as e:
            detail = "\n".join(f"  {d}" for d in diagnostics[:5]) or f"  {str(e).strip().splitlines()[0]}"
            raise UnsupportedOpError(f"torch-mlir could not lower the training step ({what}):\n{detail}"
                                     + backward_note(detail)) from e

    def import_and_lower(gm):
        """The torch dialect of ``gm``, lowered by torch-mlir to TOSA / linalg; UnsupportedOpError for what is
        left."""
        importer = FxImporter(context=ctx, py_attr_tracker=_literal_tracker())
        _name_autocast_regions(importer)
        _locate_in_the_loss(gm, loss_fn)
        module = tm_fx.stateless_fx_import(gm, output_type="raw", model_name=name, fx_importer=importer)
        lower(module, "builtin.module(func.func(torch-match-quantized-custom-ops),"
              "torchdynamo-export-to-torch-backend-pipeline{ extra-library=})", "aten -> torch backend")
        lower(module, _pipeline(dialect), f"torch -> {dialect}, then the rest")
        left = _unconverted(module)
        if not left:
            lower(module, _FINALIZE, "torch types out")
            left = _unconverted(module, dialects=("torch", "torch_c", "tm_tensor",
                                                  "builtin.unrealized_conversion_cast"))
        if left:
            by_name = Counter(n for n, _ in left)
            first = {}
            for n, loc in left:
                first.setdefault(n, loc)
            lines = "\n".join(f"  {n} ({c}x), first at {first[n]}" for n, c in sorted(by_name.items()))
            raise UnsupportedOpError("torch-mlir left ops that no amp-mlir pipeline takes:\n" + lines
                                     + backward_note(lines))
        failing = _failing_asserts(module)
        if failing:
            raise UnsupportedOpError("torch-mlir lowered an op to code that always fails its check (a case its "
                                     "conversion does not implement):\n"
                                     + "\n".join(f"  {m}, at {loc}" for m, loc in failing))
        return module

    # The checks of the values the step was specialized to keep the ops that compute those values, which
    # nothing else may read; where torch-mlir cannot lower one of them, the step is imported without the checks
    # and the export says so.
    checks = _guards_as_asserts(gm)
    try:
        module = import_and_lower(gm)
    except UnsupportedOpError as error:
        if not checks:
            raise
        _drop_guards(gm)
        module = import_and_lower(gm)
        warnings.warn(
            "amp_mlir.torch: the training step does not check the values it was specialized to (see the "
            "SpecializationWarning): torch-mlir cannot lower an op that computes them in the step, so a batch "
            f"that gives other values trains on the example's graph without an error. {error}",
            SpecializationWarning, stacklevel=3)
    _pin_autocast_regions(module)

    # ------------------------------------------------------------------ the contract
    from torch_mlir import ir

    num_classes = {}
    for n in gm.graph.nodes:
        if n.op == "call_function" and "nll_loss" in str(n.target):
            num_classes[n.args[1]] = int(n.args[0].meta["val"].shape[-1])
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]

    func = next(op for op in module.body.operations if op.operation.name == "func.func")
    ctx = module.context
    arg_meta = []
    arg_attrs = []
    with ctx:
        for i, t in enumerate(flat):
            kind = kinds[i]
            hint_kind = "state" if kind in _optim.SLOT_KINDS or kind == "rng" else kind
            if kind in ("buffer", _ema.KIND):  # batch-norm running statistics (zeros / ones) and counters
                hint_kind = "param" if t.is_floating_point() else "state"
            fill = t.reshape(-1)[0] if kind in _optim.SLOT_KINDS and t.numel() and bool((t == t.reshape(-1)[0]).all()) \
                else None  # optimizer state that starts at one value (Adagrad's sum, NAdam's momentum product)
            if kind == "seed":
                hint = "#amp.init<ones>"
            elif kind == "lr" or (fill is not None and float(fill) != 0):
                hint = "#amp.init<fill(%s)>" % mlir_number(str(np.float32(t.reshape(-1)[0])))  # shortest float32 form
            else:
                hint = init_hint(t, hint_kind, num_classes.get(placeholders[i]))
            attrs = {"amp.init": ir.StringAttr.get("@@AMPINIT@@" + hint)}
            if kind == "seed":
                attrs["amp.grad_seed"] = ir.UnitAttr.get()
            arg_attrs.append(ir.DictAttr.get(attrs))
            arr = t.detach().cpu().numpy()
            fname = f"arg{i}.npy"
            np.save(out_dir / fname, arr)
            arg_meta.append({"index": i, "name": all_names[i], "kind": kind, "shape": list(t.shape),
                             "dtype": str(arr.dtype), "amp_init": hint, "file": fname})
        func.attributes["arg_attrs"] = ir.ArrayAttr.get(arg_attrs)
        res_attrs, res_meta = [], []
        n_updates = n_params + len(state) + len(buffers) + len(ema_state) + kinds.count("rng")
        for i in range(n_updates):
            attrs = {"amp.update_of": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)}
            # Computed after the step: on a skipped step, from the kept parameters. The random-number
            # state too (state + 1, which reads no updated value): it moves on at a skipped step, as
            # PyTorch's generator does when GradScaler skips optimizer.step().
            if kinds[i] in (_ema.KIND, "rng"):
                attrs["amp.after_step"] = ir.UnitAttr.get()
            res_attrs.append(ir.DictAttr.get(attrs))
            res_meta.append({"index": i, "kind": kinds[i], "update_of": i, "name": all_names[i]})
        res_attrs.append(ir.DictAttr.get({"amp.loss": ir.UnitAttr.get()}))
        res_meta.append({"index": n_updates, "kind": "loss", "name": "loss"})
        func.attributes["res_attrs"] = ir.ArrayAttr.get(res_attrs)

    body = module.operation.get_asm(enable_debug_info=True, large_elements_limit=None)
    body = re.sub(r'"@@AMPINIT@@([^"]*)"', r"\1", body)
    ops = Counter(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
    header = [
        f"// {name}: generated by amp_mlir.torch.export_train_step (torch {torch.__version__}, torch-mlir importer,",
        f"// {dialect} first). Model: {type(model).__name__}; loss: "
        f"{getattr(loss_fn, '__name__', type(loss_fn).__name__)}; optimizer: {opt_plan.describe()}"
        + ("; the learning rate an argument, initially lr" if lr_input else "")
        + (f"; gradients clipped to a {grad_norm_type}-norm of {max_grad_norm}" if max_grad_norm is not None else "")
        + (f"; gradients accumulated over {accumulation_steps} micro-batches of the batch"
           if accumulation_steps > 1 else "")
        + (f"; weights averaged after the update: {ema_plan.describe()}" if ema_plan else "")
        + ").",
        "// Arguments (initial values in arg<N>.npy next to this file; amp-train --inputs DIR):",
    ]
    header += [f"//   {i}: {m['name']} ({m['kind']})" for i, m in enumerate(arg_meta)]
    if specialized:
        header.append("// Specialized to values read from the example tensors (.item(), bool(tensor), "
                      "nonzero's count; those read from integer or boolean data checked by the step, a cf.assert "
                      "each):")
        header += [f"//   {line}" for line in specialized]
    header.append("// Results: the new value of arguments 0.."
                  f"{n_updates - 1} (amp.update_of), then the loss (amp.loss).")
    text = "\n".join(header) + "\n" + body
    mlir_path = out_dir / f"{name}.mlir"
    mlir_path.write_text(text)
    manifest = write_manifest(out_dir, name=name, mlir_path=mlir_path, model=model, loss_fn=loss_fn,
                              optimizer=dict(**opt_plan.manifest(names), max_grad_norm=max_grad_norm,
                                             grad_norm_type=grad_norm_type, lr_input=lr_input,
                                             accumulation_steps=accumulation_steps),
                              arguments=arg_meta, results=res_meta, aten_ops=ops,
                              frontend="torch-mlir", dialect=dialect,
                              **({"ema": ema_plan.manifest()} if ema_plan else {}))
    return text, manifest, gm, n_params, len(state)
