"""torch.ao's ``FakeQuantize`` with its min / max observer, computed without reading tensor values.

``FakeQuantize.forward`` (the legacy quantization-aware training of ``torch.ao.quantization.default_qat_qconfig``,
``default_fake_quant``, ``default_per_channel_weight_fake_quant`` and every ``FakeQuantize.with_args(observer=...)``)
decides its computation by values the step changes: its enable flags (``observer_enabled[0] == 1``), whether
its moving-average observer has observed anything yet (``min_val == inf and max_val == -inf``; for the
per-channel observers, whether the running range is still empty), the range check of ``calculate_qparams``,
and the ``float()`` of a 0-d scale. A captured step would keep the example's branch at every step, so the
capture refuses them. While the step is captured, :func:`value_free` replaces ``FakeQuantize.forward`` by
:func:`_forward`, which computes the same function with selects instead of branches:

1. the observer's new range: the input's minimum and maximum (per tensor, or per channel along ``ch_axis``);
   ``MinMaxObserver`` / ``PerChannelMinMaxObserver`` take the running minimum and maximum with it, the moving-average
   ones ``old + c * (new - old)``, or the input's own range where nothing was observed yet (a running range of
   +inf / -inf; an empty per-channel range is sized to that at the export, in the step's state only);
2. the scale and zero point from that range as ``UniformQuantizationObserverBase._calculate_qparams`` computes
   them (symmetric, affine and float-qparams schemes), a 0-d result as shape [1];
3. range, scale and zero point kept where ``observer_enabled`` is 0; the fake quantization (ATen's, its
   straight-through gradient) applied where ``fake_quant_enabled`` is 1, the input passed through elsewhere.

Other observers (histogram, fixed or learned parameters) keep torch.ao's own forward; ``FusedMovingAvgObsFakeQuantize``
and the learnable fake quantizers define their own forward and are not touched.
"""

from __future__ import annotations

import contextlib
import math

import torch


def _observers():
    from torch.ao.quantization import observer as o
    return {o.MinMaxObserver: (False, False), o.MovingAverageMinMaxObserver: (False, True),
            o.PerChannelMinMaxObserver: (True, False), o.MovingAveragePerChannelMinMaxObserver: (True, True)}


def handles(fake_quantize) -> bool:
    """Whether :func:`_forward` computes ``fake_quantize``'s forward (a plain FakeQuantize with a min / max
    observer of one of the four classes above, not a subclass)."""
    from torch.ao.quantization import FakeQuantize
    return type(fake_quantize) is FakeQuantize and type(fake_quantize.activation_post_process) in _observers()


def empty_range_sizes(model, resized, which=handles):
    """The fills of the buffers of ``model``'s fake quantizers that ``which`` picks (those :func:`_forward`
    handles, by default) and ``resized`` (name -> the shape the first forward pass gives them) names: running
    minimum +inf, maximum -inf (nothing observed yet, as :func:`_forward` and ATen's fused observer read
    them), scale and zero point their current first value repeated. Returns ``{name: (shape, fill)}``; the
    names are taken out of ``resized``."""
    sizes = {}
    for name, module in model.named_modules():
        if not which(module):
            continue
        prefix = f"{name}." if name else ""
        for leaf, fill in {"activation_post_process.min_val": math.inf,
                           "activation_post_process.max_val": -math.inf, "scale": None, "zero_point": None}.items():
            shape = resized.pop(prefix + leaf, None)
            if shape is not None:
                tensor = module.get_buffer(leaf)
                sizes[prefix + leaf] = (shape, fill if fill is not None else
                                        (tensor.reshape(-1)[0].item() if tensor.numel() else 0))
    return sizes


def _divide(a, b):
    """``a / b`` in float32, correctly rounded: divided in float64 (TOSA divides as a multiplication by the
    reciprocal, one ulp off; a symmetric scale puts the range's ends exactly on a rounding tie, x / scale =
    +-127.5, which one ulp decides)."""
    return (a.double() / (b.double() if isinstance(b, torch.Tensor) else b)).float()


def _qparams(observer, min_val, max_val):
    """``UniformQuantizationObserverBase._calculate_qparams`` for a valid range, without its value reads."""
    quant_min, quant_max = observer.quant_min, observer.quant_max
    min_val_neg = torch.minimum(min_val, torch.zeros_like(min_val))
    max_val_pos = torch.maximum(max_val, torch.zeros_like(max_val))
    zero_point = torch.zeros(min_val_neg.size(), dtype=torch.int64)
    if observer.qscheme in (torch.per_tensor_symmetric, torch.per_channel_symmetric):
        max_val_pos = torch.maximum(-min_val_neg, max_val_pos)
        scale = torch.maximum(_divide(max_val_pos, float(quant_max - quant_min) / 2), observer.eps)
        if observer.dtype in (torch.quint8, torch.uint8):
            zero_point = zero_point + ((quant_min + quant_max) // 2 if observer.has_customized_qrange else 128)
        elif observer.dtype == torch.uint16:
            zero_point = zero_point + 2 ** 15
    elif observer.qscheme == torch.per_channel_affine_float_qparams:
        scale = _divide(max_val - min_val, float(quant_max - quant_min))
        scale = torch.where(scale > observer.eps, scale, torch.ones_like(scale))
        zero_point = _divide(-1 * min_val, scale)
    else:
        scale = torch.maximum(_divide(max_val_pos - min_val_neg, float(quant_max - quant_min)), observer.eps)
        zero_point = torch.clamp(quant_min - torch.round(_divide(min_val_neg, scale)).to(torch.int), quant_min,
                                 quant_max)
    return scale.reshape(-1) if scale.dim() == 0 else scale, zero_point.reshape(-1) if zero_point.dim() == 0 \
        else zero_point


def _forward(self, X):
    """``FakeQuantize.forward`` with selects for its branches (module comment), in float32 under AMP as every
    quantizer (a ``torch.autocast(enabled=False)`` region, which the capture pins ``#amp.precision<f32>``:
    PyTorch's quantizers take float32 only)."""
    with torch.autocast("cpu", enabled=False):
        return _observed_and_quantized(self, X)


def _observed_and_quantized(self, X):
    observer = self.activation_post_process
    per_channel, moving = _observers()[type(observer)]
    observe = self.observer_enabled[0] == 1
    if X.numel() != 0:  # (the observers return an empty input as it is)
        x = X.detach().to(observer.min_val.dtype)
        if per_channel:
            current_min, current_max = torch.aminmax(x.transpose(0, observer.ch_axis).flatten(1), dim=1)
        else:
            current_min, current_max = torch.aminmax(x)
        old_min, old_max = observer.min_val, observer.max_val
        if moving:
            fresh = torch.isinf(old_min) & torch.isinf(old_max)  # +inf / -inf: nothing observed yet
            c = observer.averaging_constant
            new_min = torch.where(fresh, current_min, old_min + c * (current_min - old_min))
            new_max = torch.where(fresh, current_max, old_max + c * (current_max - old_max))
        else:
            new_min, new_max = torch.minimum(current_min, old_min), torch.maximum(current_max, old_max)
        new_min, new_max = torch.where(observe, new_min, old_min), torch.where(observe, new_max, old_max)
        observer.min_val.copy_(new_min)
        observer.max_val.copy_(new_max)
        scale, zero_point = _qparams(observer, new_min, new_max)
        self.scale.copy_(torch.where(observe, scale.to(self.scale.dtype), self.scale))
        self.zero_point.copy_(torch.where(observe, zero_point.to(self.zero_point.dtype), self.zero_point))
    if self.is_per_channel:
        quantized = torch.fake_quantize_per_channel_affine(X, self.scale, self.zero_point, self.ch_axis,
                                                           observer.quant_min, observer.quant_max)
    else:
        quantized = torch.fake_quantize_per_tensor_affine(X, self.scale, self.zero_point, observer.quant_min,
                                                          observer.quant_max)
    return torch.where(self.fake_quant_enabled[0] == 1, quantized, X)


@contextlib.contextmanager
def value_free():
    """``FakeQuantize.forward`` computed by :func:`_forward` for the fake quantizers it handles, inside."""
    from torch.ao.quantization import FakeQuantize
    original = FakeQuantize.forward

    def forward(self, X):
        return _forward(self, X) if handles(self) else original(self, X)

    FakeQuantize.forward = forward
    try:
        yield
    finally:
        FakeQuantize.forward = original
