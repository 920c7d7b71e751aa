"""A small text emitter for TOSA (MLIR 22 syntax).

Values are tracked as :class:`Val` (SSA name, static shape, element type). Every helper checks
shapes eagerly so that a lowering bug shows up as a Python exception naming the aten node rather
than as an MLIR verifier error later. Constants and ``!tosa.shape`` values are emitted at their
first use and then reused: the function body is one block, so the first emission dominates every
later use.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

F32 = "f32"
I32 = "i32"
I1 = "i1"

_F32_MAX = "3.40282347E+38"


@dataclass(frozen=True)
class Val:
    name: str  # SSA name including the leading '%'
    shape: tuple
    dtype: str  # "f32" | "i32" | "i1"

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def type(self) -> str:
        return tensor_type(self.shape, self.dtype)


def tensor_type(shape, dtype) -> str:
    if len(shape) == 0:
        return f"tensor<{dtype}>"
    return "tensor<" + "x".join(str(int(d)) for d in shape) + f"x{dtype}>"


def _fmt_float(v: float) -> str:
    v = float(np.float32(v))
    if math.isnan(v):
        return "0x7FC00000"
    if math.isinf(v):
        return "0x7F800000" if v > 0 else "0xFF800000"
    return "%.9e" % v


def _fmt_elem(v, dtype) -> str:
    if dtype == F32:
        return _fmt_float(v)
    if dtype == I1:
        return "true" if bool(v) else "false"
    return str(int(v))


def dense_literal(arr: np.ndarray, dtype: str) -> str:
    arr = np.asarray(arr)
    flat = arr.reshape(-1)
    if flat.size > 0 and np.all(flat == flat[0]) and not (dtype == F32 and np.isnan(flat[0])):
        return f"dense<{_fmt_elem(flat[0], dtype)}>"

    def rec(a):
        if a.ndim == 0:
            return _fmt_elem(a.item(), dtype)
        return "[" + ", ".join(rec(x) for x in a) + "]"

    return f"dense<{rec(arr)}>"


def broadcast_shape(*shapes):
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


class Emitter:
    def __init__(self):
        self.lines: list[str] = []
        self._used: set[str] = set()
        self._shape_cache: dict = {}
        self._const_cache: dict = {}
        self.loc: str | None = None  # current location string (the aten op being lowered)
        self.prefix = "v"  # SSA-name prefix for intermediates (the fx node being lowered)

    # ------------------------------------------------------------------ names and lines
    def fresh(self, hint: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_]", "_", hint) or "v"
        if base[0].isdigit():
            base = "v" + base
        name, k = base, 1
        while name in self._used:
            name = f"{base}_{k}"
            k += 1
        self._used.add(name)
        return "%" + name

    def reserve(self, name: str) -> str:
        return self.fresh(name)

    def _hint(self, hint):
        if not hint or hint == self.prefix or self.prefix.startswith(hint):
            return self.prefix
        return f"{self.prefix}_{hint}"

    def comment(self, text: str):
        self.lines.append(f"  // {text}")

    def _emit(self, text: str):
        loc = f' loc("{self.loc}")' if self.loc else ""
        self.lines.append(f"  {text}{loc}")

    # ------------------------------------------------------------------ constants
    def const(self, arr, dtype=F32, shape=None, hint="c", attrs: str = "", cache=True) -> Val:
        np_dtype = {F32: np.float32, I32: np.int32, I1: np.bool_}[dtype]
        arr = np.asarray(arr, dtype=np_dtype)
        if shape is not None:
            arr = np.broadcast_to(arr, tuple(shape))
        shape = tuple(arr.shape)
        lit = dense_literal(arr, dtype)
        key = (lit, shape, dtype)
        if cache and not attrs and key in self._const_cache:
            return self._const_cache[key]
        ty = tensor_type(shape, dtype)
        name = self.fresh(hint)
        extra = f" {{{attrs}}}" if attrs else ""
        self._emit(f'{name} = "tosa.const"() <{{values = {lit} : {ty}}}>{extra} : () -> {ty}')
        v = Val(name, shape, dtype)
        if cache and not attrs:
            self._const_cache[key] = v
        return v

    def scalar(self, value, rank: int, dtype=F32) -> Val:
        """A constant of shape [1]*rank (broadcastable against any tensor of that rank)."""
        txt = ("%g" % value) if dtype == F32 else str(value)
        hint = "c_" + txt.replace("-", "m").replace("+", "").replace(".", "p")
        return self.const(value, dtype, shape=(1,) * rank, hint=hint)

    def shape_value(self, dims) -> str:
        dims = tuple(int(d) for d in dims)
        if dims in self._shape_cache:
            return self._shape_cache[dims]
        name = self.fresh("shape_" + ("x".join(str(d) for d in dims) if dims else "scalar"))
        r = len(dims)
        vals = "[" + ", ".join(str(d) for d in dims) + "]" if dims else ""
        self._emit(
            f"{name} = tosa.const_shape {{values = dense<{vals}> : tensor<{r}xindex>}} : () -> !tosa.shape<{r}>"
        )
        self._shape_cache[dims] = name
        return name

    def zp(self) -> Val:
        return self.const(0.0, F32, shape=(1,), hint="zp_f32")

    def _shift(self) -> Val:
        key = ("shift",)
        if key not in self._const_cache:
            name = self.fresh("shift0")
            self._emit(f'{name} = "tosa.const"() <{{values = dense<0> : tensor<1xi8>}}> : () -> tensor<1xi8>')
            self._const_cache[key] = Val(name, (1,), "i8")
        return self._const_cache[key]

    # ------------------------------------------------------------------ generic op
    def op(self, opname: str, operands, out_shape, out_dtype, attrs: str = "", hint=None) -> Val:
        name = self.fresh(self._hint(hint))
        ops = ", ".join(o.name if isinstance(o, Val) else o[0] for o in operands)
        tys = ", ".join(o.type if isinstance(o, Val) else o[1] for o in operands)
        out_ty = tensor_type(out_shape, out_dtype)
        props = f" <{{{attrs}}}>" if attrs else ""
        self._emit(f'{name} = "tosa.{opname}"({ops}){props} : ({tys}) -> {out_ty}')
        return Val(name, tuple(int(d) for d in out_shape), out_dtype)

    # ------------------------------------------------------------------ shape ops
    def reshape(self, v: Val, shape, hint="reshape") -> Val:
        shape = tuple(int(d) for d in shape)
        if shape == v.shape:
            return v
        assert int(np.prod(shape, dtype=np.int64)) == int(np.prod(v.shape, dtype=np.int64)), (v.shape, shape)
        s = self.shape_value(shape)
        return self.op("reshape", [v, (s, f"!tosa.shape<{len(shape)}>")], shape, v.dtype, hint=hint)

    def transpose(self, v: Val, perms, hint="transpose") -> Val:
        perms = [int(p) for p in perms]
        if perms == list(range(v.rank)):
            return v
        out = tuple(v.shape[p] for p in perms)
        return self.op("transpose", [v], out, v.dtype, f"perms = array<i32: {', '.join(map(str, perms))}>", hint)

    def to_rank(self, v: Val, rank: int) -> Val:
        if v.rank == rank:
            return v
        assert v.rank < rank, (v.shape, rank)
        return self.reshape(v, (1,) * (rank - v.rank) + v.shape, hint="bcast")

    def tile(self, v: Val, multiples, hint="tile") -> Val:
        multiples = tuple(int(m) for m in multiples)
        if all(m == 1 for m in multiples):
            return v
        out = tuple(d * m for d, m in zip(v.shape, multiples))
        s = self.shape_value(multiples)
        return self.op("tile", [v, (s, f"!tosa.shape<{len(multiples)}>")], out, v.dtype, hint=hint)

    def broadcast_to(self, v: Val, shape, hint="expand") -> Val:
        shape = tuple(int(d) for d in shape)
        v = self.to_rank(v, len(shape))
        mult = []
        for a, b in zip(v.shape, shape):
            assert a == b or a == 1, (v.shape, shape)
            mult.append(b // a if a == 1 else 1)
        return self.tile(v, mult, hint)

    def slice(self, v: Val, start, size, hint="slice") -> Val:
        start = tuple(int(s) for s in start)
        size = tuple(int(s) for s in size)
        if size == v.shape:
            return v
        r = v.rank
        a = self.shape_value(start)
        b = self.shape_value(size)
        return self.op("slice", [v, (a, f"!tosa.shape<{r}>"), (b, f"!tosa.shape<{r}>")], size, v.dtype, hint=hint)

    def slice_axis(self, v: Val, axis, start, length, hint="slice") -> Val:
        st = [0] * v.rank
        sz = list(v.shape)
        st[axis] = start
        sz[axis] = length
        return self.slice(v, st, sz, hint)

    def pad(self, v: Val, pads, value=0.0, hint="pad") -> Val:
        """pads: list of (before, after) per dim."""
        pads = [(int(a), int(b)) for a, b in pads]
        if all(a == 0 and b == 0 for a, b in pads):
            return v
        if 2 * v.rank > 6:
            # MLIR 22's TOSA level check (run by tosa-to-linalg-pipeline, hence by amp-train) rejects the
            # !tosa.shape<2*rank> padding operand of tosa.pad when 2*rank > MAX_RANK = 6: concatenate
            # constant blocks instead.
            for axis, (a, b) in enumerate(pads):
                parts = []
                for n in (a, b):
                    shp = list(v.shape)
                    shp[axis] = n
                    parts.append(self.const(value, v.dtype, shape=shp, hint="pad_block") if n else None)
                seq = [p for p in (parts[0], v, parts[1]) if p is not None]
                v = self.concat(seq, axis, hint=hint)
            return v
        flat = [x for ab in pads for x in ab]
        s = self.shape_value(flat)
        pv = self.const(value, v.dtype, shape=(1,), hint="pad_value")
        out = tuple(d + a + b for d, (a, b) in zip(v.shape, pads))
        return self.op("pad", [v, (s, f"!tosa.shape<{len(flat)}>"), pv], out, v.dtype, hint=hint)

    def concat(self, vs, axis, hint="concat") -> Val:
        if len(vs) == 1:
            return vs[0]
        out = list(vs[0].shape)
        out[axis] = sum(v.shape[axis] for v in vs)
        return self.op("concat", vs, out, vs[0].dtype, f"axis = {axis} : i32", hint)

    def reverse(self, v: Val, axis, hint="reverse") -> Val:
        if v.shape[axis] == 1:
            return v
        return self.op("reverse", [v], v.shape, v.dtype, f"axis = {axis} : i32", hint)

    # ------------------------------------------------------------------ elementwise
    def _binary_operands(self, a, b):
        if not isinstance(a, Val):
            a = self.scalar(a, b.rank, b.dtype)
        if not isinstance(b, Val):
            b = self.scalar(b, a.rank, a.dtype)
        r = max(a.rank, b.rank)
        a, b = self.to_rank(a, r), self.to_rank(b, r)
        return a, b, broadcast_shape(a.shape, b.shape)

    def binary(self, opname, a, b, hint=None, out_dtype=None) -> Val:
        a, b, shape = self._binary_operands(a, b)
        return self.op(opname, [a, b], shape, out_dtype or a.dtype, hint=hint or opname)

    def add(self, a, b, hint="add"):
        return self.binary("add", a, b, hint)

    def sub(self, a, b, hint="sub"):
        return self.binary("sub", a, b, hint)

    def mul(self, a, b, hint="mul") -> Val:
        a, b, shape = self._binary_operands(a, b)
        return self.op("mul", [a, b, self._shift()], shape, a.dtype, hint=hint)

    def pow(self, a, b, hint="pow"):
        return self.binary("pow", a, b, hint)

    def maximum(self, a, b, hint="maximum"):
        return self.binary("maximum", a, b, hint)

    def minimum(self, a, b, hint="minimum"):
        return self.binary("minimum", a, b, hint)

    def compare(self, opname, a, b, hint=None) -> Val:
        return self.binary(opname, a, b, hint or opname, out_dtype=I1)

    def logical_and(self, a, b, hint="and"):
        return self.binary("logical_and", a, b, hint)

    def select(self, cond: Val, a, b, hint="select") -> Val:
        ref = a if isinstance(a, Val) else b
        r = max(cond.rank, ref.rank if isinstance(ref, Val) else 0,
                b.rank if isinstance(b, Val) else 0, a.rank if isinstance(a, Val) else 0)
        dt = ref.dtype if isinstance(ref, Val) else F32
        if not isinstance(a, Val):
            a = self.scalar(a, r, dt)
        if not isinstance(b, Val):
            b = self.scalar(b, r, dt)
        cond, a, b = self.to_rank(cond, r), self.to_rank(a, r), self.to_rank(b, r)
        shape = broadcast_shape(cond.shape, a.shape, b.shape)
        return self.op("select", [cond, a, b], shape, a.dtype, hint=hint)

    def unary(self, opname, v: Val, hint=None, out_dtype=None) -> Val:
        return self.op(opname, [v], v.shape, out_dtype or v.dtype, hint=hint or opname)

    def exp(self, v, hint="exp"):
        return self.unary("exp", v, hint)

    def log(self, v, hint="log"):
        return self.unary("log", v, hint)

    def tanh(self, v, hint="tanh"):
        return self.unary("tanh", v, hint)

    def erf(self, v, hint="erf"):
        return self.unary("erf", v, hint)

    def reciprocal(self, v, hint="recip"):
        return self.unary("reciprocal", v, hint)

    def rsqrt(self, v, hint="rsqrt"):
        return self.unary("rsqrt", v, hint)

    def sigmoid(self, v, hint="sigmoid"):
        return self.unary("sigmoid", v, hint)

    def abs(self, v, hint="abs"):
        return self.unary("abs", v, hint)

    def logical_not(self, v, hint="not"):
        return self.unary("logical_not", v, hint)

    def neg(self, v, hint="neg"):
        return self.mul(v, -1.0, hint)

    def sqrt(self, v, hint="sqrt"):
        # No tosa.sqrt: pow(x, 0.5) (0 at x = 0, unlike x * rsqrt(x)).
        return self.pow(v, 0.5, hint)

    def clamp(self, v: Val, lo=None, hi=None, hint="clamp") -> Val:
        lo_s = _fmt_float(lo) if lo is not None else "-" + _F32_MAX
        hi_s = _fmt_float(hi) if hi is not None else _F32_MAX
        return self.op("clamp", [v], v.shape, v.dtype, f"min_val = {lo_s} : f32, max_val = {hi_s} : f32", hint)

    def cast(self, v: Val, dtype, hint="cast") -> Val:
        if v.dtype == dtype:
            return v
        return self.op("cast", [v], v.shape, dtype, hint=hint)

    # ------------------------------------------------------------------ reductions
    def reduce(self, opname, v: Val, axes, keepdims=True, hint=None) -> Val:
        axes = sorted({a % v.rank for a in axes}) if v.rank else []
        for a in axes:
            if v.shape[a] == 1:
                continue
            out = list(v.shape)
            out[a] = 1
            v = self.op(opname, [v], out, v.dtype, f"axis = {a} : i32", hint or opname)
        if not keepdims:
            v = self.reshape(v, tuple(d for i, d in enumerate(v.shape) if i not in axes))
        return v

    def reduce_sum(self, v, axes, keepdims=True, hint="sum"):
        return self.reduce("reduce_sum", v, axes, keepdims, hint)

    def reduce_max(self, v, axes, keepdims=True, hint="max"):
        return self.reduce("reduce_max", v, axes, keepdims, hint)

    def argmax(self, v: Val, axis, hint="argmax") -> Val:
        out = tuple(d for i, d in enumerate(v.shape) if i != axis)
        return self.op("argmax", [v], out, I32, f"axis = {axis} : i32", hint)

    # ------------------------------------------------------------------ matmul
    def matmul(self, a: Val, b: Val, hint="matmul") -> Val:
        """[..., M, K] x [..., K, N] with batch dims broadcast (both of rank >= 2)."""
        assert a.rank >= 2 and b.rank >= 2 and a.shape[-1] == b.shape[-2], (a.shape, b.shape)
        batch = broadcast_shape(a.shape[:-2], b.shape[:-2])
        if a.shape[:-2] != batch:
            a = self.broadcast_to(a, batch + a.shape[-2:])
        if b.shape[:-2] != batch:
            b = self.broadcast_to(b, batch + b.shape[-2:])
        nb = int(np.prod(batch, dtype=np.int64)) if batch else 1
        m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
        a3 = self.reshape(a, (nb, m, k), hint="lhs3d")
        b3 = self.reshape(b, (nb, k, n), hint="rhs3d")
        zp = self.zp()
        c3 = self.op("matmul", [a3, b3, zp, zp], (nb, m, n), F32, hint=hint)
        return self.reshape(c3, batch + (m, n), hint=hint)

    # ------------------------------------------------------------------ conv / pool (NHWC)
    def conv2d(self, x: Val, w: Val, bias: Val, pad, stride, dilation, hint="conv2d") -> Val:
        n, h, wd, _ = x.shape
        oc, kh, kw, _ = w.shape
        oh = (h - 1 + pad[0] + pad[1] - (kh - 1) * dilation[0]) // stride[0] + 1
        ow = (wd - 1 + pad[2] + pad[3] - (kw - 1) * dilation[1]) // stride[1] + 1
        zp = self.zp()
        attrs = (f"pad = array<i64: {', '.join(map(str, pad))}>, stride = array<i64: {stride[0]}, {stride[1]}>, "
                 f"dilation = array<i64: {dilation[0]}, {dilation[1]}>, acc_type = f32")
        return self.op("conv2d", [x, w, bias, zp, zp], (n, oh, ow, oc), F32, attrs, hint)

    def max_pool2d(self, x: Val, kernel, stride, pad, hint="max_pool2d") -> Val:
        n, h, w, c = x.shape
        oh = (h + pad[0] + pad[1] - kernel[0]) // stride[0] + 1
        ow = (w + pad[2] + pad[3] - kernel[1]) // stride[1] + 1
        attrs = (f"kernel = array<i64: {kernel[0]}, {kernel[1]}>, stride = array<i64: {stride[0]}, {stride[1]}>, "
                 f"pad = array<i64: {', '.join(map(str, pad))}>")
        return self.op("max_pool2d", [x], (n, oh, ow, c), x.dtype, attrs, hint)
