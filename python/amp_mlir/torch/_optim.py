"""The optimizer update of a captured training step, written out as torch.optim computes it.

An optimizer is given either by name (``"sgd"``, ``"adam"``, ``"adamw"``) with one set of options for every
parameter, or as the torch.optim instance the training script already builds: ``SGD``, ``Adam``, ``AdamW``,
``RMSprop``, ``Adagrad``, ``Adamax``, ``NAdam``, ``RAdam``, ``Adadelta``, ``Rprop``, ``ASGD``, ``Adafactor`` or
``Muon``; or timm's own: ``Lion``, ``Lamb``, ``Lars``,
``RMSpropTF``, ``NAdamW``, ``SGDW``, ``AdamWLegacy``, ``Adafactor``, ``Adan``, ``Adopt``, ``AdaBelief``, ``AdamP``,
``SGDP``, ``MADGRAD``, ``NvNovoGrad``, ``NAdamLegacy``, ``RAdamLegacy``, ``LaProp``, ``Mars``,
``AdafactorBigVision`` or ``Muon`` (what
``timm.optim.create_optimizer_v2``
builds for those names and their cautious variants); or transformers' ``Adafactor``. An instance's param groups give each parameter
its own options (transformers' and timm's usual groups: no weight decay on biases and norm weights; a lower
learning rate for a pretrained backbone), and its state, when it has stepped already (a resumed run), the
initial buffers, moments and step count.

A list of instances (``[Muon(matrices), AdamW(the rest)]``) holds disjoint parameters: their groups are
concatenated, each group keeping its optimizer's rule (``Group.kind``) and position (``Group.owner``).

The algorithm: :func:`plan` maps every trained parameter to its group (``None`` where no group holds it:
PyTorch computes its gradient, but no optimizer updates it, so the step keeps it) and lays out the state
slots in argument order: each per-parameter kind of state for every parameter in turn (Adam's first moments,
then its second moments, ...), then per-group scalars (NAdam's momentum product), then one step counter.
:func:`update` computes torch.optim's single-tensor (``foreach=False``) update of each parameter with its
group's options, after ``g = -g`` (maximize) and, except for decoupled decay, ``g += wd * p``:

- SGD: ``buf = momentum * buf + g``; ``g = g + momentum * buf`` (Nesterov) or ``g = buf``; ``p -= lr * g``.
  A fresh buffer is zeros, so the first step's ``buf = g`` is PyTorch's ``clone(grad)``; dampening, which
  PyTorch skips at the first step only, is refused.
- Adam / AdamW: ``m = lerp(m, g, 1 - b1)``; ``v = b2 v + (1 - b2) g^2``; with amsgrad ``vmax = max(vmax, v)``
  is the ``v`` the denominator reads; ``p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)``
  (AdamW: ``p *= 1 - lr * wd`` first).
- RMSprop: ``s = alpha s + (1 - alpha) g^2``; centered: ``a = lerp(a, g, 1 - alpha)``, ``s - a^2`` under the
  root; ``d = sqrt(.) + eps``; momentum: ``buf = momentum buf + g / d``, ``p -= lr buf``; else
  ``p -= lr g / d``.
- Adagrad: ``sum += g^2``; ``p -= lr / (1 + (t - 1) lr_decay) * g / (sqrt(sum) + eps)``.
- Adamax: ``m = lerp(m, g, 1 - b1)``; ``u = max(b2 u, |g| + eps)``; ``p -= lr / (1 - b1^t) * m / u``.
- NAdam: ``mu_t = b1 (1 - 0.96^(t psi) / 2)``; ``prod *= mu_t``; Adam's moments; ``d = sqrt(v / (1 - b2^t))
  + eps``; ``p -= lr (1 - mu_t) / (1 - prod) g / d + lr mu_{t+1} / (1 - prod mu_{t+1}) m / d``.
- RAdam: Adam's moments; ``rho_t = rho_inf - 2 t b2^t / (1 - b2^t)``; where ``rho_t > 5`` the bias-corrected
  ``m`` times the rectified adaptive rate, else the bias-corrected ``m`` alone (a select on the step count,
  not a branch).

- Adadelta: ``s = rho s + (1 - rho) g^2``; ``d = sqrt(acc + eps) / sqrt(s + eps) g``; ``acc = rho acc + (1 -
  rho) d^2``; ``p -= lr d``.
- Rprop: per element, the step size times ``etaplus`` where ``g * prev > 0``, ``etaminus`` where ``< 0`` (and
  no step there: ``g = 0``), clamped to ``step_sizes``; ``p -= sign(g) size``; ``prev = g``. Sizes start at lr.
- ASGD: ``p = p (1 - lambd eta) - eta g``; ``ax = p`` while ``mu`` is 1, else ``ax += (p - ax) mu``; then
  ``eta = lr / (1 + lambd lr t)^alpha`` and ``mu = 1 / max(1, t - t0)``, float32 numbers per parameter as
  torch.optim keeps them (used at the next step).
- Muon: ``buf = lerp(buf, g, 1 - momentum)``; the direction ``lerp(g, buf, momentum)`` (Nesterov) or ``buf``,
  orthogonalized by ``ns_steps`` Newton-Schulz steps in bfloat16 (``_newton_schulz``); ``p *= 1 - lr wd``;
  ``p -= lr sqrt(max(1, rows / cols)) direction`` (or the ``adjust_lr_fn`` scaling).
- Adafactor (torch.optim's): ``alpha = max(eps2, rms(p)) min(lr, 1 / sqrt(t))``; ``p *= 1 - lr wd``; for a
  weight, row and column variances (``||g||^2 / n`` over the last dim, over the one before, keepdim shapes)
  averaged with weight ``t^beta2_decay``, ``v = row col / max(mean(row), eps1)``; else ``v`` averages ``g^2``;
  ``u = g / sqrt(max(v, eps1^2))``; ``p -= alpha / max(1, rms(u) / d) u``.

timm's (single-tensor paths, as on the CPU; ``caution`` zeroes the update where its sign disagrees with the
gradient's and divides the rest by the fraction kept, at least 1e-3; ``corrected_weight_decay`` scales
decoupled decay by ``lr^2 / max_lr``, the constructor's lr):

- Lion: ``p *= 1 - lr wd``; ``p -= lr sign(lerp(m, g, 1 - b1))``; ``m = lerp(m, g, 1 - b2)``.
- Lamb: every gradient divided by ``max(1, ||all gradients|| / max_grad_norm)`` (the optimizer's default);
  Adam's bias-corrected ``m / (sqrt(v) + eps)`` (``m = b1 m + g`` without grad averaging), plus ``wd p``
  (or ``p *= 1 - lr wd``, decoupled); with weight decay (or ``always_adapt``) times the trust ratio
  ``||p|| / ||update||`` (1 where either is 0; at most 1 with ``trust_clip``); ``p -= lr update``. Its step
  count is per param group.
- Lars: with weight decay (or ``always_adapt``) ``g = (g + wd p) * trust_coeff ||p|| / (||g|| + wd ||p|| +
  eps)`` (1 where a norm is 0; LARC: ``min(ratio / lr, 1)``); then SGD's momentum (Nesterov).
- RMSpropTF: ``s += (g^2 - s)(1 - alpha)`` from ones; ``d = sqrt(s + eps)`` (centered: ``sqrt(s - a^2 +
  eps)``); ``buf = momentum buf + lr g / d``, ``p -= buf`` (or ``lr`` outside the buffer).
- NAdamW: AdamW with the numerator ``lerp(m, g, 1 - b1)``; NAdamW and AdamWLegacy: ``clipping_threshold``
  multiplies the denominator by ``max(1, rms(g / denom) / threshold)``.
- SGDW: SGD with decoupled decay (caution on the momentum direction).
- Adan: ``d = g - g_prev`` (0 at the first step); ``m`` averages ``g``, the difference average ``d``, ``n``
  averages ``(g + b2 d)^2``; ``p -= lr / bc1 m / denom + lr b2 / bc2 diff / denom`` with ``denom = sqrt(n) /
  sqrt(bc3) + eps``; weight decay a division by ``1 + lr wd`` after (or ``no_prox``: a multiplication before).
  Its step count is per param group.
- Adopt: the first step sets ``v = g^2`` only; then ``m = lerp(m, clamp(g / max(sqrt(v), eps), +-(t - 1)^
  clip_exp), 1 - b1)``, ``p -= lr m``, ``v = b2 v + (1 - b2) g^2`` (a select on the step count).
- AdaBelief: ``m`` averages ``g``, ``v = b2 v + (1 - b2) (g - m)^2 + eps``; rectified as RAdam (before ``rho_t``
  reaches 5, SGD with momentum ``p -= lr / bc1 m``, or no step), else ``p -= lr / bc1 m / (sqrt(v) /
  sqrt(bc2) + eps)``.
- AdamP / SGDP: Adam's moments (or SGD's momentum, with dampening) make the update; for a weight of two or
  more dims, where the gradient is nearly orthogonal to it (``max |cos| < delta / sqrt(n)`` per output channel,
  else over the whole weight) the update's radial part is removed and the decay scaled by ``wd_ratio`` (timm's
  branches as selects, ``_projection``).
- MADGRAD: ``lamb = (lr + eps) sqrt(t)``; ``sum_sq += lamb g^2``, ``s += lamb g``; ``z = x0 - s / (sum_sq^(1/3) +
  eps)`` from the starting point ``x0`` (without momentum, ``x0`` is recomputed from the current parameter);
  ``p = momentum p + (1 - momentum) z``.
- NvNovoGrad: ``v`` one number per tensor, ``||g||^2`` at first, then ``b2 v + (1 - b2) ||g||^2``; ``m = b1 m +
  g / (sqrt(v) + eps)`` (plus ``wd p``; times ``1 - b1`` with grad averaging); ``p -= lr m``.
- NAdamLegacy: ``c_t = b1 (1 - 0.96^(t sd) / 2)``; ``s *= c_t`` (the momentum schedule, per param group);
  Adam's moments; ``d = sqrt(v) / sqrt(1 - b2^t) + eps``; ``p -= lr (1 - c_t) / (1 - s) g / d + lr c_{t+1} /
  (1 - s c_{t+1}) m / d``.
- RAdamLegacy: RAdam's rule with the weight decay ``p -= wd lr p`` before the update and ``lr / (1 - b1^t)``
  times the rectification in one step size.
- LaProp: ``v = b2 v + (1 - b2) g^2``; ``a1 = b1 a1 + (1 - b1) lr``, ``a2 = b2 a2 + (1 - b2)`` (per param group);
  ``m = b1 m + lr (1 - b1) g / (sqrt(v / a2) + eps)``; ``p -= (lr / a1) m``, then ``p -= lr wd p``.
- AdafactorBigVision: ``b2_t = min(beta2_cap, 1 - max(t - offset, 1)^-decay_rate)``; the second moment of ``g^2 +
  eps`` averaged with weight ``1 - b2_t``, factored over the two largest dims; ``u = g rsqrt(...)`` clipped by its
  RMS; the momentum ``lerp(m, u, 1 - momentum)`` kept in bfloat16 (each value rounded: its default
  ``momentum_dtype``); ``p = p (1 - lr wd) - lr u``.
- timm's Muon: the parameters its ``_is_suitable_for_muon`` finds fit (or a group's ``use_muon``): decoupled
  decay, the momentum (Nesterov) orthogonalized in bfloat16 by Newton-Schulz with a schedule of coefficients
  (``quintic`` by default; a convolution flattened or batched per position), ``p -= lr scale(shape) O``; AdaMuon
  divides ``O`` by the root of its second moment first; the others (and ``use_fallback`` groups) AdamW
  (NAdamW with nesterov) at ``lr * fallback_lr_scale``.
- Mars: for a weight, ``c = g + gamma b1 / (1 - b1) (g - g_last)`` (``g`` at the first step) over ``max(1,
  ||c||)``, then AdamW's moments of ``c`` (or Lion's sign) with ``wd p`` inside the update; other parameters
  AdamW with ``betas_1d`` and ``lr * lr_1d_factor`` (unless ``optimize_1d``); the last gradient is state.
- timm's Lookahead around any of them: after the update, every k steps (its count ``lookahead_step``) the slow
  weights move toward the fast ones, ``slow += alpha (fast - slow)``, and the fast ones restart from them; timm
  makes a parameter's slow buffer at its first sync (a copy: no change), so until then the sync only copies.
- Adafactor (transformers' and timm's): ``lr_t = min(1e-2 (warm-up: 1e-6 t), 1 / sqrt(t)) * max(eps_scale,
  rms(p))`` (the relative step; or the group's lr); ``b2t = 1 - t^decay_rate``; the second moment of ``g^2 +
  eps`` averaged with ``b2t``, factored for a weight into its row and column means (state of their own
  shapes), ``u = rsqrt(row / mean(row)) rsqrt(col) g``, else ``u = rsqrt(v) g``; ``u /= max(1, rms(u) /
  clip_threshold)``; ``u *= lr_t``; with ``beta1`` ``m`` averages ``u``; ``p -= wd lr_t p + u``.
  transformers' factors every weight over its last two dims and averages with ``mul_ / add_``; timm's where
  both dims exceed ``min_dim_size_to_factor`` (a convolution's first two) and averages with ``lerp_``.

PyTorch computes the scalar factors (bias corrections, ``rho_t``, ``mu_t``) in double precision from a
Python step count, then rounds them to float32 where they meet a tensor; the step computes them in float64
from its step counter and rounds them the same way (in float32, RAdam's ``rho_t``, a difference of two
numbers near ``rho_inf`` = 1999, lost a tenth of a percent of the update at step 6).
The update is torch.optim's own: a subclass that overrides ``step()`` and step hooks are refused by name
(a learning-rate scheduler wraps the instance's ``step`` and is fine; the step reads each group's current
``lr``, and with every ``lr`` 0, as a warm-up schedule leaves it before its first step, a warning says so).
PyTorch keeps a step count per parameter (timm's Lamb and Adan per group); the step keeps one for all while
they agree, and one per parameter where a resumed optimizer's differ (a layer unfrozen later, a group added
later: its parameters have no state, count 0), except NAdam's (one momentum product per group). SGD's
dampening is refused by name.
"""

from __future__ import annotations

import inspect
import math
import struct
import warnings
from dataclasses import dataclass, field, fields, replace

import torch
import torch.nn.functional as F

OPTIMIZERS = ("sgd", "adam", "adamw")  # by name

# torch.optim classes the step writes the update of (checked in this order: AdamW is an Adam).
_CLASSES = (("sgd", torch.optim.SGD), ("adam", torch.optim.Adam), ("rmsprop", torch.optim.RMSprop),
            ("adagrad", torch.optim.Adagrad), ("adamax", torch.optim.Adamax), ("nadam", torch.optim.NAdam),
            ("radam", torch.optim.RAdam), ("adafactor_torch", torch.optim.Adafactor),
            ("adadelta", torch.optim.Adadelta), ("rprop", torch.optim.Rprop), ("asgd", torch.optim.ASGD),
            ("muon", torch.optim.Muon))

# timm.optim classes the step writes the update of (timm is imported when an optimizer is given as an instance)
_TIMM = {"lion": "Lion", "lamb": "Lamb", "lars": "Lars", "rmsproptf": "RMSpropTF", "nadamw": "NAdamW", "sgdw": "SGDW",
         "adamw": "AdamWLegacy", "adafactor_timm": "Adafactor", "adan": "Adan", "adopt": "Adopt",
         "adabelief": "AdaBelief", "adamp": "AdamP", "sgdp": "SGDP", "madgrad": "MADGRAD", "novograd": "NvNovoGrad",
         "nadamlegacy": "NAdamLegacy", "radamlegacy": "RAdamLegacy", "laprop": "LaProp", "mars": "Mars",
         "adafactorbv": "AdafactorBigVision", "timm-muon": "Muon"}
_ALWAYS_DECOUPLED = ("lion", "nadamw", "sgdw", "muon", "laprop", "adafactorbv", "timm-muon")  # and timm's AdamWLegacy
# Optimizers whose update reads no step count (RMSprop and others count steps, but do not read them).
_UNCOUNTED = ("sgd", "sgdw", "rmsprop", "rmsproptf", "lion", "lars", "adadelta", "rprop", "muon", "sgdp", "novograd")


def _classes(optimizer):
    """(kind, class) of every optimizer class the step writes the update of that ``optimizer`` may be: torch's,
    and timm's or transformers' where its class derives from theirs (imported then only)."""
    modules = {c.__module__.split(".")[0] for c in type(optimizer).__mro__}
    classes = _CLASSES
    if "timm" in modules:
        import timm.optim as timm_optim
        classes += tuple((k, getattr(timm_optim, c)) for k, c in _TIMM.items())
    if "transformers" in modules:
        from transformers.optimization import Adafactor
        classes += (("adafactor", Adafactor),)
    return classes


# Per-parameter state: the slot kind (manifest kind), torch.optim's state key and the step's name for it.
_PER_PARAM = {"momentum": ("momentum_buffer", "momentum of"), "adam_m": ("exp_avg", "first moment of"),
              "adam_v": ("exp_avg_sq", "second moment of"),
              "adam_vmax": ("max_exp_avg_sq", "largest second moment of"),
              "square_avg": ("square_avg", "square average of"), "grad_avg": ("grad_avg", "gradient average of"),
              "sum": ("sum", "sum of squared gradients of"), "exp_inf": ("exp_inf", "infinity norm of"),
              "factored_row": ("exp_avg_sq_row", "row second moments of"),
              "factored_col": ("exp_avg_sq_col", "column second moments of"),
              "row_var": ("row_var", "row variances of"), "col_var": ("col_var", "column variances of"),
              "variance": ("variance", "variance of"), "acc_delta": ("acc_delta", "accumulated update of"),
              "prev": ("prev", "previous gradient of"), "step_size": ("step_size", "step sizes of"),
              "eta": ("eta", "step size of"), "mu": ("mu", "averaging weight of"), "ax": ("ax", "average of"),
              "exp_avg_diff": ("exp_avg_diff", "gradient difference average of"),
              "neg_pre_grad": ("neg_pre_grad", "negated last gradient of"),
              "exp_avg_var": ("exp_avg_var", "gradient variance of"),
              "max_exp_avg_var": ("max_exp_avg_var", "largest gradient variance of"),
              "slow": ("lookahead_slow_buff", "slow weights of"),
              "grad_sum_sq": ("grad_sum_sq", "weighted sum of squared gradients of"),
              "dual_avg": ("s", "weighted sum of gradients of"), "x0": ("x0", "starting point of"),
              "layer_sq": ("exp_avg_sq", "squared gradient norm average of"),
              "layer_sq_max": ("max_exp_avg_sq", "largest squared gradient norm average of"),
              "last_grad": ("last_grad", "last gradient of"),
              "bv_row": ("exp_avg_sq_r", "row second moments of"),
              "bv_col": ("exp_avg_sq_c", "column second moments of")}
# Per param group: NAdam's momentum product (a float32 tensor in torch.optim), NAdamLegacy's momentum schedule
# and LaProp's averages of the learning rate and of 1 (Python floats in timm, float64: float32 here, computed in
# float64 at each step).
_PER_GROUP = {"mu_product": ("mu_product", "momentum product", 1.0),
              "m_schedule": ("m_schedule", "momentum schedule", 1.0),
              "lr_average": ("exp_avg_lr_1", "learning-rate average", 0.0),
              "correction_average": ("exp_avg_lr_2", "bias-correction average", 0.0)}
_GROUP_SLOTS = {"nadam": ("mu_product",), "nadamlegacy": ("m_schedule",),
                "laprop": ("lr_average", "correction_average")}
SLOT_KINDS = frozenset(_PER_PARAM) | frozenset(_PER_GROUP) | {"step", "lookahead_step"}


@dataclass(frozen=True)
class Group:
    """One param group's options (torch.optim's names; those an optimizer does not have keep these defaults)."""
    lr: float
    kind: str = ""  # its optimizer's update: "sgd", "adam", ..., the keys of OPTIONS
    owner: int = 0  # its optimizer's position in a list of optimizers
    momentum: float = 0.0
    nesterov: bool = False
    weight_decay: float = 0.0
    decoupled: bool = False  # decoupled weight decay (AdamW; NAdam / RAdam's decoupled_weight_decay)
    maximize: bool = False
    betas: tuple = (0.9, 0.999)
    eps: float = 1e-8
    amsgrad: bool = False
    alpha: float = 0.99  # RMSprop
    centered: bool = False  # RMSprop
    lr_decay: float = 0.0  # Adagrad
    momentum_decay: float = 4e-3  # NAdam
    schedule_decay: float = 4e-3  # timm's NAdamLegacy
    # timm's Mars: the gradient corrected by gamma times its change since the last step
    gamma: float = 0.025
    mars_type: str = "adamw"  # "adamw" or "lion": the update of the corrected gradient's moments
    optimize_1d: bool = False  # 1-d parameters too (else AdamW with betas_1d and lr * lr_1d_factor)
    lr_1d_factor: float = 1.0
    betas_1d: tuple = (0.9, 0.99)
    # timm's AdafactorBigVision (its momentum in beta1; eps None: 1e-30)
    decay_offset: int = 0
    beta2_cap: float = 0.999
    momentum_dtype: str = "float32"  # the momentum's precision: "bfloat16" (its default), "float16", "float32"
    unscaled_wd: bool = False  # the decay without the lr
    # timm's Muon (ns_steps, eps, adjust_lr_fn, momentum, nesterov as above; betas: its AdamW fallback's)
    algo: str = "muon"  # or "adamuon": a second moment of the orthogonalized update
    ns_schedule: tuple = ()  # the Newton-Schulz steps' (a, b, c), the last repeated
    safety_factor: float = 1.0
    conv_mode: str = "flatten"  # a convolution's weight as (out, in * h * w), or "batched": per position
    normalize_spatial: bool = True
    scale_eps: bool = False
    fallback_lr_scale: float = 1.0  # the AdamW (NAdamW with nesterov) fallback's lr, times lr
    use_fallback: bool = False  # every parameter of the group on the fallback
    use_muon: bool | None = None  # the group's routing (None: by shape, timm's _is_suitable_for_muon)
    # timm's Lion / Lamb / Lars
    caution: bool = False  # Lion, Lamb: the update masked where its sign disagrees with the gradient's
    max_lr: float | None = None  # corrected_weight_decay: decay scaled by lr^2 / max_lr (the constructor's lr)
    bias_correction: bool = True  # Lamb
    grad_averaging: bool = True  # Lamb
    max_grad_norm: float | None = None  # Lamb: the global gradient norm clipped to it (the optimizer's default)
    trust_clip: bool = False  # Lamb, Lars: the trust ratio at most 1
    always_adapt: bool = False  # Lamb, Lars: the trust ratio also without weight decay
    trust_coeff: float = 1e-3  # Lars
    clipping_threshold: float | None = None  # timm's AdamW / NAdamW: RMS update clipping
    lr_in_momentum: bool = True  # RMSpropTF
    # Adafactor (transformers' and timm's)
    relative_step: bool = True
    scale_parameter: bool = True
    warmup_init: bool = False
    decay_rate: float = -0.8
    clip_threshold: float = 1.0
    eps_scale: float = 1e-3  # the smallest parameter RMS the relative step is scaled by (transformers' eps[1])
    min_dim_size_to_factor: int = 16  # timm's: a second moment is factored over two dims larger than this
    beta1: float | None = None  # Adafactor's first moment (None: none)
    rho: float = 0.9  # Adadelta
    etas: tuple = (0.5, 1.2)  # Rprop: the step-size factors where the gradient's sign flips / stays
    step_sizes: tuple = (1e-6, 50.0)  # Rprop: the step sizes' bounds
    lambd: float = 1e-4  # ASGD: decay term
    t0: float = 1e6  # ASGD: the step averaging starts at
    ns_coefficients: tuple = (3.4445, -4.775, 2.0315)  # Muon: the Newton-Schulz iteration's
    ns_steps: int = 5  # Muon
    adjust_lr_fn: str | None = None  # Muon: the lr's scaling by the matrix's shape
    no_prox: bool = False  # Adan: weight decay as a multiplication before the update (else a division after)
    clip_exp: float | None = 0.333  # Adopt: the normalized gradient clipped to (t - 1)^clip_exp
    fixed_decay: bool = False  # AdaBelief: decoupled decay without the lr
    rectify: bool = True  # AdaBelief: RAdam's rectification
    degenerated_to_sgd: bool = True  # AdaBelief: before rectification, SGD with momentum (else no step)
    delta: float = 0.1  # AdamP / SGDP: the cosine below which a weight counts as scale-invariant
    wd_ratio: float = 0.1  # AdamP / SGDP: the weight decay's factor on such a weight
    dampening: float = 0.0  # SGDP
    lookahead_k: int = 0  # timm's Lookahead around the optimizer: every k steps, the slow weights (0: none)
    lookahead_alpha: float = 0.5  # Lookahead: the slow weights' step toward the fast ones

    # the options each optimizer has (the header and the manifest show those)
    OPTIONS = {"sgd": ("momentum", "nesterov"), "adam": ("betas", "eps", "amsgrad"),
               "adamw": ("betas", "eps", "amsgrad", "caution", "max_lr", "clipping_threshold"),
               "rmsprop": ("alpha", "eps", "momentum", "centered"),
               "adagrad": ("lr_decay", "eps"), "adamax": ("betas", "eps"),
               "nadam": ("betas", "eps", "momentum_decay", "decoupled"), "radam": ("betas", "eps", "decoupled"),
               "lion": ("betas", "caution", "max_lr"), "sgdw": ("momentum", "nesterov", "caution", "max_lr"),
               "nadamw": ("betas", "eps", "caution", "max_lr", "clipping_threshold"),
               "rmsproptf": ("alpha", "eps", "momentum", "centered", "decoupled", "lr_in_momentum", "caution",
                             "max_lr"),
               "lamb": ("betas", "eps", "decoupled", "bias_correction", "grad_averaging", "max_grad_norm",
                        "trust_clip", "always_adapt", "caution", "max_lr"),
               "lars": ("momentum", "nesterov", "eps", "trust_coeff", "trust_clip", "always_adapt"),
               "adafactor": ("eps", "eps_scale", "clip_threshold", "decay_rate", "beta1", "relative_step",
                             "scale_parameter", "warmup_init"),
               "adafactor_timm": ("eps", "eps_scale", "clip_threshold", "decay_rate", "beta1", "relative_step",
                                  "scale_parameter", "warmup_init", "min_dim_size_to_factor", "caution"),
               "adafactor_torch": ("eps", "eps_scale", "clip_threshold", "decay_rate"),
               "adadelta": ("rho", "eps"), "rprop": ("etas", "step_sizes"),
               "asgd": ("lambd", "alpha", "t0"),
               "muon": ("momentum", "nesterov", "eps", "ns_coefficients", "ns_steps", "adjust_lr_fn"),
               "adan": ("betas", "eps", "no_prox", "caution"),
               "adopt": ("betas", "eps", "clip_exp", "decoupled", "caution", "max_lr"),
               "adabelief": ("betas", "eps", "amsgrad", "decoupled", "fixed_decay", "rectify", "degenerated_to_sgd"),
               "adamp": ("betas", "eps", "nesterov", "delta", "wd_ratio", "caution"),
               "sgdp": ("momentum", "dampening", "nesterov", "eps", "delta", "wd_ratio", "caution"),
               "madgrad": ("momentum", "eps", "decoupled"),
               "novograd": ("betas", "eps", "grad_averaging", "amsgrad", "decoupled", "max_lr"),
               "nadamlegacy": ("betas", "eps", "schedule_decay"), "radamlegacy": ("betas", "eps"),
               "laprop": ("betas", "eps", "caution", "max_lr"),
               "mars": ("betas", "eps", "gamma", "mars_type", "optimize_1d", "lr_1d_factor", "betas_1d", "caution"),
               "timm-muon": ("momentum", "nesterov", "eps", "algo", "ns_steps", "ns_schedule", "safety_factor",
                             "adjust_lr_fn", "conv_mode", "normalize_spatial", "scale_eps", "betas",
                             "fallback_lr_scale", "use_fallback", "use_muon"),
               "adafactorbv": ("eps", "beta1", "momentum_dtype", "decay_rate", "decay_offset", "beta2_cap",
                                "min_dim_size_to_factor", "clipping_threshold", "unscaled_wd", "caution", "max_lr")}

    def options(self):
        return (("lr", "weight_decay", "maximize") + self.OPTIONS[self.kind] +
                (("lookahead_k", "lookahead_alpha") if self.lookahead_k else ()))

    def describe(self):
        always = ("lr", "weight_decay", "momentum", "betas", "eps", "alpha")
        relative = self.kind.startswith("adafactor") and self.relative_step  # (its lr is not read)
        return ", ".join("lr=relative step" if k == "lr" and relative else f"{k}={getattr(self, k)}"
                         for k in self.options() if k in always or getattr(self, k) != _DEFAULT[k])


_DEFAULT = {f.name: f.default for f in fields(Group)}
_DEFAULT_NS = _DEFAULT["ns_coefficients"]


@dataclass
class Plan:
    """The update of every trained parameter: its group, and the state slots in argument order."""
    kind: str  # the optimizer's kind ("sgd", "adamw", "lamb", ...; a list of them joined by "+": "muon+adamw")
    groups: list  # [Group]
    group_of: list  # per trained parameter: its group's index, or None (no group holds it: kept)
    slots: list = field(default_factory=list)  # [(kind, parameter index / group index / None)]
    initial: list = field(default_factory=list)  # the slots' initial values
    slow_from: dict = field(default_factory=dict)  # Lookahead: the count after which a parameter's slow weights exist

    def state_names(self, names):
        def name(kind, owner):
            if kind == "step":
                return "step counter" + ("" if owner is None else f" of {names[owner]}")
            if kind == "lookahead_step":
                return "lookahead step counter"
            if kind in _PER_GROUP:
                return _PER_GROUP[kind][1] + (f" of param group {owner}" if len(self.groups) > 1 else "")
            return f"{_PER_PARAM[kind][1]} {names[owner]}"
        return [name(k, o) for k, o in self.slots]

    def relative_steps(self):
        """The param groups whose learning rate Adafactor's relative step computes (their ``lr`` is not read)."""
        return [n for n, g in enumerate(self.groups) if g.kind.startswith("adafactor") and g.relative_step]

    def state_kinds(self):
        return [k for k, _ in self.slots]

    def describe(self):
        """The optimizers and their options, the last parenthesis left open (the header closes it)."""
        def one(owner):  # one optimizer's groups
            groups = [(n, g) for n, g in enumerate(self.groups) if g.owner == owner]
            kind = groups[0][1].kind
            if len(groups) == 1:
                return f"{kind} ({groups[0][1].describe()}"
            return f"{kind} ({len(groups)} param groups: " + "; ".join(
                f"[{sum(1 for g in self.group_of if g == n)} tensors] {group.describe()}" for n, group in groups)
        return ") + ".join(one(owner) for owner in sorted({g.owner for g in self.groups}))

    def manifest(self, names):
        first = self.groups[0]

        several = len({g.owner for g in self.groups}) > 1  # a list of optimizers: each group names its own

        def options(group):
            return {**({"optimizer": group.kind} if several else {}),
                    **{k: list(v) if isinstance(v, tuple) else v for k, v in
                       ((k, getattr(group, k)) for k in group.options())}}
        return dict(kind=self.kind, lr=first.lr, momentum=first.momentum, weight_decay=first.weight_decay,
                    betas=list(first.betas), eps=first.eps,
                    groups=[dict(**options(g), params=[k for k, n in zip(names, self.group_of) if n == i])
                            for i, g in enumerate(self.groups)],
                    kept=[k for k, n in zip(names, self.group_of) if n is None])


def plan(optimizer, params, *, lr=None, momentum=0.0, weight_decay=0.0, betas=(0.9, 0.999), eps=1e-8) -> Plan:
    """The plan for ``params`` (the trained parameters, in argument order) under ``optimizer``: a name with
    the options given here, or a torch.optim instance (then these options must be left as they are)."""
    supported = ("a torch.optim." + " / ".join(c.__name__ for _, c in _CLASSES) + " (or AdamW) or a timm.optim." +
                 " / ".join(_TIMM.values()) + " or transformers' Adafactor")
    if isinstance(optimizer, str):
        kind = optimizer.lower()
        if kind not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS} or {supported}, got {optimizer!r}")
        if kind != "sgd" and momentum != 0:
            raise ValueError("momentum is an SGD option")
        if lr is None:
            lr = 1e-3 if kind in ("adam", "adamw") else 0.01
        group = Group(lr=float(lr), kind=kind, momentum=float(momentum), weight_decay=float(weight_decay),
                      decoupled=kind == "adamw", betas=tuple(float(b) for b in betas), eps=float(eps))
        result = Plan(kind, [group], [0] * len(params))
        _lay_out(result, params, {})
        return result
    # A list of optimizers (torch.optim.Muon for the matrices and an AdamW for the rest): each holds its own
    # parameters, each group updates with its optimizer's rule.
    optimizers = list(optimizer) if isinstance(optimizer, (list, tuple)) else [optimizer]
    for one in optimizers:
        if not isinstance(one, torch.optim.Optimizer):
            raise ValueError(f"optimizer must be one of {OPTIMIZERS} or {supported}, or a list of such instances; "
                             f"got {type(one).__name__}")
    if not optimizers:
        raise ValueError("optimizer is an empty list")
    given = dict(lr=lr, momentum=momentum, weight_decay=weight_decay, betas=tuple(betas), eps=eps)
    defaults = dict(lr=None, momentum=0.0, weight_decay=0.0, betas=(0.9, 0.999), eps=1e-8)
    changed = [k for k in given if given[k] != defaults[k]]
    if changed:
        raise ValueError(f"{', '.join(changed)} given with a torch.optim optimizer: its param groups hold the "
                         "options (set them there)")
    groups, group_of, state, kinds, holder = [], [None] * len(params), {}, [], {}
    for owner, one in enumerate(optimizers):
        kind, name, own_groups, own_group_of, own_state = _instance(one, params, owner, supported)
        for i, n in enumerate(own_group_of):
            if n is None:
                continue
            if group_of[i] is not None:
                raise ValueError(f"the {holder[i]} and the {name} both hold the parameter of shape "
                                 f"{list(params[i].shape)} (parameter {i}): each parameter belongs to one optimizer")
            group_of[i], holder[i] = n + len(groups), name
            state[i] = own_state[i]
        groups += own_groups
        kinds.append(kind)
    if all(g.lr == 0 for g in groups) and not all(g.kind.startswith("adafactor") and g.relative_step for g in groups):
        warnings.warn(f"every param group of the {' and the '.join(type(o).__name__ for o in optimizers)} has lr 0 "
                      "(a warm-up schedule before its first step?): the step's learning rate is that constant unless "
                      "lr_input=True and the caller sets it", UserWarning, stacklevel=4)
    result = Plan("+".join(kinds), groups, group_of)
    _lay_out(result, params, state)
    return result


def _instance(optimizer, params, owner, supported):
    """One optimizer instance's update kind, class name, param groups (``owner`` its position in the list),
    each parameter's group index in it (or None) and its state per parameter index."""
    lookahead = _lookahead(optimizer)
    if lookahead is not None:  # timm's Lookahead: its base optimizer's update, then its own every k steps
        optimizer = optimizer._base_optimizer
    classes = _classes(optimizer)
    kind = next((k for k, c in classes if isinstance(optimizer, c)), None)
    name = type(optimizer).__name__
    if kind is None:
        raise ValueError(f"amp_mlir.torch writes the updates of {supported[2:]}; got {name}")
    # What the step writes is torch.optim's own update: a subclass's own step() (gradient centralisation) or a
    # step hook (gradients rescaled before the update) would be left out silently. (A learning-rate scheduler
    # wraps the instance's step, not the class's, and registers no hook.)
    # (torch.optim wraps a class's step in a profiling hook at its first instance: compare what they wrap)
    if inspect.unwrap(type(optimizer).step) not in {inspect.unwrap(c.step) for _, c in classes}:
        raise ValueError(f"{name} overrides torch.optim's step(): the step writes torch.optim's own update only")
    from torch.optim import optimizer as registry
    hooks = (len(optimizer._optimizer_step_pre_hooks) + len(optimizer._optimizer_step_post_hooks) +
             len(registry._global_optimizer_pre_hooks) + len(registry._global_optimizer_post_hooks))
    if hooks:
        raise ValueError(f"the {name} has {hooks} step hook(s) (register_step_pre_hook / register_step_post_hook, "
                         "or the global ones): the step writes torch.optim's own update only")
    index = {id(p): i for i, p in enumerate(params)}
    groups, group_of, seen = [], [None] * len(params), set()
    for n, g in enumerate(optimizer.param_groups):
        where = f"param group {n} of the {name}"
        if kind in ("sgd", "lars", "sgdw") and float(g.get("dampening", 0)) != 0:
            raise ValueError(f"{where}: {name}'s dampening is not supported (it skips it at the first step "
                             "only); use dampening=0")
        if kind in ("lamb", "rmsproptf", "adabelief", "madgrad", "novograd"):
            decoupled = bool(g.get("decoupled_decay", False))
        elif kind == "adopt":
            decoupled = bool(g.get("decoupled", False))
        else:
            decoupled = kind in _ALWAYS_DECOUPLED or name == "AdamWLegacy" or bool(
                g.get("decoupled_weight_decay", isinstance(optimizer, torch.optim.AdamW)))
        # timm's corrected weight decay (Lion's, Lamb's decoupled one): lr^2 / max_lr instead of lr
        max_lr = float(g["max_lr_snapshot"]) if g.get("corrected_weight_decay") and decoupled else None
        if kind in ("adam", "adamw"):
            kind = "adamw" if decoupled else "adam"
            if n and decoupled != groups[0].decoupled:
                raise ValueError(f"{where}: param groups with and without decoupled weight decay in one {name}")
        adafactor = {}
        if kind == "adafactor_torch":  # eps (eps1 or None: float32's machine epsilon, eps2); d: the clipping
            adafactor = dict(eps=float(torch.finfo(torch.float32).eps if g["eps"][0] is None else g["eps"][0]),
                             eps_scale=float(g["eps"][1]), decay_rate=float(g["beta2_decay"]),
                             clip_threshold=float(g["d"]), relative_step=False)
        if kind in ("adafactor", "adafactor_timm"):  # transformers' eps is (eps, eps_scale)
            eps, eps_scale = g["eps"] if kind == "adafactor" else (g["eps"], g["eps_scale"])
            adafactor = dict(eps=float(eps), eps_scale=float(eps_scale), beta1=None if g["beta1"] is None else
                             float(g["beta1"]), relative_step=bool(g["relative_step"]),
                             scale_parameter=bool(g["scale_parameter"]), warmup_init=bool(g["warmup_init"]),
                             decay_rate=float(g["decay_rate"]), clip_threshold=float(g["clip_threshold"]),
                             min_dim_size_to_factor=int(g.get("min_dim_size_to_factor", 16)))
            if kind == "adafactor_timm" and adafactor["relative_step"] and g.get("lr") is not None:
                g = {**g, "lr": None}  # (timm's step writes the last relative step size into the group's lr)
        if kind == "timm-muon":
            from timm.optim.muon import _COEFFICIENTS, resolve_ns_coefficients
            adafactor = dict(
                eps=float(g["eps"]), relative_step=False, algo=str(g.get("algo", "muon")),
                ns_schedule=tuple(resolve_ns_coefficients(g["ns_coefficients"], _COEFFICIENTS)),
                safety_factor=float(g["safety_factor"]), conv_mode=str(g["conv_mode"]),
                normalize_spatial=bool(g["normalize_spatial"]), scale_eps=bool(g.get("scale_eps", False)),
                fallback_lr_scale=float(g.get("fallback_lr_scale", 1.0)), use_fallback=bool(g.get("use_fallback", False)),
                use_muon=None if g.get("use_muon") is None else bool(g["use_muon"]))
        if kind == "adafactorbv":  # its momentum (None: none) in beta1, kept in momentum_dtype
            adafactor = dict(eps=1e-30 if g["eps"] is None else float(g["eps"]), relative_step=False,
                             beta1=None if g["momentum"] is None else float(g["momentum"]),
                             decay_rate=float(g["decay_rate"]), decay_offset=int(g["decay_offset"]),
                             beta2_cap=float(g["beta2_cap"]), min_dim_size_to_factor=int(g["min_dim_size_to_factor"]),
                             momentum_dtype=str(g["momentum_dtype"]).replace("torch.", ""),
                             unscaled_wd=bool(g["unscaled_wd"]))
            if adafactor["momentum_dtype"] not in ("bfloat16", "float16", "float32"):
                raise ValueError(f"{where}: AdafactorBigVision's momentum_dtype {adafactor['momentum_dtype']} is not "
                                 "supported (bfloat16, float16 or float32)")
        options = dict(lr=0.0 if g["lr"] is None else float(g["lr"]), owner=owner,
                            momentum=float(g.get("momentum") or 0.0),
                            nesterov=bool(g.get("nesterov", False)), weight_decay=float(g.get("weight_decay", 0.0)),
                            decoupled=decoupled, maximize=bool(g.get("maximize", False)),
                            betas=tuple(float(b) for b in g.get("betas", (0.9, 0.999))),
                            eps=adafactor["eps"] if adafactor else float(g.get("eps", 1e-8)),
                            amsgrad=bool(g.get("amsgrad", False)),
                            alpha=float(g.get("alpha", 0.99)), centered=bool(g.get("centered", False)),
                            lr_decay=float(g.get("lr_decay", 0.0)),
                            momentum_decay=float(g.get("momentum_decay", 4e-3)),
                            schedule_decay=float(g.get("schedule_decay", 4e-3)),
                            gamma=float(g.get("gamma", 0.025)), mars_type=str(g.get("mars_type", "adamw")),
                            optimize_1d=bool(g.get("optimize_1d", False)),
                            lr_1d_factor=float(g.get("lr_1d_factor", 1.0)),
                            betas_1d=tuple(float(b) for b in (g.get("betas_1d") or g.get("betas", (0.9, 0.99)))),
                            caution=bool(g.get("caution", False)), max_lr=max_lr,
                            bias_correction=bool(g.get("bias_correction", True)),
                            grad_averaging=bool(g.get("grad_averaging", True)),
                            max_grad_norm=(None if optimizer.defaults.get("max_grad_norm") is None
                                           else float(optimizer.defaults["max_grad_norm"])) if kind == "lamb" else None,
                            trust_clip=bool(g.get("trust_clip", False)),
                            always_adapt=bool(g.get("always_adapt", False)),
                            trust_coeff=float(g.get("trust_coeff", 1e-3)),
                            clipping_threshold=(None if g.get("clipping_threshold") is None
                                                else float(g["clipping_threshold"])),
                            lr_in_momentum=bool(g.get("lr_in_momentum", True)),
                            rho=float(g.get("rho", 0.9)), etas=tuple(float(e) for e in g.get("etas", (0.5, 1.2))),
                            step_sizes=tuple(float(e) for e in g.get("step_sizes", (1e-6, 50.0))),
                            lambd=float(g.get("lambd", 1e-4)), t0=float(g.get("t0", 1e6)),
                            ns_coefficients=tuple(float(c) for c in g.get("ns_coefficients", (3.4445, -4.775, 2.0315)))
                            if kind == "muon" else _DEFAULT_NS,
                            ns_steps=int(g.get("ns_steps", 5)), adjust_lr_fn=g.get("adjust_lr_fn"),
                            no_prox=bool(g.get("no_prox", False)),
                            clip_exp=None if g.get("clip_exp", 0.333) is None else float(g.get("clip_exp", 0.333)),
                            fixed_decay=bool(g.get("fixed_decay", False)), rectify=bool(g.get("rectify", True)),
                            degenerated_to_sgd=bool(g.get("degenerated_to_sgd", True)),
                            delta=float(g.get("delta", 0.1)), wd_ratio=float(g.get("wd_ratio", 0.1)),
                            dampening=float(g.get("dampening", 0.0)))
        groups.append(Group(**{**options, **adafactor}))
        for p in g["params"]:
            if id(p) in seen:
                raise ValueError(f"{where} holds a parameter of shape {list(p.shape)} twice (torch.optim would update "
                                 "it twice per step; PyTorch deprecates such groups): list each parameter once")
            seen.add(id(p))
            if id(p) in index:
                group_of[index[id(p)]] = n
            elif p.requires_grad:
                raise ValueError(f"{where} holds a parameter of shape {list(p.shape)} that is neither the "
                                 "model's nor the loss module's: the step trains those only")
    if all(n is None for n in group_of) and params:
        raise ValueError(f"the {name} holds none of the model's trainable parameters")
    groups = [replace(g, kind=kind) for g in groups]  # (Adam's kind is known after its groups: adam / adamw)
    if lookahead is not None:
        counts = {g["lookahead_step"] for g in optimizer.param_groups}
        if len(counts) > 1:
            raise ValueError(f"the Lookahead's param groups are at different lookahead steps ({sorted(counts)}): "
                             "the step keeps one count")
        groups = [replace(g, lookahead_k=int(pg["lookahead_k"]), lookahead_alpha=float(pg["lookahead_alpha"]))
                  for g, pg in zip(groups, optimizer.param_groups)]
        name = f"Lookahead({name})"
    state = {i: optimizer.state.get(p, {}) for i, p in enumerate(params)}
    if lookahead is not None:  # (the lookahead count rides with every parameter's state)
        state = {i: {**s, "lookahead_step": optimizer.param_groups[0]["lookahead_step"]} for i, s in state.items()}
    if kind in ("lamb", "adan"):  # timm's Lamb and Adan count steps per param group (each parameter at its group's)
        for i, n in enumerate(group_of):
            if n is not None and "step" in optimizer.param_groups[n]:
                state[i] = {**state[i], "step": optimizer.param_groups[n]["step"]}
    return kind, name, groups, group_of, state


def _lookahead(optimizer):
    """timm's Lookahead class where ``optimizer`` is one (exactly: a subclass's own step is refused), else None."""
    if "timm" not in {c.__module__.split(".")[0] for c in type(optimizer).__mro__}:
        return None
    from timm.optim import Lookahead
    if not isinstance(optimizer, Lookahead):
        return None
    if inspect.unwrap(type(optimizer).step) is not inspect.unwrap(Lookahead.step):
        raise ValueError(f"{type(optimizer).__name__} overrides Lookahead's step(): the step writes timm's own only")
    return Lookahead


def _factored_dims(kind, group, shape):
    """Adafactor: the (column, row) dims its second moment of a parameter of ``shape`` is factored over (the row
    statistics drop the row dim, the column statistics the column dim), or None (a full second moment).
    transformers' factors every parameter of two or more dims over its last two; timm's where both dims are
    larger than ``min_dim_size_to_factor`` (the first two, else the last two)."""
    ndim, m = len(shape), group.min_dim_size_to_factor
    if kind == "adafactor":
        return (ndim - 2, ndim - 1) if ndim >= 2 else None
    if ndim > 2 and shape[0] > m and shape[1] > m:
        return 0, 1
    if ndim >= 2 and shape[-2] > m and shape[-1] > m:
        return ndim - 2, ndim - 1
    return None


def _timm_muon_fallback(group, shape):
    """Whether timm's Muon updates a parameter of ``shape`` with its AdamW fallback: the group says so
    (``use_fallback``, ``use_muon``), else where timm's ``_is_suitable_for_muon`` finds the shape unfit."""
    if group.use_fallback:
        return True
    if group.use_muon is not None:
        return not group.use_muon
    from timm.optim.muon import _is_suitable_for_muon
    return not _is_suitable_for_muon(torch.empty(shape, device="meta"))


def _bv_factored_dims(group, shape):
    """AdafactorBigVision: (the second largest dim, the largest) where that second one has at least
    ``min_dim_size_to_factor`` elements (ties: the later dim counts as larger), else None."""
    if len(shape) < 2:
        return None
    ordered = sorted((n, d) for d, n in enumerate(shape))
    if shape[ordered[-2][1]] < group.min_dim_size_to_factor:
        return None
    return ordered[-2][1], ordered[-1][1]


def _slot_shape(kind, group, shape):
    """The shape of per-parameter state ``kind`` of a parameter of ``shape``."""
    if kind in ("eta", "mu", "layer_sq", "layer_sq_max"):  # ASGD's, NvNovoGrad's: one number per parameter
        return ()
    if kind in ("row_var", "col_var"):  # torch's Adafactor: the mean over the last (row) or the one before
        return tuple(shape[:-1]) + (1,) if kind == "row_var" else tuple(shape[:-2]) + (1, shape[-1])
    if kind in ("bv_row", "bv_col"):  # AdafactorBigVision: keepdim means over the largest dim / the next
        col, row = _bv_factored_dims(group, shape)
        drop = row if kind == "bv_row" else col
        return tuple(1 if d == drop else n for d, n in enumerate(shape))
    if kind in ("factored_row", "factored_col"):
        col, row = _factored_dims(group.kind, group, shape)
        drop = row if kind == "factored_row" else col
        return tuple(shape[:drop]) + tuple(shape[drop + 1:])
    return tuple(shape)


def _adafactor_slots(kind, group, shape):
    return ((["adam_m"] if group.beta1 is not None else []) +
            (["factored_row", "factored_col"] if _factored_dims(kind, group, shape) else ["adam_v"]))


# Per optimizer kind: the per-parameter state kinds of a parameter of ``shape`` in ``group``, in argument order.
_SLOTS = {
    "sgd": lambda g, shape: ["momentum"] if g.momentum != 0 else [],
    "sgdw": lambda g, shape: ["momentum"] if g.momentum != 0 else [],
    "lars": lambda g, shape: ["momentum"] if g.momentum != 0 else [],
    "sgdp": lambda g, shape: ["momentum"], "muon": lambda g, shape: ["momentum"],
    "adam": lambda g, shape: ["adam_m", "adam_v"] + (["adam_vmax"] if g.amsgrad else []),
    "adamw": lambda g, shape: ["adam_m", "adam_v"] + (["adam_vmax"] if g.amsgrad else []),
    "nadam": lambda g, shape: ["adam_m", "adam_v"], "radam": lambda g, shape: ["adam_m", "adam_v"],
    "nadamlegacy": lambda g, shape: ["adam_m", "adam_v"], "radamlegacy": lambda g, shape: ["adam_m", "adam_v"],
    "laprop": lambda g, shape: ["adam_m", "adam_v"], "mars": lambda g, shape: ["adam_m", "adam_v", "last_grad"],
    "timm-muon": lambda g, shape: (["adam_m", "adam_v"] if _timm_muon_fallback(g, shape) else
                                   ["momentum"] + (["adam_v"] if g.algo == "adamuon" else [])),
    "adafactorbv": lambda g, shape: ((["adam_m"] if g.beta1 is not None else []) +
                                      (["bv_row", "bv_col"] if _bv_factored_dims(g, shape) else ["adam_v"])),
    "nadamw": lambda g, shape: ["adam_m", "adam_v"], "lamb": lambda g, shape: ["adam_m", "adam_v"],
    "adamp": lambda g, shape: ["adam_m", "adam_v"], "adopt": lambda g, shape: ["adam_m", "adam_v"],
    "adan": lambda g, shape: ["adam_m", "adam_v", "exp_avg_diff", "neg_pre_grad"],
    "adabelief": lambda g, shape: ["adam_m", "exp_avg_var"] + (["max_exp_avg_var"] if g.amsgrad else []),
    "lion": lambda g, shape: ["adam_m"], "adamax": lambda g, shape: ["adam_m", "exp_inf"],
    "adagrad": lambda g, shape: ["sum"],
    "rmsprop": lambda g, shape: (["square_avg"] + (["grad_avg"] if g.centered else []) +
                                 (["momentum"] if g.momentum > 0 else [])),
    "rmsproptf": lambda g, shape: (["square_avg"] + (["grad_avg"] if g.centered else []) +
                                   (["momentum"] if g.momentum > 0 else [])),
    "adadelta": lambda g, shape: ["square_avg", "acc_delta"], "rprop": lambda g, shape: ["prev", "step_size"],
    "asgd": lambda g, shape: ["eta", "mu", "ax"],
    "madgrad": lambda g, shape: ["grad_sum_sq", "dual_avg"] + (["x0"] if g.momentum != 0 else []),
    "novograd": lambda g, shape: ["adam_m", "layer_sq"] + (["layer_sq_max"] if g.amsgrad else []),
    "adafactor_torch": lambda g, shape: ["row_var", "col_var"] if len(shape) > 1 else ["variance"],
    "adafactor": lambda g, shape: _adafactor_slots("adafactor", g, shape),
    "adafactor_timm": lambda g, shape: _adafactor_slots("adafactor_timm", g, shape)}


def _lay_out(result, params, state):
    """The state slots of ``result`` and their initial values (``state``: torch.optim's state per parameter
    index, empty for a fresh optimizer)."""
    held = [i for i, n in enumerate(result.group_of) if n is not None]
    def kinds(group, shape):  # (Lookahead's slow weights after the optimizer's own state)
        return _SLOTS[group.kind](group, shape) + (["slow"] if group.lookahead_k else [])
    per_param = {i: kinds(result.groups[result.group_of[i]], params[i].shape) for i in held}
    order = [k for k in _PER_PARAM if any(k in kinds for kinds in per_param.values())]
    slots = [(k, i) for k in order for i in held if k in per_param[i]]

    def start(i, kind):
        key = _PER_PARAM[kind][0]
        value = state.get(i, {}).get(key)
        group = result.groups[result.group_of[i]]
        shape = _slot_shape(kind, group, params[i].shape)
        if value is None:  # fresh: MADGRAD's starting point is the parameter; the rest constants, zeros but for
            # RMSpropTF's square average (ones: TensorFlow's start), Rprop's step sizes and ASGD's step size (lr),
            # ASGD's averaging weight (1). (Adagrad's sum is made at construction, so it is there.)
            if kind == "x0":
                return params[i].detach().clone().float()
            fill = {("rmsproptf", "square_avg"): 1.0, ("rprop", "step_size"): group.lr, ("asgd", "eta"): group.lr,
                    ("asgd", "mu"): 1.0}.get((group.kind, kind), 0.0)
            return torch.full(shape, fill, dtype=torch.float32)
        if tuple(value.shape) != shape:
            raise ValueError(f"the optimizer's {key} of parameter {i} has shape {list(value.shape)}, the step's "
                             f"{list(shape)} (the parameter's {list(params[i].shape)})")
        return value.detach().clone().float()

    initial = [start(i, k) for k, i in slots]
    # Numbers per param group (they depend on the group's options and the step count): NAdam's momentum product,
    # NAdamLegacy's momentum schedule, LaProp's averages
    for n, group in enumerate(result.groups):
        for kind in _GROUP_SLOTS.get(group.kind, ()):
            key, what, fresh = _PER_GROUP[kind]
            values = {float(state[i][key]) if key in state.get(i, {}) else fresh
                      for i in held if result.group_of[i] == n}
            if len(values) > 1:
                raise ValueError(f"the {group.kind} parameters of param group {n} are at different values of its "
                                 f"{what} ({sorted(values)}): the step keeps one per group")
            slots.append((kind, n))
            initial.append(torch.tensor(values.pop() if values else fresh, dtype=torch.float32))
    counted = [i for i in held if result.groups[result.group_of[i]].kind not in _UNCOUNTED]
    # One step counter for all, or one per parameter where they are at different counts (a resumed optimizer
    # with a layer unfrozen later, or a group added later: its parameters have no state, count 0).
    counts = {i: float(state[i]["step"]) if "step" in state.get(i, {}) else 0.0 for i in counted}
    if len(set(counts.values())) > 1:
        grouped = {result.groups[result.group_of[i]].kind for i in counted} & set(_GROUP_SLOTS)
        if grouped:
            raise ValueError(f"the {sorted(grouped)[0]} parameters are at different step counts "
                             f"({sorted(set(counts.values()))}): the step keeps its per-group numbers once per group")
        for i in counted:
            slots.append(("step", i))
            initial.append(torch.tensor(counts[i], dtype=torch.float32))
    elif counted:
        slots.append(("step", None))
        initial.append(torch.tensor(counts[counted[0]], dtype=torch.float32))
    looked = [i for i in held if result.groups[result.group_of[i]].lookahead_k]
    if looked:  # Lookahead's count, and for each parameter the count its slow weights start at
        count = int(state.get(looked[0], {}).get("lookahead_step", 0))
        slots.append(("lookahead_step", None))
        initial.append(torch.tensor(float(count), dtype=torch.float32))
        for i in looked:  # timm makes a slow buffer at a parameter's first sync (a copy: no change then)
            k = result.groups[result.group_of[i]].lookahead_k
            result.slow_from[i] = 0 if "lookahead_slow_buff" in state.get(i, {}) else (count // k + 1) * k
    result.slots, result.initial = slots, initial


def _f64(x):
    return x.double() if isinstance(x, torch.Tensor) else x


def _f32(x):
    return x.float() if isinstance(x, torch.Tensor) else x


def _lerp(start, end, weight):
    """torch.lerp as its kernel computes it: from the nearer end, the weight in float32 (a Python float, or a
    0-d float32 tensor that the step computes)."""
    if isinstance(weight, torch.Tensor):
        return torch.where(weight < 0.5, start + (end - start) * weight, end - (end - start) * (1 - weight))
    weight = _float32(weight)  # (1 - weight is exact from 0.5 on)
    return start + (end - start) * weight if weight < 0.5 else end - (end - start) * (1 - weight)


def _float32(x):
    """A Python float rounded to float32, as PyTorch rounds a scalar that meets a float32 tensor."""
    return struct.unpack("f", struct.pack("f", x))[0]


def _fma(a, b, c):
    """``a * b + c`` rounded once, as PyTorch's CPU kernels compute ``addcmul``, ``add(alpha=)`` and ``lerp``
    (fused multiply-adds; in float64 here, where the float32 product is exact). Where a result cancels
    (a centered RMSprop's ``s - a^2`` over gradients that agree), two roundings parted from PyTorch by 1e-3
    on a resumed MobileNetV3 where PyTorch is 2e-6 from float64."""
    return (_f64(a) * _f64(b) + _f64(c)).float()


def _lerp_fused(start, end, weight):
    """torch.lerp with a Python float weight, fused as its CPU kernel computes it."""
    weight = _float32(weight)
    if weight < 0.5:
        return _fma(end - start, weight, start)
    return _fma(end - start, -(1 - weight), end)


def _caution(direction, g):
    """timm's cautious update: zero where the update's sign disagrees with the gradient's, the rest scaled by
    1 / (the fraction kept, at least 1e-3)."""
    mask = (direction * g > 0).to(direction.dtype)
    return direction * (mask / torch.clamp(mask.mean(), min=1e-3))


def _decay_scale(group, lr):
    """The learning rate decoupled weight decay is scaled by: lr, or lr^2 / max_lr (timm's corrected decay)."""
    return lr if group.max_lr is None else lr ** 2 / group.max_lr


def _newton_schulz(x, group):
    """torch.optim.Muon's orthogonalization of a matrix: in bfloat16, the wide way round, normalized, then
    ``ns_steps`` times ``X = a X + (b G + c G G) X`` with ``G = X X^T``: timm's iteration (``_timm_newton_schulz``)
    with one set of coefficients. Each of its bfloat16 ops computes in float32 and rounds its result once
    (PyTorch's CPU kernels: the norm and the products accumulate in float32, ``addmm`` rounds ``alpha A B +
    beta C`` once; rounding after each of addmm's multiply and add parted by 1e-3 over 8 steps)."""
    return _timm_newton_schulz(x, replace(group, ns_schedule=(group.ns_coefficients,), safety_factor=1.0,
                                          scale_eps=False))


def _timm_newton_schulz(x, group, dtype=torch.bfloat16):
    """timm's ``zeropower_via_newtonschulz`` (and torch.optim.Muon's, ``_newton_schulz``): each bfloat16 op
    rounded once where PyTorch's ends (``addmm`` included), batched over a leading dim, the norm times ``safety_factor`` and clamped to
    ``eps`` (with ``scale_eps``: plus ``eps sqrt(in / out)``), one (a, b, c) per step, the last repeated."""
    def bf16(t):  # (``dtype`` float32: the rule without bfloat16's rounding, for tests)
        return t.to(dtype).float()
    schedule = list(group.ns_schedule)
    schedule = schedule[:group.ns_steps] + [schedule[-1]] * max(0, group.ns_steps - len(schedule))
    eps = group.eps * (x.shape[-1] / x.shape[-2]) ** 0.5 if group.scale_eps else group.eps
    x = bf16(x)
    tall = x.shape[-2] > x.shape[-1]
    if tall:
        x = x.mT
    norm = bf16(bf16(torch.linalg.vector_norm(x, dim=(-2, -1), keepdim=True)) * group.safety_factor)
    x = bf16(x / (bf16(norm + eps) if group.scale_eps else bf16(torch.clamp(norm, min=eps))))
    for a, b, c in schedule:
        gram = bf16(x @ x.mT)
        x = bf16(a * x + bf16(c * (gram @ gram) + b * gram) @ x)
    return x.mT if tall else x


def _timm_muon(group, read, write, param, g, lr, t64):
    """timm's Muon (and AdaMuon) for a parameter fit for it: the momentum (Nesterov) orthogonalized by
    ``_timm_newton_schulz`` (a convolution's weight flattened to (out, in h w), or batched per position),
    scaled by ``adjust_lr_fn``'s factor of its shape; AdaMuon divides it by the root of its own second moment
    (bias-corrected, or RMS-normalized for ``match_rms_adamw``); decoupled decay ``p *= 1 - lr wd`` first."""
    from timm.optim.muon import get_adamuon_lr_scale, get_lr_scale
    buf = write("momentum", _lerp(read("momentum"), g, 1 - group.momentum))
    update = _lerp(g, buf, group.momentum) if group.nesterov else buf
    shape = update.shape
    batched = group.conv_mode == "batched" and update.dim() >= 3
    if update.dim() >= 3:
        update = update.reshape(shape[0], shape[1], -1).permute(2, 0, 1) if batched else update.reshape(shape[0], -1)
    ortho = _timm_newton_schulz(update, group)
    adaptive = group.algo == "adamuon"
    if adaptive:
        scale, rms_norm = get_adamuon_lr_scale(ortho.shape, group.adjust_lr_fn) if group.adjust_lr_fn else (1.0, False)
    else:
        scale, rms_norm = (get_lr_scale(ortho.shape, group.adjust_lr_fn) if group.adjust_lr_fn else 1.0), False
    if batched:
        if group.normalize_spatial and not adaptive:
            scale *= ortho.shape[0] ** -0.5
        ortho = ortho.permute(1, 2, 0)
    ortho = ortho.reshape(shape)
    if adaptive:
        b2 = group.betas[1]
        v = write("adam_v", read("adam_v") * b2 + (ortho * ortho) * (1.0 - b2))
        denom = torch.sqrt(v) + group.eps if rms_norm else \
            torch.sqrt(v / _f32(1.0 - torch.pow(b2, t64))) + group.eps
        ortho = ortho / denom
        if rms_norm:
            ortho = ortho / (torch.linalg.vector_norm(ortho) + group.eps)
        if batched and group.normalize_spatial:
            scale *= math.prod(shape[2:]) ** -0.5
    return param + ortho * -(_f64(lr) * scale if isinstance(lr, torch.Tensor) else lr * scale)


def _nadam_legacy(group, read, write, read_group, write_group, param, g, lr, t64, scalars, key):
    """timm's NAdamLegacy: Nesterov momentum through a warming schedule ``m_schedule`` (a Python float in
    timm's state: float64 at each step here, kept in float32 between steps), the L2 decay already in ``g``."""
    b1, b2 = group.betas[:2]
    if key not in scalars:  # Python floats in timm: float64, rounded where they meet a tensor
        cache = b1 * (1.0 - 0.5 * torch.pow(0.96, t64 * group.schedule_decay))
        cache_next = b1 * (1.0 - 0.5 * torch.pow(0.96, (t64 + 1) * group.schedule_decay))
        schedule = _f64(read_group("m_schedule")) * cache
        schedule_next = schedule * cache_next
        write_group("m_schedule", _f32(schedule))
        scalars[key] = (_f32(torch.sqrt(1 - torch.pow(b2, t64))),
                        _f32(-_f64(lr) * (1.0 - cache) / (1.0 - schedule)),
                        _f32(-_f64(lr) * cache_next / (1.0 - schedule_next)))
    bc2_sqrt, grad_factor, avg_factor = scalars[key]
    m = write("adam_m", read("adam_m") * b1 + g * (1 - b1))
    v = write("adam_v", read("adam_v") * b2 + (g * g) * (1 - b2))
    denom = torch.sqrt(v) / bc2_sqrt + group.eps
    param = param + grad_factor * g / denom  # (addcdiv: value * t1 / t2)
    return param + avg_factor * m / denom


def _radam_legacy(group, read, write, param, g, lr, t64):
    """timm's RAdamLegacy: RAdam's rectified step where the approximated SMA length is at least 5, else SGD with
    momentum; weight decay ``p -= wd lr p`` before the update."""
    b1, b2 = group.betas[:2]
    v = write("adam_v", read("adam_v") * b2 + (g * g) * (1 - b2))
    m = write("adam_m", read("adam_m") * b1 + g * (1 - b1))
    beta2_t = torch.pow(b2, t64)
    sma_max = 2 / (1 - b2) - 1
    sma = sma_max - 2 * t64 * beta2_t / (1 - beta2_t)
    ready = sma >= 5
    bc1 = 1 - torch.pow(b1, t64)
    rectified = torch.sqrt(torch.clamp((1 - beta2_t) * (sma - 4) / (sma_max - 4) * (sma - 2) / sma * sma_max /
                                       (sma_max - 2), min=0.0))
    step = _f32(-torch.where(ready, _f64(lr) * rectified / bc1, _f64(lr) / bc1))
    if group.weight_decay != 0:  # p.add_(p, alpha=-wd * lr)
        param = param + param * -(group.weight_decay * lr)
    return torch.where(ready, param + step * m / (torch.sqrt(v) + group.eps), param + m * step)


def _laprop(group, read, write, read_group, write_group, param, g, lr, t64, scalars, key):
    """timm's LaProp: the gradient normalized by the bias-corrected second moment, then averaged with weight
    ``lr (1 - b1)``; the first moment's bias correction an average of the learning rate (a Python float in timm:
    float64 at each step here, kept in float32 between steps), the second's an average of 1 (a float32 tensor
    in timm); decoupled weight decay after the update."""
    b1, b2 = group.betas[:2]
    if key not in scalars:
        lr_average = _f64(read_group("lr_average")) * b1 + (1 - b1) * _f64(lr)
        write_group("lr_average", _f32(lr_average))
        correction = write_group("correction_average", read_group("correction_average") * b2 + (1 - b2))
        nonzero = lr_average != 0
        scalars[key] = (_f32(torch.where(nonzero, _f64(lr) / torch.where(nonzero, lr_average, 1.0), 0.0)),
                        correction)
    step_size, correction = scalars[key]
    v = write("adam_v", read("adam_v") * b2 + (g * g) * (1 - b2))
    normalized = g / (torch.sqrt(v / correction) + group.eps)
    m = write("adam_m", read("adam_m") * b1 + normalized * (lr * (1 - b1)))
    if group.caution:
        m = _caution(m, g)  # (the state keeps the uncautioned average)
    param = param - step_size * m
    if group.weight_decay != 0:
        param = param + param * -(_decay_scale(group, lr) * group.weight_decay)
    return param


def _round_to(x, dtype_name):
    """``x`` (float32) rounded to bfloat16 / float16 and back: a value kept in that precision."""
    return x if dtype_name == "float32" else x.to(getattr(torch, dtype_name)).float()


def _adafactor_bv(group, read, write, param, g, lr, t64):
    """timm's AdafactorBigVision: ``b2_t = min(beta2_cap, 1 - max(t - offset, 1)^-decay_rate)`` (float64, from the
    step count); the second moment of ``g^2 + eps`` (factored over the two largest dims, keepdim) averaged with
    ``lerp``; ``u = g rsqrt(r / mean(r)) rsqrt(c)`` (or ``g rsqrt(v)``), clipped by its RMS; the momentum a lerp
    kept in ``momentum_dtype`` (bfloat16 by default: each value rounded to it); decoupled decay (``lr wd``, or
    ``wd`` with ``unscaled_wd``; corrected by ``max_lr``); ``p -= lr u``."""
    step = torch.clamp(t64 - group.decay_offset, min=1.0) if group.decay_offset else t64
    weight = _f32(1 - torch.minimum(torch.tensor(group.beta2_cap, dtype=torch.float64),
                                    1.0 - torch.pow(step, -group.decay_rate)))
    squared = g * g + group.eps
    dims = _bv_factored_dims(group, param.shape)
    if dims is not None:
        col, row = dims
        r = write("bv_row", _lerp(read("bv_row"), squared.mean(dim=row, keepdim=True), weight))
        c = write("bv_col", _lerp(read("bv_col"), squared.mean(dim=col, keepdim=True), weight))
        update = g * torch.rsqrt(r / r.mean(dim=col, keepdim=True)) * torch.rsqrt(c)
    else:
        update = g * torch.rsqrt(write("adam_v", _lerp(read("adam_v"), squared, weight)))
    if group.clipping_threshold is not None:
        rms = torch.linalg.vector_norm(update) / update.numel() ** 0.5
        update = update / torch.clamp(rms / group.clipping_threshold, min=1.0)
    if group.beta1 is not None:
        kept = group.momentum_dtype
        update = write("adam_m", _round_to(_lerp(read("adam_m"), _round_to(update, kept), 1 - group.beta1), kept))
        if group.caution:
            update = _caution(update, g)
    update = update * lr
    if group.weight_decay != 0:
        if group.unscaled_wd:
            decay = group.weight_decay if group.max_lr is None else lr / group.max_lr * group.weight_decay
        else:
            decay = _decay_scale(group, lr) * group.weight_decay
        param = param * (1. - decay)
    return param - update


def _mars(group, read, write, param, g, lr, t64):
    """timm's Mars: for a weight (every parameter with ``optimize_1d``) the gradient corrected by its change since
    the last step, ``c = g + gamma b1 / (1 - b1) (g - g_last)`` (``g`` itself at the first step), divided by
    ``max(1, ||c||)``, then AdamW's (or Lion's) update of it; other parameters AdamW with ``betas_1d`` and
    ``lr * lr_1d_factor``; the decay ``wd p`` inside the update; the last gradient kept as state."""
    last = read("last_grad")
    write("last_grad", g)
    corrected = group.optimize_1d or param.dim() >= 2
    b1, b2 = group.betas[:2] if corrected else group.betas_1d[:2]
    if corrected:
        c = torch.where(t64 == 1, g, (g - last) * (group.gamma * (b1 / (1. - b1))) + g)
        c = c / torch.clamp(torch.linalg.vector_norm(c), min=1.0)
    else:
        c = g
    m = write("adam_m", read("adam_m") * b1 + c * (1. - b1))
    shown = _caution(m, g) if group.caution else m
    if corrected and group.mars_type == "lion":
        update = param * group.weight_decay + torch.sign(shown)
    else:
        v = write("adam_v", read("adam_v") * b2 + (c * c) * (1. - b2))
        denom = torch.sqrt(v) / _f32(torch.sqrt(1.0 - torch.pow(b2, t64))) + group.eps
        update = param * group.weight_decay + shown / _f32(1.0 - torch.pow(b1, t64)) / denom
    return param - (lr if corrected else lr * group.lr_1d_factor) * update


def _madgrad(group, read, write, param, g, lr, t64):
    """timm's MADGRAD: dual averaging, ``lamb = (lr + eps) sqrt(t)`` weighting the sums of gradients and of
    their squares, the step from the starting point ``x0`` over the cube root of the latter; with momentum
    the parameter moves toward that point by ``1 - momentum``."""
    if group.weight_decay != 0:
        if group.decoupled:
            param = param * (1.0 - lr * group.weight_decay)
        else:
            g = g + group.weight_decay * param
    lamb = _f32((_f64(lr) + group.eps) * torch.sqrt(t64))
    if group.momentum == 0:
        x0 = param + read("dual_avg") / (torch.pow(read("grad_sum_sq"), 1 / 3) + group.eps)
    else:
        x0 = read("x0")
    squares = write("grad_sum_sq", read("grad_sum_sq") + lamb * g * g)
    s = write("dual_avg", read("dual_avg") + lamb * g)
    z = x0 - s / (torch.pow(squares, 1 / 3) + group.eps)
    if group.momentum == 0:
        return z
    return param * group.momentum + (1 - group.momentum) * z


def _novograd(group, read, write, param, g, lr, t64=None):
    """timm's NvNovoGrad: one second moment per parameter tensor (its squared gradient norm, starting at the first
    norm), the normalized gradient's momentum (``grad_averaging``: times 1 - b1)."""
    b1, b2 = group.betas
    norm = torch.sum(g * g)
    old = read("layer_sq")
    v = write("layer_sq", torch.where(old == 0, norm, old * b2 + norm * (1 - b2)))
    if group.amsgrad:
        v = write("layer_sq_max", torch.maximum(read("layer_sq_max"), v))
    update = g / (torch.sqrt(v) + group.eps)
    if group.weight_decay != 0:
        if group.decoupled:
            param = param * (1.0 - _decay_scale(group, lr) * group.weight_decay)
        else:
            update = update + group.weight_decay * param
    if group.grad_averaging:
        update = update * (1 - b1)
    m = write("adam_m", read("adam_m") * b1 + update)
    return param - lr * m


def _projection(p, g, perturb, group):
    """timm's AdamP / SGDP projection: where a weight looks scale-invariant (its gradient nearly orthogonal to
    it, per output channel, else as a whole), the update's radial part is removed and the weight decay scaled
    by ``wd_ratio``. timm picks the first view that qualifies with Python branches; here they are selects.
    Returns the update and the weight decay's factor."""
    shape = (-1,) + (1,) * (p.ndim - 1)
    views = (lambda x: x.reshape(x.shape[0], -1), lambda x: x.reshape(1, -1))
    result, factor, taken = perturb, torch.ones((), dtype=torch.float32), torch.zeros((), dtype=torch.bool)
    for view in views:
        cosine = torch.abs(F.cosine_similarity(view(g), view(p), dim=1, eps=group.eps))
        qualifies = torch.max(cosine) < group.delta / math.sqrt(view(p).shape[1])
        unit = p / (torch.linalg.vector_norm(view(p), dim=1) + group.eps).reshape(shape)

        def radial(x):
            return unit * view(unit * x).sum(dim=1).reshape(shape)
        projected = perturb - radial(perturb)
        if group.caution:  # against the gradient's tangential part, then projected again
            projected = _caution(projected, g - radial(g))
            projected = projected - radial(projected)
        take = qualifies & ~taken
        result = torch.where(take, projected, result)
        factor = torch.where(take, group.wd_ratio, factor)
        taken = taken | qualifies
    if group.caution:
        result = torch.where(taken, result, _caution(perturb, g))
    return result, factor


def _adamp(kind, group, read, write, param, g, lr, t64):
    """timm's AdamP (Adam's moments) or SGDP (momentum): the update projected (``_projection``) for weights of
    two or more dims, then decay ``p *= 1 - lr wd ratio`` (SGDP: over ``1 - momentum``)."""
    if kind == "adamp":
        b1, b2 = group.betas
        m = write("adam_m", read("adam_m") * b1 + g * (1 - b1))
        v = write("adam_v", read("adam_v") * b2 + (g * g) * (1 - b2))
        denom = torch.sqrt(v) / _f32(torch.sqrt(1 - torch.pow(b2, t64))) + group.eps
        perturb = (b1 * m + (1 - b1) * g) / denom if group.nesterov else m / denom
        size = _f32(_f64(lr) / (1 - torch.pow(b1, t64)))
    else:
        buf = write("momentum", read("momentum") * group.momentum + g * (1 - group.dampening))
        perturb = g + group.momentum * buf if group.nesterov else buf
        size = lr
    factor = 1.0
    if param.ndim > 1:
        perturb, factor = _projection(param, g, perturb, group)
    elif group.caution:
        perturb = _caution(perturb, g)
    if group.weight_decay != 0:
        decay = lr * group.weight_decay * factor
        param = param * (1 - (decay / (1 - group.momentum) if kind == "sgdp" else decay))
    return param - size * perturb


def _adan(group, read, write, param, g, lr, t64):
    """timm's Adan: the new ``param`` (its bias corrections Python floats: float64 here)."""
    b1, b2, b3 = group.betas
    d = torch.where(t64 == 1, torch.zeros_like(g), read("neg_pre_grad") + g)  # g - the last gradient (0 at first)
    m = write("adam_m", _lerp(read("adam_m"), g, 1 - b1))
    diff = write("exp_avg_diff", read("exp_avg_diff") * b2 + d * (1 - b2))
    d = d * b2 + g
    n = write("adam_v", read("adam_v") * b3 + (d * d) * (1 - b3))
    denom = torch.sqrt(n) / _f32(torch.sqrt(1 - torch.pow(b3, t64))) + group.eps
    size, size_diff = _f32(_f64(lr) / (1 - torch.pow(b1, t64))), _f32(_f64(lr) * b2 / (1 - torch.pow(b2, t64)))
    if group.caution:
        m = _caution(m, g)
    if group.no_prox:
        param = param * (1 - lr * group.weight_decay)
    param = param - size * (m / denom) - size_diff * (diff / denom)
    if not group.no_prox:
        param = param / (1 + lr * group.weight_decay)
    write("neg_pre_grad", -g)
    return param


def _adopt(group, read, write, param, g, lr, t64):
    """timm's Adopt: its first step only sets the second moment to g^2; then the update normalized by the
    previous second moment (clipped to (t - 1)^clip_exp), momentum, and the second moment's average."""
    b1, b2 = group.betas
    first = t64 == 1
    if group.weight_decay != 0 and not group.decoupled:
        g = g + group.weight_decay * param
    v = read("adam_v")
    update = param
    if group.weight_decay != 0 and group.decoupled:
        update = update + update * -(_decay_scale(group, lr) * group.weight_decay)
    normed = g / torch.clamp(torch.sqrt(v), min=group.eps)
    if group.clip_exp is not None:
        clip = _f32(torch.pow(t64 - 1, group.clip_exp))
        normed = torch.clamp(normed, -clip, clip)
    m = _lerp(read("adam_m"), normed, 1 - b1)
    write("adam_m", torch.where(first, read("adam_m"), m))
    if group.caution:
        m = _caution(m, g)
    update = update - lr * m
    write("adam_v", torch.where(first, v + g * g, v * b2 + (g * g) * (1 - b2)))
    return torch.where(first, param, update)


def _adabelief(group, read, write, param, g, lr, t64):
    """timm's AdaBelief: the second moment of ``g - m`` (plus eps, kept in the state), RAdam's rectification
    (before it: SGD with momentum, or no step)."""
    b1, b2 = group.betas
    if group.decoupled:
        param = param * (1.0 - (group.weight_decay if group.fixed_decay else lr * group.weight_decay))
    elif group.weight_decay != 0:
        g = g + group.weight_decay * param
    m = write("adam_m", _lerp(read("adam_m"), g, 1 - b1))
    residual = g - m
    v = write("exp_avg_var", read("exp_avg_var") * b2 + (residual * residual) * (1 - b2) + group.eps)
    if group.amsgrad:
        v_max = write("max_exp_avg_var", torch.maximum(read("max_exp_avg_var"), v))
    bc1, bc2 = 1 - torch.pow(b1, t64), 1 - torch.pow(b2, t64)
    denom = torch.sqrt(v_max if group.amsgrad else v) / _f32(torch.sqrt(bc2)) + group.eps
    if not group.rectify:
        return param - _f32(_f64(lr) / bc1) * (m / denom)
    sma_max = 2 / (1 - b2) - 1
    sma = sma_max - 2 * t64 * torch.pow(b2, t64) / bc2
    rectified = torch.sqrt(torch.clamp(bc2 * (sma - 4) / (sma_max - 4) * (sma - 2) / sma * sma_max / (sma_max - 2),
                                       min=0)) / bc1
    sgd = 1.0 / bc1 if group.degenerated_to_sgd else -torch.ones_like(t64)
    return torch.where(sma >= 5, param - _f32(rectified * _f64(lr)) * (m / (torch.sqrt(v) + group.eps)),
                       torch.where(sgd > 0, param - _f32(sgd * _f64(lr)) * m, param))


def _rms(x):
    return torch.linalg.vector_norm(x) / x.numel() ** 0.5


def _adafactor(kind, group, read, write, param, g, lr, t64):
    """transformers' (``kind`` "adafactor") or timm's Adafactor update of ``param``: the parameter after weight
    decay and the update to subtract. ``read`` / ``write`` a state slot of the parameter."""
    hf = kind == "adafactor"
    if group.relative_step:  # min(1e-2 (warm-up: 1e-6 t), 1 / sqrt(t)), Python floats in both
        rel = torch.minimum(1e-6 * t64 if group.warmup_init else torch.full_like(t64, 1e-2), torch.rsqrt(t64))
    else:
        rel = _f64(lr)
    if group.scale_parameter and (hf or group.relative_step):  # max(eps_scale, rms(p)) * rel
        rms = _rms(param)
        lr_t = torch.where(rms > group.eps_scale, rms * _f32(rel), _f32(group.eps_scale * rel))
    else:
        lr_t = _f32(rel)
    beta2t = 1.0 - torch.pow(t64, group.decay_rate)
    squared = g * g + group.eps
    dims = _factored_dims(kind, group, param.shape)

    def average(slot, value):  # transformers: mul_(beta2t).add_(value, alpha=1 - beta2t); timm: lerp_
        old = read(slot)
        if hf:
            return write(slot, old * _f32(beta2t) + value * _f32(1.0 - beta2t))
        return write(slot, _lerp(old, value, _f32(1.0 - beta2t)))
    if dims is not None:
        col, row = dims
        r = average("factored_row", squared.mean(dim=row))
        c = average("factored_col", squared.mean(dim=col))
        u = torch.rsqrt(r / r.mean(dim=col, keepdim=True)).unsqueeze(row) * torch.rsqrt(c.unsqueeze(col)) * g
    else:
        u = torch.rsqrt(average("adam_v", squared)) * g
    u = u / torch.clamp(_rms(u) / group.clip_threshold, min=1.0) * lr_t
    if group.beta1 is not None:
        old = read("adam_m")
        m = write("adam_m", old * group.beta1 + u * (1 - group.beta1) if hf else _lerp(old, u, 1 - group.beta1))
        u = _caution(m, g) if group.caution else m
    if group.weight_decay != 0:
        param = param + param * (-group.weight_decay * lr_t)
    return param, u


def _torch_adafactor(group, read, write, param, g, lr, t64):
    """torch.optim.Adafactor's new ``param``: its scalars (``.item()`` reads and Python floats) in float64."""
    rho = torch.minimum(_f64(lr) * torch.ones_like(t64), torch.rsqrt(t64))  # min(lr, 1 / sqrt(t))
    alpha = torch.maximum(_f64(_rms(param)), torch.full_like(t64, group.eps_scale)) * rho
    weight = _f32(torch.pow(t64, group.decay_rate))  # 1 - beta2_t, the lerp weight
    if group.weight_decay != 0:
        param = param * (1 - lr * group.weight_decay)
    if g.ndim > 1:
        row = write("row_var", _lerp(read("row_var"), torch.linalg.vector_norm(g, dim=-1, keepdim=True).square()
                                     / g.shape[-1], weight))
        col = write("col_var", _lerp(read("col_var"), torch.linalg.vector_norm(g, dim=-2, keepdim=True).square()
                                     / g.shape[-2], weight))
        estimate = (row @ col) / torch.clamp(row.mean(dim=-2, keepdim=True), min=group.eps)
    else:
        estimate = write("variance", _lerp(read("variance"), g * g, weight))
    u = torch.rsqrt(torch.clamp(estimate, min=group.eps * group.eps)) * g
    denom = torch.clamp(_f64(torch.linalg.vector_norm(u)) / (u.numel() ** 0.5 * group.clip_threshold), min=1.0)
    return param + u * _f32(-alpha / denom)


# The rules written as functions of their own, all called as ``rule(group, read, write, param, g, lr, t64)``
# (``read(kind)`` / ``write(kind, value)``: the parameter's state slots).
_RULES = {"madgrad": _madgrad, "novograd": _novograd, "adan": _adan, "adopt": _adopt, "adabelief": _adabelief,
          "radamlegacy": _radam_legacy, "adafactorbv": _adafactor_bv, "mars": _mars, "timm-muon": _timm_muon,
          "adafactor_torch": _torch_adafactor}


def update(p: Plan, params, grads, state, lrs, has_grad):
    """The new parameters and state slots: torch.optim's update of each parameter with its group's options
    (``lrs``: each group's learning rate, a float or a 0-d tensor). A parameter without a gradient (or no
    group) keeps its value and its state, as torch.optim skips it."""
    new_params, new_state = list(params), list(state)
    slot = {s: n for n, s in enumerate(p.slots)}
    t64 = None
    if ("step", None) in slot:
        t = state[slot[("step", None)]] + 1
        new_state[slot[("step", None)]] = t
        t64 = t.double()  # the scalar factors in float64, as torch.optim computes them from a Python count
    scalars = {}  # per group (or parameter, at its own count): the factors its parameters share
    look = None
    if ("lookahead_step", None) in slot:  # Lookahead's count, one step on
        look = new_state[slot[("lookahead_step", None)]] = state[slot[("lookahead_step", None)]] + 1

    def read(kind, owner):
        return state[slot[(kind, owner)]]

    def write(kind, owner, value):
        new_state[slot[(kind, owner)]] = value
        return value

    clips = {}  # timm's Lamb: every gradient of its parameters divided by max(1, their norm / max_grad_norm)
    for owner in {g.owner for g in p.groups if g.kind == "lamb" and g.max_grad_norm is not None}:
        norms = [torch.linalg.vector_norm(g) for g, n, h in zip(grads, p.group_of, has_grad)
                 if n is not None and h and p.groups[n].owner == owner]
        if norms:
            limit = next(g.max_grad_norm for g in p.groups if g.owner == owner)
            clips[owner] = torch.clamp(torch.linalg.vector_norm(torch.stack(norms)) / limit, min=1.0)

    for i, (param, g) in enumerate(zip(params, grads)):
        n = p.group_of[i]
        if n is None or not has_grad[i]:
            continue
        if ("step", i) in slot:  # its own step count (parameters at different counts)
            t = state[slot[("step", i)]] + 1
            new_state[slot[("step", i)]] = t
            t64 = t.double()
        key = (n, i) if ("step", i) in slot else n  # the scalars' key: a group's, or this parameter's count
        group, lr = p.groups[n], lrs[n]
        if group.kind == "timm-muon" and _timm_muon_fallback(group, param.shape):
            # timm's Muon updates the parameters unfit for it (biases, norms, embeddings of extreme aspect) with
            # AdamW (NAdamW with nesterov) at lr * fallback_lr_scale
            group = replace(group, kind="nadamw" if group.nesterov else "adamw", caution=False, max_lr=None,
                            clipping_threshold=None, amsgrad=False)
            lr, key = lr * group.fallback_lr_scale, (key, "fallback")
        kind = group.kind
        b1, b2 = group.betas[:2]
        def own_read(kind, i=i):  # this parameter's state slots
            return read(kind, i)

        def own_write(kind, value, i=i):
            return write(kind, i, value)
        if group.maximize:
            g = -g
        if group.weight_decay != 0 and kind not in ("lamb", "lars", "adafactor", "adafactor_timm",
                                                      "adafactor_torch", "adan", "adopt", "adabelief", "adamp",
                                                      "sgdp", "madgrad", "novograd", "radamlegacy",
                                                      "laprop", "mars", "adafactorbv"):  # (theirs below)
            if group.decoupled:  # param.mul_(1 - lr * weight_decay)
                param = param * (1 - _decay_scale(group, lr) * group.weight_decay)
            else:
                g = g + group.weight_decay * param
        if kind in ("sgd", "sgdw"):
            if group.momentum != 0:
                buf = write("momentum", i, read("momentum", i) * group.momentum + g)
                direction = g + group.momentum * buf if group.nesterov else buf
                g = _caution(direction, g) if group.caution else direction
            new_params[i] = param - lr * g
        elif kind in ("adam", "adamw", "nadamw"):
            m = write("adam_m", i, read("adam_m", i) + (g - read("adam_m", i)) * (1 - b1))
            v = write("adam_v", i, read("adam_v", i) * b2 + (g * g) * (1 - b2))
            if group.amsgrad:
                v = write("adam_vmax", i, torch.maximum(read("adam_vmax", i), v))
            if key not in scalars:  # lr / (1 - b1^t) and sqrt(1 - b2^t)
                scalars[key] = (_f32(_f64(lr) / (1 - torch.pow(b1, t64))), _f32(torch.sqrt(1 - torch.pow(b2, t64))))
            step_size, bc2_sqrt = scalars[key]
            if kind == "nadamw":  # timm's NAdamW: the first moment one step ahead
                m = _lerp(m, g, 1 - b1)
            denom = torch.sqrt(v) / bc2_sqrt + group.eps
            if group.clipping_threshold is not None:  # timm's RMS update clipping (StableAdamW)
                rms = torch.linalg.vector_norm(g / denom) / g.numel() ** 0.5
                denom = denom * torch.clamp(rms / group.clipping_threshold, min=1.0)
            if group.caution:
                m = _caution(m, g)
            new_params[i] = param - step_size * (m / denom)
        elif kind == "rmsprop":
            if group.centered:  # s - a^2 cancels: each op rounded as PyTorch's fused kernels round it
                sq = write("square_avg", i, _fma(_float32(1 - group.alpha) * g, g, read("square_avg", i) * group.alpha))
                a = write("grad_avg", i, _lerp_fused(read("grad_avg", i), g, 1 - group.alpha))
                avg = torch.sqrt(_fma(-a, a, sq)) + group.eps
            else:
                sq = write("square_avg", i, read("square_avg", i) * group.alpha + (g * g) * (1 - group.alpha))
                avg = torch.sqrt(sq) + group.eps
            if group.momentum > 0:
                buf = write("momentum", i, read("momentum", i) * group.momentum + g / avg)
                new_params[i] = param - lr * buf
            else:
                new_params[i] = param - lr * (g / avg)
        elif kind == "adagrad":
            s = write("sum", i, read("sum", i) + g * g)
            if key not in scalars:
                scalars[key] = _f32(_f64(lr) / (1 + (t64 - 1) * group.lr_decay))
            new_params[i] = param - scalars[key] * (g / (torch.sqrt(s) + group.eps))
        elif kind == "adamax":
            m = write("adam_m", i, read("adam_m", i) + (g - read("adam_m", i)) * (1 - b1))
            u = write("exp_inf", i, torch.maximum(read("exp_inf", i) * b2, torch.abs(g) + group.eps))
            if key not in scalars:
                scalars[key] = _f32(_f64(lr) / (1 - torch.pow(b1, t64)))
            new_params[i] = param - scalars[key] * (m / u)
        elif kind == "nadam":
            if key not in scalars:
                mu = b1 * (1.0 - 0.5 * torch.pow(0.96, t64 * group.momentum_decay))
                mu_next = b1 * (1.0 - 0.5 * torch.pow(0.96, (t64 + 1) * group.momentum_decay))
                product = write("mu_product", n, read("mu_product", n) * _f32(mu))  # a float32 tensor in torch.optim
                scalars[key] = (_f32(1 - torch.pow(b2, t64)), _f32(_f64(lr) * (1.0 - mu) / (1.0 - _f64(product))),
                              _f32(_f64(lr) * mu_next / (1.0 - _f64(product) * mu_next)))
            bc2, grad_factor, avg_factor = scalars[key]
            m = write("adam_m", i, read("adam_m", i) + (g - read("adam_m", i)) * (1 - b1))
            v = write("adam_v", i, read("adam_v", i) * b2 + (g * g) * (1 - b2))
            denom = torch.sqrt(v / bc2) + group.eps
            new_params[i] = param - grad_factor * (g / denom) - avg_factor * (m / denom)
        elif kind == "rmsproptf":  # timm's RMSpropTF: eps inside the root, the lr inside the momentum
            if group.centered:  # (as torch.optim's RMSprop above; add_ with alpha is fused too)
                sq = write("square_avg", i, _fma(g * g - read("square_avg", i), _float32(1 - group.alpha),
                                                  read("square_avg", i)))
                a = write("grad_avg", i, _fma(g - read("grad_avg", i), _float32(1 - group.alpha), read("grad_avg", i)))
                avg = torch.sqrt(_fma(-a, a, sq) + group.eps)
            else:
                sq = write("square_avg", i, read("square_avg", i) + (g * g - read("square_avg", i)) * (1 - group.alpha))
                avg = torch.sqrt(sq + group.eps)
            if group.momentum > 0:
                buf = write("momentum", i, read("momentum", i) * group.momentum +
                            (lr * (g / avg) if group.lr_in_momentum else g / avg))
                if group.caution:
                    buf = _caution(buf, g)  # (the state keeps the uncautioned buffer)
                new_params[i] = param - buf if group.lr_in_momentum else param - lr * buf
            else:
                new_params[i] = param - lr * (g / avg)
        elif kind == "lion":
            m = read("adam_m", i)
            direction = torch.sign(_lerp(m, g, 1 - b1))
            if group.caution:
                direction = _caution(direction, g)
            new_params[i] = param - lr * direction
            write("adam_m", i, _lerp(m, g, 1 - b2))
        elif kind == "lamb":
            if key not in scalars:  # Python floats in timm: float64, rounded where they meet a tensor
                scalars[key] = ((_f32(1 - torch.pow(b1, t64)), _f32(torch.sqrt(1 - torch.pow(b2, t64))))
                              if group.bias_correction else (1.0, 1.0))
            bc1, bc2_sqrt = scalars[key]
            if group.owner in clips:
                g = g / clips[group.owner]
            m = read("adam_m", i)
            beta3 = 1 - b1 if group.grad_averaging else 1.0
            m = write("adam_m", i, _lerp(m, g, beta3) if beta3 == 1 - b1 else m * b1 + g * beta3)
            v = write("adam_v", i, read("adam_v", i) * b2 + (g * g) * (1 - b2))
            direction = (m / bc1) / (torch.sqrt(v) / bc2_sqrt + group.eps)
            if group.caution:
                direction = _caution(direction, g)
            param = params[i]
            if group.weight_decay != 0:
                if group.decoupled:
                    param = param + param * -(_decay_scale(group, lr) * group.weight_decay)
                else:
                    direction = direction + group.weight_decay * param
            if group.weight_decay != 0 or group.always_adapt:
                w_norm, d_norm = torch.linalg.vector_norm(param), torch.linalg.vector_norm(direction)
                ratio = torch.where(w_norm > 0, torch.where(d_norm > 0, w_norm / d_norm, 1.0), 1.0)
                direction = direction * (torch.clamp(ratio, max=1.0) if group.trust_clip else ratio)
            new_params[i] = param - lr * direction
        elif kind == "lars":
            param = params[i]
            if group.weight_decay != 0 or group.always_adapt:
                w_norm, g_norm = torch.linalg.vector_norm(param), torch.linalg.vector_norm(g)
                ratio = group.trust_coeff * w_norm / (g_norm + w_norm * group.weight_decay + group.eps)
                ratio = torch.where(w_norm > 0, torch.where(g_norm > 0, ratio, 1.0), 1.0)
                if group.trust_clip:
                    ratio = torch.clamp(ratio / lr, max=1.0)
                g = (g + group.weight_decay * param) * ratio
            if group.momentum != 0:
                buf = write("momentum", i, read("momentum", i) * group.momentum + g)
                g = g + group.momentum * buf if group.nesterov else buf
            new_params[i] = param - lr * g
        elif kind == "adadelta":
            sq = write("square_avg", i, read("square_avg", i) * group.rho + (g * g) * (1 - group.rho))
            delta = torch.sqrt(read("acc_delta", i) + group.eps) / torch.sqrt(sq + group.eps) * g
            write("acc_delta", i, read("acc_delta", i) * group.rho + (delta * delta) * (1 - group.rho))
            new_params[i] = param - lr * delta
        elif kind == "rprop":  # the step size grows where the gradient keeps its sign, shrinks where it flips
            sign = torch.sign(g * read("prev", i))
            minus, plus = group.etas
            factor = torch.where(sign > 0, plus, torch.where(sign < 0, minus, 1.0))
            size = write("step_size", i, torch.clamp(read("step_size", i) * factor, *group.step_sizes))
            g = torch.where(factor == minus, 0.0, g)  # (no step where the sign flipped)
            write("prev", i, g)
            new_params[i] = param - torch.sign(g) * size
        elif kind == "asgd":  # eta and mu as torch.optim keeps them: float32 numbers from the last step
            eta, mu = read("eta", i), read("mu", i)
            param = param * (1 - group.lambd * _f64(eta)).float() - _f64(eta).float() * g
            ax = read("ax", i)
            write("ax", i, torch.where(mu != 1, ax + (param - ax) * mu, param))
            write("eta", i, _f32(_f64(lr) / (1 + group.lambd * _f64(lr) * t64) ** group.alpha))
            write("mu", i, _f32(1 / torch.clamp(t64 - group.t0, min=1.0)))
            new_params[i] = param
        elif kind in ("nadamlegacy", "laprop"):  # (with numbers per param group)
            rule = _nadam_legacy if kind == "nadamlegacy" else _laprop
            new_params[i] = rule(group, own_read, own_write, lambda kind: read(kind, n),
                                 lambda kind, value: write(kind, n, value), param, g, lr, t64, scalars, key)
        elif kind in _RULES:
            new_params[i] = _RULES[kind](group, own_read, own_write, param, g, lr, t64)
        elif kind in ("adamp", "sgdp"):
            new_params[i] = _adamp(kind, group, own_read, own_write, param, g, lr, t64)
        elif kind == "muon":  # the momentum (Nesterov) orthogonalized by Newton-Schulz in bfloat16
            buf = write("momentum", i, _lerp(read("momentum", i), g, 1 - group.momentum))
            direction = _newton_schulz(_lerp(g, buf, group.momentum) if group.nesterov else buf, group)
            rows, cols = param.shape[:2]
            ratio = {None: math.sqrt(max(1, rows / cols)), "original": math.sqrt(max(1, rows / cols)),
                     "match_rms_adamw": 0.2 * math.sqrt(max(rows, cols)),
                     "spectral_unclamped": math.sqrt(rows / cols)}.get(group.adjust_lr_fn, 1.0)
            new_params[i] = param + direction * -(_f64(lr) * ratio if isinstance(lr, torch.Tensor) else lr * ratio)
        elif kind in ("adafactor", "adafactor_timm"):
            m, u = _adafactor(kind, group, own_read, own_write, params[i], g, lr, t64)
            new_params[i] = m - u
        else:  # radam
            if key not in scalars:
                bc2 = 1 - torch.pow(b2, t64)
                rho_inf = 2 / (1 - b2) - 1
                rho_t = rho_inf - 2 * t64 * torch.pow(b2, t64) / bc2
                rect = torch.sqrt(torch.clamp((rho_t - 4) * (rho_t - 2) * rho_inf /
                                              ((rho_inf - 4) * (rho_inf - 2) * rho_t), min=0))
                scalars[key] = (_f32(1 - torch.pow(b1, t64)), _f32(torch.sqrt(bc2)), _f32(rect), rho_t > 5.0)
            bc1, bc2_sqrt, rect, rectified = scalars[key]
            m = write("adam_m", i, read("adam_m", i) + (g - read("adam_m", i)) * (1 - b1))
            v = write("adam_v", i, read("adam_v", i) * b2 + (g * g) * (1 - b2))
            corrected = m / bc1
            adaptive = bc2_sqrt / (torch.sqrt(v) + group.eps)
            new_params[i] = param - torch.where(rectified, corrected * lr * adaptive * rect, corrected * lr)
        if group.lookahead_k:  # timm's Lookahead: every k steps the slow weights move toward the fast ones
            fast, slow = new_params[i], read("slow", i)  # by alpha (add_ with alpha: fused), and the fast
            sync = torch.remainder(look, group.lookahead_k) == 0  # weights restart from them
            moved = torch.where(look > p.slow_from[i], _fma(fast - slow, group.lookahead_alpha, slow), fast)
            slow = write("slow", i, torch.where(sync, moved, slow))
            new_params[i] = torch.where(sync, slow, fast)
    return new_params, new_state
