"""Weight averages inside the training step: an EMA or SWA of the weights, updated after the optimizer.

A training loop that keeps an averaged copy of its model (``torch.optim.swa_utils.AveragedModel``,
timm's ``ModelEmaV2`` / ``ModelEmaV3``) updates it after ``optimizer.step()``::

    loss.backward(); optimizer.step(); ema.update_parameters(model)   # or ema.update(model)

``export_train_step(..., ema=ema)`` makes that update part of the step: the averaged tensors are state
of the step (arguments updated by results, manifest kind ``ema``, named ``ema <state_dict key>``), computed
from the new parameters and buffers as the object's own update computes them:

* ``AveragedModel``: the averaged tensors are the averaged module's parameters (and its buffers with
  ``use_buffers=True``), paired with the model's in order; the first update (``n_averaged == 0``) copies,
  later ones call the object's ``multi_avg_fn`` / ``avg_fn`` (any function of tensors: it runs on the
  captured tensors), by default SWA's running mean (``get_swa_avg_fn`` on the CPU, as PyTorch picks it for
  a CPU model); ``n_averaged`` is state too and counts every step. Without ``use_buffers`` the averaged
  module's buffers are the model's (PyTorch copies them at every update): no state of their own.
* ``ModelEmaV2``: ``decay * e + (1 - decay) * m`` over every ``state_dict`` entry (buffers included, an
  integer one truncated as ``copy_`` does).
* ``ModelEmaV3``: ``lerp(e, m, 1 - decay)`` over the floating ``state_dict`` entries (the parameters
  only with ``exclude_buffers``), the others copied. ``ema_step=N`` makes the update the one of
  ``ema.update(model, step=N)``, ``N + 1`` at the next step and so on (timm's train.py passes its update
  count): ``update_after_step`` and the warm-up (``use_warmup``, ``warmup_gamma``, ``warmup_power``,
  ``min_decay``) computed from that count in float64 as timm's Python does; without it the decay is
  ``decay`` (``ema.update(model)``).

A ``state_dict`` entry that shares its tensor with another (tied weights: GPT-2's embedding and head)
is updated once per entry, in order, as timm's loop does. A subclass that overrides one of the methods the
update goes through is refused (the step would write the base class's formula), as is an average of another
model (other tensor count or shapes).

Under dynamic loss scaling the results carry ``amp.after_step`` (docs/TrainingStep.md): on a skipped
step the parameters keep their values and the average is computed again from them, as PyTorch's loop
updates the EMA after GradScaler skipped the optimizer.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field

import torch

KIND = "ema"


def _classes(obj):
    return {f"{c.__module__}.{c.__qualname__}" for c in type(obj).__mro__}


# The methods whose computation the step writes, per class: a subclass that overrides one (its own decay
# schedule, a clamp after the update) would be exported with the base class's formula, silently.
_METHODS = {"averaged": ("torch.optim.swa_utils.AveragedModel", ("update_parameters",)),
            "timm_v3": ("timm.utils.model_ema.ModelEmaV3", ("update", "get_decay", "apply_update_",
                                                           "apply_update_no_buffers_", "_lerp_", "_foreach_lerp_")),
            "timm_v2": ("timm.utils.model_ema.ModelEmaV2", ("update", "_update"))}


def _flavour(ema):
    names = _classes(ema)
    for flavour, (base, methods) in _METHODS.items():
        if base not in names:
            continue
        cls = next(c for c in type(ema).__mro__ if f"{c.__module__}.{c.__qualname__}" == base)
        own = [m for m in methods if getattr(type(ema), m, None) is not getattr(cls, m, None)]
        if own:
            raise ValueError(f"{type(ema).__name__} overrides {base.rsplit('.', 1)[1]}'s {own[0]}(): the step writes "
                             f"{base.rsplit('.', 1)[1]}'s own update only")
        return flavour
    raise ValueError(f"ema must be a torch.optim.swa_utils.AveragedModel or a timm ModelEmaV2 / ModelEmaV3, "
                     f"got {type(ema).__name__}")


@dataclass
class EmaPlan:
    """The averaged tensors of an EMA object and how the step updates them (see the module comment)."""
    flavour: str
    ema: object
    # One state tensor per averaged tensor (shared entries once): its name and initial value.
    names: list = field(default_factory=list)
    initial: list = field(default_factory=list)
    # The update, in order: (slot, model key) per entry; several entries may name one slot.
    entries: list = field(default_factory=list)
    # Slots that are copied from the model rather than averaged (timm V3's integer buffers).
    copied: set = field(default_factory=set)
    counter: int | None = None  # AveragedModel's n_averaged / V3's step: the slot of that count
    # AveragedModel's default average: the multi-tensor SWA function on devices with foreach kernels
    # (CUDA), the one-tensor one elsewhere (the CPU), as its update_parameters picks them.
    foreach_device: bool = False
    constants: dict = field(default_factory=dict)  # model key -> the value of a tensor the step does not update

    def describe(self):
        kind = {"averaged": "AveragedModel", "timm_v2": "timm ModelEmaV2", "timm_v3": "timm ModelEmaV3"}[self.flavour]
        return f"{kind} over {len(self.entries)} tensors"

    def manifest(self):
        """The manifest's ``ema`` entry: the class, its options, which model tensor each averaged one follows."""
        ema = self.ema
        options = {"averaged": lambda: {"use_buffers": bool(ema.use_buffers),
                                        "avg_fn": getattr(ema.avg_fn, "__qualname__", None),
                                        "multi_avg_fn": getattr(ema.multi_avg_fn, "__qualname__", None)},
                   "timm_v2": lambda: {"decay": ema.decay},
                   "timm_v3": lambda: {k: getattr(ema, k) for k in (
                       "decay", "min_decay", "update_after_step", "use_warmup", "warmup_gamma", "warmup_power",
                       "exclude_buffers")}}[self.flavour]()
        follows = {}
        for slot, key in self.entries:
            follows.setdefault(self.names[slot], []).append(key)
        return {"class": type(ema).__name__, **options, "step_counter": self.names[self.counter]
                if self.counter is not None else None, "follows": follows}

    # -------------------------------------------------------------- the update, traced inside the step
    def update(self, states, source):
        """The new state tensors, from the current ones and ``source(key)``: the model's tensor ``key``
        after the step's update."""
        states = list(states)
        with torch.no_grad():
            if self.flavour == "averaged":
                return self._averaged(states, source)
            if self.flavour == "timm_v2":
                decay = self.ema.decay
                for slot, key in self.entries:
                    e = states[slot]
                    states[slot] = (decay * e + (1. - decay) * source(key)).to(e.dtype)
                return states
            return self._timm_v3(states, source)

    def _averaged(self, states, source):
        ema = self.ema
        n = states[self.counter]
        models = [source(key) for _, key in self.entries]
        averaged = [states[slot].clone() for slot, _ in self.entries]
        # torch groups the tensors by device and dtype before its multi-tensor functions
        groups = {}
        for i, t in enumerate(averaged):
            groups.setdefault(t.dtype, []).append(i)
        if ema.multi_avg_fn is not None or ema.avg_fn is None:
            for idx in groups.values():
                selves, currents = [averaged[i] for i in idx], [models[i] for i in idx]
                if ema.multi_avg_fn is not None:
                    ema.multi_avg_fn(selves, currents, n)
                elif self.foreach_device:
                    torch.optim.swa_utils.get_swa_multi_avg_fn()(selves, currents, n)
                else:
                    avg_fn = torch.optim.swa_utils.get_swa_avg_fn()
                    for j, i in enumerate(idx):
                        averaged[i] = avg_fn(selves[j], currents[j], n).to(selves[j].dtype)
        else:
            averaged = [ema.avg_fn(a, m, n).to(a.dtype) for a, m in zip(averaged, models)]
        first = n == 0  # the first update copies the model
        for (slot, _), a, m in zip(self.entries, averaged, models):
            states[slot] = torch.where(first, m.to(a.dtype), a)
        states[self.counter] = n + 1
        return states

    def _timm_v3(self, states, source):
        ema = self.ema
        if self.counter is None:
            weight = 1. - ema.decay
        else:
            # timm's get_decay(step), in float64 as its Python computes it
            count = states[self.counter]
            step = torch.clamp(count - ema.update_after_step - 1, min=0).to(torch.float64)
            if ema.use_warmup:
                decay = 1 - (1 + step / ema.warmup_gamma) ** -ema.warmup_power
                decay = torch.clamp(torch.clamp(decay, max=ema.decay), min=ema.min_decay)
            else:
                decay = torch.full_like(step, ema.decay)
            decay = torch.where(step <= 0, torch.zeros_like(decay), decay)
            weight = (1. - decay).to(torch.float32)  # lerp_'s Python float weight, as its float32 kernel reads it
        for slot, key in self.entries:
            m = source(key)
            if slot in self.copied:
                states[slot] = m.to(states[slot].dtype)
            else:
                states[slot] = torch.lerp(states[slot], m, weight)
        if self.counter is not None:
            states[self.counter] = states[self.counter] + 1
        return states


def plan(ema, model, *, step=None):
    """The :class:`EmaPlan` of ``ema`` (an averaged copy of ``model``); ``step``: timm ModelEmaV3's
    ``update(model, step=...)`` of the next update (None: ``update(model)``). ValueError for what the
    step cannot reproduce."""
    flavour = _flavour(ema)
    if step is not None and flavour != "timm_v3":
        raise ValueError("ema_step is the step argument of timm's ModelEmaV3.update; "
                         f"a {type(ema).__name__} takes none")
    module = ema.module
    result = EmaPlan(flavour, ema)
    slots = {}  # id of an averaged tensor -> its slot
    # A model tensor under several keys (tied weights: a state_dict lists both) by the first key naming it, the
    # one the step's parameters and buffers go by.
    first_key = {}
    for key, t in list(model.named_parameters(remove_duplicate=False)) + \
            list(model.named_buffers(remove_duplicate=False)):
        first_key.setdefault(id(t), key)
    tensors = model_tensors(model)

    def canonical(key):
        return first_key.get(id(tensors.get(key)), key)

    def check_pair(key, t, model_key):  # an average of this model: the same shapes, key by key
        theirs = tensors.get(model_key)
        if theirs is None or tuple(theirs.shape) != tuple(t.shape):
            raise ValueError(f"the averaged model's {key} has shape {list(t.shape)}, the model's {model_key} "
                             f"{None if theirs is None else list(theirs.shape)}: ema must be an average of this model")

    def slot_of(key, t):
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"the averaged model's {key} is not a tensor")
        if t.is_complex() or (t.is_floating_point() and t.dtype != torch.float32):
            raise ValueError(f"the averaged model's {key} is {t.dtype}: the step keeps a float32 average (an EMA "
                             f"kept in another precision, timm's dtype=, is not supported)")
        if id(t) not in slots:
            slots[id(t)] = len(result.initial)
            result.names.append(f"{KIND} {key}")
            result.initial.append(t.detach().clone())
        return slots[id(t)]

    if flavour == "averaged":
        from torch.utils._foreach_utils import _get_foreach_kernels_supported_devices
        device = next(iter(module.parameters()), torch.empty(0)).device
        result.foreach_device = device.type in _get_foreach_kernels_supported_devices()
        if ema.use_buffers:
            pairs = list(zip([k for k, _ in module.named_parameters()] + [k for k, _ in module.named_buffers()],
                             list(module.parameters()) + list(module.buffers())))
            model_keys = [k for k, _ in model.named_parameters()] + [k for k, _ in model.named_buffers()]
        else:
            pairs = list(module.named_parameters())
            model_keys = [k for k, _ in model.named_parameters()]
        if len(pairs) != len(model_keys):
            raise ValueError(f"the averaged model has {len(pairs)} tensors to average, the model "
                             f"{len(model_keys)}: ema must be an AveragedModel of this model")
        for (key, t), model_key in zip(pairs, model_keys):
            check_pair(key, t, model_key)
            result.entries.append((slot_of(key, t), canonical(model_key)))
        result.counter = len(result.initial)
        result.names.append(f"{KIND} n_averaged")
        result.initial.append(ema.n_averaged.detach().clone().to(torch.int64).reshape(()))
    else:
        if flavour == "timm_v3":
            if getattr(ema, "stochastic_rounding", False) and any(
                    t.dtype == torch.bfloat16 for t in module.state_dict().values()):
                raise ValueError("timm ModelEmaV3 with bfloat16 weights rounds stochastically: not supported")
            if getattr(ema, "exclude_buffers", False):
                items = list(module.named_parameters())
                model_keys = [k for k, _ in model.named_parameters()]
            else:
                items = list(module.state_dict(keep_vars=True).items())
                model_keys = list(model.state_dict(keep_vars=True).keys())
        else:
            items = list(module.state_dict(keep_vars=True).items())
            model_keys = list(model.state_dict(keep_vars=True).keys())
        if len(items) != len(model_keys):
            raise ValueError(f"the averaged model has {len(items)} tensors, the model {len(model_keys)}: ema must "
                             "be an EMA of this model")
        for (key, t), model_key in zip(items, model_keys):
            check_pair(key, t, model_key)
            s = slot_of(key, t)
            result.entries.append((s, canonical(model_key)))
            if flavour == "timm_v3" and not t.is_floating_point():
                result.copied.add(s)
        if step is not None:
            try:  # an int, or a numpy / torch integer (a loop's counter)
                count = operator.index(step.item() if isinstance(step, torch.Tensor) and step.numel() == 1 else step)
            except TypeError:
                count = None
            if count is None or isinstance(step, bool) or count < 0:
                raise ValueError(f"ema_step must be a non-negative integer (the step the next update passes), "
                                 f"got {step!r}")
            step = count
            result.counter = len(result.initial)
            result.names.append(f"{KIND} step")
            result.initial.append(torch.tensor(step, dtype=torch.int64))
    return result


def model_tensors(model):
    """Every tensor of ``model`` by the key its EMA pairs it with (parameters, buffers, state_dict keys)."""
    found = dict(model.state_dict(keep_vars=True))
    found.update(dict(model.named_parameters()))
    found.update(dict(model.named_buffers()))
    return found


def reference_update(ema, model, step=None):
    """The update a PyTorch loop makes after its optimizer step (for tests and references)."""
    if _flavour(ema) == "averaged":
        ema.update_parameters(model)
    elif step is not None:
        ema.update(model, step=step)
    else:
        ema.update(model)


__all__ = ["EmaPlan", "KIND", "plan", "reference_update", "model_tensors"]
