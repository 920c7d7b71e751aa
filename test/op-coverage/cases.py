"""The cases of the op-coverage matrix: for each op of the default precision policy, small steps that
apply it, written for one element type, with a float64 numpy reference.

An op's list of cases comes from `cases_for(op)`, keyed by the op names that
`amp-opt --amp-list-policy-ops` prints (every op with an AmpPolicyOpInterface model). An op that has
no case here is reported by op_coverage.py as an error ("the policy names an op the matrix does not
cover"), so a new policy entry cannot go untested; an op that cannot be tested at all is in EXCLUDED
with its reason.

A case is a function body fragment: it reads f32 input tensors (the step's arguments, given the
values of `inputs`), converts them to the element type under test (arith.truncf for f16 / bf16),
applies the op in that type, converts the result back to f32 (arith.extf, or uitofp / sitofp for
i1 / i32 results) and is compared with `reference(*inputs_rounded)` computed in float64 on the
inputs rounded to the element type.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

# Ops that no case can exercise, with the reason (a documented exclusion, not a silent skip).
EXCLUDED = {
    "linalg.div_unsigned": "integer-only (unsigned division); no float semantics",
    "linalg.pooling_nhwc_max_unsigned": "integer-only (unsigned comparison); no float semantics",
    "linalg.pooling_nhwc_min_unsigned": "integer-only (unsigned comparison); no float semantics",
    "linalg.pooling_nwc_max_unsigned": "integer-only (unsigned comparison); no float semantics",
    "linalg.pooling_nwc_min_unsigned": "integer-only (unsigned comparison); no float semantics",
    "linalg.quantized_matmul": "quantized (integer zero points); no float op to cover",
    "linalg.quantized_batch_matmul": "quantized (integer zero points); no float op to cover",
    "linalg.fill_rng_2d": "pseudo-random fill (integer seed); no deterministic reference",
    "linalg.generic": "not one op: every case of this matrix outside TOSA and the named ops is a linalg.generic",
    "linalg.map": "not one op: a linalg.generic with parallel loops (the math and arith cases)",
    "linalg.elementwise": "a kind attribute over the named elementwise ops (linalg.exp, linalg.add, ... covered)",
    "linalg.contract": "einsum notation over the named contractions (linalg.matmul, batch_matmul, ... covered)",
    "linalg.batch_mmt4d": "packed (tiled) layout produced by data-tiling passes, never by an importer",
    "linalg.mmt4d": "packed (tiled) layout produced by data-tiling passes, never by an importer",
}


@dataclass
class Case:
    """One step fragment. `body(ns, T)` returns MLIR lines given a name prefix and the element type
    (f32, f16, bf16); its inputs are `%{ns}in{i}` (f32) and it defines `%{ns}out` (f32, out_shape)."""
    name: str
    in_shapes: list
    out_shape: tuple
    body: Callable
    reference: Callable
    domain: str = "any"          # input values: any | pos | unit | ge1 | nonzero | int | int exponent
    reduction: int = 1           # terms summed per output element (scales the tolerance)
    kind: str = "float"          # float | bool | int: the result type before conversion to f32
    seed: int = 0
    note: str = ""
    large: bool = False          # an elementwise op: some inputs get large magnitudes (op_coverage.LARGE)


def ttype(shape, t):
    return "tensor<" + "".join(f"{d}x" for d in shape) + t + ">"


def to_type(ns, i, shape, t):
    """Lines converting input %{ns}in{i} to element type t; returns (lines, name)."""
    if t == "f32":
        return [], f"%{ns}in{i}"
    return [f"%{ns}x{i} = arith.truncf %{ns}in{i} : {ttype(shape, 'f32')} to {ttype(shape, t)}"], f"%{ns}x{i}"


def from_type(ns, src, shape, t, kind):
    """Lines converting `src` (element type t, or i1 / i32) to f32; returns (lines, name)."""
    if kind == "bool":
        return [f"%{ns}out = arith.uitofp {src} : {ttype(shape, 'i1')} to {ttype(shape, 'f32')}"], f"%{ns}out"
    if kind == "int":
        return [f"%{ns}out = arith.sitofp {src} : {ttype(shape, 'i32')} to {ttype(shape, 'f32')}"], f"%{ns}out"
    if t == "f32":
        return [], src
    return [f"%{ns}out = arith.extf {src} : {ttype(shape, t)} to {ttype(shape, 'f32')}"], f"%{ns}out"


def simple(name, in_shapes, out_shape, op_lines, reference, **kw):
    """A case whose op lines use {x0}, {x1}, ... (the converted inputs), {T} / {E} (tensor / element
    type helpers) and define {r} in the tested type."""
    kind = kw.get("kind", "float")

    def body(ns, t):
        """MLIR lines and the name of the f32 result."""
        lines, names = [], {}
        for i, s in enumerate(in_shapes):
            converted, names[f"x{i}"] = to_type(ns, i, s, t)
            lines += converted
        names.update(r=f"%{ns}r", ns=ns, E=t)
        for line in op_lines(t):
            lines.append(line.format(**names))
        converted, out = from_type(ns, f"%{ns}r", out_shape, t, kind)
        return lines + converted, out

    return Case(name, list(in_shapes), tuple(out_shape), body, reference, **kw)


# --------------------------------------------------------------------------- scalar ops in generics

MATH_UNARY = {
    "math.absf": (np.abs, "any"), "math.acos": (np.arccos, "unit"), "math.acosh": (np.arccosh, "ge1"),
    "math.asin": (np.arcsin, "unit"), "math.asinh": (np.arcsinh, "any"), "math.atan": (np.arctan, "any"),
    "math.atanh": (np.arctanh, "unit"), "math.cbrt": (np.cbrt, "any"), "math.ceil": (np.ceil, "any"),
    "math.cos": (np.cos, "any"), "math.cosh": (np.cosh, "any"),
    "math.erf": (np.vectorize(math.erf), "any"), "math.erfc": (np.vectorize(math.erfc), "any"),
    "math.exp": (np.exp, "any"), "math.exp2": (np.exp2, "any"), "math.expm1": (np.expm1, "any"),
    "math.floor": (np.floor, "any"), "math.log": (np.log, "pos"), "math.log10": (np.log10, "pos"),
    "math.log1p": (np.log1p, "unit"), "math.log2": (np.log2, "pos"), "math.round": (None, "any"),
    "math.roundeven": (np.round, "any"), "math.rsqrt": (lambda x: 1 / np.sqrt(x), "pos"),
    "math.sin": (np.sin, "any"), "math.sinh": (np.sinh, "any"), "math.sqrt": (np.sqrt, "pos"),
    "math.tan": (np.tan, "unit"), "math.tanh": (np.tanh, "any"), "math.trunc": (np.trunc, "any"),
    "arith.negf": (np.negative, "any"),
}
MATH_UNARY["math.round"] = (lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), "any")

MATH_PREDICATES = {
    "math.isfinite": np.isfinite, "math.isinf": np.isinf, "math.isnan": np.isnan,
    "math.isnormal": lambda x: np.isfinite(x) & (np.abs(x) >= 2.0 ** -14),
}

BINARY = {
    "arith.addf": (np.add, "any"), "arith.subf": (np.subtract, "any"), "arith.mulf": (np.multiply, "any"),
    "arith.divf": (np.divide, "nonzero"), "arith.remf": (np.fmod, "nonzero"),
    "arith.maximumf": (np.maximum, "any"), "arith.minimumf": (np.minimum, "any"),
    "arith.maxnumf": (np.fmax, "any"), "arith.minnumf": (np.fmin, "any"),
    "math.atan2": (np.arctan2, "nonzero"), "math.copysign": (np.copysign, "any"),
    "math.powf": (np.power, "pos"),
}

REDUCING = {"arith.addf": (np.sum, "0.0"), "arith.mulf": (np.prod, "1.0"),
            "arith.maximumf": (np.max, "0xFF800000"), "arith.minimumf": (np.min, "0x7F800000"),
            "arith.maxnumf": (np.max, "0xFF800000"), "arith.minnumf": (np.min, "0x7F800000")}

S = (4, 8)
ID2 = "affine_map<(i, j) -> (i, j)>"
ROW2 = "affine_map<(i, j) -> (0, j)>"


def generic_elementwise(name, nin, scalar_lines, reference, *, domain="any", broadcast=False,
                        kind="float", in_element=None):
    """linalg.generic over 4x8 applying scalar op lines ({a0}, {a1}, {E} -> {y}); with `broadcast`
    the last input is 1x8, read through (i, j) -> (0, j)."""
    shapes = [S] * nin
    if broadcast:
        shapes[-1] = (1, 8)

    def lines(t):
        out_e = {"bool": "i1", "int": "i32"}.get(kind, t)
        maps = ", ".join([ID2] * (nin - 1) + [ROW2 if broadcast else ID2] + [ID2])
        args = ", ".join(f"{{x{i}}}" for i in range(nin))
        types = ", ".join(ttype(s, t) for s in shapes)
        bbargs = ", ".join(f"%a{i}: {t}" for i in range(nin))
        body = [l.format(**{f"a{i}": f"%a{i}" for i in range(nin)}, E=t, y="%y") for l in scalar_lines(t)]
        return ([f"{{r}}_init = tensor.empty() : {ttype(S, out_e)}",
                 f"{{r}} = linalg.generic {{{{indexing_maps = [{maps}], iterator_types = [\"parallel\", \"parallel\"]}}}} "
                 f"ins({args} : {types}) outs({{r}}_init : {ttype(S, out_e)}) {{{{",
                 f"^bb0({bbargs}, %o: {out_e}):"]
                + ["  " + b.replace("{", "{{").replace("}", "}}") for b in body]
                + ["  linalg.yield %y : " + out_e, f"}}}} -> {ttype(S, out_e)}"])

    return simple(name, shapes, S, lines, reference, domain=domain, kind=kind, large=kind == "float")


def generic_reduce(name, combiner, init, axis, reference):
    """linalg.generic reducing 4x8 along `axis` with `combiner` (an arith op)."""
    out = (8,) if axis == 0 else (4,)
    out_map = "affine_map<(i, j) -> (j)>" if axis == 0 else "affine_map<(i, j) -> (i)>"
    iters = '["reduction", "parallel"]' if axis == 0 else '["parallel", "reduction"]'

    def lines(t):
        return [f"%{{ns}}c = arith.constant {init} : {t}" if not init.startswith("0x")
                else f"%{{ns}}c = arith.constant {hexfloat(init, t)} : {t}",
                f"%{{ns}}e = tensor.empty() : {ttype(out, t)}",
                f"%{{ns}}f = linalg.fill ins(%{{ns}}c : {t}) outs(%{{ns}}e : {ttype(out, t)}) -> {ttype(out, t)}",
                f"{{r}} = linalg.generic {{{{indexing_maps = [{ID2}, {out_map}], iterator_types = {iters}}}}} "
                f"ins({{x0}} : {ttype(S, t)}) outs(%{{ns}}f : {ttype(out, t)}) {{{{",
                f"^bb0(%a: {t}, %acc: {t}):",
                f"  %y = {combiner} %a, %acc : {t}",
                f"  linalg.yield %y : {t}",
                f"}}}} -> {ttype(out, t)}"]

    return simple(name, [S], out, lines, lambda x: reference(x, axis=axis), reduction=S[axis],
                  domain="pos" if combiner == "arith.mulf" else "any")


def hexfloat(text, t):
    """-inf / +inf as a hex literal of element type t."""
    negative = text == "0xFF800000"
    return {"f32": "0xFF800000" if negative else "0x7F800000",
            "f16": "0xFC00" if negative else "0x7C00",
            "bf16": "0xFF80" if negative else "0x7F80"}[t]


def arith_math_cases(op):
    cases = []
    if op in MATH_UNARY:
        ref, dom = MATH_UNARY[op]
        cases.append(generic_elementwise("elementwise", 1, lambda t: [f"{{y}} = {op} {{a0}} : {{E}}"], ref,
                                         domain=dom))
    if op in MATH_PREDICATES:
        cases.append(generic_elementwise("elementwise", 1, lambda t: [f"{{y}} = {op} {{a0}} : {{E}}"],
                                         MATH_PREDICATES[op], kind="bool"))
    if op in BINARY:
        ref, dom = BINARY[op]
        for bc in (False, True):
            cases.append(generic_elementwise("broadcast" if bc else "elementwise", 2,
                                             lambda t: [f"{{y}} = {op} {{a0}}, {{a1}} : {{E}}"], ref,
                                             domain=dom, broadcast=bc))
    if op in REDUCING:
        ref, init = REDUCING[op]
        for axis in (0, 1):
            cases.append(generic_reduce(f"reduce axis {axis}", op, init, axis, ref))
    if op == "arith.cmpf":
        for pred, fn in (("olt", np.less), ("oeq", np.equal), ("uge", np.greater_equal)):
            cases.append(generic_elementwise(f"cmpf {pred}", 2,
                                             lambda t, p=pred: [f"{{y}} = arith.cmpf {p}, {{a0}}, {{a1}} : {{E}}"],
                                             fn, kind="bool", domain="int"))
    if op == "arith.select":
        cases.append(generic_elementwise(
            "select", 3, lambda t: ["%c = arith.cmpf olt, {a0}, {a1} : {E}", "{y} = arith.select %c, {a1}, {a2} : {E}"],
            lambda a, b, c: np.where(a < b, b, c)))
    if op == "math.powf":
        cases.append(generic_elementwise("negative base", 2, lambda t: ["{y} = math.powf {a0}, {a1} : {E}"], np.power,
                                         domain="int exponent"))
    if op == "math.fma":
        cases.append(generic_elementwise("elementwise", 3, lambda t: ["{y} = math.fma {a0}, {a1}, {a2} : {E}"],
                                         lambda a, b, c: a * b + c))
    if op == "math.fpowi":
        cases.append(generic_elementwise("elementwise", 1,
                                         lambda t: ["%n = arith.constant 3 : i32", "{y} = math.fpowi {a0}, %n : {E}, i32"],
                                         lambda a: a ** 3))
    return cases


# --------------------------------------------------------------------------- TOSA

TOSA_UNARY = {
    "tosa.abs": (np.abs, "any"), "tosa.ceil": (np.ceil, "any"), "tosa.floor": (np.floor, "any"),
    "tosa.cos": (np.cos, "any"), "tosa.sin": (np.sin, "any"), "tosa.exp": (np.exp, "any"),
    "tosa.log": (np.log, "pos"), "tosa.erf": (np.vectorize(math.erf), "any"),
    "tosa.reciprocal": (lambda x: 1 / x, "nonzero"), "tosa.rsqrt": (lambda x: 1 / np.sqrt(x), "pos"),
    "tosa.sigmoid": (lambda x: 1 / (1 + np.exp(-x)), "any"), "tosa.tanh": (np.tanh, "any"),
    "tosa.identity": (lambda x: x, "any"),
}
TOSA_BINARY = {
    "tosa.add": (np.add, "any"), "tosa.sub": (np.subtract, "any"), "tosa.maximum": (np.maximum, "any"),
    "tosa.minimum": (np.minimum, "any"), "tosa.pow": (np.power, "pos"),
}
TOSA_COMPARE = {"tosa.equal": np.equal, "tosa.greater": np.greater, "tosa.greater_equal": np.greater_equal}


def shape_const(ns, name, dims):
    """A format template (braces doubled) defining a !tosa.shape constant."""
    return (f"%{ns}{name} = tosa.const_shape {{{{values = dense<[{', '.join(map(str, dims))}]> : "
            f"tensor<{len(dims)}xindex>}}}} : () -> !tosa.shape<{len(dims)}>")


def zp(ns, t, name="zp"):
    """A format template defining a zero point of element type t."""
    return f"%{ns}{name} = \"tosa.const\"() <{{{{values = dense<0.0> : tensor<1x{t}>}}}}> : () -> tensor<1x{t}>"


def tosa_cases(op):
    cases = []
    if op in TOSA_UNARY:
        ref, dom = TOSA_UNARY[op]
        cases.append(simple("elementwise", [S], S, lambda t: [f"{{r}} = {op} {{x0}} : ({{T}}) -> {{T}}".replace(
            "{T}", ttype(S, t))], ref, domain=dom, large=True))
    if op in TOSA_BINARY:
        ref, dom = TOSA_BINARY[op]
        for b in (S, (1, 8), (4, 1)):
            cases.append(simple("elementwise" if b == S else f"broadcast {b[0]}x{b[1]}", [S, b], S,
                                lambda t, b=b: [f"{{r}} = {op} {{x0}}, {{x1}} : ({ttype(S, t)}, {ttype(b, t)}) -> {ttype(S, t)}"],
                                ref, domain=dom, large=True))
    if op == "tosa.pow":
        cases.append(simple("negative base", [S, S], S,
                            lambda t: [f"{{r}} = tosa.pow {{x0}}, {{x1}} : ({ttype(S, t)}, {ttype(S, t)}) -> {ttype(S, t)}"],
                            np.power, domain="int exponent"))
    if op == "tosa.mul":
        for b in (S, (1, 8)):
            cases.append(simple("elementwise" if b == S else "broadcast 1x8", [S, b], S,
                                lambda t, b=b: ["%{ns}shift = \"tosa.const\"() <{{values = dense<0> : tensor<1xi8>}}> : () -> tensor<1xi8>",
                                                f"{{r}} = tosa.mul {{x0}}, {{x1}}, %{{ns}}shift : ({ttype(S, t)}, {ttype(b, t)}, tensor<1xi8>) -> {ttype(S, t)}"],
                                np.multiply, large=True))
    if op in TOSA_COMPARE:
        for b in (S, (1, 8)):
            cases.append(simple("elementwise" if b == S else "broadcast 1x8", [S, b], S,
                                lambda t, b=b: [f"{{r}} = {op} {{x0}}, {{x1}} : ({ttype(S, t)}, {ttype(b, t)}) -> {ttype(S, 'i1')}"],
                                TOSA_COMPARE[op], kind="bool", domain="int"))
    if op == "tosa.negate":
        cases.append(simple("elementwise", [S], S, lambda t: [
            zp("{ns}", t).replace("{ns}", "{ns}"),
            f"{{r}} = tosa.negate {{x0}}, %{{ns}}zp, %{{ns}}zp : ({ttype(S, t)}, tensor<1x{t}>, tensor<1x{t}>) -> {ttype(S, t)}"],
            np.negative, large=True))
    if op == "tosa.clamp":
        cases.append(simple("elementwise", [S], S, lambda t: [
            f"{{r}} = tosa.clamp {{x0}} {{{{min_val = -0.5 : {t}, max_val = 1.0 : {t}}}}} : ({ttype(S, t)}) -> {ttype(S, t)}"],
            lambda x: np.clip(x, -0.5, 1.0), large=True))
    if op == "tosa.select":
        cases.append(simple("elementwise", [S, S, S], S, lambda t: [
            f"%{{ns}}c = tosa.greater {{x0}}, {{x1}} : ({ttype(S, t)}, {ttype(S, t)}) -> {ttype(S, 'i1')}",
            f"{{r}} = tosa.select %{{ns}}c, {{x1}}, {{x2}} : ({ttype(S, 'i1')}, {ttype(S, t)}, {ttype(S, t)}) -> {ttype(S, t)}"],
            lambda a, b, c: np.where(a > b, b, c), large=True))
    reduce_refs = {"tosa.reduce_sum": np.sum, "tosa.reduce_max": np.max, "tosa.reduce_min": np.min,
                   "tosa.reduce_product": np.prod}
    if op in reduce_refs:
        for axis in (0, 1):
            out = (1, 8) if axis == 0 else (4, 1)
            cases.append(simple(f"reduce axis {axis}", [S], out, lambda t, axis=axis, out=out: [
                f"{{r}} = {op} {{x0}} {{{{axis = {axis} : i32}}}} : ({ttype(S, t)}) -> {ttype(out, t)}"],
                lambda x, axis=axis, f=reduce_refs[op]: f(x, axis=axis, keepdims=True), reduction=S[axis],
                domain="pos" if op == "tosa.reduce_product" else "any"))
    if op == "tosa.argmax":
        for axis in (0, 1):
            out = (8,) if axis == 0 else (4,)
            cases.append(simple(f"axis {axis}", [S], out, lambda t, axis=axis, out=out: [
                f"{{r}} = tosa.argmax {{x0}} {{{{axis = {axis} : i32}}}} : ({ttype(S, t)}) -> {ttype(out, 'i32')}"],
                lambda x, axis=axis: np.argmax(x, axis=axis), kind="int", domain="distinct"))
    if op == "tosa.matmul":
        cases.append(simple("2x4x8 * 2x8x3", [(2, 4, 8), (2, 8, 3)], (2, 4, 3), lambda t: [
            zp("{ns}", t), f"{{r}}32 = tosa.matmul {{x0}}, {{x1}}, %{{ns}}zp, %{{ns}}zp : ({ttype((2, 4, 8), t)}, {ttype((2, 8, 3), t)}, tensor<1x{t}>, tensor<1x{t}>) -> {ttype((2, 4, 3), 'f32')}",
            f"{{r}} = arith.truncf {{r}}32 : {ttype((2, 4, 3), 'f32')} to {ttype((2, 4, 3), t)}" if t != "f32"
            else f"{{r}} = arith.maximumf {{r}}32, {{r}}32 : {ttype((2, 4, 3), 'f32')}"],
            lambda a, b: a @ b, reduction=8, note="f32 result (f32 accumulation)"))
    if op in ("tosa.conv2d", "tosa.depthwise_conv2d", "tosa.transpose_conv2d", "tosa.conv3d"):
        cases += tosa_conv_cases(op)
    if op in ("tosa.avg_pool2d", "tosa.max_pool2d"):
        for pad in ((0, 0, 0, 0), (0, 1, 0, 1)):
            ih = iw = 8 - pad[1]  # (size + padding - kernel) divisible by the stride
            oh = (ih + pad[0] + pad[1] - 2) // 2 + 1
            ow = (iw + pad[2] + pad[3] - 2) // 2 + 1
            ins, outs = (1, ih, iw, 2), (1, oh, ow, 2)
            attrs = (f"kernel = array<i64: 2, 2>, pad = array<i64: {', '.join(map(str, pad))}>, "
                     f"stride = array<i64: 2, 2>")

            def lines(t, attrs=attrs, ins=ins, outs=outs):
                if op == "tosa.max_pool2d":
                    return [f"{{r}} = tosa.max_pool2d {{x0}} {{{{{attrs}}}}} : ({ttype(ins, t)}) -> {ttype(outs, t)}"]
                return [zp("{ns}", t), f"{{r}} = tosa.avg_pool2d {{x0}}, %{{ns}}zp, %{{ns}}zp {{{{acc_type = f32, {attrs}}}}} : "
                        f"({ttype(ins, t)}, tensor<1x{t}>, tensor<1x{t}>) -> {ttype(outs, t)}"]

            cases.append(simple(f"{ih}x{iw} k2 s2 pad {''.join(map(str, pad))}", [ins], outs, lines,
                                lambda x, pad=pad, oh=oh, ow=ow: pool_ref(x, pad, oh, ow, op == "tosa.avg_pool2d"),
                                reduction=4))
    if op == "tosa.concat":
        for axis in (0, 1):
            out = (8, 8) if axis == 0 else (4, 16)
            cases.append(simple(f"axis {axis}", [S, S], out, lambda t, axis=axis, out=out: [
                f"{{r}} = tosa.concat {{x0}}, {{x1}} {{{{axis = {axis} : i32}}}} : ({ttype(S, t)}, {ttype(S, t)}) -> {ttype(out, t)}"],
                lambda a, b, axis=axis: np.concatenate([a, b], axis=axis)))
    if op == "tosa.pad":
        cases.append(simple("1,0,2,1", [S], (5, 11), lambda t: [
            shape_const("{ns}", "p", [1, 0, 2, 1]),
            f"%{{ns}}v = \"tosa.const\"() <{{{{values = dense<0.5> : tensor<1x{t}>}}}}> : () -> tensor<1x{t}>",
            f"{{r}} = tosa.pad {{x0}}, %{{ns}}p, %{{ns}}v : ({ttype(S, t)}, !tosa.shape<4>, tensor<1x{t}>) -> {ttype((5, 11), t)}"],
            lambda x: np.pad(x, ((1, 0), (2, 1)), constant_values=0.5)))
    if op == "tosa.reshape":
        cases.append(simple("4x8 -> 2x16", [S], (2, 16), lambda t: [
            shape_const("{ns}", "s", [2, 16]),
            f"{{r}} = tosa.reshape {{x0}}, %{{ns}}s : ({ttype(S, t)}, !tosa.shape<2>) -> {ttype((2, 16), t)}"],
            lambda x: x.reshape(2, 16)))
    if op == "tosa.reverse":
        for axis in (0, 1):
            cases.append(simple(f"axis {axis}", [S], S, lambda t, axis=axis: [
                f"{{r}} = tosa.reverse {{x0}} {{{{axis = {axis} : i32}}}} : ({ttype(S, t)}) -> {ttype(S, t)}"],
                lambda x, axis=axis: np.flip(x, axis=axis)))
    if op == "tosa.slice":
        cases.append(simple("[1:3, 2:7]", [S], (2, 5), lambda t: [
            shape_const("{ns}", "b", [1, 2]), shape_const("{ns}", "s", [2, 5]),
            f"{{r}} = tosa.slice {{x0}}, %{{ns}}b, %{{ns}}s : ({ttype(S, t)}, !tosa.shape<2>, !tosa.shape<2>) -> {ttype((2, 5), t)}"],
            lambda x: x[1:3, 2:7]))
    if op == "tosa.tile":
        cases.append(simple("2x1", [S], (8, 8), lambda t: [
            shape_const("{ns}", "m", [2, 1]),
            f"{{r}} = tosa.tile {{x0}}, %{{ns}}m : ({ttype(S, t)}, !tosa.shape<2>) -> {ttype((8, 8), t)}"],
            lambda x: np.tile(x, (2, 1))))
    if op == "tosa.transpose":
        cases.append(simple("perms 1,0", [S], (8, 4), lambda t: [
            f"{{r}} = tosa.transpose {{x0}} {{{{perms = array<i32: 1, 0>}}}} : ({ttype(S, t)}) -> {ttype((8, 4), t)}"],
            lambda x: x.T))
    if op == "tosa.gather":
        idx = [[3, 0, 1], [2, 2, 0]]
        cases.append(simple("2x4x3 by 2x3", [(2, 4, 3)], (2, 3, 3), lambda t: [
            f"%{{ns}}i = \"tosa.const\"() <{{{{values = dense<{idx}> : tensor<2x3xi32>}}}}> : () -> tensor<2x3xi32>",
            f"{{r}} = tosa.gather {{x0}}, %{{ns}}i : ({ttype((2, 4, 3), t)}, tensor<2x3xi32>) -> {ttype((2, 3, 3), t)}"],
            lambda v: np.stack([v[n][idx[n]] for n in range(2)])))
    if op == "tosa.scatter":
        idx = [[3, 0], [1, 2]]
        cases.append(simple("2x4x3 at 2x2", [(2, 4, 3), (2, 2, 3)], (2, 4, 3), lambda t: [
            f"%{{ns}}i = \"tosa.const\"() <{{{{values = dense<{idx}> : tensor<2x2xi32>}}}}> : () -> tensor<2x2xi32>",
            f"{{r}} = tosa.scatter {{x0}}, %{{ns}}i, {{x1}} : ({ttype((2, 4, 3), t)}, tensor<2x2xi32>, {ttype((2, 2, 3), t)}) -> {ttype((2, 4, 3), t)}"],
            lambda v, u: scatter_ref(v, idx, u)))
    if op == "tosa.resize":
        for mode in ("NEAREST_NEIGHBOR", "BILINEAR"):
            cases.append(simple(mode.lower(), [(1, 3, 4, 2)], (1, 6, 8, 2), lambda t, mode=mode: [
                shape_const("{ns}", "sc", [2, 1, 2, 1]), shape_const("{ns}", "of", [0, 0]),
                shape_const("{ns}", "bo", [1, 1]),
                f"{{r}} = tosa.resize {{x0}}, %{{ns}}sc, %{{ns}}of, %{{ns}}bo {{{{mode = {mode}}}}} : "
                f"({ttype((1, 3, 4, 2), t)}, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> {ttype((1, 6, 8, 2), t)}"],
                lambda x, mode=mode: resize_ref(x, mode)))
    if op in ("tosa.fft2d", "tosa.rfft2d"):
        fs = (1, 4, 8)
        out = fs if op == "tosa.fft2d" else (1, 4, 5)
        for part in ("real", "imaginary"):
            def lines(t, part=part):
                ins = "{x0}, {x1}" if op == "tosa.fft2d" else "{x0}"
                in_types = ", ".join([ttype(fs, t)] * (2 if op == "tosa.fft2d" else 1))
                attrs = " {{inverse = false}}" if op == "tosa.fft2d" else ""
                names = "{r}, %{ns}other" if part == "real" else "%{ns}other, {r}"
                return [f"{names} = {op} {ins}{attrs} : ({in_types}) -> ({ttype(out, t)}, {ttype(out, t)})"]

            def ref(*xs, part=part):
                z = xs[0] + 1j * xs[1] if op == "tosa.fft2d" else xs[0]
                f = np.fft.fft2(z) if op == "tosa.fft2d" else np.fft.rfft2(z)
                return f.real if part == "real" else f.imag

            cases.append(simple(part, [fs] * (2 if op == "tosa.fft2d" else 1), out, lines, ref, reduction=32))
    return cases


def tosa_conv_cases(op):
    cases = []
    if op == "tosa.conv2d":
        shapes = [(1, 5, 5, 3), (4, 3, 3, 3), (4,)]
        out = (1, 3, 3, 4)
        attrs = "dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>"
        ref = lambda x, w, b: conv_ref(x, w.transpose(1, 2, 3, 0), b)
    elif op == "tosa.depthwise_conv2d":
        shapes = [(1, 5, 5, 3), (3, 3, 3, 2), (6,)]
        out = (1, 3, 3, 6)
        attrs = "dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>"
        ref = lambda x, w, b: depthwise_ref(x, w, b)
    elif op == "tosa.transpose_conv2d":
        shapes = [(1, 3, 3, 2), (4, 2, 2, 2), (4,)]
        out = (1, 4, 4, 4)
        attrs = "out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>"
        ref = lambda x, w, b: transpose_conv_ref(x, w, b)
    else:  # conv3d
        shapes = [(1, 3, 4, 4, 2), (3, 2, 2, 2, 2), (3,)]
        out = (1, 2, 3, 3, 3)
        attrs = ("dilation = array<i64: 1, 1, 1>, pad = array<i64: 0, 0, 0, 0, 0, 0>, "
                 "stride = array<i64: 1, 1, 1>")
        ref = lambda x, w, b: conv_ref(x, w.transpose(1, 2, 3, 4, 0), b)
    k = int(np.prod(shapes[1][1:])) if op != "tosa.depthwise_conv2d" else 9
    cases.append(simple("valid", shapes, out, lambda t: [
        zp("{ns}", t), zp("{ns}", t, "wzp"),
        f"{{r}} = {op} {{x0}}, {{x1}}, {{x2}}, %{{ns}}zp, %{{ns}}wzp {{{{acc_type = f32, {attrs}}}}} : "
        f"({ttype(shapes[0], t)}, {ttype(shapes[1], t)}, {ttype(shapes[2], t)}, tensor<1x{t}>, tensor<1x{t}>) -> {ttype(out, t)}"],
        ref, reduction=k))
    return cases


# --------------------------------------------------------------------------- references

def pool_ref(x, pad, oh, ow, average):
    n, h, w, c = x.shape
    fill = 0.0 if average else -np.inf
    xp = np.full((n, h + pad[0] + pad[1], w + pad[2] + pad[3], c), fill)
    xp[:, pad[0]:pad[0] + h, pad[2]:pad[2] + w, :] = x
    valid = np.zeros(xp.shape[1:3])
    valid[pad[0]:pad[0] + h, pad[2]:pad[2] + w] = 1
    out = np.zeros((n, oh, ow, c))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, 2 * i:2 * i + 2, 2 * j:2 * j + 2, :]
            if average:
                # TOSA divides by the number of elements inside the input (padding excluded).
                out[:, i, j, :] = win.sum(axis=(1, 2)) / valid[2 * i:2 * i + 2, 2 * j:2 * j + 2].sum()
            else:
                out[:, i, j, :] = win.max(axis=(1, 2))
    return out


def conv_ref(x, w, b):
    """NHWC (or NDHWC) input, [spatial..., C, F] filter, valid, stride 1."""
    sp = w.shape[:-2]
    outsp = tuple(x.shape[1 + i] - sp[i] + 1 for i in range(len(sp)))
    out = np.zeros((x.shape[0],) + outsp + (w.shape[-1],))
    for pos in itertools.product(*[range(o) for o in outsp]):
        win = x[(slice(None),) + tuple(slice(p, p + k) for p, k in zip(pos, sp))]
        out[(slice(None),) + pos] = np.tensordot(win, w, axes=(list(range(1, len(sp) + 2)), list(range(len(sp) + 1))))
    return out + b


def depthwise_ref(x, w, b):
    kh, kw, c, m = w.shape
    n, h, ww, _ = x.shape
    out = np.zeros((n, h - kh + 1, ww - kw + 1, c * m))
    for i in range(h - kh + 1):
        for j in range(ww - kw + 1):
            win = x[:, i:i + kh, j:j + kw, :]
            out[:, i, j, :] = np.einsum("nhwc,hwcm->ncm", win, w).reshape(n, c * m)
    return out + b


def transpose_conv_ref(x, w, b):
    """tosa.transpose_conv2d, stride 1, no padding: out[y+kh, x+kw, oc] += in[y, x, ic] * w[oc, kh, kw, ic]."""
    n, h, ww, ic = x.shape
    oc, kh, kw, _ = w.shape
    out = np.zeros((n, h + kh - 1, ww + kw - 1, oc))
    for i in range(h):
        for j in range(ww):
            out[:, i:i + kh, j:j + kw, :] += np.einsum("nc,okwc->nkwo", x[:, i, j, :], w)
    return out + b


def scatter_ref(v, idx, u):
    out = v.copy()
    for n in range(len(idx)):
        for k, i in enumerate(idx[n]):
            out[n, i] = u[n, k]
    return out


def resize_ref(x, mode):
    """tosa.resize with scale 2/1 on both axes, offset 0, border 1 (align corners off)."""
    n, h, w, c = x.shape
    out = np.zeros((n, 2 * h, 2 * w, c))
    for oy in range(2 * h):
        for ox in range(2 * w):
            fy, fx = oy / 2.0, ox / 2.0
            if mode == "NEAREST_NEIGHBOR":
                iy = min(int(math.floor(fy + 0.5)), h - 1)
                ix = min(int(math.floor(fx + 0.5)), w - 1)
                out[:, oy, ox, :] = x[:, iy, ix, :]
            else:
                y0, x0 = int(math.floor(fy)), int(math.floor(fx))
                dy, dx = fy - y0, fx - x0
                y1, x1 = min(y0 + 1, h - 1), min(x0 + 1, w - 1)
                out[:, oy, ox, :] = ((1 - dy) * (1 - dx) * x[:, y0, x0, :] + (1 - dy) * dx * x[:, y0, x1, :]
                                     + dy * (1 - dx) * x[:, y1, x0, :] + dy * dx * x[:, y1, x1, :])
    return out


# --------------------------------------------------------------------------- linalg named ops

LINALG_UNARY = {
    "linalg.abs": (np.abs, "any"), "linalg.ceil": (np.ceil, "any"), "linalg.floor": (np.floor, "any"),
    "linalg.exp": (np.exp, "any"), "linalg.log": (np.log, "pos"), "linalg.erf": (np.vectorize(math.erf), "any"),
    "linalg.negf": (np.negative, "any"), "linalg.reciprocal": (lambda x: 1 / x, "nonzero"),
    "linalg.round": (lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5), "any"),
    "linalg.rsqrt": (lambda x: 1 / np.sqrt(x), "pos"), "linalg.sqrt": (np.sqrt, "pos"),
    "linalg.square": (np.square, "any"), "linalg.tanh": (np.tanh, "any"), "linalg.copy": (lambda x: x, "any"),
}
LINALG_BINARY = {
    "linalg.add": (np.add, "any"), "linalg.sub": (np.subtract, "any"), "linalg.mul": (np.multiply, "any"),
    "linalg.div": (np.divide, "nonzero"), "linalg.max": (np.maximum, "any"), "linalg.min": (np.minimum, "any"),
    "linalg.powf": (np.power, "pos"),
}

CONTRACTIONS = {
    # op: (shapes, out shape, reduction size, reference)
    "linalg.matmul": ([(4, 8), (8, 3)], (4, 3), 8, lambda a, b: a @ b),
    "linalg.batch_matmul": ([(2, 4, 8), (2, 8, 3)], (2, 4, 3), 8, lambda a, b: a @ b),
    "linalg.batch_reduce_matmul": ([(2, 4, 8), (2, 8, 3)], (4, 3), 16, lambda a, b: (a @ b).sum(0)),
    "linalg.matvec": ([(4, 8), (8,)], (4,), 8, lambda a, b: a @ b),
    "linalg.vecmat": ([(8,), (8, 3)], (3,), 8, lambda a, b: a @ b),
    "linalg.batch_matvec": ([(2, 4, 8), (2, 8)], (2, 4), 8, lambda a, b: np.einsum("bij,bj->bi", a, b)),
    "linalg.batch_vecmat": ([(2, 8), (2, 8, 3)], (2, 3), 8, lambda a, b: np.einsum("bi,bij->bj", a, b)),
    "linalg.dot": ([(8,), (8,)], (), 8, lambda a, b: np.dot(a, b)),
}


def dps_named(op, in_shapes, out_shape, reference, *, reduction=1, attrs="", domain="any", init=None,
              f32_acc=False, name="", kind="float", large=False):
    """A destination-style named op: ins(...) outs(fill(0)) in the tested type (f32 accumulator for
    contractions, as the autocast writes them)."""

    def lines(t):
        acc = "f32" if f32_acc else t
        out_t = ttype(out_shape, acc)
        ins_types = ", ".join(ttype(s, t) for s in in_shapes)
        ins = ", ".join(f"{{x{i}}}" for i in range(len(in_shapes)))
        fill = init if init is not None else "0.0"
        res = [f"%{{ns}}c = arith.constant {fill} : {acc}",
               f"%{{ns}}e = tensor.empty() : {out_t}",
               f"%{{ns}}f = linalg.fill ins(%{{ns}}c : {acc}) outs(%{{ns}}e : {out_t}) -> {out_t}",
               f"{{r}}{'a' if f32_acc else ''} = {op} {attrs} ins({ins} : {ins_types}) outs(%{{ns}}f : {out_t}) -> {out_t}"]
        if f32_acc:
            res.append(f"{{r}} = arith.truncf {{r}}a : {out_t} to {ttype(out_shape, t)}" if t != "f32"
                       else f"{{r}} = arith.maximumf {{r}}a, {{r}}a : {out_t}")
        return res

    return simple(name or "named", in_shapes, out_shape, lines, reference, reduction=reduction, domain=domain,
                  kind=kind, large=large)


LAYOUT_SIZES = {"n": 1, "c": 2, "f": 3, "g": 2, "m": 2}


def conv_like_case(op):
    """linalg.conv_* / depthwise_conv_* / pooling_*: shapes and reference from the layout in the name."""
    m = re.fullmatch(r"linalg\.(conv|depthwise_conv|pooling)_(\d)d(?:_([a-z]+)_([a-z]+))?", op)
    if not m:
        m2 = re.fullmatch(r"linalg\.pooling_([a-z]+)_(sum|max|min)", op)
        if not m2:
            return None
        kind, layout, combine = "pooling", m2.group(1), m2.group(2)
        nsp = len(layout) - 2
        filt = "".join(ch for ch in layout if ch in "dhw")
    else:
        kind, nsp, layout, filt = m.group(1), int(m.group(2)), m.group(3), m.group(4)
        combine = "sum"
    spatial = "dhw"[3 - nsp:]
    if layout is None:  # conv_1d / conv_2d / conv_3d: spatial only
        layout, filt = spatial, spatial
    kern, outsp = 2, 3
    size = dict(LAYOUT_SIZES)
    in_shape = tuple(outsp + kern - 1 if ch in spatial else size[ch] for ch in layout)
    filt_shape = tuple(kern if ch in spatial else size[ch] for ch in filt)
    if kind == "conv":
        out_layout = layout.replace("c", "f") if "c" in layout else layout
    elif kind == "depthwise_conv":
        out_layout = layout + ("m" if "m" in filt else "") if layout.endswith("c") else \
            layout.replace("c", "c" + ("m" if "m" in filt else ""))
    else:
        out_layout = layout
    out_shape = tuple(outsp if ch in spatial else size[ch] for ch in out_layout)
    red_letters = [ch for ch in filt if ch not in out_layout or ch in spatial]
    reduction = int(np.prod([kern if ch in spatial else size[ch] for ch in filt if
                             ch in spatial or (ch not in out_layout)]))
    attrs = (f"{{{{dilations = dense<1> : tensor<{nsp}xi64>, strides = dense<1> : tensor<{nsp}xi64>}}}}"
             if layout != spatial else "")

    def reference(x, w):
        out = np.zeros(out_shape)
        loops = {ch: range(out_shape[out_layout.index(ch)]) for ch in out_layout}
        for oidx in itertools.product(*loops.values()):
            env = dict(zip(loops.keys(), oidx))
            red = [ch for ch in filt if ch in spatial or ch not in env]
            vals = []
            for ridx in itertools.product(*[range(filt_shape[filt.index(ch)]) for ch in red]):
                k = dict(zip(red, ridx))
                xi = tuple(env[ch] + k[ch] if ch in spatial else (env[ch] if ch in env else k[ch]) for ch in layout)
                wi = tuple(k[ch] if ch in k else env[ch] for ch in filt)
                vals.append(x[xi] * w[wi] if kind != "pooling" else x[xi])
            if combine == "sum":
                out[oidx] = np.sum(vals)
            elif combine == "max":
                out[oidx] = np.max(vals)
            else:
                out[oidx] = np.min(vals)
        return out

    init = {"sum": "0.0", "max": "0xFF800000", "min": "0x7F800000"}[combine]

    def lines(t):
        fill = init if not init.startswith("0x") else hexfloat(init, t)
        acc = "f32" if kind != "pooling" else t
        out_t = ttype(out_shape, acc)
        res = [f"%{{ns}}c = arith.constant {fill if kind == 'pooling' else '0.0'} : {acc}",
               f"%{{ns}}e = tensor.empty() : {out_t}",
               f"%{{ns}}f = linalg.fill ins(%{{ns}}c : {acc}) outs(%{{ns}}e : {out_t}) -> {out_t}"]
        if kind == "pooling":
            res.append(f"%{{ns}}k = tensor.empty() : {ttype(filt_shape, t)}")
            second = f"%{{ns}}k"
        else:
            second = "{x1}"
        res.append(f"{{r}}{'a' if acc == 'f32' else ''} = {op} {attrs} ins({{x0}}, {second} : {ttype(in_shape, t)}, "
                   f"{ttype(filt_shape, t)}) outs(%{{ns}}f : {out_t}) -> {out_t}")
        if acc == "f32":
            res.append(f"{{r}} = arith.truncf {{r}}a : {out_t} to {ttype(out_shape, t)}" if t != "f32"
                       else f"{{r}} = arith.maximumf {{r}}a, {{r}}a : {out_t}")
        return res

    ins = [in_shape] if kind == "pooling" else [in_shape, filt_shape]
    ref = (lambda x: reference(x, None)) if kind == "pooling" else reference
    return simple(f"{layout}/{filt} k2", ins, out_shape, lines, ref, reduction=reduction,
                  note="f32 accumulator" if kind != "pooling" else "")


def linalg_cases(op):
    cases = []
    if op in LINALG_UNARY:
        ref, dom = LINALG_UNARY[op]
        cases.append(dps_named(op, [S], S, ref, domain=dom, name="elementwise", large=True))
    if op in LINALG_BINARY:
        ref, dom = LINALG_BINARY[op]
        cases.append(dps_named(op, [S, S], S, ref, domain=dom, name="elementwise", large=True))
        if op == "linalg.powf":
            cases.append(dps_named(op, [S, S], S, np.power, domain="int exponent", name="negative base"))
    if op in CONTRACTIONS:
        shapes, out, red, ref = CONTRACTIONS[op]
        cases.append(dps_named(op, shapes, out, ref, reduction=red, f32_acc=True,
                               name="x".join(map(str, shapes[0])) + " * " + "x".join(map(str, shapes[1]))))
    if op == "linalg.select":
        def lines(t):
            return [f"%{{ns}}cmp_e = tensor.empty() : {ttype(S, 'i1')}",
                    f"%{{ns}}cmp = linalg.generic {{{{indexing_maps = [{ID2}, {ID2}, {ID2}], iterator_types = [\"parallel\", \"parallel\"]}}}} "
                    f"ins({{x0}}, {{x1}} : {ttype(S, t)}, {ttype(S, t)}) outs(%{{ns}}cmp_e : {ttype(S, 'i1')}) {{{{",
                    f"^bb0(%p: {t}, %q: {t}, %o: i1):", f"  %l = arith.cmpf olt, %p, %q : {t}", "  linalg.yield %l : i1",
                    f"}}}} -> {ttype(S, 'i1')}",
                    f"%{{ns}}e = tensor.empty() : {ttype(S, t)}",
                    f"{{r}} = linalg.select ins(%{{ns}}cmp, {{x1}}, {{x2}} : {ttype(S, 'i1')}, {ttype(S, t)}, {ttype(S, t)}) "
                    f"outs(%{{ns}}e : {ttype(S, t)}) -> {ttype(S, t)}"]
        cases.append(simple("elementwise", [S, S, S], S, lines, lambda a, b, c: np.where(a < b, b, c)))
    if op == "linalg.fill":
        cases.append(simple("fill 0.75 + x", [S], S, lambda t: [
            f"%{{ns}}c = arith.constant 0.75 : {t}", f"%{{ns}}e = tensor.empty() : {ttype(S, t)}",
            f"%{{ns}}f = linalg.fill ins(%{{ns}}c : {t}) outs(%{{ns}}e : {ttype(S, t)}) -> {ttype(S, t)}",
            f"{{r}} = arith.addf %{{ns}}f, {{x0}} : {ttype(S, t)}"], lambda x: x + 0.75))
    if op == "linalg.transpose":
        cases.append(simple("permutation 1,0", [S], (8, 4), lambda t: [
            f"%{{ns}}e = tensor.empty() : {ttype((8, 4), t)}",
            f"{{r}} = linalg.transpose ins({{x0}} : {ttype(S, t)}) outs(%{{ns}}e : {ttype((8, 4), t)}) permutation = [1, 0]"],
            lambda x: x.T))
    if op == "linalg.broadcast":
        for dim, shape in ((0, (8,)), (1, (4,))):
            cases.append(simple(f"dimensions [{dim}]", [shape], S, lambda t, dim=dim, shape=shape: [
                f"%{{ns}}e = tensor.empty() : {ttype(S, t)}",
                f"{{r}} = linalg.broadcast ins({{x0}} : {ttype(shape, t)}) outs(%{{ns}}e : {ttype(S, t)}) dimensions = [{dim}]"],
                lambda x, dim=dim: np.broadcast_to(np.expand_dims(x, dim), S)))
    if op == "linalg.reduce":
        for axis in (0, 1):
            out = (8,) if axis == 0 else (4,)

            def lines(t, axis=axis, out=out):
                return [f"%{{ns}}c = arith.constant 0.0 : f32", f"%{{ns}}e = tensor.empty() : {ttype(out, 'f32')}",
                        f"%{{ns}}f = linalg.fill ins(%{{ns}}c : f32) outs(%{{ns}}e : {ttype(out, 'f32')}) -> {ttype(out, 'f32')}",
                        f"{{r}}a = linalg.reduce ins({{x0}} : {ttype(S, t)}) outs(%{{ns}}f : {ttype(out, 'f32')}) dimensions = [{axis}]",
                        f"  (%in: {t}, %acc: f32) {{{{",
                        f"    %w = arith.extf %in : {t} to f32" if t != "f32" else "    %w = arith.maximumf %in, %in : f32",
                        "    %s = arith.addf %w, %acc : f32", "    linalg.yield %s : f32", "  }}",
                        f"{{r}} = arith.truncf {{r}}a : {ttype(out, 'f32')} to {ttype(out, t)}" if t != "f32"
                        else f"{{r}} = arith.maximumf {{r}}a, {{r}}a : {ttype(out, 'f32')}"]

            cases.append(simple(f"sum axis {axis} (f32 acc)", [S], out, lines,
                                lambda x, axis=axis: x.sum(axis=axis), reduction=S[axis]))
    if op == "linalg.softmax":
        for axis in (0, 1):
            cases.append(simple(f"dimension {axis}", [S], S, lambda t, axis=axis: [
                f"%{{ns}}e = tensor.empty() : {ttype(S, t)}",
                f"{{r}} = linalg.softmax dimension({axis}) ins({{x0}} : {ttype(S, t)}) outs(%{{ns}}e : {ttype(S, t)}) -> {ttype(S, t)}"],
                lambda x, axis=axis: np.exp(x - x.max(axis=axis, keepdims=True))
                / np.exp(x - x.max(axis=axis, keepdims=True)).sum(axis=axis, keepdims=True), reduction=S[axis]))
        for axis in (0, 1):
            # logits up to 5e4: exp(x) alone would overflow (inf / inf); the outputs are in [0, 1], so each is
            # held to the elementwise tolerance (reduction 1), not to one scaled by max|x|^2
            cases.append(simple(f"dimension {axis} (large logits)", [S], S, lambda t, axis=axis: [
                f"%{{ns}}e = tensor.empty() : {ttype(S, t)}",
                f"{{r}} = linalg.softmax dimension({axis}) ins({{x0}} : {ttype(S, t)}) outs(%{{ns}}e : {ttype(S, t)}) -> {ttype(S, t)}"],
                lambda x, axis=axis: np.exp(x - x.max(axis=axis, keepdims=True))
                / np.exp(x - x.max(axis=axis, keepdims=True)).sum(axis=axis, keepdims=True), large=True))
    conv = conv_like_case(op) if re.match(r"linalg\.(conv|depthwise_conv|pooling)_", op) else None
    if conv is not None and not op.endswith("_q"):
        cases.append(conv)
    return cases


TENSOR_CASES_NOTE = "tensor ops are data movement, covered through the TOSA reshape/slice/pad/concat lowerings"


def cases_for(op):
    """The cases of `op`; [] when the matrix has none (op_coverage.py reports it unless EXCLUDED)."""
    if op.endswith("_q"):
        return []
    dialect = op.split(".")[0]
    if dialect in ("arith", "math"):
        return arith_math_cases(op)
    if dialect == "tosa":
        return tosa_cases(op)
    if dialect == "linalg":
        return linalg_cases(op)
    return []


def excluded_reason(op):
    if op in EXCLUDED:
        return EXCLUDED[op]
    if op.endswith("_q"):
        return "quantized (integer zero points); the float form of the same op is covered"
    if op.startswith("tensor."):
        return TENSOR_CASES_NOTE
    return None
