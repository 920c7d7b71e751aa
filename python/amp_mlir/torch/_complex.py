"""Complex tensors of a captured training step as pairs of real numbers.

Neither torch-mlir's conversions nor TOSA / linalg on tensors take complex element types, and models use
them: rotary position embeddings written as a complex product (Meta's Llama code, DeepSeek-V2, Llama 4:
``view_as_real(view_as_complex(q) * freqs_cis)``), whose backward multiplies by ``_conj(freqs_cis)``.

The algorithm: the captured graph (one flat aten graph, after decomposition) is run again by
:class:`RealPairs`, an FX interpreter, under ``make_fx``; each value of complex type is carried as its
``view_as_real`` form, a real tensor with one more trailing dimension of size 2 (real, imaginary), wrapped
in :class:`Pair` so that every rule knows which operands are complex. Each aten op that reads or makes a
complex value is rewritten by its rule in ``RULES`` into real ops on those pairs:

- ``view_as_complex`` / ``view_as_real`` are the pair itself; ``complex(re, im)`` and ``polar(r, t)``
  stack the two parts; ``real`` / ``imag`` select one.
- Products: ``(a + bi)(c + di) = (ac - bd) + (ad + bc)i``, elementwise (``mul``) and as matrix products
  (``mm``, ``bmm``: four real ones); a complex times a real multiplies both parts; ``_conj`` negates the
  imaginary part; ``div`` by a complex is a product with the conjugate over ``|d|^2``.
- Fourier transforms (``_fft_c2c``, ``_fft_r2c``, ``_fft_c2r``: FNet's token mixing, vocoders' inverse
  STFT) as products with the DFT matrix over each dimension (``_dft``), annotated to stay float32 under
  autocast (``F32_RULES``).
- Shape and layout ops (``view``, ``reshape``, ``expand``, ``permute``, ``unsqueeze``, ``slice``,
  ``select``, ``cat``, ``sum``, ...) are the same op on the pair with the dimension arguments taken modulo
  the complex rank (a negative dimension of the complex tensor is not the same dimension of its pair) and
  the trailing 2 kept.
- Complex constants (``get_attr``) become their pairs; a real operand of a complex ``add`` / ``where`` /
  ``cat`` gets a zero imaginary part.

An op on complex values that has no rule is an :class:`UnsupportedOpError` naming it and the model line.
The step's complex buffers (a precomputed ``freqs_cis``) are arguments and results in the pair form already
(``_torch_mlir.import_train_step``), so the rewritten graph has real types only; ``make_fx`` records it
with the original nodes' metadata (source locations, autocast regions).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.fx.traceback as fx_traceback
from torch.fx.experimental.proxy_tensor import make_fx

from ._lower import UnsupportedOpError

aten = torch.ops.aten
prims = torch.ops.prims


def real_dtype(dtype):
    """The real type of a complex type's parts (complex64 -> float32)."""
    return {torch.complex32: torch.float16, torch.complex64: torch.float32,
            torch.complex128: torch.float64}.get(dtype, dtype)


def complex_dtype(dtype):
    """The complex type whose parts have the real type ``dtype``."""
    return {torch.float16: torch.complex32, torch.float32: torch.complex64,
            torch.float64: torch.complex128}.get(dtype, torch.complex64)


def _is_complex(value) -> bool:
    return isinstance(value, torch.Tensor) and value.is_complex()


def has_complex(gm) -> bool:
    """Whether a node of ``gm`` makes a complex tensor."""
    return any(_is_complex(n.meta.get("val")) for n in gm.graph.nodes)


class Pair:
    """A complex tensor of shape ``S`` as the real tensor ``t`` of shape ``S + [2]`` (``view_as_real``)."""

    __slots__ = ("t",)

    def __init__(self, t):
        self.t = t

    @property
    def re(self):
        return self.t.select(-1, 0)

    @property
    def im(self):
        return self.t.select(-1, 1)

    @property
    def rank(self):
        return self.t.dim() - 1


def _stack(re, im):
    return Pair(torch.stack(torch.broadcast_tensors(re, im), -1))


def _as_pair(x, like):
    """``x`` (a Pair, a real tensor or a Python number) as a Pair in the part type of ``like``."""
    if isinstance(x, Pair):
        return x
    if isinstance(x, complex):
        dtype = like.t.dtype
        return Pair(torch.tensor([x.real, x.imag], dtype=dtype, device=like.t.device))
    if isinstance(x, (int, float, bool)):
        return Pair(torch.tensor([float(x), 0.0], dtype=like.t.dtype, device=like.t.device))
    x = x.to(like.t.dtype)
    return _stack(x, torch.zeros_like(x))


def _pairs(a, b):
    """Both operands of a binary op as Pairs: a real one gets a zero imaginary part (in the part type of the
    complex one; a real tensor times a Python complex scalar: the tensor's floating type)."""
    like = a if isinstance(a, Pair) else b if isinstance(b, Pair) else None
    if like is None:
        t = a if isinstance(a, torch.Tensor) else b
        t = t if t.is_floating_point() else t.to(torch.get_default_dtype())
        like = Pair(torch.stack([t, torch.zeros_like(t)], -1))
    return _as_pair(a, like), _as_pair(b, like)


def _dim(d, rank):
    return d % rank if rank else 0


def _dims(ds, rank):
    if ds is None or (isinstance(ds, (list, tuple)) and len(ds) == 0):
        return list(range(rank))
    if isinstance(ds, int):
        return [_dim(ds, rank)]
    return [_dim(d, rank) for d in ds]


def _mul(a, b):
    if isinstance(a, Pair) != isinstance(b, Pair) and not isinstance(a, complex) and not isinstance(b, complex):
        p, r = (a, b) if isinstance(a, Pair) else (b, a)  # complex times real: both parts scaled
        return Pair(p.t * (r.unsqueeze(-1) if isinstance(r, torch.Tensor) else r))
    a, b = _pairs(a, b)
    return _stack(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)


def _conj(p):
    return _stack(p.re, -p.im)


def _div(a, b, rounding_mode=None):
    if rounding_mode is not None:
        raise UnsupportedOpError("a rounding division of complex tensors")
    if isinstance(a, Pair) and not isinstance(b, (Pair, complex)):
        return Pair(a.t / (b.unsqueeze(-1) if isinstance(b, torch.Tensor) else b))
    a, b = _pairs(a, b)
    norm = b.re * b.re + b.im * b.im
    num = _mul(a, _conj(b))
    return Pair(num.t / norm.unsqueeze(-1))


def _add(a, b, alpha=1, sign=1):
    a, b = _pairs(a, b)
    scale = sign * alpha
    if isinstance(scale, complex):
        b, scale = _mul(b, scale), 1
    return Pair(a.t + scale * b.t if scale != 1 else a.t + b.t)


def _matmul(op):
    def rule(a, b):
        a, b = _pairs(a, b)
        return _stack(op(a.re, b.re) - op(a.im, b.im), op(a.re, b.im) + op(a.im, b.re))
    return rule


def _layout(op, fix):
    """The op on the pair, its arguments after the first rewritten by ``fix(rank, *args)``."""
    def rule(p, *args, **kwargs):
        return Pair(op(p.t, *fix(p.rank, *args), **kwargs))
    return rule


def _cat(tensors, dim=0):
    like = next(t for t in tensors if isinstance(t, Pair))
    pairs = [_as_pair(t, like) for t in tensors]
    return Pair(torch.cat([p.t for p in pairs], _dim(dim, like.rank)))


def _where(cond, a, b):
    a, b = _pairs(a, b)
    return Pair(torch.where(cond.unsqueeze(-1), a.t, b.t))


def _sum(p, dims=None, keepdim=False, dtype=None):
    out = p.t.sum(_dims(dims, p.rank), keepdim=keepdim)
    return Pair(out.to(real_dtype(dtype)) if dtype is not None else out)


def _mean(p, dims=None, keepdim=False, dtype=None):
    out = p.t.mean(_dims(dims, p.rank), keepdim=keepdim)
    return Pair(out.to(real_dtype(dtype)) if dtype is not None else out)


def _convert(x, dtype, **_):
    """``_to_copy`` / ``convert_element_type``: complex <-> complex changes the parts' type, real -> complex
    adds a zero imaginary part, complex -> real keeps the real part (as PyTorch does)."""
    if dtype is None:
        return Pair(x.t.clone()) if isinstance(x, Pair) else x.clone()
    if dtype.is_complex:
        part = real_dtype(dtype)
        if isinstance(x, Pair):
            return Pair(x.t.to(part))
        x = x.to(part)
        return _stack(x, torch.zeros_like(x))
    return x.re.to(dtype)


def _to_copy(x, dtype=None, **kwargs):
    return _convert(x, dtype)


def _full(size, value, *, dtype=None, **kwargs):
    part = real_dtype(dtype)
    value = complex(value)
    return _stack(torch.full(size, value.real, dtype=part), torch.full(size, value.imag, dtype=part))


def _full_like(x, value, *, dtype=None, **kwargs):
    shape = x.t.shape[:-1] if isinstance(x, Pair) else x.shape
    part = real_dtype(dtype) if dtype is not None else (x.t.dtype if isinstance(x, Pair) else x.dtype)
    value = complex(value)
    return _stack(torch.full(shape, value.real, dtype=part), torch.full(shape, value.imag, dtype=part))


def _scalar_tensor(value, *, dtype=None, **kwargs):
    return _full((), value, dtype=dtype)


def _gather(p, dim, index, sparse_grad=False):
    index = index.unsqueeze(-1).expand(*index.shape, 2)
    return Pair(torch.gather(p.t, _dim(dim, p.rank), index))


def _index(p, indices):
    # Advanced indexing at the complex dimensions: the pair's trailing dimension is never indexed and stays
    # last (indexed dimensions apart move first, the rest keep their order).
    return Pair(aten.index.Tensor(p.t, list(indices)))


def _exp(p):
    m = torch.exp(p.re)
    return _stack(m * torch.cos(p.im), m * torch.sin(p.im))


def _abs(p):
    return torch.sqrt(p.re * p.re + p.im * p.im)


def _copy(dst, src, non_blocking=False):
    like = dst if isinstance(dst, Pair) else src
    src = _as_pair(src, like) if isinstance(dst, Pair) else src.re
    if isinstance(dst, Pair):
        return Pair(src.t.to(dst.t.dtype).expand_as(dst.t).clone())
    return src.to(dst.dtype).expand_as(dst).clone()


def _slice_scatter(p, src, dim=0, start=None, end=None, step=1):
    src = _as_pair(src, p)
    return Pair(aten.slice_scatter.default(p.t, src.t, _dim(dim, p.rank), start, end, step))


def _select_scatter(p, src, dim, index):
    src = _as_pair(src, p)
    return Pair(aten.select_scatter.default(p.t, src.t, _dim(dim, p.rank), index))


def _normalized(x, normalization, count):
    """``x`` scaled as an FFT's ``normalization`` asks: 0 none, 1 ``1 / sqrt(count)``, 2 ``1 / count``."""
    scale = {0: 1.0, 1: 1.0 / np.sqrt(count), 2: 1.0 / count}[int(normalization)]
    return x * scale if scale != 1.0 else x


def _unit_circle(m, n):
    """``cos`` and ``sin`` of ``2 pi m / n`` for integers ``0 <= m < n``, exact at the quarter turns (``np.sin(pi)``
    is 1.2e-16, not 0: a real signal's Nyquist bin got a tiny imaginary part where PyTorch's FFT has an exact
    0, and its ``angle`` flipped between pi and -pi), without negative zeros."""
    angle = 2.0 * np.pi * m / n
    cos, sin = np.cos(angle), np.sin(angle)
    quarter = (4 * m) % n == 0
    turn = (4 * m // n) % 4
    cos = np.where(quarter, np.array([1.0, 0.0, -1.0, 0.0])[turn], cos)
    sin = np.where(quarter, np.array([0.0, 1.0, 0.0, -1.0])[turn], sin)
    return cos + 0.0, sin + 0.0


#: The longest transform computed as one ``n x n`` product; a longer one whose length has a factor is split
#: (``_dft_last``). Below it the one product costs less than the split's transposes and twiddle factors.
SPLIT_ABOVE = 64


def _split(n):
    """``(n1, n2)`` with ``n = n1 * n2``, the closest such pair, ``n2`` even when ``n`` is: then the middle
    frequency ``n / 2`` is ``k1 = 0``, ``k2 = n2 / 2`` (``_dft_last``), which sums real values when the signal
    is real, with exact table values, so its imaginary part is an exact 0 as in PyTorch's real FFT (a
    rounding residue flips its ``angle`` between pi and -pi). None for a prime ``n``, one up to
    ``SPLIT_ABOVE``, or twice a prime."""
    if n <= SPLIT_ABOVE:
        return None
    pairs = [(n1, n // n1) for n1 in range(2, n // 2 + 1) if n % n1 == 0 and (n % 2 or (n // n1) % 2 == 0)]
    return min(pairs, key=sum, default=None)


def _table(values, like):
    return torch.tensor(values, dtype=like.dtype, device=like.device)


def _dft_last(re, im, sign):
    """The transform ``X_k = sum_j x_j exp(sign 2 pi i jk / n)`` of the pair ``(re, im)`` along its last
    dimension, as parts. Up to ``SPLIT_ABOVE`` samples (or a prime count), one product with the ``n x n``
    table (constants computed in float64, ``jk mod n`` and exact at the quarter turns: ``_unit_circle``),
    ``O(n^2)``. Longer ones are split as Cooley and Tukey do, ``n = n1 * n2`` (``_split``), ``O(n (n1 + n2))``:
    with ``j = j1 n2 + j2`` and ``k = k1 + n1 k2``,
    ``X_k = sum_j2 W_n2^(j2 k2) W_n^(j2 k1) sum_j1 x_(j1 n2 + j2) W_n1^(j1 k1)`` (``W_m = exp(sign 2 pi i / m)``):
    ``n2`` transforms of length ``n1``, the twiddle factors ``W_n^(j2 k1)``, ``n1`` transforms of length
    ``n2`` (each split again when it is long), and the outputs read in ``k1 + n1 k2`` order."""
    n = re.shape[-1]
    split = _split(n)
    if split is None:
        cos, sin = _unit_circle(np.outer(np.arange(n), np.arange(n)) % n, n)  # symmetric: x @ W
        c, s = _table(cos, re), _table(sign * sin + 0.0, re)
        return re @ c - im @ s, re @ s + im @ c
    n1, n2 = split
    lead = re.shape[:-1]
    re, im = (t.reshape(*lead, n1, n2).transpose(-1, -2) for t in (re, im))  # [..., j2, j1]
    re, im = _dft_last(re, im, sign)  # [..., j2, k1]
    cos, sin = _unit_circle(np.outer(np.arange(n2), np.arange(n1)) % n, n)
    c, s = _table(cos, re), _table(sign * sin + 0.0, re)
    re, im = (re * c - im * s).transpose(-1, -2), (re * s + im * c).transpose(-1, -2)  # [..., k1, j2]
    re, im = _dft_last(re, im, sign)  # [..., k1, k2]
    return tuple(t.transpose(-1, -2).reshape(*lead, n) for t in (re, im))


def _dft(p, dims, normalization, forward):
    """The discrete Fourier transform of the pair ``p`` over ``dims``, ``exp(-+2 pi i jk / n)`` along each
    (``_dft_last``: GEMMs every backend runs), ``normalization`` over the product of the sizes."""
    sign = -1.0 if forward else 1.0
    count = 1
    for d in dims:
        d = _dim(d, p.rank)
        count *= p.t.shape[d]
        re, im = _dft_last(p.re.movedim(d, -1), p.im.movedim(d, -1), sign)
        p = _stack(re.movedim(-1, d), im.movedim(-1, d))
    return Pair(_normalized(p.t, normalization, count))


def _fft_r2c(x, dim, normalization, onesided):
    """A real signal's transform; ``onesided`` keeps the first ``n // 2 + 1`` frequencies of the last
    dimension (the rest are their conjugates)."""
    p = _dft(_stack(x, torch.zeros_like(x)), dim, normalization, True)
    if onesided:
        d = _dim(dim[-1], p.rank)
        p = Pair(p.t.narrow(d, 0, x.shape[d] // 2 + 1))
    return p


def _fft_c2r(p, dim, normalization, last_dim_size):
    """The real inverse transform of a one-sided spectrum: over ``dim[:-1]`` the complex inverse, over the
    last ``n = last_dim_size`` samples from the ``h = n // 2 + 1`` frequencies (missing ones zero), the others
    their conjugates: ``x[t] = sum_k c_k (Re X_k cos(2 pi kt / n) - Im X_k sin(2 pi kt / n))`` with ``c_k = 2``
    for the frequencies that stand for two, 1 for ``k = 0`` and ``n / 2`` (whose imaginary parts drop out, as
    in PyTorch): one ``h x n`` product. For a length ``_split`` splits, the real part of the complex inverse
    of ``c_k X_k`` zero-padded to ``n`` frequencies, which is the same sum."""
    if len(dim) > 1:
        p = _dft(p, dim[:-1], 0, False)
    d = _dim(dim[-1], p.rank)
    n = int(last_dim_size)
    m = min(p.t.shape[d], n // 2 + 1)
    re, im = p.re.narrow(d, 0, m).movedim(d, -1), p.im.narrow(d, 0, m).movedim(d, -1)
    k = np.arange(m)
    weight = np.where((k == 0) | (2 * k == n), 1.0, 2.0)
    if _split(n) is not None:
        # the sum above is the real part of the complex inverse of c_k X_k, zero from k = m on
        re, im = (torch.nn.functional.pad(t * _table(weight, t), (0, n - m)) for t in (re, im))
        out = _dft_last(re, im, 1.0)[0].movedim(-1, d)
    else:
        cos, sin = _unit_circle(np.outer(k, np.arange(n)) % n, n)
        out = (re @ _table(weight[:, None] * cos + 0.0, re) + im @ _table(-weight[:, None] * sin + 0.0, re)
               ).movedim(-1, d)
    count = n
    for other in dim[:-1]:
        count *= p.t.shape[_dim(other, p.rank)]
    return _normalized(out, normalization, count)


def _equal(a, b, negate=False):
    a, b = _pairs(a, b)
    same = torch.logical_and(a.re == b.re, a.im == b.im)
    return torch.logical_not(same) if negate else same


def _sgn(p):
    """``z / |z|``, 0 at 0 (abs's backward)."""
    norm = _abs(p)
    safe = torch.where(norm == 0, torch.ones_like(norm), norm)
    return Pair(torch.where((norm == 0).unsqueeze(-1), torch.zeros_like(p.t), p.t / safe.unsqueeze(-1)))


def _expand(rank, size):
    return (list(size) + [2],)


RULES = {
    aten.view_as_complex.default: lambda x: Pair(x),
    aten.view_as_real.default: lambda p: p.t,
    aten.complex.default: lambda re, im: _stack(re, im),
    aten.polar.default: lambda r, t: _stack(r * torch.cos(t), r * torch.sin(t)),
    aten.real.default: lambda p: p.re,
    aten.imag.default: lambda p: p.im,
    aten.abs.default: _abs,
    aten.angle.default: lambda p: torch.atan2(p.im, p.re),
    aten.exp.default: _exp,
    aten.sgn.default: _sgn,
    aten.reciprocal.default: lambda p: _div(1.0, p),
    aten.eq.Scalar: _equal,
    aten.eq.Tensor: _equal,
    aten.ne.Scalar: lambda a, b: _equal(a, b, True),
    aten.ne.Tensor: lambda a, b: _equal(a, b, True),
    aten.mul.Tensor: _mul,
    aten.mul.Scalar: _mul,
    aten.div.Tensor: _div,
    aten.div.Scalar: _div,
    aten.div.Tensor_mode: _div,
    aten.add.Tensor: lambda a, b, alpha=1: _add(a, b, alpha),
    aten.add.Scalar: lambda a, b, alpha=1: _add(a, b, alpha),
    aten.sub.Tensor: lambda a, b, alpha=1: _add(a, b, alpha, -1),
    aten.sub.Scalar: lambda a, b, alpha=1: _add(a, b, alpha, -1),
    aten.rsub.Scalar: lambda a, b, alpha=1: _add(b, _mul(a, alpha), 1, -1),
    aten.neg.default: lambda p: Pair(-p.t),
    aten._conj.default: _conj,
    aten.conj_physical.default: _conj,
    aten._conj_physical.default: _conj,
    aten.conj.default: _conj,
    aten.resolve_conj.default: lambda p: Pair(p.t),
    aten.resolve_neg.default: lambda p: Pair(p.t),
    aten._neg_view.default: lambda p: Pair(-p.t),
    aten.mm.default: _matmul(torch.mm),
    aten.bmm.default: _matmul(torch.bmm),
    aten.matmul.default: _matmul(torch.matmul),
    aten.clone.default: lambda p, memory_format=None: Pair(p.t.clone()),
    aten.alias.default: lambda p: Pair(aten.alias.default(p.t)),
    aten.detach.default: lambda p: Pair(p.t.detach()),
    aten.lift_fresh_copy.default: lambda p: Pair(p.t.clone()),
    aten.contiguous.default: lambda p, memory_format=None: Pair(p.t.contiguous()),
    aten.view.default: _layout(aten.reshape.default, lambda rank, size: (list(size) + [2],)),
    aten.reshape.default: _layout(aten.reshape.default, lambda rank, size: (list(size) + [2],)),
    aten._unsafe_view.default: _layout(aten.reshape.default, lambda rank, size: (list(size) + [2],)),
    aten.expand.default: _layout(aten.expand.default, _expand),
    aten.permute.default: _layout(aten.permute.default, lambda rank, dims: (_dims(dims, rank) + [rank],)),
    aten.transpose.int: _layout(aten.transpose.int, lambda rank, a, b: (_dim(a, rank), _dim(b, rank))),
    aten.t.default: _layout(aten.transpose.int, lambda rank: (0, 1) if rank == 2 else (0, 0)),
    aten.unsqueeze.default: _layout(aten.unsqueeze.default, lambda rank, d: (_dim(d, rank + 1),)),
    aten.squeeze.dim: _layout(aten.squeeze.dim, lambda rank, d: (_dim(d, rank),)),
    aten.squeeze.dims: _layout(aten.squeeze.dims, lambda rank, ds: (_dims(ds, rank),)),
    prims.squeeze.default: _layout(prims.squeeze.default, lambda rank, ds: (_dims(ds, rank),)),
    aten.slice.Tensor: _layout(aten.slice.Tensor, lambda rank, d=0, *rest: (_dim(d, rank), *rest)),
    aten.select.int: _layout(aten.select.int, lambda rank, d, i: (_dim(d, rank), i)),
    aten.narrow.default: _layout(aten.narrow.default, lambda rank, d, s, n: (_dim(d, rank), s, n)),
    aten.flip.default: _layout(aten.flip.default, lambda rank, ds: (_dims(ds, rank),)),
    aten.roll.default: _layout(aten.roll.default, lambda rank, s, ds=(): (s, _dims(ds, rank)) if ds else (s,)),
    aten.index_select.default: _layout(aten.index_select.default, lambda rank, d, i: (_dim(d, rank), i)),
    aten.repeat.default: _layout(aten.repeat.default, lambda rank, r: (list(r) + [1],)),
    aten.index.Tensor: _index,
    aten.gather.default: _gather,
    aten.cat.default: _cat,
    aten.where.self: _where,
    aten.sum.dim_IntList: _sum,
    aten.sum.default: lambda p, dtype=None: _sum(p, None, False, dtype),
    aten.mean.dim: _mean,
    aten._to_copy.default: _to_copy,
    prims.convert_element_type.default: _convert,
    aten.copy.default: _copy,
    aten.full.default: _full,
    aten.full_like.default: _full_like,
    aten.zeros_like.default: lambda x, **kw: _full_like(x, 0, **kw),
    aten.ones_like.default: lambda x, **kw: _full_like(x, 1, **kw),
    aten.scalar_tensor.default: _scalar_tensor,
    aten.new_zeros.default: lambda x, size, **kw: _full(size, 0, dtype=kw.get("dtype") or complex_dtype(
        x.t.dtype if isinstance(x, Pair) else x.dtype)),
    aten.zeros.default: lambda size, **kw: _full(size, 0, **kw),
    # uninitialized memory (its contents never read): zeros
    aten.empty.memory_format: lambda size, **kw: _full(size, 0, dtype=kw.get("dtype")),
    aten.empty_strided.default: lambda size, stride, **kw: _full(size, 0, dtype=kw.get("dtype")),
    aten.new_empty.default: lambda x, size, **kw: _full(size, 0, dtype=kw.get("dtype") or complex_dtype(
        x.t.dtype if isinstance(x, Pair) else x.dtype)),
    aten.slice_scatter.default: _slice_scatter,
    aten.select_scatter.default: _select_scatter,
    aten._fft_c2c.default: _dft,
    aten._fft_r2c.default: _fft_r2c,
    aten._fft_c2r.default: _fft_c2r,
}

#: The ops whose rules compute in float32 under autocast: a transform's outputs each sum a whole axis, and
#: docs/Policy.md keeps TOSA's own FFTs (``fft2d`` / ``rfft2d``) f32 (deny) for that reason. Their DFT
#: products would otherwise be matmuls, which autocast computes in f16 / bf16.
# The rules whose first argument is a value, not a tensor (``scalar_tensor(0j)``: ``sgn``'s decomposition).
_FACTORIES = frozenset({aten.scalar_tensor.default, aten.full.default})

F32_RULES = frozenset({aten._fft_c2c.default, aten._fft_r2c.default, aten._fft_c2r.default})


def _where_from(node) -> str:
    trace = (node.meta.get("stack_trace") or "").strip().splitlines()
    lines = [line.strip() for line in trace if line.strip().startswith("File ")]
    return f" at {lines[-1]}" if lines else " (an op of the backward pass)"


class RealPairs(torch.fx.Interpreter):
    """Runs ``gm`` with each complex value as a :class:`Pair` (the module comment). The ops a rule in
    ``F32_RULES`` records get the FX annotation ``f32_annotation`` (``node.meta["custom"]``), which the import
    pins ``#amp.precision<f32>``."""

    def __init__(self, gm, f32_annotation=None):
        super().__init__(gm)
        self.f32_annotation = f32_annotation or {}

    def run_node(self, n):
        value = n.meta.get("val")
        if n.op == "get_attr" and _is_complex(value):
            return Pair(torch.view_as_real(getattr(self.module, n.target)).clone())
        if n.op == "placeholder" and _is_complex(value):
            raise UnsupportedOpError(f"the training step has a complex argument, {n.name}")
        if n.op != "call_function":
            return super().run_node(n)
        with self._set_current_node(n):
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            flat = torch.utils._pytree.tree_leaves((args, kwargs))
            dtype = kwargs.get("dtype")
            makes_complex = _is_complex(value) or (isinstance(dtype, torch.dtype) and dtype.is_complex)
            if not makes_complex and not any(isinstance(a, Pair) for a in flat):
                # a view of a pair's real form, which may not be laid out as PyTorch's view_as_real was
                # (rfftn's): a reshape, which is that view where it still is one
                target = aten.reshape.default if n.target is aten.view.default else n.target
                return getattr(self, n.op)(target, args, kwargs)
            rule = RULES.get(n.target)
            if rule is None:
                raise UnsupportedOpError(
                    f"amp_mlir.torch cannot compute {n.target} on complex tensors{_where_from(n)}: complex values "
                    "are carried as pairs of real numbers, and this op has no rule for them (_complex.RULES)")
            if args and isinstance(args[0], complex) and n.target not in _FACTORIES:
                # a scalar in a tensor's place (autograd's conj of one)
                args = (Pair(torch.tensor([args[0].real, args[0].imag])),) + tuple(args[1:])
            if n.target in F32_RULES and self.f32_annotation:
                with fx_traceback.annotate(self.f32_annotation):
                    out = rule(*args, **kwargs)
            else:
                out = rule(*args, **kwargs)
            if _is_complex(value) != isinstance(out, Pair):
                raise UnsupportedOpError(f"internal: the complex rule of {n.target} gave the wrong kind of value")
            return out

    def output(self, target, args, kwargs):
        outs = torch.utils._pytree.tree_map(lambda v: v.t if isinstance(v, Pair) else v, args[0])
        return outs


def to_real_pairs(gm, flat, decompositions, f32_annotation=None):
    """``gm`` (captured with ``flat``, which has no complex tensors) recorded again with each complex value
    as a pair of real numbers; the ops of Fourier transforms annotated ``f32_annotation`` (``RealPairs``)."""
    def run(*args):
        return RealPairs(gm, f32_annotation).run(*args)

    with fx_traceback.preserve_node_meta():
        return make_fx(run, decomposition_table=decompositions, record_stack_traces=True)(*flat)
