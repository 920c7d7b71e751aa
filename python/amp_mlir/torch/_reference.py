"""PyTorch reference runs to compare exported steps against."""

from __future__ import annotations

import contextlib
import copy

import torch
import torch.utils._pytree as pytree


def micro_batches(model_inputs, target, k):
    """``(model_inputs, target)`` split along dim 0 into ``k`` equal micro-batches (itself when k is 1): every
    tensor, also inside a container (a tuple of targets, a dict of model inputs). The capture
    (``export_train_step``'s ``accumulation_steps``) and :func:`torch_train_step` split the same way."""
    if k == 1:
        return [(model_inputs, target)]
    leaves, spec = pytree.tree_flatten((tuple(model_inputs), target))
    parts = [t.split(t.shape[0] // k) if isinstance(t, torch.Tensor) else [t] * k for t in leaves]
    return [pytree.tree_unflatten([p[j] for p in parts], spec) for j in range(k)]


def torch_train_step(forward, loss_fn, opt, inputs, target, *, device_type: str = "cpu", autocast=None,
                     scaler=None, max_grad_norm=None, grad_norm_type=2.0, accumulation_steps=1):
    """One PyTorch training step: gradients cleared, ``loss_fn(forward(*inputs), target)`` (under
    ``torch.autocast(device_type, autocast)`` when ``autocast`` is a dtype), backward (through the
    GradScaler ``scaler`` when given: scaled backward, unscaling step, scale update), the gradients
    clipped to ``max_grad_norm`` when given (``clip_grad_norm_``, after ``scaler.unscale_``), update.
    Returns the loss. The one step the reference runs, the model zoo and the CPU / GPU benchmarks time.
    With ``accumulation_steps`` k the batch is split along dim 0 into k micro-batches, each one's loss divided
    by k and backpropagated (scaled, with a scaler) in turn before the one update; the loss returned is the sum
    of those parts. ``opt`` may be a list of optimizers (each holding its own parameters: torch.optim.Muon's
    matrices and an AdamW's rest), stepped in turn."""
    opts = list(opt) if isinstance(opt, (list, tuple)) else [opt]

    def clip():
        if max_grad_norm is not None:
            params = [p for o in opts for group in o.param_groups for p in group["params"]]
            torch.nn.utils.clip_grad_norm_(params, max_grad_norm, grad_norm_type, foreach=False)

    context = (torch.autocast(device_type, dtype=autocast) if autocast is not None
               else contextlib.nullcontext())
    for o in opts:
        o.zero_grad()
    k = accumulation_steps
    loss = None
    for part_inputs, part_target in micro_batches(inputs, target, k):
        with context:
            part = loss_fn(forward(*part_inputs), part_target)
            part = part / k if k > 1 else part
        (scaler.scale(part) if scaler is not None else part).backward()
        loss = part if loss is None else loss + part.detach()
    if scaler is not None:
        if max_grad_norm is not None:
            for o in opts:
                scaler.unscale_(o)
        clip()
        for o in opts:
            scaler.step(o)
        scaler.update()
    else:
        clip()
        for o in opts:
            o.step()
    return loss


def torch_reference_losses(model: torch.nn.Module, loss_fn, example_inputs: tuple, *, steps: int,
                           optimizer: str = "sgd", lr: float | None = None, momentum: float = 0.0,
                           weight_decay: float = 0.0, betas=(0.9, 0.999), eps: float = 1e-8,
                           max_grad_norm: float | None = None, grad_norm_type: float = 2.0,
                           accumulation_steps: int = 1) -> list[float]:
    """Train a deep copy of ``model`` on the fixed batch ``example_inputs`` with torch.optim (the same
    options as :func:`export_train_step`; a ``loss_fn`` module's own trainable parameters train too; an
    ``optimizer`` instance is copied onto the copies with its param groups and state) and
    return the loss of every step, computed before that step's update (what ``amp-train`` prints as
    ``loss``)."""
    originals = [p for p in model.parameters() if p.requires_grad]
    every = list(model.parameters())  # an optimizer may hold frozen ones too
    model = copy.deepcopy(model).float()
    copies = dict(zip(map(id, every), model.parameters()))
    params = [p for p in model.parameters() if p.requires_grad]
    if isinstance(loss_fn, torch.nn.Module):  # its own trainable parameters train too (export_train_step's rule)
        own = {id(p) for p in originals}
        kept = [p.requires_grad and id(p) not in own for p in loss_fn.parameters()]
        originals += [p for p, k in zip(loss_fn.parameters(), kept) if k]
        loss_fn = copy.deepcopy(loss_fn).float()
        params += [p for p, k in zip(loss_fn.parameters(), kept) if k]
    if isinstance(optimizer, (list, tuple)):  # several optimizers (Muon's matrices, an AdamW's rest)
        opt = [_same_optimizer(o, {**copies, **dict(zip(map(id, originals), params))}) for o in optimizer]
    elif isinstance(optimizer, torch.optim.Optimizer):
        opt = _same_optimizer(optimizer, {**copies, **dict(zip(map(id, originals), params))})
    elif (optimizer := optimizer.lower()) == "sgd":
        opt = torch.optim.SGD(params, lr=0.01 if lr is None else lr, momentum=momentum, weight_decay=weight_decay)
    elif optimizer == "adam":
        opt = torch.optim.Adam(params, lr=1e-3 if lr is None else lr, betas=betas, eps=eps,
                               weight_decay=weight_decay, foreach=False)
    elif optimizer == "adamw":
        opt = torch.optim.AdamW(params, lr=1e-3 if lr is None else lr, betas=betas, eps=eps,
                                weight_decay=weight_decay, foreach=False)
    else:
        raise ValueError(optimizer)
    inputs = pytree.tree_map(lambda t: t.float() if isinstance(t, torch.Tensor) and t.is_floating_point() else t,
                             list(example_inputs))
    losses = []
    for _ in range(steps):
        loss = torch_train_step(model, loss_fn, opt, inputs[:-1], inputs[-1], max_grad_norm=max_grad_norm,
                                grad_norm_type=grad_norm_type, accumulation_steps=accumulation_steps)
        losses.append(float(loss.detach()))
    return losses


def _same_optimizer(optimizer, copies):
    """A torch.optim optimizer of ``optimizer``'s class over the ``copies`` of its parameters (``id`` of an
    original -> its copy), with its param groups' options and its state (a resumed run's moments)."""
    base = getattr(optimizer, "_base_optimizer", None)  # timm's Lookahead: around a copy of its base
    if base is not None:
        wrapped = type(optimizer)(_same_optimizer(base, copies))
        wrapped.load_state_dict(copy.deepcopy(optimizer.state_dict()))
        return wrapped
    groups = [{**{k: v for k, v in g.items() if k != "params"}, "params": [copies[id(p)] for p in g["params"]]}
              for g in optimizer.param_groups]
    same = type(optimizer)(groups)
    same.defaults.update(optimizer.defaults)  # what a step reads from them (timm's Lamb: max_grad_norm)
    same.load_state_dict(copy.deepcopy(optimizer.state_dict()))
    return same
