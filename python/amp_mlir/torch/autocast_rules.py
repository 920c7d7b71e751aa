"""PyTorch's CUDA autocast rules, run on the CPU.

The reference for amp-mlir's precision decisions is PyTorch's CUDA autocast (the lists in
``aten/src/ATen/autocast_mode.h``, copied below from the torch this module runs with). There is no GPU
on the machines that build amp-mlir, and CPU autocast has other lists (it keeps softmax, sum and
layer_norm in whatever type they get, and runs more ops in low precision). So
:func:`cuda_autocast_rules` re-registers the ``AutocastCPU`` dispatch key's kernels with CUDA's
policies, for as long as the context lasts:

* ``lower_precision_fp`` ops (matmuls, convolutions, linear, ...) cast their floating tensors to the low
  type;
* ``fp32`` ops (transcendentals, norms, losses) cast them to float32;
* ``fp32_set_opt_dtype`` ops (softmax, log_softmax, sum, prod, cumsum, ...) get ``dtype=float32`` when
  their first argument is an eligible floating tensor and no dtype was given (a given dtype is kept:
  that is why ``cross_entropy``'s ``log_softmax(x, 1, x.dtype)`` runs in float16 on CUDA);
* ``promote`` ops cast to the widest floating type among their arguments;
* every other op, including the ones only CPU autocast lists, falls through and runs in whatever type
  its inputs have.

Eligible tensors are floating tensors other than float64, as in autocast_mode.h's ``is_eligible``.
Casts go through ``Tensor.to`` below the autocast key, so autograd records them exactly as it records
CUDA autocast's casts, and the backward pass runs in the dtypes the forward produced. Everything runs
with CPU kernels, which exist in float16 and bfloat16 for the ops these lists name.
"""

from __future__ import annotations

import contextlib
import warnings

import torch
from torch.library import Library, fallthrough_kernel
from torch.utils._pytree import tree_leaves

__all__ = ["LOWER_PRECISION_FP", "FP32", "FP32_SET_OPT_DTYPE", "PROMOTE", "cuda_autocast_rules", "cuda_category"]

# aten/src/ATen/autocast_mode.h: AT_FORALL_LOWER_PRECISION_FP, AT_FORALL_FP32,
# AT_FORALL_FP32_SET_OPT_DTYPE, AT_FORALL_PROMOTE ("name" or "name.overload").
LOWER_PRECISION_FP = (
    "_convolution.deprecated _convolution conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d.input "
    "conv_transpose3d.input convolution prelu addmm addmv addr matmul einsum mm mv linalg_vecdot linear addbmm "
    "baddbmm bmm chain_matmul linalg_multi_dot _thnn_fused_lstm_cell _thnn_fused_gru_cell lstm_cell gru_cell "
    "rnn_tanh_cell rnn_relu_cell _scaled_dot_product_flash_attention scaled_dot_product_attention").split()
FP32 = (
    "acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow.Tensor_Scalar "
    "pow.Tensor_Tensor pow.Scalar softplus layer_norm native_layer_norm rms_norm group_norm frobenius_norm.dim "
    "nuclear_norm nuclear_norm.dim cosine_similarity poisson_nll_loss cosine_embedding_loss nll_loss nll_loss2d "
    "hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss "
    "multilabel_margin_loss soft_margin_loss triplet_margin_loss multi_margin_loss "
    "binary_cross_entropy_with_logits dist pdist cdist renorm logsumexp upsample_nearest1d "
    "_upsample_nearest_exact1d upsample_nearest2d _upsample_nearest_exact2d upsample_nearest3d "
    "_upsample_nearest_exact3d upsample_linear1d upsample_bilinear2d _upsample_bilinear2d_aa "
    "upsample_trilinear3d upsample_bicubic2d _upsample_bicubic2d_aa").split()
FP32_SET_OPT_DTYPE = (
    "prod prod.dim_int softmax.int log_softmax.int cumprod cumsum linalg_vector_norm linalg_matrix_norm "
    "linalg_matrix_norm.str_ord sum sum.dim_IntList").split()
PROMOTE = "addcdiv addcmul atan2 bilinear cross dot vdot grid_sampler index_put tensordot scatter_add".split()

_POLICIES = (("lower_precision_fp", LOWER_PRECISION_FP), ("fp32", FP32),
             ("fp32_set_opt_dtype", FP32_SET_OPT_DTYPE), ("promote", PROMOTE))


def cuda_category(name: str) -> str:
    """The CUDA autocast policy of an aten op, ``"aten::sum.dim_IntList"`` or ``"sum"``: one of the four
    list names, or ``"input type"`` for ops outside the lists."""
    name = name.removeprefix("aten::").removeprefix("aten.").removesuffix(".default")
    for candidate in (name, name.partition(".")[0]):
        for policy, names in _POLICIES:
            if candidate in names:
                return policy
    return "input type"


def _overload(name: str):
    base, _, overload = name.partition(".")
    packet = getattr(torch.ops.aten, base, None)
    return getattr(packet, overload or "default", None) if packet is not None else None


def _eligible(value) -> bool:
    return isinstance(value, torch.Tensor) and value.is_floating_point() and value.dtype != torch.float64


def _map_tensors(fn, value):
    if isinstance(value, (list, tuple)):
        return type(value)(_map_tensors(fn, v) for v in value)
    return fn(value) if _eligible(value) else value


_AUTOCAST_CPU = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU)


def _kernel(op, policy, low):
    dtype_index = next((i for i, a in enumerate(op._schema.arguments) if a.name == "dtype"), None)

    def kernel(*args, **kwargs):
        with torch._C._ExcludeDispatchKeyGuard(_AUTOCAST_CPU):
            if policy == "fp32_set_opt_dtype":
                first = next((a for a in args if isinstance(a, torch.Tensor)), None)
                if _eligible(first) and dtype_index is not None:
                    if len(args) > dtype_index:
                        if args[dtype_index] is None:
                            args = args[:dtype_index] + (torch.float32,) + args[dtype_index + 1:]
                    elif kwargs.get("dtype") is None:
                        kwargs["dtype"] = torch.float32
                return op(*args, **kwargs)
            if policy == "lower_precision_fp":
                to = low
            elif policy == "fp32":
                to = torch.float32
            else:  # promote: the widest eligible floating type
                floats = [t.dtype for t in tree_leaves((args, kwargs)) if _eligible(t)]
                to = torch.float32 if torch.float32 in floats or not floats else floats[0]
            cast = lambda t: t.to(to)  # noqa: E731
            args = _map_tensors(cast, args)
            kwargs = {k: _map_tensors(cast, v) for k, v in kwargs.items()}
            return op(*args, **kwargs)

    return kernel


@contextlib.contextmanager
def cuda_autocast_rules(low: torch.dtype = torch.float16):
    """Within this context, ``torch.autocast("cpu", dtype=low)`` follows PyTorch's CUDA autocast lists
    (module docstring). The registrations are removed on exit."""
    wanted = {}
    for policy, names in _POLICIES:
        for name in names:
            op = _overload(name)
            if op is not None:
                schema = op._schema
                key = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
                wanted[key] = _kernel(op, policy, low)
    # One library per namespace: other libraries register AutocastCPU kernels too (torchvision's
    # ``roi_align`` once torchvision is imported), and a library implements its own namespace's ops only.
    libraries = {}

    def library(name):
        namespace = name.split("::", 1)[0] if "::" in name else "aten"
        if namespace not in libraries:
            libraries[namespace] = Library(namespace, "IMPL")
        return libraries[namespace]

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "overriding a previously registered kernel"
            for name in torch._C._dispatch_get_registrations_for_dispatch_key("AutocastCPU"):
                if name not in wanted:
                    library(name).impl(name, fallthrough_kernel, "AutocastCPU")
            for name, kernel in wanted.items():
                library(name).impl(name, kernel, "AutocastCPU")
        yield
    finally:
        for lib in libraries.values():
            lib._destroy()
