"""Lowering of a make_fx aten graph (forward + backward + optimizer) to TOSA text."""

from __future__ import annotations

import math
import operator

import numpy as np
import torch

from ._emitter import F32, I1, I32, Emitter, Val


class UnsupportedOpError(NotImplementedError):
    """An aten op (or an op variant) that amp_mlir.torch cannot lower to TOSA."""


aten = torch.ops.aten

# target -> lowering method name; filled by the @lowers decorator below.
_LOWERINGS: dict = {}


def lowers(*targets):
    def deco(fn):
        for t in targets:
            _LOWERINGS[t] = fn
        return fn

    return deco


def supported_ops() -> list[str]:
    """The aten overloads amp_mlir.torch lowers, as 'aten.name.overload' strings."""
    return sorted(str(t) for t in _LOWERINGS if not isinstance(t, type(operator.getitem)))


def _dtype_of(t) -> str:
    if t.dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        return F32
    if t.dtype == torch.bool:
        return I1
    return I32


def _functional_form(target):
    """aten.sub.Tensor for aten.sub_.Tensor; None when `target` is not an in-place aten op."""
    name = getattr(target, "_schema", None) and target._schema.name  # "aten::sub_"
    if not name or not name.startswith("aten::") or not name.endswith("_") or name.endswith("__"):
        return None
    packet = getattr(aten, name[len("aten::"):-1], None)
    overload = target._overloadname
    return getattr(packet, overload, None) if packet is not None else None


def _val_meta(node):
    return node.meta.get("val")


def _shape(node) -> tuple:
    return tuple(int(d) for d in _val_meta(node).shape)


def _norm_dims(dims, rank):
    if dims is None:
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    return sorted({d % rank for d in dims}) if rank else []


class Lowering:
    def __init__(self, gm: torch.fx.GraphModule, em: Emitter, seed_node=None):
        self.gm = gm
        self.em = em
        self.env: dict = {}
        self.seed_node = seed_node
        self._onehot_cache: dict = {}
        self.node = None

    # --------------------------------------------------------------- helpers
    def v(self, a) -> Val:
        if isinstance(a, torch.fx.Node):
            r = self.env[a]
            if not isinstance(r, Val):
                raise UnsupportedOpError(
                    f"{self._opname()}: operand {a.name} is not a plain tensor in amp_mlir.torch's lowering")
            return r
        raise TypeError(f"expected a tensor operand, got {a!r}")

    def operand(self, a):
        """A Val for a node, or a Python scalar left as is (the emitter makes a constant)."""
        if isinstance(a, torch.fx.Node):
            return self.v(a)
        if isinstance(a, (bool, int, float)):
            return float(a)
        raise UnsupportedOpError(f"{self._opname()}: unsupported operand {a!r}")

    def _opname(self):
        return str(self.node.target) if self.node is not None else "?"

    def unsupported(self, why):
        raise UnsupportedOpError(f"{self._opname()} {why} is not supported by amp_mlir.torch")

    def out_shape(self):
        return _shape(self.node)

    def arg(self, i, default=None):
        n = self.node
        if i < len(n.args):
            return n.args[i]
        return default

    def kwarg(self, name, i, default=None):
        n = self.node
        if name in n.kwargs:
            return n.kwargs[name]
        return self.arg(i, default)

    # --------------------------------------------------------------- driver
    def run_node(self, node):
        self.node = node
        fn = _LOWERINGS.get(node.target)
        inplace_target = None
        if fn is None:
            # An in-place op (aten.sub_.Tensor): its functional form, and every later user of the
            # mutated tensor sees the result.
            functional = _functional_form(node.target)
            fn = _LOWERINGS.get(functional) if functional is not None else None
            inplace_target = node.args[0] if fn is not None else None
        if fn is None:
            raise UnsupportedOpError(
                f"{node.target} is not supported by amp_mlir.torch "
                f"(supported: {', '.join(supported_ops())})")
        self.em.prefix = node.name
        self.em.loc = f"{node.target}[{node.name}]"
        result = fn(self, node)
        # Check the shapes against torch's own metadata.
        meta = _val_meta(node)
        if isinstance(result, Val) and isinstance(meta, torch.Tensor):
            if result.shape != tuple(meta.shape):
                raise AssertionError(f"{node.format_node()}: lowered shape {result.shape} != {tuple(meta.shape)}")
        self.env[node] = result
        if inplace_target is not None:
            self.env[inplace_target] = result
        return result

    # ======================================================================== ops
    @lowers(operator.getitem)
    def _getitem(self, n):
        src = self.env[n.args[0]]
        r = src[n.args[1]]
        return r

    # ----------------------------------------------------------------- views
    @lowers(aten.view.default, aten._unsafe_view.default, aten.reshape.default, aten._reshape_alias.default,
            aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default, aten.unsqueeze.default,
            aten.flatten.using_ints)
    def _view(self, n):
        return self.em.reshape(self.v(n.args[0]), self.out_shape(), hint="view")

    @lowers(aten.clone.default, aten.alias.default, aten.detach.default, aten.lift_fresh_copy.default,
            aten.contiguous.default)
    def _identity(self, n):
        return self.v(n.args[0])

    @lowers(aten._to_copy.default)
    def _to_copy(self, n):
        x = self.v(n.args[0])
        dt = n.kwargs.get("dtype")
        if dt is not None and _dtype_of(torch.empty(0, dtype=dt)) != x.dtype:
            return self.em.cast(x, _dtype_of(torch.empty(0, dtype=dt)))
        return x

    @lowers(aten.t.default)
    def _t(self, n):
        x = self.v(n.args[0])
        if x.rank < 2:
            return x
        return self.em.transpose(x, [1, 0], hint="t")

    @lowers(aten.transpose.int)
    def _transpose(self, n):
        x = self.v(n.args[0])
        r = x.rank
        d0, d1 = n.args[1] % r, n.args[2] % r
        perm = list(range(r))
        perm[d0], perm[d1] = perm[d1], perm[d0]
        return self.em.transpose(x, perm)

    @lowers(aten.permute.default)
    def _permute(self, n):
        x = self.v(n.args[0])
        return self.em.transpose(x, [d % x.rank for d in n.args[1]], hint="permute")

    @lowers(aten.expand.default)
    def _expand(self, n):
        return self.em.broadcast_to(self.v(n.args[0]), self.out_shape())

    @staticmethod
    def _slice_bounds(size, start, end, step):
        start = 0 if start is None else start
        end = size if end is None else end
        start = max(0, min(size, start + size if start < 0 else start))
        end = max(start, min(size, end + size if end < 0 else end))
        count = max(0, (end - start + step - 1) // step)
        return start, count

    @lowers(aten.slice.Tensor)
    def _slice(self, n):
        x = self.v(n.args[0])
        dim = (n.args[1] if len(n.args) > 1 else 0) % x.rank
        start, end = self.arg(2), self.arg(3)
        step = self.arg(4, 1)
        start, count = self._slice_bounds(x.shape[dim], start, end, step)
        if count == 0:
            self.unsupported("producing an empty tensor")
        if step == 1:
            return self.em.slice_axis(x, dim, start, count)
        return self._strided(x, dim, start, count, step)

    @lowers(aten.slice_backward.default)
    def _slice_backward(self, n):
        dy = self.v(n.args[0])
        input_sizes, dim, start, end, step = n.args[1:6]
        dim %= len(input_sizes)
        size = input_sizes[dim]
        start, count = self._slice_bounds(size, start, end, step)
        g = self._zero_insert(dy, dim, step)
        pads = [(0, 0)] * dy.rank
        pads[dim] = (start, size - start - g.shape[dim])
        return self.em.pad(g, pads, 0.0, hint="slice_backward")

    @lowers(aten.cat.default)
    def _cat(self, n):
        vs = [self.v(a) for a in n.args[0] if _val_meta(a).numel() > 0]
        dim = (n.args[1] if len(n.args) > 1 else 0) % vs[0].rank
        return self.em.concat(vs, dim, hint="cat")

    @lowers(aten.split.Tensor, aten.split_with_sizes.default)
    def _split(self, n):
        x = self.v(n.args[0])
        dim = (n.args[2] if len(n.args) > 2 else 0) % x.rank
        outs, start = [], 0
        for m in _val_meta(n):
            k = int(m.shape[dim])
            outs.append(self.em.slice_axis(x, dim, start, k, hint="split"))
            start += k
        return tuple(outs)

    # ----------------------------------------------------------------- constants
    @lowers(aten.ones_like.default)
    def _ones_like(self, n):
        shape = self.out_shape()
        if n is self.seed_node:
            seed = self.em.const(1.0, F32, shape=(1,), hint="grad_seed", attrs="amp.grad_seed", cache=False)
            return self.em.reshape(seed, shape, hint="seed")
        return self.em.const(1.0, _dtype_of(_val_meta(n)), shape=shape, hint="ones")

    @lowers(aten.zeros_like.default, aten.zeros.default, aten.new_zeros.default)
    def _zeros(self, n):
        return self.em.const(0, _dtype_of(_val_meta(n)), shape=self.out_shape(), hint="zeros")

    @lowers(aten.full_like.default, aten.full.default, aten.new_full.default)
    def _full(self, n):
        fill = n.args[1] if n.target != aten.new_full.default else n.args[2]
        return self.em.const(fill, _dtype_of(_val_meta(n)), shape=self.out_shape(), hint="full")

    @lowers(aten.empty_like.default)
    def _empty_like(self, n):
        # Unspecified contents; in a traced step its only user fills it (fill_ below), e.g. the
        # decomposed silu_backward's ones. Zeros keep the step deterministic.
        return self.em.const(0, _dtype_of(_val_meta(n)), shape=self.out_shape(), hint="empty")

    @lowers(aten.fill_.Scalar)
    def _fill_(self, n):
        # In place: the filled tensor is what every later user of the target sees.
        value = self.em.const(n.args[1], _dtype_of(_val_meta(n)), shape=self.out_shape(), hint="fill")
        self.env[n.args[0]] = value
        return value

    @lowers(aten.scalar_tensor.default)
    def _scalar_tensor(self, n):
        return self.em.const(n.args[0], _dtype_of(_val_meta(n)), shape=(), hint="scalar")

    # ----------------------------------------------------------------- elementwise arithmetic
    @lowers(aten.add.Tensor, aten.add.Scalar)
    def _add(self, n):
        a, b = self.operand(n.args[0]), self.operand(n.args[1])
        alpha = n.kwargs.get("alpha", 1)
        if alpha != 1:
            b = self.em.mul(b, float(alpha), hint="alpha") if isinstance(b, Val) else b * alpha
        return self._binary_scalar_ok("add", a, b)

    @lowers(aten.sub.Tensor, aten.sub.Scalar)
    def _sub(self, n):
        a, b = self.operand(n.args[0]), self.operand(n.args[1])
        alpha = n.kwargs.get("alpha", 1)
        if alpha != 1:
            b = self.em.mul(b, float(alpha), hint="alpha") if isinstance(b, Val) else b * alpha
        return self._binary_scalar_ok("sub", a, b)

    @lowers(aten.rsub.Scalar, aten.rsub.Tensor)
    def _rsub(self, n):
        a, b = self.operand(n.args[0]), self.operand(n.args[1])
        alpha = n.kwargs.get("alpha", 1)
        if alpha != 1:
            a = self.em.mul(a, float(alpha), hint="alpha")
        return self._binary_scalar_ok("sub", b, a)

    @lowers(aten.mul.Tensor, aten.mul.Scalar)
    def _mul(self, n):
        return self._binary_scalar_ok("mul", self.operand(n.args[0]), self.operand(n.args[1]))

    @lowers(aten.div.Tensor, aten.div.Scalar)
    def _div(self, n):
        if n.kwargs.get("rounding_mode") is not None:
            self.unsupported("with a rounding_mode")
        a, b = self.operand(n.args[0]), self.operand(n.args[1])
        if not isinstance(b, Val):
            return self._binary_scalar_ok("mul", a, 1.0 / b)
        return self._binary_scalar_ok("mul", a, self.em.reciprocal(b))

    def _binary_scalar_ok(self, op, a, b):
        em = self.em
        shape = self.out_shape()
        if not isinstance(a, Val) and not isinstance(b, Val):
            return em.const({"add": a + b, "sub": a - b, "mul": a * b}[op], F32, shape=shape)
        r = len(shape)
        if isinstance(a, Val):
            a = em.to_rank(a, r)
        if isinstance(b, Val):
            b = em.to_rank(b, r)
        if op == "mul":
            return em.mul(a, b)
        return em.binary(op, a, b)

    @lowers(aten.neg.default)
    def _neg(self, n):
        return self.em.neg(self.v(n.args[0]))

    @lowers(aten.reciprocal.default)
    def _reciprocal(self, n):
        return self.em.reciprocal(self.v(n.args[0]))

    @lowers(aten.sqrt.default)
    def _sqrt(self, n):
        return self.em.sqrt(self.v(n.args[0]))

    @lowers(aten.rsqrt.default)
    def _rsqrt(self, n):
        return self.em.rsqrt(self.v(n.args[0]))

    @lowers(aten.exp.default)
    def _exp(self, n):
        return self.em.exp(self.v(n.args[0]))

    @lowers(aten.log.default)
    def _log(self, n):
        return self.em.log(self.v(n.args[0]))

    @lowers(aten.tanh.default)
    def _tanh(self, n):
        return self.em.tanh(self.v(n.args[0]))

    @lowers(aten.sigmoid.default)
    def _sigmoid(self, n):
        return self.em.sigmoid(self.v(n.args[0]))

    @lowers(aten.abs.default)
    def _abs(self, n):
        return self.em.abs(self.v(n.args[0]))

    @lowers(aten.tanh_backward.default)
    def _tanh_backward(self, n):
        em = self.em
        dy, y = self.v(n.args[0]), self.v(n.args[1])
        return em.mul(dy, em.sub(1.0, em.mul(y, y)))

    @lowers(aten.sigmoid_backward.default)
    def _sigmoid_backward(self, n):
        em = self.em
        dy, y = self.v(n.args[0]), self.v(n.args[1])
        return em.mul(dy, em.mul(y, em.sub(1.0, y)))

    @lowers(aten.pow.Tensor_Scalar)
    def _pow_ts(self, n):
        x, e = self.v(n.args[0]), float(n.args[1])
        if e == 2.0:
            return self.em.mul(x, x, hint="square")
        if e == 1.0:
            return x
        if e == 0.5:
            return self.em.sqrt(x)
        if e == -1.0:
            return self.em.reciprocal(x)
        return self.em.pow(x, e)

    @lowers(aten.pow.Scalar)
    def _pow_s(self, n):
        base, e = float(n.args[0]), self.v(n.args[1])
        return self.em.pow(self.em.const(base, F32, shape=(1,) * e.rank, hint="base"), e)

    @lowers(aten.pow.Tensor_Tensor)
    def _pow_tt(self, n):
        return self.em.pow(self.v(n.args[0]), self.v(n.args[1]))

    @lowers(aten.maximum.default)
    def _maximum(self, n):
        return self.em.maximum(self.v(n.args[0]), self.v(n.args[1]))

    @lowers(aten.minimum.default)
    def _minimum(self, n):
        return self.em.minimum(self.v(n.args[0]), self.v(n.args[1]))

    @lowers(aten.where.self)
    def _where(self, n):
        return self.em.select(self.v(n.args[0]), self.operand(n.args[1]), self.operand(n.args[2]))

    def _cmp(self, n, op, swap=False, negate=False):
        a, b = self.operand(n.args[0]), self.operand(n.args[1])
        if swap:
            a, b = b, a
        r = self.em.compare(op, a, b)
        return self.em.logical_not(r) if negate else r

    @lowers(aten.eq.Tensor, aten.eq.Scalar)
    def _eq(self, n):
        return self._cmp(n, "equal")

    @lowers(aten.ne.Tensor, aten.ne.Scalar)
    def _ne(self, n):
        return self._cmp(n, "equal", negate=True)

    @lowers(aten.gt.Tensor, aten.gt.Scalar)
    def _gt(self, n):
        return self._cmp(n, "greater")

    @lowers(aten.ge.Tensor, aten.ge.Scalar)
    def _ge(self, n):
        return self._cmp(n, "greater_equal")

    @lowers(aten.lt.Tensor, aten.lt.Scalar)
    def _lt(self, n):
        return self._cmp(n, "greater", swap=True)

    @lowers(aten.le.Tensor, aten.le.Scalar)
    def _le(self, n):
        return self._cmp(n, "greater_equal", swap=True)

    # ----------------------------------------------------------------- activations
    @lowers(aten.relu.default)
    def _relu(self, n):
        return self.em.clamp(self.v(n.args[0]), lo=0.0, hint="relu")

    @lowers(aten.threshold_backward.default)
    def _threshold_backward(self, n):
        em = self.em
        dy, x, thr = self.v(n.args[0]), self.v(n.args[1]), float(n.args[2])
        keep = em.compare("greater", x, thr, hint="active")
        return em.select(keep, dy, 0.0, hint="threshold_backward")

    @lowers(aten.silu.default)
    def _silu(self, n):
        x = self.v(n.args[0])
        return self.em.mul(x, self.em.sigmoid(x, hint="silu_gate"), hint="silu")

    @lowers(aten.silu_backward.default)
    def _silu_backward(self, n):
        # d silu / dx = s (1 + x (1 - s)), s = sigmoid(x)
        em = self.em
        dy, x = self.v(n.args[0]), self.v(n.args[1])
        s = em.sigmoid(x, hint="silu_gate")
        d = em.mul(s, em.add(em.mul(x, em.sub(1.0, s)), 1.0), hint="dsilu")
        return em.mul(dy, d, hint="silu_backward")

    @lowers(aten.clamp_min.default)
    def _clamp_min(self, n):
        return self.em.clamp(self.v(n.args[0]), lo=float(n.args[1]), hint="clamp_min")

    @lowers(aten.clamp_max.default)
    def _clamp_max(self, n):
        return self.em.clamp(self.v(n.args[0]), hi=float(n.args[1]), hint="clamp_max")

    @lowers(aten.clamp.default)
    def _clamp(self, n):
        lo, hi = self.arg(1, None), self.arg(2, None)
        return self.em.clamp(self.v(n.args[0]), lo=None if lo is None else float(lo),
                             hi=None if hi is None else float(hi))

    _SQRT1_2 = 1.0 / math.sqrt(2.0)
    _GELU_BETA = math.sqrt(2.0 / math.pi)
    _GELU_KAPPA = 0.044715

    @lowers(aten.gelu.default)
    def _gelu(self, n):
        em = self.em
        x = self.v(n.args[0])
        approx = n.kwargs.get("approximate", self.arg(1, "none"))
        half_x = em.mul(x, 0.5, hint="half_x")
        if approx == "tanh":
            x3 = em.mul(em.mul(x, x, hint="x2"), x, hint="x3")
            inner = em.mul(em.add(x, em.mul(x3, self._GELU_KAPPA)), self._GELU_BETA, hint="inner")
            return em.mul(half_x, em.add(em.tanh(inner), 1.0), hint="gelu")
        if approx != "none":
            self.unsupported(f"with approximate={approx!r}")
        return em.mul(half_x, em.add(em.erf(em.mul(x, self._SQRT1_2)), 1.0), hint="gelu")

    @lowers(aten.gelu_backward.default)
    def _gelu_backward(self, n):
        em = self.em
        dy, x = self.v(n.args[0]), self.v(n.args[1])
        approx = n.kwargs.get("approximate", self.arg(2, "none"))
        if approx == "tanh":
            # torch's GeluBackward (tanh): 0.5 (1 + t) + 0.5 x (1 - t^2) beta (1 + 3 kappa x^2)
            x2 = em.mul(x, x, hint="x2")
            x3 = em.mul(x2, x, hint="x3")
            inner = em.mul(em.add(x, em.mul(x3, self._GELU_KAPPA)), self._GELU_BETA, hint="inner")
            t = em.tanh(inner)
            left = em.mul(x, 0.5, hint="left")
            right = em.add(t, 1.0, hint="right")
            left_d = em.mul(right, 0.5, hint="left_d")
            right_d = em.sub(1.0, em.mul(t, t), hint="right_d")
            inner_d = em.mul(em.add(em.mul(x2, 3.0 * self._GELU_KAPPA), 1.0), self._GELU_BETA, hint="inner_d")
            d = em.add(left_d, em.mul(em.mul(left, right_d), inner_d), hint="dgelu")
            return em.mul(dy, d, hint="gelu_backward")
        if approx != "none":
            self.unsupported(f"with approximate={approx!r}")
        cdf = em.mul(em.add(em.erf(em.mul(x, self._SQRT1_2)), 1.0), 0.5, hint="cdf")
        pdf = em.mul(em.exp(em.mul(em.mul(x, x), -0.5)), 1.0 / math.sqrt(2.0 * math.pi), hint="pdf")
        return em.mul(dy, em.add(cdf, em.mul(x, pdf)), hint="gelu_backward")

    # ----------------------------------------------------------------- reductions
    @lowers(aten.sum.dim_IntList)
    def _sum_dim(self, n):
        x = self.v(n.args[0])
        dims = _norm_dims(n.args[1] if len(n.args) > 1 else None, x.rank)
        r = self.em.reduce_sum(x, dims, keepdims=True)
        return self.em.reshape(r, self.out_shape(), hint="sum")

    @lowers(aten.sum.default)
    def _sum(self, n):
        x = self.v(n.args[0])
        r = self.em.reduce_sum(x, range(x.rank), keepdims=True)
        return self.em.reshape(r, (), hint="sum")

    @lowers(aten.mean.dim)
    def _mean_dim(self, n):
        x = self.v(n.args[0])
        dims = _norm_dims(n.args[1], x.rank)
        cnt = int(np.prod([x.shape[d] for d in dims]))
        r = self.em.mul(self.em.reduce_sum(x, dims, keepdims=True), 1.0 / cnt, hint="mean")
        return self.em.reshape(r, self.out_shape(), hint="mean")

    @lowers(aten.mean.default)
    def _mean(self, n):
        x = self.v(n.args[0])
        r = self.em.mul(self.em.reduce_sum(x, range(x.rank)), 1.0 / max(1, int(np.prod(x.shape))), hint="mean")
        return self.em.reshape(r, (), hint="mean")

    # ----------------------------------------------------------------- matmuls
    @lowers(aten.mm.default, aten.bmm.default)
    def _mm(self, n):
        return self.em.matmul(self.v(n.args[0]), self.v(n.args[1]), hint="mm")

    @lowers(aten.addmm.default)
    def _addmm(self, n):
        em = self.em
        bias, a, b = self.v(n.args[0]), self.v(n.args[1]), self.v(n.args[2])
        beta, alpha = n.kwargs.get("beta", 1), n.kwargs.get("alpha", 1)
        mm = em.matmul(a, b, hint="mm")
        if alpha != 1:
            mm = em.mul(mm, float(alpha))
        if beta != 1:
            bias = em.mul(bias, float(beta))
        return em.add(mm, em.to_rank(bias, 2), hint="addmm")

    # ----------------------------------------------------------------- softmax
    @lowers(aten._softmax.default)
    def _softmax(self, n):
        em = self.em
        x, dim = self.v(n.args[0]), n.args[1] % max(1, self.v(n.args[0]).rank)
        e = em.exp(em.sub(x, em.reduce_max(x, [dim]), hint="shifted"))
        return em.mul(e, em.reciprocal(em.reduce_sum(e, [dim])), hint="softmax")

    @lowers(aten._softmax_backward_data.default)
    def _softmax_backward(self, n):
        em = self.em
        dy, y = self.v(n.args[0]), self.v(n.args[1])
        dim = n.args[2] % max(1, y.rank)
        s = em.reduce_sum(em.mul(dy, y), [dim], hint="rowdot")
        return em.mul(y, em.sub(dy, s), hint="softmax_backward")

    @lowers(aten._log_softmax.default)
    def _log_softmax(self, n):
        em = self.em
        x = self.v(n.args[0])
        dim = n.args[1] % max(1, x.rank)
        shifted = em.sub(x, em.reduce_max(x, [dim]), hint="shifted")
        lse = em.log(em.reduce_sum(em.exp(shifted), [dim]), hint="logsumexp")
        return em.sub(shifted, lse, hint="log_softmax")

    @lowers(aten._log_softmax_backward_data.default)
    def _log_softmax_backward(self, n):
        em = self.em
        dy, y = self.v(n.args[0]), self.v(n.args[1])
        dim = n.args[2] % max(1, y.rank)
        s = em.reduce_sum(dy, [dim], hint="rowsum")
        return em.sub(dy, em.mul(em.exp(y, hint="probs"), s), hint="log_softmax_backward")

    # ----------------------------------------------------------------- losses
    def _onehot(self, target_node, num_classes, ignore_index):
        key = (target_node, num_classes, ignore_index)
        if key in self._onehot_cache:
            return self._onehot_cache[key]
        em = self.em
        t = self.v(target_node)
        col = em.reshape(t, (t.shape[0], 1), hint="labels_col")
        iota = em.const(np.arange(num_classes, dtype=np.int32).reshape(1, -1), I32, hint="class_iota")
        hit = em.compare("equal", col, iota, hint="is_label")
        if 0 <= ignore_index < num_classes:
            ii = em.const(ignore_index, I32, shape=(1, 1), hint="ignore_index")
            keep = em.logical_not(em.compare("equal", col, ii))
            hit = em.logical_and(hit, keep)
        onehot = em.select(hit, 1.0, 0.0, hint="onehot")
        count = em.reduce_sum(onehot, [0, 1], hint="total_weight")  # [1,1]
        self._onehot_cache[key] = (onehot, count)
        return onehot, count

    def _nll_common(self, n, logp_arg, target_arg, weight, reduction, ignore_index):
        logp = self.v(logp_arg)
        if weight is not None:
            self.unsupported("with class weights")
        if logp.rank != 2:
            self.unsupported(f"with input of rank {logp.rank} (only [N, C])")
        return logp, self._onehot(target_arg, logp.shape[1], ignore_index)

    @lowers(aten.nll_loss_forward.default)
    def _nll_forward(self, n):
        em = self.em
        logp_arg, target_arg, weight, reduction, ignore_index = n.args[:5]
        logp, (onehot, count) = self._nll_common(n, logp_arg, target_arg, weight, reduction, ignore_index)
        picked = em.reduce_sum(em.mul(onehot, logp, hint="picked"), [1], hint="picked_row")  # [N,1]
        if reduction == 0:
            out = em.reshape(em.neg(picked), (logp.shape[0],), hint="nll")
        else:
            total = em.reduce_sum(picked, [0], hint="picked_total")  # [1,1]
            out = em.neg(total, hint="nll_sum")
            if reduction == 1:
                out = em.mul(out, em.reciprocal(count), hint="nll_mean")
            out = em.reshape(out, (), hint="nll")
        return (out, em.reshape(count, (), hint="total_weight"))

    @lowers(aten.nll_loss_backward.default)
    def _nll_backward(self, n):
        em = self.em
        dy_arg, logp_arg, target_arg, weight, reduction, ignore_index, _tw = n.args[:7]
        logp, (onehot, count) = self._nll_common(n, logp_arg, target_arg, weight, reduction, ignore_index)
        dy = self.v(dy_arg)
        if reduction == 0:
            g = em.neg(em.reshape(dy, (dy.shape[0], 1)), hint="d_nll")
        else:
            g = em.neg(em.reshape(dy, (1, 1)), hint="d_nll")
            if reduction == 1:
                g = em.mul(g, em.reciprocal(count), hint="d_nll_mean")
        return em.mul(onehot, g, hint="nll_loss_backward")

    @lowers(aten.mse_loss.default)
    def _mse(self, n):
        em = self.em
        x, y = self.v(n.args[0]), self.v(n.args[1])
        reduction = self.kwarg("reduction", 2, 1)
        d = em.sub(x, y, hint="diff")
        sq = em.mul(d, d, hint="sq")
        if reduction == 0:
            return sq
        s = em.reduce_sum(sq, range(sq.rank), hint="sq_sum")
        if reduction == 1:
            s = em.mul(s, 1.0 / int(np.prod(x.shape)), hint="mse")
        return em.reshape(s, (), hint="mse")

    @lowers(aten.mse_loss_backward.default)
    def _mse_backward(self, n):
        em = self.em
        dy, x, y = self.v(n.args[0]), self.v(n.args[1]), self.v(n.args[2])
        reduction = self.kwarg("reduction", 3, 1)
        norm = 2.0 / int(np.prod(x.shape)) if reduction == 1 else 2.0
        g = em.mul(em.to_rank(dy, x.rank), norm, hint="d_mse")
        return em.mul(em.sub(x, y, hint="diff"), g, hint="mse_loss_backward")

    @lowers(aten.binary_cross_entropy.default)
    def _bce(self, n):
        # PyTorch: -(y log p + (1 - y) log(1 - p)), each log clamped at -100; no weight.
        em = self.em
        p, y = self.v(n.args[0]), self.v(n.args[1])
        if self.kwarg("weight", 2, None) is not None:
            self.unsupported("with a weight")
        reduction = self.kwarg("reduction", 3, 1)
        log_p = em.clamp(em.log(p, hint="log_p"), lo=-100.0, hint="log_p")
        log_q = em.clamp(em.log(em.sub(1.0, p, hint="q"), hint="log_q"), lo=-100.0, hint="log_q")
        terms = em.neg(em.add(em.mul(y, log_p), em.mul(em.sub(1.0, y), log_q)), hint="bce")
        if reduction == 0:
            return terms
        s = em.reduce_sum(terms, range(terms.rank), hint="bce_sum")
        if reduction == 1:
            s = em.mul(s, 1.0 / int(np.prod(p.shape)), hint="bce")
        return em.reshape(s, (), hint="bce")

    @lowers(aten.binary_cross_entropy_backward.default)
    def _bce_backward(self, n):
        # PyTorch: dy (p - y) / max(p (1 - p), 1e-12), / numel for the mean.
        em = self.em
        dy, p, y = self.v(n.args[0]), self.v(n.args[1]), self.v(n.args[2])
        if self.kwarg("weight", 3, None) is not None:
            self.unsupported("with a weight")
        reduction = self.kwarg("reduction", 4, 1)
        denom = em.clamp(em.mul(p, em.sub(1.0, p)), lo=1e-12, hint="bce_denom")
        g = em.mul(em.sub(p, y), em.reciprocal(denom), hint="d_bce")
        if reduction == 1:
            g = em.mul(g, 1.0 / int(np.prod(p.shape)), hint="d_bce")
        return em.mul(g, em.to_rank(dy, p.rank), hint="binary_cross_entropy_backward")

    # ----------------------------------------------------------------- layer norm
    def _ln_2d(self, x: Val, normalized_shape):
        k = len(normalized_shape)
        d = int(np.prod(normalized_shape))
        m = int(np.prod(x.shape[: x.rank - k])) if x.rank > k else 1
        return m, d

    @lowers(aten.native_layer_norm.default)
    def _layer_norm(self, n):
        em = self.em
        x = self.v(n.args[0])
        normalized_shape, w_arg, b_arg, eps = n.args[1], n.args[2], n.args[3], float(n.args[4])
        m, d = self._ln_2d(x, normalized_shape)
        x2 = em.reshape(x, (m, d), hint="rows")
        mean = em.mul(em.reduce_sum(x2, [1]), 1.0 / d, hint="mean")  # [M,1]
        xc = em.sub(x2, mean, hint="centered")
        var = em.mul(em.reduce_sum(em.mul(xc, xc, hint="sq"), [1]), 1.0 / d, hint="var")
        rstd = em.rsqrt(em.add(var, eps, hint="var_eps"), hint="rstd")
        y = em.mul(xc, rstd, hint="xhat")
        if w_arg is not None:
            y = em.mul(y, em.reshape(self.v(w_arg), (1, d)), hint="scaled")
        if b_arg is not None:
            y = em.add(y, em.reshape(self.v(b_arg), (1, d)), hint="shifted")
        meta = _val_meta(n)
        out = em.reshape(y, tuple(meta[0].shape), hint="layer_norm")
        return (out, em.reshape(mean, tuple(meta[1].shape), hint="mean"),
                em.reshape(rstd, tuple(meta[2].shape), hint="rstd"))

    @lowers(aten.native_layer_norm_backward.default)
    def _layer_norm_backward(self, n):
        em = self.em
        dy_arg, x_arg, normalized_shape, mean_arg, rstd_arg, w_arg, b_arg, mask = n.args[:8]
        x = self.v(x_arg)
        m, d = self._ln_2d(x, normalized_shape)
        dy = em.reshape(self.v(dy_arg), (m, d), hint="dy_rows")
        x2 = em.reshape(x, (m, d), hint="rows")
        mean = em.reshape(self.v(mean_arg), (m, 1))
        rstd = em.reshape(self.v(rstd_arg), (m, 1))
        xhat = em.mul(em.sub(x2, mean, hint="centered"), rstd, hint="xhat")
        dx = dw = db = None
        if mask[0]:
            g = dy
            if w_arg is not None:
                g = em.mul(dy, em.reshape(self.v(w_arg), (1, d)), hint="dxhat")
            mg = em.mul(em.reduce_sum(g, [1]), 1.0 / d, hint="mean_dxhat")
            mgx = em.mul(em.reduce_sum(em.mul(g, xhat), [1]), 1.0 / d, hint="mean_dxhat_xhat")
            inner = em.sub(em.sub(g, mg), em.mul(xhat, mgx), hint="inner")
            dx = em.reshape(em.mul(inner, rstd, hint="dx"), x.shape, hint="grad_input")
        if mask[1] and w_arg is not None:
            w = self.v(w_arg)
            dw = em.reshape(em.reduce_sum(em.mul(dy, xhat), [0]), w.shape, hint="grad_weight")
        if mask[2] and b_arg is not None:
            b = self.v(b_arg)
            db = em.reshape(em.reduce_sum(dy, [0]), b.shape, hint="grad_bias")
        return (dx, dw, db)

    # ----------------------------------------------------------------- convolution (NCHW <-> NHWC)
    def _conv_params(self, stride, padding, dilation):
        def two(v):
            v = list(v)
            return v * 2 if len(v) == 1 else v

        return two(stride), two(padding), two(dilation)

    @staticmethod
    def _fit_pad(size, k_eff, pad_lo, pad_hi, stride):
        """Reduce pad_hi (or crop the input) so that (size + pads - k_eff) % stride == 0 (TOSA requires exact
        division; PyTorch floors). Returns (pad_hi, crop)."""
        rem = (size + pad_lo + pad_hi - k_eff) % stride
        pad_hi -= rem
        crop = 0
        if pad_hi < 0:
            crop, pad_hi = -pad_hi, 0
        return pad_hi, crop

    @lowers(aten.convolution.default)
    def _convolution(self, n):
        em = self.em
        x, w = self.v(n.args[0]), self.v(n.args[1])
        b_arg = n.args[2]
        stride, padding, dilation, transposed, _out_pad, groups = n.args[3:9]
        if transposed:
            self.unsupported("with transposed=True")
        if groups != 1:
            self.unsupported(f"with groups={groups}")
        if x.rank != 4:
            self.unsupported(f"on rank-{x.rank} input (only 2-D NCHW)")
        (sh, sw), (ph, pw), (dh, dw) = self._conv_params(stride, padding, dilation)
        oc, ic, kh, kw = w.shape
        xh = em.transpose(x, [0, 2, 3, 1], hint="nhwc")
        ph_hi, crop_h = self._fit_pad(x.shape[2], (kh - 1) * dh + 1, ph, ph, sh)
        pw_hi, crop_w = self._fit_pad(x.shape[3], (kw - 1) * dw + 1, pw, pw, sw)
        if crop_h or crop_w:
            xh = em.slice(xh, (0, 0, 0, 0), (xh.shape[0], xh.shape[1] - crop_h, xh.shape[2] - crop_w, xh.shape[3]))
        wh = em.transpose(w, [0, 2, 3, 1], hint="ohwi")
        bias = self.v(b_arg) if b_arg is not None else em.const(0.0, F32, shape=(oc,), hint="zero_bias")
        y = em.conv2d(xh, wh, bias, [ph, ph_hi, pw, pw_hi], [sh, sw], [dh, dw], hint="conv")
        return em.transpose(y, [0, 3, 1, 2], hint="nchw")

    @lowers(aten.convolution_backward.default)
    def _convolution_backward(self, n):
        em = self.em
        dy, x, w = self.v(n.args[0]), self.v(n.args[1]), self.v(n.args[2])
        stride, padding, dilation, transposed, _out_pad, groups, mask = n.args[4:11]
        if transposed or groups != 1 or x.rank != 4:
            self.unsupported("with transposed=True, groups != 1 or non-2-D input")
        (sh, sw), (ph, pw), (dh, dw) = self._conv_params(stride, padding, dilation)
        N, IC, H, W = x.shape
        OC, _, KH, KW = w.shape
        _, _, OH, OW = dy.shape
        gx = gw = gb = None
        if mask[2]:
            gb = em.reshape(em.reduce_sum(dy, [0, 2, 3]), (OC,), hint="grad_bias")
        if mask[1]:
            # grad_w[oc, ic, i, j] = sum_{n,oh,ow} dy[n,oc,oh,ow] * xpad[n, ic, oh*s + i*d, ow*s + j*d]:
            # a conv2d over x with batch <-> channels swapped, kernel dy, stride d and dilation s.
            xs = em.transpose(x, [1, 2, 3, 0], hint="x_icHWn")  # [IC,H,W,N]
            ks = em.transpose(dy, [1, 2, 3, 0], hint="dy_ocHWn")  # [OC,OH,OW,N]
            ph_hi = dh * (KH - 1) + sh * (OH - 1) + 1 - H - ph
            pw_hi = dw * (KW - 1) + sw * (OW - 1) + 1 - W - pw
            if ph_hi < 0 or pw_hi < 0:
                xs = em.slice(xs, (0, 0, 0, 0), (IC, H + min(0, ph_hi), W + min(0, pw_hi), N), hint="crop")
                ph_hi, pw_hi = max(0, ph_hi), max(0, pw_hi)
            zero = em.const(0.0, F32, shape=(OC,), hint="zero_bias")
            g = em.conv2d(xs, ks, zero, [ph, ph_hi, pw, pw_hi], [dh, dw], [sh, sw], hint="wgrad")  # [IC,KH,KW,OC]
            gw = em.transpose(g, [3, 0, 1, 2], hint="grad_weight")
        if mask[0]:
            # grad_x = conv2d(zero-inserted dy, flipped w^T) with padding d*(K-1) - p.
            pt_h, pt_w = dh * (KH - 1) - ph, dw * (KW - 1) - pw
            if pt_h < 0 or pt_w < 0:
                self.unsupported("input gradient with padding > dilation * (kernel - 1)")
            d = em.transpose(dy, [0, 2, 3, 1], hint="dy_nhwc")  # [N,OH,OW,OC]
            d = self._zero_insert(d, 1, sh)
            d = self._zero_insert(d, 2, sw)
            lh, lw = d.shape[1], d.shape[2]
            wf = em.reverse(em.reverse(w, 2), 3)
            wf = em.transpose(wf, [1, 2, 3, 0], hint="w_flip")  # [IC,KH,KW,OC]
            pb_h = H - lh - pt_h + dh * (KH - 1)
            pb_w = W - lw - pt_w + dw * (KW - 1)
            zero = em.const(0.0, F32, shape=(IC,), hint="zero_bias")
            g = em.conv2d(d, wf, zero, [pt_h, pb_h, pt_w, pb_w], [1, 1], [dh, dw], hint="xgrad")
            gx = em.transpose(g, [0, 3, 1, 2], hint="grad_input")
        return (gx, gw, gb)

    def _zero_insert(self, v: Val, axis, s):
        """[.., L, ..] -> [.., (L-1)*s+1, ..] with s-1 zeros between neighbours."""
        if s == 1 or v.shape[axis] == 1:
            return v
        em = self.em
        L = v.shape[axis]
        split = v.shape[: axis + 1] + (1,) + v.shape[axis + 1:]
        t = em.reshape(v, split)
        pads = [(0, 0)] * len(split)
        pads[axis + 1] = (0, s - 1)
        t = em.pad(t, pads, 0.0, hint="zero_insert")
        merged = v.shape[:axis] + (L * s,) + v.shape[axis + 1:]
        t = em.reshape(t, merged)
        return em.slice_axis(t, axis, 0, (L - 1) * s + 1)

    # ----------------------------------------------------------------- max pooling
    def _pool_params(self, n, x, first=1):
        a = list(n.args[first:])
        kernel = list(a[0])
        stride = list(a[1]) if len(a) > 1 and a[1] else list(kernel)
        padding = list(a[2]) if len(a) > 2 else [0]
        dilation = list(a[3]) if len(a) > 3 else [1]
        ceil_mode = a[4] if len(a) > 4 else False
        two = lambda v: v * 2 if len(v) == 1 else v  # noqa: E731
        kernel, stride, padding, dilation = two(kernel), two(stride), two(padding), two(dilation)
        if ceil_mode:
            self.unsupported("with ceil_mode=True")
        if x.rank != 4:
            self.unsupported(f"on rank-{x.rank} input (only NCHW)")
        return kernel, stride, padding, dilation

    def _pool_windows(self, x: Val, kernel, stride, padding, dilation, out_hw):
        """The pooling windows of x as [N, C, OH, OW, KH*KW] (window positions in row-major order)."""
        em = self.em
        N, C, H, W = x.shape
        OH, OW = out_hw
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
        if (kh, kw) == (sh, sw) and (ph, pw) == (0, 0) and (dh, dw) == (1, 1):
            xc = em.slice(x, (0, 0, 0, 0), (N, C, OH * kh, OW * kw), hint="crop")
            t = em.reshape(xc, (N, C, OH, kh, OW, kw), hint="windows")
            t = em.transpose(t, [0, 1, 2, 4, 3, 5], hint="windows")
            return em.reshape(t, (N, C, OH, OW, kh * kw), hint="windows")
        xp = em.pad(x, [(0, 0), (0, 0), (ph, ph), (pw, pw)], float("-inf"), hint="xpad")
        cols = []
        for i in range(kh):
            for j in range(kw):
                t = self._strided(xp, 2, i * dh, OH, sh)
                t = self._strided(t, 3, j * dw, OW, sw)
                cols.append(em.reshape(t, (N, C, OH, OW, 1), hint="window"))
        return em.concat(cols, 4, hint="windows")

    def _strided(self, v: Val, axis, start, count, step):
        """v[..., start : start + count*step : step, ...]."""
        em = self.em
        L = (count - 1) * step + 1
        t = em.slice_axis(v, axis, start, L)
        if step == 1:
            return t
        pads = [(0, 0)] * t.rank
        pads[axis] = (0, step - 1)
        t = em.pad(t, pads, 0.0)
        t = em.reshape(t, t.shape[:axis] + (count, step) + t.shape[axis + 1:])
        t = em.slice_axis(t, axis + 1, 0, 1)
        return em.reshape(t, t.shape[:axis] + (count,) + t.shape[axis + 2:])

    @lowers(aten.max_pool2d_with_indices.default)
    def _max_pool(self, n):
        em = self.em
        x = self.v(n.args[0])
        kernel, stride, padding, dilation = self._pool_params(n, x)
        out_shape = tuple(_val_meta(n)[0].shape)
        if dilation == [1, 1]:
            N, C, H, W = x.shape
            xh = em.transpose(x, [0, 2, 3, 1], hint="nhwc")
            ph_hi, crop_h = self._fit_pad(H, kernel[0], padding[0], padding[0], stride[0])
            pw_hi, crop_w = self._fit_pad(W, kernel[1], padding[1], padding[1], stride[1])
            if crop_h or crop_w:
                xh = em.slice(xh, (0, 0, 0, 0), (N, H - crop_h, W - crop_w, C), hint="crop")
            y = em.max_pool2d(xh, kernel, stride, [padding[0], ph_hi, padding[1], pw_hi], hint="pool")
            out = em.transpose(y, [0, 3, 1, 2], hint="max_pool2d")
        else:
            win = self._pool_windows(x, kernel, stride, padding, dilation, out_shape[2:])
            out = em.reshape(em.reduce_max(win, [4]), out_shape, hint="max_pool2d")
        # The indices are not materialised: only max_pool2d_with_indices_backward may use them.
        for user in n.users:
            if user.target is operator.getitem and user.args[1] == 1:
                for u in user.users:
                    if u.target != aten.max_pool2d_with_indices_backward.default:
                        raise UnsupportedOpError(
                            f"{n.target}: the indices output is only supported as an input of "
                            f"max_pool2d_with_indices_backward (used by {u.target})")
        return (out, None)

    @lowers(aten.max_pool2d_with_indices_backward.default)
    def _max_pool_backward(self, n):
        # Route each window's gradient to the FIRST maximal element in row-major window order, like PyTorch's
        # indices: argmax over the window axis (TOSA argmax returns the first maximum) + a one-hot mask.
        em = self.em
        dy, x = self.v(n.args[0]), self.v(n.args[1])
        kernel, stride, padding, dilation = self._pool_params(n, x, first=2)
        N, C, H, W = x.shape
        OH, OW = dy.shape[2], dy.shape[3]
        K = kernel[0] * kernel[1]
        win = self._pool_windows(x, kernel, stride, padding, dilation, (OH, OW))
        idx = em.reshape(em.argmax(win, 4, hint="argmax"), (N, C, OH, OW, 1), hint="argmax")
        iota = em.const(np.arange(K, dtype=np.int32).reshape(1, 1, 1, 1, K), I32, hint="window_iota")
        hit = em.compare("equal", idx, iota, hint="is_argmax")
        g = em.select(hit, em.reshape(dy, (N, C, OH, OW, 1)), 0.0, hint="routed")  # [N,C,OH,OW,K]
        (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
        if (kh, kw) == (sh, sw) and (ph, pw) == (0, 0) and (dh, dw) == (1, 1):
            t = em.reshape(g, (N, C, OH, OW, kh, kw))
            t = em.transpose(t, [0, 1, 2, 4, 3, 5])
            t = em.reshape(t, (N, C, OH * kh, OW * kw))
            return em.pad(t, [(0, 0), (0, 0), (0, H - OH * kh), (0, W - OW * kw)], 0.0,
                          hint="max_pool2d_backward")
        Hp, Wp = H + 2 * ph, W + 2 * pw
        acc = None
        for i in range(kh):
            for j in range(kw):
                k = i * kw + j
                t = em.reshape(em.slice_axis(g, 4, k, 1), (N, C, OH, OW))
                t = self._zero_insert(t, 2, sh)
                t = self._zero_insert(t, 3, sw)
                t = em.pad(t, [(0, 0), (0, 0), (i * dh, Hp - i * dh - t.shape[2]),
                               (j * dw, Wp - j * dw - t.shape[3])], 0.0, hint="scatter")
                acc = t if acc is None else em.add(acc, t, hint="acc")
        return em.slice(acc, (0, 0, ph, pw), (N, C, H, W), hint="max_pool2d_backward")

