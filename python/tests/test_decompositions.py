"""The decompositions amp_mlir.torch adds to torch-mlir's table (amp_mlir/torch/_decompositions.py),
each against the aten op it replaces, in float64 (differences are summation order only)."""

import math

import pytest

torch = pytest.importorskip("torch")
aten = torch.ops.aten


def _decomp():
    from amp_mlir.torch import _decompositions

    return _decompositions


def _moved_axes(fn, *args):
    """The aten ops of ``fn(*args)`` (traced by make_fx, the tensor arguments as its inputs) that move axes
    (permute, transpose)."""
    from torch.fx.experimental.proxy_tensor import make_fx

    where = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]

    def traced(*tensors):
        full = list(args)
        for i, t in zip(where, tensors):
            full[i] = t
        return fn(*full)

    graph = make_fx(traced)(*[args[i] for i in where])
    return [n.target for n in graph.graph.nodes
            if n.op == "call_function" and str(n.target).split(".")[1] in ("permute", "transpose", "t")]


def _close(got, ref, tol=1e-12):
    got = got if isinstance(got, (tuple, list)) else (got,)
    ref = ref if isinstance(ref, (tuple, list)) else (ref,)
    for g, r in zip(got, ref):
        if r is None:
            assert g is None
            continue
        assert tuple(g.shape) == tuple(r.shape)
        assert float((g - r).abs().max()) <= tol * max(1.0, float(r.abs().max()))


@pytest.mark.parametrize("shape, normalized, affine", [((4, 7, 33), [33], True), ((2, 3, 5, 6), [5, 6], False)])
def test_native_layer_norm(shape, normalized, affine):
    torch.manual_seed(0)
    x = torch.randn(*shape, dtype=torch.float64)
    w = torch.randn(*normalized, dtype=torch.float64) if affine else None
    b = torch.randn(*normalized, dtype=torch.float64) if affine else None
    _close(_decomp().native_layer_norm(x, normalized, w, b, 1e-5),
           aten.native_layer_norm.default(x, normalized, w, b, 1e-5))


def test_native_layer_norm_stays_in_float32():
    x = torch.randn(2, 8, 16)
    out, mean, rstd = _decomp().native_layer_norm(x, [16], None, None, 1e-5)
    assert out.dtype == mean.dtype == rstd.dtype == torch.float32


@pytest.mark.parametrize("stride, padding, dilation, groups", [(1, 0, 1, 1), (2, 1, 1, 1), (1, 2, 2, 1),
                                                               (2, 1, 1, 4), (1, 1, 2, 2)])
def test_convolution_backward(stride, padding, dilation, groups):
    torch.manual_seed(1)
    x = torch.randn(2, 4, 9, 9, dtype=torch.float64)
    w = torch.randn(8, 4 // groups, 3, 3, dtype=torch.float64)
    y = aten.convolution.default(x, w, None, [stride] * 2, [padding] * 2, [dilation] * 2, False, [0, 0], groups)
    g = torch.randn_like(y)
    args = (g, x, w, [8], [stride] * 2, [padding] * 2, [dilation] * 2, False, [0, 0], groups, [True, True, True])
    _close(_decomp().convolution_backward(*args), aten.convolution_backward.default(*args))


@pytest.mark.parametrize("shape, weight, stride, padding, groups", [
    ((2, 3, 16, 16), (8, 3, 7, 7), (2, 2), (3, 3), 1),  # ResNet's stem
    ((2, 4, 9, 10), (6, 4, 1, 1), (2, 2), (0, 0), 1),  # 1x1 downsampling: a residue no tap reaches
    ((1, 4, 11, 9), (4, 1, 3, 3), (2, 2), (1, 1), 4),  # depthwise (MobileNet's strided blocks)
    ((1, 4, 10, 11), (6, 2, 2, 4), (3, 2), (0, 1), 2),  # kernel smaller than the stride, per-axis settings
    ((2, 2, 8, 8), (3, 2, 5, 3), (2, 1), (2, 0), 1),  # strided along one dimension only
    ((1, 2, 3, 3), (2, 2, 1, 1), (2, 2), (3, 3), 1),  # padding past the kernel: the gradient cropped
    ((1, 2, 2, 2), (2, 2, 1, 1), (3, 3), (2, 2), 1),
])
def test_strided_input_gradient(shape, weight, stride, padding, groups):
    """A strided convolution's input gradient, computed per input sublattice (no zero-dilated output gradient),
    against ATen's."""
    torch.manual_seed(8)
    x = torch.randn(*shape, dtype=torch.float64)
    w = torch.randn(*weight, dtype=torch.float64)
    conv = (list(stride), list(padding), [1, 1], False, [0, 0], groups)
    g = torch.randn_like(aten.convolution.default(x, w, None, *conv))
    args = (g, x, w, None, *conv, [True, False, False])
    _close(_decomp().convolution_backward(*args)[0], aten.convolution_backward.default(*args)[0])


@pytest.mark.parametrize("shape, weight, stride, padding, dilation, groups", [
    ((2, 3, 16, 16), (8, 3, 7, 7), (2, 2), (3, 3), (1, 1), 1),  # ResNet's stem: an 8 x 8 gradient cropped before
    ((2, 4, 9, 10), (6, 4, 1, 1), (2, 2), (0, 0), (1, 1), 1),  # 1x1 downsampling: 2 x 2 before, 4x the work
    ((2, 4, 8, 8), (6, 4, 3, 3), (2, 2), (1, 1), (1, 1), 1),  # ResNet's strided 3x3: 4 x 4 before
    ((1, 4, 12, 10), (4, 1, 3, 3), (2, 2), (1, 1), (1, 1), 4),  # depthwise (MobileNet's strided blocks): 4 x 4
    ((2, 2, 11, 10), (3, 2, 3, 2), (3, 2), (2, 0), (2, 1), 1),  # dilated and strided, per-axis settings
    ((1, 2, 3, 3), (2, 2, 1, 1), (2, 2), (3, 3), (1, 1), 1),  # padding past the kernel
])
def test_weight_gradient_computes_only_the_filter(shape, weight, stride, padding, dilation, groups):
    """A convolution's weight gradient against ATen's, and the convolution computing it (the input window
    with the output gradient as a filter) traced by make_fx: its output is the filter's kh x kw, no larger
    (``_weight_gradient_window``: the window cropped to the rows a stride reaches)."""
    from torch.fx.experimental.proxy_tensor import make_fx

    torch.manual_seed(9)
    x = torch.randn(*shape, dtype=torch.float64)
    w = torch.randn(*weight, dtype=torch.float64)
    conv = (list(stride), list(padding), list(dilation), False, [0, 0], groups)
    g = torch.randn_like(aten.convolution.default(x, w, None, *conv))
    args = (g, x, w, None, *conv, [False, True, False])
    _close(_decomp().convolution_backward(*args)[1], aten.convolution_backward.default(*args)[1])
    graph = make_fx(lambda g, x, w: _decomp().convolution_backward(g, x, w, None, *conv, [False, True, False])[1])(
        g, x, w)
    sizes = [tuple(n.meta["val"].shape[2:]) for n in graph.graph.nodes if n.target == aten.convolution.default]
    assert sizes == [tuple(weight[2:])], sizes


@pytest.mark.parametrize("shape, weight, stride, padding, dilation, groups, bias", [
    ((2, 8, 7, 7), (12, 2, 3, 3), 1, 1, 1, 4, True),  # 2 input, 3 output channels per group
    ((1, 6, 9, 8), (6, 3, 3, 2), 2, 0, 2, 2, False),
    ((2, 6, 10, 9), (9, 2, 3, 3), 3, 2, 1, 3, True),  # stride 3: the last window needs zeros past the end
    ((2, 8, 11), (8, 2, 3), 2, 1, 2, 4, True),  # 1-D
    ((2, 4, 5, 5), (8, 1, 3, 3), 1, 1, 1, 4, True),  # depthwise: left to torch-mlir
    ((2, 4, 5, 5), (8, 4, 3, 3), 1, 1, 1, 1, True),  # ungrouped: left to torch-mlir
])
def test_grouped_convolution(shape, weight, stride, padding, dilation, groups, bias):
    torch.manual_seed(5)
    x = torch.randn(*shape, dtype=torch.float64)
    w = torch.randn(*weight, dtype=torch.float64)
    b = torch.randn(weight[0], dtype=torch.float64) if bias else None
    d = len(shape) - 2
    args = (x, w, b, [stride] * d, [padding] * d, [dilation] * d, False, [0] * d, groups)
    got = _decomp().convolution(*args)
    if groups == 1 or weight[1] == 1:
        assert got is NotImplemented
    else:
        _close(got, aten.convolution.default(*args))


@pytest.mark.parametrize("shape, weight, stride, padding, output_padding, dilation, groups, bias", [
    ((2, 8, 16), (8, 1, 4), 2, 1, 0, 1, 8, True),  # depthwise 1-D (Mimi's upsampler)
    ((2, 6, 9), (6, 2, 3), 3, 1, 2, 1, 3, False),  # 2 output channels per group, output padding
    ((2, 4, 5, 6), (4, 3, 3, 3), 2, 1, 1, 2, 2, True),  # 2-D, 2 input / 3 output channels per group, dilated
    ((1, 6, 4, 4), (6, 1, 2, 3), (2, 1), (0, 1), (1, 0), 1, 6, False),  # 2-D depthwise, per-axis settings
    ((2, 4, 5), (4, 3, 3), 2, 0, 0, 1, 1, True),  # ungrouped: left to torch-mlir
])
def test_transposed_grouped_convolution(shape, weight, stride, padding, output_padding, dilation, groups, bias):
    """A grouped transposed convolution (torch-mlir lowers none: "failed to legalize") as the input gradient
    of the convolution with the same weights, against ATen."""
    torch.manual_seed(7)
    x = torch.randn(*shape, dtype=torch.float64)
    w = torch.randn(*weight, dtype=torch.float64)
    b = torch.randn(weight[1] * groups, dtype=torch.float64) if bias else None
    d = len(shape) - 2
    each = [v if isinstance(v, tuple) else (v,) * d for v in (stride, padding, output_padding)]
    args = (x, w, b, list(each[0]), list(each[1]), [dilation] * d, True, list(each[2]), groups)
    got = _decomp().convolution(*args)
    if groups == 1:
        assert got is NotImplemented
    else:
        _close(got, aten.convolution.default(*args))


@pytest.mark.parametrize("stride, padding, output_padding, dilation, groups", [
    (2, 0, 0, 1, 1), (2, 1, 1, 1, 1), (1, 1, 0, 2, 1), (3, 1, 2, 1, 2)])
def test_transposed_convolution_backward(stride, padding, output_padding, dilation, groups):
    torch.manual_seed(6)
    x = torch.randn(2, 4, 5, 6, dtype=torch.float64)
    w = torch.randn(4, 6 // groups, 3, 3, dtype=torch.float64)
    conv = ([stride] * 2, [padding] * 2, [dilation] * 2, True, [output_padding] * 2, groups)
    y = aten.convolution.default(x, w, None, *conv)
    g = torch.randn_like(y)
    args = (g, x, w, [6], *conv, [True, True, True])
    _close(_decomp().convolution_backward(*args), aten.convolution_backward.default(*args))


@pytest.mark.parametrize("stride, padding, output_padding, dilation, groups", [
    (2, 0, 0, 1, 1), (2, 1, 1, 1, 1), (1, 1, 0, 2, 1), (3, 1, 2, 1, 2)])
def test_transposed_convolution_1d_backward(stride, padding, output_padding, dilation, groups):
    torch.manual_seed(6)
    x = torch.randn(2, 4, 9, dtype=torch.float64)
    w = torch.randn(4, 6 // groups, 4, dtype=torch.float64)
    conv = ([stride], [padding], [dilation], True, [output_padding], groups)
    y = aten.convolution.default(x, w, None, *conv)
    g = torch.randn_like(y)
    for mask in ([True, True, True], [True, False, False], [False, True, True]):
        args = (g, x, w, [6], *conv, mask)
        _close(_decomp().convolution_backward(*args), aten.convolution_backward.default(*args))


@pytest.mark.parametrize("size, scale, mode, align_corners", [
    ((2, 3, 4, 5), 2.0, "bilinear", False), ((1, 2, 3, 4), 2.5, "bilinear", True), ((1, 2, 6, 3), 0.5, "bilinear", False),
    ((2, 3, 4, 5), 2.0, "nearest", None), ((1, 2, 5, 3), 1.7, "nearest", None)])
def test_upsample_backward(size, scale, mode, align_corners):
    torch.manual_seed(7)
    x = torch.randn(*size, dtype=torch.float64, requires_grad=True)
    y = torch.nn.functional.interpolate(x, scale_factor=scale, mode=mode, align_corners=align_corners)
    g = torch.randn_like(y)
    (want,) = torch.autograd.grad(y, x, g)
    out_size = list(y.shape[-2:])
    if mode == "bilinear":
        got = _decomp().upsample_bilinear2d_backward(g, out_size, list(size), align_corners, scale, scale)
    else:
        got = _decomp().upsample_nearest2d_backward(g, out_size, list(size), scale, scale)
    _close(got, want)


@pytest.mark.parametrize("length, size, scale, align_corners", [
    (6, 10, None, False), (6, 10, None, True), (7, None, 0.6, False), (5, None, 2.5, True)])
def test_upsample_linear1d_backward(length, size, scale, align_corners):
    """1-D linear resampling's gradient (torch-mlir leaves it; SAM stopped on it) against autograd of ATen's."""
    torch.manual_seed(7)
    x = torch.randn(2, 3, length, dtype=torch.float64, requires_grad=True)
    y = torch.nn.functional.interpolate(x, size=size, scale_factor=scale, mode="linear", align_corners=align_corners)
    g = torch.randn_like(y)
    (want,) = torch.autograd.grad(y, x, g)
    _close(_decomp().upsample_linear1d_backward(g, [y.shape[-1]], list(x.shape), align_corners, scale), want)


@pytest.mark.parametrize("mode, antialias", [("bicubic", True), ("bilinear", True), ("bicubic", False)])
@pytest.mark.parametrize("size, out, align_corners", [((2, 3, 8, 6), (5, 3), False), ((1, 2, 4, 5), (7, 9), False),
                                                       ((1, 1, 9, 4), (2, 4), True), ((2, 2, 4, 4), (4, 4), False)])
def test_separable_resampling(mode, antialias, size, out, align_corners):
    """Antialiased and bicubic resampling (down, up, identity size) and their backward as two products with
    the op's own matrices."""
    torch.manual_seed(7)
    x = torch.randn(*size, dtype=torch.float64, requires_grad=True)
    y = torch.nn.functional.interpolate(x, size=out, mode=mode, antialias=antialias, align_corners=align_corners)
    g = torch.randn_like(y)
    (want,) = torch.autograd.grad(y, x, g)
    op = getattr(aten, f"_upsample_{mode}2d_aa" if antialias else f"upsample_{mode}2d").default
    forward, backward = _decomp()._separable_resampling(op)
    _close(forward(x.detach(), list(out), align_corners), y.detach())
    _close(backward(g, list(out), list(size), align_corners), want)


def test_adaptive_max_pool3d_backward():
    torch.manual_seed(8)
    x = torch.randn(2, 3, 4, 4, 6, dtype=torch.float64)
    y, idx = aten.adaptive_max_pool3d.default(x, [2, 2, 3])
    g = torch.randn_like(y)
    _close(_decomp().adaptive_max_pool3d_backward(g, x, idx), aten.adaptive_max_pool3d_backward.default(g, x, idx))


@pytest.mark.parametrize("size, out", [((2, 3, 7, 7), (2, 2)), ((3, 5, 4), (1, 3)), ((1, 2, 6, 6), (6, 6))])
def test_adaptive_max_pool2d_backward(size, out):
    torch.manual_seed(8)
    x = torch.randn(*size, dtype=torch.float64)
    y, idx = aten.adaptive_max_pool2d.default(x, list(out))
    g = torch.randn_like(y)
    _close(_decomp().adaptive_max_pool2d_backward(g, x, idx), aten.adaptive_max_pool2d_backward.default(g, x, idx))


@pytest.mark.parametrize("size, out", [((2, 3, 1, 8), (1, 3)), ((1, 2, 6, 6), (4, 5)), ((2, 2, 10, 10), (4, 3)),
                                       ((3, 9, 5), (4, 3))])
def test_adaptive_max_pool2d_uneven_windows(size, out):
    """Windows not of one size at one stride (8 -> 3: sizes 3, 4, 3), which torch-mlir cannot lower: the same
    values and indices as ATen's (ties included: the first in the window's row-major order)."""
    torch.manual_seed(8)
    x = torch.randn(*size, dtype=torch.float64)
    x[..., :2, :3] = 1.5  # a tie inside the first windows
    _close(_decomp().adaptive_max_pool2d(x, list(out)), aten.adaptive_max_pool2d.default(x, list(out)), tol=0)
    assert _decomp().adaptive_max_pool2d(x, [2, 2] if size[-1] % 2 == 0 and size[-2] % 2 == 0 else [1, 1]) \
        is NotImplemented  # even windows: torch-mlir's


@pytest.mark.parametrize("size, out", [((2, 3, 7, 7), (2, 2)), ((1, 2, 5, 9), (3, 4)), ((3, 6, 6), (1, 1))])
def test_adaptive_avg_pool2d_backward(size, out):
    torch.manual_seed(9)
    x = torch.randn(*size, dtype=torch.float64)
    g = torch.randn(*size[:-2], *out, dtype=torch.float64)
    _close(_decomp().adaptive_avg_pool2d_backward(g, x), aten._adaptive_avg_pool2d_backward.default(g, x))


@pytest.mark.parametrize("table, dim, idx", [((5, 2), 0, [[0, 3], [3, -1]]), ((7,), 0, [6, 6, 0, 2]),
                                             ((4, 3, 2), 0, [1]), ((4, 6), 1, [[5, 0, 5], [1, 1, 2]]),
                                             ((2, 3, 5), 2, [4, 4])])
def test_index_put_accumulate(table, dim, idx):
    torch.manual_seed(10)
    self = torch.randn(*table, dtype=torch.float64)
    index = torch.tensor(idx)
    indices = [None] * dim + [index]
    values = torch.randn(*table[:dim], *index.shape, *table[dim + 1:], dtype=torch.float64)
    _close(_decomp().index_put(self, indices, values, True), aten.index_put.default(self, indices, values, True))
    written = _decomp().index_put(self, indices, values, False)
    if dim == 0:
        assert written is NotImplemented  # one index at the first dimension: torch-mlir's
    elif torch.remainder(index, table[dim]).unique().numel() == index.numel():  # repeated writes: order open
        _close(written, aten.index_put.default(self, indices, values, False))


@pytest.mark.parametrize("table, dim, idx", [((3, 4, 5), 1, ([[0], [3], [-1]], [[4, 0, 4]])),
                                             ((2, 6, 7, 3), 1, ([1, 5, 1], [6, 6, -7])),
                                             ((5, 4), 0, ([[0, 4], [2, 2]], [3, 3]))])
def test_index_put_accumulate_adjacent_indices(table, dim, idx):
    """Index tensors at adjacent dimensions, broadcast together (col2im's rows and columns)."""
    torch.manual_seed(11)
    self = torch.randn(*table, dtype=torch.float64)
    index = [torch.tensor(i) for i in idx]
    indices = [None] * dim + index
    shape = torch.broadcast_shapes(*[i.shape for i in index])
    values = torch.randn(*table[:dim], *shape, *table[dim + len(index):], dtype=torch.float64)
    _close(_decomp().index_put(self, indices, values, True), aten.index_put.default(self, indices, values, True))
    # separated by a None: PyTorch moves the indexed dimensions first; left to torch-mlir
    assert _decomp().index_put(self, [torch.tensor([0]), None, torch.tensor([0])], values, True) is NotImplemented


def test_index_put_is_col2im():
    """nn.Unfold's backward (PyTorch's col2im decomposition: an accumulating index_put with two index
    tensors) with this index_put in place of aten's equals aten.col2im."""
    from torch._decomp import decomposition_table
    from torch.utils._python_dispatch import TorchDispatchMode

    class OurIndexPut(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func in (aten._unsafe_index_put.default, aten.index_put.default):
                out = _decomp().index_put(*args, **(kwargs or {}))
                assert out is not NotImplemented
                return out
            return func(*args, **(kwargs or {}))

    torch.manual_seed(12)
    cols = torch.randn(2, 3 * 2 * 3, 12, dtype=torch.float64)
    args = ([5, 6], [2, 3], [1, 1], [1, 0], [1, 2])
    with OurIndexPut():
        got = decomposition_table[aten.col2im.default](cols, *args)
    _close(got, aten.col2im.default(cols, *args))


@pytest.mark.parametrize("padding_idx", [2, -1])
@pytest.mark.parametrize("scale_grad_by_freq", [False, True])
def test_embedding_dense_backward(padding_idx, scale_grad_by_freq):
    torch.manual_seed(2)
    idx = torch.randint(0, 10, (3, 5))
    g = torch.randn(3, 5, 6, dtype=torch.float64)
    _close(_decomp().embedding_dense_backward(g, idx, 10, padding_idx, scale_grad_by_freq),
           aten.embedding_dense_backward.default(g, idx, 10, padding_idx, scale_grad_by_freq))


@pytest.mark.parametrize("shape, kernel, stride, padding, dilation, ceil_mode", [
    ((2, 3, 8, 8), [2, 2], [2, 2], [0, 0], [1, 1], False),
    ((1, 2, 7, 9), [3, 3], [2, 2], [1, 1], [1, 1], True),  # overlapping windows, ceil mode
    ((1, 2, 9, 8), [3, 2], [1, 2], [1, 0], [2, 1], False),  # dilated
    ((2, 3, 14, 14), [3, 3], [2, 2], [1, 1], [1, 1], False),  # ResNet's: two taps on one sublattice
    ((1, 2, 9, 10), [2, 2], [3, 3], [0, 0], [1, 1], False),  # stride past the kernel: a sublattice of zeros
    ((1, 1, 9, 7), [3, 3], [2, 3], [1, 1], [2, 2], True),  # dilated and strided
    ((1, 2, 1, 1), [3, 3], [2, 2], [1, 1], [1, 1], False),  # 1x1 map: taps beyond the input
    # 3-D (torch-mlir leaves MaxPool3d's gradient: torchvision's S3D stopped on it)
    ((2, 3, 2, 8, 8), [1, 3, 3], [1, 2, 2], [0, 1, 1], [1, 1, 1], False),  # S3D's spatial pooling
    ((1, 2, 5, 6, 7), [3, 3, 3], [2, 2, 2], [1, 1, 1], [1, 1, 1], True),
    ((1, 2, 4, 5, 6), [2], [], [0], [1], False),  # one value for every dimension, stride = kernel
])
def test_max_pool_with_indices_backward(shape, kernel, stride, padding, dilation, ceil_mode):
    """Max pooling's gradient (2-D and 3-D) against ATen's."""
    torch.manual_seed(3)
    x = torch.randn(*shape, dtype=torch.float64)
    name = "max_pool2d_with_indices" if len(shape) == 4 else "max_pool3d_with_indices"
    out, idx = getattr(aten, name).default(x, kernel, stride, padding, dilation, ceil_mode)
    g = torch.randn_like(out)
    args = (g, x, kernel, stride, padding, dilation, ceil_mode, idx)
    _close(getattr(_decomp(), name + "_backward")(*args), getattr(aten, name + "_backward").default(*args))
    # Each tap is placed along every axis where it is: a transpose would make the GPU kernel reading the
    # indices uncoalesced (python/tests/test_gpu_pooling.py).
    assert _moved_axes(getattr(_decomp(), name + "_backward"), *args) == []


def test_max_pool_backward_writes_one_input_sized_tensor():
    """ResNet's 3 x 3 / 2 max pooling: the nine taps are summed per input sublattice at the pooled size and
    the sublattices interleaved once. Placing each tap on the input grid made 9 input-sized tensors (and
    their pads, views and sums: 38 ops of at least the input's size); now only the interleave's stack and
    its merge are that large."""
    from torch.fx.experimental.proxy_tensor import make_fx

    x = torch.randn(2, 3, 14, 14)
    out, idx = aten.max_pool2d_with_indices.default(x, [3, 3], [2, 2], [1, 1], [1, 1], False)
    graph = make_fx(lambda g, i: _decomp().max_pool2d_with_indices_backward(
        g, x, [3, 3], [2, 2], [1, 1], [1, 1], False, i))(torch.randn_like(out), idx)
    large = [n.target for n in graph.graph.nodes
             if n.op == "call_function" and n.meta["val"].numel() >= x.numel()]
    assert len(large) <= 2, large


@pytest.mark.parametrize("shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor", [
    ((2, 3, 8, 8), [2, 2], [2, 2], [0, 0], False, True, None),
    ((2, 3, 9, 8), [3, 3], [2, 2], [1, 1], True, False, None),  # overlapping windows, strided
    ((1, 2, 9, 10), [2, 2], [3, 3], [0, 0], False, True, None),  # stride past the kernel
    ((2, 3, 7, 9), [3, 3], [1, 1], [1, 1], False, False, None),  # PoolFormer's token mixer
    ((1, 2, 7, 6), [3, 2], [2, 3], [1, 1], True, True, None),  # ceil mode: last windows clipped
    ((1, 2, 7, 6), [3, 3], [2, 2], [1, 0], True, False, None),
    ((3, 5, 5), [2, 3], [1, 2], [1, 1], False, True, 4),  # no batch dimension, divisor_override
    ((2, 4, 1, 1), [3, 3], [1, 1], [1, 1], False, False, None),  # 1x1 map: offsets that read only padding
    # windows wider than the padded input: window matrices (transformers' EfficientNet pools 2 x 2 with 1280)
    ((2, 3, 2, 2), [1280, 1280], [1280, 1280], [0, 0], True, True, None),
    ((2, 3, 3, 5), [7, 8], [7, 8], [1, 2], True, False, None),  # wider along the height only, padded
    ((1, 2, 4, 3), [9, 5], [9, 2], [2, 1], True, True, None),  # padding counted in the divisor
    ((1, 2, 3, 3), [6, 6], [6, 6], [0, 0], True, True, 5),
])
def test_avg_pool2d_backward(shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor):
    """The backward against ATen; and the forward where ours computes it (a window wider than the padded
    input: torch-mlir's tosa.avg_pool2d fails its verifier there)."""
    torch.manual_seed(4)
    x = torch.randn(*shape, dtype=torch.float64)
    out = aten.avg_pool2d.default(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor)
    g = torch.randn_like(out)
    args = (g, x, kernel, stride, padding, ceil_mode, count_include_pad, divisor)
    _close(_decomp().avg_pool2d_backward(*args), aten.avg_pool2d_backward.default(*args))
    wider = any(k > s + 2 * p for k, s, p in zip(kernel, shape[-2:], padding))
    assert wider or _moved_axes(_decomp().avg_pool2d_backward, *args) == []
    if wider:
        _close(_decomp().avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor), out)


@pytest.mark.parametrize("shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor", [
    ((2, 3, 5, 6, 7), (2, 2, 2), (2, 2, 2), (0, 0, 0), False, True, None),
    ((1, 2, 5, 6, 7), (3, 2, 3), (2, 1, 2), (1, 1, 1), True, False, None),
    ((1, 2, 4, 4, 4), (3, 3, 3), (1, 1, 1), (1, 1, 1), False, True, 5),
    ((2, 1, 6, 3, 3), (5, 1, 1), (1, 1, 1), (2, 0, 0), False, True, None),  # LocalResponseNorm's
    ((1, 1, 5, 5, 5), (2, 3, 2), (3, 2, 2), (1, 1, 0), True, True, None)])
def test_avg_pool3d_backward(shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor):
    torch.manual_seed(3)
    x = torch.randn(*shape, dtype=torch.float64)
    args = (list(kernel), list(stride), list(padding), ceil_mode, count_include_pad, divisor)
    g = torch.randn_like(aten.avg_pool3d.default(x, *args))
    _close(_decomp().avg_pool3d_backward(g, x, *args), aten.avg_pool3d_backward.default(g, x, *args))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx, two_d, last", [(None, False, False), (0, False, True), (3, True, False)])
def test_embedding_bag(mode, padding_idx, two_d, last):
    """``F.embedding_bag``'s values, an empty bag included (0 in every mode) and ids equal to ``padding_idx``
    left out (not counted by ``mean``)."""
    torch.manual_seed(4)
    weight = torch.randn(10, 6, dtype=torch.float64)
    ids = torch.tensor([1, 2, 2, 5, 0, 7, 3, 3, 9, 4, 0, 8])
    offsets = torch.tensor([0, 3, 3, 7, 12] if last else [0, 3, 3, 7])
    psw = torch.rand(12, dtype=torch.float64) if mode == "sum" else None
    args = (ids.reshape(3, 4), weight, None) if two_d else (ids, weight, offsets)
    kwargs = dict(mode=mode, include_last_offset=last, padding_idx=padding_idx,
                  per_sample_weights=None if psw is None else (psw.reshape(3, 4) if two_d else psw))
    F = torch.nn.functional
    _close(_decomp().embedding_bag(F.embedding_bag, *args, **kwargs), F.embedding_bag(*args, **kwargs))


@pytest.mark.parametrize("shape, out, align_corners, scales", [
    ((2, 3, 2, 3, 4), [4, 6, 8], False, [None] * 3), ((1, 2, 3, 4, 5), [5, 3, 7], True, [None] * 3),
    ((1, 1, 2, 2, 3), [5, 5, 7], False, [2.5, 2.5, 2.4])])
def test_upsample_trilinear3d(shape, out, align_corners, scales):
    torch.manual_seed(5)
    x = torch.randn(*shape, dtype=torch.float64)
    y = aten.upsample_trilinear3d.default(x, out, align_corners, *scales)
    _close(_decomp().upsample_trilinear3d(x, out, align_corners, *scales), y)
    g = torch.randn_like(y)
    _close(_decomp().upsample_trilinear3d_backward(g, out, list(shape), align_corners, *scales),
           aten.upsample_trilinear3d_backward.default(g, out, list(shape), align_corners, *scales))


@pytest.mark.parametrize("shape, repeats, dim", [((2, 3), [3], 1), ((2, 3), [1, 0, 2], 1), ((4, 2), [2, 1, 1, 3], 0),
                                                 ((2, 2), [1, 2, 0, 1], None)])
def test_repeat_interleave_of_tensor_repeats(shape, repeats, dim):
    x = torch.randn(*shape, dtype=torch.float64)
    r = torch.tensor(repeats)
    _close(_decomp().repeat_interleave(torch.repeat_interleave, x, r, dim), torch.repeat_interleave(x, r, dim), tol=0)


@pytest.mark.parametrize("rows, p", [((5, 4), 2.0), ((30, 4), 2.0), ((5, 6), 1.0), ((5, 6), 3.0), ((4, 3), math.inf),
                                     ((4, 3), 0.5), ((4, 3), 0.0)])
def test_cdist(rows, p):
    """Values and gradients of ``torch.cdist``'s, pairs at distance 0 (and coordinates equal) included; the
    matrix-product form from 26 rows."""
    torch.manual_seed(6)
    a = torch.randn(2, rows[0], 3, dtype=torch.float64)
    b = torch.randn(2, rows[1], 3, dtype=torch.float64)
    b[0, 0], b[1, 1, 0] = a[0, 0], a[1, 2, 0]
    a.requires_grad_(True)
    b.requires_grad_(True)
    g = torch.randn(2, *rows, dtype=torch.float64)
    want = torch.cdist(a, b, p)
    got = _decomp().cdist(torch.cdist, a, b, p)
    _close(got, want)
    _close(torch.autograd.grad(got, (a, b), g), torch.autograd.grad(want, (a, b), g))


def test_nearest_exact_and_replication_pad_backward():
    torch.manual_seed(9)
    d = _decomp()
    x = torch.randn(2, 3, 7, dtype=torch.float64)
    g = torch.randn_like(aten._upsample_nearest_exact1d.default(x, [12], None))
    _close(d._nearest_exact_backward(aten._upsample_nearest_exact1d.default, 1)(g, [12], [2, 3, 7], None),
           aten._upsample_nearest_exact1d_backward.default(g, [12], [2, 3, 7], None))
    x = torch.randn(2, 3, 4, 5, dtype=torch.float64)
    g = torch.randn_like(aten._upsample_nearest_exact2d.default(x, [5, 7], None, None))
    _close(d._nearest_exact_backward(aten._upsample_nearest_exact2d.default, 2)(g, [5, 7], [2, 3, 4, 5], None, None),
           aten._upsample_nearest_exact2d_backward.default(g, [5, 7], [2, 3, 4, 5], None, None))
    for shape, pad, op in [((2, 3, 7), [2, 3], "replication_pad1d"), ((1, 2, 3, 4, 5), [1, 2, 0, 1, 2, 1], "replication_pad3d"),
                           ((1, 2, 4, 5), [2, 1, 3, 0], "replication_pad2d")]:
        x = torch.randn(*shape, dtype=torch.float64)
        g = torch.randn_like(getattr(aten, op).default(x, pad))
        _close(d.replication_pad_backward(g, x, pad), getattr(aten, op + "_backward").default(g, x, pad))


@pytest.mark.parametrize("name", ["lgamma", "digamma", "trigamma"])
def test_gamma_functions(name):
    """In float64 to 1e-9 relative (of values at least 1) on both sides of 0 and up to 1e5; in float32 within
    4e-6 of the float64 values for positive arguments (PyTorch's own float32 lgamma is within 6e-8 there)."""
    d = _decomp()
    ours, ref = {"lgamma": (d.lgamma, torch.lgamma), "digamma": (d.digamma, torch.digamma),
                 "trigamma": (lambda t: d.polygamma(1, t), lambda t: torch.polygamma(1, t))}[name]
    x = torch.cat([torch.linspace(-6.7, -0.05, 500), torch.linspace(0.01, 30, 700), torch.tensor([1e3, 1e5])]).double()
    err = ((ours(x) - ref(x)).abs() / ref(x).abs().clamp(min=1)).max()
    assert float(err) < 1e-9
    positive = x[x > 0]
    err32 = ((ours(positive.float()).double() - ref(positive)).abs() / ref(positive).abs().clamp(min=1)).max()
    assert float(err32) < 4e-6


def test_erfinv_erfc_median():
    """``erfinv`` within 3e-7 relative in float32 (1e-11 in float64), +-inf at +-1 and NaN beyond as ATen;
    ``erfc``; ``median`` of every element."""
    x = torch.cat([torch.linspace(-0.999999, 0.999999, 20001), torch.tensor([-1.0, 1.0, 0.0, 1.5, -1e-7])])
    for dtype, tol in ((torch.float32, 3e-7), (torch.float64, 1e-11)):
        got, want = _decomp().erfinv(x.to(dtype)), torch.erfinv(x.to(dtype))
        finite = torch.isfinite(want)
        assert float(((got - want).abs() / want.abs().clamp(min=1e-3))[finite].max()) < tol
        assert torch.equal(torch.isnan(got), torch.isnan(want)) and torch.equal(got[~finite & ~torch.isnan(want)],
                                                                               want[~finite & ~torch.isnan(want)])
    y = torch.randn(5, 7, dtype=torch.float64)
    _close(_decomp().erfc(y), torch.erfc(y))
    _close(_decomp().median(y), torch.median(y), tol=0)


@pytest.mark.parametrize("shape, offset, dim1, dim2", [((3, 5, 5), 0, 1, 2), ((3, 4, 6), 2, -2, -1),
                                                       ((3, 6, 4), -1, 1, 2), ((5, 3, 4), 1, 2, 0),
                                                       ((2, 4, 3, 5), -2, 3, 1)])
def test_diagonal_scatter(shape, offset, dim1, dim2):
    torch.manual_seed(11)
    x = torch.randn(*shape, dtype=torch.float64)
    src = torch.randn(*torch.diagonal(x, offset, dim1, dim2).shape, dtype=torch.float64)
    _close(_decomp().diagonal_scatter(x, src, offset, dim1, dim2), torch.diagonal_scatter(x, src, offset, dim1, dim2),
           tol=0)


def test_gauss_jordan_solve_inverse_determinants():
    """``solve`` (matrix, vector, ``left=False``), ``inv``, ``det``, ``slogdet`` and ``logdet`` (NaN for a negative
    determinant) by pivoted Gauss-Jordan: values and gradients in float64."""
    torch.manual_seed(12)
    d = _decomp()
    A = torch.randn(3, 5, 5, dtype=torch.float64, requires_grad=True)
    B = torch.randn(3, 5, 2, dtype=torch.float64)
    cases = [(torch.linalg.solve(A, B), d.solve(torch.linalg.solve, A, B)),
             (torch.linalg.solve(A, B[..., 0]), d.solve(torch.linalg.solve, A, B[..., 0])),
             (torch.linalg.solve(A, B.mT, left=False), d.solve(torch.linalg.solve, A, B.mT, left=False)),
             (torch.linalg.inv(A), d.inverse(torch.linalg.inv, A)),
             (torch.linalg.det(A), d.determinant(torch.linalg.det, A)),
             (torch.linalg.slogdet(A).logabsdet, d.determinant(torch.linalg.slogdet, A).logabsdet)]
    for want, got in cases:
        g = torch.randn_like(want)
        _close(got, want, tol=1e-12)
        _close(torch.autograd.grad(got, A, g), torch.autograd.grad(want, A, g), tol=1e-11)
    assert torch.equal(d.determinant(torch.linalg.slogdet, A).sign, torch.linalg.slogdet(A).sign)
    assert torch.equal(torch.isnan(d.determinant(torch.logdet, A)), torch.isnan(torch.logdet(A)))


def test_cholesky_and_triangular_solves():
    """Values and gradients (a symmetric one for the factorization, as ATen's) in float64."""
    torch.manual_seed(10)
    d = _decomp()
    a = torch.randn(3, 5, 5, dtype=torch.float64)
    A = (a @ a.mT + 5 * torch.eye(5)).requires_grad_(True)
    g = torch.randn(3, 5, 5, dtype=torch.float64)
    for upper in (False, True):
        want, got = torch.linalg.cholesky(A, upper=upper), d.cholesky(torch.linalg.cholesky, A, upper)
        _close(got, want)
        _close(torch.autograd.grad(got, A, g), torch.autograd.grad(want, A, g))
    L = torch.linalg.cholesky(A).detach().requires_grad_(True)
    B = torch.randn(3, 5, 2, dtype=torch.float64, requires_grad=True)
    for upper, left, unit in [(False, True, False), (True, True, False), (False, False, False), (True, True, True)]:
        M, rhs = (L.mT if upper else L), (B if left else B.mT)
        want = torch.linalg.solve_triangular(M, rhs, upper=upper, left=left, unitriangular=unit)
        got = d.solve_triangular(None, M, rhs, upper=upper, left=left, unitriangular=unit)
        gg = torch.randn_like(want)
        _close(got, want)
        _close(torch.autograd.grad(got, (L, B), gg), torch.autograd.grad(want, (L, B), gg))
    for upper in (False, True):
        _close(d.cholesky_solve(None, B, L.mT if upper else L, upper), torch.cholesky_solve(B, L.mT if upper else L, upper))


def test_kthvalue_median_hypot():
    torch.manual_seed(7)
    x = torch.randn(4, 5, 6, dtype=torch.float64)
    for k, dim, keepdim in [(1, 1, False), (3, -1, True), (4, 0, False)]:
        _close(_decomp().kthvalue(x, k, dim, keepdim), torch.kthvalue(x, k, dim, keepdim), tol=0)
    for dim in (0, 1, 2):
        _close(_decomp().median_dim(x, dim), torch.median(x, dim), tol=0)
    _close(_decomp().hypot(x, 2 * x), torch.hypot(x, 2 * x))


@pytest.mark.parametrize("op", ["softshrink_backward", "hardshrink_backward"])
@pytest.mark.parametrize("lambd", [0.5, 0.3, 0.0])
def test_shrink_backward(op, lambd):
    """At the kinks too (|x| == lambd: no gradient, as ATen's kernels)."""
    x = torch.tensor([-1.0, -0.5, -0.3, 0.0, 0.3, 0.5, 0.7], dtype=torch.float64)
    g = torch.arange(7.0, dtype=torch.float64) + 1
    _close(_decomp().shrink_backward(g, x, lambd), getattr(aten, op).default(g, x, lambd), tol=0)


@pytest.mark.parametrize("shape, shifts, dims", [((2, 6, 6, 4), (-3, -3), (1, 2)), ((2, 6, 6, 4), (3, 3), (1, 2)),
                                                  ((5, 7), 9, 1), ((5, 7), (2, -1), (0, -1)), ((3, 4), 5, ()),
                                                  ((3, 4), 4, 1), ((4,), -6, 0)])
def test_roll(shape, shifts, dims):
    x = torch.randn(*shape, dtype=torch.float64)
    got = _decomp().roll(x, shifts, dims)
    assert torch.equal(got, torch.roll(x, shifts, dims))
    assert got.data_ptr() != x.data_ptr()


@pytest.mark.parametrize("dim", [0, 2, -1])  # ATen fuses the first or last dimension only
def test_weight_norm_interface_backward(dim):
    """weight_norm's backward (wav2vec2's positional convolution) against autograd of ATen's op."""
    torch.manual_seed(0)
    v = torch.randn(6, 4, 5, dtype=torch.float64, requires_grad=True)
    shape = [1, 1, 1]
    shape[dim % 3] = v.shape[dim]
    g = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    w, norm = aten._weight_norm_interface(v, g, dim % 3)
    grad_w = torch.randn_like(w)
    want_v, want_g = torch.autograd.grad(w, (v, g), grad_w)
    got_v, got_g = _decomp().weight_norm_interface_backward(grad_w, v.detach(), g.detach(), norm.detach(), dim)
    torch.testing.assert_close(got_v, want_v, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got_g, want_g, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape, pad", [((2, 16, 3), [0, 0, -1, 0]), ((2, 16, 3), [0, 0, 0, -1]),
                                        ((4, 5), [-2, 3, 1, -1]), ((4, 5), [-1, -1, -2, -2]), ((3, 4), [-4, 2])])
def test_constant_pad_nd_with_crops(shape, pad):
    x = torch.randn(*shape, dtype=torch.float64)
    got = _decomp().constant_pad_nd(x, pad, 0.5)
    assert torch.equal(got, aten.constant_pad_nd.default(x, pad, 0.5))
    assert _decomp().constant_pad_nd(x, [1, 0], 0.0) is NotImplemented


@pytest.mark.parametrize("numel, size, stride, offset, kind", [
    (640, (2, 320, 1, 1), (320, 1, 320, 320), 0, "reshape"),  # adaptive_avg_pool2d to 1x1, channels-last strides
    (640, (2, 320), (320, 1), 0, "reshape"),
    (24, (2, 3, 4), (12, 4, 1), 0, "reshape"),
    (6, (2, 3), (1, 2), 0, "gather"),                          # a transpose
    (9, (2, 2), (3, 1), 0, "gather"),                          # skips elements
    (12, (3,), (1,), 3, "gather"),                             # a slice: Swin V2's qkv_bias[n:2n].zero_()
    (6, (2, 3), (3, 1), 1, "outside"),                         # past the storage's end
    (6, (2, 2), (1, 1), 0, "overlap"),                         # element 1 twice
])
def test_as_strided_and_scatter(numel, size, stride, offset, kind):
    """as_strided / as_strided_scatter of a contiguous tensor: a view that walks the whole storage in order
    is a reshape (timm's convnext: the pooled features' backward), any other view inside the storage a
    gather (and the scatter a gather and a select, when no element is named twice); the rest is left to
    the op."""
    d = _decomp()
    x = torch.arange(numel, dtype=torch.float64)
    src = torch.randn(*size, dtype=torch.float64)
    got = d.as_strided(x, size, stride, offset)
    scattered = d.as_strided_scatter(x, src, size, stride, offset)
    if kind == "outside":
        assert got is NotImplemented and scattered is NotImplemented
        return
    _close(got, aten.as_strided.default(x, size, stride, offset))
    if kind == "overlap":
        assert scattered is NotImplemented
        return
    _close(scattered, aten.as_strided_scatter.default(x, src, size, stride, offset))


def test_strided_ops_on_a_permuted_tensor():
    """as_strided / as_strided_scatter / new_empty_strided on a dense tensor with permuted strides (zeros_like
    of a transposed one, and autograd's copies of it): taken in its storage order, the values ATen gives; a
    tensor with gaps is left to the op."""
    d = _decomp()
    base = torch.randn(2, 5, 3, dtype=torch.float64).transpose(1, 2)  # (2, 3, 5), strides (15, 1, 3)
    assert d._dense_permutation(base.shape, base.stride()) == [0, 2, 1]
    src = torch.randn(2, 3, dtype=torch.float64)
    view = ((2, 3), (15, 1), 3)  # base[:, :, 1]
    _close(d._in_storage_order(d.as_strided_scatter)(base, src, *view),
           aten.as_strided_scatter.default(base, src, *view))
    _close(d._in_storage_order(d.as_strided)(base, *view), aten.as_strided.default(base, *view))
    empty = d.new_empty_strided(base, (2, 3, 5), (15, 1, 3))
    assert empty.stride() == (15, 1, 3) and not empty.any()
    assert d._dense_permutation((2, 3), (4, 1)) is None  # a gap: left to the op
    assert d.new_empty_strided(base, (2, 3), (4, 1)) is NotImplemented


@pytest.mark.parametrize("shape, dim, index_shape, src_shape", [
    ((4, 5), 1, (4, 2), (4, 2)),  # gather's backward: k of the n positions a row
    ((4, 5), 0, (3, 5), (3, 5)),  # repeated indices along dim 0
    ((3, 6, 2), -2, (2, 4, 2), (3, 4, 2)),  # index smaller than self and src in the other dimensions
])
def test_scatter_add(shape, dim, index_shape, src_shape):
    """scatter_add as a one-hot comparison summed over the index's extent: ATen's values (repeated
    indices add up; what the index does not cover stays)."""
    d = _decomp()
    torch.manual_seed(0)
    x = torch.randn(*shape, dtype=torch.float64)
    index = torch.randint(0, shape[dim], index_shape)
    src = torch.randn(*src_shape, dtype=torch.float64)
    _close(d.scatter_add(x, dim, index, src), aten.scatter_add.default(x, dim, index, src))


def test_topk_unsorted_is_the_sorted_one():
    d = _decomp()
    x = torch.randn(5, 7)
    got = d.topk(x, 3, -1, True, False)
    want = aten.topk.default(x, 3, -1, True, True)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    assert d.topk(x, 3, -1, True, True) is NotImplemented


def test_normal_and_exponential_draws():
    """randn (Box-Muller) and exponential_ (-log(1 - u) / rate) from the step's random numbers: mean and
    variance of 2^16 draws within 5 standard errors, finite, different for another op."""
    d = _decomp()
    n = 1 << 16
    z = d._normal(torch.tensor(3), 0, (n,), torch.float64, None)
    assert torch.isfinite(z).all()
    assert abs(float(z.mean())) < 5 / n ** 0.5 and abs(float(z.var()) - 1) < 5 * (2 / n) ** 0.5
    e = d._exponential_op(torch.tensor(3), 1, torch.empty(n, dtype=torch.float64), 2.0)
    assert torch.isfinite(e).all() and float(e.min()) >= 0
    assert abs(float(e.mean()) - 0.5) < 5 * 0.5 / n ** 0.5
    assert not torch.equal(d._normal(torch.tensor(3), 1, (n,), torch.float64, None), z)


def test_random_stream_is_uniform_and_counter_based():
    """The step's random numbers: in [0, 1), uniform (mean and variance of 2^16 draws within 5 standard
    errors), a function of (state, op, index) only, and different for another state or op."""
    d = _decomp()
    u = d._uniform(torch.tensor(3), 0, (256, 256), torch.float32, None)
    assert u.shape == (256, 256) and float(u.min()) >= 0.0 and float(u.max()) < 1.0
    n = u.numel()
    assert abs(float(u.mean()) - 0.5) < 5 * (1 / 12 / n) ** 0.5
    assert abs(float(u.var()) - 1 / 12) < 5 * (1 / 180 / n) ** 0.5  # Var(sample variance) = (mu4 - sigma^4) / n = 1/180 / n
    assert torch.equal(u, d._uniform(torch.tensor(3), 0, (256, 256), torch.float32, None))
    for other in (d._uniform(torch.tensor(4), 0, (256, 256), torch.float32, None),
                  d._uniform(torch.tensor(3), 1, (256, 256), torch.float32, None)):
        assert float((other == u).float().mean()) < 0.01
    # neighbouring elements are not correlated
    flat = u.reshape(-1)
    assert abs(float(torch.corrcoef(torch.stack([flat[:-1], flat[1:]]))[0, 1])) < 0.02


def test_random_dropout_and_bernoulli():
    d = _decomp()
    x = torch.full((64, 64), 2.0)
    out, keep = d._native_dropout(torch.tensor(0), 0, x, 0.25, True)
    assert keep.dtype == torch.bool and abs(float(keep.float().mean()) - 0.75) < 0.03
    assert torch.equal(out, torch.where(keep, x / 0.75, torch.zeros(())))
    probs = torch.rand(64, 64)
    b = d._bernoulli(torch.tensor(5), 2, probs)
    assert torch.equal(b, (d._uniform(torch.tensor(5), 2, (64, 64), torch.float32, None) < probs).float())
    assert torch.equal(d._bernoulli_p(torch.tensor(5), 2, x, probs), b)
    half = d._bernoulli_p(torch.tensor(5), 2, x)  # p left out: 0.5
    assert set(torch.unique(half).tolist()) == {0.0, 1.0} and abs(float(half.mean()) - 0.5) < 0.03


@pytest.mark.parametrize("shape, dim, descending", [((7,), 0, False), ((3, 9), -1, True), ((4, 5, 3), 1, False),
                                                    ((2, 6), 0, True)])
def test_sort_of_integers_by_rank(shape, dim, descending):
    """Integer sort (ties everywhere) by ranks equals PyTorch's stable sort, values and indices."""
    torch.manual_seed(3)
    x = torch.randint(-3, 4, shape)
    want = torch.sort(x, dim=dim, descending=descending, stable=True)
    values, indices = _decomp().sort(x, dim, descending)
    assert torch.equal(values, want.values) and torch.equal(indices, want.indices)
    values, indices = _decomp().sort_stable(x, stable=True, dim=dim, descending=descending)
    assert torch.equal(values, want.values) and torch.equal(indices, want.indices)
    assert _decomp().sort(x.double(), dim, descending) is NotImplemented  # floats: torch-mlir's


@pytest.mark.parametrize("shape, kernel, stride, padding, ceil_mode, divisor", [
    ((2, 3, 16, 16), 4, 2, 1, False, 3), ((1, 2, 7, 9), 3, 2, 1, True, 5), ((1, 1, 5, 5), 2, None, 0, True, 1)])
def test_avg_pool2d_divisor_override(shape, kernel, stride, padding, ceil_mode, divisor):
    torch.manual_seed(5)
    x = torch.randn(*shape, dtype=torch.float64)
    want = torch.nn.functional.avg_pool2d(x, kernel, stride, padding, ceil_mode, divisor_override=divisor)
    got = _decomp().avg_pool2d(x, [kernel, kernel], [stride, stride] if stride else [], [padding, padding],
                               ceil_mode, True, divisor)
    _close(got, want)
    assert _decomp().avg_pool2d(x, [kernel, kernel], [], [0, 0]) is NotImplemented  # torch-mlir's


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", [torch.float64, torch.int64])
def test_scatter_reduce(reduce, include_self, dtype):
    """Positions no element reaches keep self's value; the others reduce (with self or not)."""
    torch.manual_seed(4)
    self = torch.randint(-5, 6, (3, 7)).to(dtype)
    src = torch.randint(-5, 6, (3, 5)).to(dtype)
    index = torch.tensor([[0, 2, 2, 6, 0], [1, 1, 1, 3, 4], [6, 5, 0, 0, 0]])[:2, :4]  # covers part of self
    want = self.scatter_reduce(1, index, src, reduce, include_self=include_self)
    got = _decomp().scatter_reduce(self, 1, index, src, reduce, include_self)
    assert got.dtype == want.dtype and torch.equal(got, want), (got, want)
    index0 = index % 3
    want0 = self.scatter_reduce(0, index0, src, reduce, include_self=include_self)
    assert torch.equal(_decomp().scatter_reduce(self, 0, index0, src, reduce, include_self), want0)


@pytest.mark.parametrize("op", ["cummax", "cummin"])
@pytest.mark.parametrize("x, dim", [(torch.tensor([1.0, 3, 3, 2, float("nan"), 5, float("nan"), 1]), 0),
                                    (torch.tensor([[3, 1, 1, 2], [0, 0, 4, -1]]), 1),
                                    (torch.tensor([[3, 1], [1, 2], [1, 2]]), 0)])
def test_cumulative_extremes(op, x, dim):
    """Values and indices (ties and NaNs: the latest index) equal ATen's."""
    want = getattr(torch, op)(x, dim)
    values, indices = getattr(_decomp(), op)(x, dim)
    assert torch.equal(values.nan_to_num(7.0), want.values.nan_to_num(7.0)) and torch.equal(indices, want.indices)


@pytest.mark.parametrize("x, dim", [(torch.tensor([[0.5, -2.0, 0.0, 3.0, 1.5], [1.1, 0.9, -1.0, 2.0, 0.0]]), 1),
                                    (torch.tensor([[2, -1], [3, 0], [-2, 5]]), 0)])
def test_cumprod_and_integer_relu(x, dim):
    """cumprod (zeros, negatives; its gradient through the triangle too) and relu of integers."""
    _close(_decomp().cumprod(x.double(), dim), torch.cumprod(x.double(), dim))
    assert torch.equal(_decomp().cumprod(x, dim), torch.cumprod(x, dim))
    if x.is_floating_point():
        a = x.double().requires_grad_(True)
        g = torch.randn(x.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
        (want,) = torch.autograd.grad(torch.cumprod(a, dim), a, g)
        (got,) = torch.autograd.grad(_decomp().cumprod(a, dim), a, g)
        _close(got, want)
    else:
        assert torch.equal(_decomp().relu(x), torch.relu(x))
    assert _decomp().relu(x.double()) is NotImplemented  # floats: torch-mlir's


def test_integer_power():
    """``pow`` of integers (torch-mlir refuses all three overloads) equals ATen's: powers that wrap modulo 2^64
    and 2^32 (a hash's ``31 ** arange(20)``), zero and negative exponents and bases, uint8, mixed types; a
    float result is left to torch-mlir."""
    d = _decomp()
    gen = torch.Generator().manual_seed(0)
    bases = torch.tensor([-3, -2, -1, 0, 1, 2, 3, 7, 31, 1000003])
    exponents = torch.arange(-2, 40)
    for dtype in (torch.int64, torch.int32, torch.int16):
        b, e = bases.to(dtype)[:, None], exponents.to(dtype)[None, :]
        assert torch.equal(d.pow_tensor_tensor(b, e), torch.pow(b, e)), dtype
        assert torch.equal(d.pow_scalar(31, e.clamp(min=0)), torch.pow(31, e.clamp(min=0))), dtype
        for k in (0, 1, 2, 5, 13, 40):
            assert torch.equal(d.pow_tensor_scalar(b, k), torch.pow(b, k)), (dtype, k)
    x = torch.randint(0, 256, (6, 7), dtype=torch.uint8, generator=gen)
    y = torch.randint(0, 9, (6, 7), dtype=torch.uint8, generator=gen)
    assert torch.equal(d.pow_tensor_tensor(x, y), torch.pow(x, y))
    i32, i64 = torch.tensor([3, -5], dtype=torch.int32), torch.tensor([21, 3])
    assert torch.equal(d.pow_tensor_tensor(i32, i64), torch.pow(i32, i64))  # int64 result
    assert d.pow_tensor_tensor(i32, torch.tensor([0.5, 2.0])) is NotImplemented
    assert d.pow_tensor_scalar(i32, 0.5) is NotImplemented and d.pow_scalar(2.0, i64) is NotImplemented


def test_integer_floor_division_and_remainder():
    """Integer ``//`` and ``%`` (rounded toward -inf) equal ATen's for every sign and for dividends whose
    product with the divisor wraps (torch-mlir's own lowering tests the signs on that product); floats and
    other roundings are left to torch-mlir."""
    d = _decomp()
    a = torch.tensor([-(1 << 62) - 12345, -7, -6, -1, 0, 1, 6, 7, (1 << 62) + 98765, 9 << 58])[:, None]
    for b in (torch.tensor([61, -61, 5, -5, 1, -1, 7]), 61, -7):
        assert torch.equal(d.remainder(a, b), torch.remainder(a, b)), b
        assert torch.equal(d.div_mode(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="floor")), b
    small = a.to(torch.int32).clamp(-1000, 1000)
    assert torch.equal(d.remainder(small, 7), torch.remainder(small, 7))
    assert d.remainder(a.double(), 3) is NotImplemented
    assert d.div_mode(a, 3, rounding_mode="trunc") is NotImplemented and d.div_mode(a, 3) is NotImplemented


@pytest.mark.parametrize("shape, indices", [
    ((3, 5, 4), lambda: [torch.arange(3)[:, None], torch.tensor([[0, 2, 4]])]),        # h[rows[:, None], cols] = v
    ((3, 5, 4), lambda: [None, torch.tensor([1, 3]), torch.tensor([[0], [3]])]),       # after a slice, two indices
    ((4, 6), lambda: [None, torch.tensor([5, 0, 2])])])                               # t[:, idx] = v
def test_index_put_without_accumulation(shape, indices):
    """Non-accumulating writes through several index tensors, or after a slice, as one flat index moved
    first (indices unique: PyTorch leaves the order of repeated writes open)."""
    torch.manual_seed(2)
    self = torch.randn(*shape, dtype=torch.float64)
    idx = indices()
    values = torch.randn(aten.index.Tensor(self, idx).shape, dtype=torch.float64)
    _close(_decomp().index_put(self, idx, values, False), aten.index_put.default(self, idx, values, False))


@pytest.mark.parametrize("name, tol32", [("i0", 5e-7), ("i0e", 5e-7), ("i1", 1.5e-6), ("i1e", 1.5e-6)])
def test_modified_bessel_functions(name, tol32):
    """Cephes' Chebyshev expansions as ATen evaluates them: float64 to 1e-14 relative on both sides of 0 and
    of the [0, 8] / (8, inf) split, float32 within a few float32 roundings of ATen's float32."""
    d = _decomp()
    ours, ref = getattr(d, name), getattr(torch.special, name)
    x = torch.cat([torch.linspace(-30, 30, 6001), torch.tensor([0.0, 8.0, -8.0, 8.0001, 1e-6])]).double()
    assert float(((ours(x) - ref(x)).abs() / ref(x).abs().clamp(min=1e-300)).max()) < 1e-14
    x32 = x.float()
    assert float(((ours(x32) - ref(x32)).abs() / ref(x32).abs().clamp(min=1e-30)).max()) < tol32


def test_erfcx_log_ndtr_ndtri():
    """``erfcx`` and ``log_ndtr`` to the fit's 1.2e-7 relative (float32's precision; ATen's float64 uses the
    Faddeeva tables) far into both tails; ``ndtri`` as ATen's Cephes code to 1e-14 in float64, with +-inf at
    0 / 1 and NaN outside [0, 1]."""
    d = _decomp()
    x = torch.cat([torch.linspace(-9, 60, 7001), torch.tensor([1e3, 1e6, 0.5, -0.5, 0.0])]).double()
    assert float(((d.erfcx(x) - torch.special.erfcx(x)).abs() / torch.special.erfcx(x)).max()) < 1.2e-7
    want = torch.special.log_ndtr(x)
    assert float(((d.log_ndtr(x) - want).abs() / want.abs().clamp(min=1e-300)).max()) < 1.2e-7
    y = torch.cat([torch.linspace(0, 1, 5001), torch.tensor([1e-10, 1e-20, 1e-300, 1 - 1e-7, -0.1, 1.1])]).double()
    got, want = d.ndtri(y), torch.special.ndtri(y)
    finite = torch.isfinite(want)
    assert float(((got - want).abs() / want.abs().clamp(min=1e-3))[finite].max()) < 1e-14
    assert torch.equal(got[~finite].nan_to_num(7.0), want[~finite].nan_to_num(7.0))


def test_searchsorted_and_histc():
    """``searchsorted`` (1-D and batched boundaries, left / right, ``sorter``, a scalar, int32 results) and
    ``histc`` (a range, ``max`` itself, values outside it, the data's own range) equal ATen's."""
    d = _decomp()
    torch.manual_seed(3)
    b = torch.tensor([-1.0, -0.2, 0.1, 0.1, 0.5], dtype=torch.float64)
    v = torch.cat([torch.randn(3, 7, dtype=torch.float64), b.expand(3, 5)], 1)
    for right in (False, True):
        assert torch.equal(d.searchsorted(b, v, right=right), torch.searchsorted(b, v, right=right))
        seq = torch.sort(torch.randn(3, 6, dtype=torch.float64), -1).values
        assert torch.equal(d.searchsorted(seq, v, right=right), torch.searchsorted(seq, v, right=right))
    perm = torch.tensor([4, 0, 2, 1, 3])
    shuffled = b[perm]
    sorter = torch.argsort(shuffled, stable=True)
    assert torch.equal(d.searchsorted(shuffled, v, side="right", sorter=sorter),
                       torch.searchsorted(shuffled, v, side="right", sorter=sorter))
    assert torch.equal(d.searchsorted(b, 0.1), torch.searchsorted(b, 0.1))
    got = d.searchsorted(b, v, out_int32=True)
    assert got.dtype == torch.int32 and torch.equal(got, torch.searchsorted(b, v, out_int32=True))
    x = torch.cat([torch.randn(200, dtype=torch.float64) * 2, torch.tensor([-2.0, 2.0, 3.0, -5.0], dtype=torch.float64)])
    for bins, low, high in ((8, -2, 2), (5, 0, 1), (7, 0, 0)):
        assert torch.equal(d.histc(x, bins, low, high), torch.histc(x, bins, low, high))
    assert torch.equal(d.histc(torch.ones(4), 3), torch.histc(torch.ones(4), 3))


def test_nonzero_static_index_tables_and_signs():
    """``nonzero_static`` padded with ``fill_value`` or cut to ``size``; ``tril_indices`` / ``triu_indices``
    constants; ``signbit`` and ``copysign`` at zeros of both signs."""
    d = _decomp()
    x = torch.tensor([[0, 3, 0], [1, 0, 2]])
    for size, fill in ((2, -1), (3, -1), (6, 9), (9, -1)):
        assert torch.equal(d.nonzero_static_op(x, size=size, fill_value=fill),
                           torch.nonzero_static(x, size=size, fill_value=fill)), (size, fill)
    for args in ((4, 4), (3, 5, 1), (5, 3, -2), (2, 2, -5)):
        assert torch.equal(d._index_table(torch.tril_indices)(*args), torch.tril_indices(*args))
        assert torch.equal(d._index_table(torch.triu_indices)(*args), torch.triu_indices(*args))
    s = torch.tensor([-2.0, -0.0, 0.0, 3.0, -math.inf, math.inf])
    assert torch.equal(d.signbit(s), torch.signbit(s))
    assert torch.equal(d.signbit(torch.tensor([-3, 0, 4])), torch.signbit(torch.tensor([-3, 0, 4])))
    a = torch.tensor([1.5, -2.0, 0.0, -0.0, 4.0, -1.0])
    for other in (s, -0.0, 2.0):
        got, want = d.copysign(a, other), torch.copysign(a, other)
        assert torch.equal(got, want) and torch.equal(torch.signbit(got), torch.signbit(want)), other
    assert torch.equal(d.copysign(torch.tensor([3, -4]), s[:2]), torch.copysign(torch.tensor([3, -4]), s[:2]))


@pytest.mark.parametrize("shape", [(5, 6), (6,)])
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_margin_loss_backward(shape, reduction):
    """``multi_margin_loss_backward`` (p 1 / 2, margins, class weights) and ``multilabel_margin_loss_backward``
    (targets cut at the first -1, repeated targets) equal ATen's, batched and single."""
    d = _decomp()
    torch.manual_seed(0)
    x = torch.randn(*shape, dtype=torch.float64)
    g = torch.randn((shape[0],) if reduction == 0 and len(shape) == 2 else (), dtype=torch.float64)
    y = torch.randint(0, 6, (shape[0],) if len(shape) == 2 else ())
    for p, margin, weight in ((1, 1.0, None), (2, 0.7, torch.rand(6, dtype=torch.float64)), (1, 2.0, torch.rand(6).double())):
        _close(d.multi_margin_loss_backward(g, x, y, p, margin, weight, reduction),
               aten.multi_margin_loss_backward(g, x, y, p, margin, weight, reduction))
    t = torch.tensor([[1, 3, -1, 0, 0, 2], [4, 4, 0, -1, 1, 1], [-1, 2, 2, 2, 2, 2], [0, 1, 2, 3, 4, 5],
                      [5, -1, -1, 0, 0, 0]])
    t = t if len(shape) == 2 else t[0]
    _, is_target = aten.multilabel_margin_loss_forward(x, t, reduction)
    _close(d.multilabel_margin_loss_backward(g, x, t, reduction, is_target),
           aten.multilabel_margin_loss_backward(g, x, t, reduction, is_target))


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0])
def test_embedding_renorm(norm_type):
    """The rows looked up (repeats once), and only those over ``max_norm``, scaled as ATen's in-place op."""
    torch.manual_seed(4)
    w = torch.randn(7, 5, dtype=torch.float64)
    w[2] *= 0.1  # looked up, under max_norm: kept
    ids = torch.tensor([[1, 2, 2], [6, 1, 0]])
    want = w.clone()
    aten.embedding_renorm_(want, ids, 1.5, norm_type)
    _close(_decomp().embedding_renorm(w, ids, 1.5, norm_type), want)


@pytest.mark.parametrize("shape", [(4, 4), (3, 6, 4), (2, 4, 6)])
def test_qr_and_householder_product(shape):
    """``qr`` (reduced, complete, r) equal to LAPACK's through ATen, signs included, and a degenerate column
    (no reflection); its gradient autograd's through ATen's formula; ``householder_product`` and its
    gradient."""
    d = _decomp()
    torch.manual_seed(1)
    A = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    for mode in ("reduced", "complete", "r"):
        got, want = d.qr(torch.linalg.qr, A, mode), torch.linalg.qr(A, mode)
        _close(got[1], want[1])
        if mode != "r":
            _close(got[0], want[0])
    q, r = d.qr(torch.linalg.qr, A)
    gq, gr = torch.randn_like(q), torch.randn_like(r)
    ours = torch.autograd.grad((q * gq).sum() + (r * gr).sum(), A)[0]
    q, r = torch.linalg.qr(A)
    _close(ours, torch.autograd.grad((q * gq).sum() + (r * gr).sum(), A)[0], tol=1e-10)
    degenerate = torch.zeros(4, 3, dtype=torch.float64)
    degenerate[0, 0], degenerate[1, 1] = 2.0, -1.0
    _close(d.qr(torch.linalg.qr, degenerate), torch.linalg.qr(degenerate))
    a = torch.randn(6, 4, dtype=torch.float64, requires_grad=True)
    tau = torch.rand(4, dtype=torch.float64, requires_grad=True)
    g = torch.randn(6, 4, dtype=torch.float64)
    got = d.householder_product(torch.linalg.householder_product, a, tau)
    want = torch.linalg.householder_product(a, tau)
    _close(got, want)
    _close(torch.autograd.grad((got * g).sum(), (a, tau)), torch.autograd.grad((want * g).sum(), (a, tau)), tol=1e-10)


@pytest.mark.parametrize("scale", [0.0, 0.01, 1.0, 5.0, 40.0])
def test_matrix_exp(scale):
    """Scaling and squaring: float64 to 1e-12 relative (of the largest entry) from a zero matrix to 1-norms
    in the hundreds, skew-symmetric (orthogonal) ones too; float32 within 2e-5 of float64 where ATen's own
    float32 is within 1.5e-5."""
    d = _decomp()
    torch.manual_seed(2)
    A = torch.randn(3, 5, 5, dtype=torch.float64) * scale
    for m in (A, A - A.mT):
        want = torch.linalg.matrix_exp(m)
        assert float((d.matrix_exp(m) - want).abs().max() / want.abs().max()) < 1e-12
    skew = A - A.mT
    want = torch.linalg.matrix_exp(skew)
    assert float((d.matrix_exp(skew.float()).double() - want).abs().max()) < 2e-5


@pytest.mark.parametrize("quant_min, quant_max", [(0, 255), (-128, 127)])
def test_fake_quantize(quant_min, quant_max):
    """QAT's fake quantization (per tensor, per channel, tensor qparams with the enable flag) and LSQ's
    learnable form with its gradients, against ATen: zero points rounded half to even forward and ``z + 0.5``
    truncated backward (12.5, -3.7, -2.5), out of range both ways."""
    d = _decomp()
    torch.manual_seed(0)
    x = torch.randn(4, 6, 5) * 3
    g = torch.randn_like(x)

    def same(got, want, tol=1e-6):  # the scale and zero-point gradients are float32 sums: 1e-4
        for a, b in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert a.dtype == b.dtype
            assert torch.equal(a, b) if b.dtype == torch.bool else \
                float((a.double() - b.double()).abs().max()) <= tol * max(1.0, float(b.abs().max()))

    same(d.fake_quantize_per_tensor_cachemask(x, 0.05, 10, quant_min, quant_max),
         aten.fake_quantize_per_tensor_affine_cachemask(x, 0.05, 10, quant_min, quant_max))
    for enabled in (0, 1):
        args = (x, torch.tensor([0.05]), torch.tensor([10], dtype=torch.int32), torch.tensor([enabled]), quant_min, quant_max)
        same(d.fake_quantize_tensor_qparams_cachemask(*args), aten._fake_quantize_per_tensor_affine_cachemask_tensor_qparams(*args))
    scales = torch.rand(6) * 0.1 + 0.01
    zc = torch.randint(quant_min, quant_max, (6,), dtype=torch.int32)
    same(d.fake_quantize_per_channel_cachemask(x, scales, zc, 1, quant_min, quant_max),
         aten.fake_quantize_per_channel_affine_cachemask(x, scales, zc, 1, quant_min, quant_max))
    for zp in (0.3, 12.5, -3.7, -2.5, 300.0):
        scale, z = torch.tensor([0.05]), torch.tensor([zp])
        same(d.fake_quantize_learnable_per_tensor(x, scale, z, quant_min, quant_max, 0.7),
             aten._fake_quantize_learnable_per_tensor_affine(x, scale, z, quant_min, quant_max, 0.7))
        same(d.fake_quantize_learnable_per_tensor_backward(g, x, scale, z, quant_min, quant_max, 0.7),
             aten._fake_quantize_learnable_per_tensor_affine_backward(g, x, scale, z, quant_min, quant_max, 0.7), 1e-4)
        zs = torch.randn(6) * 5 + zp
        same(d.fake_quantize_learnable_per_channel(x, scales, zs, 1, quant_min, quant_max, 0.7),
             aten._fake_quantize_learnable_per_channel_affine(x, scales, zs, 1, quant_min, quant_max, 0.7))
        same(d.fake_quantize_learnable_per_channel_backward(g, x, scales, zs, 1, quant_min, quant_max, 0.7),
             aten._fake_quantize_learnable_per_channel_affine_backward(g, x, scales, zs, 1, quant_min, quant_max, 0.7), 1e-4)


@pytest.mark.parametrize("per_row, symmetric, quant_min, quant_max",
                         [(False, False, 0, 127), (False, True, -128, 127), (True, True, -128, 127),
                          (True, False, 0, 255)])
def test_fused_moving_average_observer_fake_quantize(per_row, symmetric, quant_min, quant_max):
    """``_fused_moving_avg_obs_fq_helper`` (QAT's default ``FusedMovingAvgObsFakeQuantize``) against ATen, bit
    for bit: every output and state over inputs of magnitude 1e-6 (the smallest scale), 1 and 30, all positive,
    all negative and all zero, from infinite and from finite running ranges, with the observer and the fake
    quantization each on and off."""
    d = _decomp()
    torch.manual_seed(0)
    n = 4 if per_row else 1
    checked = 0
    for trial in range(48):
        x = torch.randn(4, 3, 2) * (1e-6, 1.0, 30.0)[trial % 3]
        x = (x, x.abs(), -x.abs(), torch.zeros_like(x))[(trial // 3) % 4]
        shape = (n,) if per_row else ()
        start = trial // 12 % 2 == 0
        low = torch.full(shape, math.inf) if start else torch.randn(shape) - 1
        high = torch.full(shape, -math.inf) if start else torch.randn(shape) + 1
        observe, quantize = torch.tensor([int(trial % 5 != 4)]), torch.tensor([int(trial % 7 != 6)])
        if start and not observe.item():
            continue  # ATen refuses an empty range (min > max)
        state = [low, high, torch.ones(n), torch.zeros(n, dtype=torch.int32)]
        args = (0.01, quant_min, quant_max, 0, per_row, symmetric)
        want_state = [t.clone() for t in state]
        want = aten._fused_moving_avg_obs_fq_helper(x, observe, quantize, *want_state, *args)
        got = d.fused_moving_avg_obs_fq_helper(x, observe, quantize, *[t.clone() for t in state], *args)
        for a, b in zip(got, (*want, *want_state)):
            assert a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b), trial
        checked += 1
    assert checked > 40


def _spectral_cases(n):
    """Symmetric test matrices [3, n, n] in float64: random, positive definite, eigenvalues 0 / 1 / 2 of high
    multiplicity, and nearly diagonal."""
    torch.manual_seed(n)
    b = torch.randn(3, n, n, dtype=torch.float64)
    q = torch.linalg.qr(b)[0]
    return (b + b.mT, b @ b.mT / n + 1e-3 * torch.eye(n, dtype=torch.float64),
            q @ torch.diag_embed(torch.randint(0, 3, (3, n)).double()) @ q.mT,
            torch.diag_embed(torch.randn(3, n, dtype=torch.float64)) + 1e-6 * (b + b.mT))


@pytest.mark.parametrize("n", [1, 2, 5, 16, 40])
def test_eigh(n):
    """``_linalg_eigh`` by parallel cyclic Jacobi against LAPACK: float64 eigenvalues within 1e-11 of the
    largest, ``V diag(w) V^T`` and ``V^T V`` to 1e-10 (1e-8 for eigenvalues of high multiplicity, which converge
    linearly); from float32 input (computed in float64) within 1e-7, where LAPACK's own float32 result is
    2e-7..1e-6 off; the triangle ``UPLO`` names is the only one read."""
    d = _decomp()
    eye = torch.eye(n, dtype=torch.float64)
    for kind, a in enumerate(_spectral_cases(n)):
        want = torch.linalg.eigvalsh(a)
        size = float(want.abs().max())
        for dtype, tol in ((torch.float64, 1e-9 if kind == 2 else 1e-11), (torch.float32, 1e-7)):
            w, v = d.linalg_eigh(a.to(dtype))
            assert w.dtype == v.dtype == dtype
            w, v = w.double(), v.double()
            assert float((w - want).abs().max()) <= tol * size
            assert float((v @ torch.diag_embed(w) @ v.mT - a).abs().max()) <= tol * 10 * size
            assert float((v.mT @ v - eye).abs().max()) <= tol * 10
        upper = torch.triu(a) + 5 * torch.tril(torch.ones_like(a), -1)  # garbage below: not read
        assert float((d.linalg_eigh(upper, "U")[0] - want).abs().max()) <= 1e-11 * size
        assert d.linalg_eigh(a, "L", False)[1].numel() == 0


@pytest.mark.parametrize("m, n", [(1, 1), (4, 3), (3, 4), (20, 7), (7, 20), (64, 33), (40, 64)])
def test_svd(m, n):
    """``_linalg_svd`` by one-sided Jacobi against LAPACK: float64 singular values within 1e-13 of the largest,
    graded columns (1 .. 1e-5) to 1e-13 relative each, rank-deficient input with ``U S V^T`` exact to 1e-13 and
    orthonormal ``U`` / ``V`` columns; float32 input within 2e-7; ``compute_uv=False`` returns the values only;
    ``full_matrices`` of a non-square matrix falls back (NotImplemented)."""
    d = _decomp()
    torch.manual_seed(m * 100 + n)
    k = min(m, n)
    for kind in range(3):
        a = torch.randn(2, m, n, dtype=torch.float64)
        if kind == 1:
            a = a * torch.logspace(0, -5, n, dtype=torch.float64)
        if kind == 2 and k > 1:
            a[..., -1] = a[..., 0]
        want = torch.linalg.svdvals(a)
        u, s, vh = d.linalg_svd(a)
        assert u.shape == (2, m, k) and s.shape == (2, k) and vh.shape == (2, k, n)
        rel = (s - want).abs() / (want if kind == 1 else want[..., :1])
        assert float(rel.max()) <= 1e-12
        assert float((u @ torch.diag_embed(s) @ vh - a).abs().max()) <= 1e-13 * float(want.max())
        if kind != 2:
            eye = torch.eye(k, dtype=torch.float64)
            assert float((u.mT @ u - eye).abs().max()) <= 1e-12 and float((vh @ vh.mT - eye).abs().max()) <= 1e-12
        s32 = d.linalg_svd(a.float(), compute_uv=False)[1]
        assert s32.dtype == torch.float32
        assert float(((s32.double() - want) / want[..., :1]).abs().max()) <= 2e-7
    if m != n:
        assert d.linalg_svd(a, True) is NotImplemented


def test_pinv_and_lstsq():
    """``linalg_pinv`` (tolerances, ``hermitian``) and ``linalg_lstsq`` (tall, wide, batched, rank deficient: the
    minimum-norm solution and the rank ``gelsy`` reports, no residuals or singular values) against ATen, on
    ATen's own factorizations (the Jacobi ones are tested above), float64."""
    d = _decomp()
    torch.manual_seed(0)
    for shape in ((5, 5), (7, 4), (4, 7), (2, 6, 6)):
        a = torch.randn(*shape, dtype=torch.float64)
        a[..., -1] = a[..., 0]
        for kw in ({}, {"atol": torch.tensor(0.5, dtype=torch.float64)}, {"rtol": torch.tensor(0.3, dtype=torch.float64)}):
            assert float((d.linalg_pinv(a, **kw) - torch.linalg.pinv(a, **kw)).abs().max()) < 1e-12
        if shape[-1] == shape[-2]:
            h = a + a.mT
            assert float((d.linalg_pinv(h, hermitian=True) - torch.linalg.pinv(h, hermitian=True)).abs().max()) < 1e-12
        b = torch.randn(*shape[:-1], 2, dtype=torch.float64)
        got, want = d.linalg_lstsq(a, b), torch.linalg.lstsq(a, b)
        assert float((got[0] - want[0]).abs().max()) < 1e-12
        assert torch.equal(got[2], want[2])
        assert [x.shape for x in got] == [x.shape for x in want]
    assert d.linalg_lstsq(a, b, driver="gelsd") is NotImplemented


def test_roi_align():
    """``torchvision.ops.roi_align`` with a fixed sampling grid against torchvision's CPU kernel, forward and the
    input's gradient, in float64: boxes inside, across the border, past it (samples outside ``[-1, size]`` count
    0) and thinner than a bin, ``aligned`` both ways, two scales, 1-3 samples per bin; an adaptive grid is left
    to the operator."""
    torchvision = pytest.importorskip("torchvision")  # noqa: F841 (registers torch.ops.torchvision)
    d = _decomp()
    torch.manual_seed(0)
    x = torch.randn(2, 3, 9, 11, dtype=torch.float64, requires_grad=True)
    rois = torch.tensor([[0, 1.0, 1.5, 6.0, 7.0], [1, -3.0, -2.0, 4.0, 3.0], [0, 5.0, 2.0, 14.0, 12.0],
                         [1, 2.2, 3.3, 2.4, 3.9], [0, -8.0, -8.0, -5.0, -5.0]], dtype=torch.float64)
    for aligned in (False, True):
        for scale in (1.0, 0.5):
            for ratio in (1, 2, 3):
                want = torch.ops.torchvision.roi_align(x, rois, scale, 3, 2, ratio, aligned)
                got = d.roi_align(None, x, rois, scale, 3, 2, ratio, aligned)
                assert float((got - want).abs().max()) < 1e-14
                g = torch.randn_like(want)
                assert float((torch.autograd.grad(got, x, g)[0] - torch.autograd.grad(want, x, g)[0]).abs().max()) < 1e-14
    assert d.roi_align(None, x, rois, 1.0, 3, 2, -1, False) is NotImplemented


def test_deform_conv2d():
    """``torchvision.ops.deform_conv2d`` against torchvision's CPU kernel in float64, forward and the gradients of
    the input, the weight, the offsets, the mask and the bias: DCN v1 and v2 (a mask), weight groups and offset
    groups, stride, padding and dilation, offsets that take samples past the border (a corner outside counts 0,
    a point past -1 / the size 0 altogether) and onto exact integer positions, zero offsets (a point at exactly
    -1 is 0, but its offsets' gradient is its one corner's inside, as the kernel's)."""
    torchvision = pytest.importorskip("torchvision")  # noqa: F841 (registers torch.ops.torchvision)
    d = _decomp()
    torch.manual_seed(0)
    for groups, offset_groups, stride, pad, dilation, use_mask in ((1, 1, 1, 0, 1, False), (2, 2, 2, 1, 1, True),
                                                                   (1, 4, 1, 2, 2, True), (2, 1, (2, 1), (1, 0), 1, True),
                                                                   (1, 2, 1, 1, 1, True)):
        stride_h, stride_w = stride if isinstance(stride, tuple) else (stride, stride)
        pad_h, pad_w = pad if isinstance(pad, tuple) else (pad, pad)
        x = torch.randn(2, 4, 7, 9, dtype=torch.float64, requires_grad=True)
        w = torch.randn(6, 4 // groups, 3, 3, dtype=torch.float64, requires_grad=True)
        out_h = (7 + 2 * pad_h - dilation * 2 - 1) // stride_h + 1
        out_w = (9 + 2 * pad_w - dilation * 2 - 1) // stride_w + 1
        offset = torch.randn(2, 2 * offset_groups * 9, out_h, out_w, dtype=torch.float64) * 3
        offset[0, :4, 0, 0] = torch.tensor([1.0, -2.0, 0.0, 3.0], dtype=torch.float64)  # integer positions
        if offset_groups == 2:  # a zero-initialised offset branch: the border taps of the padding at exactly -1
            offset = torch.zeros_like(offset)
        offset.requires_grad_(True)
        mask = torch.rand(2, offset_groups * 9, out_h, out_w, dtype=torch.float64, requires_grad=True)
        bias = torch.randn(6, dtype=torch.float64, requires_grad=True)
        args = (stride_h, stride_w, pad_h, pad_w, dilation, dilation, groups, offset_groups, use_mask)
        used_mask = mask if use_mask else torch.zeros(2, 1, dtype=torch.float64)
        want = torch.ops.torchvision.deform_conv2d(x, w, offset, used_mask, bias, *args)
        got = d.deform_conv2d(None, x, w, offset, used_mask, bias, *args)
        assert float((got - want).abs().max()) < 1e-12
        g = torch.randn_like(want)
        leaves = (x, w, offset, bias) + ((mask,) if use_mask else ())
        for a, b in zip(torch.autograd.grad(got, leaves, g), torch.autograd.grad(want, leaves, g)):
            assert float((a - b).abs().max()) < 1e-11 * max(1.0, float(b.abs().max()))


def test_fractional_max_pool():
    """``F.fractional_max_pool2d`` / ``3d`` with given samples against ATen, float32 and float64: outputs, indices
    and the input's gradient bit for bit (the window starts in the input's type as ATen's, the 2-D kernel's
    sample 0 for the width), batched and not, square and rectangular windows, one output row."""
    d = _decomp()
    torch.manual_seed(0)
    for dims, shape, kernel, out in ((2, (2, 3, 11, 9), (3, 2), (5, 4)), (2, (3, 10, 10), 2, (5, 5)),
                                     (3, (2, 2, 7, 8, 9), (2, 3, 2), (3, 4, 5)), (2, (2, 3, 11, 9), 3, (1, 6))):
        f = (torch.nn.functional.fractional_max_pool2d_with_indices if dims == 2
             else torch.nn.functional.fractional_max_pool3d_with_indices)
        for dtype in (torch.float32, torch.float64):
            x = torch.randn(*shape, dtype=dtype, requires_grad=True)
            samples = torch.rand(1 if len(shape) == dims + 1 else shape[0], shape[-dims - 1], dims, dtype=dtype)
            want, want_indices = f(x, kernel, output_size=out, _random_samples=samples)
            got, indices = d.fractional_max_pool(f, x, kernel, out, None, True, samples, dims=dims)
            assert torch.equal(got, want) and torch.equal(indices, want_indices)
            g = torch.randn_like(want)
            assert torch.equal(torch.autograd.grad(got, x, g)[0], torch.autograd.grad(want, x, g)[0])


def test_true_division_of_integers():
    """``/`` of integer and boolean tensors in the result's float type, as ATen; floats are left to torch-mlir."""
    d = _decomp()
    b = torch.tensor([0, 7, 128, 255], dtype=torch.uint8)
    for a, other in ((b, 255.0), (b, torch.tensor(3.0, dtype=torch.float64)), (torch.tensor([7, -3]), torch.tensor([2, 4])),
                     (torch.tensor([True, False]), 2)):
        got, want = d.true_divide(a, other), torch.div(a, other)
        assert got.dtype == want.dtype and torch.equal(got, want)
    assert d.true_divide(torch.ones(2), 2.0) is NotImplemented


def test_mode():
    """``torch.mode`` along each dimension, with ties between counts (the smallest value) and repeats of the
    mode (its last position), integers and floats, keepdim."""
    d = _decomp()
    torch.manual_seed(5)
    for x in (torch.randint(0, 4, (3, 7, 5)), torch.randint(0, 3, (4, 6)).double() - 1.5,
              torch.tensor([[3.0, 1.0, 3.0, 1.0, 2.0], [5.0, 5.0, 4.0, 4.0, 4.0], [2.0, 2.0, 2.0, 2.0, 2.0]])):
        for dim in range(x.dim()):
            for keepdim in (False, True):
                got, want = d.mode(x, dim, keepdim), torch.mode(x, dim, keepdim)
                assert torch.equal(got[0], want.values) and torch.equal(got[1], want.indices), (x, dim)


def test_adaptive_avg_pool3d_backward_and_pdist():
    """``_adaptive_avg_pool3d_backward`` through the separable averaging matrices (uneven windows, to 1 x 1 x 1,
    an unbatched input); ``pdist`` and its gradient (p = 2, 1, 3, repeated rows) as ATen's."""
    d = _decomp()
    torch.manual_seed(6)
    for shape, out in (((2, 3, 4, 5, 6), (2, 3, 4)), ((1, 2, 5, 7, 3), (3, 4, 2)), ((2, 1, 2, 3, 4), (1, 1, 1)),
                       ((3, 4, 5, 6), (2, 3, 5))):
        x = torch.randn(*shape, dtype=torch.float64)
        g = torch.randn_like(aten._adaptive_avg_pool3d(x, out))
        _close(d.adaptive_avg_pool3d_backward(g, x), aten._adaptive_avg_pool3d_backward(g, x))
    for p in (2.0, 1.0, 3.0):
        x = torch.randn(5, 4, dtype=torch.float64)
        x[3] = x[1]
        x.requires_grad_(True)
        got, want = d.pdist(torch.pdist, x, p), torch.pdist(x, p)
        _close(got, want)
        g = torch.randn_like(want)
        _close(torch.autograd.grad((got * g).sum(), x)[0], torch.autograd.grad((want * g).sum(), x)[0], tol=1e-10)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_3d(mode, padding, align_corners):
    """``grid_sample`` of a volume (``grid_sampler_3d``) with its gradients for the input and the grid (zero for
    nearest, but defined), points outside the volume included."""
    import torch.nn.functional as F

    d = _decomp()
    torch.manual_seed(0)
    a = torch.randn(2, 3, 4, 5, 6, dtype=torch.float64, requires_grad=True)
    grid = (torch.rand(2, 3, 2, 4, 3, dtype=torch.float64) * 2.6 - 1.3).requires_grad_(True)
    got = d.grid_sample(F.grid_sample, a, grid, mode, padding, align_corners)
    want = F.grid_sample(a, grid, mode, padding, align_corners)
    _close(got, want)
    g = torch.randn_like(want)
    _close(torch.autograd.grad((got * g).sum(), (a, grid)), torch.autograd.grad((want * g).sum(), (a, grid)),
           tol=1e-10)
