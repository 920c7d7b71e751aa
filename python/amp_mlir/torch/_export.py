"""export_train_step: capture forward + loss + backward + optimizer as one aten graph and write TOSA."""

from __future__ import annotations

import contextlib
import json
import math
import operator
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.utils._pytree as pytree
from torch.func import functional_call, grad_and_value
from torch.fx.experimental.proxy_tensor import make_fx

from ._emitter import F32, Emitter, Val
from ._lower import Lowering, UnsupportedOpError, _dtype_of

_OPTIMIZERS = ("sgd", "adam")


@dataclass
class ExportedStep:
    """The result of :func:`export_train_step`."""

    mlir_path: Path
    out_dir: Path
    name: str
    text: str
    manifest: dict
    graph_module: torch.fx.GraphModule = field(repr=False)
    arg_names: list
    num_params: int
    num_state: int

    @property
    def aten_ops(self) -> dict:
        return dict(self.manifest["aten_ops"])

    def load_into(self, model: torch.nn.Module, trained, *, loss_fn=None, ema=None) -> list:
        """Copy the trained values of this step's parameters and buffers into ``model`` (and ``loss_fn``'s own,
        ``loss_fn.<name>``), and with ``ema`` (the object given to :func:`export_train_step`) its averaged
        tensors (manifest kind ``ema``; AveragedModel's ``n_averaged``), so that PyTorch evaluates or saves what
        amp-mlir trained. ``trained``: an ``amp_mlir.Trainer`` of this step, a directory of ``arg<N>.npy``
        (``amp-train --dump``), or the arguments' values in order. Returns the names loaded. The optimizer's
        state is not loaded (its slots are named in the manifest). KeyError for a name ``model`` lacks."""
        def value(index):
            if hasattr(trained, "argument"):
                return trained.argument(index)
            if isinstance(trained, (str, Path)):
                return np.load(Path(trained) / f"arg{index}.npy")
            return np.asarray(trained[index])

        def copy(target, index):
            with torch.no_grad():
                target.copy_(torch.from_numpy(np.ascontiguousarray(value(index))).reshape(target.shape))

        modules = {"": model, **({"loss_fn.": loss_fn} if loss_fn is not None else {})}
        tensors = {prefix: {**dict(owner.named_parameters()), **dict(owner.named_buffers())}
                   for prefix, owner in modules.items()}

        def tensor_of(name):
            prefix = "loss_fn." if name.startswith("loss_fn.") else ""
            found = tensors.get(prefix, {})
            if name[len(prefix):] not in found:
                raise KeyError(f"the step's {name} is not a parameter or buffer of the "
                               f"{'loss module' if prefix else 'model'}")
            return found[name[len(prefix):]]

        loaded = []
        averaged = dict(ema.module.state_dict(keep_vars=True)) if ema is not None else {}
        for arg in self.manifest["arguments"]:
            kind, name, index = arg["kind"], arg["name"], arg["index"]
            if kind == "param":
                copy(tensor_of(name), index)
            elif kind == "buffer":
                if "(complex" in name:
                    raise ValueError(f"the step's {name} is complex, kept as real pairs: load it yourself "
                                     "(torch.view_as_complex)")
                copy(tensor_of(name[len("buffer "):]), index)
            elif kind == "ema" and ema is not None:
                key = name[len("ema "):]
                if key == "n_averaged":
                    copy(ema.n_averaged, index)
                elif key == "step":
                    continue  # (the count the next update would pass: the caller's)
                else:
                    copy(averaged[key], index)
            else:
                continue
            loaded.append(name)
        if ema is not None:  # an average that does not average the buffers keeps the model's (copied at each update)
            own = {a["name"][len("ema "):] for a in self.manifest["arguments"] if a["kind"] == "ema"}
            buffers = {a["name"][len("buffer "):]: a["index"] for a in self.manifest["arguments"]
                       if a["kind"] == "buffer" and "(complex" not in a["name"]}
            for key, tensor in ema.module.named_buffers():
                if key not in own and key in buffers:
                    copy(tensor, buffers[key])
                    loaded.append(f"ema {key}")
        return loaded


def _sanitize(name: str) -> str:
    out = "".join(c if (c.isalnum() or c == "_") else "_" for c in name)
    return out if out and not out[0].isdigit() else "p_" + out


def _mlir_number(text: str) -> str:
    """A number printed by Python's %g as an MLIR literal: MLIR's lexer needs a '.' before an exponent."""
    mantissa, e, exponent = text.partition("e")
    if e and "." not in mantissa:
        mantissa += ".0"
    return mantissa + e + exponent


def _init_hint(t: torch.Tensor, kind: str, num_classes=None) -> str:
    """The ``#amp.init`` attribute the runner draws ``t``'s stand-in from (docs/TrainingStep.md)."""
    if kind in ("state", "step"):
        return "#amp.init<zeros>"
    if t.dtype == torch.bool:  # a mask: all-valid stays so (no empty rows in a stand-in), else random bits
        return "#amp.init<ones>" if bool(t.all()) else "#amp.init<zeros>" if not bool(t.any()) else \
            "#amp.init<labels(2)>"
    if not t.is_floating_point():
        c = num_classes if num_classes else int(t.max().item()) + 1 if t.numel() else 1
        return f"#amp.init<labels({max(1, int(c))})>"
    if kind == "param":
        # A hint holds finite numbers only: the non-finite values of a buffer (timm's clipped linears keep
        # -inf / +inf bounds) are in its arg<N>.npy, and the stand-in draws from the finite ones.
        finite = t[torch.isfinite(t)]
        if finite.numel() == 0 or torch.all(finite == 0):
            return "#amp.init<zeros>"
        if torch.all(t == 1):
            return "#amp.init<ones>"
        if t.numel() > 1 and torch.all(t == t.reshape(-1)[0]):
            return "#amp.init<fill(%s)>" % _mlir_number("%.9g" % float(t.reshape(-1)[0]))
        a = float(finite.abs().max())
        return "#amp.init<uniform(%s)>" % _mlir_number("%.4g" % a)
    s = float(t.float().std()) if t.numel() > 1 else 1.0
    return "#amp.init<normal(%s)>" % _mlir_number("%.4g" % (s if s > 0 and math.isfinite(s) else 1.0))


def _make_step_fn(model, loss_fn, names, n_params, n_inputs, optimizer, lr, momentum, weight_decay, betas, eps,
                  forward_context=contextlib.nullcontext):
    """The training step as one function of flat tensors. ``forward_context()`` wraps the forward pass and
    the loss only (as ``torch.autocast`` is meant to be used): the backward pass and the update run outside."""
    b1, b2 = betas

    def step_fn(*flat):
        params = list(flat[:n_params])
        rest = flat[n_params:]
        inputs = rest[len(rest) - n_inputs:]
        state = rest[: len(rest) - n_inputs]
        model_inputs, target = inputs[:-1], inputs[-1]

        def compute_loss(pdict):
            with forward_context():
                return loss_fn(functional_call(model, pdict, tuple(model_inputs)), target)

        grads, loss = grad_and_value(compute_loss)(dict(zip(names, params)))
        grads = [grads[k] for k in names]
        if weight_decay != 0:
            # torch.optim: grad = grad.add(param, alpha=weight_decay)
            grads = [g + weight_decay * p for g, p in zip(grads, params)]
        new_params, new_state = [], []
        if optimizer == "sgd":
            if momentum != 0:
                # buf = momentum * buf + grad (the first step's clone(grad) equals this with buf = 0)
                bufs = []
                for g, buf in zip(grads, state):
                    bufs.append(buf * momentum + g)
                grads = bufs
                new_state = bufs
            new_params = [p - lr * g for p, g in zip(params, grads)]
        else:  # adam, torch.optim.Adam's single-tensor (non-foreach) update
            ms, vs, step = state[:n_params], state[n_params: 2 * n_params], state[2 * n_params]
            t = step + 1
            bias_correction1 = 1 - torch.pow(b1, t)
            bias_correction2 = 1 - torch.pow(b2, t)
            step_size = lr / bias_correction1
            bc2_sqrt = torch.sqrt(bias_correction2)
            new_m, new_v = [], []
            for p, g, m, v in zip(params, grads, ms, vs):
                m2 = m + (g - m) * (1 - b1)  # exp_avg.lerp_(grad, 1 - beta1)
                v2 = v * b2 + (g * g) * (1 - b2)  # exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                denom = torch.sqrt(v2) / bc2_sqrt + eps
                new_params.append(p - step_size * (m2 / denom))  # param.addcdiv_(exp_avg, denom, value=-step_size)
                new_m.append(m2)
                new_v.append(v2)
            new_state = new_m + new_v + [t]
        return (*new_params, *new_state, loss)

    return step_fn


def write_manifest(out_dir, *, name, mlir_path, model, loss_fn, optimizer, arguments, results, aten_ops,
                   **extra) -> dict:
    """``out_dir/manifest.json`` of an exported step (both front ends); returns it."""
    manifest = {
        "name": name,
        "mlir": Path(mlir_path).name,
        **extra,
        "torch_version": torch.__version__,
        "model": type(model).__name__,
        "loss_fn": getattr(loss_fn, "__name__", type(loss_fn).__name__),
        "optimizer": optimizer,
        "arguments": arguments,
        "results": results,
        "aten_ops": dict(sorted(aten_ops.items())),
    }
    (Path(out_dir) / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def _find_seed(gm, loss_node):
    ones = [n for n in gm.graph.nodes if n.op == "call_function" and n.target == torch.ops.aten.ones_like.default]
    seeds = [n for n in ones if n.args[0] is loss_node]
    if len(seeds) != 1:
        seeds = [n for n in ones if n.meta["val"].numel() == 1]
    if len(seeds) != 1:
        raise UnsupportedOpError(
            f"expected exactly one backward seed (ones_like of the loss), found {len(seeds)}")
    return seeds[0]


def _remove_stale_arguments(out_dir: Path, count: int):
    """Removes the ``arg<N>.npy`` files of an earlier export into ``out_dir`` beyond this step's ``count``
    arguments (amp-train refuses an inputs directory with files for arguments the step does not have: a
    step exported again without dropout has one argument fewer, its random-number state)."""
    for path in out_dir.glob("arg*.npy"):
        match = re.fullmatch(r"arg(\d+)\.npy", path.name)
        if match and int(match.group(1)) >= count:
            path.unlink()


def export_train_step(model: torch.nn.Module, loss_fn, example_inputs: tuple, *, optimizer: str = "sgd",
                      lr: float | None = None, momentum: float = 0.0, weight_decay: float = 0.0,
                      betas=(0.9, 0.999), eps: float = 1e-8, max_grad_norm: float | None = None,
                      grad_norm_type: float = 2.0, lr_input: bool = False, accumulation_steps: int = 1, out_dir,
                      name: str = "train_step", frontend: str | None = None, dialect: str = "tosa", ema=None,
                      ema_step: int | None = None) -> ExportedStep:
    """Export one training step of ``model`` as an amp-mlir training step.

    ``frontend="torch-mlir"`` (the default when torch-mlir is installed) captures the step functionally
    and imports it with torch-mlir's FX importer (``dialect``: "tosa" = TOSA first, linalg for the rest;
    "linalg" = the other way round): any model torch-mlir takes, buffers such as batch-norm running
    statistics as state (arguments updated by results), optimizers "sgd", "adam" and "adamw" by name or a
    torch.optim ``SGD`` / ``Adam`` / ``AdamW`` / ``RMSprop`` / ``Adagrad`` / ``Adamax`` / ``NAdam`` / ``RAdam``
    instance (its param groups' options and its state; ``lr``,
    ``momentum``, ``weight_decay``, ``betas`` and ``eps`` are then left unset: see _optim.py), and the
    backward seed as an argument (see amp_mlir/torch/_torch_mlir.py). ``frontend="builtin"`` is the
    original op-by-op aten -> TOSA lowering of this package (about 75 aten ops, SGD / Adam, no buffers).

    The step computes ``loss = loss_fn(model(*example_inputs[:-1]), example_inputs[-1])``; an example input may
    be a container (tuple, list, dict, nested) of tensors and other values (torch-mlir front end): each tensor
    in it is an argument of the step, named by its place (``target[1]``, ``x['mask']``), the other values are
    constants of the step, and the model and the loss get the containers back. Its gradient
    with respect to every trainable parameter, and the update of ``torch.optim.SGD`` (``optimizer="sgd"``,
    optional momentum / weight decay, no dampening or Nesterov) or ``torch.optim.Adam`` (``"adam"``), all
    in float32. It writes ``out_dir/<name>.mlir``, ``out_dir/arg<N>.npy`` (initial value of argument N)
    and ``out_dir/manifest.json``. Argument order: parameters, optimizer state (SGD momentum buffers, or
    Adam first moments, second moments and a ``tensor<f32>`` step counter), then the batch inputs.
    ``max_grad_norm`` (torch-mlir front end) clips the gradients before the update as
    ``torch.nn.utils.clip_grad_norm_(params, max_grad_norm, grad_norm_type)`` does, ``params`` the ones the
    optimizer holds (every trained one, unless a torch.optim instance leaves some out); under dynamic loss
    scaling the norm reads unscaled gradients, as after ``GradScaler.unscale_``. ``lr_input=True``
    (torch-mlir front end) makes the learning rate a ``tensor<f32>`` argument (manifest kind ``lr``, after
    the buffers and before the batch, initially ``lr``) that the caller sets at every step, for a
    schedule (``amp_mlir.Trainer.set_argument``), one per param group of an optimizer instance; without it
    ``lr`` is a constant of the step. ``accumulation_steps=k`` (torch-mlir front end) accumulates gradients
    over k micro-batches before the one update, as a gradient-accumulation loop does (``(loss / k).backward()``
    per micro-batch; batch norm's statistics per micro-batch): every example input, the target included, is
    split along dim 0 into k equal parts; the loss is the micro-batches' mean.
    ``ema`` (torch-mlir front end): a ``torch.optim.swa_utils.AveragedModel`` or timm ``ModelEmaV2`` /
    ``ModelEmaV3`` of ``model``, updated after the optimizer inside the step as the loop's
    ``ema.update_parameters(model)`` / ``ema.update(model[, step=ema_step])`` does: its averaged tensors are
    state (manifest kind ``ema``, after the buffers; see amp_mlir/torch/_ema.py).
    Results: the new value of every parameter and state tensor (``amp.update_of``) and the loss
    (``amp.loss``). Raises :class:`UnsupportedOpError` for aten ops it cannot lower.
    """
    from . import _torch_mlir

    if frontend is None:
        frontend = "torch-mlir" if _torch_mlir.available() else "builtin"
    if frontend not in ("torch-mlir", "builtin"):
        raise ValueError(f"frontend must be 'torch-mlir' or 'builtin', got {frontend!r}")
    if isinstance(optimizer, torch.optim.Optimizer) or (
            isinstance(optimizer, (list, tuple)) and optimizer and
            all(isinstance(o, torch.optim.Optimizer) for o in optimizer)):
        if frontend != "torch-mlir":
            raise ValueError("a torch.optim optimizer needs frontend='torch-mlir' (the builtin front end takes "
                             f"one of {_OPTIMIZERS} by name)")
    else:
        if not isinstance(optimizer, str):
            raise ValueError(f"optimizer must be a name, an optimizer instance (torch.optim's, timm's) or a list "
                             f"of them, got {type(optimizer).__name__}")
        optimizer = optimizer.lower()
        optimizers = _torch_mlir.OPTIMIZERS if frontend == "torch-mlir" else _OPTIMIZERS
        if optimizer not in optimizers:
            raise ValueError(f"optimizer must be one of {optimizers}, got {optimizer!r}")
        if optimizer != "sgd" and momentum != 0:
            raise ValueError("momentum is an SGD option")
    if not isinstance(example_inputs, (tuple, list)) or len(example_inputs) < 2:
        raise ValueError("example_inputs must be a tuple (model inputs..., target)")
    if lr_input and frontend != "torch-mlir":
        raise ValueError("lr_input needs frontend='torch-mlir'")
    if (ema is not None or ema_step is not None) and frontend != "torch-mlir":
        raise ValueError("ema needs frontend='torch-mlir'")
    if ema_step is not None and ema is None:
        raise ValueError("ema_step is the step of an ema's update: give ema too")
    if accumulation_steps != 1:
        if frontend != "torch-mlir":
            raise ValueError("accumulation_steps needs frontend='torch-mlir'")
        if not isinstance(accumulation_steps, int) or accumulation_steps < 1:
            raise ValueError(f"accumulation_steps must be a positive int, got {accumulation_steps!r}")
        uneven = [(i, t) for i, value in enumerate(example_inputs) for t in pytree.tree_leaves(value)
                  if isinstance(t, torch.Tensor) and (t.dim() == 0 or t.shape[0] % accumulation_steps)]
        if uneven:
            raise ValueError(f"accumulation_steps={accumulation_steps} splits every example input along dim 0 into "
                             f"equal micro-batches; example input {uneven[0][0]} has "
                             f"{'a tensor of ' if not isinstance(example_inputs[uneven[0][0]], torch.Tensor) else ''}"
                             f"shape {list(uneven[0][1].shape)}")
    if max_grad_norm is not None:
        if frontend != "torch-mlir":
            raise ValueError("max_grad_norm needs frontend='torch-mlir'")
        if not (isinstance(max_grad_norm, (int, float)) and 0 < max_grad_norm < math.inf):
            raise ValueError(f"max_grad_norm must be a positive finite number, got {max_grad_norm!r}")
        if not (isinstance(grad_norm_type, (int, float)) and grad_norm_type > 0):
            raise ValueError(f"grad_norm_type must be positive (math.inf for the largest magnitude), "
                             f"got {grad_norm_type!r}")
    if frontend == "torch-mlir":
        if not _torch_mlir.available():
            raise ImportError("frontend='torch-mlir' needs the torch-mlir package (pip install torch-mlir)")
        out = Path(out_dir)
        text, manifest, gm, n_params, n_state = _torch_mlir.import_train_step(
            model, loss_fn, example_inputs, optimizer=optimizer, lr=lr, momentum=momentum,
            weight_decay=weight_decay, betas=betas, eps=eps, max_grad_norm=max_grad_norm,
            grad_norm_type=float(grad_norm_type), lr_input=bool(lr_input), accumulation_steps=accumulation_steps,
            out_dir=out, name=name,
            dialect=dialect, ema=ema, ema_step=ema_step)
        _remove_stale_arguments(out, len(manifest["arguments"]))
        return ExportedStep(mlir_path=out / f"{name}.mlir", out_dir=out, name=name, text=text, manifest=manifest,
                            graph_module=gm, arg_names=[a["name"] for a in manifest["arguments"]],
                            num_params=n_params, num_state=n_state)
    not_tensors = [i for i, t in enumerate(example_inputs) if not isinstance(t, torch.Tensor)]
    if not_tensors:
        raise ValueError(f"example input {not_tensors[0]} is a {type(example_inputs[not_tensors[0]]).__name__}: "
                         "frontend='builtin' takes tensors only (frontend='torch-mlir' takes containers of them)")
    if lr is None:
        lr = 1e-3 if optimizer in ("adam", "adamw") else 0.01
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    named = [(k, p) for k, p in model.named_parameters() if p.requires_grad]
    names = [k for k, _ in named]
    params = [p.detach().clone().float() for _, p in named]
    n_params = len(params)
    if optimizer == "sgd":
        state = [torch.zeros_like(p) for p in params] if momentum != 0 else []
        state_names = [f"momentum_{_sanitize(k)}" for k in names] if momentum != 0 else []
        state_kinds = ["momentum"] * len(state)
    else:
        state = [torch.zeros_like(p) for p in params] + [torch.zeros_like(p) for p in params]
        state.append(torch.zeros((), dtype=torch.float32))
        state_names = [f"m_{_sanitize(k)}" for k in names] + [f"v_{_sanitize(k)}" for k in names] + ["step"]
        state_kinds = ["adam_m"] * n_params + ["adam_v"] * n_params + ["step"]
    inputs = [t.detach().clone() for t in example_inputs]
    inputs = [t.float() if t.is_floating_point() else t for t in inputs]
    n_in = len(inputs)
    in_names = (["x"] if n_in == 2 else [f"x{i}" for i in range(n_in - 1)]) + ["target"]
    in_kinds = ["input"] * (n_in - 1) + ["target"]

    flat = params + state + inputs
    step_fn = _make_step_fn(model, loss_fn, names, n_params, n_in, optimizer, float(lr), float(momentum),
                            float(weight_decay), tuple(float(b) for b in betas), float(eps))
    was_training = model.training
    try:
        gm = make_fx(step_fn)(*flat)
    except RuntimeError as e:
        # e.g. BatchNorm in training mode: "attempted to call in-place operation (aten::add_.Tensor) that
        # would mutate a captured Tensor" (its running statistics)
        raise UnsupportedOpError(f"amp_mlir.torch could not capture the training step with make_fx: {e}") from e
    finally:
        model.train(was_training)

    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    assert len(placeholders) == len(flat), (len(placeholders), len(flat))
    out_node = next(n for n in gm.graph.nodes if n.op == "output")
    outs = list(out_node.args[0])
    n_updates = n_params + len(state)
    assert len(outs) == n_updates + 1
    loss_node = outs[-1]
    if tuple(loss_node.meta["val"].shape) != ():
        raise ValueError(f"loss_fn must return a scalar, got shape {tuple(loss_node.meta['val'].shape)}")
    seed = _find_seed(gm, loss_node)

    # ------------------------------------------------------------------ arguments
    em = Emitter()
    arg_names = [_sanitize(k) for k in names] + state_names + in_names
    kinds = ["param"] * n_params + state_kinds + in_kinds
    orig_names = names + [f"{s}" for s in state_names] + in_names
    low = Lowering(gm, em, seed_node=seed)

    # number of classes for integer targets (from the nll_loss that consumes them)
    num_classes = {}
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target in (torch.ops.aten.nll_loss_forward.default,):
            num_classes[n.args[1]] = int(n.args[0].meta["val"].shape[-1])

    arg_lines, arg_meta = [], []
    for i, (ph, t, an, kind) in enumerate(zip(placeholders, flat, arg_names, kinds)):
        dt = _dtype_of(t)
        ssa = em.reserve(an)
        v = Val(ssa, tuple(t.shape), dt)
        low.env[ph] = v
        hint = _init_hint(t, "state" if kind in ("momentum", "adam_m", "adam_v") else kind, num_classes.get(ph))
        if kind == "param":
            comment = f"parameter {orig_names[i]}"
        elif kind == "momentum":
            comment = f"SGD momentum buffer of {names[i - n_params]}"
        elif kind in ("adam_m", "adam_v"):
            comment = ("Adam first moment of " if kind == "adam_m" else "Adam second moment of ") + \
                names[(i - n_params) % n_params]
        elif kind == "step":
            comment = "Adam step counter (steps taken so far)"
        else:
            comment = "model input" if kind == "input" else "target"
        sep = "," if i < len(flat) - 1 else ""
        arg_lines.append(f'    {ssa}: {v.type} {{amp.init = {hint}}}{sep}  // {i}: {comment}')
        np_arr = t.detach().cpu().numpy()
        np_arr = np_arr.astype(np.float32) if dt == F32 else np_arr.astype(np.int32)
        fname = f"arg{i}.npy"
        np.save(out_dir / fname, np_arr)
        arg_meta.append({"index": i, "name": orig_names[i], "ssa": ssa[1:], "kind": kind, "shape": list(t.shape),
                         "dtype": "float32" if dt == F32 else "int32", "torch_dtype": str(t.dtype).replace("torch.", ""),
                         "amp_init": hint, "file": fname})

    # ------------------------------------------------------------------ body
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        if node.op == "get_attr":
            t = getattr(gm, node.target)
            em.loc = f"get_attr[{node.name}]"
            low.env[node] = em.const(t.detach().cpu().numpy(), _dtype_of(t), hint=node.name)
            continue
        if node.op != "call_function":
            raise UnsupportedOpError(f"fx node {node.op} {node.target} is not supported by amp_mlir.torch")
        if node.target is operator.getitem and not node.users:
            continue
        if node.target is not operator.getitem:
            em.comment(f"{node.name} = {node.target}")
        low.run_node(node)

    em.loc = "return"
    results = []
    for o in outs:
        r = low.env[o] if isinstance(o, torch.fx.Node) else None
        if not isinstance(r, Val):
            raise UnsupportedOpError(f"result {o} did not lower to a tensor")
        results.append(r)
    # results must have the argument's type (amp.update_of)
    for i, r in enumerate(results[:-1]):
        want = Val("", tuple(flat[i].shape), _dtype_of(flat[i]))
        if r.shape != want.shape or r.dtype != want.dtype:
            raise AssertionError(f"result {i} has type {r.type}, argument has {want.type}")
    loss = results[-1]

    res_lines, res_meta = [], []
    for i, r in enumerate(results[:-1]):
        res_lines.append(f"    {r.type} {{amp.update_of = {i} : i64}},  // new {orig_names[i]}")
        res_meta.append({"index": i, "kind": kinds[i], "update_of": i, "name": orig_names[i]})
    res_lines.append(f"    {loss.type} {{amp.loss}}  // loss")
    res_meta.append({"index": len(results) - 1, "kind": "loss", "name": "loss"})

    ops = Counter(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
    header = [
        f"// {name}: generated by amp_mlir.torch.export_train_step (torch {torch.__version__}).",
        f"// Model: {type(model).__name__}; loss: {getattr(loss_fn, '__name__', type(loss_fn).__name__)}; "
        f"optimizer: {optimizer} (lr={lr}"
        + (f", momentum={momentum}" if optimizer == "sgd" else f", betas={tuple(betas)}, eps={eps}")
        + f", weight_decay={weight_decay}).",
        "// One flat graph: forward, loss, backward (seeded by the amp.grad_seed constant) and the update,",
        "// lowered op by op from make_fx's aten graph (each group is commented with its aten op and each",
        "// op's location names it). Arguments: parameters, optimizer state, batch; results: the new",
        "// parameters and state (amp.update_of = argument index) and the loss (amp.loss).",
        "// Initial values: arg<N>.npy next to this file (amp-train --inputs DIR).",
        "",
    ]
    body = [f"func.func @{name}("] + arg_lines + ["  ) -> ("] + res_lines + ["  ) {"]
    body += em.lines
    ret_names = ", ".join(r.name for r in results)
    ret_types = ", ".join(r.type for r in results)
    body.append(f"  return {ret_names} : {ret_types}")
    body.append("}")
    text = "\n".join(header + body) + "\n"
    mlir_path = out_dir / f"{name}.mlir"
    mlir_path.write_text(text)

    manifest = write_manifest(out_dir, name=name, mlir_path=mlir_path, model=model, loss_fn=loss_fn,
                              optimizer=dict(kind=optimizer, lr=lr, momentum=momentum, weight_decay=weight_decay,
                                             betas=list(betas), eps=eps),
                              arguments=arg_meta, results=res_meta, aten_ops=ops)
    _remove_stale_arguments(out_dir, len(arg_meta))
    return ExportedStep(mlir_path=mlir_path, out_dir=out_dir, name=name, text=text, manifest=manifest,
                        graph_module=gm, arg_names=arg_names, num_params=n_params, num_state=len(state))
