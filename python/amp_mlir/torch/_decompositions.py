"""Decompositions the torch-mlir front end adds to torch-mlir's own table (applied while capturing).

Each replaces an aten op that torch-mlir 20261001 cannot lower with ops it can, with PyTorch's exact
semantics:

- ``max_pool2d_with_indices_backward``: for each of the kh x kw window offsets, the output gradient
  where ``indices`` points at that offset's input position, placed back on the input grid
  (``_place_taps``): the offsets that land on one stride-s sublattice of the input are shifted (pad /
  slice) and summed at the pooled size, and the sublattices interleaved once (stack, reshape), along each
  axis where it is (no transpose: a GPU kernel then reads the indices in the order it writes). No scatter,
  so the result is the same on every backend, and identical to PyTorch's (the gradient goes to the
  position the forward pass picked, ties included). ``max_pool3d_with_indices_backward`` (S3D) the same over
  kd x kh x kw offsets (``_max_pool_backward`` is one for both).
- ``avg_pool2d_backward`` (any kernel, stride, padding, ``ceil_mode``, ``count_include_pad``,
  ``divisor_override``): the output gradient divided by each window's divisor (from the static shapes,
  as PyTorch's kernel counts it: the window clipped to the padded input,
  or to the input alone without ``count_include_pad``), then placed back for each of the kh x kw window
  offsets the same way as max pooling's; positions in the padding are dropped. torch-mlir lowers the
  forward op but not this one (PoolFormer's pooling token mixer has ``count_include_pad=False``).
- ``scatter_reduce`` (``sum``, ``prod``, ``mean``, ``amax``, ``amin``, with or without ``self``: TAPAS's
  segment reductions) as ``scatter_add`` below: a one-hot of the index, the reduction where it holds.
- ``avg_pool2d`` with ``divisor_override`` (torch-mlir lowers the op without one only): the average
  counting the padding times each window's count, over the override.
- ``embedding_dense_backward``: ``one_hot(indices)^T @ grad`` (rows at ``padding_idx`` zero), a GEMM
  instead of torch-mlir's accumulating ``index_put``, which neither its TOSA nor its linalg lowering
  takes without the ``tm_tensor`` dialect. The cost is that of one more matmul of the embedding's size
  (for a tied language-model head: as much as the head's forward matmul); exact up to summation order.
- ``convolution_backward`` (2-D, any stride / padding / dilation / groups; transposed as the adjoint of
  the convolution with the same weights: the input gradient is that convolution of the output gradient,
  the weight gradient its weight gradient with input and output gradient exchanged): the
  gradients as *forward* convolutions and GEMMs, which every lowering takes (torch-mlir's own
  decomposition makes transposed grouped convolutions, which neither its TOSA nor its linalg lowering
  converts): the input gradient is the stride-dilated output gradient convolved with the flipped,
  group-transposed weights; with a stride (and no dilation), one convolution of the output gradient per
  stride sublattice of the input with the sub-kernel of the taps that land there, interleaved
  (``_strided_input_gradient``: no multiply-adds on the dilation's zeros). The weight gradient of an
  ungrouped convolution is a convolution with the batch as the reduced channel dimension: input
  ``[Cin, N, H, W]``, weights the output gradient ``[Cout, N, Ho, Wo]``, stride = the forward dilation,
  dilation = the forward stride, over the input window a stride reaches (``_weight_gradient_window``: the
  output is the filter's size, no taps computed and cropped); of a depthwise
  convolution (one input channel per group), a depthwise convolution over the C*N (channel, sample)
  planes whose filters are the matching output-gradient planes, summed over N; of a grouped one with
  several channels per group, one batched matmul over the groups of the output gradient and the
  forward im2col (below), ``[g, Cout/g, N*Ho*Wo] x [g, N*Ho*Wo, Cin/g*kh*kw]`` (as a convolution it
  would be grouped again, with an Ho x Wo filter: Ho*Wo taps to gather).
  A transposed 1-D convolution's backward is the 2-D one's over a height of 1.
- ``convolution`` (1-D and 2-D) grouped with several input channels per group (ResNeXt, RegNet; and
  the input-gradient convolutions the backward above makes from them), which torch-mlir lowers on
  neither path: im2col (the padded input under each filter tap, by narrow and reshape, ``_im2col``) and
  one batched matmul over the groups, ``[g, Cout/g, Cin/g*kh*kw] x [g, Cin/g*kh*kw, N*Ho*Wo]`` (one GEMM
  call with g batches, not g convolutions: RegNet-Y-400MF has up to 55 groups a layer). Depthwise (one
  input channel per group) and ungrouped convolutions are left to torch-mlir. A *transposed* convolution
  with groups (codecs' depthwise upsamplers: Mimi), which torch-mlir lowers on neither path either, is the
  input gradient of the convolution with the same weights (``_input_gradient``, as in the backward above),
  of the transposed convolution's output size.
- Random ops (``native_dropout``, ``bernoulli``, ``rand``, ``rand_like``, ``uniform``; ``randn``,
  ``randn_like``, ``normal_`` by Box-Muller on two uniform numbers, ``exponential_`` as ``-log(1 - u)``,
  ``randint`` / ``randint_like`` as ``low + floor(u (high - low))``, ``rrelu_with_noise`` in training as
  a slope ``lower + (upper - lower) u`` per non-positive element; ``RANDOM``, which the
  capture's replay calls in their place): drawn from the step's random-number state, an int32 argument
  the step advances by one, instead
  of PyTorch's generator, which tracing runs once, so that its numbers would be constants (the same
  dropout mask at every step). A uniform number is a counter-based hash (lowbias32's xor-shift-multiply
  rounds in int32, whose multiplications wrap the same way in PyTorch and in MLIR, and which every torch-mlir
  conversion keeps: its TOSA conversion does int64 additions in int32 and its floor division tests signs
  with a product that overflows for large int64 values) of the state, the op's position in the step and
  the element's index, scaled to [0, 1) from its top 24 bits: different at every step and for every op
  and element, the same on every backend, and not PyTorch's Philox stream (compare with PyTorch at
  dropout 0). The overloads with a ``generator`` argument (``torch.randn(shape, generator=None)``:
  diffusers' ``randn_tensor``) and ``torch.normal``'s draw the same way (a generator's own stream is not
  reproduced). Other random ops (``randperm``, ``multinomial``, ...) and any other overload of the ops
  above are refused by name.
- ``index_put`` accumulating through integer index tensors at adjacent dimensions (the backward of
  ``table[idx]`` or ``table[:, idx]``, Swin's and LeViT's relative-position bias tables; of ``col2im``,
  i.e. ``nn.Unfold``'s backward, with two): one flat index into those dimensions merged, then
  ``one_hot(idx)^T @ values``, as the embedding backward; torch-mlir lowers index_put to nothing our pipelines take.
- ``adaptive_max_pool2d`` (and 1-D) whose windows are not one size at one stride (8 -> 3): each window's
  flat positions as a constant, the values gathered, their maximum and its first position (torch-mlir
  lowers a fixed-stride pooling next to a check that always fails).
- ``upsample_trilinear3d`` and its backward (3-D U-Nets): separable, one resampling matrix per spatial
  dimension computed by PyTorch's own kernel outside the trace, and their transposes.
- ``_upsample_nearest_exact{1,2}d_backward`` and ``replication_pad{1,3}d_backward``: the transposed 0/1
  matrices of the forward along each dimension.
- ``lgamma``, ``digamma`` and ``polygamma(1, .)``: asymptotic series from 8 on, the recurrence below, the
  reflection formulas below 0.5.
- ``diagonal_scatter`` (``t.diagonal()``'s gradient): a constant gather of the source, selected on the diagonal.
- (above autograd, ``above_autograd``) small linear algebra unrolled: Cholesky, triangular and Cholesky solves,
  and Gauss-Jordan elimination with partial pivoting for ``solve``, ``inv``, ``det``, ``slogdet``, ``logdet``;
  ``qr`` as LAPACK's Householder reflections (its signs), ``householder_product`` (``orgqr``).
- ``linalg_matrix_exp`` (``parametrizations.orthogonal``; its backward is a ``matrix_exp`` too): scaling and
  squaring, ``s`` from the 1-norm in the step, a Taylor polynomial, 20 squarings each kept where ``s`` asks.
- ``i0``, ``special_i0e``, ``special_i1``, ``special_i1e``: Cephes' Chebyshev expansions with ATen's tables;
  ``special_ndtri``: Cephes' rational approximations; ``special_erfcx`` (and ``special_log_ndtr``, ATen's form
  over it): a Chebyshev fit of ``exp(x^2) erfc(x)`` to 1.2e-7 relative (float32's precision).
- ``_linalg_eigh`` / ``_linalg_svd`` (up to 64 wide): parallel cyclic Jacobi (one-sided for the SVD) in float64, a
  round-robin ordering's disjoint rotations applied as one matrix per round; ``linalg_pinv`` from them as ATen
  does, ``linalg_lstsq`` (the default ``gelsy`` driver) as the same minimum-norm solution. Recorded pinned f32 in the first capture (``pinned_table``).
- ``searchsorted``: a count of the boundaries before each value; ``histc``: a one-hot sum over ATen's bin rule;
  ``nonzero_static`` (``torch.combinations``) padded with its ``fill_value``; ``tril_indices`` /
  ``triu_indices`` as constants; ``signbit`` / ``copysign`` without reading bits (torch-mlir lowers them
  through ``view(dtype)``).
- (above autograd) ``F.embedding`` with ``sparse=True``: the dense lookup (the same update of the rows looked up).
- Fake quantization (quantization-aware training): ``fake_quantize_per_{tensor,channel}_affine_cachemask`` (and
  the tensor-qparams form with its enable flag) as ATen's round-half-even, clamp and mask; LSQ's learnable
  ``_fake_quantize_learnable_per_{tensor,channel}_affine`` and their backward (the scale's and zero point's
  gradients per element, summed; zero points rounded as ATen rounds them in each);
  ``_fused_moving_avg_obs_fq_helper_functional`` (QAT's default ``FusedMovingAvgObsFakeQuantize``): the moving
  average of the running range, ``quant_utils::ChooseQuantizationParams`` with its float64 intermediates, and the
  fake quantization, each where its enable flag says.
- ``/`` of integer or boolean tensors (``div.Tensor`` / ``div.Scalar``): converted to the result's float type
  first (torch-mlir's TOSA conversion refuses an unsigned operand).
- ``_adaptive_avg_pool3d_backward``: separable, through each dimension's transposed averaging matrix; (above
  autograd) ``pdist`` as the upper triangle of ``cdist``.
- (above autograd) ``grid_sample`` of volumes (``grid_sampler_3d``): ATen's coordinate rules, trilinear or
  nearest, corners read by a gather within each (sample, channel) volume.
- ``multi_margin_loss_backward`` / ``multilabel_margin_loss_backward``: ATen's gradients as masks over the
  class pairs whose margin is active (one-hot targets, the multilabel list cut at its first -1).
- ``embedding_renorm`` (``nn.Embedding(max_norm=...)``'s in-place renormalization, functionalized): the looked-up
  rows over ``max_norm`` scaled, through a one-hot of the ids; the renormed weight is the parameter's new value.
- ``mode``: counts of equal elements, the smallest most frequent value, its last position (ATen's);
- ``kthvalue``, ``median.dim`` and ``median`` from a stable sort; ``erfc`` as ``1 - erf``, ``erfinv`` by Giles'
  approximation and a Newton step; ``hypot`` as ``sqrt(a^2 + b^2)``.
- ``softshrink_backward`` / ``hardshrink_backward``: the gradient where ``|x| > lambd``.
- ``avg_pool3d_backward`` (``nn.AvgPool3d``, ``nn.LocalResponseNorm``): separable, the output gradient over
  the windows' divisors through the transposed 0/1 window matrices of depth, height and width.
- ``adaptive_max_pool2d_backward`` (and 3-D): each output gradient where the flat input position equals its
  window's index (a one-hot comparison of the P output positions with the H*W input positions, summed
  over P: P*H*W work per plane, no scatter).
- ``upsample_bilinear2d_backward`` / ``upsample_nearest2d_backward`` (U-Nets, FPNs) and
  ``_adaptive_avg_pool2d_backward`` (to more than 1 x 1): the resampling is linear and separable, ``out = A_h @ in @ A_w^T`` per plane, so the input gradient is
  ``A_h^T @ grad @ A_w``; each matrix is the forward op (which torch-mlir lowers) applied to an identity
  image along one dimension, so it follows PyTorch's own index rule (align_corners, scales).
- ``upsample_bicubic2d``, ``_upsample_bicubic2d_aa`` / ``_upsample_bilinear2d_aa`` (antialiased
  resampling) and their backward:
  the same separable form, each matrix computed by PyTorch's own kernel on unit vectors while capturing (a
  constant of the step; torch-mlir lowers neither op).
- ``upsample_bilinear2d`` with ``align_corners`` to one pixel along a dimension: that dimension sliced to
  its first element, as PyTorch takes it (torch-mlir's ``tosa.resize`` samples the centre).
- ``native_layer_norm``: mean, then the mean of the squared deviations, in the input's own type
  (PyTorch's float32 kernels do the same); torch-mlir's decomposition computes the variance in
  float64, which put ``[batch, tokens, width]`` f64 buffers into every transformer step.
- ``roll``: two static slices and a concatenation per dimension (torch-mlir's slices from a start it
  computes at run time: a slice of dynamic extent that its TOSA lowering refuses; Swin).
- ``rrelu``: in evaluation ``leaky_relu`` with the mean slope, and its backward as ATen's (torch-mlir's
  lowering of the evaluation backward computed ``max(grad, 0) + slope * min(x, 0)``).
- ``relu`` of integers as a select; ``pow`` of integers by repeated squaring (``_integer_power``); integer
  ``%`` and ``//`` from the truncating division (``_floor_division``: torch-mlir's own lowering wraps).
- ``cummax`` / ``cummin``: the extreme over a triangle mask, the index the last element equal to it;
  ``cumprod``: the product over the same mask.
- ``sort`` of integers and ``sort(stable=True)``: ranks (how many elements come before each), then the
  values and indices as sums over a one-hot of the ranks (``O(n^2)`` per row, as torch-mlir's own
  lowering of a float sort); torch-mlir refuses integer sorts and does not know the stable overload.
- ``constant_pad_nd`` by negative amounts (a pad's backward): slices, then pads (torch-mlir makes a
  ``tosa.pad`` with negative padding, which TOSA does not define; MobileBERT).
- ``_weight_norm_interface_backward`` (``weight_norm``, wav2vec2's positional convolution): ATen's
  differentiable form, ``grad_g = s / |v|``, ``grad_v = g / |v| * (grad_w - v s / |v|^2)`` with ``s`` the
  sum of ``grad_w * v`` over every dimension but ``dim``.
- ``as_strided`` / ``as_strided_scatter`` of a contiguous tensor: a reshape when the view restates its
  layout, else a gather (and a select) of constant indices for any in-bounds view (the scatter: one that
  names each element once; torchvision's Swin V2 zeroes part of a cloned bias in place).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import math
import sys

import numpy as np

import torch

aten = torch.ops.aten


def _shift(y, offset, size, dim):
    """``z[..., a + offset, ...] = y[..., a, ...]`` along ``dim``, zeros elsewhere, length ``size`` (pad /
    slice)."""
    n = y.shape[dim]
    if offset + n <= 0 or offset >= size:
        # Nothing lands on the grid (a window offset that only ever reads padding, as on a 1x1 map):
        # zeros, not an empty slice, which torch-mlir does not lower.
        return y.new_zeros((*y.shape[:dim], size, *y.shape[dim + 1:]))
    return _pad_or_crop(y, dim, offset, size - n - offset)


def _pool_window(kernel_size, stride, padding):
    """A 2-D pooling window's (kernel, stride, padding) pairs; an empty stride is the kernel's."""
    return _pair(kernel_size), _pair(stride if stride else kernel_size), _pair(padding)


def _place_taps(tap_parts, stride, size):
    """``sum(z_t)`` over the ``(offsets, part)`` pairs of ``tap_parts``, where ``z_t[..., a*s + o, ...] =
    part[..., a, ...]`` along each of the last ``len(size)`` dimensions (stride ``s``, the tap's offset
    ``o``, length ``size``), zeros elsewhere: the input gradient of a pooling from its per-tap parts.

    Placed one tap at a time, each tap wrote a tensor of the input's size and the sum read them all (a
    3 x 3 max pooling: 9 input-sized tensors, ResNet's largest kernel). Here a tap's offset ``o = q*s + r``
    puts it on the residue-``r`` sublattice of the input grid (positions ``r, r + s, ...``), shifted by ``q``
    there: the taps of one residue (per dimension) are shifted and summed at the pooled size, and the
    ``s`` sublattices of each dimension are interleaved once (stacked along a new dimension after it and
    merged), along each dimension where it is. Each position sums the same taps in the same order as
    before. (Moving each dimension last and back had made two transposes a tap; fused into the tap's
    select, a GPU kernel read the argmax indices across rows, uncoalesced.)"""
    nd = len(size)
    phases = {}
    first = None
    for offsets, part in tap_parts:
        first = part if first is None else first
        residues = []
        for axis, (o, s, n) in enumerate(zip(offsets, stride, size)):
            r, q = o % s, o // s
            length = -(-(n - r) // s)  # how many positions of the input the residue has
            if length <= 0:
                break  # the tap lands beyond the input
            part = _shift(part, q, length, part.dim() - nd + axis)
            residues.append(r)
        else:
            key = tuple(residues)
            phases[key] = part if key not in phases else phases[key] + part
    for axis in reversed(range(nd)):  # interleave the residues of one dimension at a time
        s, n = stride[axis], size[axis]
        groups = {}
        for key, part in phases.items():
            groups.setdefault(key[:axis] + key[axis + 1:], {})[key[axis]] = part
        phases = {}
        for rest, by_residue in groups.items():
            some = next(iter(by_residue.values()))
            dim = some.dim() - nd + axis
            if s == 1:
                merged = by_residue[0]
            else:
                most = -(-n // s)  # the residue-0 sublattice's length, the longest
                lattices = []
                for r in range(s):
                    if r in by_residue:
                        t = by_residue[r]
                        lattices.append(_pad_or_crop(t, dim, 0, most - t.shape[dim]))
                    else:
                        lattices.append(some.new_zeros((*some.shape[:dim], most, *some.shape[dim + 1:])))
                merged = torch.stack(lattices, dim + 1).flatten(dim, dim + 1)
                merged = merged.narrow(dim, 0, n) if merged.shape[dim] > n else merged
            phases[rest] = merged
    if not phases:  # every tap lands beyond the input (a dilated window over a map of one)
        return first.new_zeros((*first.shape[:first.dim() - nd], *size))
    return phases[()]


def _max_pool_backward(grad_output, size, kernel, stride, padding, dilation, indices):
    """The input gradient of a max pooling over the last ``len(kernel)`` dimensions (input sizes ``size``):
    for each filter tap, the output gradient where the window's argmax (``indices``, flat over those
    dimensions) is that tap, placed on the input grid (``_place_taps``)."""
    nd = len(kernel)
    starts = [torch.arange(o, device=indices.device) * s - p
              for o, s, p in zip(grad_output.shape[-nd:], stride, padding)]
    zero = torch.zeros((), dtype=grad_output.dtype, device=grad_output.device)

    def tap_parts():
        for taps in itertools.product(*(range(k) for k in kernel)):
            flat = None
            for axis in range(nd):
                coord = (starts[axis] + taps[axis] * dilation[axis]).reshape(
                    [-1 if a == axis else 1 for a in range(nd)])
                flat = coord if flat is None else flat * size[axis] + coord
            yield ([t * d - p for t, d, p in zip(taps, dilation, padding)],
                   torch.where(indices == flat, grad_output, zero))

    return _place_taps(tap_parts(), stride, size)


def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                     indices):
    kernel, stride, padding = _pool_window(kernel_size, stride, padding)
    return _max_pool_backward(grad_output, self.shape[-2:], kernel, stride, padding, _pair(dilation), indices)


def max_pool3d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                     indices):
    """MaxPool3d's gradient (S3D's), which torch-mlir leaves: as the 2-D one's, over three dimensions."""
    kernel = _triple(kernel_size)
    return _max_pool_backward(grad_output, self.shape[-3:], kernel, _triple(stride) if stride else kernel,
                              _triple(padding), _triple(dilation), indices)


def _avg_pool_divisors(out, size, kernel, stride, pad, count_include_pad, device):
    """The divisor of each of ``out`` windows along one dimension, as PyTorch's avg_pool2d kernel counts
    it: the window clipped to the padded input, then to the input itself unless ``count_include_pad``.
    Built from ``arange`` (a constant tensor from Python data would be captured as an in-place
    ``detach_``, which torch-mlir does not lower)."""
    start = torch.arange(out, device=device) * stride - pad
    end = torch.clamp(start + kernel, max=size + pad)
    if not count_include_pad:
        start, end = torch.clamp(start, min=0), torch.clamp(end, max=size)
    return end - start


def _pooled_size(size, kernel, stride, pad, ceil_mode):
    """PyTorch's pooling output size (``pooling_output_shape``, dilation 1)."""
    out = (size + 2 * pad - kernel + (stride - 1 if ceil_mode else 0)) // stride + 1
    return out - 1 if ceil_mode and (out - 1) * stride >= size + pad else out


def _window_matrix(out, size, kernel, stride, pad, like):
    """``[out, size]``: 1 where input position ``i`` is in output ``o``'s window, clipped to the input."""
    start = torch.arange(out, device=like.device) * stride - pad
    end = torch.clamp(torch.clamp(start + kernel, max=size + pad), max=size)
    i = torch.arange(size, device=like.device)
    return ((i[None, :] >= torch.clamp(start, min=0)[:, None]) & (i[None, :] < end[:, None])).to(like.dtype)


def _wider_than_input(kernel, size, padding):
    """Whether a pooling window is wider than the padded input along a dimension (transformers' EfficientNet
    pools a 2 x 2 map with a window of its hidden size: 320, 1280): torch-mlir's ``tosa.avg_pool2d`` fails its
    verifier there (padding not less than the window), and the per-tap backward below takes k^2 taps."""
    return any(k > s + 2 * p for k, s, p in zip(kernel, size, padding))


def avg_pool2d(x, kernel_size, stride=(), padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """``avg_pool2d`` with ``divisor_override`` (which torch-mlir does not lower): the average that counts
    the padding times each window's count (the window clipped to the padded input, as PyTorch's kernel
    counts it) is the window's sum, divided by the override. A window wider than the padded input
    (``_wider_than_input``): the window sums as two products with 0/1 window matrices (``_window_matrix``),
    divided by PyTorch's divisors. Otherwise: torch-mlir's."""
    as_list = lambda v: list(v) if isinstance(v, (list, tuple)) else [v]  # noqa: E731
    (kh, kw), (ph, pw) = _pair(as_list(kernel_size)), _pair(as_list(padding))
    sh, sw = _pair(as_list(stride)) if stride else (kh, kw)
    (h, w) = x.shape[-2:]
    if _wider_than_input((kh, kw), (h, w), (ph, pw)):
        ho, wo = _pooled_size(h, kh, sh, ph, ceil_mode), _pooled_size(w, kw, sw, pw, ceil_mode)
        sums = _window_matrix(ho, h, kh, sh, ph, x) @ x @ _window_matrix(wo, w, kw, sw, pw, x).transpose(0, 1)
        if divisor_override:
            return sums / divisor_override
        dh = _avg_pool_divisors(ho, h, kh, sh, ph, count_include_pad, x.device)
        dw = _avg_pool_divisors(wo, w, kw, sw, pw, count_include_pad, x.device)
        return sums / (dh[:, None] * dw[None, :]).to(x.dtype)
    if divisor_override is None:
        return NotImplemented
    avg = aten.avg_pool2d.default(x, [kh, kw], [sh, sw], [ph, pw], ceil_mode, True, None)
    ho, wo = avg.shape[-2:]
    dh = _avg_pool_divisors(ho, x.shape[-2], kh, sh, ph, True, x.device)
    dw = _avg_pool_divisors(wo, x.shape[-1], kw, sw, pw, True, x.device)
    return avg * ((dh[:, None] * dw[None, :]).to(x.dtype) / divisor_override)


def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    (kh, kw), (sh, sw), (ph, pw) = _pool_window(kernel_size, stride, padding)
    h, w = self.shape[-2:]
    ho, wo = grad_output.shape[-2:]
    if divisor_override:
        grad = grad_output / divisor_override
    else:
        # Within the padded input, a clipped window's divisor is its height times its width.
        rows = _avg_pool_divisors(ho, h, kh, sh, ph, count_include_pad, grad_output.device)
        cols = _avg_pool_divisors(wo, w, kw, sw, pw, count_include_pad, grad_output.device)
        grad = grad_output / (rows.unsqueeze(1) * cols.unsqueeze(0)).to(grad_output.dtype)
    if _wider_than_input((kh, kw), (h, w), (ph, pw)):  # the forward's window matrices, transposed
        return (_window_matrix(ho, h, kh, sh, ph, grad).transpose(0, 1) @ grad
                @ _window_matrix(wo, w, kw, sw, pw, grad)).to(self.dtype)
    taps = (((i - ph, j - pw), grad) for i in range(kh) for j in range(kw))
    return _place_taps(taps, (sh, sw), (h, w)).to(self.dtype)


def kthvalue(self, k, dim=-1, keepdim=False):
    """``kthvalue`` (and ``median.dim``, the ``(n + 1) // 2``-th), which torch-mlir does not lower: the ``k``-th
    of the stably sorted values along ``dim`` and its index (among equal values, the first in index order)."""
    if self.dim() == 0:
        return self.clone(), torch.zeros((), dtype=torch.int64, device=self.device)
    values, indices = torch.sort(self, dim=dim, stable=True)
    dim %= self.dim()
    values, indices = values.narrow(dim, k - 1, 1), indices.narrow(dim, k - 1, 1)
    return (values, indices) if keepdim else (values.squeeze(dim), indices.squeeze(dim))


def median_dim(self, dim=-1, keepdim=False):
    n = self.shape[dim % self.dim()] if self.dim() else 1
    return kthvalue(self, (n + 1) // 2, dim, keepdim)


def median(self):
    """``median`` of every element (the lower one of an even count), as ``median.dim`` of the flattened tensor."""
    return median_dim(self.reshape(-1), 0)[0]


def mode(self, dim=-1, keepdim=False):
    """``torch.mode``: each element's count of equal elements along ``dim`` (an ``n x n`` comparison), the
    smallest of the most frequent values and the last position holding it, as ATen's kernel returns them."""
    if self.dim() == 0:
        return self.clone(), torch.zeros((), dtype=torch.int64, device=self.device)
    x = self.movedim(dim, -1)
    counts = (x.unsqueeze(-1) == x.unsqueeze(-2)).sum(-1)
    frequent = counts == counts.amax(-1, keepdim=True)
    ceiling = torch.finfo(x.dtype).max if x.is_floating_point() else torch.iinfo(x.dtype).max
    values = torch.where(frequent, x, torch.full_like(x, ceiling)).amin(-1, keepdim=True)
    positions = torch.arange(x.shape[-1], device=x.device).expand(x.shape)
    indices = torch.where(x == values, positions, torch.full_like(positions, -1)).amax(-1, keepdim=True)
    values, indices = values.movedim(-1, dim), indices.movedim(-1, dim)
    if not keepdim:
        values, indices = values.squeeze(dim), indices.squeeze(dim)
    return values, indices


def erfc(x):
    """``erfc`` as ``1 - erf(x)`` (torch-mlir lowers ``erf``; float32 loses ``erfc``'s relative precision in the
    far tail, where it is below 1e-7 anyway)."""
    return 1 - torch.erf(x)


def erfinv(x):
    """``erfinv`` (``torch.nn.init.trunc_normal_``, probit links), which torch-mlir does not lower: Giles'
    single-precision approximation ("Approximating the erfinv function", 2010), a polynomial in
    ``w = -log((1 - x)(1 + x))`` on each side of ``w = 5``, then one Newton step on ``erf(y) = x`` (float32
    rounding at the end); +-inf at +-1 and NaN beyond, as ATen."""
    w = -torch.log((1 - x) * (1 + x))
    central, tail = w - 2.5, torch.sqrt(torch.clamp(w, min=5.0)) - 3.0
    p1 = torch.full_like(x, 2.81022636e-08)
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
              0.246640727, 1.50140941):
        p1 = c + p1 * central
    p2 = torch.full_like(x, -0.000200214257)
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
              1.00167406, 2.83297682):
        p2 = c + p2 * tail
    y = torch.where(w < 5.0, p1, p2) * x
    y = y - (torch.erf(y) - x) / (2 / math.sqrt(math.pi) * torch.exp(-y * y))  # one Newton step
    edge = torch.where(x > 0, math.inf, -math.inf)
    return torch.where(torch.abs(x) == 1, edge, y)


# Cephes' Chebyshev coefficients (ATen's Math.h, which takes them from the Cephes Math Library) for
# exp(-x) I0(x) on [0, 8] and exp(-x) sqrt(x) I0(x) on [8, inf), and for I1 the same; float32 uses ATen's
# shortened I1 tables (their leading terms are below float32 rounding).
_I0E_A = (-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
          1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
          -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
          9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
          -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
          1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
          -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
          1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
          -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
          1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_B = (-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
          3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
          1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
          -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
          7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
          -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
          3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
          2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
          8.04490411014108831608E-1)
_I1E_A = (2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
          -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
          3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
          -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
          9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
          -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
          4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
          -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
          2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
          -1.76416518357834055153E-1, 2.52587186443633654823E-1)
_I1E_B = (7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
          -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
          -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
          4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
          -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
          3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
          -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
          -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
          7.78576235018280120474E-1)


def _chbevl(x, coefficients):
    """Cephes' Clenshaw recurrence for a Chebyshev series (ATen's ``chbevl``)."""
    b0, b1, b2 = torch.full_like(x, coefficients[0]), torch.zeros_like(x), torch.zeros_like(x)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _bessel_scaled(x, order):
    """``exp(-|x|) I_order(|x|)`` (order 0 or 1), ATen's two Chebyshev expansions: ``(|x| / 2 - 2)`` on
    ``[0, 8]``, ``(32 / |x| - 2) / sqrt(|x|)`` beyond (``|x|`` at least 8 there, so the unused branch stays
    finite)."""
    a = torch.abs(x)
    far = torch.clamp(a, min=8.0)
    if order == 0:
        low, high = _I0E_A, _I0E_B
    else:
        double = x.dtype == torch.float64
        low, high = (_I1E_A, _I1E_B) if double else (_I1E_A[12:], _I1E_B[18:])
    near = _chbevl(a / 2 - 2, low) * (a if order == 1 else 1)
    return torch.where(a <= 8.0, near, _chbevl(32.0 / far - 2, high) / torch.sqrt(far))


def gelu(self, *, approximate="none"):
    """``F.gelu(approximate="tanh")`` as ATen's kernel computes it: ``0.5 x (1 + tanh(k (x + 0.044715 x^3)))``
    with ``k = sqrt(2 / pi)`` and ``x^3 = x * x * x``. torch-mlir's linalg lowering of the op multiplies by
    0.7977240352 instead of sqrt(2 / pi) = 0.7978845608 (its ``gelu_backward`` is right), so the step's
    gradients were another function's (6.7e-5 relative off float64 on a GELU MLP's last layer, PyTorch fp32
    3e-7). The exact GELU stays one node (``NotImplemented``), lowered by torch-mlir."""
    if approximate != "tanh":
        return NotImplemented
    inner = math.sqrt(2.0 / math.pi) * (self + 0.044715 * (self * self * self))
    return 0.5 * self * (1.0 + torch.tanh(inner))


def i0(x):
    return torch.exp(torch.abs(x)) * _bessel_scaled(x, 0)


def i0e(x):
    return _bessel_scaled(x, 0)


def i1(x):
    return torch.sign(x) * torch.exp(torch.abs(x)) * _bessel_scaled(x, 1)


def i1e(x):
    return torch.sign(x) * _bessel_scaled(x, 1)


def _erfcx_positive(x):
    """``exp(x^2) erfc(x)`` for ``x >= 0``: the Chebyshev fit ``t exp(P(t))``, ``t = 1 / (1 + x / 2)``, of
    Numerical Recipes' ``erfcc`` (relative error under 1.2e-7 on ``[0, inf)``, ``1 / (x sqrt(pi))`` at large
    ``x``) without its ``exp(-x^2)`` factor, so that nothing overflows or underflows."""
    t = 1 / (1 + 0.5 * x)
    p = torch.full_like(x, 0.17087277)
    for c in (-0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418, 0.37409196, 1.00002368,
              -1.26551223):
        p = c + t * p
    return t * torch.exp(p)


def erfcx(x):
    """``special_erfcx`` (torch-mlir does not lower it): ``exp(x^2) (1 - erf(x))`` below 0.5 in magnitude, the
    fit above from 0.5 on, ``2 exp(x^2) - erfcx(-x)`` below -0.5 (relative error about 1e-7: float32's, not
    float64's; ATen's Faddeeva tables are not reproduced)."""
    a = torch.clamp(torch.abs(x), min=0.5)
    middle = torch.exp(x * x) * (1 - torch.erf(x))
    tail = _erfcx_positive(a)
    return torch.where(x >= 0.5, tail, torch.where(x <= -0.5, 2 * torch.exp(x * x) - tail, middle))


def log_ndtr(x):
    """``special_log_ndtr`` as ATen (SciPy's form): ``log(erfcx(-t) / 2) - t^2`` below -1, else
    ``log1p(-erfc(t) / 2)``, ``t = x / sqrt(2)``; ``erfc`` there from ``erfcx`` in the upper tail (relative
    precision where ``1 - erf`` has none)."""
    t = x * (1 / math.sqrt(2))
    low = torch.log(erfcx(-t) / 2) - t * t
    upper_erfc = torch.where(t >= 0.5, _erfcx_positive(torch.clamp(t, min=0.5)) * torch.exp(-t * t), 1 - torch.erf(t))
    return torch.where(x < -1.0, low, torch.log1p(-upper_erfc / 2))


_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0)
_NDTRI_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
             -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
             1.59056225126211695515E1, -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
             1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
             -3.80806407691578277194E-2, -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_NDTRI_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
             2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
             2.89247864745380683936E-6, 6.79019408009981274425E-9)


def _polevl(x, coefficients):
    result = torch.zeros_like(x)
    for c in coefficients:
        result = result * x + c
    return result


def ndtri(y0):
    """``special_ndtri`` (the standard normal quantile), Cephes' three rational approximations as ATen
    computes them: around the median for ``|y - 1/2| <= 1/2 - exp(-2)``, else in ``z = sqrt(-2 log y)`` of the
    nearer tail (``z < 8`` and beyond); -inf / +inf at 0 / 1, NaN outside ``[0, 1]``."""
    edge = math.exp(-2)
    upper = y0 > 1 - edge
    y = torch.where(upper, 1 - y0, y0)
    m = y - 0.5
    m2 = m * m
    middle = (m + m * (m2 * _polevl(m2, _NDTRI_P0) / _polevl(m2, _NDTRI_Q0))) * math.sqrt(2 * math.pi)
    yt = torch.clamp(y, min=torch.finfo(y.dtype).tiny, max=edge)
    x = torch.sqrt(-2.0 * torch.log(yt))
    z = 1 / x
    x1 = torch.where(x < 8.0, z * _polevl(z, _NDTRI_P1) / _polevl(z, _NDTRI_Q1),
                     z * _polevl(z, _NDTRI_P2) / _polevl(z, _NDTRI_Q2))
    tail = x - torch.log(x) / x - x1
    tail = torch.where(upper, tail, -tail)
    out = torch.where(y > edge, middle, tail)
    out = torch.where(y0 == 0, -math.inf, torch.where(y0 == 1, math.inf, out))
    return torch.where((y0 < 0) | (y0 > 1), math.nan, out)


def hypot(self, other):
    """``hypot``, which torch-mlir does not lower: ``sqrt(a^2 + b^2)`` (its gradient is autograd's own formula,
    ``grad * a / hypot``)."""
    return torch.sqrt(self * self + other * other)


_SHIFT = 8  # the special functions' series below are accurate to float32 rounding from 8 on


def _reflected(x):
    """``(x < 0.5, the argument the series read)``: ``1 - x`` below 0.5 (the reflection formulas), else ``x``."""
    low = x < 0.5
    return low, torch.where(low, 1 - x, x)


def _shifted(z, term, combine=torch.add, empty=0.0):
    """``term(z) (+) term(z + 1) (+) ... term(z + 7)`` (``combine``) where ``z`` is below ``_SHIFT``, else ``empty``;
    and ``z`` shifted by ``_SHIFT`` there."""
    small = z < _SHIFT
    total = term(z)
    for i in range(1, _SHIFT):
        total = combine(total, term(z + i))
    return torch.where(small, total, torch.full((), empty, dtype=z.dtype)), torch.where(small, z + _SHIFT, z)


def lgamma(x):
    """``lgamma`` (``log |Gamma(x)|``: distributions' log densities), which torch-mlir does not lower: Stirling's
    series from 8 on, the recurrence ``lgamma(z) = lgamma(z + 8) - log prod (z + i)`` below, and the reflection
    ``log(pi / |sin(pi x)|) - lgamma(1 - x)`` below 0.5. Its gradient, ``digamma``, is the next function."""
    low, z = _reflected(x)
    product, z = _shifted(z, lambda t: t, torch.mul, 1.0)  # below 16^8: no overflow
    r = 1 / (z * z)
    series = (z - 0.5) * torch.log(z) - z + 0.5 * math.log(2 * math.pi) + \
        (1 / z) * (1 / 12 + r * (-1 / 360 + r * (1 / 1260 + r * (-1 / 1680))))
    value = series - torch.log(product)
    return torch.where(low, math.log(math.pi) - torch.log(torch.abs(torch.sin(math.pi * x))) - value, value)


def digamma(x):
    """``digamma``: the asymptotic series from 8 on, ``psi(z) = psi(z + 8) - sum 1 / (z + i)`` below, and the
    reflection ``psi(1 - x) - pi / tan(pi x)`` below 0.5."""
    low, z = _reflected(x)
    inverses, z = _shifted(z, lambda t: 1 / t)
    r = 1 / (z * z)
    value = torch.log(z) - 0.5 / z - r * (1 / 12 + r * (-1 / 120 + r * (1 / 252 + r * (-1 / 240 + r / 132)))) \
        - inverses
    return torch.where(low, value - math.pi / torch.tan(math.pi * x), value)


def polygamma(n, x):
    """``polygamma(1, x)`` (trigamma: ``digamma``'s gradient): the asymptotic series from 8 on,
    ``psi1(z) = psi1(z + 8) + sum 1 / (z + i)^2`` below, and the reflection ``pi^2 / sin^2(pi x) - psi1(1 - x)``
    below 0.5. Other orders are left to torch-mlir."""
    if n != 1:
        return NotImplemented
    low, z = _reflected(x)
    squares, z = _shifted(z, lambda t: 1 / (t * t))
    r = 1 / (z * z)
    value = 1 / z + r * (0.5 + (1 / z) * (1 / 6 + r * (-1 / 30 + r * (1 / 42 + r * (-1 / 30))))) + squares
    return torch.where(low, (math.pi / torch.sin(math.pi * x)) ** 2 - value, value)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``diagonal_scatter`` (the gradient of ``t.diagonal()``: a Cholesky factor's log determinant), which
    torch-mlir does not lower: ``src``'s element ``k`` read at each diagonal position of the two dimensions
    (a gather of the last dimension by a constant index), selected where ``j - i == offset``."""
    dim1, dim2 = dim1 % input.dim(), dim2 % input.dim()
    n1, n2 = input.shape[dim1], input.shape[dim2]
    i = torch.arange(n1, device=input.device).unsqueeze(1)
    j = torch.arange(n2, device=input.device).unsqueeze(0)
    on = (j - i) == offset  # [n1, n2]
    k = torch.clamp(i if offset >= 0 else j, max=max(src.shape[-1] - 1, 0)).expand(n1, n2)
    placed = src[..., k].movedim((-2, -1), (dim1, dim2)) if src.shape[-1] else torch.zeros_like(input)
    shape = [1] * input.dim()
    shape[dim1], shape[dim2] = n1, n2
    mask = (on if dim1 < dim2 else on.transpose(0, 1)).reshape(shape)
    return torch.where(mask, placed.to(input.dtype), input)


def shrink_backward(grad_output, self, lambd):
    """``softshrink_backward`` / ``hardshrink_backward`` (``nn.Softshrink``, ``nn.Hardshrink``), which torch-mlir
    does not lower: the gradient where ``|x| > lambd``, 0 elsewhere (both ATen kernels' rule)."""
    return torch.where((self < -lambd) | (self > lambd), grad_output, torch.zeros((), dtype=grad_output.dtype))


def avg_pool3d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    """``avg_pool3d_backward`` (``nn.AvgPool3d``; ``nn.LocalResponseNorm``, which averages with a 3-D pooling
    over the channels), which torch-mlir does not lower. The average is separable: each window's sum is a
    product of 0/1 window matrices along depth, height and width (``_window_matrix``), and its divisor the
    product of the window's extents along them (clipped as PyTorch's kernel clips them,
    ``_avg_pool_divisors``), or the override; the gradient is the output gradient over the divisors through
    the transposed matrices."""
    kernel, stride, padding = _triple(kernel_size), _triple(stride if stride else kernel_size), _triple(padding)
    sizes, outs = self.shape[-3:], grad_output.shape[-3:]
    grad = grad_output
    if divisor_override:
        grad = grad / divisor_override
    else:
        for axis in range(3):
            d = _avg_pool_divisors(outs[axis], sizes[axis], kernel[axis], stride[axis], padding[axis],
                                   count_include_pad, grad.device).to(grad.dtype)
            grad = grad / d.reshape(-1, *([1] * (2 - axis)))
    for axis in range(3):
        a = _window_matrix(outs[axis], sizes[axis], kernel[axis], stride[axis], padding[axis], grad)  # [out, size]
        grad = (grad.movedim(axis - 3, -1) @ a).movedim(-1, axis - 3)
    return grad.to(self.dtype)


def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    """Each table row's gradient, the sum of the output gradients of the ids equal to it (``_one_hot_sum``),
    divided by how often the id occurs in the batch with ``scale_grad_by_freq`` (as ATen scales it)."""
    ids = indices.reshape(-1)
    keep = (ids != padding_idx) if padding_idx is not None and padding_idx >= 0 else None
    grad = _one_hot_sum(ids, num_weights, grad_output.reshape(ids.numel(), -1), keep)
    if scale_grad_by_freq:
        counts = (ids.unsqueeze(1) == torch.arange(num_weights, device=ids.device)).sum(0)
        grad = grad / torch.clamp(counts, min=1).unsqueeze(1).to(grad.dtype)
    return grad


def _one_hot_sum(ids, n, rows, keep=None):
    """``out[i] = sum of rows[k] where ids[k] == i`` for ``ids`` in [0, n) (rows where ``keep`` is false
    left out): ``one_hot(ids)^T @ rows``, a GEMM instead of a scatter."""
    one_hot = ids.unsqueeze(1) == torch.arange(n, device=ids.device).unsqueeze(0)  # [K, n]
    if keep is not None:
        one_hot = one_hot & keep.unsqueeze(1)
    return one_hot.to(rows.dtype).transpose(0, 1) @ rows


def _pair(v):
    v = list(v)
    return (v * 2)[:2] if len(v) == 1 else v


def _triple(v):
    """A 3-D op's per-dimension values from one value or three (``_pair``'s 3-D form)."""
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return (v * 3)[:3] if len(v) == 1 else v


def _pad_or_crop(x, dim, before, after, value=0.0):
    """Pad (positive, with ``value``) or crop (negative) ``x`` along ``dim`` by ``before`` / ``after``
    elements."""
    if before < 0:
        x = x.narrow(dim, -before, x.shape[dim] + before)
        before = 0
    if after < 0:
        x = x.narrow(dim, 0, x.shape[dim] + after)
        after = 0
    if before or after:
        pad = [0, 0] * (x.dim() - 1 - dim) + [before, after]
        x = torch.nn.functional.pad(x, pad, value=value)
    return x


def _dilate(x, dim, stride):
    """Insert ``stride - 1`` zeros between the elements of ``x`` along ``dim``."""
    if stride == 1:
        return x
    n = x.shape[dim]
    x = x.movedim(dim, -1)
    x = torch.nn.functional.pad(x.unsqueeze(-1), (0, stride - 1)).flatten(-2)[..., :(n - 1) * stride + 1]
    return x.movedim(-1, dim)


def convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                         output_padding, groups, output_mask):
    if input.dim() == 3 and transposed:
        # A transposed 1-D convolution (EnCodec's, DAC's upsampling), which torch-mlir's own decomposition
        # leaves: as the 2-D one over a height of 1.
        grads = convolution_backward(grad_output.unsqueeze(2), input.unsqueeze(2), weight.unsqueeze(2), bias_sizes,
                                     [1, *stride], [0, *padding], [1, *dilation], True, [0, *output_padding],
                                     groups, output_mask)
        return tuple(g.squeeze(2) if g is not None and i < 2 else g for i, g in enumerate(grads))
    if transposed and input.dim() in (4, 5):
        # A transposed convolution is the adjoint of the convolution with the same weights: its input
        # gradient is that convolution of the output gradient, and its weight gradient that convolution's
        # weight gradient with the roles of input (the output gradient) and output gradient (the input)
        # exchanged (in 3-D, torch-mlir's, which it lowers for a convolution that is not transposed).
        nd = input.dim() - 2
        grad_input = grad_weight = grad_bias = None
        if output_mask[0]:
            grad_input = aten.convolution.default(grad_output, weight, None, stride, padding, dilation, False,
                                                  [0] * nd, groups)
        if output_mask[1]:
            grad_weight = aten.convolution_backward.default(input, grad_output, weight, None, stride, padding,
                                                            dilation, False, [0] * nd, groups,
                                                            [False, True, False])[1]
        if output_mask[2]:
            grad_bias = grad_output.sum([0, *range(2, grad_output.dim())])
        return grad_input, grad_weight, grad_bias
    if input.dim() != 4:
        return NotImplemented
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    n, cin, h, w = input.shape
    cout, cin_g, kh, kw = weight.shape
    g = groups
    ho, wo = grad_output.shape[-2:]
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        grad_input = _input_gradient(grad_output, weight, (sh, sw), (ph, pw), (dh, dw), g, h, w)
    if output_mask[1] and cin_g == 1 and g > 1:
        # Depthwise (one input channel per group, m = Cout / Cin outputs each): a depthwise convolution
        # over the C*N (channel, sample) planes, each with its m output-gradient planes as filters,
        # then the sum over the samples.
        m = cout // cin
        x = _weight_gradient_window(input, (kh, kw), (sh, sw), (ph, pw), (dh, dw), (ho, wo))
        x = x.transpose(0, 1).reshape(1, cin * n, *x.shape[2:])  # plane c*N + n
        wgo = grad_output.reshape(n, cin, m, ho, wo).transpose(0, 1).reshape(cin * n * m, 1, ho, wo)
        gw = torch.nn.functional.conv2d(x, wgo, None, (dh, dw), 0, (sh, sw), cin * n)  # [1, C*N*m, kh, kw]
        gw = gw[0].reshape(cin, n, m, kh, kw).sum(1)
        grad_weight = gw.reshape(cout, 1, kh, kw)
    elif output_mask[1] and g > 1:
        # Grouped, several channels per group: output gradient x im2col^T, one GEMM per group.
        cols = _im2col(input, g, kh, kw, (sh, sw), (ph, pw), (dh, dw), ho, wo)  # [g, Cin/g*kh*kw, N*Ho*Wo]
        go = grad_output.reshape(n, g, cout // g, ho * wo).permute(1, 2, 0, 3).reshape(g, cout // g, n * ho * wo)
        grad_weight = torch.bmm(go, cols.transpose(1, 2)).reshape(cout, cin_g, kh, kw)
    elif output_mask[1]:
        x = _weight_gradient_window(input, (kh, kw), (sh, sw), (ph, pw), (dh, dw), (ho, wo))
        # [N, g, Cin/g, H, W] -> [Cin/g, g, N, H, W] -> [Cin/g, g*N, H, W]
        x = x.reshape(n, g, cin_g, *x.shape[2:]).permute(2, 1, 0, 3, 4).reshape(cin_g, g * n, *x.shape[2:])
        wgo = grad_output.transpose(0, 1)  # [Cout, N, Ho, Wo]
        gw = torch.nn.functional.conv2d(x, wgo, None, (dh, dw), 0, (sh, sw), g)  # [Cin/g, Cout, kh, kw]
        grad_weight = gw.transpose(0, 1)
    if output_mask[2]:
        grad_bias = grad_output.sum((0, 2, 3))
    return grad_input, grad_weight, grad_bias


def _weight_gradient_window(input, kernel, stride, padding, dilation, out):
    """``input`` [N, C, H, W] padded, and cropped at the far side, to exactly the rows and columns a
    convolution's weight gradient reads: ``(k-1)*d + (o-1)*s + 1`` along each axis. The weight gradient is
    the convolution of this window with the output gradient as a filter dilated by the stride, so its
    output is then exactly ``kh x kw``. Padded by ``p`` on both sides instead, the window keeps up to
    ``s - 1`` rows past the last one a stride reaches, and the convolution computed taps no filter has:
    a 4 x 4 gradient for a 3 x 3 filter of stride 2 (1.8x the multiply-adds), 2 x 2 for a 1 x 1
    downsampling filter (4x; ResNet-50's strided weight gradients, about 1.2 of its 12 GMACs a step per
    image)."""
    for axis, (k, s, p, d, o) in enumerate(zip(kernel, stride, padding, dilation, out)):
        extent = (k - 1) * d + (o - 1) * s + 1
        input = _pad_or_crop(input, 2 + axis, p, extent - p - input.shape[2 + axis])
    return input


def _input_gradient(grad_output, weight, stride, padding, dilation, groups, h, w):
    """The gradient, of height ``h`` and width ``w``, of a 2-D convolution's input from its output's
    ``grad_output``: ``out[y] = sum_i go_d[y + p - i*d]``, a convolution of the stride-dilated output gradient
    ``go_d`` padded by ``d*(k-1) - p`` (the far side to the input's size) with the flipped, group-transposed
    kernel. A transposed convolution's forward is the same map (``convolution``)."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    if (sh > 1 or sw > 1) and dh == dw == 1:
        return _strided_input_gradient(grad_output, weight, stride, padding, groups, (h, w))
    cout, cin_g, kh, kw = weight.shape
    g = groups
    go = _dilate(_dilate(grad_output, 2, sh), 3, sw)
    before_h, before_w = dh * (kh - 1) - ph, dw * (kw - 1) - pw
    go = _pad_or_crop(go, 2, before_h, h + dh * (kh - 1) - before_h - go.shape[2])
    go = _pad_or_crop(go, 3, before_w, w + dw * (kw - 1) - before_w - go.shape[3])
    wt = weight.flip(2, 3).reshape(g, cout // g, cin_g, kh, kw).transpose(1, 2).reshape(g * cin_g, cout // g, kh, kw)
    return torch.nn.functional.conv2d(go, wt, None, 1, 0, (dh, dw), g)


def _strided_input_gradient(grad_output, weight, stride, padding, groups, size):
    """``_input_gradient`` of a strided convolution (dilation 1) by input sublattices. The stride-dilated
    output gradient is ``(s-1)/s`` zeros along each strided dimension, so its convolution spent 3/4 of its
    multiply-adds on zeros at stride 2 (ResNet-50's strided 3x3 and 1x1 convolutions: about 2 of the 12
    GMACs of a step, per image). Tap ``i`` of a dimension reaches the input positions ``o*s + i - p``:
    residue ``r = (i - p) mod s``, shifted by ``q = (i - p - r) / s`` on that sublattice. The taps of one
    residue, ``i = i0, i0 + s, ...``, form a sub-kernel ``weight[..., i0::s]`` whose shifts grow by one, so
    each residue's gradient is a stride-1 convolution of the output gradient with that sub-kernel, flipped
    (the gradient padded by ``taps - 1 + q0`` in front), and ``_place_taps`` interleaves the residues. A
    residue no tap reaches (a kernel smaller than the stride) stays zero. The sub-kernels are taken from
    the weights with the taps outermost (``_every`` over whole [Cin, Cout] planes: a stepped slice of the
    kernel dimensions became a gather, and a strided view of them a GEMM operand it could not take)."""
    cout, cin_g = weight.shape[:2]
    g = groups
    per_axis = []
    for s, p, k, n, m in zip(stride, padding, weight.shape[2:], size, grad_output.shape[2:]):
        residues = []
        for r in range(s):
            first = (r + p) % s  # the first tap with i - p = r (mod s)
            length = -(-(n - r) // s)  # the sublattice's positions in the input
            if first >= k or length <= 0:
                continue
            taps = len(range(first, k, s))
            before = taps - 1 + (first - p - r) // s
            residues.append((r, first, taps, before, length + taps - 1 - before - m))
        per_axis.append(residues)
    # Group-transposed with the taps outermost, [kh, kw, g*Cin/g, Cout/g]: a residue's taps are whole
    # [Cin, Cout] planes (read in order, unlike a stepped slice of the kernel dimensions), then put back
    # last for the convolution.
    taps = weight.reshape(g, cout // g, cin_g, *weight.shape[2:]).permute(3, 4, 0, 2, 1).reshape(
        *weight.shape[2:], g * cin_g, cout // g)
    parts = []
    for rh, first_h, th, before_h, after_h in per_axis[0]:
        for rw, first_w, tw, before_w, after_w in per_axis[1]:
            go = _pad_or_crop(_pad_or_crop(grad_output, 2, before_h, after_h), 3, before_w, after_w)
            sub = _every(_every(taps, 0, first_h, stride[0], th), 1, first_w, stride[1], tw)
            sub = sub.flip(0, 1).permute(2, 3, 0, 1)
            parts.append(((rh, rw), torch.nn.functional.conv2d(go, sub, None, 1, 0, 1, g)))
    return _place_taps(parts, stride, size)


def _every(x, dim, start, stride, count):
    """``x[start : start + count * stride : stride]`` along ``dim``, as a narrow and a reshape (zeros past
    the end where the last window needs them) instead of a stepped slice."""
    need = start + count * stride
    if need > x.shape[dim]:
        x = _pad_or_crop(x, dim, 0, need - x.shape[dim])
    x = x.narrow(dim, start, count * stride)
    if stride > 1:
        x = x.unflatten(dim, (count, stride)).select(dim + 1, 0)
    return x


def _im2col(input, groups, kh, kw, stride, padding, dilation, ho, wo):
    """The padded ``input`` [N, Cin, H, W] under each of the kh x kw filter taps, arranged per group as
    ``[g, Cin/g*kh*kw, N*Ho*Wo]``: a group's rows are ordered as its filters' (channel, row, column)."""
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    n, cin = input.shape[:2]
    x = _pad_or_crop(_pad_or_crop(input, 2, ph, ph), 3, pw, pw)
    taps = [_every(_every(x, 2, i * dh, sh, ho), 3, j * dw, sw, wo) for i in range(kh) for j in range(kw)]
    k = cin // groups * kh * kw
    return torch.stack(taps, 2).reshape(n, groups, k, ho * wo).permute(1, 2, 0, 3).reshape(groups, k, n * ho * wo)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    cin_g = weight.shape[1]
    if groups == 1 or (cin_g == 1 and not transposed) or input.dim() not in (3, 4):
        return NotImplemented
    if input.dim() == 3:  # 1-D: the 2-D form on a height of one
        out = convolution(input.unsqueeze(2), weight.unsqueeze(2), bias, [1, *stride], [0, *padding],
                          [1, *dilation], transposed, [0, *output_padding], groups)
        return out.squeeze(2)
    stride, padding, dilation = _pair(stride), _pair(padding), _pair(dilation)
    if transposed:
        # The adjoint of the convolution with the same weights: its input gradient (_input_gradient), of
        # the size (in - 1) * s - 2p + d * (k - 1) + output_padding + 1.
        size = [(input.shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (weight.shape[2 + i] - 1)
                + _pair(output_padding)[i] + 1 for i in range(2)]
        out = _input_gradient(input, weight, stride, padding, dilation, groups, *size)
        return out if bias is None else out + bias.reshape(1, -1, 1, 1)
    n, _, h, w = input.shape
    cout, _, kh, kw = weight.shape
    ho = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    wo = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    cols = _im2col(input, groups, kh, kw, stride, padding, dilation, ho, wo)
    out = torch.bmm(weight.reshape(groups, cout // groups, -1), cols)  # [g, Cout/g, N*Ho*Wo]
    out = out.reshape(cout, n, ho, wo).transpose(0, 1)
    if bias is not None:
        out = out + bias.reshape(1, cout, 1, 1)
    return out


# ------------------------------------------------------------------ random numbers

_RANDOM_OTHER = ("normal", "randint", "randint_like", "randperm",
                 "multinomial", "geometric_", "log_normal_", "cauchy_", "poisson")


def _i32(value):
    """``value`` (taken modulo 2^32) as an int32 scalar tensor."""
    value %= 1 << 32
    return torch.full((), value - (1 << 32) if value >= 1 << 31 else value, dtype=torch.int32)


def _shr(x, shift):
    """Logical right shift of int32 ``x`` (an arithmetic shift with the copied sign bits masked off)."""
    return torch.bitwise_and(torch.bitwise_right_shift(x, _i32(shift)), _i32((1 << (32 - shift)) - 1))


def _hash32(x):
    """A 32-bit integer hash of int32 ``x`` (lowbias32's xor-shift-multiply rounds; the multiplications
    wrap modulo 2^32, in PyTorch as in MLIR)."""
    for shift, mul in ((16, 0x7FEB352D), (15, 0x846CA68B)):
        x = torch.bitwise_xor(x, _shr(x, shift))
        x = x * _i32(mul)
    return torch.bitwise_xor(x, _shr(x, 16))


def _uniform(state, op, shape, dtype, device):
    """Uniform numbers in [0, 1) of ``shape``: the ``op``-th random op of the step at random-number state
    ``state`` (module comment)."""
    key = _hash32(torch.bitwise_xor(_hash32(torch.bitwise_xor(state.to(torch.int32), _i32(0x5BD1E995))),
                                    _i32((op + 1) * 0x632BE5AB)))
    numel = 1
    for d in shape:
        numel *= int(d)
    index = torch.arange(numel, dtype=torch.int32, device=device)
    bits = _hash32(torch.bitwise_xor(_hash32(torch.bitwise_xor(index, key)), key))
    top24 = _shr(bits, 8)
    return (top24.to(torch.float32) * (1.0 / (1 << 24))).reshape(tuple(shape)).to(dtype)


def _native_dropout(state, op, input, p, train):
    if train is False or p == 0:
        return input.clone(), torch.ones_like(input, dtype=torch.bool)
    keep = _uniform(state, op, input.shape, torch.float32, input.device) >= p
    return input * keep.to(input.dtype) * (1.0 / (1.0 - p)), keep


def _bernoulli(state, op, input, generator=None):
    """bernoulli(input): ``input`` holds the probabilities."""
    return (_uniform(state, op, input.shape, torch.float32, input.device) < input).to(input.dtype)


def _bernoulli_p(state, op, input, p=0.5, generator=None):
    """bernoulli(input, p) (input's shape and type; p a number, 0.5 when the call leaves it out, or a
    tensor)."""
    return (_uniform(state, op, input.shape, torch.float32, input.device) < p).to(input.dtype)


def _rand_like(state, op, input, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _uniform(state, op, input.shape, dtype or input.dtype, input.device)


def _rand(state, op, size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return _uniform(state, op, size, dtype or torch.get_default_dtype(), device)


def _uniform_op(state, op, input, low=0.0, high=1.0, generator=None):
    return low + (high - low) * _uniform(state, op, input.shape, input.dtype, input.device)


def _normal(state, op, shape, dtype, device):
    """Standard normal numbers of ``shape`` (Box-Muller on two of the op's uniform numbers per element:
    ``sqrt(-2 log(1 - u1)) cos(2 pi u2)``, 1 - u1 in (0, 1])."""
    u = _uniform(state, op, (2, *shape), torch.float32, device)
    z = torch.sqrt(-2.0 * torch.log(1.0 - u[0])) * torch.cos((2.0 * math.pi) * u[1])
    return z.to(dtype)


def _randn(state, op, size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return _normal(state, op, size, dtype or torch.get_default_dtype(), device)


def _randn_like(state, op, input, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _normal(state, op, input.shape, dtype or input.dtype, input.device)


def _normal_op(state, op, input, mean=0.0, std=1.0, generator=None):
    return mean + std * _normal(state, op, input.shape, input.dtype, input.device)


def _normal_sized(state, op, mean, std, size, *, generator=None, dtype=None, layout=None, device=None,
                  pin_memory=None):
    """``torch.normal(mean, std, size)`` with Python numbers."""
    return mean + std * _normal(state, op, size, dtype or torch.get_default_dtype(), device)


def _normal_tensors(state, op, mean, std=1.0, *, generator=None):
    """``torch.normal(mean, std)`` with a tensor mean, std or both: one number per element of their
    broadcast shape."""
    tensors = [t for t in (mean, std) if isinstance(t, torch.Tensor)]
    shape = torch.broadcast_shapes(*(t.shape for t in tensors))
    dtype = torch.result_type(mean, std)
    return mean + std * _normal(state, op, shape, dtype, tensors[0].device)


def _exponential_op(state, op, input, lambd=1.0, generator=None):
    """Exponential numbers of rate ``lambd``: ``-log(1 - u) / lambd`` (PhiMoE's sparsemixer draws Gumbel
    noise so)."""
    u = _uniform(state, op, input.shape, torch.float32, input.device)
    return (-torch.log(1.0 - u) / lambd).to(input.dtype)


def _randint_values(state, op, low, high, shape, dtype, device):
    """Integers uniform in [low, high): ``low + floor(u (high - low))`` (every value reachable for ranges up
    to 2^24, the uniform numbers' resolution)."""
    u = _uniform(state, op, shape, torch.float32, device)
    values = torch.clamp(low + torch.floor(u * float(high - low)), max=high - 1)
    return values.to(dtype or torch.int64)


def _randint(state, op, high, size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    return _randint_values(state, op, 0, high, size, dtype, device)


def _randint_low(state, op, low, high, size, generator=None, dtype=None, layout=None, device=None,
                 pin_memory=None):
    return _randint_values(state, op, low, high, size, dtype, device)


def _randint_like(state, op, input, high, dtype=None, layout=None, device=None, pin_memory=None,
                  memory_format=None):
    return _randint_values(state, op, 0, high, input.shape, dtype or input.dtype, input.device)


def _randint_like_low(state, op, input, low, high, dtype=None, layout=None, device=None, pin_memory=None,
                      memory_format=None):
    return _randint_values(state, op, low, high, input.shape, dtype or input.dtype, input.device)


def _rrelu(state, op, input, noise, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """``rrelu_with_noise`` (``F.rrelu``, ``nn.RReLU``) in training: as ATen's kernel, each non-positive
    element is multiplied by its own slope uniform in [lower, upper), which ``noise`` records (1 elsewhere) for
    the backward (``grad * noise``)."""
    if not training:
        return rrelu_with_noise_functional(input, noise, lower, upper, False)[0]
    slope = lower + (upper - lower) * _uniform(state, op, input.shape, input.dtype, input.device)
    negative = input <= 0
    noise.copy_(torch.where(negative, slope, torch.ones_like(input)))
    return torch.where(negative, input * slope, input)


def rrelu_with_noise_functional(input, noise, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """``rrelu`` in evaluation (``F.rrelu(training=False)``, ``nn.RReLU().eval()``): ``leaky_relu`` with the
    mean slope, ``noise`` as it came. (In training the capture draws it: ``_rrelu``.)"""
    if training:
        return NotImplemented
    return aten.leaky_relu.default(input, (lower + upper) / 2), noise.clone()


def rrelu_with_noise_backward(grad, input, noise, lower, upper, training, self_is_result):
    """``rrelu``'s backward as ATen computes it: ``grad * noise`` in training, ``leaky_relu``'s backward with
    the mean slope in evaluation. torch-mlir's own lowering of the evaluation form computed
    ``max(grad, 0) + slope * min(input, 0)``: ``nn.RReLU().eval()`` trained on a wrong gradient, silently."""
    if training:
        return grad * noise
    return aten.leaky_relu_backward.default(grad, input, (lower + upper) / 2, self_is_result)


def _in_place(fn):
    def run(state, op, input, *args, **kwargs):
        return input.copy_(fn(state, op, input, *args, **kwargs))
    return run


# The random ops the capture draws from the step's random-number state: aten overload -> function of
# (state, op index, *the op's arguments).
RANDOM = {
    aten.native_dropout.default: _native_dropout,
    aten.bernoulli.default: _bernoulli,
    aten.bernoulli.p: _bernoulli_p,
    aten.bernoulli.Tensor: _bernoulli_p,
    aten.bernoulli_.float: _in_place(_bernoulli_p),
    aten.bernoulli_.Tensor: _in_place(_bernoulli_p),
    aten.rand_like.default: _rand_like,
    aten.rand.default: _rand,
    aten.uniform.default: _uniform_op,
    aten.uniform_.default: _in_place(_uniform_op),
    aten.randn.default: _randn,
    aten.randn.generator: _randn,  # torch.randn(..., generator=None): diffusers' randn_tensor
    aten.rand.generator: _rand,
    aten.randint.generator: _randint,
    aten.randint.low_generator: _randint_low,
    aten.normal.float_float: _normal_sized,
    aten.normal.Tensor_float: _normal_tensors,
    aten.normal.float_Tensor: _normal_tensors,
    aten.normal.Tensor_Tensor: _normal_tensors,
    aten.randn_like.default: _randn_like,
    aten.normal_.default: _in_place(_normal_op),
    aten.exponential_.default: _in_place(_exponential_op),
    aten.randint.default: _randint,
    aten.randint.low: _randint_low,
    aten.randint_like.default: _randint_like,
    aten.randint_like.low_dtype: _randint_like_low,
    aten.rrelu_with_noise.default: _rrelu,
}


def _draws(node) -> bool:
    """Whether a captured ``RANDOM`` op draws numbers: ``rrelu`` only in training."""
    if node.target is aten.rrelu_with_noise.default:
        training = node.kwargs.get("training", node.args[4] if len(node.args) > 4 else False)
        return bool(training)
    return True


def random_ops(gm) -> tuple:
    """The random ops of a captured graph: (those ``RANDOM`` draws, names of the others)."""
    drawn, other = set(), set()
    for n in gm.graph.nodes:
        if n.op != "call_function" or not isinstance(n.target, torch._ops.OpOverload):
            continue
        if n.target in RANDOM:
            if _draws(n):
                drawn.add(n.target)
        elif n.target.__name__.split(".")[0] in _RANDOM_OTHER or \
                n.target.__name__.split(".")[0] in {op.__name__.split(".")[0] for op in RANDOM}:
            # another overload of a random op (one not drawn from the step's state would be a constant)
            other.add(n.target.__name__)
    return drawn, other


def index_put(self, indices, values, accumulate=False):
    """``self[..., idx_1, ..., idx_m, ...] += values`` with integer index tensors at adjacent dimensions
    d..d+m-1 (the ones before them None): the backward of ``table[idx]`` or ``table[:, idx]`` (Swin's and
    LeViT's relative-position bias tables) and, with two, of ``col2im`` (``nn.Unfold``'s backward: ConvBERT).
    The indices (broadcast together) become one flat index into those dimensions merged, moved first, then
    ``one_hot(idx)^T @ values``, the embedding backward's GEMM. Without accumulation, several such index
    tensors (``h[rows[:, None], cols] = v``) or one after a slice become the same flat index, moved first, and
    one ``index_put`` through it (which torch-mlir lowers). Other index_puts are left to torch-mlir."""
    given = [i for i, t in enumerate(indices) if t is not None]
    if not given or given != list(range(given[0], given[0] + len(given))) or \
            any(indices[i].dtype == torch.bool for i in given):
        return NotImplemented
    d, m = given[0], len(given)
    if not accumulate and d == 0 and m == 1:
        return NotImplemented
    sizes = self.shape[d:d + m]
    index = 0
    for part, size in zip(torch.broadcast_tensors(*[indices[i] for i in given]), sizes):
        index = index * size + torch.where(part < 0, part + size, part)
    n, k = math.prod(sizes), index.dim()
    merged = self.reshape(*self.shape[:d], n, *self.shape[d + m:])
    rows = values.expand(*self.shape[:d], *index.shape, *self.shape[d + m:])
    rows = rows.movedim(list(range(d, d + k)), list(range(k)))  # index dims first
    target = merged.movedim(d, 0)
    if not accumulate:
        written = aten.index_put.default(target.contiguous(), [index.reshape(-1)],
                                         rows.reshape(index.numel(), *target.shape[1:]).to(self.dtype))
        return written.movedim(0, d).reshape(self.shape)
    rows = rows.reshape(index.numel(), -1)
    added = _one_hot_sum(index.reshape(-1), n, rows).reshape(target.shape).to(self.dtype)
    return (target + added).movedim(0, d).reshape(self.shape)


def _constant(values, dtype):
    """``values`` as a tensor made outside the trace: a constant of the step (``torch.tensor`` traced
    records a ``lift_fresh_copy`` and an in-place ``detach_`` that torch-mlir does not lower)."""
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes():
        return torch.tensor(values, dtype=dtype)


def signbit(x):
    """``signbit`` without reading the bits (torch-mlir lowers it through ``view(dtype)``, which no pipeline
    takes): negative, or a negative zero (``1 / -0.0 == -inf``). A NaN counts as positive whatever its
    sign bit."""
    if not x.is_floating_point():
        return x < 0
    return (x < 0) | ((x == 0) & (torch.reciprocal(x) < 0))


def copysign(self, other):
    """``copysign`` as ``|self|`` negated where ``other``'s sign is (``signbit`` above; a Python number's
    sign is known while capturing)."""
    if not self.is_floating_point():
        self = self.to(torch.get_default_dtype() if not isinstance(other, torch.Tensor)
                       else torch.result_type(self, other))
    magnitude = torch.abs(self)
    if not isinstance(other, torch.Tensor):
        return -magnitude if math.copysign(1.0, other) < 0 else magnitude
    return torch.where(signbit(other), -magnitude, magnitude)


def searchsorted(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None):
    """``searchsorted`` (and ``searchsorted.Scalar``): the count of boundaries before each value, ``b < v``
    (``b <= v`` with ``right`` / ``side="right"``), over the last dimension of the sorted sequence, one
    comparison per boundary and value (torch-mlir lowers neither overload; ``bucketize`` it does)."""
    if sorter is not None:
        sorted_sequence = torch.gather(sorted_sequence, -1, sorter)
    right = right or side == "right"
    values = self if isinstance(self, torch.Tensor) else torch.full((), self, dtype=sorted_sequence.dtype,
                                                                    device=sorted_sequence.device)
    before = torch.le if right else torch.lt
    if sorted_sequence.dim() == 1:
        found = before(sorted_sequence, values.unsqueeze(-1))
    else:
        found = before(sorted_sequence.unsqueeze(-2), values.unsqueeze(-1))
    return found.sum(-1, dtype=torch.int32 if out_int32 else torch.int64)


def histc(self, bins=100, min=0, max=0):
    """``histc``: each element's bin ``(x - min) * bins / (max - min)``, truncated, as ATen's kernel computes
    it (``max`` itself in the last bin, elements outside ``[min, max]`` in none), counted by a one-hot sum
    over the bins. ``min == max`` takes the data's own range (widened by 1 each way if that is empty too)."""
    x = self.reshape(-1)
    if min == max:
        low, high = x.min(), x.max()
        same = low == high
        low, high = torch.where(same, low - 1, low), torch.where(same, high + 1, high)
    else:
        low = torch.full((), min, dtype=self.dtype, device=self.device)
        high = torch.full((), max, dtype=self.dtype, device=self.device)
    position = torch.trunc((x - low) * bins / (high - low)).to(torch.int64)
    position = torch.where(position == bins, position - 1, position)
    inside = (x >= low) & (x <= high)
    one_hot = (position.unsqueeze(-1) == torch.arange(bins, device=self.device)) & inside.unsqueeze(-1)
    return one_hot.to(self.dtype).sum(0)


def _reduced_grad(grad_output, rows, reduction):
    """``grad_output`` per row: the same scalar for ``sum``, over the row count for ``mean``, its own element
    for ``none``."""
    if reduction == 0:  # none
        return grad_output.reshape(-1, 1) if rows.dim() == 2 else grad_output.reshape(1)
    return grad_output / rows.shape[0] if reduction == 1 and rows.dim() == 2 else grad_output


def multi_margin_loss_backward(grad_output, self, target, p, margin, weight=None, reduction=1):
    """``multi_margin_loss``'s gradient (``nn.MultiMarginLoss``), ATen's: ``z = margin - x[y] + x[j]``; each
    class ``j != y`` with ``z > 0`` gets ``w[y] p z^(p - 1) / C``, the target class minus their sum."""
    x = self if self.dim() == 2 else self.unsqueeze(0)
    y = target.reshape(-1)
    classes = x.shape[1]
    target_hot = torch.nn.functional.one_hot(y, classes).to(x.dtype)
    picked = (x * target_hot).sum(1, keepdim=True)
    z = margin - picked + x
    slope = (z > 0).to(x.dtype) * (1 - target_hot) * (p * z ** (p - 1) if p != 1 else 1.0)
    if weight is not None:
        slope = slope * weight[y].unsqueeze(1)
    slope = slope / classes
    g = slope - target_hot * slope.sum(1, keepdim=True)
    return (g * _reduced_grad(grad_output, x if self.dim() == 2 else self, reduction)).reshape(self.shape)


def multilabel_margin_loss_backward(grad_output, self, target, reduction, is_target):
    """``multilabel_margin_loss``'s gradient (``nn.MultiLabelMarginLoss``), ATen's: for each listed target
    ``j`` (the entries before the first -1, repeats counted) and each non-target ``k`` with
    ``1 - x[j] + x[k] > 0``, ``x[j]`` gets ``-1 / C`` and ``x[k]`` ``+1 / C``."""
    x = self if self.dim() == 2 else self.unsqueeze(0)
    t = target if target.dim() == 2 else target.unsqueeze(0)
    classes = x.shape[1]
    listed = torch.cumprod((t != -1).to(torch.int64), 1)
    counts = (torch.nn.functional.one_hot(t.clamp(min=0), classes) * listed.unsqueeze(-1)).sum(1).to(x.dtype)
    others = 1 - (counts > 0).to(x.dtype)
    active = (1 - x.unsqueeze(2) + x.unsqueeze(1) > 0).to(x.dtype)  # [n, j, k]
    pairs = counts.unsqueeze(2) * others.unsqueeze(1) * active
    g = (pairs.sum(1) - pairs.sum(2)) / classes
    return (g * _reduced_grad(grad_output, x if self.dim() == 2 else self, reduction)).reshape(self.shape)


def embedding_renorm(self, indices, max_norm, norm_type):
    """``embedding_renorm`` (``nn.Embedding(max_norm=...)`` renormalizes the rows it looks up, in place, before
    the lookup; functionalization makes that this op and a new value of the weight): each row ``indices``
    names whose ``norm_type``-norm exceeds ``max_norm`` scaled by ``max_norm / (norm + 1e-7)``, as ATen."""
    rows = self.shape[0]
    named = (torch.nn.functional.one_hot(indices.reshape(-1), rows).sum(0) > 0).unsqueeze(1)
    norms = torch.linalg.vector_norm(self, norm_type, dim=1, keepdim=True)
    scale = torch.where(named & (norms > max_norm), max_norm / (norms + 1e-7), torch.ones_like(norms))
    return self * scale


def _reflect(q, v, tau):
    """``(I - tau v v^T) q``: one Householder reflection of the rows of ``q`` [..., m, n], ``v`` [..., m],
    ``tau`` [...]."""
    return q - tau[..., None, None] * v.unsqueeze(-1) * (v.unsqueeze(-1) * q).sum(-2, keepdim=True)


def _householder_vector(a, j, rows):
    """Column ``j`` of a compact QR's ``a`` as its reflector: 0 above row ``j``, 1 at ``j``, ``a`` below."""
    one = torch.ones((), dtype=a.dtype, device=a.device)
    return torch.where(rows > j, a[..., :, j], torch.where(rows == j, one, torch.zeros_like(one)))


def _reflections_of_identity(reflectors, like, columns):
    """``H_0 ... H_{k-1}`` (``reflectors``: their ``(v, tau)`` in order) applied to the first ``columns``
    columns of the identity of ``like``'s row count (LAPACK's ``orgqr``)."""
    m = like.shape[-2]
    q = torch.eye(m, columns, dtype=like.dtype, device=like.device).expand(*like.shape[:-2], m, columns)
    for v, tau in reversed(reflectors):
        q = _reflect(q, v, tau)
    return q


def _householder_product(a, tau, columns):
    """The product of the reflectors a compact QR's ``a`` and ``tau`` hold, on the first ``columns`` columns
    of the identity."""
    rows = torch.arange(a.shape[-2], device=a.device)
    return _reflections_of_identity([(_householder_vector(a, j, rows), tau[..., j]) for j in range(tau.shape[-1])],
                                    a, columns)


def householder_product(func, input, tau, *, out=None):
    """``torch.linalg.householder_product`` / ``torch.orgqr`` (``parametrizations.orthogonal``'s map for
    non-square weights), which torch-mlir does not lower: the reflections unrolled, differentiated by
    autograd."""
    if out is not None or tau.shape[-1] > _UNROLLED or input.is_complex():
        return NotImplemented
    return _householder_product(input, tau, input.shape[-1])


def qr(func, A, mode="reduced", *, out=None):
    """``torch.linalg.qr`` for up to 64 columns, as LAPACK's ``geqrf`` + ``orgqr`` compute it
    (so the signs are ATen's): column ``j``'s reflector from ``alpha = R_jj`` and the norm of the entries
    below, ``beta = -sign(alpha) sqrt(alpha^2 + |x|^2)``, ``tau = (beta - alpha) / beta``, ``v = x / (alpha -
    beta)`` (``tau = 0`` where ``x`` is zero), applied to the columns right of it; ``Q`` the reflections'
    product. Unrolled, so autograd differentiates the algorithm."""
    if out is not None or A.is_complex() or min(A.shape[-2:]) > _UNROLLED:
        return NotImplemented
    m, n = A.shape[-2:]
    k = min(m, n)
    rows, cols = torch.arange(m, device=A.device), torch.arange(n, device=A.device)
    r, reflectors = A, []
    zero = torch.zeros((), dtype=A.dtype, device=A.device)
    for j in range(k):
        alpha = r[..., j, j]
        below = torch.where(rows > j, r[..., :, j], zero)
        xnorm2 = (below * below).sum(-1)
        reflect = xnorm2 > 0
        norm = torch.sqrt(torch.where(reflect, alpha * alpha + xnorm2, torch.ones_like(alpha)))
        beta = torch.where(alpha >= 0, -norm, norm)
        tau = torch.where(reflect, (beta - alpha) / beta, zero)
        scale = torch.where(reflect, 1 / (alpha - beta), zero)
        v = torch.where(rows > j, below * scale.unsqueeze(-1), torch.where(rows == j, torch.ones_like(zero), zero))
        r = torch.where(cols >= j, _reflect(r, v, tau), r)  # the trailing columns only, as geqrf
        reflectors.append((v, tau))
    upper = torch.triu(r)
    if mode == "r":
        return torch.return_types.linalg_qr((A.new_zeros(0), upper[..., :k, :]))
    q = _reflections_of_identity(reflectors, A, m if mode == "complete" else k)
    result = (q, upper) if mode == "complete" else (q, upper[..., :k, :])
    return torch.return_types.linalg_qr(result)


def _round_robin(n):
    """The ``n - 1`` rounds of a round-robin tournament over ``n`` (even) indices, each ``n / 2`` disjoint pairs
    ``(p, q)``, ``p < q``, every pair in one round (the circle method: index 0 stays, the others turn)."""
    turn, rounds = list(range(n)), []
    for _ in range(n - 1):
        rounds.append([tuple(sorted((turn[i], turn[n - 1 - i]))) for i in range(n // 2)])
        turn = [turn[0], turn[-1], *turn[1:-1]]
    return rounds


def _jacobi_sweeps(n):
    """Sweeps of parallel cyclic Jacobi for an ``n`` x ``n`` problem: convergence is quadratic once the
    off-diagonal part is small, and the sweeps needed grow like log n: 5-6 sweeps reach float64's precision
    for 16 x 16 random symmetric matrices. Eigenvalues of high multiplicity converge only linearly (a third of
    64 equal to 0, 1 and 2: 3x a sweep; serial cyclic Jacobi is as slow), hence the margin. Checked against
    LAPACK in python/tests/test_decompositions.py."""
    return max(1, math.ceil(math.log2(max(n, 2)))) + 8


def _jacobi_rounds(n, like):
    """Per round of ``_round_robin(n)``: the one-hot rows of its ``p`` and ``q`` indices [n / 2, n], constants
    of ``like``'s type."""
    eye = np.eye(n)
    return [(_constant(eye[[p for p, _ in pairs]], like.dtype), _constant(eye[[q for _, q in pairs]], like.dtype))
            for pairs in _round_robin(n)]


def _rotation(app, aqq, apq):
    """The Jacobi rotation ``(c, s)`` that zeroes ``apq`` of the symmetric 2 x 2 ``[[app, apq], [apq, aqq]]``
    (Golub and Van Loan's symmetric Schur decomposition): ``tau = (aqq - app) / (2 apq)``, ``t = sign(tau) /
    (|tau| + sqrt(1 + tau^2))`` (the smaller angle), ``c = 1 / sqrt(1 + t^2)``, ``s = t c``; no rotation where
    ``apq`` is 0."""
    rotate = apq != 0
    tau = (aqq - app) / (2 * torch.where(rotate, apq, torch.ones_like(apq)))
    t = torch.where(tau >= 0, 1.0, -1.0) / (tau.abs() + torch.sqrt(1 + tau * tau))
    t = torch.where(rotate, t, torch.zeros_like(t))
    c = 1 / torch.sqrt(1 + t * t)
    return c, t * c


def _rotations(c, s, pp, pq):
    """The round's rotations as one matrix [..., n, n]: ``J[p, p] = J[q, q] = c``, ``J[p, q] = s``, ``J[q, p] =
    -s`` for each of its pairs (every index is in one pair)."""
    off = (pp.mT * s.unsqueeze(-2)) @ pq
    return torch.diag_embed(c @ (pp + pq)) + off - off.mT


def _even(x, dims):
    """``x`` padded with a zero row / column (``dims``: the last two, or the last) to an even size: an index
    no rotation touches (its entries stay 0), dropped afterwards."""
    odd = x.shape[-1] % 2
    return torch.nn.functional.pad(x, (0, odd, 0, odd) if dims == 2 else (0, odd)) if odd else x


def linalg_eigh(A, UPLO="L", compute_v=True):
    """``_linalg_eigh`` (``torch.linalg.eigh`` / ``eigvalsh``: whitening, log-det and spectral losses), which
    torch-mlir does not lower, for real matrices up to 64 x 64: parallel cyclic Jacobi. The matrix is the
    triangle ``UPLO`` names mirrored (ATen reads no other); each round of a round-robin ordering applies
    ``n / 2`` disjoint rotations at once as one matrix ``J`` (``A <- J^T A J``, ``V <- V J``); the eigenvalues
    are the diagonal after ``_jacobi_sweeps`` sweeps, sorted ascending with their vectors. Below autograd:
    PyTorch's own backward formula differentiates it. The eigenvectors' signs are Jacobi's (LAPACK's are
    arbitrary too; a loss should not depend on them, as PyTorch's documentation says)."""
    n = A.shape[-1]
    if A.is_complex() or not A.is_floating_point() or n > _UNROLLED or n == 0:
        return NotImplemented
    a = torch.tril(A) + torch.tril(A, -1).mT if UPLO.upper() == "L" else torch.triu(A) + torch.triu(A, 1).mT
    a = _even(a.to(torch.float64), 2)
    size = a.shape[-1]
    v = torch.eye(size, dtype=a.dtype, device=A.device).expand(a.shape)
    rounds = _jacobi_rounds(size, a)
    for _ in range(_jacobi_sweeps(n)):
        for pp, pq in rounds:
            rows = pp @ a
            c, s = _rotation((rows * pp).sum(-1), ((pq @ a) * pq).sum(-1), (rows * pq).sum(-1))
            j = _rotations(c, s, pp, pq)
            a = j.mT @ a @ j
            v = v @ j
    w, order = torch.sort(torch.diagonal(a, dim1=-2, dim2=-1)[..., :n].to(A.dtype), dim=-1)  # (no f64 sort)
    v = torch.gather(v[..., :n, :n].to(A.dtype), -1, order.unsqueeze(-2).expand(*A.shape))
    return w, (v if compute_v else A.new_empty(0))


def linalg_svd(A, full_matrices=False, compute_uv=True, *, driver=None):
    """``_linalg_svd`` (``torch.linalg.svd`` / ``svdvals``, nuclear and spectral norms, ``pinverse``), which
    torch-mlir does not lower, for real matrices with up to 64 columns (rows, if fewer): one-sided (Hestenes)
    Jacobi on the columns of ``A`` (of ``A^T`` when it is wide), so small singular values keep their relative
    accuracy. Each round rotates ``n / 2`` disjoint column pairs at once to make them orthogonal (the rotation
    of their Gram matrix ``[[|a_p|^2, a_p.a_q], [a_p.a_q, |a_q|^2]]``); after ``_jacobi_sweeps`` sweeps the
    singular values are the column norms, ``U`` the normalized columns (0 for a zero singular value), ``V`` the
    rotations' product, sorted descending. ``full_matrices`` for a square matrix only (PyTorch's backward
    refuses it for others). Below autograd: PyTorch's own backward formula differentiates it."""
    m, n = A.shape[-2:]
    if A.is_complex() or not A.is_floating_point() or min(m, n) == 0 or min(m, n) > _UNROLLED or \
            (full_matrices and compute_uv and m != n):
        return NotImplemented
    wide = m < n
    g = (A.mT if wide else A).to(torch.float64)
    k = g.shape[-1]
    g = _even(g, 1)
    size = g.shape[-1]
    v = torch.eye(size, dtype=g.dtype, device=A.device).expand(*g.shape[:-2], size, size)
    rounds = _jacobi_rounds(size, g)
    for _ in range(_jacobi_sweeps(k)):
        for pp, pq in rounds:
            gp, gq = g @ pp.mT, g @ pq.mT  # the pairs' columns [..., rows, n / 2]
            c, s = _rotation((gp * gp).sum(-2), (gq * gq).sum(-2), (gp * gq).sum(-2))
            j = _rotations(c, s, pp, pq)
            g = g @ j
            v = v @ j
    g, v = g[..., :k], v[..., :k, :k]
    norms = torch.sqrt((g * g).sum(-2))
    u = torch.where(norms.unsqueeze(-2) > 0, g / torch.where(norms > 0, norms, 1).unsqueeze(-2), 0)
    sv, order = torch.sort(norms.to(A.dtype), dim=-1, descending=True)  # (no f64 sort)
    if not compute_uv:
        return A.new_empty(0), sv, A.new_empty(0)
    u = torch.gather(u.to(A.dtype), -1, order.unsqueeze(-2).expand(u.shape))
    v = torch.gather(v.to(A.dtype), -1, order.unsqueeze(-2).expand(v.shape))
    return (v, sv, u.mT) if wide else (u, sv, v.mT)


def _kept_reciprocal(s, keep):
    """``1 / s`` where ``keep``, 0 elsewhere (the pseudo-inverse's singular values; no division by the others)."""
    return torch.where(keep, 1 / torch.where(keep, s, 1), 0).to(s.dtype)


def linalg_pinv(self, *, atol=None, rtol=None, hermitian=False):
    """``linalg_pinv.atol_rtol_tensor`` (``torch.linalg.pinv``, ``torch.pinverse``), which torch-mlir does not
    lower, as ATen computes it: from the SVD (``eigh`` for ``hermitian``, the absolute eigenvalues as the
    singular values), the reciprocals of the singular values above ``max(atol, rtol * largest)``, 0 for the
    others; ``rtol`` defaults to ``eps * max(m, n)``, 0 where only a positive ``atol`` is given. Below
    autograd: PyTorch's backward formula differentiates it."""
    if self.is_complex() or not self.is_floating_point() or min(self.shape[-2:]) == 0:
        return NotImplemented
    m, n = self.shape[-2:]
    default = torch.finfo(self.dtype).eps * max(m, n)
    zero = torch.zeros((), dtype=self.dtype, device=self.device)
    atol_t = zero if atol is None else atol.to(self.dtype)
    if rtol is not None:
        rtol_t = rtol.to(self.dtype)
    elif atol is not None:
        rtol_t = torch.where(atol_t > 0, zero, default)
    else:
        rtol_t = zero + default
    if hermitian:
        s, u = aten._linalg_eigh.default(self, "L", True)
        largest = s.abs().amax(-1, keepdim=True)
        keep = s.abs() > torch.maximum(atol_t.unsqueeze(-1), rtol_t.unsqueeze(-1) * largest)
        return (u * _kept_reciprocal(s, keep).unsqueeze(-2)) @ u.mT
    u, s, vh = aten._linalg_svd.default(self, False, True)
    keep = s > torch.maximum(atol_t.unsqueeze(-1), rtol_t.unsqueeze(-1) * s[..., :1])
    return (vh.mT * _kept_reciprocal(s, keep).unsqueeze(-2)) @ u.mT


def linalg_lstsq(self, b, rcond=None, *, driver=None):
    """``linalg_lstsq`` with the CPU's default driver (``gelsy``), which torch-mlir does not lower: the minimum-norm
    least-squares solution through the SVD (the same solution as ``gelsy``'s complete orthogonal factorization;
    the rank counts the singular values above ``rcond`` times the largest, ``rcond`` defaulting to ``eps *
    max(m, n)``); ``gelsy`` returns no residuals and no singular values (empty, as ATen). Below autograd:
    PyTorch's backward formula differentiates it."""
    if driver not in (None, "gelsy") or self.is_complex() or not self.is_floating_point() or b.dim() < 2 or \
            min(self.shape[-2:]) == 0:
        return NotImplemented
    m, n = self.shape[-2:]
    rcond = torch.finfo(self.dtype).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    u, s, vh = aten._linalg_svd.default(self, False, True)
    keep = s > rcond * s[..., :1]
    solution = vh.mT @ (_kept_reciprocal(s, keep).unsqueeze(-1) * (u.mT @ b))
    return solution, self.new_empty(0), keep.sum(-1), self.new_empty(0)


def matrix_exp(self):
    """``linalg_matrix_exp`` (``parametrizations.orthogonal``'s map for square weights; its backward is a
    ``matrix_exp`` of a 2n x 2n block matrix, decomposed the same way), which torch-mlir does not lower: scaling
    and squaring with a static number of squarings. ``s = ceil(log2 |A|_1)`` (at least 0) is computed in the
    step, the Taylor polynomial of degree 18 (float64) or 12 (float32 and below: truncation under 2e-10 at
    norm 1) evaluated at ``A / 2^s`` by Horner's rule, then squared 20 times where the count is below ``s``
    (matrices of 1-norm up to 2^20; ATen picks its degree by the norm instead, the same value to rounding)."""
    n = self.shape[-1]
    eye = torch.eye(n, dtype=self.dtype, device=self.device)
    norm = self.abs().sum(-2).amax(-1)
    s = torch.clamp(torch.ceil(torch.log2(norm)), 0, 20)
    a = self * torch.exp2(-s)[..., None, None]
    degree = 18 if self.dtype == torch.float64 else 12
    e = eye + a / degree
    for k in range(degree - 1, 0, -1):
        e = eye + (a @ e) / k
    for k in range(20):
        e = torch.where((s > k)[..., None, None], e @ e, e)
    return e


def _quantizer(decomposition):
    """A fake quantization's decomposition inside a ``torch.autocast(enabled=False)`` region, pinned f32 like
    the losses of ``_in_float32``: PyTorch's quantizers take float32 (the fused observer's kernel refuses
    anything else, so PyTorch's own autocast cannot run QAT), and ``x / scale`` rounded in f16 (3 bits below
    the point at 255) would pick other quantization steps than float32 does."""
    @functools.wraps(decomposition)
    def pinned(*args, **kwargs):
        with _float32_annotation():
            return decomposition(*args, **kwargs)
    return pinned


#: The FX annotation (``node.meta["custom"]``) of an op computed inside ``torch.autocast(enabled=False)``: the
#: import pins it ``#amp.precision<f32>`` (``_torch_mlir._pin_autocast_regions``).
AUTOCAST_KEY = "amp_mlir_autocast"


@contextlib.contextmanager
def _annotation(key, value):
    """The ops recorded inside annotated ``{key: value}`` (``node.meta["custom"]``). A decomposition runs in the
    capture's replay, where the model's own annotations come from the first graph's and no region is entered:
    the annotation is set directly (a new dict, not the replayed node's)."""
    import torch.fx.traceback as fx_traceback
    meta = fx_traceback.get_current_meta()
    old = meta.get("custom")
    meta["custom"] = {**(old or {}), key: value}
    try:
        yield
    finally:
        if old is None:
            del meta["custom"]
        else:
            meta["custom"] = old


def _float32_annotation():
    """The ops recorded inside annotated as a ``torch.autocast(enabled=False)`` region's."""
    return _annotation(AUTOCAST_KEY, "f32")


#: The FX annotation naming one call of an op whose kernel computes in float32 for float16 / bfloat16 tensors
#: and rounds its result once, on every op its decomposition records: the import marks the ops torch-mlir makes
#: of them ``amp.composite`` (``_torch_mlir._name_autocast_regions``), and amp-autocast computes them in f32
#: and rounds their results once, as the kernel does (docs/Policy.md). The exact ``aten.gelu`` (erf) is not
#: decomposed here (torch-mlir lowers it, to five TOSA ops): the import names its node (``COMPOSITE_NODES``);
#: its tanh approximation is (``gelu``).
COMPOSITE_KEY = "amp_mlir_composite"
#: The elementwise ops decomposed into several (torch-mlir's table) whose ATen kernels compute in float32.
COMPOSITES = (aten.gelu, aten.gelu_backward, aten.silu, aten.silu_backward, aten.mish, aten.mish_backward, aten.hardswish,
              aten.hardswish_backward, aten.hardsigmoid_backward, aten.elu_backward, aten.softplus,
              aten.softplus_backward, aten.sigmoid_backward, aten.tanh_backward, aten.log_sigmoid_forward,
              aten.log_sigmoid_backward, aten.logit, aten.logit_backward, aten.celu, aten.selu)
#: The ops of that kind that reach the import as one node, lowered to several ops by torch-mlir.
COMPOSITE_NODES = (aten.gelu, aten.elu)
_composite_calls = itertools.count()


def _composite(op, decomposition):
    """``decomposition`` of ``op`` with the ops of each call annotated as one composite (``COMPOSITE_KEY``)."""
    @functools.wraps(decomposition)
    def composite(*args, **kwargs):
        with _annotation(COMPOSITE_KEY, f"{op.__name__}#{next(_composite_calls)}"):
            return decomposition(*args, **kwargs)
    return composite


def _fake_quantize(x, scale, zero_point, quant_min, quant_max):
    """ATen's fake quantization: ``q = round(x * (1 / scale)) + zero_point`` (round half to even), the output
    ``(clamp(q, quant_min, quant_max) - zero_point) * scale`` and the mask of ``q`` within the range (the
    gradient's)."""
    q = torch.round(x * (1.0 / scale)) + zero_point
    return _dequantized(q, scale, zero_point, quant_min, quant_max), (q >= quant_min) & (q <= quant_max)


def _dequantized(q, scale, zero_point, quant_min, quant_max):
    """The value of the quantized ``q`` clamped to the range: ``(clamp(q) - zero_point) * scale``."""
    return (torch.clamp(q, quant_min, quant_max) - zero_point) * scale


def _per_channel(values, x, axis):
    """A per-channel vector shaped to broadcast along ``axis`` of ``x``."""
    shape = [1] * x.dim()
    shape[axis] = -1
    return values.reshape(shape)


@_quantizer
def fake_quantize_per_tensor_cachemask(self, scale, zero_point, quant_min, quant_max):
    """``fake_quantize_per_tensor_affine`` (QAT's ``FakeQuantize``; its backward is the output gradient times
    the mask)."""
    return _fake_quantize(self, scale, zero_point, quant_min, quant_max)


@_quantizer
def fake_quantize_tensor_qparams_cachemask(self, scale, zero_point, fake_quant_enabled, quant_min, quant_max):
    """The same with the scale and zero point as tensors (``torch.ao.quantization.FakeQuantize``), the input and
    an all-true mask where ``fake_quant_enabled`` is 0."""
    out, mask = _fake_quantize(self, scale.to(self.dtype), zero_point.to(self.dtype), quant_min, quant_max)
    enabled = fake_quant_enabled.reshape(()) != 0
    return torch.where(enabled, out, self), mask | ~enabled


@_quantizer
def fake_quantize_per_channel_cachemask(self, scale, zero_point, axis, quant_min, quant_max):
    return _fake_quantize(self, _per_channel(scale, self, axis).to(self.dtype),
                          _per_channel(zero_point, self, axis).to(self.dtype), quant_min, quant_max)


def _learnable_zero_point(zero_point, quant_min, quant_max, forward):
    """The learnable zero point as ATen rounds it: half to even, except in the per-tensor backward
    (``forward=False``): ``z + 0.5`` truncated toward zero (a C++ cast); clamped to the range."""
    z = torch.round(zero_point) if forward else torch.trunc(zero_point + 0.5)
    return torch.clamp(z, quant_min, quant_max)


@_quantizer
def fake_quantize_learnable_per_tensor(self, scale, zero_point, quant_min, quant_max, grad_factor=1.0):
    """``_fake_quantize_learnable_per_tensor_affine`` (LSQ: a learnable scale and zero point)."""
    z = _learnable_zero_point(zero_point.reshape(()), quant_min, quant_max, True)
    return _fake_quantize(self, scale.reshape(()), z, quant_min, quant_max)[0]


@_quantizer
def fake_quantize_learnable_per_channel(self, scale, zero_point, axis, quant_min, quant_max, grad_factor=1.0):
    z = _learnable_zero_point(zero_point, quant_min, quant_max, True)
    return _fake_quantize(self, _per_channel(scale, self, axis), _per_channel(z, self, axis), quant_min, quant_max)[0]


def _learnable_gradients(grad, x, scale, z, quant_min, quant_max, grad_factor):
    """LSQ's gradients as ATen computes them: the input's where ``q`` is within the range; per element, the
    scale's ``(out - x) / scale`` inside, ``quant_min - z`` below and ``quant_max - z`` above, and the zero
    point's ``-scale`` outside; both times ``grad_factor``."""
    q = torch.round(x * (1.0 / scale)) + z
    below, above = q < quant_min, q > quant_max
    inside = ~(below | above)
    out = _dequantized(q, scale, z, quant_min, quant_max)
    d_scale = torch.where(inside, (out - x) / scale, torch.where(below, quant_min - z, quant_max - z))
    d_zero = torch.where(inside, torch.zeros_like(x), -scale * torch.ones_like(x))
    return grad * inside, grad * d_scale * grad_factor, grad * d_zero * grad_factor


@_quantizer
def fake_quantize_learnable_per_tensor_backward(grad, self, scale, zero_point, quant_min, quant_max,
                                                grad_factor=1.0):
    z = _learnable_zero_point(zero_point.reshape(()), quant_min, quant_max, False)
    dx, ds, dz = _learnable_gradients(grad, self, scale.reshape(()), z, quant_min, quant_max, grad_factor)
    return dx, ds.sum().reshape(scale.shape), dz.sum().reshape(zero_point.shape)


@_quantizer
def fake_quantize_learnable_per_channel_backward(grad, self, scale, zero_point, axis, quant_min, quant_max,
                                                 grad_factor=1.0):
    z = _learnable_zero_point(zero_point, quant_min, quant_max, True)
    dx, ds, dz = _learnable_gradients(grad, self, _per_channel(scale, self, axis), _per_channel(z, self, axis), quant_min,
                                      quant_max, grad_factor)
    others = [d for d in range(self.dim()) if d != axis % self.dim()]
    return dx, ds.sum(others), dz.sum(others)


_SMALL_SCALE = float(np.float32(6.1e-5))  # quant_utils' SMALL_SCALE_THRESHOLD (a float)


def _choose_qparams(lo, hi, quant_min, quant_max, symmetric):
    """``quant_utils::ChooseQuantizationParams`` elementwise over float32 ``lo`` / ``hi`` (the observer's
    running minimum and maximum): the range widened to hold 0 (made symmetric about 0 first for a symmetric
    scheme), ``scale = (hi - lo) / (quant_max - quant_min)`` in float64 as ATen's intermediates (0.1 where it is
    0 or its float32 reciprocal overflows; at least 6.1e-5, the range stretched to match), the zero point from
    the end with the smaller rounding error (the middle of the range for a symmetric one), clamped and
    rounded half to even. Returns the float32 scale and the int32 zero point."""
    f32, f64 = torch.float32, torch.float64
    lo, hi = lo.to(f32), hi.to(f32)
    span = quant_max - quant_min
    straddles = (lo < 0) & (hi > 0)
    if symmetric:
        sym_min, sym_max = -(span // 2 + 1), span // 2
        widest = torch.maximum((lo / sym_min).abs(), (hi / sym_max).abs()).to(f64)
        lo = torch.where(straddles, (widest * sym_min).to(f32), lo)
        hi = torch.where(straddles, (widest * sym_max).to(f32), hi)
    lo, hi = torch.clamp(lo, max=0.0), torch.clamp(hi, min=0.0)
    scale = (hi.to(f64) - lo.to(f64)) / span
    narrow = scale.to(f32)
    scale = torch.where((narrow == 0) | torch.isinf(1.0 / narrow), 0.1, scale)
    small = scale < _SMALL_SCALE
    stretch = _SMALL_SCALE / scale.to(f32)
    edge = float(np.float32(_SMALL_SCALE) * np.float32(span))
    lo = torch.where(small, torch.where(lo == 0, lo, torch.where(hi == 0, -edge, lo * stretch)), lo)
    hi = torch.where(small, torch.where(lo == 0, edge, torch.where(hi == 0, hi, hi * stretch)), hi)
    scale = torch.where(small, _SMALL_SCALE, scale)
    from_min, from_max = lo.to(f64) / scale, hi.to(f64) / scale
    zero = torch.where(abs(quant_min) - from_min.abs() < abs(quant_max) - from_max.abs(),
                       quant_min - from_min, quant_max - from_max)
    if symmetric:
        zero = torch.where(straddles, (quant_min + quant_max) / 2, zero)
    zero = torch.clamp(torch.round(zero), quant_min, quant_max)
    return scale.to(f32), zero.to(torch.int32)


@_quantizer
def fused_moving_avg_obs_fq_helper(self, observer_on, fake_quant_on, running_min, running_max, scale,
                                   zero_point, averaging_const, quant_min, quant_max, ch_axis,
                                   per_row_fake_quant=False, symmetric_quant=False):
    """``_fused_moving_avg_obs_fq_helper_functional``: QAT's default observer and fake quantization in one op
    (``FusedMovingAvgObsFakeQuantize``, every ``get_default_qat_qconfig``). Where ``observer_on``, the running
    minimum and maximum (per row along ``ch_axis`` for per-channel weights) move toward the input's by
    ``averaging_const`` (the input's own where they are still infinite); where ``fake_quant_on``, the scale and
    zero point are chosen from them (``_choose_qparams``) and the input fake quantized with them, else it
    passes through unmasked and they stay. Returns the output, the gradient's mask and the four new states."""
    observe = observer_on.reshape(-1)[0] != 0
    quantize = fake_quant_on.reshape(-1)[0] != 0
    if per_row_fake_quant:
        rows = self.movedim(ch_axis, 0).flatten(1)
        low, high = rows.amin(1), rows.amax(1)
    else:
        low, high = self.amin().reshape(running_min.shape), self.amax().reshape(running_max.shape)
    low, high = low.to(running_min.dtype), high.to(running_max.dtype)
    moved_min = torch.where(torch.isinf(running_min), low, running_min + averaging_const * (low - running_min))
    moved_max = torch.where(torch.isinf(running_max), high, running_max + averaging_const * (high - running_max))
    new_min = torch.where(observe, moved_min, running_min)
    new_max = torch.where(observe, moved_max, running_max)
    s, z = _choose_qparams(new_min, new_max, quant_min, quant_max, symmetric_quant)
    if per_row_fake_quant:
        out, mask = fake_quantize_per_channel_cachemask(self, s, z, ch_axis, quant_min, quant_max)
    else:
        out, mask = _fake_quantize(self, s.reshape(()).to(self.dtype), z.reshape(()).to(self.dtype), quant_min,
                                   quant_max)
    return (torch.where(quantize, out, self), mask | ~quantize, new_min, new_max,
            torch.where(quantize, s.reshape(scale.shape), scale),
            torch.where(quantize, z.reshape(zero_point.shape).to(zero_point.dtype), zero_point))


def _index_table(fn):
    """``tril_indices`` / ``triu_indices``: functions of their integer arguments only, computed while
    capturing and kept as a constant (torch-mlir's lowering makes an empty ``arange`` for a short row,
    which its TOSA conversion refuses)."""
    def table(row, col, offset=0, *, dtype=torch.int64, layout=None, device=None, pin_memory=None):
        from torch.utils._python_dispatch import _disable_current_modes

        with _disable_current_modes():
            values = fn(row, col, offset, dtype=dtype)
        return _constant(values.tolist(), dtype).reshape(values.shape)
    return table


def _adaptive_windows(size, out):
    """The input positions of each of ``out`` adaptive pooling windows over ``size``: ``[floor(i size /
    out), ceil((i + 1) size / out))``, as ATen's kernels compute them."""
    return [list(range(i * size // out, -(-(i + 1) * size // out))) for i in range(out)]


def adaptive_max_pool2d(self, output_size):
    """``adaptive_max_pool2d`` whose windows along a dimension are not one size at one stride (8 -> 3:
    starts 0, 2, 5), which torch-mlir lowers to a fixed-stride pooling plus a ``cf.assert`` that always
    fails (amp-train aborted): each output's window as constant flat positions in the plane (padded with
    its first position, which changes no maximum), the values gathered, their maximum and the position of
    its first occurrence in the window's row-major order (ATen's choice among equal values). Windows of one
    size at one stride are left to torch-mlir."""
    h, w = self.shape[-2:]
    oh, ow = output_size
    oh, ow = oh or h, ow or w
    rows, cols = _adaptive_windows(h, oh), _adaptive_windows(w, ow)
    if all(len(set(len(r) for r in windows)) == 1 and
           len(set(b[0] - a[0] for a, b in zip(windows, windows[1:]))) <= 1 for windows in (rows, cols)):
        return NotImplemented
    windows = [[r * w + c for r in rs for c in cs] for rs in rows for cs in cols]
    k = max(len(p) for p in windows)
    table = _constant([p + [p[0]] * (k - len(p)) for p in windows], torch.int64)
    flat = self.flatten(-2)  # [..., H*W]
    gathered = flat[..., table.reshape(-1)].unflatten(-1, (oh * ow, k))  # [..., P, k]
    values, picked = gathered.max(-1)
    indices = table[torch.arange(oh * ow, device=self.device), picked]
    return values.unflatten(-1, (oh, ow)), indices.unflatten(-1, (oh, ow))


def _adaptive_max_pool_backward(nd):
    def backward(grad_output, self, indices):
        """Each output gradient goes to the input position its window picked (``indices``: flat positions in
        the plane, or the volume in 3-D), as a one-hot comparison summed over the output positions; no
        scatter."""
        size = math.prod(self.shape[-nd:])
        picked = indices.flatten(-nd).unsqueeze(-1) == torch.arange(size, device=indices.device)  # [..., P, size]
        grad = torch.where(picked, grad_output.flatten(-nd).unsqueeze(-1), torch.zeros((), dtype=grad_output.dtype))
        return grad.sum(-2).reshape(self.shape)
    return backward


adaptive_max_pool2d_backward = _adaptive_max_pool_backward(2)
adaptive_max_pool3d_backward = _adaptive_max_pool_backward(3)


def _resampling_matrix(forward, out, size, scale, like, eager=False):
    """The [out, size] matrix of a separable, linear 1-D resampling: column j is ``forward`` (a resampling
    op of (input, output_size, scale of the height, scale of the width)) of the j-th unit vector, resampled
    along the height of an identity image whose width it keeps (size -> size is the identity; not a width
    of 1, with which ATen's antialiased kernels gave every output row the first one's weights). With
    ``eager``, computed by PyTorch's own kernel outside the trace, in float64 (a constant of the step: for
    ops torch-mlir does not lower)."""
    if eager:
        from torch.utils._python_dispatch import _disable_current_modes

        with _disable_current_modes(), torch.no_grad():
            a = _resampling_matrix(forward, out, size, scale, torch.empty((), dtype=torch.float64))
        return a.to(like.dtype).contiguous()
    eye = torch.eye(size, dtype=like.dtype, device=like.device).reshape(1, 1, size, size)
    return forward(eye, [out, size], scale, None).reshape(out, size)


def _separable_backward(forward, grad_output, output_size, input_size, scales_h=None, scales_w=None, eager=False):
    """out = A_h @ in @ A_w^T per plane, so grad_in = A_h^T @ grad_out @ A_w."""
    (ho, wo), (h, w) = output_size, input_size[-2:]
    a_h = _resampling_matrix(forward, ho, h, scales_h, grad_output, eager)
    a_w = _resampling_matrix(forward, wo, w, scales_w, grad_output, eager)
    return torch.matmul(torch.matmul(a_h.transpose(0, 1), grad_output), a_w)


def adaptive_avg_pool2d_backward(grad_output, self):
    def forward(x, size, sh, sw):
        return aten._adaptive_avg_pool2d.default(x, size)
    return _separable_backward(forward, grad_output, list(grad_output.shape[-2:]), self.shape)


def upsample_bilinear2d_backward(grad_output, output_size, input_size, align_corners, scales_h=None,
                                 scales_w=None):
    def forward(x, size, sh, sw):
        return aten.upsample_bilinear2d.default(x, size, align_corners, sh, sw)
    return _separable_backward(forward, grad_output, output_size, input_size, scales_h, scales_w)


def upsample_linear1d_backward(grad_output, output_size, input_size, align_corners, scales=None):
    """1-D linear resampling's gradient (``F.interpolate(mode="linear")``: SAM's relative position tables),
    which torch-mlir leaves: the bilinear one's over a height of one (one row to one: the identity)."""
    grad = upsample_bilinear2d_backward(grad_output.unsqueeze(2), [1, output_size[0]],
                                        [*input_size[:2], 1, input_size[2]], align_corners, None, scales)
    return grad.squeeze(2)


def upsample_bilinear2d(x, output_size, align_corners, scales_h=None, scales_w=None):
    """Bilinear resampling with ``align_corners`` to one pixel along a dimension takes that dimension's
    first element (PyTorch's scale is 0 there); torch-mlir's ``tosa.resize`` samples its centre (timm
    CSATv2 upsamples a 7 x 7 map to its 1 x 1 last stage: the first loss 5.5e-4 off, silently). Such a
    dimension is sliced to its first element, and the resampling, one pixel to one, takes it as is; every
    other resampling is left to the op."""
    ho, wo = output_size
    h, w = x.shape[-2:]
    if not align_corners or not ((ho == 1 and h > 1) or (wo == 1 and w > 1)):
        return NotImplemented
    if ho == 1:
        x = x[..., :1, :]
    if wo == 1:
        x = x[..., :1]
    return aten.upsample_bilinear2d.default(x, output_size, align_corners, scales_h, scales_w)


def upsample_nearest2d_backward(grad_output, output_size, input_size, scales_h=None, scales_w=None):
    return _separable_backward(aten.upsample_nearest2d.default, grad_output, output_size, input_size, scales_h,
                              scales_w)


def _separable_resampling(op):
    """Bicubic resampling (ViTs resize their position embeddings so: YOLOS, DeiT at another size) and
    antialiased resampling (``F.interpolate(..., antialias=True)``, bicubic or bilinear: timm's ViT with
    ``dynamic_img_size`` resamples its position embedding so every step), which torch-mlir does not lower:
    ``A_h @ x @ A_w^T`` with the two matrices computed by the op itself (``_resampling_matrix``, eager).
    Returns (the forward decomposition, the backward's)."""
    def resample(align_corners):
        return lambda x, size, sh, sw: op(x, size, align_corners, sh, sw)

    def forward(x, output_size, align_corners, scales_h=None, scales_w=None):
        (ho, wo), (h, w) = output_size, x.shape[-2:]
        a_h = _resampling_matrix(resample(align_corners), ho, h, scales_h, x, eager=True)
        a_w = _resampling_matrix(resample(align_corners), wo, w, scales_w, x, eager=True)
        return torch.matmul(torch.matmul(a_h, x), a_w.transpose(0, 1))

    def backward(grad_output, output_size, input_size, align_corners, scales_h=None, scales_w=None):
        return _separable_backward(resample(align_corners), grad_output, output_size, input_size, scales_h,
                                   scales_w, eager=True)

    return forward, backward


def _axis_matrix(op, nd, axis, out, size, scale, like, *args):
    """The [out, size] matrix of a separable resampling ``op`` (of ``nd`` spatial dimensions: ``op(input,
    output_size, *args, *scales)``) along spatial ``axis``: PyTorch's own kernel, run outside the trace in
    float64 on an identity whose columns are the channels (the other spatial sizes 1, kept), a constant of
    the step."""
    from torch.utils._python_dispatch import _disable_current_modes

    with _disable_current_modes(), torch.no_grad():
        shape, sizes, scales = [1, size] + [1] * nd, [1] * nd, [None] * nd
        shape[2 + axis], sizes[axis], scales[axis] = size, out, scale
        eye = torch.eye(size, dtype=torch.float64).reshape(shape)
        a = op(eye, sizes, *args, *scales).reshape(size, out).transpose(0, 1)
    return a.to(like.dtype).contiguous()


def _trilinear_matrix(axis, out, size, align_corners, scale, like):
    """``_axis_matrix`` of ``upsample_trilinear3d``."""
    return _axis_matrix(aten.upsample_trilinear3d.default, 3, axis, out, size, scale, like, align_corners)


def _along(x, axis, matrix, nd=3):
    """``matrix`` [out, size] applied along spatial ``axis`` of ``x`` (its last ``nd`` dimensions spatial)."""
    return (x.movedim(axis - nd, -1) @ matrix.transpose(0, 1)).movedim(-1, axis - nd)


def upsample_trilinear3d(x, output_size, align_corners, scales_d=None, scales_h=None, scales_w=None):
    """``upsample_trilinear3d`` (3-D U-Nets' ``F.interpolate(..., mode="trilinear")``), which torch-mlir does not
    lower: separable, one resampling matrix per spatial dimension (``_trilinear_matrix``)."""
    for axis, scale in enumerate((scales_d, scales_h, scales_w)):
        x = _along(x, axis, _trilinear_matrix(axis, output_size[axis], x.shape[2 + axis], align_corners, scale, x))
    return x


def adaptive_avg_pool3d_backward(grad_output, self):
    """``_adaptive_avg_pool3d_backward`` (``nn.AdaptiveAvgPool3d``, 3-D ``mode="area"`` resampling), which
    torch-mlir does not lower: the pooling is separable (a box's average is the product of its averages along
    depth, height and width), so the gradient goes back through each dimension's transposed [out, size]
    averaging matrix (``_axis_matrix`` of the forward op)."""
    def pool(x, sizes, *scales):
        return aten._adaptive_avg_pool3d.default(x, sizes)

    grad = grad_output
    for axis in range(3):
        a = _axis_matrix(pool, 3, axis, grad_output.shape[-3 + axis], self.shape[-3 + axis], None, grad)
        grad = _along(grad, axis, a.transpose(0, 1))
    return grad


def upsample_trilinear3d_backward(grad_output, output_size, input_size, align_corners, scales_d=None, scales_h=None,
                                  scales_w=None):
    """The transposed matrices of ``upsample_trilinear3d``."""
    grad = grad_output
    for axis, scale in enumerate((scales_d, scales_h, scales_w)):
        a = _trilinear_matrix(axis, output_size[axis], input_size[2 + axis], align_corners, scale, grad)
        grad = _along(grad, axis, a.transpose(0, 1))
    return grad


def _nearest_exact_backward(op, nd):
    """The backward of ``_upsample_nearest_exact{nd}d`` (``F.interpolate(mode="nearest-exact")``), which
    torch-mlir does not lower: the transposed matrices of the op along each dimension (``_axis_matrix``)."""
    def backward(grad_output, output_size, input_size, *scales):
        grad = grad_output
        for axis in range(nd):
            a = _axis_matrix(op, nd, axis, output_size[axis], input_size[2 + axis],
                             scales[axis] if axis < len(scales) else None, grad)
            grad = _along(grad, axis, a.transpose(0, 1), nd)
        return grad
    return backward


def replication_pad_backward(grad_output, self, padding):
    """``replication_pad{1,2,3}d_backward`` (``F.pad(mode="replicate")``, ``padding_mode="replicate"``
    convolutions), which torch-mlir does not lower in 1-D and 3-D: per padded dimension, output position
    ``o`` reads input ``clamp(o - before, 0, size - 1)``, a 0/1 matrix; the gradient goes through its
    transpose."""
    grad = grad_output
    for i in range(len(padding) // 2):
        dim = self.dim() - 1 - i
        before, size = padding[2 * i], self.shape[dim]
        source = torch.clamp(torch.arange(grad.shape[dim], device=grad.device) - before, 0, size - 1)
        a = (source.unsqueeze(1) == torch.arange(size, device=grad.device)).to(grad.dtype)  # [out, size]
        grad = (grad.movedim(dim, -1) @ a).movedim(-1, dim)
    return grad


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """Layer norm in the input's own type (two passes: the mean, then the mean of the squared
    deviations), as PyTorch's kernels compute it for float32. torch-mlir's own decomposition computes
    the variance in float64, which puts [batch, tokens, width] f64 buffers into every transformer
    step (slow on GPUs, twice the traffic on CPUs)."""
    axes = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    mean = input.mean(dim=axes, keepdim=True)
    centered = input - mean
    var = (centered * centered).mean(dim=axes, keepdim=True)
    rstd = torch.rsqrt(var + eps)
    out = centered * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


def _dense_row_major(size, stride, storage_offset, numel) -> bool:
    """Whether a view of ``size``/``stride`` at ``storage_offset`` walks a contiguous storage of ``numel``
    elements in row-major order, every element once (the strides of size-1 dimensions do not matter)."""
    if (storage_offset or 0) != 0:
        return False
    expected = 1
    for s, st in reversed(list(zip(size, stride))):
        if s != 1 and st != expected:
            return False
        expected *= s
    return expected == numel


def _view_indices(size, stride, storage_offset, numel):
    """The storage index of every element of a strided view (row-major over ``size``), or None when the
    view reads outside a storage of ``numel`` elements."""
    idx = np.full((), storage_offset or 0, dtype=np.int64)
    for s, st in zip(size, stride):
        idx = idx[..., None] + np.arange(s, dtype=np.int64) * st
    idx = idx.reshape(tuple(size))
    return idx if idx.size == 0 or (idx.min() >= 0 and idx.max() < numel) else None


def _dense_permutation(size, stride):
    """The order of the dimensions, outermost first, in which a tensor of ``size`` / ``stride`` lays out
    its storage when that layout is dense (every element once, no gap: a permutation of a contiguous
    tensor, e.g. ``zeros_like`` of a transposed one); None otherwise. Size-1 dimensions go first."""
    ones = [d for d, n in enumerate(size) if n == 1]
    rest = sorted((d for d, n in enumerate(size) if n != 1), key=lambda d: -stride[d])
    expected = 1
    for d in reversed(rest):
        if stride[d] != expected:
            return None
        expected *= size[d]
    return ones + rest


def _in_storage_order(fn):
    """``fn(input, *view)`` (``as_strided`` / ``as_strided_scatter``, whose view indexes ``input``'s storage)
    for a dense but permuted ``input`` (autograd's in-place writes into ``zeros_like`` of a transposed tensor:
    RecurrentGemma's scan): ``fn`` on ``input`` permuted into its storage order and made contiguous (the same
    storage indices), the result permuted back when it has ``input``'s shape."""
    def run(input, *args, **kwargs):
        if input.is_contiguous() or input.storage_offset() != 0:
            return fn(input, *args, **kwargs)
        perm = _dense_permutation(input.shape, input.stride())
        if perm is None:
            return NotImplemented
        out = fn(input.permute(perm).contiguous(), *args, **kwargs)
        if out is NotImplemented or fn is as_strided:
            return out
        return out.permute([perm.index(d) for d in range(input.dim())])
    return run


def new_empty_strided(self, size, stride, dtype=None, layout=None, device=None, pin_memory=None):
    """``new_empty_strided`` with a dense layout (autograd's copy of a permuted tensor for an in-place
    write into a view of it): zeros in the layout's storage order, permuted into ``size`` (the strides
    asked for; torch-mlir lowers neither this op nor an uninitialized tensor of given strides)."""
    perm = _dense_permutation(size, stride)
    if perm is None:
        return NotImplemented
    stored = torch.zeros([size[d] for d in perm], dtype=dtype or self.dtype, device=self.device)
    return stored.permute([perm.index(d) for d in range(len(size))])


def as_strided(x, size, stride, storage_offset=None):
    """``as_strided`` of a contiguous tensor (a dense permuted one through ``_in_storage_order``). One that
    only restates its layout (adaptive_avg_pool2d to 1x1 gives its result strides ``[C, 1, C, C]``; its
    backward views a fresh storage the same way) is a reshape; any other view inside its storage reads its
    elements with one gather of constant indices. Another input falls back to the op, which torch-mlir
    rejects by name."""
    if not x.is_contiguous():
        return NotImplemented
    if _dense_row_major(size, stride, storage_offset, x.numel()):
        return x.reshape(size)
    idx = _view_indices(size, stride, storage_offset, x.numel())
    if idx is None:
        return NotImplemented
    return x.reshape(-1)[torch.from_numpy(idx)]


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """``as_strided_scatter`` into a contiguous ``input``: of a view that covers all of it in row-major
    order (the functionalized backward of such an ``as_strided``), ``src`` in ``input``'s shape; of any
    other view that names each element once (an in-place ``zero_()`` of a slice of a cloned tensor:
    torchvision's Swin V2 bias), ``src`` gathered to the view's elements and ``input`` elsewhere (one
    gather and a select of constant indices and mask). Overlapping views fall back to the op."""
    if not input.is_contiguous():
        return NotImplemented
    numel = input.numel()
    if src.numel() == numel and _dense_row_major(size, stride, storage_offset, numel):
        return src.reshape(input.shape).to(input.dtype)
    idx = _view_indices(size, stride, storage_offset, numel)
    if idx is None or len(np.unique(idx)) != idx.size:
        return NotImplemented
    where = np.full(numel, -1, dtype=np.int64)
    where[idx.reshape(-1)] = np.arange(idx.size)
    picked = src.reshape(-1).to(input.dtype)[torch.from_numpy(np.maximum(where, 0))]
    return torch.where(torch.from_numpy(where >= 0), picked, input.reshape(-1)).reshape(input.shape)


def scatter_add(self, dim, index, src):
    """``self.scatter_add(dim, index, src)``: ``self[..., index[i], ...] += src[i]`` along ``dim`` (the
    backward of ``gather``: ``log_probs.gather(-1, labels)``, DeepSeek-V3's router weights) as a one-hot
    comparison of ``index`` with the positions of ``dim``, times ``src``, summed over ``index``'s extent
    there; the part of ``self`` that ``index`` does not cover in the other dimensions gets zeros. No
    scatter, which torch-mlir's TOSA conversion leaves as ``aten.scatter_add``."""
    if self.dim() == 0 or index.numel() == 0:
        return NotImplemented
    dim = dim % self.dim()
    src = src[tuple(slice(0, n) for n in index.shape)]  # the part index covers
    positions = torch.arange(self.shape[dim], device=self.device)
    onehot = index.movedim(dim, -1).unsqueeze(-1) == positions  # (..., k, n)
    added = torch.where(onehot, src.movedim(dim, -1).unsqueeze(-1), torch.zeros((), dtype=src.dtype))
    added = added.sum(-2).movedim(-1, dim)  # index's shape with dim of self's extent
    pad = []
    for d in reversed(range(self.dim())):
        pad += [0, 0 if d == dim else self.shape[d] - added.shape[d]]
    if any(pad):
        added = torch.nn.functional.pad(added, pad)
    return self + added.to(self.dtype)


def scatter_reduce(self, dim, index, src, reduce, include_self=True):
    """``self.scatter_reduce(dim, index, src, reduce, include_self)`` (``sum``, ``prod``, ``mean``, ``amax``,
    ``amin``: TAPAS's segment reductions, graph networks' pooling), which torch-mlir's conversions leave: as
    ``scatter_add``, a one-hot comparison of ``index`` with the positions of ``dim``, then the reduction over
    ``index``'s extent of ``src`` where the one-hot holds (the reduction's identity elsewhere), combined with
    ``self`` where any element arrived; ``self`` as it is where none did."""
    if self.dim() == 0 or index.numel() == 0 or reduce not in ("sum", "prod", "mean", "amax", "amin"):
        return NotImplemented
    dim = dim % self.dim()
    src = src[tuple(slice(0, n) for n in index.shape)]  # the part index covers
    positions = torch.arange(self.shape[dim], device=self.device)
    onehot = index.movedim(dim, -1).unsqueeze(-1) == positions  # (..., k, n)
    values = src.movedim(dim, -1).unsqueeze(-1).to(self.dtype)
    floating = self.is_floating_point()
    info = torch.finfo(self.dtype) if floating else torch.iinfo(self.dtype)
    identity = {"sum": 0, "mean": 0, "prod": 1, "amax": -math.inf if floating else info.min,
                "amin": math.inf if floating else info.max}[reduce]
    chosen = torch.where(onehot, values, torch.full((), identity, dtype=self.dtype))
    reduced = {"sum": chosen.sum(-2), "mean": chosen.sum(-2), "prod": chosen.prod(-2), "amax": chosen.amax(-2),
               "amin": chosen.amin(-2)}[reduce].to(self.dtype).movedim(-1, dim)
    count = onehot.sum(-2).movedim(-1, dim)  # how many elements arrived at each position
    pad = []
    for d in reversed(range(self.dim())):
        pad += [0, 0 if d == dim else self.shape[d] - reduced.shape[d]]
    if any(pad):
        reduced, count = torch.nn.functional.pad(reduced, pad), torch.nn.functional.pad(count, pad)
    if include_self:
        combined = {"sum": self + reduced, "mean": self + reduced, "prod": self * reduced,
                    "amax": torch.maximum(self, reduced), "amin": torch.minimum(self, reduced)}[reduce]
        count = count + 1
    else:
        combined = reduced
    if reduce == "mean":
        divisor = torch.clamp(count, min=1).to(self.dtype)
        combined = combined / divisor if floating else torch.div(combined, divisor, rounding_mode="floor")
    return torch.where(count > (1 if include_self else 0), combined.to(self.dtype), self)


def topk(self, k, dim=-1, largest=True, sorted=True):
    """``topk(sorted=False)`` as the sorted one (the same elements; unsorted leaves their order open):
    torch-mlir converts only the sorted form (DeepSeek-V3's router asks for unsorted)."""
    if sorted:
        return NotImplemented
    return aten.topk.default(self, k, dim, largest, True)


def _sort_by_rank(x, dim, descending):
    """A stable sort of a non-float tensor without a sort op: each element's rank along ``dim`` is the
    number of elements before it in the order (smaller, or equal at a lower index), and the sorted values
    and indices are sums over a one-hot of the ranks: ``O(n^2)`` comparisons per sorted row."""
    x = x.movedim(dim, -1)
    n = x.shape[-1]
    a, b = x[..., :, None], x[..., None, :]  # [..., i, j]: element i against element j
    before = (b > a) if descending else (b < a)
    pos = torch.arange(n, device=x.device)
    ties_before = (b == a) & (pos[None, :] < pos[:, None])
    rank = (before | ties_before).to(torch.int64).sum(-1)  # [..., i]
    onehot = rank[..., :, None] == pos  # [..., i, r]
    values = torch.where(onehot, x[..., :, None], torch.zeros((), dtype=x.dtype)).sum(-2).to(x.dtype)
    indices = torch.where(onehot, pos[:, None], torch.zeros((), dtype=torch.int64)).sum(-2)
    return values.movedim(-1, dim), indices.movedim(-1, dim)


def _cumulative_extreme(x, dim, largest):
    """``cummax`` / ``cummin`` without a scan (torch-mlir lowers neither): element i's value is the extreme
    of elements 0..i (a triangle mask, ``O(n^2)`` a row), its index the last of those equal to it (ties and
    NaNs: the latest, as ATen's kernel updates on ``>=`` and on every NaN)."""
    dim = dim % x.dim() if x.dim() else 0
    if x.dim() == 0:
        return x.clone(), torch.zeros((), dtype=torch.int64, device=x.device)
    v = x.movedim(dim, -1)
    n = v.shape[-1]
    pos = torch.arange(n, device=x.device)
    upto = pos[None, :] <= pos[:, None]  # [i, j]: j <= i
    if x.is_floating_point():
        fill = -math.inf if largest else math.inf
    else:
        fill = torch.iinfo(x.dtype).min if largest else torch.iinfo(x.dtype).max
    rows = torch.where(upto, v[..., None, :], torch.full((), fill, dtype=x.dtype))  # [..., i, j]
    values = rows.amax(-1) if largest else rows.amin(-1)
    same = v[..., None, :] == values[..., :, None]
    if x.is_floating_point():
        same = same | (torch.isnan(v[..., None, :]) & torch.isnan(values[..., :, None]))
    indices = torch.where(upto & same, pos, torch.full((), -1, dtype=torch.int64)).amax(-1)
    return values.movedim(-1, dim), indices.movedim(-1, dim)


def cumprod(x, dim, dtype=None):
    """``cumprod`` without a scan (torch-mlir lowers none): element i the product of elements 0..i over a
    triangle mask (ones elsewhere), ``O(n^2)`` a row; its backward (ATen's, with cumprod and cumsum) the
    same way."""
    x = x.to(dtype) if dtype is not None else x
    if x.dim() == 0:
        return x.clone()
    dim = dim % x.dim()
    v = x.movedim(dim, -1)
    pos = torch.arange(v.shape[-1], device=x.device)
    upto = pos[None, :] <= pos[:, None]  # [i, j]: j <= i
    return torch.where(upto, v[..., None, :], torch.ones((), dtype=v.dtype)).prod(-1).movedim(-1, dim)


def cummax(self, dim):
    return _cumulative_extreme(self, dim, True)


def cummin(self, dim):
    return _cumulative_extreme(self, dim, False)


def relu(x):
    """``relu`` of integers (cumprod's backward takes one of an index), which torch-mlir's conversions
    refuse: a select. Floats: torch-mlir's."""
    if x.is_floating_point():
        return NotImplemented
    return torch.where(x > 0, x, torch.zeros((), dtype=x.dtype))


def _integer_power(base, exponent, dtype):
    """``base ** exponent`` in the integer type ``dtype`` (a hash's powers of a prime: BLT's), which
    torch-mlir's conversions refuse, by repeated squaring: over the bits of a Python exponent; over every
    bit of a tensor one's type (63 for int64) otherwise, each a select. Products wrap modulo 2^bits as
    PyTorch's do. A negative tensor exponent gives what ATen's CPU kernel gives: 1 for a base of 1, +-1 for
    -1 (by the exponent's parity), 0 otherwise."""
    one = torch.ones((), dtype=dtype)
    base = base.to(dtype) if isinstance(base, torch.Tensor) else torch.full((), base, dtype=dtype)
    if not isinstance(exponent, torch.Tensor):
        result = one
        while exponent:
            if exponent & 1:
                result = result * base
            exponent >>= 1
            if exponent:
                base = base * base
        return result
    exponent = exponent.to(dtype)
    result = torch.ones_like(base * exponent)
    power = base
    for bit in range(torch.iinfo(dtype).bits - (0 if dtype == torch.uint8 else 1)):
        if bit:
            power = power * power
        taken = torch.bitwise_and(torch.bitwise_right_shift(exponent, torch.full((), bit, dtype=dtype)), one)
        result = torch.where(taken == 1, result * power, result)
    odd = torch.bitwise_and(exponent, one) == 1
    negative = torch.where(base == 1, one, torch.where(base == -1, torch.where(odd, -one, one), 0 * one))
    return torch.where(exponent < 0, negative, result) if dtype != torch.uint8 else result


def _integral(dtype):
    return not dtype.is_floating_point and not dtype.is_complex and dtype != torch.bool


def pow_tensor_tensor(self, exponent):
    """``pow`` of integer tensors (``_integer_power``); floats are left to torch-mlir."""
    dtype = torch.result_type(self, exponent)
    return _integer_power(self, exponent, dtype) if _integral(dtype) else NotImplemented


def pow_tensor_scalar(self, exponent):
    dtype = torch.result_type(self, exponent)
    if not _integral(dtype) or not isinstance(exponent, int) or exponent < 0:
        return NotImplemented
    return _integer_power(self, exponent, dtype) * torch.ones_like(self, dtype=dtype)


def pow_scalar(self, exponent):
    dtype = torch.result_type(self, exponent)
    return _integer_power(self, exponent, dtype) if _integral(dtype) else NotImplemented


_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
_GRID_PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def above_autograd():
    """The functions the capture computes above autograd (``_Specializer``'s function mode), as compositions
    whose backward torch-mlir lowers: ``{function: composite(func, *args, **kwargs)}``; a composite returns
    NotImplemented for a call it leaves to the function."""
    F = torch.nn.functional
    return {F.grid_sample: grid_sample, torch.grid_sampler: grid_sample, torch.grid_sampler_2d: grid_sample,
            torch.grid_sampler_3d: grid_sample,
            F.conv3d: lambda func, *args, **kwargs: grouped_conv3d(*args, **kwargs),
            F.ctc_loss: lambda func, *args, **kwargs: ctc_loss(*args, **kwargs),
            F.cross_entropy: _long_class_indices, F.nll_loss: _long_class_indices,
            F.embedding_bag: embedding_bag, F.embedding: _dense_embedding, torch.cdist: cdist, F.pdist: pdist,
            torch.pdist: pdist, F.gaussian_nll_loss: gaussian_nll_loss,
            **{f: _in_float32 for f in (F.binary_cross_entropy_with_logits, F.mse_loss, F.l1_loss, F.smooth_l1_loss,
                                        F.huber_loss, F.kl_div, F.poisson_nll_loss, F.soft_margin_loss,
                                        F.margin_ranking_loss, F.hinge_embedding_loss, F.cosine_embedding_loss,
                                        F.triplet_margin_loss, F.multilabel_soft_margin_loss)},
            torch.linalg.cholesky: cholesky, torch.cholesky: cholesky, torch.linalg.cholesky_ex: cholesky,
            torch.linalg.solve_triangular: solve_triangular, torch.cholesky_solve: cholesky_solve,
            torch.linalg.solve: solve, torch.linalg.inv: inverse, torch.inverse: inverse, torch.Tensor.inverse: inverse,
            torch.linalg.det: determinant, torch.det: determinant, torch.Tensor.det: determinant,
            torch.linalg.slogdet: determinant, torch.slogdet: determinant, torch.Tensor.slogdet: determinant,
            torch.logdet: determinant, torch.Tensor.logdet: determinant,
            torch.linalg.householder_product: householder_product, torch.orgqr: householder_product,
            torch.Tensor.orgqr: householder_product,
            torch.linalg.qr: qr,
            torch.repeat_interleave: repeat_interleave, torch.Tensor.repeat_interleave: repeat_interleave,
            torch._C._VariableFunctions._pack_padded_sequence:
                lambda func, *args, **kwargs: pack_padded_sequence(*args, **kwargs),
            torch._C._VariableFunctions._pad_packed_sequence:
                lambda func, *args, **kwargs: pad_packed_sequence(*args, **kwargs),
            **{f: functools.partial(fractional_max_pool, dims=2) for f in
               (F.fractional_max_pool2d, F.fractional_max_pool2d_with_indices)},
            **{f: functools.partial(fractional_max_pool, dims=3) for f in
               (F.fractional_max_pool3d, F.fractional_max_pool3d_with_indices)},
            **_torchvision_ops()}


def fractional_max_pool(func, input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                        _random_samples=None, *, dims):
    """``F.fractional_max_pool2d`` / ``3d`` (``nn.FractionalMaxPool2d``), which torch-mlir lowers neither way,
    as ATen computes it: the output size from ``output_ratio`` and the random samples drawn (``torch.rand``,
    from the step's random-number state) as the Python function does; window starts per plane and dimension
    ``int((i + u) * alpha) - int(u * alpha)``, ``alpha = (size - pool) / (out - 1)`` in the input's type, the
    last ``size - pool`` (ATen's ``generate_intervals``: the 2-D kernel reads its sample 0 for the width, the
    3-D one its sample 0 for time); each window's elements gathered by their flat index in the plane and the
    first largest taken (``argmax``, then a gather: its backward reaches that element alone, as ATen's
    ``indices``, which are returned too)."""
    expand = (lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,) * dims)
    if input.dim() not in (dims + 1, dims + 2) or input.is_complex():
        return NotImplemented
    if output_size is None:
        if output_ratio is None:
            return NotImplemented  # the function raises its own error
        output_size = [int(input.size(d - dims) * r) for d, r in enumerate(expand(output_ratio))]
    kernel, output_size = expand(kernel_size), expand(output_size)
    batched = input.dim() == dims + 2
    x = input if batched else input.unsqueeze(0)
    n, channels, spatial = x.shape[0], x.shape[1], x.shape[2:]
    samples = _random_samples if _random_samples is not None else \
        torch.rand(n, channels, dims, dtype=input.dtype, device=input.device)
    which = (1, 0) if dims == 2 else (0, 1, 2)  # the sample each spatial dimension reads
    flat, strides = 0, [math.prod(spatial[d + 1:]) for d in range(dims)]
    for d in range(dims):
        size, out, pool = spatial[d], output_size[d], kernel[d]
        u = samples[:, :, which[d]].to(input.dtype)[..., None]  # [N, C, 1]
        i = torch.arange(out, device=input.device).to(input.dtype)
        if out > 1:
            alpha = float(np.float32(size - pool) / np.float32(out - 1)) if input.dtype == torch.float32 \
                else (size - pool) / (out - 1)
            start = ((i + u) * alpha).long() - (u * alpha).long()
            start = torch.where(torch.arange(out, device=input.device) == out - 1, size - pool, start)
        else:
            start = torch.full_like(u, size - pool, dtype=torch.long)
        # this dimension's part of each window element's flat index: [N, C, (out_0, ..., pool_0, ...)]
        part = (start[..., None] + torch.arange(pool, device=input.device)) * strides[d]
        shape = [n, channels] + [out if e == d else 1 for e in range(dims)] + [pool if e == d else 1 for e in range(dims)]
        flat = flat + part.reshape(shape)
    flat = flat.expand(n, channels, *output_size, *kernel).reshape(n, channels, -1, math.prod(kernel))
    values = x.reshape(n, channels, -1).gather(2, flat.reshape(n, channels, -1)).reshape(flat.shape)
    first = values.argmax(-1, keepdim=True)
    out = values.gather(-1, first).reshape(n, channels, *output_size)
    indices = flat.gather(-1, first).reshape(n, channels, *output_size)
    if not batched:
        out, indices = out[0], indices[0]
    return (out, indices) if return_indices or "with_indices" in getattr(func, "__name__", "") else out


def _torchvision_ops():
    """torchvision's operators among the composites, where torchvision is loaded: ``roi_align``,
    ``deform_conv2d``."""
    if "torchvision" not in sys.modules:
        return {}
    try:
        roi, deform = torch.ops.torchvision.roi_align, torch.ops.torchvision.deform_conv2d
    except (AttributeError, RuntimeError):  # torchvision without its C++ operators
        return {}
    return {roi: roi_align, roi.default: roi_align, deform: deform_conv2d, deform.default: deform_conv2d}


def deform_conv2d(func, input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w,
                  groups, offset_groups, use_mask):
    """``torchvision.ops.deform_conv2d`` (``DeformConv2d``, DCN v1 and, with a mask, v2), which torch-mlir lowers
    neither the forward nor the backward of, as torchvision's CPU kernel computes it: kernel position k of output
    pixel (y, x) samples channel group g's input at ``(y * stride - pad + i * dilation + dy, ... + dx)`` with the
    offsets ``offset[n, g, k] = (dy, dx)``, bilinearly, a corner outside the map counting 0 and a point at or
    past ``-1`` / the size 0 altogether, times ``mask[n, g, k]``; those columns, ``[N, C * K, OH * OW]``, times
    the (grouped) weight, plus the bias. The samples are rows of the ``[N * G * H * W, C / G]`` table gathered by
    one flat index per corner (an index add backward), the corner weights ``1 - frac`` / ``frac`` of the
    sampling point, so autograd gives the input's, the weight's, the offsets' and the mask's gradients (the
    kernel's, including the offsets': its coordinate weights are these weights' derivatives, taken from the
    corners alone, so a point at exactly -1, whose value is 0, has the gradient of its one corner inside)."""
    if input.dim() != 4 or input.is_complex():
        return NotImplemented
    n, channels, height, width = input.shape
    out_channels, _, kernel_h, kernel_w = weight.shape
    k = kernel_h * kernel_w
    out_h, out_w = offset.shape[-2:]
    per_group = channels // offset_groups
    offset = offset.reshape(n, offset_groups, k, 2, out_h, out_w)
    arange = functools.partial(torch.arange, device=input.device)
    ki, kj = arange(kernel_h).repeat_interleave(kernel_w), arange(kernel_w).repeat(kernel_h)
    base_y = (arange(out_h) * stride_h - pad_h)[None, :] + (ki * dilation_h)[:, None]  # [K, OH]
    base_x = (arange(out_w) * stride_w - pad_w)[None, :] + (kj * dilation_w)[:, None]  # [K, OW]
    y = base_y[None, None, :, :, None].to(input.dtype) + offset[:, :, :, 0]  # [N, G, K, OH, OW]
    x = base_x[None, None, :, None, :].to(input.dtype) + offset[:, :, :, 1]
    inside = ((y > -1) & (y < height) & (x > -1) & (x < width)).to(input.dtype)
    y_low, x_low = torch.floor(y.detach()), torch.floor(x.detach())
    ly, lx = y - y_low, x - x_low
    y_low, x_low = y_low.long(), x_low.long()
    table = input.reshape(n, offset_groups, per_group, height, width).permute(0, 1, 3, 4, 2) \
        .reshape(n * offset_groups * height * width, per_group)
    plane = (arange(n)[:, None] * offset_groups + arange(offset_groups)[None, :])[:, :, None, None, None] \
        * (height * width)
    columns = 0
    for rows, y_weight in ((y_low, 1 - ly), (y_low + 1, ly)):
        for cols, x_weight in ((x_low, 1 - lx), (x_low + 1, lx)):
            there = (rows >= 0) & (rows < height) & (cols >= 0) & (cols < width)
            index = plane + torch.where(there, rows * width + cols, 0)
            weight_of = y_weight * x_weight * there.to(input.dtype)
            # 0 outside, but the offsets' gradient as the kernel's, which checks the corners only: a point at
            # exactly -1 (a zero-initialised offset branch puts the border's taps there) has one there
            weight_of = weight_of * inside + (weight_of - weight_of.detach()) * (1 - inside)
            columns = columns + weight_of.unsqueeze(-1) * table[index]  # [N, G, K, OH, OW, C / G]
    if use_mask:
        columns = columns * mask.reshape(n, offset_groups, k, out_h, out_w).unsqueeze(-1)
    # [N, C, K, OH * OW] (channel g * C / G + c), grouped as the weight: [N, groups, C / groups * K, P]
    columns = columns.permute(0, 1, 5, 2, 3, 4).reshape(n, groups, channels // groups * k, out_h * out_w)
    out = torch.matmul(weight.reshape(groups, out_channels // groups, channels // groups * k), columns)
    return out.reshape(n, out_channels, out_h, out_w) + bias[None, :, None, None]


def roi_align(func, input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    """``torchvision.ops.roi_align`` with a fixed sampling grid (``sampling_ratio > 0``: Faster / Mask R-CNN's
    ``MultiScaleRoIAlign`` takes 2), whose backward torch-mlir cannot lower, as torchvision's CPU kernel
    computes it: ``sampling_ratio^2`` bilinear samples per bin, a sample outside ``[-1, size]`` counting 0,
    coordinates clamped at 0 and at the last row / column, the mean of the bin's samples. The samples are
    gathered as rows of the ``[N * H * W, C]`` feature table (one flat index per corner, the same for every
    channel: an embedding-like gather whose backward is an index add), so autograd gives the input's gradient;
    the boxes get none (as the kernel's). An adaptive grid (``sampling_ratio <= 0``: as many samples as a box
    is wide, a count its values decide) is left to the operator."""
    if sampling_ratio <= 0 or input.dim() != 4 or rois.dim() != 2 or input.is_complex():
        return NotImplemented
    n, channels, height, width = input.shape
    rois = rois.detach().to(input.dtype)
    batch = rois[:, 0].long()
    offset = 0.5 if aligned else 0.0
    start_w, start_h = rois[:, 1] * spatial_scale - offset, rois[:, 2] * spatial_scale - offset
    roi_w = rois[:, 3] * spatial_scale - offset - start_w
    roi_h = rois[:, 4] * spatial_scale - offset - start_h
    if not aligned:
        roi_w, roi_h = torch.clamp(roi_w, min=1.0), torch.clamp(roi_h, min=1.0)
    bin_h, bin_w = roi_h / pooled_height, roi_w / pooled_width
    grid = torch.arange(sampling_ratio, device=input.device).to(input.dtype) + 0.5

    def coordinates(start, size, pooled, extent):
        """[K, pooled, samples] sample coordinates, their validity, low / high index and weights."""
        bins = torch.arange(pooled, device=input.device).to(input.dtype)
        c = start[:, None, None] + bins[None, :, None] * size[:, None, None] + \
            grid[None, None, :] * size[:, None, None] / sampling_ratio
        valid = (c >= -1.0) & (c <= extent)
        c = torch.clamp(c, min=0.0)
        low = c.long()  # c >= 0: truncation is the floor
        last = low >= extent - 1
        high = torch.where(last, extent - 1, low + 1)
        low = torch.where(last, extent - 1, low)
        c = torch.where(last, low.to(c.dtype), c)
        frac = c - low
        return valid, low, high, 1.0 - frac, frac

    vy, y_low, y_high, hy, ly = coordinates(start_h, bin_h, pooled_height, height)
    vx, x_low, x_high, hx, lx = coordinates(start_w, bin_w, pooled_width, width)
    # [K, PH, PW, s, s]: y from [K, PH, s] on dims (1, 3), x from [K, PW, s] on dims (2, 4)
    def ys(t):
        return t[:, :, None, :, None]

    def xs(t):
        return t[:, None, :, None, :]

    valid = (ys(vy) & xs(vx)).to(input.dtype)
    table = input.permute(0, 2, 3, 1).reshape(n * height * width, channels)
    base = batch[:, None, None, None, None] * (height * width)
    out = 0
    for y_index, y_weight in ((y_low, hy), (y_high, ly)):
        for x_index, x_weight in ((x_low, hx), (x_high, lx)):
            weight = ys(y_weight) * xs(x_weight) * valid
            out = out + weight.unsqueeze(-1) * table[base + ys(y_index) * width + xs(x_index)]
    out = out.sum((3, 4)) / (sampling_ratio * sampling_ratio)  # [K, PH, PW, C]
    return out.permute(0, 3, 1, 2)


def _dense_embedding(func, input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                     sparse=False):
    """``F.embedding`` with ``sparse=True`` (``nn.Embedding(sparse=True)``, recommenders' tables) as the dense
    lookup: the step's gradient is a dense tensor either way (torch.optim's sparse update of the rows looked up
    is the same update; torch-mlir cannot import the sparse gradient's ops)."""
    if not sparse:
        return NotImplemented
    return func(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, False)


def embedding_bag(func, input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """``F.embedding_bag`` (``nn.EmbeddingBag``: DLRM's, fastText's bags of ids), which torch-mlir lowers
    neither the forward nor the backward of: the rows gathered (an embedding, whose backward is ours), times
    the per-sample weights, then reduced per bag. The bags are read from ``offsets`` (specialized, as the
    example gives them) or are the rows of a 2-D ``input``: ``sum`` and ``mean`` as a product with the constant
    0/1 bag matrix (ids equal to ``padding_idx`` masked out and not counted), ``max`` as the maximum over each
    bag's rows gathered into a padded table; an empty bag is 0, as in PyTorch. NotImplemented for
    ``max_norm`` (an in-place renormalisation of the table) and ``scale_grad_by_freq``."""
    if max_norm is not None or scale_grad_by_freq or mode not in ("sum", "mean", "max"):
        return NotImplemented
    if input.dim() == 2:
        bags, length = input.shape
        spans = [(b * length, (b + 1) * length) for b in range(bags)]
        ids = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    else:
        ids, starts = input, [int(v) for v in offsets]
        ends = starts[1:] if include_last_offset else starts[1:] + [ids.shape[0]]
        spans = list(zip(starts[:len(ends)], ends))
    n = ids.shape[0]
    rows = weight[ids]  # [n, D]
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(-1).to(rows.dtype)
    valid = None if padding_idx is None else ids != (padding_idx % weight.shape[0])
    if mode == "max":
        width = max([e - s for s, e in spans] + [1])
        table = _constant([[min(s + j, max(e - 1, 0), n - 1) if n else 0 for j in range(width)] for s, e in spans],
                          torch.int64)
        member = _constant([[j < e - s for j in range(width)] for s, e in spans], torch.bool)
        if valid is not None:
            member = member & valid[table]
        picked = torch.where(member.unsqueeze(-1), rows[table], torch.full((), -math.inf, dtype=rows.dtype))
        out = picked.max(1).values
        return torch.where(member.any(1, keepdim=True), out, torch.zeros((), dtype=out.dtype))
    bag = _constant([[1.0 if s <= i < e else 0.0 for i in range(n)] for s, e in spans], torch.float32)
    bag = bag.to(rows.dtype) if valid is None else bag.to(rows.dtype) * valid.to(rows.dtype)
    out = bag @ rows
    if mode == "mean":
        out = out / torch.clamp(bag.sum(1, keepdim=True), min=1)
    return out


def repeat_interleave(func, input, repeats=None, dim=None, *, output_size=None):
    """``repeat_interleave`` with the repeats a tensor (``aten.repeat_interleave.Tensor``, which torch-mlir does
    not lower; its output size is the repeats' sum): the repeats read (specialized, as the example gives
    them), then an ``index_select`` of constant indices. Integer repeats, and the one-argument form (the
    repeats themselves repeated), are left to PyTorch's own."""
    if not isinstance(repeats, torch.Tensor) or not isinstance(input, torch.Tensor):
        return NotImplemented
    counts = [int(v) for v in repeats.reshape(-1)]
    x = input.reshape(-1) if dim is None else input
    axis = 0 if dim is None else dim % x.dim()
    if len(counts) == 1:
        counts = counts * x.shape[axis]
    index = _constant([i for i, n in enumerate(counts) for _ in range(n)], torch.int64)
    return x.index_select(axis, index)


class _DirectDistance(torch.autograd.Function):
    """``torch.cdist``'s direct form: the ``p``-norm of every pairwise difference, and ATen's backward
    (``_cdist_backward``): a pair at distance 0 passes no gradient, ``p = inf`` passes it to every coordinate
    at the maximum."""

    @staticmethod
    def forward(ctx, x1, x2, p):
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # [..., P, R, M]
        if p == 0:
            dist = (diff != 0).to(x1.dtype).sum(-1)
        elif p == math.inf:
            dist = diff.abs().amax(-1)
        elif p == 1:
            dist = diff.abs().sum(-1)
        elif p == 2:
            dist = (diff * diff).sum(-1).sqrt()
        else:
            dist = diff.abs().pow(p).sum(-1).pow(1.0 / p)
        ctx.save_for_backward(diff, dist)
        ctx.p = p
        return dist

    @staticmethod
    def backward(ctx, grad):
        diff, dist = ctx.saved_tensors
        p, d = ctx.p, dist.unsqueeze(-1)
        zero = torch.zeros((), dtype=diff.dtype)
        if p == 0:
            factor = torch.zeros_like(diff)
        elif p == 1:
            factor = torch.sign(diff)
        elif p == math.inf:
            factor = torch.sign(diff) * (diff.abs() == d).to(diff.dtype)
        else:
            safe = torch.where(d == 0, torch.ones((), dtype=d.dtype), d)
            if p == 2:
                factor = diff / safe
            elif p < 2:
                factor = torch.sign(diff) * diff.abs().pow(p - 1) / safe.pow(p - 1)
                if p < 1:
                    factor = torch.where(diff == 0, zero, factor)
            else:
                factor = diff * diff.abs().pow(p - 2) / safe.pow(p - 1)
            factor = torch.where(d == 0, zero, factor)
        weighted = grad.unsqueeze(-1) * factor  # [..., P, R, M]
        return weighted.sum(-2), -weighted.sum(-3), None


def pdist(func, input, p=2.0):
    """``F.pdist`` (torch-mlir lowers neither ``_pdist_forward`` nor its backward): the pairwise distances
    above the diagonal of ``cdist(input, input)`` (``cdist`` below, whose backward takes a zero distance as
    ATen's), in ``pdist``'s row-major order."""
    n = input.shape[0]
    rows, cols = _index_table(torch.triu_indices)(n, n, 1)
    return cdist(torch.cdist, input, input, p)[rows, cols] if n > 1 else input.new_zeros(0)


def cdist(func, x1, x2, p=2.0, compute_mode=None):
    """``torch.cdist``, which torch-mlir lowers neither the forward nor the backward of (``_cdist_forward``):
    as ATen computes it, the Euclidean distance through one matrix product where ATen's ``compute_mode``
    picks it (``p = 2`` and more than 25 rows on a side by default: ``[-2 x1, |x1|^2, 1] [x2, 1, |x2|^2]^T``,
    clamped at 1e-30 before the square root, whose gradient autograd takes), else the direct form
    (``_DirectDistance``)."""
    if not (isinstance(x1, torch.Tensor) and isinstance(x2, torch.Tensor)) or x1.dim() < 2:
        return NotImplemented
    rows1, rows2 = x1.shape[-2], x2.shape[-2]
    use_mm = p == 2 and (compute_mode == "use_mm_for_euclid_dist" or (
        compute_mode in (None, "use_mm_for_euclid_dist_if_necessary") and (rows1 > 25 or rows2 > 25)))
    if use_mm:
        n1, n2 = x1.pow(2).sum(-1, keepdim=True), x2.pow(2).sum(-1, keepdim=True)
        a = torch.cat([x1 * -2, n1, torch.ones_like(n1)], -1)
        b = torch.cat([x2, torch.ones_like(n2), n2], -1)
        return (a @ b.transpose(-1, -2)).clamp_min(1e-30).sqrt()
    return _DirectDistance.apply(x1, x2, float(p))


def gaussian_nll_loss(func, input, target, var, full=False, eps=1e-6, reduction="mean"):
    """``F.gaussian_nll_loss`` (``nn.GaussianNLLLoss``) as PyTorch computes it, without its check that no
    variance is negative (``torch.any(var < 0)`` decides a Python branch: the capture refused it as a value
    the parameters decide). The variance is clamped at ``eps`` as PyTorch clamps it (in place under
    ``no_grad``: the gradient passes as if unclamped)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * torch.ones_like(input)
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.dim() == var.dim() and
                  sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var + (var.clamp(min=eps) - var).detach()
    loss = 0.5 * (torch.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


_UNROLLED = 64  # the largest matrix the factorizations below unroll (one step per row or column)


def cholesky(func, input, upper=False, *, check_errors=False, out=None):
    """``torch.linalg.cholesky`` (``_ex``; ``torch.cholesky``), which torch-mlir does not lower, for matrices up
    to 64 x 64: the Cholesky-Banachiewicz columns unrolled (column ``j`` is the input's minus the earlier
    columns' products, over the square root of its diagonal entry) on the symmetric part of the input, so that
    autograd differentiates the algorithm itself and the gradient is ATen's (symmetric). A matrix that is not
    positive definite gives NaN where ATen raises (``_ex``: info 0)."""
    n = input.shape[-1]
    if out is not None or n > _UNROLLED or input.is_complex():
        return NotImplemented
    if func is torch.cholesky:
        upper = bool(upper)
    rows = torch.arange(n, device=input.device)
    # read as ATen's backward reads it: the symmetric part (its gradient is symmetric, half to each side)
    sym = (input + input.transpose(-2, -1)) * 0.5
    columns = []
    for j in range(n):
        v = sym[..., :, j]
        for k, c in enumerate(columns):
            v = v - c * c[..., j:j + 1]
        d = torch.sqrt(v[..., j:j + 1])
        columns.append(torch.where(rows > j, v / d, torch.where(rows == j, d, torch.zeros((), dtype=v.dtype))))
    lower = torch.stack(columns, -1)
    result = lower.transpose(-2, -1) if upper else lower
    if func is torch.linalg.cholesky_ex:
        return torch.return_types.linalg_cholesky_ex(
            (result, torch.zeros(input.shape[:-2], dtype=torch.int32, device=input.device)))
    return result


def solve_triangular(func, A, B, *, upper, left=True, unitriangular=False, out=None):
    """``torch.linalg.solve_triangular`` for matrices up to 64 x 64: substitution unrolled over the rows
    (``x_i = (b_i - sum_k A_ik x_k) / A_ii``, forward for a lower ``A``, backward for an upper one); ``left=False``
    solves the transposed system."""
    n = A.shape[-1]
    if out is not None or n > _UNROLLED or A.is_complex() or B.is_complex():
        return NotImplemented
    if not left:  # X A = B  <=>  A^T X^T = B^T
        return solve_triangular(func, A.transpose(-2, -1), B.transpose(-2, -1), upper=not upper,
                                unitriangular=unitriangular).transpose(-2, -1)
    order = range(n - 1, -1, -1) if upper else range(n)
    rows = [None] * n
    for i in order:
        r = B[..., i:i + 1, :]
        for k in (range(i + 1, n) if upper else range(i)):
            r = r - A[..., i:i + 1, k:k + 1] * rows[k]
        rows[i] = r if unitriangular else r / A[..., i:i + 1, i:i + 1]
    return torch.cat(rows, -2)


def _gauss_jordan(a, b=None):
    """Gauss-Jordan elimination with partial pivoting of ``a`` [..., n, n] against ``b`` [..., n, k], unrolled
    over the ``n`` columns: at column ``c`` the row of the largest magnitude at or below ``c`` (``argmax``, no
    value read) is swapped in by a gather, and column ``c`` is eliminated from every other row. Returns
    (the solution ``a^-1 b``, None without ``b``; the pivots [..., n]; the permutation's sign [...])."""
    n = a.shape[-1]
    m = a if b is None else torch.cat([a, b.to(a.dtype)], -1)
    rows = torch.arange(n, device=a.device)
    sign = torch.ones(a.shape[:-2], dtype=a.dtype, device=a.device)
    pivots = []
    for c in range(n):
        p = m[..., c:, c].abs().argmax(-1) + c  # [...]
        order = torch.where(rows == c, p.unsqueeze(-1), torch.where(rows == p.unsqueeze(-1), c, rows))
        m = torch.gather(m, -2, order.unsqueeze(-1).expand(m.shape))
        sign = torch.where(p != c, -sign, sign)
        pivot = m[..., c, c]
        factor = torch.where(rows == c, torch.zeros((), dtype=m.dtype), m[..., :, c] / pivot.unsqueeze(-1))
        m = m - factor.unsqueeze(-1) * m[..., c:c + 1, :]
        pivots.append(pivot)
    pivots = torch.stack(pivots, -1)
    return (None if b is None else m[..., n:] / pivots.unsqueeze(-1)), pivots, sign


def solve(func, A, B, *, left=True, out=None):
    """``torch.linalg.solve`` for matrices up to 64 x 64, which torch-mlir does not lower: Gauss-Jordan with
    partial pivoting unrolled (``_gauss_jordan``), so that autograd differentiates the elimination; ``B`` a
    vector or a matrix, ``left=False`` the transposed system."""
    if out is not None or A.shape[-1] > _UNROLLED or A.is_complex() or B.is_complex():
        return NotImplemented
    if not left:
        return solve(func, A.transpose(-2, -1), B.transpose(-2, -1)).transpose(-2, -1)
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and B.shape == A.shape[:-1])
    b = B.unsqueeze(-1) if vector else B
    batch = torch.broadcast_shapes(A.shape[:-2], b.shape[:-2])
    x = _gauss_jordan(A.expand(*batch, *A.shape[-2:]), b.expand(*batch, *b.shape[-2:]))[0]
    return x.squeeze(-1) if vector else x


def inverse(func, A, *, out=None):
    """``torch.linalg.inv`` / ``torch.inverse``: the solve against the identity."""
    if out is not None or A.shape[-1] > _UNROLLED or A.is_complex():
        return NotImplemented
    eye = torch.eye(A.shape[-1], dtype=A.dtype, device=A.device).expand(A.shape)
    return _gauss_jordan(A, eye)[0]


def determinant(func, A, *, out=None):
    """``det``, ``slogdet`` and ``logdet`` (a normalizing flow's log-Jacobian) from the pivots of
    ``_gauss_jordan``: the determinant is the permutation's sign times their product, ``slogdet`` their signs'
    product and their magnitudes' log sum, ``logdet`` NaN for a negative determinant as in PyTorch."""
    if out is not None or A.shape[-1] > _UNROLLED or A.is_complex():
        return NotImplemented
    _, pivots, sign = _gauss_jordan(A)
    if func in (torch.linalg.det, torch.det, torch.Tensor.det):
        return sign * pivots.prod(-1)
    sign = sign * torch.sign(pivots).prod(-1)
    logabs = pivots.abs().log().sum(-1)
    if func in (torch.logdet, torch.Tensor.logdet):
        return torch.where(sign < 0, torch.full((), math.nan, dtype=logabs.dtype), logabs)
    kind = torch.return_types.linalg_slogdet if func is torch.linalg.slogdet else torch.return_types.slogdet
    return kind((sign, logabs))


def cholesky_solve(func, B, L, upper=False, *, out=None):
    """``torch.cholesky_solve``: the two triangular solves with the factor."""
    if out is not None:
        return NotImplemented
    if upper:
        y = solve_triangular(None, L.transpose(-2, -1), B, upper=False)
        return solve_triangular(None, L, y, upper=True)
    y = solve_triangular(None, L, B, upper=False)
    return solve_triangular(None, L.transpose(-2, -1), y, upper=True)


def _long_class_indices(func, input, target, *args, **kwargs):
    """``F.cross_entropy`` / ``F.nll_loss`` with uint8 class indices (labels kept in a byte array), which
    PyTorch takes for one index per sample ("expected target dtype to be Long or Byte") but its decomposition's
    gather does not ("Expected dtype int32/int64 for index"): the same loss of the indices widened to int64, an
    exact conversion. Other targets (int64 indices, probabilities) are left to the function, and so are uint8
    indices per pixel, which PyTorch refuses ("expected scalar type Long but found Byte"): the capture then
    fails and the export says that the step fails in PyTorch itself."""
    if isinstance(target, torch.Tensor) and target.dtype == torch.uint8 and input.dim() <= 2:
        return func(input, target.long(), *args, **kwargs)
    return NotImplemented


def _in_float32(func, *args, **kwargs):
    """A loss on PyTorch's autocast float32 list (``binary_cross_entropy_with_logits``, ``mse_loss``, ...)
    computed as PyTorch's autocast computes it, in float32: inside a ``torch.autocast(enabled=False)`` region,
    whose ops (and their backward) the capture pins ``#amp.precision<f32>``. Decomposed into elementwise ops,
    such a loss otherwise took f16 from the layer before it (EoMT's mask loss after an f16 einsum): its
    backward's ``(sigmoid(x) - t) * seed`` overflowed f16 with the 65536 seed where PyTorch skips no step."""
    with torch.autocast("cpu", enabled=False):
        return func(*args, **kwargs)


def _packed_positions(batch_sizes):
    """(time step, batch index) of each row of packed data, in order: time step t holds the first
    ``batch_sizes[t]`` sequences (sorted by decreasing length)."""
    return [(t, b) for t, size in enumerate(batch_sizes) for b in range(size)]


def pack_padded_sequence(input, lengths, batch_first=False):
    """``torch._VF._pack_padded_sequence`` (``nn.utils.rnn.pack_padded_sequence``, its input already sorted
    by decreasing length), which torch-mlir does not lower: the lengths are read (specialized, as the example
    gives them; each ``int(length)`` a read the capture records), the batch sizes follow from them, and the
    packed rows are the padded input's ``[t, b]`` rows gathered by constant indices (their backward an
    accumulating ``index_put``). The batch sizes are a constant: a packed RNN reads them from the lengths
    alone, not from the values it runs on."""
    sizes = [int(v) for v in lengths]
    steps = max(sizes) if sizes else 0
    batch_sizes = [sum(1 for n in sizes if n > t) for t in range(steps)]
    x = input.transpose(0, 1) if batch_first else input  # [T, B, *]
    positions = _packed_positions(batch_sizes)
    index = _constant([t * x.shape[1] + b for t, b in positions], torch.int64)
    data = x.reshape(x.shape[0] * x.shape[1], *x.shape[2:])[index]
    return data, _constant(batch_sizes, torch.int64)


def pad_packed_sequence(data, batch_sizes, batch_first=False, padding_value=0.0, total_length=None):
    """``torch._VF._pad_packed_sequence`` (``nn.utils.rnn.pad_packed_sequence``), which torch-mlir does not
    lower: each padded ``[t, b]`` row gathered from the packed rows, or from one row of ``padding_value``
    after them; with the lengths, as a constant."""
    sizes = [int(v) for v in batch_sizes]
    batch = sizes[0] if sizes else 0
    steps = max(len(sizes), total_length or 0)
    row = {tb: k for k, tb in enumerate(_packed_positions(sizes))}
    pad = len(row)
    index = _constant([[row.get((t, b), pad) for b in range(batch)] for t in range(steps)], torch.int64)
    rows = torch.cat([data, torch.full((1, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)])
    out = rows[index]  # [T, B, *]
    lengths = _constant([sum(1 for n in sizes if n > b) for b in range(batch)], torch.int64)
    return (out.transpose(0, 1) if batch_first else out), lengths


def grid_sample(func, *args, **kwargs):
    """``F.grid_sample`` / ``torch.grid_sampler(_2d)`` (``func``) of a 4-D input as PyTorch's own decomposition
    computes it (``torch._decomp``'s ``grid_sampler_2d``: every mode and padding, the corners' values read by
    advanced indexing and weighted), called while the step is captured, above autograd, so that autograd
    records the backward of those ops (an accumulating ``index_put``: a one-hot GEMM, ``index_put``). torch-mlir
    lowers the forward op but not ``grid_sampler_2d_backward`` (RAFT's correlation lookup). NotImplemented for
    other inputs."""
    from torch._decomp.decompositions import _grid_sampler_2d
    names = (("input", "grid", "mode", "padding_mode", "align_corners") if func is torch.nn.functional.grid_sample
             else ("input", "grid", "interpolation_mode", "padding_mode", "align_corners"))
    given = dict(zip(names, args), **kwargs)
    x, grid = given["input"], given["grid"]
    mode = given.get("mode", given.get("interpolation_mode", "bilinear"))
    padding = given.get("padding_mode", "zeros")
    if x.dim() == 5 and grid.dim() == 5:
        return _grid_sample_3d(x, grid, _GRID_MODES.get(mode, mode), _GRID_PADDINGS.get(padding, padding),
                               bool(given.get("align_corners") or False))
    if x.dim() != 4 or grid.dim() != 4:
        return NotImplemented
    with _CornersByGather(x):
        out = _grid_sampler_2d(x, grid=grid, interpolation_mode=_GRID_MODES.get(mode, mode),
                               padding_mode=_GRID_PADDINGS.get(padding, padding),
                               align_corners=bool(given.get("align_corners") or False))
    # nearest: the grid's gradient is zero, as ATen's, but defined (a parameter behind it has a gradient)
    return out + 0 * grid.sum() if _GRID_MODES.get(mode, mode) == 1 else out


def _grid_sample_3d(a, grid, mode, padding, align_corners):
    """``grid_sample`` of a 5-D input (``grid_sampler_3d``, which torch-mlir does not lower, forward or
    backward): ATen's rules as ``torch._decomp``'s 2-D version writes them (coordinates unnormalized, then
    clamped for border padding or reflected for reflection padding), trilinear weights of the 8 corners
    (``mode`` 0) or the nearest voxel (1, half to even), a corner outside the volume contributing 0; the
    corners read by a gather over each (sample, channel) volume, so that autograd's backward is a scatter
    within it. Bicubic is not defined in 3-D (NotImplemented)."""
    if mode not in (0, 1):
        return NotImplemented
    n, c, depth, height, width = a.shape
    points = grid.shape[1:4]

    def source(coords, size):
        coords = coords * ((size * 0.5 - 0.5) if align_corners else size * 0.5) + (size * 0.5 - 0.5)
        if padding == 1:
            return torch.clamp(coords, 0, size - 1)
        if padding == 2:
            low, high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
            if low == high:
                return torch.zeros_like(coords)
            span = (high - low) / 2
            distance = (coords - low / 2).abs()
            extra = torch.fmod(distance, span)
            flips = torch.floor(distance / span)
            reflected = torch.where(torch.remainder(flips, 2) == 0, extra + low / 2, span + low / 2 - extra)
            return torch.clamp(reflected, 0, size - 1)
        return coords

    ix, iy, iz = (source(grid[..., k], size) for k, size in enumerate((width, height, depth)))
    flat = a.reshape(n, c, depth * height * width)

    def read(z, y, x):
        inside = (z >= 0) & (z < depth) & (y >= 0) & (y < height) & (x >= 0) & (x < width)
        index = (z.clamp(0, depth - 1) * height + y.clamp(0, height - 1)) * width + x.clamp(0, width - 1)
        values = flat.gather(2, index.reshape(n, 1, -1).expand(n, c, -1).to(torch.int64)).reshape(n, c, *points)
        return values * inside.unsqueeze(1).to(a.dtype)

    if mode == 1:  # the grid's gradient is zero, as ATen's (but defined: the grid stays in the graph)
        return read(torch.round(iz), torch.round(iy), torch.round(ix)) + 0 * grid.sum()
    x0, y0, z0 = torch.floor(ix), torch.floor(iy), torch.floor(iz)
    fx, fy, fz = ix - x0, iy - y0, iz - z0
    out = 0
    for dz, wz in ((0, 1 - fz), (1, fz)):
        for dy, wy in ((0, 1 - fy), (1, fy)):
            for dx, wx in ((0, 1 - fx), (1, fx)):
                out = out + read(z0 + dz, y0 + dy, x0 + dx) * (wz * wy * wx).unsqueeze(1)
    return out


def grouped_conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``F.conv3d`` with groups (MViT's depthwise attention pooling; torch-mlir lowers no grouped 5-D
    convolution), computed while the step is captured, above autograd: for each of the ``kd`` taps along the
    depth, the frames that tap reads (every ``stride``-th from its offset, ``_every``) folded into the batch
    and convolved in 2-D with that tap's filters; the sum over the taps. Autograd records the 2-D
    convolutions' backward, which the table above takes. NotImplemented without groups or with a padding
    given by name."""
    if groups == 1 or isinstance(padding, str) or input.dim() not in (4, 5):
        return NotImplemented
    if input.dim() == 4:
        return grouped_conv3d(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups).squeeze(0)
    (sd, sh, sw), (pd, ph, pw), (dd, dh, dw) = _triple(stride), _triple(padding), _triple(dilation)
    n, c, d = input.shape[:3]
    cout, kd = weight.shape[0], weight.shape[2]
    x = torch.nn.functional.pad(input, (0, 0, 0, 0, pd, pd))
    depth = (d + 2 * pd - dd * (kd - 1) - 1) // sd + 1
    out = None
    for i in range(kd):
        frames = _every(x, 2, i * dd, sd, depth).transpose(1, 2).reshape(n * depth, c, *x.shape[3:])
        y = torch.nn.functional.conv2d(frames, weight[:, :, i], None, (sh, sw), (ph, pw), (dh, dw), groups)
        out = y if out is None else out + y
    out = out.reshape(n, depth, cout, *out.shape[2:]).transpose(1, 2)
    return out if bias is None else out + bias.reshape(1, -1, 1, 1, 1)


#: A log-probability no alignment reaches, finite so that logsumexp's gradient stays finite (``-inf - -inf``
#: is NaN); a loss of ``-_NEVER / 10`` or more is an impossible alignment, infinite in PyTorch.
_NEVER = -1e30


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """``F.ctc_loss`` (a speech model's CTC head: wav2vec2, Parakeet), which torch-mlir does not lower, as
    the forward (alpha) recursion of Graves et al. in log space, computed while the step is captured, above
    autograd, so that autograd records its backward; in float32 (PyTorch's autocast keeps losses there). Over
    the targets with blanks between and around them (``2 S + 1`` states; ``S`` the padded targets' width): at
    each of the ``T`` frames (unrolled), a state is reached from itself, the one before, or the one two back
    when that skips a blank between different labels; a sample's frames past its input length keep its
    values. Its loss is minus the log of the sum over its last two states. An impossible alignment is
    ``inf`` as in PyTorch (0 with ``zero_infinity``), with no gradient. ``reduction="mean"`` divides by the
    target lengths (at least 1), then averages. NotImplemented for concatenated (1-D) targets with tensor
    lengths, whose padded width the capture cannot know."""
    if targets.dim() == 1 and log_probs.dim() == 3:
        if isinstance(target_lengths, torch.Tensor):
            return NotImplemented
        starts = np.cumsum([0, *target_lengths[:-1]])
        width = max(target_lengths) if len(target_lengths) else 0
        index = torch.tensor([[min(int(s) + j, max(targets.numel() - 1, 0)) for j in range(width)] for s in starts],
                             dtype=torch.long)
        targets = targets[index] if width else targets.new_zeros((len(target_lengths), 0))
    if log_probs.dim() == 2:  # one sequence
        out = ctc_loss(log_probs.unsqueeze(1), targets.unsqueeze(0), torch.as_tensor(input_lengths).reshape(1),
                       torch.as_tensor(target_lengths).reshape(1), blank, reduction, zero_infinity)
        return out.squeeze(0) if reduction == "none" else out
    with torch.autocast(log_probs.device.type, enabled=False):
        lp = log_probs.to(torch.promote_types(log_probs.dtype, torch.float32))
        frames, n, _ = lp.shape
        input_lengths = torch.as_tensor(input_lengths, dtype=torch.long).reshape(n)
        target_lengths = torch.as_tensor(target_lengths, dtype=torch.long).reshape(n)
        width = targets.shape[1]
        blanks = torch.full((n, width + 1), blank, dtype=torch.long)
        ext = torch.cat([torch.stack([blanks[:, :width], targets.long()], -1).reshape(n, 2 * width),
                         blanks[:, :1]], 1)  # [n, 2S+1]: blank, t1, blank, t2, ..., blank
        states = ext.shape[1]
        lpe = lp.transpose(0, 1).gather(2, ext[:, None, :].expand(n, frames, states))  # [n, T, 2S+1]
        never = torch.full((n, 2), _NEVER, dtype=lp.dtype)
        two_back = torch.cat([blanks[:, :2], ext[:, :-2]], 1)
        skips = (ext != blank) & (ext != two_back) & (torch.arange(states) >= 2)
        alpha = torch.where(torch.arange(states) < 2, lpe[:, 0], _NEVER)
        for t in range(1, frames):
            one = torch.cat([never[:, :1], alpha[:, :-1]], 1)
            two = torch.where(skips, torch.cat([never, alpha[:, :-2]], 1), _NEVER)
            step = torch.logsumexp(torch.stack([alpha, one, two]), 0) + lpe[:, t]
            alpha = torch.where((input_lengths > t)[:, None], step, alpha)
        last = alpha.gather(1, (2 * target_lengths)[:, None])
        before = torch.where(target_lengths[:, None] > 0, alpha.gather(1, (2 * target_lengths - 1).clamp(min=0)[:, None]),
                             _NEVER)
        loss = -torch.logsumexp(torch.cat([last, before], 1), 1)
        impossible = loss >= -_NEVER / 10
        loss = torch.where(impossible, 0.0 if zero_infinity else float("inf"), loss)
        if reduction == "mean":
            return (loss / target_lengths.clamp(min=1)).mean().to(log_probs.dtype)
        if reduction == "sum":
            return loss.sum().to(log_probs.dtype)
        return loss.to(log_probs.dtype)


class _CornersByGather(torch.overrides.TorchFunctionMode):
    """Inside ``grid_sample``: the decomposition's corner reads ``a[n_idx, c_idx, iy, ix]`` (``n_idx`` /
    ``c_idx`` aranges over the batch and the channels) as a ``gather`` over each (sample, channel) plane.
    Advanced indexing's backward is an accumulating ``index_put`` through all four index tensors, whose
    one-hot GEMM spans every element of ``a`` for every point: ``N*C*points x N*C*H*W``, 5 billion for
    RAFT's correlation lookup at 128 px, which the CPU could not hold; the gather's (a ``scatter_add``) spans
    one plane a point."""

    def __init__(self, a):
        super().__init__()
        self.a = a

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.__getitem__ and args[0] is self.a and isinstance(args[1], tuple) \
                and len(args[1]) == 4:
            n, c, h, w = self.a.shape
            _, _, iy, ix = args[1]
            iy, ix = torch.broadcast_tensors(iy, ix)
            points = iy.shape[-2:]
            flat = (iy * w + ix).expand(n, c, *points).reshape(n, c, -1)
            return self.a.reshape(n, c, h * w).gather(2, flat).reshape(n, c, *points)
        return func(*args, **kwargs)


def fmod(self, other):
    """Floating-point ``fmod`` (grid_sample's reflection padding), which torch-mlir does not lower:
    ``a - b * trunc(a / b)``, the remainder with the dividend's sign, exact up to the rounding of the
    quotient (PyTorch's ``fmodf`` is exact). Integers are left to torch-mlir."""
    if not torch.result_type(self, other).is_floating_point:
        return NotImplemented
    return self - other * torch.trunc(self / other)


def _floor_division(a, b):
    """The quotient and remainder of integers rounded toward -inf (PyTorch's ``//`` and ``%``), from the
    truncating ones: where the remainder is not 0 and its sign is not the divisor's, the quotient one lower
    and the remainder plus the divisor. torch-mlir's own lowering tests the signs on the product ``a * b``,
    which wraps for large ``a`` (a hash's sums): a wrong quotient and a remainder out of ``[0, b)``, silently
    (an embedding read past its table's end in BLT's hashed n-grams)."""
    dtype = torch.result_type(a, b)
    a, b = (x.to(dtype) if isinstance(x, torch.Tensor) else torch.full((), x, dtype=dtype) for x in (a, b))
    q = torch.div(a, b, rounding_mode="trunc")
    r = a - q * b
    wrong = torch.logical_and(r != 0, (r < 0) != (b < 0))
    return torch.where(wrong, q - 1, q), torch.where(wrong, r + b, r)


def remainder(self, other):
    """Integer ``%`` (``_floor_division``); floats are left to torch-mlir."""
    if not _integral(torch.result_type(self, other)):
        return NotImplemented
    return _floor_division(self, other)[1]


def div_mode(self, other, *, rounding_mode=None):
    """Integer ``//`` (``div(rounding_mode="floor")``, ``_floor_division``); the rest is left to torch-mlir."""
    if rounding_mode != "floor" or not _integral(torch.result_type(self, other)):
        return NotImplemented
    return _floor_division(self, other)[0]


def true_divide(self, other):
    """``/`` of an integer or boolean tensor (``byte_tensor / 255.0``: diffusers' AutoencoderTiny quantizes its
    latents so): the tensor converted to the result's float type first, which is what ATen's division computes
    (torch-mlir's TOSA conversion refuses an unsigned operand)."""
    if self.is_floating_point() or self.is_complex():
        return NotImplemented
    result = torch.result_type(self, other)
    result = result if result.is_floating_point else torch.get_default_dtype()
    return torch.div(self.to(result), other.to(result) if isinstance(other, torch.Tensor) else other)


def sort(self, dim=-1, descending=False):
    """``sort`` of integers (a router's expert ids), which torch-mlir's conversions refuse, by ranks
    (``_sort_by_rank``); floats are left to torch-mlir."""
    if self.is_floating_point() or self.dim() == 0:
        return NotImplemented
    return _sort_by_rank(self, dim, descending)


def sort_stable(self, *, stable=None, dim=-1, descending=False):
    """``sort(stable=...)``, an overload torch-mlir does not know: floats as the default overload (its
    lowering picks ties in index order: stable), integers by ranks (stable)."""
    if self.dim() == 0:
        return self.clone(), torch.zeros((), dtype=torch.int64, device=self.device)
    if self.is_floating_point():
        return aten.sort.default(self, dim, descending)
    return _sort_by_rank(self, dim, descending)


def constant_pad_nd(x, pad, value=0):
    """``constant_pad_nd`` with negative pads (crops: the backward of a pad, MobileBERT's trigram
    embedding) as slices, then pads of what is left. torch-mlir makes it one ``tosa.pad`` with negative
    padding, which TOSA does not define (its linalg lowering gives a negative offset)."""
    if all(p >= 0 for p in pad):
        return NotImplemented
    out = x
    for i in range(len(pad) // 2):
        out = _pad_or_crop(out, x.dim() - 1 - i, pad[2 * i], pad[2 * i + 1], value)
    return out.clone() if all(p <= 0 for p in pad) else out  # a result, not a view of the input


def roll(x, shifts, dims=()):
    """``roll`` as two static slices and a concatenation per rolled dimension (Swin's shifted windows, and
    its backward, a roll the other way). torch-mlir's own decomposition slices from a start it computes at
    run time, which leaves the slice's extent dynamic and its TOSA lowering refuses it."""
    if not dims:  # the flattened tensor, rolled
        return roll(x.reshape(-1), shifts, (0,)).reshape(x.shape)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        return NotImplemented
    out = x
    for shift, dim in zip(shifts, dims):
        dim %= x.dim()
        n = x.shape[dim]
        shift = shift % n if n else 0
        if shift:
            out = torch.cat((out.narrow(dim, n - shift, shift), out.narrow(dim, 0, n - shift)), dim)
    return out.clone() if out is x else out  # a result, not an alias of the input


def weight_norm_interface_backward(grad_w, saved_v, saved_g, saved_norms, dim):
    """``_weight_norm_interface_backward`` (``weight_norm``'s backward: wav2vec2's and HuBERT's positional
    convolution), which torch-mlir does not lower, as ATen's differentiable form: with ``w = g v / |v|``
    and ``s = sum(grad_w * v)`` over every dimension but ``dim``, ``grad_g = s / |v|`` and ``grad_v =
    g / |v| * (grad_w - v * s / |v|^2)``."""
    dim %= saved_v.dim()
    reduce_dims = [i for i in range(saved_v.dim()) if i != dim]
    s = grad_w * saved_v
    if reduce_dims:
        s = s.sum(reduce_dims, keepdim=True)
    grad_g = s / saved_norms
    grad_v = (saved_g / saved_norms) * (grad_w - saved_v * (s / (saved_norms * saved_norms)))
    return grad_v.to(saved_v.dtype), grad_g.to(saved_g.dtype)


def _inclusive_count(flags):
    """Inclusive prefix count of a 1-D int32 0/1 tensor without a scan op (our dialects have none): blocks
    of ``b ~ sqrt(n)``, counted within a block through a ``b x b`` triangle and across blocks through an
    ``n/b x n/b`` one, ``O(n^1.5)`` work and memory instead of the ``n x n`` of one triangle."""
    n = flags.shape[0]
    b = max(1, math.isqrt(n - 1) + 1)
    nb = -(-n // b)
    padded = torch.cat([flags, flags.new_zeros(nb * b - n)]) if nb * b > n else flags
    blocks = padded.reshape(nb, b)
    pos_b = torch.arange(b, device=flags.device)
    tri_b = (pos_b[None, :] <= pos_b[:, None]).to(flags.dtype)  # [i, j]: j <= i
    within = (blocks[:, None, :] * tri_b[None, :, :]).sum(-1)  # (nb, b)
    pos_nb = torch.arange(nb, device=flags.device)
    before = (pos_nb[None, :] < pos_nb[:, None]).to(flags.dtype)  # [i, j]: j < i
    offsets = (before * blocks.sum(1)[None, :]).sum(1)  # (nb,)
    return (within + offsets[:, None]).reshape(nb * b)[:n]


def nonzero_static(x, count):
    """``aten.nonzero(x)`` when ``x`` is known to have ``count`` non-zero elements (read from the example
    tensors, ``_torch_mlir._Specializer``): the same ``(count, x.dim())`` indices, row-major order, with
    static shapes. Each element's destination is a permutation of the flat positions: the ``k``-th non-zero
    element goes to ``k`` (its inclusive prefix count minus one), the zeros after all of them in order; one
    scatter of the positions through it (unique indices: a plain ``index_put``), whose first ``count``
    entries are the non-zero elements' flat indices, unravelled by the sizes. Integer ops only (no
    autocast). The zeros go after the non-zero elements ``x`` has, not after ``count``: where a batch has
    another count than the example's, the step computes other indices than PyTorch (its
    SpecializationWarning says so), but every one in bounds, and the scatter writes none outside."""
    n = x.numel()
    if x.dim() == 0 or n == 0 or count == 0:
        return torch.zeros((count, x.dim()), dtype=torch.int64, device=x.device)
    flags = (x != 0).reshape(n).to(torch.int32)
    pos = torch.arange(n, dtype=torch.int32, device=x.device)
    incl = _inclusive_count(flags)
    dest = torch.where(flags != 0, incl - 1, incl[-1] + pos - incl)
    index = torch.zeros(n, dtype=torch.int32, device=x.device).index_put((dest.to(torch.int64),), pos)
    index = index[:count].to(torch.int64)
    cols = []
    for size in reversed(x.shape):
        cols.append(torch.remainder(index, size))
        index = torch.div(index, size, rounding_mode="floor")
    return torch.stack(cols[::-1], 1)


def nonzero_static_op(x, *, size, fill_value=-1):
    """``aten.nonzero_static`` (``torch.combinations``, ``torch.nonzero_static``): the first ``size`` rows of
    ``nonzero_static`` above, rows past ``x``'s own non-zero count (it is computed in the step) set to
    ``fill_value``, as ATen pads them."""
    n = x.numel()
    if size == 0 or n == 0 or x.dim() == 0:
        return torch.full((size, max(x.dim(), 1) if x.dim() else 0), fill_value, dtype=torch.int64, device=x.device)
    rows = nonzero_static(x, min(size, n))
    if size > n:
        rows = torch.cat([rows, rows.new_full((size - n, x.dim()), fill_value)])
    found = (x != 0).reshape(n).to(torch.int64).sum()
    keep = torch.arange(size, device=x.device) < found
    return torch.where(keep[:, None], rows, torch.full_like(rows, fill_value))


def mutation_table():
    """Batch norm in training mode updates its running statistics in place, and native_batch_norm's
    schema does not say so: functionalization would keep the op and lose the update. PyTorch's own
    decompositions make it the functional op plus explicit ``copy_``, which functionalization then
    turns into results (applied in a first capture, before functionalization)."""
    from torch._decomp import decomposition_table as torch_table

    ops = (aten.native_batch_norm.default, aten._native_batch_norm_legit.default,
           aten._native_batch_norm_legit.no_stats, aten.batch_norm.default)
    return {op: torch_table[op] for op in ops if op in torch_table}


def pinned_table():
    """The first capture's entries that record an op as itself inside a ``torch.autocast(enabled=False)``
    region's annotation, so that the import pins it f32 with its backward (``_annotate_backward_of_regions``)
    and its decomposition in the replay: the spectral factorizations (``_linalg_svd``, ``_linalg_eigh``, and
    ``linalg_pinv`` / ``linalg_lstsq`` made of them),
    which PyTorch runs in float32 or float64 only (its CUDA kernels refuse half precision, so its autocast
    cannot run them in f16 either), and whose backward divides by differences of eigenvalues."""
    def pinned(op):
        inside = []

        def record(*args, **kwargs):
            if inside:  # the op itself, recorded by make_fx
                return NotImplemented
            inside.append(op)
            try:
                with _float32_annotation():
                    return op(*args, **kwargs)
            finally:
                inside.pop()
        return record

    return {op: pinned(op) for op in (aten._linalg_svd.default, aten._linalg_eigh.default,
                                      aten.linalg_pinv.atol_rtol_tensor, aten.linalg_lstsq.default)}


def table():
    """torch-mlir's decomposition table with ours on top."""
    from torch_mlir import fx as tm_fx

    t = dict(tm_fx.get_decomposition_table())
    for forward, backward in ((aten.upsample_bicubic2d, aten.upsample_bicubic2d_backward),
                              (aten._upsample_bicubic2d_aa, aten._upsample_bicubic2d_aa_backward),
                              (aten._upsample_bilinear2d_aa, aten._upsample_bilinear2d_aa_backward)):
        t[forward.default], t[backward.default] = _separable_resampling(forward.default)
    t.update({
        aten.max_pool2d_with_indices_backward.default: max_pool2d_with_indices_backward,
        aten.rrelu_with_noise_functional.default: rrelu_with_noise_functional,
        aten.rrelu_with_noise_backward.default: rrelu_with_noise_backward,
        aten.max_pool3d_with_indices_backward.default: max_pool3d_with_indices_backward,
        aten.avg_pool2d.default: avg_pool2d,
        aten.avg_pool2d_backward.default: avg_pool2d_backward,
        aten.avg_pool3d_backward.default: avg_pool3d_backward,
        aten.kthvalue.default: kthvalue,
        aten.median.dim: median_dim,
        aten.hypot.default: hypot,
        aten.diagonal_scatter.default: diagonal_scatter,
        aten._neg_view.default: lambda x: torch.neg(x),  # a negated view (a conjugate's gradient), as a value
        aten.median.default: median,
        aten.mode.default: mode,
        aten.erfc.default: erfc,
        aten.erfinv.default: erfinv,
        aten.lgamma.default: lgamma,
        aten.digamma.default: digamma,
        aten.polygamma.default: polygamma,
        aten.softshrink_backward.default: shrink_backward,
        aten.hardshrink_backward.default: shrink_backward,
        aten.adaptive_max_pool2d.default: adaptive_max_pool2d,
        aten.adaptive_max_pool2d_backward.default: adaptive_max_pool2d_backward,
        aten.adaptive_max_pool3d_backward.default: adaptive_max_pool3d_backward,
        aten._adaptive_avg_pool3d_backward.default: adaptive_avg_pool3d_backward,
        aten._adaptive_avg_pool2d_backward.default: adaptive_avg_pool2d_backward,
        aten.upsample_bilinear2d.default: upsample_bilinear2d,
        aten.upsample_bilinear2d_backward.default: upsample_bilinear2d_backward,
        aten.upsample_linear1d_backward.default: upsample_linear1d_backward,
        aten.upsample_trilinear3d.default: upsample_trilinear3d,
        aten._upsample_nearest_exact1d_backward.default: _nearest_exact_backward(aten._upsample_nearest_exact1d.default, 1),
        aten._upsample_nearest_exact2d_backward.default: _nearest_exact_backward(aten._upsample_nearest_exact2d.default, 2),
        aten.replication_pad1d_backward.default: replication_pad_backward,
        aten.replication_pad3d_backward.default: replication_pad_backward,
        aten.upsample_trilinear3d_backward.default: upsample_trilinear3d_backward,
        aten.upsample_nearest2d_backward.default: upsample_nearest2d_backward,
        aten.index_put.default: index_put,
        aten.embedding_dense_backward.default: embedding_dense_backward,
        aten.convolution_backward.default: convolution_backward,
        aten.convolution.default: convolution,
        aten.native_layer_norm.default: native_layer_norm,
        aten.as_strided.default: _in_storage_order(as_strided),
        aten.as_strided_scatter.default: _in_storage_order(as_strided_scatter),
        aten.new_empty_strided.default: new_empty_strided,
        aten.roll.default: roll,
        aten.constant_pad_nd.default: constant_pad_nd,
        aten.scatter_add.default: scatter_add,
        aten.scatter_reduce.two: scatter_reduce,
        aten.topk.default: topk,
        aten.sort.default: sort,
        aten.relu.default: relu,
        aten.pow.Tensor_Tensor: pow_tensor_tensor,
        aten.pow.Tensor_Scalar: pow_tensor_scalar,
        aten.pow.Scalar: pow_scalar,
        aten.remainder.Tensor: remainder,
        aten.fmod.Tensor: fmod,
        aten.fmod.Scalar: fmod,
        aten.remainder.Scalar: remainder,
        aten.div.Tensor_mode: div_mode,
        aten.div.Scalar: true_divide,
        aten.div.Tensor: true_divide,
        aten.div.Scalar_mode: div_mode,
        aten.cummax.default: cummax,
        aten.cumprod.default: cumprod,
        aten.cummin.default: cummin,
        aten.sort.stable: sort_stable,
        aten.nonzero_static.default: nonzero_static_op,
        # torch._check_tensor_all's reductions (torch.distributions' argument validation): read by the capture, and
        # kept in the step by the check of the value read (_torch_mlir._Specializer); torch-mlir lowers all / any
        aten._is_all_true.default: lambda x: torch.all(x),
        aten._is_any_true.default: lambda x: torch.any(x),
        aten.fake_quantize_per_tensor_affine_cachemask.default: fake_quantize_per_tensor_cachemask,
        aten._fake_quantize_per_tensor_affine_cachemask_tensor_qparams.default:
            fake_quantize_tensor_qparams_cachemask,
        aten.fake_quantize_per_channel_affine_cachemask.default: fake_quantize_per_channel_cachemask,
        aten._fake_quantize_learnable_per_tensor_affine.default: fake_quantize_learnable_per_tensor,
        aten._fake_quantize_learnable_per_tensor_affine_backward.default:
            fake_quantize_learnable_per_tensor_backward,
        aten._fake_quantize_learnable_per_channel_affine.default: fake_quantize_learnable_per_channel,
        aten._fake_quantize_learnable_per_channel_affine_backward.default:
            fake_quantize_learnable_per_channel_backward,
        aten._fused_moving_avg_obs_fq_helper_functional.default: fused_moving_avg_obs_fq_helper,
        aten.linalg_matrix_exp.default: matrix_exp,
        aten._linalg_eigh.default: linalg_eigh,
        aten._linalg_svd.default: linalg_svd,
        aten.linalg_pinv.atol_rtol_tensor: linalg_pinv,
        aten.linalg_lstsq.default: linalg_lstsq,
        aten.embedding_renorm.default: embedding_renorm,
        aten.multi_margin_loss_backward.default: multi_margin_loss_backward,
        aten.multilabel_margin_loss_backward.default: multilabel_margin_loss_backward,
        aten.gelu.default: gelu,
        aten.i0.default: i0,
        aten.special_i0e.default: i0e,
        aten.special_i1.default: i1,
        aten.special_i1e.default: i1e,
        aten.special_erfcx.default: erfcx,
        aten.special_log_ndtr.default: log_ndtr,
        aten.special_ndtri.default: ndtri,
        aten.searchsorted.Tensor: searchsorted,
        aten.searchsorted.Scalar: searchsorted,
        aten.histc.default: histc,
        aten.signbit.default: signbit,
        aten.copysign.Tensor: copysign,
        aten.copysign.Scalar: copysign,
        aten.tril_indices.default: _index_table(torch.tril_indices),
        aten.triu_indices.default: _index_table(torch.triu_indices),
        aten._weight_norm_interface_backward.default: weight_norm_interface_backward,
    })
    t.update(foreach_table())
    for op, decomposition in t.items():
        if getattr(op, "overloadpacket", None) in COMPOSITES:
            t[op] = _composite(op.overloadpacket, decomposition)
    return t


# The multi-tensor ops a training loop's own code calls outside the optimizer (an EMA's
# torch._foreach_lerp_, SWA's running mean), as their one-tensor ops.
_FOREACH = ("lerp", "add", "sub", "mul", "div", "addcdiv", "addcmul", "sqrt", "neg", "abs", "exp", "maximum",
            "minimum", "clamp_min", "clamp_max", "pow", "copy", "sign", "reciprocal", "zero")


def foreach_table():
    """``aten._foreach_<op>.<overload>`` (functional) -> a list of ``aten.<op>`` calls, one per tensor of its
    list arguments (other arguments shared), which is what PyTorch's CPU kernels of those ops compute (their
    slow path calls the one-tensor op per tensor); a ``ScalarList`` gives each tensor its scalar. ``addcdiv`` /
    ``addcmul`` take their scalar as ``value``."""
    def per_tensor(name):
        op = getattr(aten, name)

        def decomposed(*args, **kwargs):
            def at(a, j):
                return a[j] if isinstance(a, (list, tuple)) else a
            if name in ("addcdiv", "addcmul") and len(args) == 4:
                args, kwargs = args[:3], {**kwargs, "value": args[3]}
            return [op(*(at(a, j) for a in args), **{k: at(v, j) for k, v in kwargs.items()})
                    for j in range(len(args[0]))]
        return decomposed

    table = {}
    for name in _FOREACH:
        packet = getattr(aten, f"_foreach_{name}", None)
        if packet is None:
            continue
        for overload in packet.overloads():
            table[getattr(packet, overload)] = per_tensor(name)
    return table
