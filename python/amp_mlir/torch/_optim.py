"""The optimizer update of a captured training step, written out as torch.optim computes it.

An optimizer is given either by name (``"sgd"``, ``"adam"``, ``"adamw"``) with one set of options for every
parameter, or as the ``torch.optim.SGD`` / ``Adam`` / ``AdamW`` instance the training script already builds.
An instance's param groups give each parameter its own options (transformers' and timm's usual groups: no
weight decay on biases and norm weights; a lower learning rate for a pretrained backbone), and its state,
when it has stepped already (a resumed run), the initial momentum buffers, moments and step count.

The algorithm: :func:`plan` maps every trained parameter to its group (``None`` where no group holds it:
PyTorch computes its gradient, but no optimizer updates it, so the step keeps it) and lays out the state
slots in argument order: SGD's momentum buffers (groups with momentum), or Adam's first moments, second
moments, the largest second moments (``amsgrad`` groups) and one step counter. :func:`update` then computes
the single-tensor (``foreach=False``) update of torch.optim for each parameter with its group's options:

- SGD: ``g = -g`` (maximize); ``g += wd * p``; ``buf = momentum * buf + g``; ``g = g + momentum * buf``
  (Nesterov) or ``g = buf``; ``p -= lr * g``. A fresh buffer is zeros, so the first step's ``buf = g`` is
  PyTorch's ``clone(grad)``; dampening, which PyTorch skips at the first step only, is refused.
- Adam / AdamW: ``g = -g`` (maximize); L2 decay ``g += wd * p`` (Adam) or decoupled ``p *= 1 - lr * wd``
  (AdamW); ``m = lerp(m, g, 1 - b1)``; ``v = b2 v + (1 - b2) g^2``; with amsgrad ``vmax = max(vmax, v)`` is
  the ``v`` the denominator reads; ``p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)``.

PyTorch keeps a step count per parameter; the step keeps one for all. A resumed optimizer whose parameters
are at different counts (one added to a group later) is refused by name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

OPTIMIZERS = ("sgd", "adam", "adamw")

# What each state slot holds, in manifest kinds and the names the step's header gives them.
_SLOT_NAMES = {"momentum": "momentum of", "adam_m": "first moment of", "adam_v": "second moment of",
               "adam_vmax": "largest second moment of"}


@dataclass(frozen=True)
class Group:
    """One param group's options (torch.optim's names; the ones an optimizer does not have keep these defaults)."""
    lr: float
    momentum: float = 0.0
    nesterov: bool = False
    weight_decay: float = 0.0
    maximize: bool = False
    betas: tuple = (0.9, 0.999)
    eps: float = 1e-8
    amsgrad: bool = False

    def describe(self, kind):
        shown = ["lr", "weight_decay", "maximize"] + (["momentum", "nesterov"] if kind == "sgd" else
                                                        ["betas", "eps", "amsgrad"])
        defaults = Group(lr=0.0)
        return ", ".join(f"{k}={getattr(self, k)}" for k in shown
                         if k in ("lr", "weight_decay", "momentum", "betas", "eps") or
                         getattr(self, k) != getattr(defaults, k))


@dataclass
class Plan:
    """The update of every trained parameter: its group, and the state slots in argument order."""
    kind: str  # "sgd", "adam" or "adamw"
    groups: list  # [Group]
    group_of: list  # per trained parameter: its group's index, or None (no group holds it: kept)
    slots: list = field(default_factory=list)  # [(kind, parameter index or None for Adam's step counter)]
    initial: list = field(default_factory=list)  # the slots' initial values

    def state_names(self, names):
        return [f"{_SLOT_NAMES[k]} {names[i]}" if i is not None else "step counter" for k, i in self.slots]

    def state_kinds(self):
        return [k for k, _ in self.slots]

    def describe(self):
        if len(self.groups) == 1:
            return f"{self.kind} ({self.groups[0].describe(self.kind)}"
        return f"{self.kind} ({len(self.groups)} param groups: " + "; ".join(
            f"[{sum(1 for g in self.group_of if g == n)} tensors] {group.describe(self.kind)}"
            for n, group in enumerate(self.groups))

    def manifest(self, names):
        first = self.groups[0]
        return dict(kind=self.kind, lr=first.lr, momentum=first.momentum, weight_decay=first.weight_decay,
                    betas=list(first.betas), eps=first.eps,
                    groups=[dict(lr=g.lr, momentum=g.momentum, nesterov=g.nesterov, weight_decay=g.weight_decay,
                                 maximize=g.maximize, betas=list(g.betas), eps=g.eps, amsgrad=g.amsgrad,
                                 params=[k for k, n in zip(names, self.group_of) if n == i])
                            for i, g in enumerate(self.groups)],
                    kept=[k for k, n in zip(names, self.group_of) if n is None])


def plan(optimizer, params, *, lr=None, momentum=0.0, weight_decay=0.0, betas=(0.9, 0.999), eps=1e-8) -> Plan:
    """The plan for ``params`` (the trained parameters, in argument order) under ``optimizer``: a name with
    the options given here, or a torch.optim instance (then these options must be left as they are)."""
    if isinstance(optimizer, str):
        kind = optimizer.lower()
        if kind not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS} or a torch.optim.SGD / Adam / AdamW, "
                             f"got {optimizer!r}")
        if kind != "sgd" and momentum != 0:
            raise ValueError("momentum is an SGD option")
        if lr is None:
            lr = 1e-3 if kind in ("adam", "adamw") else 0.01
        group = Group(lr=float(lr), momentum=float(momentum), weight_decay=float(weight_decay),
                      betas=tuple(float(b) for b in betas), eps=float(eps))
        result = Plan(kind, [group], [0] * len(params))
        _lay_out(result, params, {})
        return result
    if not isinstance(optimizer, torch.optim.Optimizer):
        raise ValueError(f"optimizer must be one of {OPTIMIZERS} or a torch.optim.SGD / Adam / AdamW, "
                         f"got {type(optimizer).__name__}")
    given = dict(lr=lr, momentum=momentum, weight_decay=weight_decay, betas=tuple(betas), eps=eps)
    defaults = dict(lr=None, momentum=0.0, weight_decay=0.0, betas=(0.9, 0.999), eps=1e-8)
    changed = [k for k in given if given[k] != defaults[k]]
    if changed:
        raise ValueError(f"{', '.join(changed)} given with a torch.optim optimizer: its param groups hold the "
                         "options (set them there)")
    if isinstance(optimizer, torch.optim.Adam):  # AdamW is an Adam with decoupled weight decay
        decoupled = [bool(g.get("decoupled_weight_decay", isinstance(optimizer, torch.optim.AdamW)))
                     for g in optimizer.param_groups]
        if len(set(decoupled)) > 1:
            raise ValueError("param groups with and without decoupled weight decay in one Adam")
        kind = "adamw" if decoupled[0] else "adam"
    elif isinstance(optimizer, torch.optim.SGD):
        kind = "sgd"
    else:
        raise ValueError(f"amp_mlir.torch writes the updates of torch.optim.SGD, Adam and AdamW; "
                         f"got {type(optimizer).__name__}")
    index = {id(p): i for i, p in enumerate(params)}
    groups, group_of = [], [None] * len(params)
    for n, g in enumerate(optimizer.param_groups):
        where = f"param group {n} of the {type(optimizer).__name__}"
        if kind == "sgd" and float(g.get("dampening", 0)) != 0:
            raise ValueError(f"{where}: SGD's dampening is not supported (PyTorch skips it at the first step "
                             "only); use dampening=0")
        groups.append(Group(lr=float(g["lr"]), momentum=float(g.get("momentum", 0.0)),
                            nesterov=bool(g.get("nesterov", False)), weight_decay=float(g.get("weight_decay", 0.0)),
                            maximize=bool(g.get("maximize", False)),
                            betas=tuple(float(b) for b in g.get("betas", (0.9, 0.999))),
                            eps=float(g.get("eps", 1e-8)), amsgrad=bool(g.get("amsgrad", False))))
        for p in g["params"]:
            if id(p) in index:
                group_of[index[id(p)]] = n
            elif p.requires_grad:
                raise ValueError(f"{where} holds a parameter of shape {list(p.shape)} that is neither the "
                                 "model's nor the loss module's: the step trains those only")
    if all(n is None for n in group_of) and params:
        raise ValueError(f"the {type(optimizer).__name__} holds none of the model's trainable parameters")
    result = Plan(kind, groups, group_of)
    _lay_out(result, params, {i: optimizer.state.get(p, {}) for i, p in enumerate(params)})
    return result


def _lay_out(result, params, state):
    """The state slots of ``result`` and their initial values (``state``: torch.optim's state per parameter
    index, empty for a fresh optimizer)."""
    def start(i, key):
        value = state.get(i, {}).get(key)
        if value is None:
            return torch.zeros_like(params[i], dtype=torch.float32)
        if tuple(value.shape) != tuple(params[i].shape):
            raise ValueError(f"the optimizer's {key} of parameter {i} has shape {list(value.shape)}, the parameter "
                             f"{list(params[i].shape)}")
        return value.detach().clone().float()

    held = [i for i, n in enumerate(result.group_of) if n is not None]
    if result.kind == "sgd":
        slots = [("momentum", i) for i in held if result.groups[result.group_of[i]].momentum != 0]
        result.slots = slots
        result.initial = [start(i, "momentum_buffer") for _, i in slots]
        return
    slots = [("adam_m", i) for i in held] + [("adam_v", i) for i in held] + \
        [("adam_vmax", i) for i in held if result.groups[result.group_of[i]].amsgrad]
    keys = {"adam_m": "exp_avg", "adam_v": "exp_avg_sq", "adam_vmax": "max_exp_avg_sq"}
    steps = {float(state[i]["step"]) if "step" in state.get(i, {}) else 0.0 for i in held}
    if len(steps) > 1:
        raise ValueError(f"the optimizer's parameters are at different step counts ({sorted(steps)}): the step "
                         "keeps one count for all")
    result.slots = slots + [("step", None)]
    result.initial = [start(i, keys[k]) for k, i in slots] + \
        [torch.tensor(steps.pop() if steps else 0.0, dtype=torch.float32)]


def update(p: Plan, params, grads, state, lrs, has_grad):
    """The new parameters and state slots: torch.optim's update of each parameter with its group's options
    (``lrs``: each group's learning rate, a float or a 0-d tensor). A parameter without a gradient (or no
    group) keeps its value and its state, as torch.optim skips it."""
    new_params = list(params)
    new_state = list(state)
    slot = {s: n for n, s in enumerate(p.slots)}
    corrections = {}
    if p.kind != "sgd":
        t = state[slot[("step", None)]] + 1
        new_state[slot[("step", None)]] = t
    for i, (param, g) in enumerate(zip(params, grads)):
        n = p.group_of[i]
        if n is None or not has_grad[i]:
            continue
        group, lr = p.groups[n], lrs[n]
        if group.maximize:
            g = -g
        if p.kind == "sgd":
            if group.weight_decay != 0:
                g = g + group.weight_decay * param
            if group.momentum != 0:
                buf = state[slot[("momentum", i)]] * group.momentum + g
                new_state[slot[("momentum", i)]] = buf
                g = g + group.momentum * buf if group.nesterov else buf
            new_params[i] = param - lr * g
            continue
        b1, b2 = group.betas
        if group.weight_decay != 0:
            if p.kind == "adamw":
                param = param * (1 - lr * group.weight_decay)  # param.mul_(1 - lr * weight_decay)
            else:
                g = g + group.weight_decay * param
        m = state[slot[("adam_m", i)]]
        v = state[slot[("adam_v", i)]]
        m2 = m + (g - m) * (1 - b1)
        v2 = v * b2 + (g * g) * (1 - b2)
        new_state[slot[("adam_m", i)]] = m2
        new_state[slot[("adam_v", i)]] = v2
        if group.amsgrad:
            v2 = torch.maximum(state[slot[("adam_vmax", i)]], v2)
            new_state[slot[("adam_vmax", i)]] = v2
        if n not in corrections:  # once per group: lr / (1 - b1^t) and sqrt(1 - b2^t)
            corrections[n] = (lr / (1 - torch.pow(b1, t)), torch.sqrt(1 - torch.pow(b2, t)))
        step_size, bc2_sqrt = corrections[n]
        denom = torch.sqrt(v2) / bc2_sqrt + group.eps
        new_params[i] = param - step_size * (m2 / denom)
    return new_params, new_state
