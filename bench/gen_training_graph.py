#!/usr/bin/env python3
"""Synthetic TOSA training graph generator for the amp-autocast benchmarks.

    gen_training_graph.py N [--seed S] [--batch B] [--width D]

Writes to stdout one `func.func @train_step` (MLIR 22 syntax, TOSA, f32) with
about N operations (never fewer than N unless N is below the size of a
one-layer graph). The graph follows the training-step contract of
examples/mlp_sgd.mlir:

  * arguments: per layer w<i> (DxD), b<i> (D), g<i> (D), then the classifier
    head w_out (Dx10), b_out (10), then x (BxD) and labels (B, i32); every
    argument carries an `amp.init` hint;
  * results: every parameter updated by SGD (`amp.update_of = <arg index>`)
    and the scalar loss (`amp.loss`);
  * the backward pass starts from one constant marked `amp.grad_seed`.

Model: a deep residual MLP. Layer i computes
    z = h @ w + b ; n = z * rsqrt(mean(z^2) + eps) ; y = n * g
    a = relu(y) or sigmoid(y) = 1 / (1 + exp(-y))
    h' = h + a (residual, on some layers) or h' = a
followed by a 10-class softmax cross-entropy head. The backward pass is the
exact hand-written gradient (RMS norm input gradient included), in reverse
layer order, then a plain SGD update (lr 0.01). The seed picks the activation
and whether a layer is residual, so graphs of the same N differ only in mix.

Only the Python standard library is used. Each op is printed on its own line.
"""

import argparse
import random
import sys

NUM_CLASSES = 10


class Graph:
    """Collects op lines and counts them (one op per line)."""

    def __init__(self):
        self.lines = []
        self.ops = 0

    def op(self, text):
        self.lines.append("  " + text)
        self.ops += 1

    def comment(self, text):
        self.lines.append("  // " + text)

    def blank(self):
        self.lines.append("")


def t(*dims, elem="f32"):
    """tensor type text: t(16, 32) -> tensor<16x32xf32>."""
    if not dims:
        return f"tensor<{elem}>"
    return "tensor<" + "x".join(str(d) for d in dims) + f"x{elem}>"


class Builder:
    def __init__(self, batch, width):
        self.B = batch
        self.D = width
        self.shapes = {}  # dims tuple -> SSA name
        self.consts = []  # op lines of the constant prologue

    # ---- shared constants -------------------------------------------------
    def shape(self, *dims):
        """SSA name of a tosa.const_shape for `dims` (created on first use)."""
        if dims not in self.shapes:
            name = "%shape_" + ("x".join(str(d) for d in dims) or "scalar")
            self.shapes[dims] = name
            rank = len(dims)
            vals = ",".join(str(d) for d in dims)
            self.consts.append(
                f"{name} = tosa.const_shape {{values = dense<[{vals}]> : tensor<{rank}xindex>}}"
                f" : () -> !tosa.shape<{rank}>"
                if rank
                else f"{name} = tosa.const_shape {{values = dense<> : tensor<0xindex>}}"
                f" : () -> !tosa.shape<0>"
            )
        return self.shapes[dims]

    # ---- op helpers (each emits exactly one op) ----------------------------
    def reshape(self, g, res, src, src_dims, dims):
        sh = self.shape(*dims)
        g.op(f"{res} = tosa.reshape {src}, {sh} : ({t(*src_dims)}, !tosa.shape<{len(dims)}>)"
             f" -> {t(*dims)}")

    def binary(self, g, opname, res, a, a_dims, b, b_dims, out_dims):
        g.op(f"{res} = tosa.{opname} {a}, {b} : ({t(*a_dims)}, {t(*b_dims)}) -> {t(*out_dims)}")

    def mul(self, g, res, a, a_dims, b, b_dims, out_dims):
        g.op(f"{res} = tosa.mul {a}, {b}, %shift0 : ({t(*a_dims)}, {t(*b_dims)}, tensor<1xi8>)"
             f" -> {t(*out_dims)}")

    def unary(self, g, opname, res, a, dims):
        g.op(f"{res} = tosa.{opname} {a} : ({t(*dims)}) -> {t(*dims)}")

    def reduce(self, g, opname, res, a, dims, axis):
        out = list(dims)
        out[axis] = 1
        g.op(f"{res} = tosa.{opname} {a} {{axis = {axis} : i32}} : ({t(*dims)}) -> {t(*out)}")

    def transpose(self, g, res, a, dims):
        g.op(f"{res} = tosa.transpose {a} {{perms = array<i32: 1, 0>}} : ({t(*dims)})"
             f" -> {t(dims[1], dims[0])}")

    def matmul3(self, g, res, a, a_dims, b, b_dims):
        """res = a @ b on 1xMxK x 1xKxN operands."""
        out = (1, a_dims[1], b_dims[2])
        g.op(f"{res} = tosa.matmul {a}, {b}, %zp_f32, %zp_f32 : ({t(*a_dims)}, {t(*b_dims)},"
             f" tensor<1xf32>, tensor<1xf32>) -> {t(*out)}")

    def matmul2d(self, g, prefix, a, a_dims, b, b_dims, res, a3=None):
        """res (MxN) = a (MxK) @ b (KxN) via 3-D reshapes. Returns the name of
        a's 3-D reshape (so callers can share it)."""
        M, K = a_dims
        N = b_dims[1]
        if a3 is None:
            a3 = f"{prefix}_lhs3d"
            self.reshape(g, a3, a, a_dims, (1, M, K))
        b3 = f"{prefix}_rhs3d"
        self.reshape(g, b3, b, b_dims, (1, K, N))
        self.matmul3(g, f"{prefix}_3d", a3, (1, M, K), b3, (1, K, N))
        self.reshape(g, res, f"{prefix}_3d", (1, M, N), (M, N))
        return a3


class Layer:
    def __init__(self, index, act, residual):
        self.i = index
        self.act = act  # "relu" | "sigmoid"
        self.residual = residual
        self.p = f"%l{index}_"
        self.hin = "%x" if index == 0 else f"%h{index}"
        self.hout = f"%h{index + 1}"

    def forward(self, bld, g):
        B, D = bld.B, bld.D
        p, i = self.p, self.i
        g.comment(f"layer {i}: {'residual ' if self.residual else ''}RMS-norm {self.act} block")
        bld.matmul2d(g, p + "mm", self.hin, (B, D), f"%w{i}", (D, D), p + "mm")
        bld.reshape(g, p + "brow", f"%b{i}", (D,), (1, D))
        bld.binary(g, "add", p + "z", p + "mm", (B, D), p + "brow", (1, D), (B, D))
        # RMS norm
        bld.mul(g, p + "sq", p + "z", (B, D), p + "z", (B, D), (B, D))
        bld.reduce(g, "reduce_sum", p + "sqsum", p + "sq", (B, D), 1)
        bld.mul(g, p + "ms", p + "sqsum", (B, 1), "%c_inv_d", (1, 1), (B, 1))
        bld.binary(g, "add", p + "mse", p + "ms", (B, 1), "%c_eps", (1, 1), (B, 1))
        bld.unary(g, "rsqrt", p + "r", p + "mse", (B, 1))
        bld.mul(g, p + "n", p + "z", (B, D), p + "r", (B, 1), (B, D))
        bld.reshape(g, p + "grow", f"%g{i}", (D,), (1, D))
        bld.mul(g, p + "y", p + "n", (B, D), p + "grow", (1, D), (B, D))
        a = self.hout if not self.residual else p + "a"
        if self.act == "relu":
            g.op(f"{a} = tosa.clamp {p}y {{min_val = 0.0 : f32, max_val = 3.40282347E+38 : f32}}"
                 f" : ({t(B, D)}) -> {t(B, D)}")
        else:
            bld.mul(g, p + "negy", p + "y", (B, D), "%c_neg_one", (1, 1), (B, D))
            bld.unary(g, "exp", p + "e", p + "negy", (B, D))
            bld.binary(g, "add", p + "e1", p + "e", (B, D), "%c_one", (1, 1), (B, D))
            bld.unary(g, "reciprocal", a, p + "e1", (B, D))
        self.a = a
        if self.residual:
            bld.binary(g, "add", self.hout, self.hin, (B, D), a, (B, D), (B, D))

    def backward(self, bld, g):
        """Consumes %d_h<i+1>; defines %l<i>_d_w, _d_b, _d_g and %d_h<i>."""
        B, D = bld.B, bld.D
        p, i = self.p, self.i
        dout = f"%d_h{i + 1}"
        g.comment(f"layer {i} backward")
        if self.act == "relu":
            g.op(f"{p}pos = tosa.greater {p}y, %c_zero : ({t(B, D)}, {t(1, 1)}) -> {t(B, D, elem='i1')}")
            g.op(f"{p}d_y = tosa.select {p}pos, {dout}, %c_zero : ({t(B, D, elem='i1')}, {t(B, D)},"
                 f" {t(1, 1)}) -> {t(B, D)}")
        else:
            bld.binary(g, "sub", p + "oms", "%c_one", (1, 1), self.a, (B, D), (B, D))
            bld.mul(g, p + "dsig", self.a, (B, D), p + "oms", (B, D), (B, D))
            bld.mul(g, p + "d_y", dout, (B, D), p + "dsig", (B, D), (B, D))
        # y = n * g
        bld.mul(g, p + "dyn", p + "d_y", (B, D), p + "n", (B, D), (B, D))
        bld.reduce(g, "reduce_sum", p + "d_g_row", p + "dyn", (B, D), 0)
        bld.reshape(g, p + "d_g", p + "d_g_row", (1, D), (D,))
        bld.mul(g, p + "d_n", p + "d_y", (B, D), p + "grow", (1, D), (B, D))
        # n = z * r, r = rsqrt(mean(z^2) + eps): dz = r * (dn - n * mean(dn * n))
        bld.mul(g, p + "dnn", p + "d_n", (B, D), p + "n", (B, D), (B, D))
        bld.reduce(g, "reduce_sum", p + "dnn_sum", p + "dnn", (B, D), 1)
        bld.mul(g, p + "dnn_mean", p + "dnn_sum", (B, 1), "%c_inv_d", (1, 1), (B, 1))
        bld.mul(g, p + "n_dm", p + "n", (B, D), p + "dnn_mean", (B, 1), (B, D))
        bld.binary(g, "sub", p + "d_nc", p + "d_n", (B, D), p + "n_dm", (B, D), (B, D))
        bld.mul(g, p + "d_z", p + "d_nc", (B, D), p + "r", (B, 1), (B, D))
        # z = h @ w + b
        bld.reduce(g, "reduce_sum", p + "d_b_row", p + "d_z", (B, D), 0)
        bld.reshape(g, p + "d_b", p + "d_b_row", (1, D), (D,))
        bld.transpose(g, p + "hin_T", self.hin, (B, D))
        dz3 = p + "d_z3d"
        bld.reshape(g, dz3, p + "d_z", (B, D), (1, B, D))
        bld.reshape(g, p + "dw_lhs3d", p + "hin_T", (D, B), (1, D, B))
        bld.matmul3(g, p + "dw_3d", p + "dw_lhs3d", (1, D, B), dz3, (1, B, D))
        bld.reshape(g, p + "d_w", p + "dw_3d", (1, D, D), (D, D))
        if i == 0:
            return
        bld.transpose(g, p + "w_T", f"%w{i}", (D, D))
        dh = f"%d_h{i}" if not self.residual else p + "dh_mm"
        bld.matmul2d(g, p + "dh", p + "d_z", (B, D), p + "w_T", (D, D), dh, a3=dz3)
        if self.residual:
            bld.binary(g, "add", f"%d_h{i}", dh, (B, D), dout, (B, D), (B, D))

    def params(self, D):
        i = self.i
        return [(f"%w{i}", (D, D), f"{self.p}d_w"), (f"%b{i}", (D,), f"{self.p}d_b"),
                (f"%g{i}", (D,), f"{self.p}d_g")]


def emit_sgd_update_and_return(bld, body, params):
    """p_new = p - lr * g for every (name, dims, gradient) in params (lr 0.01; %lr_1d for
    vectors), then `return` of the new parameters and %loss."""
    news = []
    for name, dims, grad in params:
        lr = "%lr" if len(dims) == 2 else "%lr_1d"
        lr_dims = (1, 1) if len(dims) == 2 else (1,)
        bld.mul(body, name + "_step", grad, dims, lr, lr_dims, dims)
        bld.binary(body, "sub", name + "_new", name, dims, name + "_step", dims, dims)
        news.append((name + "_new", dims))
    ret_vals = ", ".join(n for n, _ in news) + ", %loss"
    ret_types = ", ".join(t(*d) for _, d in news) + ", tensor<f32>"
    body.op(f"return {ret_vals} :\n      {ret_types}")


def emit_constants(bld, B, C, extra=()):
    """The constants block: zero point, shift, class iota, 0 and 1, the `extra` (name, value)
    1x1 constants, the batch scalings, the learning rates, then the reshape shapes."""
    consts = Graph()
    consts.comment("---- constants ----")

    def const(name, value, dims, elem="f32"):
        consts.op(f'{name} = "tosa.const"() <{{values = dense<{value}> : {t(*dims, elem=elem)}}}>'
                  f" : () -> {t(*dims, elem=elem)}")

    const("%zp_f32", "0.0", (1,))
    const("%shift0", "0", (1,), "i8")
    const("%class_iota", "[[" + ",".join(str(c) for c in range(C)) + "]]", (1, C), "i32")
    const("%c_zero", "0.0", (1, 1))
    const("%c_one", "1.0", (1, 1))
    for name, value in extra:
        const(name, value, (1, 1))
    const("%c_inv_batch", repr(1.0 / B), (1, 1))
    const("%c_neg_inv_batch", repr(-1.0 / B), (1, 1))
    const("%lr", "0.01", (1, 1))
    const("%lr_1d", "0.01", (1,))
    consts.comment("---- shapes for tosa.reshape ----")
    for line in bld.consts:
        consts.op(line)
    consts.blank()
    return consts


def emit_cross_entropy(bld, body, B, C):
    """%loss = mean softmax cross-entropy of %logits (B x C) against %labels, as in
    examples/mlp_sgd.mlir; leaves %log_probs and %onehot for the backward pass."""
    bld.reduce(body, "reduce_max", "%row_max", "%logits", (B, C), 1)
    bld.binary(body, "sub", "%shifted", "%logits", (B, C), "%row_max", (B, 1), (B, C))
    bld.unary(body, "exp", "%exp_shifted", "%shifted", (B, C))
    bld.reduce(body, "reduce_sum", "%sum_exp", "%exp_shifted", (B, C), 1)
    bld.unary(body, "log", "%log_sum_exp", "%sum_exp", (B, 1))
    bld.binary(body, "sub", "%log_probs", "%shifted", (B, C), "%log_sum_exp", (B, 1), (B, C))
    body.op(f"%labels_col = tosa.reshape %labels, {bld.shape(B, 1)} : ({t(B, elem='i32')},"
            f" !tosa.shape<2>) -> {t(B, 1, elem='i32')}")
    body.op(f"%is_label = tosa.equal %labels_col, %class_iota : ({t(B, 1, elem='i32')},"
            f" {t(1, C, elem='i32')}) -> {t(B, C, elem='i1')}")
    body.op(f"%onehot = tosa.select %is_label, %c_one, %c_zero : ({t(B, C, elem='i1')},"
            f" {t(1, 1)}, {t(1, 1)}) -> {t(B, C)}")
    bld.mul(body, "%picked_logp", "%onehot", (B, C), "%log_probs", (B, C), (B, C))
    bld.reduce(body, "reduce_sum", "%picked_row", "%picked_logp", (B, C), 1)
    bld.reduce(body, "reduce_sum", "%picked_total", "%picked_row", (B, 1), 0)
    bld.mul(body, "%loss_1x1", "%picked_total", (1, 1), "%c_neg_inv_batch", (1, 1), (1, 1))
    bld.reshape(body, "%loss", "%loss_1x1", (1, 1), ())


def emit_loss_gradient_start(bld, body, B, C):
    """The single amp.grad_seed constant and the cross-entropy's backward up to
    %probs_minus_onehot (B x C) and the scalar %d_nll it is scaled by."""
    body.op('%seed = "tosa.const"() <{values = dense<1.0> : tensor<1xf32>}> {amp.grad_seed}'
            " : () -> tensor<1xf32>")
    bld.reshape(body, "%d_loss", "%seed", (1,), (1, 1))
    bld.mul(body, "%d_nll", "%d_loss", (1, 1), "%c_inv_batch", (1, 1), (1, 1))
    bld.unary(body, "exp", "%probs", "%log_probs", (B, C))
    bld.binary(body, "sub", "%probs_minus_onehot", "%probs", (B, C), "%onehot", (B, C), (B, C))


def build(num_layers, rng, B, D):
    bld = Builder(B, D)
    C = NUM_CLASSES
    layers = [Layer(i, rng.choice(["relu", "sigmoid"]), i > 0 and rng.random() < 0.5)
              for i in range(num_layers)]
    body = Graph()

    # ---- forward ----
    body.comment("================= forward =================")
    for layer in layers:
        layer.forward(bld, body)
    h = f"%h{num_layers}"
    body.comment("classifier head: logits = h @ w_out + b_out")
    bld.matmul2d(body, "%head", h, (B, D), "%w_out", (D, C), "%head_mm")
    bld.reshape(body, "%b_out_row", "%b_out", (C,), (1, C))
    bld.binary(body, "add", "%logits", "%head_mm", (B, C), "%b_out_row", (1, C), (B, C))

    # ---- loss (as in examples/mlp_sgd.mlir) ----
    body.comment("================= loss: mean softmax cross-entropy =================")
    emit_cross_entropy(bld, body, B, C)

    # ---- backward ----
    body.comment("================= backward =================")
    emit_loss_gradient_start(bld, body, B, C)
    bld.mul(body, "%d_logits", "%probs_minus_onehot", (B, C), "%d_nll", (1, 1), (B, C))
    bld.reduce(body, "reduce_sum", "%d_b_out_row", "%d_logits", (B, C), 0)
    bld.reshape(body, "%d_b_out", "%d_b_out_row", (1, C), (C,))
    bld.transpose(body, "%h_last_T", h, (B, D))
    bld.matmul2d(body, "%d_w_out_mm", "%h_last_T", (D, B), "%d_logits", (B, C), "%d_w_out")
    bld.transpose(body, "%w_out_T", "%w_out", (D, C))
    bld.matmul2d(body, "%d_head", "%d_logits", (B, C), "%w_out_T", (C, D), f"%d_h{num_layers}")
    for layer in reversed(layers):
        layer.backward(bld, body)

    # ---- SGD update ----
    body.comment("================= SGD update: p_new = p - lr * g =================")
    params = []
    for layer in layers:
        params += layer.params(D)
    params += [("%w_out", (D, C), "%d_w_out"), ("%b_out", (C,), "%d_b_out")]
    emit_sgd_update_and_return(bld, body, params)

    # ---- constants (after the body so every shape used is known) ----
    consts = emit_constants(bld, B, C, [("%c_neg_one", "-1.0"), ("%c_inv_d", repr(1.0 / D)),
                                         ("%c_eps", "1.0e-05")])

    # ---- signature ----
    args = []
    results = []
    idx = 0
    for layer in layers:
        i = layer.i
        args.append(f"%w{i}: {t(D, D)} {{amp.init = #amp.init<uniform({(1.0 / D) ** 0.5:.4g})>}}")
        args.append(f"%b{i}: {t(D)} {{amp.init = #amp.init<zeros>}}")
        args.append(f"%g{i}: {t(D)} {{amp.init = #amp.init<ones>}}")
        for dims in [(D, D), (D,), (D,)]:
            results.append(f"{t(*dims)} {{amp.update_of = {idx} : i64}}")
            idx += 1
    args.append(f"%w_out: {t(D, C)} {{amp.init = #amp.init<uniform({(1.0 / D) ** 0.5:.4g})>}}")
    args.append(f"%b_out: {t(C)} {{amp.init = #amp.init<zeros>}}")
    for dims in [(D, C), (C,)]:
        results.append(f"{t(*dims)} {{amp.update_of = {idx} : i64}}")
        idx += 1
    args.append(f"%x: {t(B, D)} {{amp.init = #amp.init<normal(1.0)>}}")
    args.append(f"%labels: {t(B, elem='i32')} {{amp.init = #amp.init<labels({C})>}}")
    results.append("tensor<f32> {amp.loss}")

    header = [
        f"// Synthetic TOSA training step generated by bench/gen_training_graph.py:",
        f"// {num_layers} residual RMS-norm MLP layers (batch {B}, width {D}) + {C}-class",
        f"// softmax cross-entropy head, hand-written backward, SGD (lr 0.01).",
        "func.func @train_step(",
        ",\n".join("    " + a for a in args),
        "  ) -> (",
        ",\n".join("    " + r for r in results),
        "  ) {",
    ]
    total_ops = consts.ops + body.ops + 1  # + the func.func itself
    text = "\n".join(header + consts.lines + body.lines + ["}", ""])
    return text, total_ops


def build_mlp(dims, B):
    """A plain ReLU MLP dims[0] -> ... -> dims[-1] classes (batch B): linear
    layers with bias, ReLU between them, softmax cross-entropy (mean over the
    batch), hand-written backward, SGD (lr 0.01). The issue-9 GPU benchmark
    model is --mlp 1024,4096,4096,1024,16 --batch 512 (11 matmuls)."""
    bld = Builder(B, dims[0])
    C = dims[-1]
    L = len(dims) - 1
    body = Graph()
    body.comment("================= forward =================")
    h = "%x"
    acts = []  # (input of layer i, its dims)
    for i in range(L):
        K, N = dims[i], dims[i + 1]
        acts.append(h)
        bld.matmul2d(body, f"%l{i}_mm", h, (B, K), f"%w{i}", (K, N), f"%l{i}_mm")
        bld.reshape(body, f"%l{i}_brow", f"%b{i}", (N,), (1, N))
        z = f"%l{i}_z" if i < L - 1 else "%logits"
        bld.binary(body, "add", z, f"%l{i}_mm", (B, N), f"%l{i}_brow", (1, N), (B, N))
        if i < L - 1:
            body.op(f"%h{i + 1} = tosa.clamp {z} {{min_val = 0.0 : f32, max_val = 3.40282347E+38 : f32}}"
                    f" : ({t(B, N)}) -> {t(B, N)}")
            h = f"%h{i + 1}"

    body.comment("================= loss: mean softmax cross-entropy =================")
    emit_cross_entropy(bld, body, B, C)

    body.comment("================= backward =================")
    emit_loss_gradient_start(bld, body, B, C)
    bld.mul(body, f"%l{L - 1}_d_z", "%probs_minus_onehot", (B, C), "%d_nll", (1, 1), (B, C))
    grads = {}
    for i in reversed(range(L)):
        K, N = dims[i], dims[i + 1]
        dz = f"%l{i}_d_z"
        bld.reduce(body, "reduce_sum", f"%l{i}_d_b_row", dz, (B, N), 0)
        bld.reshape(body, f"%l{i}_d_b", f"%l{i}_d_b_row", (1, N), (N,))
        bld.transpose(body, f"%l{i}_in_T", acts[i], (B, K))
        bld.matmul2d(body, f"%l{i}_d_w_mm", f"%l{i}_in_T", (K, B), dz, (B, N), f"%l{i}_d_w")
        grads[i] = (f"%l{i}_d_w", f"%l{i}_d_b")
        if i == 0:
            continue
        bld.transpose(body, f"%l{i}_w_T", f"%w{i}", (K, N))
        bld.matmul2d(body, f"%l{i}_d_h_mm", dz, (B, N), f"%l{i}_w_T", (N, K), f"%l{i}_d_h")
        body.op(f"%l{i - 1}_pos = tosa.greater %l{i - 1}_z, %c_zero : ({t(B, K)}, {t(1, 1)})"
                f" -> {t(B, K, elem='i1')}")
        body.op(f"%l{i - 1}_d_z = tosa.select %l{i - 1}_pos, %l{i}_d_h, %c_zero :"
                f" ({t(B, K, elem='i1')}, {t(B, K)}, {t(1, 1)}) -> {t(B, K)}")

    body.comment("================= SGD update: p_new = p - lr * g =================")
    params = []
    for i in range(L):
        K, N = dims[i], dims[i + 1]
        params += [(f"%w{i}", (K, N), grads[i][0]), (f"%b{i}", (N,), grads[i][1])]
    emit_sgd_update_and_return(bld, body, params)

    consts = emit_constants(bld, B, C)

    args, results = [], []
    for i in range(L):
        K, N = dims[i], dims[i + 1]
        args.append(f"%w{i}: {t(K, N)} {{amp.init = #amp.init<uniform({(1.0 / K) ** 0.5:.4g})>}}")
        args.append(f"%b{i}: {t(N)} {{amp.init = #amp.init<zeros>}}")
        results.append(f"{t(K, N)} {{amp.update_of = {2 * i} : i64}}")
        results.append(f"{t(N)} {{amp.update_of = {2 * i + 1} : i64}}")
    args.append(f"%x: {t(B, dims[0])} {{amp.init = #amp.init<normal(1.0)>}}")
    args.append(f"%labels: {t(B, elem='i32')} {{amp.init = #amp.init<labels({C})>}}")
    results.append("tensor<f32> {amp.loss}")
    header = [
        "// Synthetic TOSA training step generated by bench/gen_training_graph.py --mlp:",
        f"// ReLU MLP {'-'.join(str(d) for d in dims)} (batch {B}), softmax cross-entropy,",
        "// hand-written backward, SGD (lr 0.01).",
        "func.func @train_step(",
        ",\n".join("    " + a for a in args),
        "  ) -> (",
        ",\n".join("    " + r for r in results),
        "  ) {",
    ]
    total_ops = consts.ops + body.ops + 1
    text = "\n".join(header + consts.lines + body.lines + ["}", ""])
    return text, total_ops


def generate(target_ops, seed=0, batch=16, width=32):
    """Smallest layer count whose graph has >= target_ops ops (at least 1)."""
    def make(layers):
        return build(layers, random.Random(seed), batch, width)

    # The op count grows by ~50 per layer; estimate, then step.
    _, one = make(1)
    _, three = make(3)
    per_layer = max(1.0, (three - one) / 2.0)
    layers = max(1, int(round((target_ops - one) / per_layer)) + 1)
    text, ops = make(layers)
    while ops < target_ops:
        layers += max(1, int((target_ops - ops) / per_layer))
        text, ops = make(layers)
    while layers > 1:
        smaller, sops = make(layers - 1)
        if sops < target_ops:
            break
        layers, text, ops = layers - 1, smaller, sops
    return text, ops, layers


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("num_ops", type=int, nargs="?", default=0,
                    help="approximate number of ops (the residual RMS-norm model)")
    ap.add_argument("--mlp", metavar="D0,D1,...",
                    help="instead: a plain ReLU MLP with these widths (last = classes), "
                         "e.g. 1024,4096,4096,1024,16 with --batch 512")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--width", type=int, default=32)
    args = ap.parse_args()
    if args.mlp:
        dims = [int(d) for d in args.mlp.split(",")]
        if len(dims) < 2:
            ap.error("--mlp needs at least two widths")
        text, ops = build_mlp(dims, args.batch)
        sys.stdout.write(text)
        print(f"gen_training_graph: MLP {args.mlp}, {ops} ops", file=sys.stderr)
        return
    text, ops, layers = generate(args.num_ops, args.seed, args.batch, args.width)
    sys.stdout.write(text)
    print(f"gen_training_graph: {layers} layers, {ops} ops", file=sys.stderr)


if __name__ == "__main__":
    main()
