"""amp_mlir.torch.export_train_step: export PyTorch training steps to TOSA, check them with mlir-opt and
amp-opt, and run them with amp-train against PyTorch (fp32 within 1e-3 relative at every step of 50; f16
within 2% of the initial loss of the fp32 loss after the same number of applied steps)."""

import copy
import json
import math
import os
import re
import shutil
import subprocess
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
nn = torch.nn
F = torch.nn.functional

from amp_mlir.torch import (  # noqa: E402
    UnsupportedOpError,
    export_train_step,
    supported_ops,
    torch_reference_losses,
    torch_train_step,
)
from amp_mlir.torch.models import MLP, TransformerBlock, TransformerClassifier  # noqa: E402
from conftest import amp_train_records  # noqa: E402

STEPS = 50
FP32_RTOL = 1e-3
F16_TOL = 0.02


# --------------------------------------------------------------------------- models
def make_mlp():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))
    return model, F.cross_entropy, (torch.randn(16, 16), torch.randint(0, 10, (16,)))


def make_transformer():
    torch.manual_seed(0)
    return TransformerBlock(), F.mse_loss, (torch.randn(2, 8, 16), torch.randn(2, 8, 16))


def make_classifier():
    """The GPU benchmark's models (bench/gpu), at toy sizes: multi-head attention, mean pool, head."""
    torch.manual_seed(0)
    model = TransformerClassifier(d=32, heads=4, mlp_ratio=2, classes=10)
    return model, F.cross_entropy, (torch.randn(2, 8, 32), torch.randint(0, 10, (2,)))


def make_bench_mlp():
    torch.manual_seed(0)
    return MLP(32, 64, 64, 32, 10), F.cross_entropy, (torch.randn(16, 32), torch.randint(0, 10, (16,)))


def make_cnn():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(8 * 4 * 4, 10))
    return model, F.cross_entropy, (torch.randn(8, 3, 8, 8), torch.randint(0, 10, (8,)))


CASES = {
    "mlp_sgd": (make_mlp, dict(optimizer="sgd", lr=0.1)),
    "mlp_sgd_wd": (make_mlp, dict(optimizer="sgd", lr=0.1, weight_decay=1e-2)),
    "mlp_sgd_momentum_wd": (make_mlp, dict(optimizer="sgd", lr=0.05, momentum=0.9, weight_decay=1e-2)),
    "transformer_adam": (make_transformer, dict(optimizer="adam", lr=1e-3)),
    "cnn_sgd": (make_cnn, dict(optimizer="sgd", lr=0.1)),
    "classifier_adam": (make_classifier, dict(optimizer="adam", lr=1e-3)),
    "bench_mlp_sgd": (make_bench_mlp, dict(optimizer="sgd", lr=0.1)),
}


# --------------------------------------------------------------------------- helpers
def _run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-4000:]}"
    return r.stdout


_RUNS = {}


def _amp_train(tools, step, precision):
    key = (str(step.mlir_path), precision)
    if key not in _RUNS:
        _RUNS[key] = _amp_train_uncached(tools, step, precision)
    return _RUNS[key]


def _amp_train_uncached(tools, step, precision):
    rows = amp_train_records(tools["amp_train"], step.mlir_path, f"--precision={precision}", "--inputs",
                             step.out_dir, steps=STEPS, timeout=300)
    assert [r["step"] for r in rows] == list(range(STEPS)), rows[-3:]
    return rows


def _losses(tools, step, steps, precision="fp32"):
    """amp-train's losses over ``steps`` steps of an exported step from its initial values."""
    rows = amp_train_records(tools["amp_train"], step.mlir_path, "--inputs", step.out_dir,
                             f"--precision={precision}", "--no-jit-cache", steps=steps, timeout=300)
    return [r["loss"] for r in rows]


def _trains_as_pytorch(model, inputs, out_dir, tools, loss=F.cross_entropy, rtol=1e-5, steps=3, atol=0.0,
                       export_options=None, **options):
    """``model``'s step exported (torch-mlir) and trained ``steps`` steps in fp32 by amp-train: its losses
    PyTorch's within ``rtol`` (and ``atol``). ``options`` (the optimizer's) go to the export and to PyTorch's
    run, ``export_options`` (``dialect=``) to the export only. Returns (the exported step, its fp32 losses)."""
    step = export_train_step(model, loss, inputs, out_dir=out_dir, **options, **(export_options or {}))
    want = torch_reference_losses(model, loss, inputs, steps=steps, **options)
    fp32 = _losses(tools, step, steps)
    np.testing.assert_allclose(fp32, want, rtol=rtol, atol=atol)
    return step, fp32


_EXPORTS = {}


def _export(case, tmp_path_factory):
    """Export a case once per session (the fp32 and f16 tests share it)."""
    if case not in _EXPORTS:
        make, kw = CASES[case]
        model, loss_fn, inputs = make()
        out = tmp_path_factory.mktemp(case)
        step = export_train_step(model, loss_fn, inputs, out_dir=out, frontend="builtin", **kw)
        ref = torch_reference_losses(model, loss_fn, inputs, steps=STEPS, **kw)
        _EXPORTS[case] = (step, ref, model, kw)
    return _EXPORTS[case]


# --------------------------------------------------------------------------- tests
@pytest.mark.parametrize("case", list(CASES))
def test_export_contract(case, tmp_path_factory):
    step, _, model, kw = _export(case, tmp_path_factory)
    text, man = step.text, step.manifest
    params = [p for p in model.parameters()]
    n_p = len(params)
    n_state = {"sgd": n_p if kw.get("momentum", 0) else 0, "adam": 2 * n_p + 1}[kw["optimizer"]]
    args, results = man["arguments"], man["results"]
    assert len(args) == n_p + n_state + 2
    assert [a["kind"] for a in args[:n_p]] == ["param"] * n_p
    assert [a["kind"] for a in args[-2:]] == ["input", "target"]
    for a, p in zip(args, params):
        assert a["shape"] == list(p.shape)
    if kw["optimizer"] == "adam":
        assert [a["kind"] for a in args[n_p:n_p + n_state]] == ["adam_m"] * n_p + ["adam_v"] * n_p + ["step"]
        assert args[n_p + n_state - 1]["shape"] == []
    # every argument has an amp.init hint and an .npy of the right shape / dtype
    assert text.count("{amp.init = #amp.init<") == len(args)
    for a in args:
        arr = np.load(step.out_dir / a["file"])
        assert list(arr.shape) == a["shape"]
        assert arr.dtype == (np.float32 if a["dtype"] == "float32" else np.int32)
        if a["kind"] in ("momentum", "adam_m", "adam_v", "step"):
            assert not arr.any() and a["amp_init"] == "#amp.init<zeros>"
    assert args[-1]["amp_init"] == ("#amp.init<labels(10)>" if args[-1]["dtype"] == "int32" else
                                    "#amp.init<normal(%.4g)>" % float(
                                        np.load(step.out_dir / args[-1]["file"]).std(ddof=1)))
    # results: every parameter and state tensor updated, then the loss
    assert len(results) == n_p + n_state + 1
    for i in range(n_p + n_state):
        assert f"{{amp.update_of = {i} : i64}}" in text
    assert "tensor<f32> {amp.loss}" in text
    assert text.count("{amp.grad_seed}") == 1
    assert man["torch_version"] == torch.__version__
    assert json.loads((step.out_dir / "manifest.json").read_text()) == json.loads(json.dumps(man))
    assert (step.out_dir / f"{step.name}.mlir").read_text() == text


@pytest.mark.parametrize("case", list(CASES))
def test_mlir_opt_and_amp_pipeline(case, tmp_path_factory, amp_tools):
    step, _, _, _ = _export(case, tmp_path_factory)
    assert amp_tools["mlir_opt"], "mlir-opt (LLVM 22) not found; set MLIR_OPT"
    # Plain mlir-opt knows TOSA; the #amp attributes are those of a dialect it does not have.
    _run([amp_tools["mlir_opt"], "--allow-unregistered-dialect", str(step.mlir_path), "-o", "/dev/null"])
    _run([amp_tools["amp_opt"], str(step.mlir_path), "--amp-pipeline", "-o", "/dev/null"])


@pytest.mark.parametrize("case", list(CASES))
def test_fp32_matches_pytorch(case, tmp_path_factory, amp_tools):
    step, ref, _, _ = _export(case, tmp_path_factory)
    rows = _amp_train(amp_tools, step, "fp32")
    losses = np.array([r["loss"] for r in rows])
    ref = np.array(ref)
    rel = np.abs(losses - ref) / np.abs(ref)
    assert rel.max() <= FP32_RTOL, f"max relative loss difference {rel.max():.3g} at step {rel.argmax()}"
    assert not any(r["skipped"] for r in rows)
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("case", list(CASES))
def test_f16_tracks_fp32(case, tmp_path_factory, amp_tools):
    step, ref, _, _ = _export(case, tmp_path_factory)
    fp32 = [r["loss"] for r in _amp_train(amp_tools, step, "fp32")]
    rows = _amp_train(amp_tools, step, "f16")
    losses = [r["loss"] for r in rows]
    assert all(np.isfinite(losses))
    # The last printed loss comes after the updates of steps 0..STEPS-2 that were not skipped.
    applied = sum(not r["skipped"] for r in rows[:-1])
    assert applied >= STEPS // 2
    diff = abs(losses[-1] - fp32[applied])
    assert diff <= F16_TOL * fp32[0], f"f16 {losses[-1]} vs fp32 {fp32[applied]} after {applied} steps"


class SortModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(torch.sort(x, dim=-1).values)


class CumsumModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(torch.cumsum(x, dim=-1))


@pytest.mark.parametrize("model_cls, op", [(SortModel, "aten.sort"), (CumsumModel, "aten.cumsum")])
def test_unsupported_op(model_cls, op, tmp_path):
    torch.manual_seed(0)
    with pytest.raises(UnsupportedOpError, match=op.replace(".", r"\.")) as info:
        export_train_step(model_cls(), F.cross_entropy, (torch.randn(4, 8), torch.randint(0, 4, (4,))),
                          out_dir=tmp_path, lr=0.1, frontend="builtin")
    msg = str(info.value)
    assert "is not supported by amp_mlir.torch" in msg and "supported:" in msg
    assert "aten.addmm.default" in msg  # the message lists what is supported


def test_supported_ops_list():
    ops = set(supported_ops())
    for op in ["aten.addmm.default", "aten.convolution.default", "aten.convolution_backward.default",
               "aten.native_layer_norm.default", "aten.native_layer_norm_backward.default",
               "aten.max_pool2d_with_indices.default", "aten.max_pool2d_with_indices_backward.default",
               "aten._softmax.default", "aten._softmax_backward_data.default", "aten.gelu.default",
               "aten.gelu_backward.default", "aten.nll_loss_forward.default", "aten.mse_loss.default",
               "aten.bmm.default", "aten.expand.default", "aten.permute.default"]:
        assert op in ops, op


def test_bad_arguments(tmp_path):
    model, loss_fn, inputs = make_mlp()
    with pytest.raises(ValueError):
        export_train_step(model, loss_fn, inputs, optimizer="rmsprop", out_dir=tmp_path)
    with pytest.raises(ValueError):
        export_train_step(model, loss_fn, inputs[:1], out_dir=tmp_path)


# --------------------------------------------------------------------------- the torch-mlir front end
def _torch_mlir():
    return pytest.importorskip("torch_mlir.fx", reason="torch-mlir is not installed (make py-models)")


def test_torch_mlir_contract_and_values(tmp_path, amp_tools):
    """The default front end writes the training-step contract itself: the seed is an argument with
    amp.grad_seed, batch-norm running statistics are state updated by results, and amp-train's fp32
    losses and running statistics equal PyTorch's (SGD with momentum and weight decay, batch norm in
    training mode; not Adam here: the gradient of a bias before batch norm is rounding noise, which
    Adam normalises into full-size steps of random sign, so its running mean is not reproducible)."""
    _torch_mlir()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))
    inputs = (torch.randn(8, 6), torch.randint(0, 3, (8,)))
    step = export_train_step(model, F.cross_entropy, inputs, optimizer="sgd", lr=0.1, momentum=0.9,
                             weight_decay=0.01, out_dir=tmp_path)
    assert step.manifest["frontend"] == "torch-mlir"
    kinds = [a["kind"] for a in step.manifest["arguments"]]
    assert kinds.count("buffer") == 3 and kinds.count("momentum") == 6 and kinds[-1] == "seed"  # running mean, var, num_batches_tracked
    assert "amp.grad_seed" in step.text and "#amp.init<ones>" in step.text and "amp.loss" in step.text
    assert "torch." not in step.text.split("module", 1)[1].replace("torch.nn", "").replace(
        "torch.autocast(enabled=False)", "")  # nothing torch left (the update pinned f32 is named by its location)
    proc = subprocess.run([amp_tools["amp_train"], str(step.mlir_path), "--inputs", str(tmp_path), "--steps", "4",
                           "--precision=fp32", "--dump", str(tmp_path / "after"), "--no-jit-cache"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    ours = [json.loads(line)["loss"] for line in proc.stdout.splitlines() if line.startswith("{")]
    ref = copy.deepcopy(model).train()
    opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)
    want = []
    for _ in range(4):
        opt.zero_grad()
        loss = F.cross_entropy(ref(inputs[0]), inputs[1])
        loss.backward()
        opt.step()
        want.append(float(loss.detach()))
    np.testing.assert_allclose(ours, want, rtol=1e-5)
    # the running mean after 4 steps (argument index of the first buffer) is PyTorch's
    i = kinds.index("buffer")
    for j, want_buffer in enumerate([ref[1].running_mean, ref[1].running_var, ref[1].num_batches_tracked]):
        np.testing.assert_allclose(np.load(tmp_path / "after" / f"arg{i + j}.npy"), want_buffer.numpy(),
                                   rtol=1e-5, atol=1e-6)


def test_torch_mlir_unsupported_op_is_named(tmp_path):
    """An op torch-mlir cannot lower is an UnsupportedOpError that names it and where it came from."""
    _torch_mlir()

    class BesselJ0(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 4)

        def forward(self, x):
            return self.fc(torch.special.bessel_j0(x))

    with pytest.raises(UnsupportedOpError) as info:
        export_train_step(BesselJ0(), F.cross_entropy, (torch.randn(4, 8), torch.randint(0, 4, (4,))),
                          out_dir=tmp_path)
    assert "torch.aten.special_bessel_j0" in str(info.value) and "test_torch_export.py" in str(info.value)


class _ClampWithOwnGradient(torch.autograd.Function):
    """An old-style custom autograd.Function (no setup_context, as BLOOM's GELU): its backward is not the
    derivative of its forward, so the trained values show which one the captured step used."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(-1.0, 1.0)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (1.0 + 0.5 * (x.abs() > 1.0).to(grad.dtype))


class _FusedQKVAttention(nn.Module):
    """One projection for query, key and value split by select on a middle dimension (BLOOM's layout):
    the gradient of the three selects, decomposed, is not laid out as the eager one, so the view back to
    the projection's shape needs the capture's view-as-reshape replay."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(16, 48)
        self.out = nn.Linear(16, 3)

    def forward(self, x):
        b, t, _ = x.shape
        fused = self.qkv(x).view(b, t, 4, 3, 4)
        q, k, v = fused[..., 0, :], fused[..., 1, :], fused[..., 2, :]
        attn = torch.softmax(torch.einsum("bthd,bshd->bhts", q, k), dim=-1)
        h = torch.einsum("bhts,bshd->bthd", attn, v).reshape(b, t, 16)
        return self.out(_ClampWithOwnGradient.apply(3.0 * h).mean(1))


def test_torch_mlir_custom_function_and_fused_qkv(tmp_path, amp_tools):
    """A custom autograd.Function without setup_context is captured through its own backward, and a fused
    query-key-value projection's gradient views back into shape: amp-train's fp32 losses equal PyTorch's
    eager training (which runs that backward) over 4 SGD steps."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _FusedQKVAttention()
    inputs = (torch.randn(2, 5, 16), torch.randint(0, 3, (2,)))
    step = export_train_step(model, F.cross_entropy, inputs, optimizer="sgd", lr=0.5, out_dir=tmp_path)
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=4, optimizer="sgd", lr=0.5)
    np.testing.assert_allclose(_losses(amp_tools, step, 4), want, rtol=1e-5)


class _Bernoulli(nn.Module):
    """loss = mean(w * bernoulli(1/2)) over 4096 elements: with lr 0, each step's loss is the kept
    fraction of that step's draw."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4096))

    def forward(self, x):
        return (self.w * torch.bernoulli(torch.full_like(self.w, 0.5))).mean() + 0.0 * x.sum()


def test_torch_mlir_random_ops_draw_from_the_step_state(tmp_path, amp_tools):
    """A random op is drawn from the step's random-number state (an argument the step advances), not
    traced into a constant: the compiled step's draws are the Python reference's (_decompositions.
    _uniform at state = step, op 0) bit for bit, different at every step."""
    _torch_mlir()
    from amp_mlir.torch import _decompositions

    step = export_train_step(_Bernoulli(), lambda out, target: out, (torch.zeros(1), torch.zeros(1)),
                             optimizer="sgd", lr=0.0, out_dir=tmp_path)
    kinds = [a["kind"] for a in step.manifest["arguments"]]
    assert kinds.count("rng") == 1
    i = kinds.index("rng")
    assert any(r.get("update_of") == i for r in step.manifest["results"])
    ours = _losses(amp_tools, step, 3)
    want = [float((_decompositions._uniform(torch.tensor(s), 0, (4096,), torch.float32, None) < 0.5).float().mean())
            for s in range(3)]
    assert ours == pytest.approx(want, rel=1e-6) and len(set(want)) == 3


def test_torch_mlir_dropout_mask_changes_every_step(tmp_path, amp_tools):
    """nn.Dropout in training mode: a fresh mask at every step (the same model without the random-number
    state would repeat one mask), kept at rate 1 - p, in fp32 and f16 alike."""
    _torch_mlir()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Dropout(0.5), nn.Linear(4096, 1, bias=False))
    nn.init.ones_(model[1].weight)
    # lr 1e-6, not 0: the f16 step must use its gradients (the loss scaling checks them)
    step = export_train_step(model, lambda out, target: out.mean() / 4096, (torch.ones(1, 4096), torch.zeros(1)),
                             optimizer="sgd", lr=1e-6, out_dir=tmp_path)
    for precision in ("fp32", "f16"):
        losses = _losses(amp_tools, step, 4, precision)
        # each loss is (kept fraction) / (1 - p): 1 within 5 standard errors of 4096 draws
        assert all(abs(v - 1.0) < 5 * 2 * (0.25 / 4096) ** 0.5 for v in losses), losses
        assert len(set(losses)) == 4, losses


class _ScaledBernoulli(nn.Module):
    """loss = mean(w * bernoulli(1/2)) * sum(x): the input reaches the gradient, so a poisoned batch
    makes the f16 step's gradients inf and GradScaler's rules skip it."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4096))

    def forward(self, x):
        return (self.w * torch.bernoulli(torch.full_like(self.w, 0.5))).mean() * x.sum()


def test_random_state_moves_on_at_a_skipped_step(tmp_path, amp_tools):
    """A step amp-loss-scaling skips keeps the parameters and the optimizer state, but the random-number
    state moves on, as PyTorch's generator does when GradScaler skips ``optimizer.step()`` (the forward
    pass drew its mask): the rng result carries ``amp.after_step`` (state + 1 reads no updated value, so
    it is not guarded). The step after the skipped one draws at state 2, not again at state 1, and the
    state is 3 after 3 steps. Before, the retried step drew the skipped step's mask again."""
    _torch_mlir()
    from amp_mlir.torch import _decompositions

    step = export_train_step(_ScaledBernoulli(), lambda out, target: out, (torch.ones(1), torch.zeros(1)),
                             optimizer="sgd", lr=1e-3, out_dir=tmp_path / "step")
    rng = [a["kind"] for a in step.manifest["arguments"]].index("rng")
    assert re.search(rf"amp.after_step, amp.update_of = {rng} : i64", step.mlir_path.read_text())
    rows = amp_train_records(amp_tools["amp_train"], step.mlir_path, "--inputs", step.out_dir, "--precision=f16",
                             "--no-jit-cache", "--poison-step=1", f"--dump={tmp_path / 'dump'}", steps=3)
    assert [r["skipped"] for r in rows] == [False, True, False]
    draws = [float((_decompositions._uniform(torch.tensor(s), 0, (4096,), torch.float32, None) < 0.5).float().mean())
             for s in range(3)]
    assert draws[1] != draws[2]
    assert rows[0]["loss"] == pytest.approx(draws[0], rel=1e-3)
    assert rows[2]["loss"] == pytest.approx(draws[2], rel=1e-3)
    assert int(np.load(tmp_path / "dump" / f"arg{rng}.npy")) == 3


class _RReLU(nn.Module):
    def __init__(self, lower, upper):
        super().__init__()
        self.inp, self.out, self.bounds = nn.Linear(8, 24), nn.Linear(24, 3), (lower, upper)

    def forward(self, x):
        return self.out(F.rrelu(self.inp(x), *self.bounds, training=self.training))


def test_rrelu_trains_as_pytorch(tmp_path, amp_tools):
    """``nn.RReLU`` / ``F.rrelu``. In evaluation (the mean slope) the step trains as PyTorch does: torch-mlir's
    own lowering of its backward computed ``max(grad, 0) + slope * min(x, 0)``, and the losses parted from
    PyTorch's by 2-3% in two steps, silently. In training each non-positive element draws its own slope from
    the step's random-number state (an rng argument): with ``lower == upper`` the step trains as PyTorch's;
    with a range, as PyTorch with the same slopes (``_decompositions._uniform`` at state = step, op 0), the
    gradient through each element's own slope."""
    _torch_mlir()
    from amp_mlir.torch import _decompositions

    torch.manual_seed(0)
    inputs = (torch.randn(4, 8, generator=torch.Generator().manual_seed(1)), torch.tensor([0, 2, 1, 2]))
    _trains_as_pytorch(_RReLU(1 / 8, 1 / 3).eval(), inputs, tmp_path / "eval", amp_tools, optimizer="sgd", lr=0.1)
    _trains_as_pytorch(_RReLU(0.2, 0.2), inputs, tmp_path / "fixed", amp_tools, optimizer="sgd", lr=0.1)
    model = _RReLU(0.1, 0.3)
    step = export_train_step(model, F.cross_entropy, inputs, optimizer="sgd", lr=0.1, out_dir=tmp_path / "drawn")
    assert [a["kind"] for a in step.manifest["arguments"]].count("rng") == 1
    reference = copy.deepcopy(model)
    opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    want = []
    for state in range(3):
        opt.zero_grad()
        h = reference.inp(inputs[0])
        slope = 0.1 + 0.2 * _decompositions._uniform(torch.tensor(state), 0, h.shape, torch.float32, None)
        loss = F.cross_entropy(reference.out(torch.where(h <= 0, h * slope, h)), inputs[1])
        loss.backward()
        opt.step()
        want.append(float(loss))
    np.testing.assert_allclose(_losses(amp_tools, step, 3), want, rtol=1e-5)


class _RandomIntegers(nn.Module):
    """loss = mean of randint(3, 9, (4096,)) and randint_like(x, 5) as floats (with lr 0, each step's draws)."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(1))

    def forward(self, x):
        draws = torch.cat([torch.randint(3, 9, (4096,)).float(), torch.randint_like(x, 5)])
        return (self.w * draws).mean()


def test_torch_mlir_randint_draws_from_the_step_state(tmp_path, amp_tools):
    """randint / randint_like are drawn from the step's random-number state: the compiled step's draws are
    the Python reference's (_decompositions._randint_values at state = step, ops 0 and 1), different at every
    step, every value in range and each one drawn (DAC's quantizer dropout draws its codebook counts so)."""
    _torch_mlir()
    from amp_mlir.torch import _decompositions

    step = export_train_step(_RandomIntegers(), lambda out, target: out, (torch.zeros(64), torch.zeros(1)),
                             optimizer="sgd", lr=0.0, out_dir=tmp_path)
    ours = _losses(amp_tools, step, 3)
    want = []
    for s in range(3):
        a = _decompositions._randint_values(torch.tensor(s), 0, 3, 9, (4096,), torch.int64, None)
        b = _decompositions._randint_values(torch.tensor(s), 1, 0, 5, (64,), torch.float32, None)
        assert int(a.min()) == 3 and int(a.max()) == 8 and set(b.tolist()) == {0.0, 1.0, 2.0, 3.0, 4.0}
        want.append(float(torch.cat([a.float(), b]).mean()))
    np.testing.assert_allclose(ours, want, rtol=1e-6)
    assert len(set(want)) == 3


class _NormalNoise(nn.Module):
    """loss = mean((w * randn(4096))^2), the reparameterisation of a VAE (or Reformer's random rotations)
    in miniature: with lr 0, each step's loss is the mean square of that step's normal draws."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(4096))

    def forward(self, x):
        return (self.w * torch.randn(4096)).pow(2).mean() + 0.0 * x.sum()


def test_torch_mlir_normal_draws_from_the_step_state(tmp_path, amp_tools):
    """randn is drawn from the step's random-number state (Box-Muller on two uniform numbers): the compiled
    step's draws are the Python reference's (_decompositions._normal at state = step, op 0), different at
    every step, and normal (mean square within 5 standard errors of 1)."""
    _torch_mlir()
    from amp_mlir.torch import _decompositions

    step = export_train_step(_NormalNoise(), lambda out, target: out, (torch.zeros(1), torch.zeros(1)),
                             optimizer="sgd", lr=0.0, out_dir=tmp_path)
    ours = _losses(amp_tools, step, 3)
    want = [float(_decompositions._normal(torch.tensor(s), 0, (4096,), torch.float32, None).pow(2).mean())
            for s in range(3)]
    np.testing.assert_allclose(ours, want, rtol=1e-5)
    assert len(set(want)) == 3 and all(abs(v - 1.0) < 5 * (2.0 / 4096) ** 0.5 for v in want), want


class _EveryDraw(nn.Module):
    """The spellings of a draw that each have their own overload: ``generator=None`` passed explicitly
    (diffusers' ``randn_tensor``), ``torch.normal`` with numbers, a tensor mean or a tensor std, ``randint``
    with a generator argument."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(256))

    def forward(self, x):
        draws = [torch.randn(256, generator=None), torch.rand(256, generator=None) - 0.5,
                 torch.normal(0.0, 1.0, (256,)), torch.normal(torch.zeros(256), 2.0),
                 torch.normal(torch.zeros(256), torch.full((256,), 0.5)), torch.normal(1.0, torch.ones(256)) - 1,
                 torch.randint(0, 4, (256,), generator=None).float() - 1.5,
                 torch.randint(4, (256,), generator=None).float() - 1.5]
        return sum((self.w * d).pow(2).mean() for d in draws) + 0.0 * x.sum()


def test_torch_mlir_every_overload_of_a_draw_uses_the_step_state(tmp_path, amp_tools):
    """Each overload draws from the step's random-number state: with lr 0 the loss changes at every step
    (``torch.randn(shape, generator=None)`` was a constant of the step, the same numbers at every step, and
    uniform ones); the losses are near their expected value (1 + 1/12 + 1 + 4 + 1/4 + 1 + 1.25 * 2)."""
    _torch_mlir()
    step = export_train_step(_EveryDraw(), lambda out, target: out, (torch.zeros(1), torch.zeros(1)),
                             optimizer="sgd", lr=0.0, out_dir=tmp_path)
    assert [a["kind"] for a in step.manifest["arguments"]].count("rng") == 1
    losses = _losses(amp_tools, step, 3)
    assert len(set(losses)) == 3, losses
    assert all(abs(v - (1 + 1 / 12 + 1 + 4 + 0.25 + 1 + 2.5)) < 1.5 for v in losses), losses


def test_torch_mlir_other_random_ops_are_named(tmp_path):
    """A random op the capture does not draw (randperm) is an UnsupportedOpError naming it."""
    _torch_mlir()

    class Noisy(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x[torch.randperm(3)])

    with pytest.raises(UnsupportedOpError, match="randperm"):
        export_train_step(Noisy(), F.cross_entropy, (torch.randn(3, 4), torch.randint(0, 2, (3,))),
                          out_dir=tmp_path)


class _UNet(nn.Module):
    """Encoder-decoder: group norm, max pooling, a transposed convolution, a skip concatenation, a 1x1 head
    (per-pixel cross entropy)."""

    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.gn = nn.GroupNorm(2, 8)
        self.c2 = nn.Conv2d(8, 16, 3, padding=1)
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.head = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        a = F.silu(self.gn(self.c1(x)))
        b = F.relu(self.c2(F.max_pool2d(a, 2)))
        return self.head(torch.cat([a, self.up(b)], 1))


class _Resample(nn.Module):
    """Instance norm, bilinear upsampling, nearest upsampling of a strided slice."""

    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 4, 3, padding=1)
        self.norm = nn.InstanceNorm2d(4, affine=True)

    def forward(self, x):
        h = F.interpolate(self.norm(self.c(x)), scale_factor=2, mode="bilinear", align_corners=False)
        h = h + F.interpolate(h[:, :, ::2, ::2], scale_factor=2, mode="nearest")
        return h.mean((2, 3))


class _ShiftedMix(nn.Module):
    """Swin's cyclic shift: a roll over two dimensions, a per-token mix, the roll back."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        h = torch.roll(x, shifts=(-2, -2), dims=(1, 2))
        h = torch.roll(F.gelu(self.fc(h)) * torch.arange(1.0, 7.0).view(1, 6, 1, 1), shifts=(2, 2), dims=(1, 2))
        return self.head((x + h).mean((1, 2)))


class _UnfoldMix(nn.Module):
    """nn.Unfold's sliding blocks (ConvBERT's span convolution), mixed by a linear layer: the backward is
    col2im, an accumulating index_put with two index tensors."""

    def __init__(self):
        super().__init__()
        self.pre = nn.Conv2d(3, 3, 1)
        self.unfold = nn.Unfold(kernel_size=(3, 2), padding=(1, 0), stride=(1, 2))
        self.fc = nn.Linear(3 * 3 * 2, 3)

    def forward(self, x):
        return self.fc(self.unfold(torch.tanh(self.pre(x))).transpose(1, 2)).mean(1)


@pytest.mark.parametrize("make", [
    lambda: (_UNet(), (torch.randn(2, 3, 16, 16), torch.randint(0, 4, (2, 16, 16)))),
    lambda: (_Resample(), (torch.randn(2, 3, 8, 8), torch.randint(0, 4, (2,)))),
    lambda: (_ShiftedMix(), (torch.randn(2, 6, 6, 4), torch.randint(0, 3, (2,)))),
    lambda: (_UnfoldMix(), (torch.randn(2, 3, 5, 6), torch.randint(0, 3, (2,)))),
], ids=["unet_conv_transpose", "upsample_instance_norm", "roll", "unfold"])
def test_torch_mlir_dense_prediction_ops(make, tmp_path, amp_tools):
    """Transposed convolutions, upsampling, rolls and unfold (their backward ops, and roll itself, are
    decompositions of ours): amp-train's fp32 losses equal PyTorch's over 3 SGD steps; f16 within 2% of
    fp32."""
    _torch_mlir()
    torch.manual_seed(0)
    model, inputs = make()
    step = export_train_step(model, F.cross_entropy, inputs, optimizer="sgd", lr=0.05, out_dir=tmp_path)
    fp32 = _losses(amp_tools, step, 3)
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=3, optimizer="sgd", lr=0.05)
    np.testing.assert_allclose(fp32, want, rtol=1e-5)
    np.testing.assert_allclose(_losses(amp_tools, step, 3, "f16"), fp32, rtol=F16_TOL)


class _WholeHeadRotary(nn.Module):
    """Phi-3's partial rotary embedding when the whole head rotates: the part left as is is an empty slice,
    concatenated back."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        h = self.fc(x)
        rot, rest = h[..., :8], h[..., 8:]
        rot = torch.cat((-rot[..., 4:], rot[..., :4]), -1) * 0.5 + rot
        return self.head(torch.cat((rot, rest), -1).tanh()).mean(1)


class _ZeroedKeyBias(nn.Module):
    """torchvision's Swin V2 attention: the key part of the qkv bias zeroed in place on a clone."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(6, 12)
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        bias = self.qkv.bias.clone()
        bias[4:8].zero_()
        q, k, v = F.linear(x, self.qkv.weight, bias).chunk(3, -1)
        return self.head((q @ k.transpose(1, 2)).softmax(-1) @ v).mean(1)


class _Trigram(nn.Module):
    """MobileBERT's trigram embedding: each token beside its shifted neighbours, made with pads (whose
    backward crops: a pad by -1)."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(6, 4)
        self.fc = nn.Linear(12, 3)

    def forward(self, x):
        e = self.embed(x)
        t = torch.cat((F.pad(e[:, 1:], [0, 0, 0, 1, 0, 0]), e, F.pad(e[:, :-1], [0, 0, 1, 0, 0, 0])), 2)
        return self.fc(t.tanh()).mean(1)


class _WindowMask(nn.Module):
    """torchvision Swin3D's shifted-window mask, filled slice by slice: with a window as large as the input
    some slices are empty (``mask[2:2] = cnt``)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)

    def forward(self, x):  # x: [2, 5, 6]
        mask = x.new_zeros(5, 6)
        for count, (start, stop) in enumerate(((0, 3), (3, 3), (3, 5))):
            mask[start:stop] = 17.0 * count
        return self.fc(x + mask.softmax(-1)).mean(1)


class _WritesAfterSlice(nn.Module):
    """Writes through an index list after a slice (``t[:, [1, 3, 9]] += v``, ``= v``, ``= 0.5``; and with a
    trailing integer index) and through two broadcast index tensors, which torch-mlir's conversion of
    index_put refused."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 16)
        self.head = nn.Linear(16, 3)

    def forward(self, x):  # x: [2, 5, 6]
        h = self.fc(x).mean(1)
        z = torch.zeros(2, 16)
        z[:, [1, 3, 9]] += h[:, :3]
        z[:, [0, 4]] = h[:, 4:6] * 2
        z[:, [5, 7]] = 0.5
        z[torch.arange(2)[:, None], torch.tensor([[11, 13]])] = h[:, 9:11]  # two index tensors
        z3 = z.reshape(2, 4, 4).clone()
        z3[:, [1, 2], 3] = h[:, 7:9]
        return self.head(h + z3.reshape(2, 16) * h)


@pytest.mark.parametrize("model", [_WholeHeadRotary, _ZeroedKeyBias, _Trigram, _WindowMask, _WritesAfterSlice],
                         ids=["empty_slice", "in_place_slice_update", "crop", "write_into_empty_slice",
                              "index_after_slice"])
def test_torch_mlir_slices_torch_mlir_cannot_lower(model, tmp_path, amp_tools):
    """Slices that torch-mlir could not lower as captured: an empty slice concatenated back (it and its
    gradient, zeros, leave the step; torch-mlir gave it a dynamic extent), an in-place op on a slice of a
    clone (an ``as_strided_scatter`` once functionalized, now a gather and a select), a pad by a negative
    amount (a crop, now a slice; torch-mlir made it a TOSA pad with negative padding), a write into an
    empty slice (dropped; functionalized, an empty constant torch-mlir did not lower), writes through index
    lists after a slice (the indexed dimension moved first): fp32 equals PyTorch over 3 SGD steps."""
    _torch_mlir()
    torch.manual_seed(0)
    model, inputs = model(), (torch.randn(2, 5, 6), torch.randint(0, 3, (2,)))
    _trains_as_pytorch(model, inputs, tmp_path, amp_tools, optimizer="sgd", lr=0.1)


class _CheckedInput(nn.Module):
    """A data-dependent input check that libraries skip while torch.export traces (transformers' padding
    warning on input ids, which stopped DeBERTa-v2's capture)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        if not torch.compiler.is_compiling() and bool((x == 0).any()):
            raise ValueError("a zero in the input")
        return self.fc(x)


def test_torch_mlir_captures_as_torch_export_traces(tmp_path, amp_tools):
    """The capture runs in torch.export's tracing state, so such a check is skipped, not traced: the step
    exports and trains as PyTorch does."""
    _torch_mlir()
    torch.manual_seed(0)
    model, inputs = _CheckedInput(), (torch.randn(2, 4), torch.randint(0, 3, (2,)))
    _trains_as_pytorch(model, inputs, tmp_path, amp_tools, optimizer="sgd", lr=0.1)


class _ReadsValues(nn.Module):
    """Python that reads tensor values, as transformers' XLM / FlauBERT (``assert lengths.max().item() <=
    slen``) and Longformer (``.any().item()`` picks a branch, ``nonzero`` finds the global tokens) do."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        assert x.abs().max().item() < 1e6
        h = self.fc(x)
        if (x > 0).any().item():
            h = torch.relu(h)
        first = x[:, 0] > 0
        k = int(first.sum())
        rows = torch.nonzero(first).squeeze(1)
        h = h + h[rows].sum(0) / k + h[:k].mean(0)
        # index tensors at dimensions apart (Longformer's global attention), in place and in the backward
        cols = torch.remainder(rows, 3)
        h3 = h.reshape(6, 2, 3).clone()
        h3[rows, :, cols] = 0.0
        h = h3.reshape(6, 6) + h.reshape(6, 2, 3)[rows, :, cols].sum()
        h[torch.nonzero(x[:, 0] > 1e3).squeeze(1)] = 1.0  # no row: an empty index, nothing written
        return self.head(h)


class _MaskedEmbeddingWrite(nn.Module):
    """A trainable vector written into the embeddings where a token appears (T5Gemma2's end-of-image
    embedding: ``embeddings[ids == eoi] = eoi_embedding``)."""

    def __init__(self):
        super().__init__()
        self.emb, self.special, self.head = nn.Embedding(128, 16), nn.Parameter(torch.randn(16)), nn.Linear(16, 3)

    def forward(self, ids):
        e = self.emb(ids)
        e[ids == 127] = self.special
        return self.head(e.mean(1))


@pytest.mark.parametrize("present", [False, True])
def test_masked_write_of_a_parameter(present, tmp_path, amp_tools):
    """A parameter written through a boolean mask, with the token in the example batch and without: where the
    mask selects nothing, the parameter's gradient gathers an empty tensor and sums it (torch-mlir cannot lower
    the zero-size index); that sum is zeros (``_empty_sum``). fp32 as PyTorch over 3 AdamW steps."""
    _torch_mlir()
    torch.manual_seed(0)
    ids = torch.randint(0, 100, (2, 8))
    if present:
        ids[0, 3] = 127
    from amp_mlir.torch._torch_mlir import SpecializationWarning
    with pytest.warns(SpecializationWarning, match=f"nonzero count {int(present)}"):
        _trains_as_pytorch(_MaskedEmbeddingWrite(), (ids, torch.tensor([0, 2])), tmp_path, amp_tools,
                           optimizer="adamw", lr=1e-2, weight_decay=0.1)


class _MaskLogits(nn.Module):
    """Mask logits from an einsum (EoMT's mask head) for ``binary_cross_entropy_with_logits``."""

    def __init__(self):
        super().__init__()
        self.q, self.k = nn.Linear(8, 16), nn.Linear(8, 16)

    def forward(self, x):
        return torch.einsum("bqc,bkc->bqk", self.q(x), self.k(x))


def test_float32_list_losses_stay_f32(tmp_path, amp_tools):
    """The losses on PyTorch's autocast float32 list (``binary_cross_entropy_with_logits`` here) are computed in
    an ``enabled=False`` region, pinned f32 with their backward (``_decompositions._in_float32``), as PyTorch's
    autocast computes them: EoMT's mask loss took f16 from its einsum, and its backward's ``(sigmoid(x) - t) *
    seed`` overflowed with the 65536 seed (a step skipped that PyTorch does not skip). The einsum itself stays
    autocast's; f16 within 1e-3 of fp32."""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.randn(2, 16, 8) * 3, (torch.rand(2, 16, 16) > 0.5).float())
    step = export_train_step(_MaskLogits(), F.binary_cross_entropy_with_logits, inputs, optimizer="adamw", lr=1e-3,
                             out_dir=tmp_path)
    pinned = [line for line in step.mlir_path.read_text().splitlines() if "#amp.precision<f32>" in line]
    assert any("tosa.sigmoid" in line for line in pinned) and any("tosa.log" in line for line in pinned)
    assert not any("tosa.matmul" in line for line in pinned)
    np.testing.assert_allclose(_losses(amp_tools, step, 3, "f16"), _losses(amp_tools, step, 3), rtol=1e-3)


class _CompilerPath(nn.Module):
    """A model that computes another function while a compiler traces it (as transformers' Gemma builds a causal
    mask under torch.export's tracing where it attends bidirectionally in eager mode)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 3)

    def forward(self, x):
        h = self.lin(x)
        return h * 0.5 if torch.compiler.is_compiling() else h


def test_capture_follows_the_eager_model(tmp_path, amp_tools):
    """The step is captured in torch.export's state first; where the loss it computes there differs from the
    eager model's on the example, it is captured in PyTorch's own state: the step trains as the eager model.
    The eager forward leaves the model's buffers (batch norm's running statistics) as they were."""
    _torch_mlir()
    torch.manual_seed(0)
    model = nn.Sequential(nn.BatchNorm1d(4), _CompilerPath())
    before = {k: v.clone() for k, v in model.state_dict().items()}
    _trains_as_pytorch(model, (torch.randn(4, 4), torch.tensor([0, 2, 1, 2])), tmp_path, amp_tools,
                       optimizer="sgd", lr=0.5)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_torch_mlir_specializes_values_read(tmp_path, amp_tools):
    """``.item()``, ``bool(tensor)``, ``int(tensor)`` and ``nonzero`` on traced tensors are specialized to
    the example inputs' values (as torch.export does): the export succeeds, warns with each value and its
    source line, leaves no ``_local_scalar_dense`` / ``nonzero`` in the step, and trains as PyTorch
    does on those inputs."""
    _torch_mlir()
    from amp_mlir.torch._torch_mlir import SpecializationWarning

    torch.manual_seed(0)
    model = _ReadsValues()
    x = torch.randn(6, 4)
    x[:, 0] = torch.tensor([1.0, -1.0, 2.0, -2.0, 3.0, -0.5])  # 3 rows selected
    inputs = (x, torch.randint(0, 3, (6,)))
    with pytest.warns(SpecializationWarning) as record:
        step = export_train_step(model, F.cross_entropy, inputs, optimizer="sgd", lr=0.1, out_dir=tmp_path)
    ours = [w for w in record if w.category is SpecializationWarning]
    assert len(ours) == 1  # once per capture
    message = str(ours[0].message)
    for line in (r"test_torch_export\.py:\d+ in forward \(`assert x\.abs\(\)\.max\(\)\.item\(\) < 1e6`\): "
                 r"value [0-9.]+, from the example inputs x\n",
                 r"\(`if \(x > 0\)\.any\(\)\.item\(\):`\): value True, from the example inputs x\n",
                 r"\(`k = int\(first\.sum\(\)\)`\): value 3, from the example inputs x\n",
                 r"\(`rows = torch\.nonzero\(first\)\.squeeze\(1\)`\): nonzero count 3, from the example inputs x"):
        assert re.search(line, message), (line, message)
    assert "nonzero count 0" in message
    assert not any("_local_scalar_dense" in op or "nonzero" in op for op in step.manifest["aten_ops"])
    assert "_local_scalar_dense" not in step.text and "torch.aten" not in step.text
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=3, optimizer="sgd", lr=0.1)
    np.testing.assert_allclose(_losses(amp_tools, step, 3), want, rtol=1e-5)

    # The values read from integer and boolean data are checked in the step (the float .item() is not): a
    # batch that gives another one stops the step with the value's line instead of training on the
    # example's graph.
    guards = re.findall(r'cf\.assert %\S+, "amp_mlir: the training step was captured for another batch: at ([^"]*)"',
                        step.text)
    assert sorted(re.search(r"\(`(.*?)`\)", g).group(1) for g in guards) == \
        ["h[torch.nonzero(x[:, 0] > 1e3).squeeze(1)] = 1.0  # no row: an empty index, nothing written",
         "if (x > 0).any().item():", "k = int(first.sum())", "rows = torch.nonzero(first).squeeze(1)"], guards
    more = x.clone()
    more[1, 0] = 1.0  # 4 rows selected
    result = _run_on_batch(amp_tools, step, tmp_path / "more", x=more)
    assert result.returncode == 3, result.stderr[-2000:]
    assert re.search(r"error: the compiled step failed a check: amp_mlir: the training step was captured for "
                     r"another batch: at test_torch_export\.py:\d+ in forward \(`(k = int|rows = torch\.nonzero)",
                     result.stderr), result.stderr[-2000:]
    assert "Stack dump" not in result.stderr
    # amp-train checks the batch before the step (amp-outline-batch-checks): the guards read only the batch.
    assert "the batch was refused before the step ran" in result.stderr, result.stderr[-2000:]
    negative = -x.abs()  # no row selected, (x > 0).any() False
    result = _run_on_batch(amp_tools, step, tmp_path / "negative", x=negative)
    assert result.returncode == 3 and "failed a check" in result.stderr, result.stderr[-2000:]


class _PixelClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 5, 3, padding=1)

    def forward(self, x):
        return self.conv(x)


@pytest.mark.parametrize("dialect", ["tosa", "linalg"])
def test_uint8_class_indices_train_as_pytorch(dialect, tmp_path, amp_tools):
    """Class indices stored as uint8 (labels kept in a byte array), which ``F.cross_entropy`` and
    ``F.nll_loss`` take for one index per sample ("expected target dtype to be Long or Byte"): the capture
    stopped at their decomposition's gather ("Expected dtype int32/int64 for index"); the indices are now
    widened to int64 before the loss (``_decompositions._long_class_indices``): fp32 as PyTorch, an ignored
    class (255) included. uint8 indices per pixel PyTorch refuses, and so does the export, as a step that
    fails in PyTorch itself."""
    _torch_mlir()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    x, labels = torch.randn(8, 6), torch.randint(0, 3, (8,)).to(torch.uint8)
    step = export_train_step(model, F.cross_entropy, (x, labels), optimizer="sgd", lr=0.1,
                             out_dir=tmp_path / "rows", dialect=dialect)
    want = torch_reference_losses(model, F.cross_entropy, (x, labels), steps=3, optimizer="sgd", lr=0.1)
    np.testing.assert_allclose(_losses(amp_tools, step, 3), want, rtol=1e-5)

    def nll_ignoring_255(logits, target):
        return F.nll_loss(F.log_softmax(logits, 1), target, ignore_index=255)

    labels[:2] = 255
    step = export_train_step(model, nll_ignoring_255, (x, labels), optimizer="adam", lr=0.01,
                             out_dir=tmp_path / "ignored", dialect=dialect)
    want = torch_reference_losses(model, nll_ignoring_255, (x, labels), steps=3, optimizer="adam", lr=0.01)
    np.testing.assert_allclose(_losses(amp_tools, step, 3), want, rtol=1e-5)

    mask = torch.randint(0, 5, (2, 6, 6)).to(torch.uint8)
    with pytest.raises(RuntimeError, match="expected scalar type Long but found Byte"):
        F.cross_entropy(_PixelClassifier()(torch.randn(2, 3, 6, 6)), mask)
    with pytest.raises(UnsupportedOpError, match=r"^the training step fails in PyTorch itself, before any "
                       r"capture: the loss function on the example inputs raises RuntimeError: expected scalar "
                       r"type Long but found Byte"):
        export_train_step(_PixelClassifier(), F.cross_entropy, (torch.randn(2, 3, 6, 6), mask), optimizer="sgd",
                          lr=0.1, out_dir=tmp_path / "pixels", dialect=dialect)


class _TwoHeads(nn.Module):
    """Detection-style: a dict of model inputs (a number among them), two outputs."""

    def __init__(self):
        super().__init__()
        self.body = nn.Linear(6, 16)
        self.cls = nn.Linear(16, 3)
        self.box = nn.Linear(16, 4)

    def forward(self, batch):
        h = torch.relu(self.body(batch["x"] * batch["scale"]) * batch["keep"])
        return self.cls(h), self.box(h)


def _two_head_loss(out, target):
    logits, boxes = out
    labels, gt_boxes, box_weight = target
    return F.cross_entropy(logits, labels) + box_weight * F.smooth_l1_loss(boxes, gt_boxes)


@pytest.mark.parametrize("accumulation_steps", [1, 2])
def test_containers_of_tensors_as_inputs_and_target(accumulation_steps, tmp_path, amp_tools):
    """Example inputs that are containers, as detection and multi-task loops pass them: a dict of model inputs
    and a ``(labels, boxes, weight)`` target. Every tensor inside is an argument of the step (pytree order,
    named by its place: ``x['keep']``, ``target[1]``), the other values (the number in the dict, the loss's
    weight) constants; the model and the loss get the containers back. With ``accumulation_steps`` every
    tensor inside is split into the micro-batches. fp32 as PyTorch. (A tuple target was an AttributeError,
    'tuple' object has no attribute 'detach'.)"""
    _torch_mlir()
    torch.manual_seed(0)
    model = _TwoHeads()
    batch = {"x": torch.randn(8, 6), "keep": (torch.rand(8, 16) > 0.2).float(), "scale": 2.0}
    target = (torch.randint(0, 3, (8,)), torch.randn(8, 4), 0.5)
    step = export_train_step(model, _two_head_loss, (batch, target), optimizer="adam", lr=0.01,
                             accumulation_steps=accumulation_steps, out_dir=tmp_path)
    args = [(a["kind"], a["name"]) for a in step.manifest["arguments"] if a["kind"] in ("input", "target")]
    assert args == [("input", "x['x']"), ("input", "x['keep']"), ("target", "target[0]"),
                    ("target", "target[1]")], args
    want = torch_reference_losses(model, _two_head_loss, (batch, target), steps=3, optimizer="adam", lr=0.01,
                                  accumulation_steps=accumulation_steps)
    np.testing.assert_allclose(_losses(amp_tools, step, 3), want, rtol=1e-5)
    with pytest.raises(ValueError, match=r"^example input 0 is a dict: frontend='builtin' takes tensors only"):
        export_train_step(model, _two_head_loss, (batch, target), optimizer="adam", out_dir=tmp_path / "builtin",
                          frontend="builtin")


class _FrozenNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return self.fc(F.relu(self.bn(self.conv(x))).mean((2, 3)))


def test_submodule_frozen_by_eval_stays_frozen(tmp_path, amp_tools):
    """A batch norm frozen with ``bn.eval()`` inside a model in training mode (fine-tuning with frozen
    statistics) trains with its running statistics, which the step keeps, as PyTorch does; and the export
    leaves it frozen: it put every submodule back in the model's mode (``model.train(True)``), silently
    unfreezing the user's batch norm for the rest of the script."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _FrozenNorm().train()
    model.bn.eval()
    inputs = (torch.randn(4, 3, 8, 8), torch.randint(0, 4, (4,)))
    step = export_train_step(model, F.cross_entropy, inputs, optimizer="adam", lr=0.01, out_dir=tmp_path)
    assert model.training and not model.bn.training
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=3, optimizer="adam", lr=0.01)
    np.testing.assert_allclose(_losses(amp_tools, step, 3), want, rtol=1e-5)
    model.bn.train()
    trained_statistics = torch_reference_losses(model, F.cross_entropy, inputs, steps=3, optimizer="adam", lr=0.01)
    assert abs(trained_statistics[0] - want[0]) > 1e-3  # the test tells the two modes apart


@pytest.mark.parametrize("dialect", ["tosa", "linalg"])
def test_label_past_the_classes_is_refused(dialect, tmp_path, amp_tools):
    """A class label past the classes is refused before the step, as PyTorch raises an IndexError there.
    torch-mlir's TOSA import picks each row's label out of the flattened logits, where label 3 of row 0 is
    row 1's first class: amp-outline-batch-checks checks the row and the label each against its own
    dimension, not the flattened number against the table. Its linalg import checks each label in the
    payload of the generic that picks it, which the pass hoists as a reduction over the labels. A label
    equal to ``ignore_index`` still trains as PyTorch does."""
    _torch_mlir()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    x, labels = torch.randn(8, 6), torch.randint(0, 3, (8,))
    step = export_train_step(model, F.cross_entropy, (x, labels), optimizer="sgd", lr=0.1,
                             out_dir=tmp_path / "step", dialect=dialect)
    past = labels.clone()
    past[0] = 3  # flattened: 0 * 3 + 3, inside the 8 x 3 logits
    with pytest.raises(IndexError):
        F.cross_entropy(model(x), past)
    result = _run_on_batch(amp_tools, step, tmp_path / "past", target=past)
    assert result.returncode == 3, result.stderr[-2000:]
    check = {"tosa": r"an index read from the batch is outside \[0, 8\) x \[0, 3\) in 'tosa\.gather'",
             "linalg": r"index must be smaller than dim size \(in 'linalg\.generic'\)"}[dialect]
    # located at the loss function's source (torch's own: FX records no frame inside it), called from the
    # exporter's call of it, not at the step's function
    assert re.search(r"torch/nn/functional\.py:\d+:0: error: the compiled step failed a check: " + check
                     + r" \(the batch was refused before the step ran", result.stderr), result.stderr[-2000:]
    assert re.search(r"amp_mlir/torch/_torch_mlir\.py:\d+:0: note: called from", result.stderr), \
        result.stderr[-2000:]
    ignored = labels.clone()
    ignored[0] = -100
    result = _run_on_batch(amp_tools, step, tmp_path / "ignored", target=ignored)
    assert result.returncode == 0, result.stderr[-2000:]
    loss = json.loads(result.stdout.splitlines()[0])["loss"]
    np.testing.assert_allclose(loss, float(F.cross_entropy(model(x), ignored)), rtol=1e-5)


def _validated_loss(out, t):
    """Cross-entropy that validates its target as ``torch.distributions`` does (``torch._check_tensor_all``:
    ``aten._is_all_true`` of a mask, read as a bool)."""
    torch._check_tensor_all(t >= 0)
    return F.cross_entropy(out, t)


def test_unchecked_specialization_warns(tmp_path, amp_tools, monkeypatch):
    """The check of a value read from the batch keeps the ops that compute it in the step (here the target's
    validation, ``aten._is_all_true``, decomposed as ``all``). Where torch-mlir cannot lower one of them (that
    decomposition taken away), the check would make the export fail: the step is exported without it, trains as
    PyTorch on the example, and a second SpecializationWarning says that it does not check the value, naming
    the op."""
    _torch_mlir()
    from amp_mlir.torch._torch_mlir import SpecializationWarning

    torch.manual_seed(0)
    inputs = (torch.randn(4, 4), torch.tensor([0, 2, 1, 2]))
    with pytest.warns(SpecializationWarning):
        step, _ = _trains_as_pytorch(nn.Linear(4, 3), inputs, tmp_path / "checked", amp_tools,
                                     loss=_validated_loss, optimizer="sgd", lr=0.1)
    assert "captured for another batch" in step.text
    _without_decomposition(monkeypatch, torch.ops.aten._is_all_true.default)
    with pytest.warns(SpecializationWarning) as record:
        step, _ = _trains_as_pytorch(nn.Linear(4, 3), inputs, tmp_path / "unchecked", amp_tools,
                                     loss=_validated_loss, optimizer="sgd", lr=0.1)
    messages = [str(w.message) for w in record if w.category is SpecializationWarning]
    assert any("does not check the values it was specialized to" in m and "_is_all_true" in m for m in messages), \
        messages
    assert "captured for another batch" not in step.text


def _run_on_batch(tools, step, where, **inputs):
    """amp-train, one fp32 step of ``step`` from its initial values with the inputs named in ``inputs``
    replaced (a batch other than the example). Returns the finished process."""
    shutil.copytree(step.out_dir, where)
    for name, value in inputs.items():
        np.save(where / f"arg{step.arg_names.index(name)}.npy", value.numpy())
    return subprocess.run([tools["amp_train"], str(step.mlir_path), "--inputs", str(where), "--steps", "1",
                           "--precision=fp32", "--no-jit-cache"], capture_output=True, text=True, timeout=300)


class _MaskedUpdates(nn.Module):
    """Masked elementwise updates through masks the activations decide: ``h[m] = h[m] * 2 + 1``,
    ``h[h < c] = g[h < c]`` and ``h[m] = -g[m].clamp(...)``."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 8)
        self.b = nn.Linear(8, 3)

    def forward(self, x):
        h = self.a(x)
        m = h > 0.2
        h[m] = h[m] * 2 + 1
        g = torch.tanh(h) * 3
        h = h.clone()
        h[h < -0.3] = g[h < -0.3]  # the mask written twice: the same op of the same values
        keep = h.abs() < 1.5
        h[keep] = -g[keep].clamp(-1, 1)
        return self.b(h)


def _box_loss(pred, target):
    from torchvision.ops import generalized_box_iou_loss

    boxes = torch.cat([pred[:, :2], pred[:, :2] + F.softplus(pred[:, 2:])], 1)  # x2 > x1, y2 > y1
    return generalized_box_iou_loss(boxes, target, reduction="mean")


def test_masked_elementwise_updates_need_no_count(tmp_path, amp_tools):
    """``t[mask] = f(a[mask], ...)`` with a mask the activations decide (torchvision's box-IoU losses:
    ``intsctk[mask] = (xkis2[mask] - xkis1[mask]) * (ykis2[mask] - ykis1[mask])``) was refused: the selected
    elements are as many as the mask holds, a count the parameters decide. Kept whole until assigned back
    through the same mask (``_MaskedSelection``), the update is a ``where`` over the whole tensor: no count
    read, no check of it in the step, fp32 as PyTorch, and a batch with other counts trains as PyTorch."""
    _torch_mlir()
    torch.manual_seed(0)
    model, x, y = _MaskedUpdates(), torch.randn(8, 6), torch.randint(0, 3, (8,))
    h = model.a(x).detach()
    assert 0 < int((h > 0.2).sum()) < h.numel()  # both sides of the mask in the example
    step = export_train_step(model, F.cross_entropy, (x, y), optimizer="sgd", lr=0.5, out_dir=tmp_path / "updates")
    assert "captured for another batch" not in step.text
    want = torch_reference_losses(model, F.cross_entropy, (x, y), steps=4, optimizer="sgd", lr=0.5)
    np.testing.assert_allclose(_losses(amp_tools, step, 4), want, rtol=1e-5)

    pytest.importorskip("torchvision")
    box_model = nn.Linear(4, 4)
    x, boxes = torch.randn(8, 4) * 2, torch.rand(8, 2).repeat(1, 2)
    boxes[:, 2:] += torch.rand(8, 2) + 0.2
    step = export_train_step(box_model, _box_loss, (x, boxes), optimizer="sgd", lr=0.5, out_dir=tmp_path / "boxes")
    assert "captured for another batch" not in step.text
    want = torch_reference_losses(box_model, _box_loss, (x, boxes), steps=4, optimizer="sgd", lr=0.5)
    np.testing.assert_allclose(_losses(amp_tools, step, 4), want, rtol=1e-5)
    other = torch.rand(8, 2).repeat(1, 2) * 3
    other[:, 2:] += torch.rand(8, 2) * 0.5 + 0.1
    result = _run_on_batch(amp_tools, step, tmp_path / "other", target=other)
    assert result.returncode == 0, result.stderr[-2000:]
    np.testing.assert_allclose(json.loads(result.stdout.splitlines()[0])["loss"],
                               float(_box_loss(box_model(x), other)), rtol=1e-5)


class _MaskedDomains(nn.Module):
    """Masked updates through ops defined on part of the line, the masks decided by the activations:
    ``log``, a power and a division by a selection whose other operand is a parameter (its gradient sums over
    every element: read at 0 outside the mask, ``x ** s`` would give it ``0 * log(0)`` there, ``s / x``
    ``0 * inf``), a division by a selection, a power of 0.5."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 8)
        self.b = nn.Linear(8, 3)
        self.s = nn.Parameter(torch.tensor(0.7))

    def forward(self, x):
        h = self.a(x)
        pos = h > 0.1
        h[pos] = torch.log(h[pos]) + h[pos] ** self.s
        h = h.clone()
        neg = h < -0.2
        h[neg] = self.s / (h[neg] - 1) + h[neg] / (h[neg] * h[neg] + 1) - (-h[neg]).sqrt() ** 0.5
        return self.b(h)


def test_masked_updates_through_logs_roots_and_divisions(tmp_path, amp_tools):
    """``h[m] = log(h[m]) + h[m] ** s``, ``h[m] = s / (h[m] - 1) + h[m] / (...) - sqrt(-h[m]) ** 0.5`` with
    masks the activations decide stay whole as well: each op reads its selections at a point of its domain
    outside the mask (1 for the logarithm, the root, the denominators and the bases of powers other than 1, 2,
    ...), so the parameter's gradient, a sum over every element, stays finite; fp32 trains as PyTorch (these
    ops selected the elements before, a count refused as one that changes as the model trains)."""
    _torch_mlir()
    torch.manual_seed(0)
    model, x, y = _MaskedDomains(), torch.randn(8, 6), torch.randint(0, 3, (8,))
    h = model.a(x).detach()
    assert 0 < int((h > 0.1).sum()) < h.numel() and int((h < -0.2).sum()) > 0
    step = export_train_step(model, F.cross_entropy, (x, y), optimizer="sgd", lr=0.5, out_dir=tmp_path / "domains")
    assert "captured for another batch" not in step.text
    want = torch_reference_losses(model, F.cross_entropy, (x, y), steps=4, optimizer="sgd", lr=0.5)
    got = _losses(amp_tools, step, 4)
    assert np.isfinite(np.asarray(got, dtype=float)).all(), got  # amp-train writes a NaN loss as null
    np.testing.assert_allclose(got, want, rtol=1e-5)


class _RoutedExperts(nn.Module):
    """Top-1 experts as Switch Transformers' eager loop runs them: the experts a batch hits (``nonzero``)
    and each one's tokens (``torch.where``), both decided by the router's parameters."""

    def __init__(self):
        super().__init__()
        self.router = nn.Linear(4, 3)
        self.experts = nn.ModuleList(nn.Linear(4, 4) for _ in range(3))
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        probs = self.router(x).softmax(-1)
        hit = F.one_hot(probs.argmax(-1), 3)
        out = torch.zeros_like(x)
        for e in torch.greater(hit.sum(0), 0).nonzero():
            tokens = torch.where(hit[:, e[0]])[0]
            out = out.index_add(0, tokens, self.experts[e[0]](x[tokens]))
        return self.head(x + out)


def _refused_as_changing(model, tmp_path):
    """The export of ``model`` (4 features in, 3 classes) refused as reading values that change as it
    trains, with nothing written; returns the message."""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.randn(8, 4), torch.randint(0, 3, (8,)))
    with pytest.raises(UnsupportedOpError, match=r"change as it trains") as info:
        export_train_step(model, F.cross_entropy, inputs, optimizer="sgd", lr=0.1, out_dir=tmp_path)
    assert not (tmp_path / "train_step.mlir").exists()
    return str(info.value)


def test_torch_mlir_refuses_values_that_training_changes(tmp_path):
    """A value read from a tensor that the parameters decide (a mixture of experts' routing) is not
    specialized: the step would keep the example's token counts per expert while training moves the
    router (the first step right, the later ones silently wrong). The export fails, naming the lines."""
    message = _refused_as_changing(_RoutedExperts(), tmp_path)
    assert re.search(r"test_torch_export\.py:\d+ in forward \(`for e in torch\.greater\(hit\.sum\(0\), 0\)\.nonzero\(\):`\): "
                     r"nonzero count \d+, from the example inputs x and the parameters", message), message


class _LayerDrop(nn.Module):
    """LayerDrop as transformers' speech encoders write it: each layer skipped when a fresh draw falls below
    ``layerdrop``."""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        for layer in self.layers:
            if self.training and torch.rand([]) < 0.5:  # skip the layer
                continue
            x = x + torch.tanh(layer(x))
        return self.head(x)


def test_torch_mlir_refuses_branches_on_random_numbers(tmp_path):
    """A branch on a random draw (LayerDrop) decides the computation anew at every step; the captured step
    would keep the example's branch. The export fails, naming the line and how to write it instead."""
    message = _refused_as_changing(_LayerDrop(), tmp_path)
    assert re.search(r"test_torch_export\.py:\d+ in forward \(`if self\.training and torch\.rand\(\[\]\) < 0\.5:  "
                     r"# skip the layer`\): value (True|False), from random numbers", message), message
    assert "config.layerdrop = 0" in message


class _ReadsBuffers(nn.Module):
    """Values read from buffers: a constant one (a padding table, as WavTokenizer's convolutions and SigLIP-2's
    checks read theirs) and, with ``running``, batch norm's running mean, which the step updates."""

    def __init__(self, running):
        super().__init__()
        self.running = running
        self.register_buffer("pad", torch.tensor([1, 2]))
        self.bn = nn.BatchNorm1d(4)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        x = F.pad(x[:, None], (int(self.pad[0]), int(self.pad.max())))[:, 0, 1:5]
        if self.running and self.bn.running_mean.abs().sum().item() > 0:
            x = x * 2
        return self.fc(self.bn(x))


def test_torch_mlir_values_read_from_constant_buffers(tmp_path, amp_tools):
    """A value read from a buffer the step returns unchanged is the same at every step: specialized (and
    listed), not refused as one that training changes; one read from batch norm's running statistics still
    is."""
    _torch_mlir()
    from amp_mlir.torch._torch_mlir import SpecializationWarning
    torch.manual_seed(0)
    inputs = (torch.randn(4, 4), torch.tensor([0, 2, 1, 0]))
    model = _ReadsBuffers(running=False)
    with pytest.warns(SpecializationWarning, match=r"value 2, from buffer pad \(which the step does not change\)"):
        step = export_train_step(model, F.cross_entropy, inputs, optimizer="sgd", lr=0.1, out_dir=tmp_path)
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=3, optimizer="sgd", lr=0.1)
    np.testing.assert_allclose(_losses(amp_tools, step, 3), want, rtol=1e-5)
    with pytest.raises(UnsupportedOpError, match=r"running_mean.*the buffers \(which change as it trains\)"):
        export_train_step(_ReadsBuffers(running=True), F.cross_entropy, inputs, optimizer="sgd", lr=0.1,
                          out_dir=tmp_path / "running")


class _SplitByExpertSizes(nn.Module):
    """JetMoE's router: token counts per expert read with ``.tolist()`` (no aten op: make_fx would keep the
    example's counts without a word), the tokens split by them."""

    def __init__(self):
        super().__init__()
        self.router = nn.Linear(4, 2)
        self.experts = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))
        self.head = nn.Linear(4, 3)

    def forward(self, x):
        choice = self.router(x).argmax(-1)
        order = torch.argsort(choice, stable=True)
        sizes = F.one_hot(choice, 2).sum(0).tolist()
        out = torch.cat([e(part) for e, part in zip(self.experts, x[order].split(sizes))])
        return self.head(torch.zeros_like(x).index_add(0, order, out))


def test_torch_mlir_refuses_values_read_with_tolist(tmp_path):
    """``.tolist()`` of a tensor the parameters decide is refused like ``.item()``, naming the line; of one
    the inputs alone decide, specialized with the warning."""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.randn(8, 4), torch.randint(0, 3, (8,)))
    with pytest.raises(UnsupportedOpError, match=r"change as it trains") as info:
        export_train_step(_SplitByExpertSizes(), F.cross_entropy, inputs, optimizer="sgd", lr=0.1, out_dir=tmp_path)
    assert re.search(r"\(`sizes = F\.one_hot\(choice, 2\)\.sum\(0\)\.tolist\(\)`\): values \[\d, \d\], from the "
                     r"example inputs x and the parameters", str(info.value)), str(info.value)

    class Positive(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            n = (x[:, 0] > 0).sum().reshape(1).tolist()[0]
            return self.fc(x) + self.fc(x[:n]).sum()

    from amp_mlir.torch._torch_mlir import SpecializationWarning
    with pytest.warns(SpecializationWarning, match=r"values \[\d\], from the example inputs x"):
        export_train_step(Positive(), F.cross_entropy, inputs, optimizer="sgd", lr=0.1, out_dir=tmp_path)


class _ScanIntoTransposed(nn.Module):
    """A linear recurrence written step by step into ``zeros_like`` of a transposed tensor (which keeps its
    strides), as transformers' RecurrentGemma runs its RG-LRU scan: autograd's backward of the in-place
    writes is ``new_empty_strided`` and ``as_strided_scatter`` on that permuted layout."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.conv = nn.Conv1d(8, 8, 1)
        self.head = nn.Linear(8, 4)

    def forward(self, x):  # (B, T, 8)
        gate = torch.sigmoid(self.a(x))
        xs = self.conv(x.transpose(1, 2)).transpose(1, 2)  # (B, T, C), strides of (B, C, T)
        h = torch.zeros(xs[:, 0].shape)
        out = torch.zeros_like(xs)
        for t in range(xs.shape[1]):
            h = gate[:, t] * h + xs[:, t]
            out[:, t] = h
        return self.head(out.mean(1))


def test_torch_mlir_writes_into_a_permuted_tensor(tmp_path, amp_tools):
    """In-place writes into a dense tensor with permuted strides (RecurrentGemma's scan) export, their
    backward's strided ops taken in the tensor's storage order, and train as PyTorch does."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _ScanIntoTransposed()
    inputs = (torch.randn(2, 6, 8), torch.randint(0, 4, (2,)))
    _trains_as_pytorch(model, inputs, tmp_path, amp_tools, optimizer="adamw", lr=1e-2)


class _ReversibleLike(torch.autograd.Function):
    """A reversible layer's Function (Reformer's _ReversibleFunction in miniature): its backward recomputes
    the layer and calls torch.autograd.backward, which writes the layer's parameters' .grad itself."""

    @staticmethod
    def forward(ctx, x, layer):
        ctx.layer = layer
        ctx.save_for_backward(x)
        with torch.no_grad():
            return x + layer(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            x = x.detach().requires_grad_()
            torch.autograd.backward(x + ctx.layer(x), g)
        return x.grad, None


class _Reversible(nn.Module):
    def __init__(self):
        super().__init__()
        self.p = nn.Linear(8, 8)
        self.layer = nn.Linear(8, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        return self.head(_ReversibleLike.apply(self.p(x), self.layer))


def test_backward_that_writes_grad_trains_as_pytorch(tmp_path, amp_tools):
    """A backward that runs a layer again and accumulates into its parameters' .grad itself (a reversible
    layer's: Reformer's) runs on the step's parameters, and what it accumulates is their gradient, as in
    PyTorch: the step trains as PyTorch does, and the model's own .grad is left as it was. (It was refused:
    the layer ran on the model's parameters, and those would never have trained.)"""
    _torch_mlir()
    torch.manual_seed(0)
    model = _Reversible()
    kept = torch.ones(3)
    model.head.bias.grad = kept
    inputs = (torch.randn(4, 8), torch.randint(0, 3, (4,)))
    _trains_as_pytorch(model, inputs, tmp_path, amp_tools, optimizer="sgd", lr=0.5)
    assert model.layer.weight.grad is None and model.head.bias.grad is kept


class _HeldReversible(_Reversible):
    """A reversible layer whose Function gets the layer's parameter objects from a list made at
    construction, not through the module: the step's parameters never reach it."""

    def __init__(self):
        super().__init__()
        self.held = [self.layer.weight, self.layer.bias]

    def forward(self, x):
        weight, bias = self.held
        return self.head(_ReversibleLike.apply(self.p(x), lambda h: F.linear(h, weight, bias)))


def test_backward_that_writes_held_parameters_grad_is_refused(tmp_path):
    """A backward that accumulates into the .grad of parameter objects it holds from before the step is
    outside the gradients the step takes: exported, those parameters would silently never train. The
    export fails naming them, and leaves the model's .grad as it was."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _HeldReversible()
    kept = torch.ones(3)
    model.head.bias.grad = kept
    with pytest.raises(UnsupportedOpError, match=r"writes the \.grad of layer\.weight, layer\.bias itself"):
        export_train_step(model, F.cross_entropy, (torch.randn(4, 8), torch.randint(0, 3, (4,))),
                          optimizer="sgd", lr=0.5, out_dir=tmp_path)
    assert model.layer.weight.grad is None and model.head.bias.grad is kept
    assert not (tmp_path / "train_step.mlir").exists()


class _WrongWidth(nn.Module):
    """A model built for 8 features, given 5: its forward fails in PyTorch itself."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(5)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(self.bn(x))  # the failing line


def test_step_that_fails_in_pytorch_itself_is_reported_as_such(tmp_path):
    """A step PyTorch cannot run on the example inputs either (a wrong input width) is not reported as a
    capture failure: the error says PyTorch itself fails, with PyTorch's message and the model's line that
    raised. Nothing is written, and the eager check leaves the batch norm's running statistics as they were."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _WrongWidth()
    with pytest.raises(UnsupportedOpError) as info:
        export_train_step(model, F.cross_entropy, (torch.randn(4, 5), torch.randint(0, 3, (4,))),
                          optimizer="sgd", lr=0.1, out_dir=tmp_path)
    message = str(info.value)
    assert re.match(r"the training step fails in PyTorch itself, before any capture: the forward pass on the "
                    r"example inputs raises RuntimeError: .*mat1 and mat2 shapes cannot be multiplied \(4x5 and 8x3\)",
                    message), message
    assert re.search(r"\n  at .*test_torch_export\.py:\d+ in forward \(`return self\.fc\(self\.bn\(x\)\)  "
                     r"# the failing line`\)$", message), message
    assert torch.equal(model.bn.running_mean, torch.zeros(5)) and int(model.bn.num_batches_tracked) == 0
    assert not (tmp_path / "train_step.mlir").exists()


@pytest.mark.parametrize("loss_fn, target, expected", [
    (lambda out, t: F.cross_entropy(out, t, reduction="none"), torch.randint(0, 3, (4,)),
     r"the loss function on the example inputs returns a tensor of shape \[4\], not one value: a training step "
     r"minimizes a single loss"),
    (F.cross_entropy, torch.rand(4),
     r"the loss function on the example inputs raises RuntimeError: expected target dtype to be Long"),
    (lambda out: out.sum(), torch.zeros(4),
     r"the loss function on the example inputs raises TypeError: .*takes 1 positional argument but 2 were given"),
])
def test_loss_that_fails_in_pytorch_itself_is_reported_as_such(tmp_path, loss_fn, target, expected):
    """A loss PyTorch cannot compute on the example (a per-sample loss, a float target for cross entropy, a
    loss taking one argument) is named as the part that fails. None of these raises in a line of the user's
    (PyTorch's own loss, a check of ours, the call itself), and the message names no line."""
    _torch_mlir()
    with pytest.raises(UnsupportedOpError) as info:
        export_train_step(nn.Linear(8, 3), loss_fn, (torch.randn(4, 8), target), optimizer="sgd", lr=0.1,
                          out_dir=tmp_path)
    message = str(info.value)
    assert re.match("the training step fails in PyTorch itself, before any capture: " + expected, message), message
    assert "\n  at " not in message
    assert not (tmp_path / "train_step.mlir").exists()


def test_model_without_trainable_parameters_is_refused(tmp_path):
    """A model with nothing to train (every parameter frozen, or none) is a ValueError that says so, not a
    failed capture."""
    _torch_mlir()
    frozen = nn.Linear(8, 8).requires_grad_(False)
    for model in (nn.ReLU(), frozen):
        with pytest.raises(ValueError, match=r"the model has no trainable parameters \(none with "
                                             r"requires_grad=True\): its training step would update nothing"):
            export_train_step(model, F.mse_loss, (torch.randn(4, 8), torch.randn(4, 8)), optimizer="sgd", lr=0.1,
                              out_dir=tmp_path)
    assert not (tmp_path / "train_step.mlir").exists()


class _GatherRouter(nn.Module):
    """A router's top-k weights picked with ``gather`` (DeepSeek-V3: ``scores.gather(1, topk(...,
    sorted=False).indices)``; its backward is a ``scatter_add``) and a loss term read with ``gather``."""

    def __init__(self):
        super().__init__()
        self.router = nn.Linear(8, 4)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        scores = self.router(x).sigmoid()
        picked = scores.gather(1, torch.topk(scores.detach(), k=2, dim=-1, sorted=False).indices)
        logits = self.head(x) * picked.sum(-1, keepdim=True)
        return logits - 0.1 * logits.log_softmax(-1).gather(1, torch.zeros(x.shape[0], 1, dtype=torch.long))


def test_torch_mlir_gather_backward_and_unsorted_topk(tmp_path, amp_tools):
    """``gather`` with a gradient (its backward a ``scatter_add``, which torch-mlir's TOSA conversion left
    as is) and ``topk(sorted=False)`` export and train as PyTorch does."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _GatherRouter()
    inputs = (torch.randn(6, 8), torch.randint(0, 3, (6,)))
    _trains_as_pytorch(model, inputs, tmp_path, amp_tools, optimizer="adamw", lr=1e-2)


class _MaskIndexing(nn.Module):
    """Boolean-mask indexing, as transformers' BART classifier selects its ``<eos>`` positions
    (``hidden_states[eos_mask, :]``): reads through a mask (whose backward writes through it) and writes."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        h = self.fc(x).reshape(2, 3, 6)
        mask = x.reshape(2, 3, 4)[..., 0] > 0  # [2, 3], 3 positions set
        picked = h[mask, :]  # [3, 6]
        h = h.clone()
        h[~mask] = 0.5  # a masked_fill: no nonzero
        h[mask] = h[mask] * 2.0  # index_put through the mask
        return self.head(h.reshape(6, 6) + picked.sum(0))


def test_torch_mlir_mask_indexing_specialized(tmp_path, amp_tools):
    """``t[mask]`` and ``t[mask] = v`` (and the backward of the read, an index_put through the mask) take
    the mask's nonzero indices with the example's count: no dynamic size reaches torch-mlir (BART's
    classifier failed there on a slice of unknown size), and the step trains as PyTorch does."""
    _torch_mlir()
    from amp_mlir.torch._torch_mlir import SpecializationWarning

    torch.manual_seed(0)
    model = _MaskIndexing()
    x = torch.randn(6, 4)
    x[:, 0] = torch.tensor([1.0, -1.0, 2.0, -2.0, 3.0, -0.5])
    inputs = (x, torch.randint(0, 3, (6,)))
    with pytest.warns(SpecializationWarning) as record:
        step = export_train_step(model, F.cross_entropy, inputs, optimizer="sgd", lr=0.1, out_dir=tmp_path)
    message = str(next(w for w in record if w.category is SpecializationWarning).message)
    assert re.search(r"\(`picked = h\[mask, :\].*`\): nonzero count 3, from the example inputs x", message), message
    assert "the backward pass: nonzero count 3" in message
    assert "?x" not in step.text  # no dynamic size
    assert step.text.count("captured for another batch") == 1  # one check of the mask's count, not one per use
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=3, optimizer="sgd", lr=0.1)
    np.testing.assert_allclose(_losses(amp_tools, step, 3), want, rtol=1e-5)


@pytest.mark.parametrize("shape, p", [((2, 16), 0.2), ((3, 4, 5), 0.5), ((7,), 1.0), ((4, 3), 0.0), ((1,), 1.0),
                                     ((8, 4096), 0.01), ((37, 53), 0.9)])
def test_nonzero_static(shape, p):
    """nonzero with a known count, static shapes: the same indices as ATen's, row-major."""
    from amp_mlir.torch._decompositions import nonzero_static

    torch.manual_seed(0)
    x = (torch.rand(shape) < p).float() * torch.randn(shape)
    want = torch.nonzero(x)
    assert torch.equal(nonzero_static(x, want.shape[0]), want)


@pytest.mark.parametrize("extra", [-3, 2])
def test_nonzero_static_other_count(extra):
    """A batch with fewer or more non-zero elements than the count the step was specialized to: the
    indices stay in bounds (the scatter that makes them wrote past its buffer when there were fewer, an
    IndexError here, a write out of bounds in a compiled step), the first ones are ATen's."""
    from amp_mlir.torch._decompositions import nonzero_static

    torch.manual_seed(0)
    x = (torch.rand(6, 5) < 0.4).float()
    want = torch.nonzero(x)
    count = want.shape[0] + extra
    got = nonzero_static(x, count)
    assert got.shape == (count, 2)
    assert bool((got >= 0).all()) and bool((got < torch.tensor(x.shape)).all())
    kept = min(count, want.shape[0])
    assert torch.equal(got[:kept], want[:kept])


def test_torch_mlir_jetmoe_experts_train(tmp_path, amp_tools):
    """JetMoE's mixtures of experts and of attention heads split the tokens by expert sizes read with
    ``.tolist()`` (refused: the router decides them): captured with every expert on every token and each
    token's top-k outputs weighted by their gates, nothing is read and the step trains as PyTorch does; the
    modules' own methods are back afterwards."""
    _torch_mlir()
    from amp_mlir.torch._torch_mlir import SpecializationWarning
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    if not hasattr(transformers, "JetMoeConfig"):
        pytest.skip("this transformers has no JetMoE")
    cfg = transformers.JetMoeConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2, num_key_value_heads=2,
                                    kv_channels=8, intermediate_size=32, num_local_experts=4,
                                    num_experts_per_tok=2, max_position_embeddings=32)
    cfg._attn_implementation = "eager"
    torch.manual_seed(0)
    model = _HiddenClassifier(transformers.JetMoeModel(cfg), 32)
    inputs = (torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(1)), torch.tensor([0, 2]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SpecializationWarning)  # nothing specialized
        step = export_train_step(model, F.cross_entropy, inputs, optimizer="adamw", lr=0.05, out_dir=tmp_path)
    patched = [m for m in model.modules() if type(m).__name__ in ("JetMoeTopKGating", "JetMoeMoE", "JetMoeMoA")]
    assert len(patched) == 8 and not any({"forward", "map", "reduce"} & set(vars(m)) for m in patched)
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=3, optimizer="adamw", lr=0.05)
    np.testing.assert_allclose(_losses(amp_tools, step, 3), want, rtol=1e-4)


class _HiddenClassifier(nn.Module):
    """A transformers base model's last hidden state, mean-pooled, and a linear head."""

    def __init__(self, encoder, width):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(width, 3)

    def forward(self, ids):
        return self.head(self.encoder(input_ids=ids).last_hidden_state.mean(1))


class _SwitchEncoderClassifier(nn.Module):
    """Switch Transformers' encoder (its sparse layer's experts) and a mean-pooled linear head; with
    `masked`, an attention mask passed."""

    def __init__(self, encoder, width, masked):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(width, 3)
        self.masked = masked

    def forward(self, ids):
        mask = torch.ones_like(ids) if self.masked else None
        hidden = self.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
        return self.head(hidden.mean(1))


@pytest.mark.parametrize("masked", [True, False], ids=["mask", "no-mask"])
def test_torch_mlir_switch_experts_trains(tmp_path, amp_tools, masked):
    """Switch Transformers' experts loop over the experts a batch hits (``nonzero``, ``torch.where``: what
    the router decides) and ``F.one_hot`` checks the router's indices with ``.item()``: captured with every
    expert on every token, weighted by the routing, and one_hot as a comparison, nothing is read, and the
    step trains as PyTorch does while the routing changes (lr 0.05). Without an attention mask, the
    encoder fails in torch.export's state (it builds its default mask only when not compiling, then
    indexes it): captured again in PyTorch's own state."""
    _torch_mlir()
    from amp_mlir.torch._torch_mlir import SpecializationWarning
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    cfg = transformers.SwitchTransformersConfig(
        vocab_size=64, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_sparse_encoder_layers=1, num_heads=2,
        num_experts=4, expert_capacity=16, relative_attention_num_buckets=8, relative_attention_max_distance=16,
        dropout_rate=0.0, router_jitter_noise=0.0)
    cfg._attn_implementation = "eager"
    torch.manual_seed(0)
    model = _SwitchEncoderClassifier(transformers.SwitchTransformersEncoderModel(cfg), 32, masked)
    inputs = (torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(1)), torch.tensor([0, 2]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SpecializationWarning)  # nothing specialized
        step = export_train_step(model, F.cross_entropy, inputs, optimizer="adamw", lr=0.05, out_dir=tmp_path)
    experts = [m for m in model.modules() if type(m).__name__ == "SwitchTransformersExperts"]
    assert experts and all("forward" not in vars(m) for m in experts)  # their own forward again
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=3, optimizer="adamw", lr=0.05)
    # (ours and PyTorch 3.7e-5 apart at the third step: the losses swing 1.09 -> 0.44 -> 1.09 at this rate)
    np.testing.assert_allclose(_losses(amp_tools, step, 3), want, rtol=1e-4)


def test_torch_mlir_mixture_of_experts_trains(tmp_path, amp_tools):
    """A Hugging Face mixture-of-experts model as built (Mixtral, 4 experts, 2 per token; transformers'
    default grouped_mm experts, whose group sizes the routing decides: ``aten.histc``,
    ``aten._grouped_mm``) is captured with its experts as batched_mm (static shapes, the same sums) and
    trains as PyTorch does; the model's own setting is back afterwards."""
    _torch_mlir()
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    from amp_mlir.torch.zoo import _lm_loss, _Logits
    cfg = transformers.MixtralConfig(num_hidden_layers=1, hidden_size=32, num_attention_heads=2,
                                     num_key_value_heads=1, intermediate_size=64, vocab_size=64,
                                     max_position_embeddings=16, num_local_experts=4, num_experts_per_tok=2,
                                     attn_implementation="eager")
    torch.manual_seed(0)
    model = _Logits(transformers.MixtralForCausalLM(cfg))
    before = model.model.config._experts_implementation
    ids = torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(1))
    inputs = (ids, torch.roll(ids, -1, 1))
    step = export_train_step(model, _lm_loss, inputs, optimizer="adamw", lr=1e-3, out_dir=tmp_path)
    assert model.model.config._experts_implementation == before
    want = torch_reference_losses(model, _lm_loss, inputs, steps=3, optimizer="adamw", lr=1e-3)
    np.testing.assert_allclose(_losses(amp_tools, step, 3), want, rtol=1e-5)


def test_export_again_into_the_same_directory(tmp_path, amp_tools):
    """A step exported again into the directory of a larger one (here the same model without dropout:
    one argument fewer, the random-number state) leaves no initial values of the old step's extra
    arguments behind, which amp-train would refuse; it trains as PyTorch does."""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.randn(4, 8), torch.randint(0, 3, (4,)))
    with_dropout = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.5), nn.Linear(8, 3))
    first = export_train_step(with_dropout, F.cross_entropy, inputs, optimizer="sgd", lr=0.1, out_dir=tmp_path)
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3))
    step = export_train_step(model, F.cross_entropy, inputs, optimizer="sgd", lr=0.1, out_dir=tmp_path)
    assert len(step.manifest["arguments"]) == len(first.manifest["arguments"]) - 1
    assert sorted(tmp_path.glob("arg*.npy")) == sorted(tmp_path / f"arg{i}.npy"
                                                      for i in range(len(step.manifest["arguments"])))
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=3, optimizer="sgd", lr=0.1)
    np.testing.assert_allclose(_losses(amp_tools, step, 3), want, rtol=1e-5)


class _EmbeddingClassifier(nn.Module):
    """An embedding (its backward: a one-hot GEMM), a layer norm and a linear head."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(16, 8)
        self.norm = nn.LayerNorm(8)
        self.fc = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc(self.norm(self.embed(x))).mean(1)


def test_torch_mlir_linalg_import_trains(tmp_path, amp_tools):
    """``dialect="linalg"`` (torch-mlir's linalg-on-tensors instead of TOSA) trains like the default: fp32
    equals PyTorch over 3 AdamW steps (AdamW's bias correction carries torch-mlir's ``cf.assert`` in a
    generic that fusion leaves without outputs; amp-cpu-hoist-scalar-reads took its one operand, which
    no lowering to loops takes), f16 skips no step and stays within 1e-3 of fp32."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _EmbeddingClassifier()
    inputs = (torch.randint(0, 16, (2, 5)), torch.randint(0, 3, (2,)))
    kw = dict(optimizer="adamw", lr=1e-2, weight_decay=0.01)
    step, fp32 = _trains_as_pytorch(model, inputs, tmp_path, amp_tools, export_options={"dialect": "linalg"},
                                    **kw)
    assert "linalg.matmul" in step.text and "linalg.generic" in step.text
    out = _run([amp_tools["amp_train"], str(step.mlir_path), "--inputs", str(tmp_path), "--steps", "3",
                "--precision=f16", "--no-jit-cache"])
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert not any(r["skipped"] for r in rows)
    np.testing.assert_allclose([r["loss"] for r in rows], fp32, rtol=1e-3)


def test_linalg_import_max_pool_between_convolutions(tmp_path, amp_tools):
    """torch-mlir's linalg import of ``max_pool2d_with_indices``: a pool and a generic that finds each
    window's argmax by comparing the pool's input with the pooled value. Between two convolutions the
    pool runs in f16 / bf16 on the rounded input; the argmax generic rounds the element it compares the
    same way (docs/Policy.md, linalg rule 3). It used to stay f32 (unknown), matched no element, and the
    backward lost the pool's gradient: f16 1.5% and bf16 1.5% from fp32 at step 2 (now 1.4e-5 and
    2.9e-4)."""
    _torch_mlir()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1),
                          nn.ReLU(), nn.Flatten(), nn.Linear(8 * 4 * 4, 10))
    inputs = (torch.randn(8, 3, 8, 8), torch.randint(0, 10, (8,)))
    step, fp32 = _trains_as_pytorch(model, inputs, tmp_path, amp_tools, optimizer="sgd", lr=0.1,
                                    export_options={"dialect": "linalg"})
    assert "linalg.pooling_nchw_max" in step.text and "tensor.extract" in step.text
    report = tmp_path / "decisions.json"
    _run([amp_tools["amp_opt"], str(step.mlir_path), f"--amp-pipeline=precision=f16 report={report}",
          "-o", str(tmp_path / "amp.mlir")])
    assert json.loads(report.read_text())["summary"]["unknown_ops"] == 0
    for precision, rtol in (("f16", 1e-3), ("bf16", 5e-3)):
        np.testing.assert_allclose(_losses(amp_tools, step, 3, precision), fp32, rtol=rtol, err_msg=precision)


def _without_decomposition(monkeypatch, op):
    """``_decompositions.table()`` without its entry for ``op`` (torch-mlir's own lowering, or none)."""
    from amp_mlir.torch import _decompositions

    table = _decompositions.table

    def without():
        t = table()
        del t[op]
        return t

    monkeypatch.setattr(_decompositions, "table", without)


def test_torch_mlir_unsupported_backward_op_is_named(tmp_path, monkeypatch):
    """An op of the backward pass that nothing lowers is named, and said to be one (its location is the
    capture's autograd.grad call, not a model line): average pooling's backward with our decomposition
    taken out of the table."""
    _torch_mlir()
    _without_decomposition(monkeypatch, torch.ops.aten.avg_pool2d_backward.default)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.AvgPool2d(3, 1, 1, count_include_pad=False), nn.Flatten(),
                          nn.Linear(4 * 6 * 6, 2))
    with pytest.raises(UnsupportedOpError) as info:
        export_train_step(model, F.cross_entropy, (torch.randn(2, 3, 8, 8), torch.randint(0, 2, (2,))),
                          out_dir=tmp_path)
    assert "avg_pool2d_backward" in str(info.value) and "an op of the backward pass" in str(info.value)


class _AdaptiveMaxPool(nn.Module):
    """Adaptive max pooling over windows of uneven size (1-D 8 -> 3, 2-D 10 x 10 -> 4 x 3)."""

    def __init__(self):
        super().__init__()
        self.inp, self.out = nn.Linear(8, 224), nn.Linear(3 * 3 + 2 * 12, 3)

    def forward(self, x):
        h = self.inp(x)
        one = F.adaptive_max_pool1d(h[:, :24].view(-1, 3, 8), 3).flatten(1)
        two = F.adaptive_max_pool2d(h[:, 24:].view(-1, 2, 10, 10), (4, 3)).flatten(1)
        return self.out(torch.cat([one, two], 1))


def test_adaptive_max_pool_uneven_windows(tmp_path, amp_tools, monkeypatch):
    """Adaptive max pooling whose windows are not one size at one stride trains as PyTorch
    (``_decompositions.adaptive_max_pool2d``). torch-mlir's own lowering of it is a fixed-stride pooling next
    to a ``cf.assert`` that always fails, and amp-train aborted in the compiled step: without the
    decomposition, the export names that check and the model's line instead."""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.randn(4, 8), torch.tensor([0, 2, 1, 2]))
    _trains_as_pytorch(_AdaptiveMaxPool(), inputs, tmp_path / "ours", amp_tools, optimizer="sgd", lr=0.1)
    _without_decomposition(monkeypatch, torch.ops.aten.adaptive_max_pool2d.default)
    with pytest.raises(UnsupportedOpError, match="always fails its check") as info:
        export_train_step(_AdaptiveMaxPool(), F.cross_entropy, inputs, out_dir=tmp_path / "theirs")
    assert "fixed stride size" in str(info.value) and "test_torch_export.py" in str(info.value)


class _PackedRNN(nn.Module):
    """Variable-length sequences through ``pack_padded_sequence`` (unsorted lengths, a model input), a packed
    RNN and ``pad_packed_sequence``; the mean over each sequence's own length."""

    def __init__(self, cell, **options):
        super().__init__()
        self.proj = nn.Linear(5, 6)
        self.rnn = cell(6, 8, batch_first=True, **options)
        self.head = nn.Linear(16 if options.get("bidirectional") else 8, 3)

    def forward(self, x, lengths):
        packed = nn.utils.rnn.pack_padded_sequence(self.proj(x), lengths, batch_first=True, enforce_sorted=False)
        y, lens = nn.utils.rnn.pad_packed_sequence(self.rnn(packed)[0], batch_first=True, total_length=x.shape[1])
        return self.head(y.sum(1) / lens[:, None].to(y.dtype))


@pytest.mark.parametrize("cell, options", [(nn.LSTM, {"num_layers": 2, "bidirectional": True}),
                                           (nn.GRU, {"bidirectional": True})])
def test_packed_sequences_train_as_pytorch(cell, options, tmp_path, amp_tools):
    """``pack_padded_sequence`` / ``pad_packed_sequence`` (``_decompositions.pack_padded_sequence``): torch-mlir
    lowers neither, and with the packed input computed by a layer the capture refused the batch sizes the
    packed RNN reads as values the parameters decide. The lengths (an input) are specialized, as the header
    says; the step trains as PyTorch: fp32 within 1e-5, f16 within 1e-3."""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.randn(3, 6, 5), torch.tensor([4, 6, 2]), torch.tensor([0, 2, 1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        step, fp32 = _trains_as_pytorch(_PackedRNN(cell, **options), inputs, tmp_path, amp_tools, optimizer="adam",
                                        lr=1e-2)
    assert "Specialized to values read from the example tensors" in step.text
    np.testing.assert_allclose(_losses(amp_tools, step, 3, "f16"), fp32, rtol=1e-3)


class _ClippedLinear(nn.Module):
    """A linear layer whose input is clamped to buffers holding infinities (timm's clipped linears)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 3)
        self.register_buffer("lo", torch.tensor(float("-inf")))
        self.register_buffer("hi", torch.tensor([float("inf"), 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]))

    def forward(self, x):
        return self.lin(torch.clamp(x, self.lo, self.hi))


def test_infinite_buffers(tmp_path, amp_tools):
    """A buffer holding infinities gets a finite ``amp.init`` stand-in (``uniform(inf)`` made a step amp-train
    could not parse), and its arg<N>.npy the infinities: the step trains as PyTorch."""
    _torch_mlir()
    torch.manual_seed(0)
    step, _ = _trains_as_pytorch(_ClippedLinear(), (torch.randn(4, 8) * 4, torch.tensor([0, 2, 1, 2])), tmp_path,
                                 amp_tools, optimizer="sgd", lr=0.1)
    hints = {a["name"]: a["amp_init"] for a in step.manifest["arguments"]}
    assert hints["buffer lo"] == "#amp.init<zeros>" and hints["buffer hi"] == "#amp.init<uniform(8)>", hints


class _BlockDiagRepeat(nn.Module):
    def forward(self, h):
        blocks = torch.block_diag(h[0, :3].view(1, 3), h[1, :3].view(3, 1)).flatten()[:16]  # [4, 4]
        repeated = torch.repeat_interleave(h[:, :3], torch.tensor([1, 3, 2]), dim=1)  # [2, 6]
        return torch.cat([blocks.expand(h.shape[0], 16), repeated, h[:, 3:].repeat_interleave(torch.tensor([3]), 1)],
                         1)


class _Selections(nn.Module):
    def forward(self, h):
        x = h.view(-1, 3, 8)
        special = torch.erfinv(torch.tanh(h[:, :12]) * 0.9) + torch.erfc(h[:, 12:]) + torch.median(h)
        return torch.cat([torch.median(x, 1).values, torch.kthvalue(x, 3, 1).values, torch.hypot(h[:, :12], h[:, 12:])
                          + special], 1)


class _Resamplings(nn.Module):
    def __init__(self):
        super().__init__()
        self.c3 = nn.Conv3d(2, 2, 3, padding=1, padding_mode="replicate")
        self.head = nn.Linear(2 * 2 * 3 * 4 + 2 * 20 + 2 * 3 * 7 + 2 * 6 * 12, 3)

    def forward(self, v):
        h = self.c3(v)  # [B, 2, 2, 3, 4]
        flat = h.flatten(2)  # [B, 2, 24]
        one = F.pad(flat[..., :16], (2, 2), mode="replicate")  # [B, 2, 20]
        near1 = F.interpolate(flat[..., :3], size=7, mode="nearest-exact")  # [B, 2, 7]
        near2 = F.interpolate(h[:, :, 0], size=(6, 12), mode="nearest-exact")  # [B, 2, 6, 12]
        return self.head(torch.cat([h.flatten(1), one.flatten(1), near1.repeat(1, 1, 3).flatten(1), near2.flatten(1)], 1))


class _GaussianHead(nn.Module):
    """A mean and a variance (softplus, some below the clamp) for ``nn.GaussianNLLLoss``."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 8)

    def forward(self, x):
        h = self.lin(x)
        return torch.stack([h[:, :4], F.softplus(h[:, 4:] - 8)], 0)


def test_gaussian_nll_loss_trains_as_pytorch(tmp_path, amp_tools):
    """``nn.GaussianNLLLoss`` checks ``torch.any(var < 0)`` in a Python branch, which the capture refused as a
    value the parameters decide: it is computed without the check (``_decompositions.gaussian_nll_loss``),
    the clamp at ``eps`` included (variances near 3e-4 here). fp32 within 1e-5 of PyTorch."""
    _torch_mlir()
    torch.manual_seed(0)
    loss = nn.GaussianNLLLoss(full=True, eps=1e-3)
    _trains_as_pytorch(_GaussianHead(), (torch.randn(4, 6), torch.randn(4, 4)), tmp_path, amp_tools,
                       loss=lambda out, target: loss(out[0], target, out[1]), optimizer="adam", lr=1e-2)


class _GammaBetaHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 4)

    def forward(self, x):
        return F.softplus(self.lin(x)) + 0.05


def _gamma_beta_loss(h, t):
    gamma = torch.distributions.Gamma(h[:, :2], h[:, 2:])
    beta = torch.distributions.Beta(h[:, :2], h[:, 2:])
    return -(gamma.log_prob(t[:, :2]).mean() + beta.log_prob(t[:, 2:]).mean()) + torch.digamma(h).mean()


def test_gamma_and_beta_likelihoods_train_as_pytorch(tmp_path, amp_tools):
    """Gamma and Beta log densities (``lgamma``; its gradient ``digamma``, and ``digamma``'s ``polygamma(1, .)``),
    which torch-mlir does not lower (``_decompositions.lgamma``, ``digamma``, ``polygamma``): fp32 within 1e-5 of
    PyTorch."""
    _torch_mlir()
    torch.manual_seed(0)
    target = torch.cat([torch.rand(8, 2) * 3 + 0.1, torch.rand(8, 2) * 0.8 + 0.1], 1)
    _trains_as_pytorch(_GammaBetaHead(), (torch.randn(8, 6), target), tmp_path, amp_tools, loss=_gamma_beta_loss,
                       optimizer="adam", lr=1e-2)


class _ImageTokens(nn.Module):
    """Image features merged into the token embeddings at the image tokens (id 3), as LLaVA, PaliGemma,
    BLIP-2 and Fuyu merge them (``inputs_embeds.masked_scatter(image_mask, image_features)``)."""

    def __init__(self):
        super().__init__()
        self.embed, self.vision, self.head = nn.Embedding(10, 8), nn.Linear(6, 8), nn.Linear(8, 10)

    def forward(self, ids, pixels):
        h = self.embed(ids)
        mask = (ids == 3).unsqueeze(-1).expand_as(h)
        return self.head(torch.tanh(h.masked_scatter(mask, self.vision(pixels)))).flatten(0, 1)


def test_masked_scatter_trains_as_pytorch(tmp_path, amp_tools):
    """``masked_scatter``'s gradient for its source (``_Specializer._masked_scatter_backward``: the image tokens'
    count read from the ids, as ``nonzero``'s), which torch-mlir does not lower and every vision-language model
    of transformers stopped at: fp32 within 1e-5 of PyTorch, f16 within 1e-3."""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.tensor([[1, 3, 3, 4, 5], [3, 2, 6, 7, 8]]), torch.randn(3, 6), torch.randint(0, 10, (10,)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        step, fp32 = _trains_as_pytorch(_ImageTokens(), inputs, tmp_path, amp_tools, optimizer="adamw", lr=1e-2)
    np.testing.assert_allclose(_losses(amp_tools, step, 3, "f16"), fp32, rtol=1e-3)


class _GaussianProcess(nn.Module):
    """A kernel matrix made by a layer, its Cholesky factor, a solve and the log determinant (a Gaussian
    process's marginal likelihood), and a multivariate normal's log density (``torch.distributions``)."""

    def __init__(self):
        super().__init__()
        self.embed, self.log_noise = nn.Linear(3, 4), nn.Parameter(torch.tensor(-1.0))

    def forward(self, x):
        h = self.embed(x)  # [n, 4]
        k = torch.exp(-torch.cdist(h, h) ** 2) + torch.exp(self.log_noise) * torch.eye(x.shape[0])
        return k, h


def _gp_loss(out, y):
    k, h = out
    factor = torch.linalg.cholesky(k)
    alpha = torch.cholesky_solve(y[:, None], factor)
    fit = 0.5 * (y[:, None] * alpha).sum() + factor.diagonal().log().sum()
    # the same fit through a pivoted elimination: solve, inverse, log determinant
    fit = fit + 0.1 * (torch.linalg.solve(k, y) @ y + torch.linalg.inv(k).trace() + torch.logdet(k)
                       + torch.linalg.slogdet(k).logabsdet + torch.det(k[:3, :3]))
    normal = torch.distributions.MultivariateNormal(torch.zeros(4), covariance_matrix=h.T @ h / 6 + torch.eye(4),
                                                    validate_args=False)  # its checks read values
    return fit - normal.log_prob(h).mean()


def _fp32_losses(tools, step, steps, *options):
    out = _run([tools["amp_train"], str(step.mlir_path), "--inputs", str(step.out_dir), "--steps", str(steps),
                "--precision=fp32", "--no-jit-cache", *options])
    return [json.loads(line)["loss"] for line in out.splitlines() if line.startswith("{")]


def _gaussian_process_step(tmp_path):
    torch.manual_seed(0)
    model, inputs = _GaussianProcess(), (torch.randn(6, 3), torch.randn(6))
    # SGD: Adam's first steps move a parameter by about lr whatever its gradient's size
    step = export_train_step(model, _gp_loss, inputs, optimizer="sgd", lr=0.05, out_dir=tmp_path)
    return step, torch_reference_losses(model, _gp_loss, inputs, steps=3, optimizer="sgd", lr=0.05)


@pytest.mark.parametrize("options", [("--cpu-gemm=loops",), ("--cpu-gemm=loops", "--cpu-vector-bits=0"),
                                     (), ("--cpu-vector-bits=0",)])
def test_cholesky_and_triangular_solves_train_as_pytorch(options, tmp_path, amp_tools):
    """``torch.linalg.cholesky``, ``cholesky_solve`` and ``solve_triangular`` (``MultivariateNormal``'s log
    density), ``solve``, ``inv``, ``det``, ``slogdet`` and ``logdet``, which torch-mlir does not lower, unrolled
    for small matrices (``_decompositions.cholesky``, ``solve_triangular``, ``_gauss_jordan``): fp32 within
    1e-5 of PyTorch, vectorised and with scalar loops, with the contractions as loops and as runtime GEMM
    calls. The triangular solves' dot products take their negation when fused (``acc + (-a) * b``), which
    upstream's contraction check looks through: as GEMM calls they lost the sign (8.790263 against PyTorch's
    8.777407 at step 1) until only plain product sums became calls (``amp::isGemmContraction``)."""
    _torch_mlir()
    step, want = _gaussian_process_step(tmp_path)
    np.testing.assert_allclose(_fp32_losses(amp_tools, step, 3, *options), want, rtol=1e-5)


def test_pivoted_elimination_on_the_gpu_pipeline(tmp_path, amp_tools):
    """The same step through the GPU pipeline: its row swaps write one element at a position computed on the
    device, which amp-gpu-host-to-device refused ("computes a value on the host that host code needs") until
    the host code that needs the position joined the device run. PTX through ptxas (where installed); the
    emulated device's fp32 losses equal the CPU's."""
    _torch_mlir()
    step, _ = _gaussian_process_step(tmp_path)
    ptx = tmp_path / "step.ptx"
    _run([amp_tools["amp_compile"], str(step.mlir_path), "--target=cuda", "--emit=ptx", "--chip=sm_90",
          "--precision=f16", "-o", str(ptx)])
    ptxas = shutil.which("ptxas") or ("/usr/local/cuda/bin/ptxas" if os.path.exists("/usr/local/cuda/bin/ptxas")
                                      else None)
    if ptxas:
        _run([ptxas, "-arch=sm_90", str(ptx), "-o", os.devnull])
    cpu = _fp32_losses(amp_tools, step, 3)
    assert _fp32_losses(amp_tools, step, 3, "--device=cuda-emulated") == cpu


class _ThreePivots(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3, 3) + 3 * torch.eye(3))

    def forward(self, x):
        return self.w * x


def _last_pivot(m, target):
    """The third pivot of a 3 x 3 pivoted elimination (argmax, gather, elimination per column), written out."""
    rows, pivots = torch.arange(3), []
    for c in range(3):
        p = m[c:, c].abs().argmax(-1) + c
        order = torch.where(rows == c, p.unsqueeze(-1), torch.where(rows == p.unsqueeze(-1), c, rows))
        m = torch.gather(m, -2, order.unsqueeze(-1).expand(m.shape))
        pivots.append(m[c, c])
        m = m - torch.where(rows == c, torch.zeros(()), m[:, c] / m[c, c]).unsqueeze(-1) * m[c:c + 1, :]
    return torch.stack(pivots)[2] + 0 * target.sum()


def test_vectorized_pivots(tmp_path, amp_tools):
    """amp-cpu-vectorize read an i1 buffer (a row mask ``rows == c``) along the transposed loop of a transposed
    tile as a vector of packed bits, where memory holds a byte per element: this pivoted elimination's last
    pivot was 4.5e-4 off PyTorch at step 1 (the Gaussian-process step above 1.5e-3), silently, and right
    with scalar loops. The buffer now keeps its loops (test/Codegen/CPU/amp-cpu-vectorize.mlir)."""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.ones(3, 3), torch.zeros(1))
    step = export_train_step(_ThreePivots(), _last_pivot, inputs, optimizer="sgd", lr=0.01, out_dir=tmp_path)
    torch.manual_seed(0)
    want = torch_reference_losses(_ThreePivots(), _last_pivot, inputs, steps=3, optimizer="sgd", lr=0.01)
    np.testing.assert_allclose(_fp32_losses(amp_tools, step, 3), want, rtol=1e-5)


class _Prototypes(nn.Module):
    """Distances to learned prototypes (a prototypical network's head): Euclidean through the matrix product
    (30 rows), and the direct 1-norm."""

    def __init__(self):
        super().__init__()
        self.embed, self.prototypes = nn.Linear(4, 5), nn.Parameter(torch.randn(3, 5))

    def forward(self, x):
        h = self.embed(x)
        return -(torch.cdist(h, self.prototypes.expand(x.shape[0], 3, 5)).mean(1)
                 + torch.cdist(h[:, :4], self.prototypes.expand(x.shape[0], 3, 5), p=1).mean(1))


@pytest.mark.parametrize("make, x", [
    (lambda: nn.Sequential(nn.Conv3d(2, 4, 3, padding=1),
                           nn.AvgPool3d((2, 3, 2), (2, 2, 1), (1, 1, 0), ceil_mode=True, count_include_pad=False),
                           nn.Flatten(), nn.Linear(4 * 4 * 3 * 4, 3)), torch.randn(2, 2, 5, 6, 5)),
    (lambda: nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.LocalResponseNorm(3), nn.Flatten(),
                           nn.Linear(6 * 6 * 6, 3)), torch.randn(2, 3, 6, 6)),
    (lambda: nn.Sequential(nn.Linear(8, 16), nn.Softshrink(0.2), nn.Hardshrink(0.1), nn.Linear(16, 3)),
     torch.randn(2, 8)),
    (lambda: nn.Sequential(nn.Conv3d(2, 3, 1), nn.Upsample(scale_factor=2, mode="trilinear"), nn.Flatten(),
                           nn.Linear(3 * 4 * 6 * 4, 3)), torch.randn(2, 2, 2, 3, 2)),
    (lambda: nn.Sequential(nn.Linear(6, 4), _BlockDiagRepeat(), nn.Linear(16 + 9, 3)), torch.randn(2, 6)),
    (lambda: _Prototypes(), torch.randn(2, 30, 4)),
    (lambda: nn.Sequential(nn.Embedding(10, 6, scale_grad_by_freq=True), nn.Flatten(), nn.Linear(18, 3)),
     torch.tensor([[1, 2, 2], [5, 1, 2]])),
    (lambda: nn.Sequential(nn.Linear(8, 24), _Selections(), nn.Linear(8 + 8 + 12, 3)), torch.randn(2, 8)),
    (lambda: _Resamplings(), torch.randn(2, 2, 2, 3, 4)),
    (lambda: nn.Sequential(nn.ConvTranspose3d(2, 3, 2, stride=2), nn.AdaptiveMaxPool3d((2, 3, 2)), nn.Flatten(),
                           nn.Linear(3 * 2 * 3 * 2, 3)), torch.randn(2, 2, 2, 3, 2))])
def test_ops_without_a_torch_mlir_backward(make, x, tmp_path, amp_tools):
    """``nn.AvgPool3d`` and ``nn.LocalResponseNorm`` (a 3-D average over the channels), ``nn.Softshrink`` and
    ``nn.Hardshrink``, trilinear upsampling: torch-mlir lowers none of their backward ops
    (``_decompositions.avg_pool3d_backward``, ``shrink_backward``, ``upsample_trilinear3d_backward``; nor the
    trilinear forward). ``torch.block_diag`` (empty blocks that torch-mlir left, ``_clean_graph``) and
    ``nn.Embedding(scale_grad_by_freq=True)``, nearest-exact resampling and replication padding in 1-D and 3-D,
    ``nn.ConvTranspose3d``'s and ``nn.AdaptiveMaxPool3d``'s gradients,
    ``median`` / ``kthvalue`` along a dimension, ``median``, ``hypot``, ``erfinv``, ``erfc``
    (``_decompositions.kthvalue``, ``hypot``), ``repeat_interleave`` with tensor repeats
    (``_decompositions.repeat_interleave``), ``torch.cdist``
    (``_decompositions.cdist``; torch-mlir lowers neither its forward nor its backward). fp32 within 1e-5 of
    PyTorch, and within 2e-7 absolute: the resamplings' cross-entropy falls to 1e-3 after one step, where the
    float32 rounding of logits near 7 is 6e-8 of it (5.8e-5 relative in one fresh-clone run under load)."""
    _torch_mlir()
    torch.manual_seed(0)
    _trains_as_pytorch(make(), (x, torch.tensor([0, 2])), tmp_path, amp_tools, optimizer="sgd", lr=0.1, atol=2e-7)


class _Bags(nn.Module):
    def __init__(self, mode, **options):
        super().__init__()
        self.bag, self.head = nn.EmbeddingBag(10, 6, mode=mode, **options), nn.Linear(6, 3)

    def forward(self, ids, offsets, weights):
        return self.head(self.bag(ids, offsets, per_sample_weights=weights if self.bag.mode == "sum" else None))


@pytest.mark.parametrize("mode, options", [("sum", {"include_last_offset": True}), ("mean", {"padding_idx": 0}),
                                           ("max", {})])
def test_embedding_bag_trains_as_pytorch(mode, options, tmp_path, amp_tools):
    """``nn.EmbeddingBag`` (``_decompositions.embedding_bag``, computed above autograd: torch-mlir lowers neither
    ``_embedding_bag`` nor its backward), with an empty bag: fp32 within 1e-5 of PyTorch, f16 within 2e-3."""
    _torch_mlir()
    torch.manual_seed(0)
    offsets = [0, 4, 9, 12] if options.get("include_last_offset") else [0, 3, 3, 7]
    bags = len(offsets) - (1 if options.get("include_last_offset") else 0)
    inputs = (torch.tensor([1, 2, 2, 5, 0, 7, 3, 3, 9, 4, 0, 8]), torch.tensor(offsets), torch.rand(12),
              torch.tensor([0, 2, 1, 2][:bags]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        step, fp32 = _trains_as_pytorch(_Bags(mode, **options), inputs, tmp_path, amp_tools, optimizer="sgd",
                                        lr=0.5)
    np.testing.assert_allclose(_losses(amp_tools, step, 3, "f16"), fp32, rtol=2e-3)


class _RotaryInF32(nn.Module):
    """A rotary position embedding whose angles (positions times frequencies) are computed inside
    ``torch.autocast(enabled=False)``, as Llama's are: positions 4000..4015, which f16 cannot hold (its
    spacing there is 4)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.head = nn.Linear(8, 3)
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, 8, 2).float() / 8)), persistent=False)

    def forward(self, x):
        pos = torch.arange(4000, 4016, dtype=torch.float32)[None].expand(x.shape[0], -1)
        with torch.autocast("cpu", enabled=False):
            angles = pos[:, :, None] @ self.inv_freq[None, None, :]
            cos, sin = angles.cos(), angles.sin()
        h = self.lin(x)
        h1, h2 = h[..., :4], h[..., 4:]
        return self.head(torch.cat([h1 * cos - h2 * sin, h1 * sin + h2 * cos], -1).mean(1))


def test_autocast_disabled_region_stays_f32(tmp_path, amp_tools):
    """The ops a model computes inside ``torch.autocast(enabled=False)`` (which PyTorch's AMP keeps in
    float32) are pinned ``#amp.precision<f32>`` (their locations named after the region), and only they:
    the f16 step computes the rotary angles in f32, its losses within 1e-4 of fp32. Without the pins, the
    angles' matmul runs in f16 (4001 * 1.0 rounds to 4000) and the f16 losses part from fp32 by 2e-3."""
    _torch_mlir()
    torch.manual_seed(0)
    enter = torch.amp.autocast_mode.autocast.__enter__
    inputs = (torch.randn(2, 16, 8), torch.tensor([0, 2]))
    step = export_train_step(_RotaryInF32(), F.cross_entropy, inputs, optimizer="adamw", lr=1e-3,
                             out_dir=tmp_path / "pinned")
    assert torch.amp.autocast_mode.autocast.__enter__ is enter  # the capture's hook is gone
    text = step.mlir_path.read_text()
    pinned = [line for line in text.splitlines() if "amp.precision = #amp.precision<f32>" in line]
    assert {line.split("=", 1)[1].split()[0] for line in pinned} >= {"tosa.matmul", "tosa.cos", "tosa.sin"}
    assert sum("tosa.matmul" in line for line in pinned) == 1  # the angles' only, not the layers'
    assert 'loc("torch.autocast(enabled=False)"' in text
    fp32 = _losses(amp_tools, step, 3)
    np.testing.assert_allclose(_losses(amp_tools, step, 3, "f16"), fp32, rtol=1e-4)
    unpinned = tmp_path / "unpinned"
    shutil.copytree(step.out_dir, unpinned)
    (unpinned / "train_step.mlir").write_text(text.replace(" {amp.precision = #amp.precision<f32>}", ""))
    f16 = _losses(amp_tools, SimpleNamespace(mlir_path=unpinned / "train_step.mlir", out_dir=unpinned), 3, "f16")
    assert np.max(np.abs(np.array(f16) / fp32 - 1)) > 1e-3


def test_transformers_autocast_region_stays_f32(tmp_path, amp_tools):
    """transformers enters its ``enabled=False`` regions through ``maybe_autocast``, which enters none
    while autocast is off (as during the capture): the capture has those modules enter them anyway.
    GPT-2 with ``reorder_and_upcast_attn`` computes its attention scores in float32 there: both layers'
    score matmuls and the two matmuls of each one's backward (PyTorch computes them in the forward's
    float32 too) are pinned f32, and no other matmul; the function is transformers' own again
    afterwards, and the step trains as PyTorch does."""
    _torch_mlir()
    transformers = pytest.importorskip("transformers", reason="transformers is not installed")
    import transformers.models.gpt2.modeling_gpt2 as gpt2
    import transformers.utils.generic as generic
    from amp_mlir.torch.zoo import _causal_lm
    cfg = transformers.GPT2Config(vocab_size=128, n_embd=64, n_layer=2, n_head=4, n_positions=64,
                                  reorder_and_upcast_attn=True, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    cfg._attn_implementation = "eager"
    case = _causal_lm(lambda: transformers.GPT2LMHeadModel(cfg))
    step = case.export(tmp_path)
    assert gpt2.maybe_autocast is generic.maybe_autocast
    pinned = [line for line in step.mlir_path.read_text().splitlines()
              if "amp.precision = #amp.precision<f32>" in line]
    assert sum("tosa.matmul" in line for line in pinned) == 2 * 3
    want = torch_reference_losses(case.model, case.loss_fn, case.inputs, steps=3, optimizer=case.optimizer,
                                  **case.options)
    np.testing.assert_allclose(_losses(amp_tools, step, 3), want, rtol=1e-5)


class _ConstantMaskGates(nn.Module):
    """Masks made in the step from constant float tensors and compared with Python ints, as X-MOD's
    language ids (``default_lang_id * ones`` == adapter index) and LED's ``attention_mask < 0`` are."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(16, 8)
        self.lin = nn.Linear(8, 3)

    def forward(self, ids):
        c = torch.full(ids.shape, 2.0)
        inv = 1.0 - torch.ones_like(ids).float()
        gates = [c > 1, c >= 2, c == 2, c != 0, c < 3, c <= 2, ~(inv < 0), inv == 0]
        gate = torch.stack(gates).all(0).float()
        return self.lin((self.emb(ids) * gate[..., None]).mean(1))


def test_constant_float_compared_with_int(tmp_path, amp_tools):
    """Every gate above is true in PyTorch; torch-mlir folded such comparisons wrongly when the scalar was
    an int (greater-than false, less-than true, equal false; and crashed on the last two), so the step
    trained without the embedding. The capture compares with a float: the step trains as PyTorch does."""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.randint(0, 16, (2, 8), generator=torch.Generator().manual_seed(1)), torch.tensor([0, 2]))
    model = _ConstantMaskGates()
    _trains_as_pytorch(model, inputs, tmp_path, amp_tools, optimizer="sgd", lr=0.5)


class _SignSplit(nn.Module):
    """A loss whose backward compares the gradient with 0.0 (``logcumsumexp``'s, splitting log|grad| by sign)
    and a forward gate against a float threshold (0.3 passes, 0.1 does not)."""

    def __init__(self):
        super().__init__()
        self.f = nn.Linear(6, 1)

    def forward(self, x):
        s = self.f(x)[..., 0] * (x[..., 0] > 0.1).float()
        return torch.logcumsumexp(s, -1).sum(-1).mean()


def test_float_comparisons_stay_in_the_tensors_type(tmp_path, amp_tools):
    """A float tensor compared with a Python number (``g > 0.0``) is compared with a 0-d tensor of its own type
    (``gt.Tensor``): torch-mlir's TOSA conversion of ``gt.Scalar`` cast the tensor to f64 first. An f64 copy
    of each compared tensor (every dropout mask's uniform numbers), and, where the tensor is a gradient,
    amp-loss-scaling found a scaled f64 value leaving the backward and refused the f16 step. No f64 tensor is
    left (Adam's scalar factors are f64 scalars, as torch.optim computes them); fp32 trains as PyTorch, f16
    within 1e-3 of it."""
    _torch_mlir()
    torch.manual_seed(0)
    x = torch.randn(3, 8, 6, generator=torch.Generator().manual_seed(1))
    x[0, :4, 0] = 0.1
    x[0, 4:, 0] = 0.3
    step, fp32 = _trains_as_pytorch(_SignSplit(), (x, torch.zeros(1)), tmp_path, amp_tools, loss=lambda out, target: out,
                                    optimizer="adam", lr=1e-2)
    assert not re.search(r"tensor<\d[\dx]*xf64>", step.mlir_path.read_text())
    np.testing.assert_allclose(_losses(amp_tools, step, 3, "f16"), fp32, rtol=1e-3)


class _ResampleTo(nn.Module):
    """A 7 x 7 map made by a layer, resampled bilinearly with ``align_corners`` to ``size``."""

    def __init__(self, size):
        super().__init__()
        self.size = size
        self.a = nn.Linear(16, 49)
        self.b = nn.Linear(size[0] * size[1], 3)

    def forward(self, x):
        m = self.a(x).reshape(-1, 1, 7, 7)
        r = F.interpolate(m, size=self.size, mode="bilinear", align_corners=True)
        return self.b(r.flatten(1))


@pytest.mark.parametrize("size", [(1, 1), (1, 5), (5, 1), (3, 4)])
def test_align_corners_resample_to_one_pixel(tmp_path, amp_tools, size):
    """align_corners=True to one pixel along a dimension takes its first element in PyTorch; torch-mlir's
    resize took the centre (timm CSATv2's last stage, silently off). Forward and backward train as PyTorch
    does, one-pixel dimensions or not."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _ResampleTo(size)
    inputs = (torch.randn(2, 16, generator=torch.Generator().manual_seed(1)), torch.tensor([0, 2]))
    _trains_as_pytorch(model, inputs, tmp_path, amp_tools, optimizer="sgd", lr=0.5)


class _ComplexRotary(nn.Module):
    """Rotary position embeddings as a complex product (Meta's Llama code, DeepSeek-V2, Llama 4), with the
    frequencies both precomputed (a complex buffer) and made in the forward pass (``polar`` of a real
    buffer), and other complex ops a model may use: a complex matrix product, a division, ``abs``,
    ``conj``, ``real`` / ``imag``, a concatenation with a real tensor."""

    def __init__(self, tokens=6, dim=8):
        super().__init__()
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, 3)
        angles = torch.arange(tokens)[:, None] * (0.5 ** torch.arange(dim // 2))[None, :]
        self.register_buffer("freqs_cis", torch.polar(torch.ones_like(angles), angles.float()))
        self.register_buffer("inv_freq", 0.3 ** torch.arange(dim // 2, dtype=torch.float32))

    def forward(self, x):  # x: [batch, tokens, dim]
        b, t, d = x.shape
        q = torch.view_as_complex(self.q(x).float().reshape(b, t, -1, 2))
        k = torch.view_as_complex(self.k(x).float().reshape(b, t, -1, 2))
        q = torch.view_as_real(q * self.freqs_cis[None, :t]).flatten(2)
        freqs = torch.outer(torch.arange(t, dtype=torch.float32), self.inv_freq)
        k = k * torch.polar(torch.ones_like(freqs), freqs).unsqueeze(0)
        mixed = k.transpose(1, 2) @ k.conj() / (1 + k.abs().sum())       # [b, d/2, d/2] complex
        k = torch.view_as_real(k).flatten(2) + torch.cat([mixed.real, mixed.imag], -1).mean(1, keepdim=True)
        scores = torch.softmax(q @ k.transpose(1, 2) / d ** 0.5, -1)
        return self.head((scores @ x).mean(1))


def test_complex_rotary_embeddings(tmp_path, amp_tools):
    """Complex values inside the step (rotary embeddings written with view_as_complex, their backward's
    ``_conj``, a complex buffer) are carried as real pairs: fp32 trains as PyTorch does, f16 within 2e-3 of
    fp32, and no complex type reaches the MLIR; the complex buffer is an argument of shape [..., 2]."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _ComplexRotary()
    inputs = (torch.randn(2, 6, 8), torch.tensor([0, 2]))
    step = export_train_step(model, F.cross_entropy, inputs, optimizer="adamw", lr=0.01, out_dir=tmp_path)
    assert not re.search(r"complex<|complex64|complex\.", step.mlir_path.read_text())
    buffer = next(a for a in step.manifest["arguments"] if a["name"].startswith("buffer freqs_cis"))
    assert buffer["shape"] == [6, 4, 2] and buffer["dtype"] == "float32"
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=3, optimizer="adamw", lr=0.01)
    fp32 = _losses(amp_tools, step, 3)
    np.testing.assert_allclose(fp32, want, rtol=1e-5)
    np.testing.assert_allclose(_losses(amp_tools, step, 3, "f16"), fp32, rtol=2e-3)


class _LearnedPolar(nn.Module):
    """Complex weights made from learned parameters (``polar``, ``complex``) and complex arithmetic whose
    backward needs the rules of ``sgn`` (``abs``'s), ``==`` and conjugates of scalars."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.theta = nn.Parameter(torch.randn(4))
        self.r = nn.Parameter(torch.rand(4) + 0.5)
        self.head = nn.Linear(8, 3)

    def forward(self, x):  # x: [2, 8]
        z = torch.view_as_complex(self.fc(x).reshape(2, 4, 2))
        w = torch.polar(self.r, self.theta)
        z = z * w + torch.complex(self.r, -self.theta) / (w + 2)
        z = z * torch.exp(z * 0.1j) - z.conj() * 0.5
        y = torch.cat([z.real, z.imag, z.abs(), z.angle()], -1)
        return self.head(y[:, :8] + y[:, 8:])


def test_complex_values_of_parameters(tmp_path, amp_tools):
    """Complex values made from parameters train as in PyTorch (their gradients flow back through
    ``polar`` and ``complex``); the step reads one element of a constant the importer writes as a
    ``dense_resource`` blob (amp-inline-resource-constants)."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _LearnedPolar()
    inputs = (torch.randn(2, 8), torch.tensor([0, 2]))
    step, fp32 = _trains_as_pytorch(model, inputs, tmp_path, amp_tools, optimizer="sgd", lr=0.1)
    np.testing.assert_allclose(_losses(amp_tools, step, 3, "f16"), fp32, rtol=2e-3)


class _Fourier(nn.Module):
    """FNet's token mixing (``fftn(x, dim=(1, 2)).real``), a one-sided real transform, an orthonormal
    inverse and real inverses (``irfft``, ``irfftn``): the transforms are DFT products over each dimension."""

    def __init__(self, dim=6):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, 3)

    def forward(self, x):  # x: [batch, tokens, dim]
        h = x + torch.fft.fftn(self.fc(x), dim=(1, 2)).real
        spectrum = torch.fft.rfft(h, dim=1)  # 5 tokens -> 3 frequencies
        h = h + torch.fft.ifft(spectrum, dim=-1, norm="ortho").imag.mean(1, keepdim=True) + spectrum.abs().mean(1,
                                                                                                             True)
        # real inverses (a vocoder's inverse STFT): odd and even lengths, over one and two dimensions
        h = h + torch.fft.irfft(spectrum * 0.5, n=5, dim=1) + torch.fft.irfftn(torch.fft.rfftn(h), s=(5, 6))
        # a phase ramp made from a real tensor times a Python complex, on a shifted spectrum
        shifted = torch.fft.fftshift(torch.fft.fft(h, dim=-1), dim=-1)
        h = h + torch.fft.ifft(shifted * torch.exp(1j * torch.linspace(0, 1, 6)), dim=-1).real
        return self.head(h.mean(1))


def test_fourier_transforms(tmp_path, amp_tools):
    """FFTs (``_fft_c2c`` forward and inverse, ``_fft_r2c`` one-sided, ``_fft_c2r``, and their backward) as
    DFT products on real pairs: fp32 trains as PyTorch does. Their products are pinned f32 (a transform's
    outputs each sum a whole axis; TOSA's own FFTs are deny): every matmul but the five of the two linear
    layers (both forwards, the head's two gradients, fc's weight gradient)."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _Fourier()
    inputs = (torch.randn(2, 5, 6), torch.tensor([0, 2]))
    step, _ = _trains_as_pytorch(model, inputs, tmp_path, amp_tools, optimizer="sgd", lr=0.1)
    matmuls = [line for line in step.mlir_path.read_text().splitlines() if "tosa.matmul" in line]
    assert len(matmuls) > 20
    assert sum("amp.precision = #amp.precision<f32>" not in line for line in matmuls) == 5


class _ComplexOps(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.a, self.b, self.head = nn.Linear(6, 24), nn.Linear(6, 24), nn.Linear(24 if kind != "rfftn" else 36, 3)

    def forward(self, x):
        z, w = torch.complex(self.a(x), self.b(x)), torch.complex(self.b(x), -self.a(x))
        if self.kind == "rfftn":  # the 3-D transform's real form flattened: a view of the pairs' layout
            return self.head(torch.view_as_real(torch.fft.rfftn(self.a(x).view(-1, 2, 3, 4), dim=(1, 2, 3),
                                                                norm="forward")).flatten(1))
        out = {"conj": z * w.conj(), "sgn": torch.sgn(z) * w, "conj_physical": torch.conj_physical(z) * w}[self.kind]
        return self.head(out.real + out.imag)


@pytest.mark.parametrize("kind", ["conj", "sgn", "conj_physical", "rfftn"])
def test_complex_ops_train_as_pytorch(kind, tmp_path, amp_tools):
    """``z * w.conj()`` (its gradient a negated view, ``_neg_view``, which torch-mlir does not lower),
    ``torch.sgn`` of a complex tensor (its decomposition makes ``scalar_tensor(0j)``: the capture crashed with
    a TypeError), ``conj_physical``, and a 3-D real FFT's ``view_as_real(...).flatten(1)`` (a view the pairs'
    layout did not allow): fp32 within 1e-5 of PyTorch."""
    _torch_mlir()
    torch.manual_seed(0)
    _trains_as_pytorch(_ComplexOps(kind), (torch.randn(4, 6), torch.tensor([0, 2, 1, 2])), tmp_path, amp_tools,
                       optimizer="sgd", lr=0.1)


def test_complex_op_without_a_rule_is_named(tmp_path):
    """A complex op the pairs have no rule for is an UnsupportedOpError naming it, not a crash."""
    _torch_mlir()

    class Log(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            z = torch.view_as_complex(self.fc(x).reshape(2, 2, 2))
            return torch.view_as_real(torch.log(z)).reshape(2, 4)

    with pytest.raises(UnsupportedOpError, match=r"aten\.log\.default on complex tensors"):
        export_train_step(Log(), F.cross_entropy, (torch.randn(2, 4), torch.tensor([0, 2])), optimizer="sgd",
                          lr=0.1, out_dir=tmp_path)


class _AntialiasedPositions(nn.Module):
    """timm's ViT with ``dynamic_img_size``: a learned 7 x 7 position map resampled with antialiasing to the
    input's grid at every forward."""

    def __init__(self, mode, antialias=True):
        super().__init__()
        self.mode, self.antialias = mode, antialias
        self.pos = nn.Parameter(torch.randn(1, 4, 7, 7) * 0.5)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):  # x: [batch, 4, 5, 6]
        pos = F.interpolate(self.pos, size=x.shape[-2:], mode=self.mode, antialias=self.antialias,
                            align_corners=False)
        return self.fc((x + pos).tanh().mean((2, 3)))


@pytest.mark.parametrize("mode, antialias", [("bicubic", True), ("bilinear", True), ("bicubic", False)])
def test_antialiased_resampling_trains(tmp_path, amp_tools, mode, antialias):
    """Antialiased and bicubic resampling (torch-mlir lowers neither op nor its backward; YOLOS resizes its
    position embeddings bicubically) train as PyTorch does."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _AntialiasedPositions(mode, antialias)
    inputs = (torch.randn(2, 4, 5, 6), torch.tensor([0, 2]))
    _trains_as_pytorch(model, inputs, tmp_path, amp_tools, optimizer="sgd", lr=0.5)


class _Sorts(nn.Module):
    """Sorts torch-mlir did not take: integer keys (a router's expert ids, JetMoE) and ``stable=True``,
    with ties, ascending and descending."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.head = nn.Linear(6, 3)

    def forward(self, x):
        h = self.fc(x)
        ids = (torch.round(h * 2) * 2).long()  # integers with ties
        v, i = ids.sort(dim=-1, descending=True)
        out = torch.gather(h, -1, i) * (1 + torch.arange(6.0)) + v.float()
        w, j = torch.round(h * 2).sort(dim=-1, stable=True)
        return self.head(out + torch.gather(h, -1, j) * (1 + torch.arange(6.0)) + w)


def test_integer_and_stable_sorts(tmp_path, amp_tools):
    """Integer and stable sorts (ranks: _decompositions.sort) train as PyTorch does."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _Sorts()
    inputs = (torch.randn(2, 6), torch.tensor([0, 2]))
    _trains_as_pytorch(model, inputs, tmp_path, amp_tools, optimizer="sgd", lr=0.1)


class _Scans(nn.Module):
    """Running extremes and products (``cummax``, ``cummin``, ``cumprod``: none lowered by torch-mlir; the
    last one's backward takes a ``relu`` of an integer index) beside ``cumsum``."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 8)
        self.head = nn.Linear(32, 3)

    def forward(self, x):
        h = self.fc(x)
        parts = [torch.cummax(h, -1).values, torch.cummin(h, 0).values, torch.cumprod(torch.sigmoid(h) * 1.5, -1),
                 torch.cumsum(h, -1)]
        return self.head(torch.cat(parts, -1))


def test_running_extremes_and_products(tmp_path, amp_tools):
    """cummax, cummin and cumprod (triangle masks: _decompositions) train as PyTorch does."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _Scans()
    inputs = (torch.randn(3, 6), torch.tensor([0, 2, 1]))
    _trains_as_pytorch(model, inputs, tmp_path, amp_tools, optimizer="sgd", lr=0.1)


class _VocoderHead(nn.Module):
    """A vocoder's inverse-STFT head (WavTokenizer, Vocos): magnitude and phase -> ``polar`` -> ``istft``
    (which checks its window envelope with ``torch.equal``, and runs irfft and an overlap-add)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 2 * 17)
        self.register_buffer("window", torch.hann_window(32))

    def forward(self, x):  # x: [batch, frames, 8]
        magnitude, phase = self.fc(x).chunk(2, -1)
        spec = torch.polar(torch.exp(magnitude.clamp(max=3)), phase).transpose(1, 2)
        return torch.istft(spec, 32, hop_length=8, window=self.window, center=True, length=8 * (x.shape[1] - 1))


def test_inverse_stft_head(tmp_path, amp_tools):
    """torch.istft trains as PyTorch does: its window check (torch.equal of a buffer the step does not
    change) is read while capturing and listed, its irfft a DFT product on real pairs."""
    _torch_mlir()
    from amp_mlir.torch._torch_mlir import SpecializationWarning
    torch.manual_seed(0)
    model = _VocoderHead()
    inputs = (torch.randn(2, 12, 8), torch.randn(2, 88) * 0.1)
    with pytest.warns(SpecializationWarning, match=r"equality False, from buffer window \(which the step does not"):
        step = export_train_step(model, F.mse_loss, inputs, optimizer="adam", lr=1e-2, out_dir=tmp_path)
    want = torch_reference_losses(model, F.mse_loss, inputs, steps=3, optimizer="adam", lr=1e-2)
    np.testing.assert_allclose(_losses(amp_tools, step, 3), want, rtol=1e-5)


class _SpectrumPhase(nn.Module):
    """The phase of a real signal's spectrum, DC and Nyquist bins included (PyTorch's FFT makes their
    imaginary parts exactly 0: angle 0 or pi)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.head = nn.Linear(18, 3)

    def forward(self, x):
        spectrum = torch.fft.rfft(self.fc(x))  # 9 bins
        return self.head(torch.cat([spectrum.angle(), torch.log1p(spectrum.abs())], -1))


def test_spectrum_phase_at_dc_and_nyquist(tmp_path, amp_tools):
    """The DFT tables are exact at the quarter turns: np.sin(pi) = 1.2e-16 gave the Nyquist bin a tiny
    imaginary part whose sign flipped its angle between pi and -pi (23% off PyTorch at the first loss,
    silently; found by the tenth batch)."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _SpectrumPhase()
    inputs = (torch.randn(2, 16, generator=torch.Generator().manual_seed(1)), torch.tensor([0, 2]))
    _trains_as_pytorch(model, inputs, tmp_path, amp_tools, optimizer="sgd", lr=0.1)


def _exact_dft(x, forward):
    """The DFT of the complex128 rows of ``x`` (PyTorch's conventions: ``fft``, or ``ifft`` with
    ``norm="forward"``), computed directly in long double and rounded to complex128: a reference that does
    not depend on the FFT library's accuracy (PyTorch's FFT of length 134 = 2 x 67 is 1.9e-14 from it on a
    2026-12-03 AVX-512 Xeon, ours 5e-16)."""
    n = x.shape[-1]
    k = np.arange(n).astype(np.longdouble)
    angle = (-2 if forward else 2) * np.arccos(np.longdouble(-1)) * np.outer(k, k) / n
    cos, sin = np.cos(angle), np.sin(angle)
    re, im = x.real.numpy().astype(np.longdouble), x.imag.numpy().astype(np.longdouble)
    out = (re @ cos.T - im @ sin.T).astype(np.float64) + 1j * (re @ sin.T + im @ cos.T).astype(np.float64)
    return torch.from_numpy(out)


def test_long_transforms_are_split_as_cooley_tukey():
    """Transforms longer than SPLIT_ABOVE are split (n = n1 * n2, twiddle factors, each part split again):
    forward and inverse equal the exact transform (``_exact_dft``; PyTorch's beyond 1000 points) and real
    inverse (one-sided spectra cut short or longer than needed) PyTorch's, in float64 to rounding, for
    lengths prime, direct, split once, twice and twice a prime. A real signal's DC
    and Nyquist bins have exact 0 imaginary parts, as PyTorch's: with 150 = 10 x 15 (the first split
    tried) the Nyquist bin took a twiddle factor and a 2e-7 residue."""
    from amp_mlir.torch._complex import SPLIT_ABOVE, Pair, _dft, _fft_c2r, _fft_r2c, _split
    assert _split(SPLIT_ABOVE) is None and _split(127) is None and _split(150) == (15, 10)
    gen = torch.Generator().manual_seed(0)
    for n in (7, 64, 96, 127, 134, 150, 1000, 8192):
        x = torch.randn(3, n, dtype=torch.complex128, generator=gen)
        for forward in (True, False):
            # (Up to 1000 points against the exact transform; 8192 = 2^13 against PyTorch's.)
            want = _exact_dft(x, forward) if n <= 1000 else \
                torch.fft.fft(x) if forward else torch.fft.ifft(x, norm="forward")
            got = torch.view_as_complex(_dft(Pair(torch.view_as_real(x)), [1], 0, forward).t.contiguous())
            assert (got - want).abs().max() < 1e-14 * want.abs().max(), (n, forward)
        for bins in (n // 2 + 1, max(1, n // 2 - 3), n):
            spectrum = torch.randn(3, bins, dtype=torch.complex128, generator=gen)
            want = torch.fft.irfft(spectrum, n=n, norm="forward")
            assert (_fft_c2r(Pair(torch.view_as_real(spectrum)), [1], 0, n) - want).abs().max() < \
                1e-14 * want.abs().max(), (n, bins)
    for n in (66, 110, 150, 1000):
        spectrum = _fft_r2c(torch.randn(4, n, generator=gen), [1], 0, True)
        assert not spectrum.im[:, 0].any() and not spectrum.im[:, -1].any(), n


class _LongSpectrum(nn.Module):
    """A 150-sample signal's spectrum (phases included), filtered and back: every transform split."""

    def __init__(self, n=150):
        super().__init__()
        self.fc = nn.Linear(8, n)
        self.gain = nn.Parameter(torch.ones(n // 2 + 1))
        self.head = nn.Linear(n + 2 * (n // 2 + 1), 3)

    def forward(self, x):
        signal = self.fc(x)
        spectrum = torch.fft.rfft(signal)
        back = torch.fft.irfft(spectrum * self.gain, n=signal.shape[-1]) + torch.fft.ifft(torch.fft.fft(signal)).real
        return self.head(torch.cat([back, spectrum.angle(), torch.log1p(spectrum.abs())], -1))


def test_long_transforms_train_as_pytorch(tmp_path, amp_tools):
    """The split transforms (forward, real, real inverse, and their backward) through torch-mlir and amp-train:
    fp32 trains as PyTorch does."""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.randn(2, 8, generator=torch.Generator().manual_seed(1)), torch.tensor([0, 2]))
    _trains_as_pytorch(_LongSpectrum(), inputs, tmp_path, amp_tools, optimizer="sgd", lr=0.01)


def test_literal_tracker_never_reuses_a_freed_constants_literal():
    """torch-mlir's importer imports a bool constant through a uint8 copy freed at once and caches literals by
    id(): with its own tracker a later copy at the same address got the earlier constant's literal (51 of
    64 here; silently the wrong mask in a step, or an import error). The capture's tracker holds what it
    tracks: every copy gets its own literal."""
    _torch_mlir()
    from amp_mlir.torch._torch_mlir import _literal_tracker
    tracker = _literal_tracker()
    masks = [torch.rand(16, generator=torch.Generator().manual_seed(i)) > 0.5 for i in range(64)]

    def import_literal(mask):  # as the importer: a temporary copy, tracked, dropped on return
        mapping = tracker.track(mask.to(torch.uint8))
        assert mapping.is_empty  # not another constant's literal
        mapping.value = object()
        return mapping

    mappings = [import_literal(m) for m in masks]
    # every copy still alive (torch-mlir's own tracker holds them weakly: gone here), so no id() came back
    assert all(m._referrent() is not None for m in mappings)


class _GroupedUpsampler(nn.Module):
    """Transposed convolutions with groups, as a codec's decoder upsamples: depthwise 1-D (Mimi's
    ``upsample_groups``) and 2-D with two channels per group."""

    def __init__(self):
        super().__init__()
        self.up1 = nn.ConvTranspose1d(8, 8, 4, stride=2, padding=1, groups=8)
        self.up2 = nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.head = nn.Linear(16 + 6 * 36, 3)

    def forward(self, x):  # x: [batch, 8, 8]
        a = self.up1(x).mean(1)  # [batch, 16]
        b = self.up2(torch.tanh(x).reshape(-1, 4, 4, 4)[:, :, 1:, 1:].contiguous())  # [batch, 6, 6, 6]
        return self.head(torch.cat([a, b.flatten(1)], -1))


def test_grouped_transposed_convolutions_train_as_pytorch(tmp_path, amp_tools):
    """torch-mlir lowers no transposed convolution with groups ("failed to legalize", transformers' Mimi
    stopped on it): the capture decomposes them (``_decompositions.convolution``); fp32 trains as PyTorch."""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.randn(2, 8, 8), torch.tensor([0, 2]))
    _trains_as_pytorch(_GroupedUpsampler(), inputs, tmp_path, amp_tools, optimizer="adamw", lr=1e-2)


class _RollingHash(nn.Module):
    """BLT's byte-group hash: ``prime ** arange(n)`` (a 0-d int64 tensor's ``pow``), summed products that wrap
    modulo 2^64, their remainder as embedding ids; a Python int's powers and an int tensor's cube too; an
    offset added to and subtracted from such a sum before its remainder (int64 sums beyond int32)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(61, 8)
        self.fc = nn.Linear(8, 3)

    def forward(self, ids):  # ids: [batch, tokens, 3] int64
        powers = torch.tensor(1000003, dtype=torch.int64) ** torch.arange(ids.shape[-1] + 2)[2:]
        wide = torch.sum(ids * powers, dim=-1)
        hashed = torch.remainder(wide, 61)
        offset = (wide + ids[..., 2] - 7) % 61
        other = (7 ** (ids[..., 0] % 5) + (ids[..., 1] + 1) ** 3) % 61
        return self.fc((self.emb(hashed) + self.emb(offset) + self.emb(other)).mean(1))


def test_integer_powers_train_as_pytorch(tmp_path, amp_tools):
    """Integer ``pow`` (torch-mlir lowers none of its overloads; BLT stopped on it), as repeated squaring;
    ``%`` from the truncating division; int64 adds beyond int32 as sums (``_wide_integer_sums``): the hashed
    ids, which wrap modulo 2^64, pick the same embedding rows as in PyTorch."""
    _torch_mlir()
    torch.manual_seed(0)
    ids = torch.randint(0, 256, (2, 5, 3), generator=torch.Generator().manual_seed(1))
    _trains_as_pytorch(_RollingHash(), (ids, torch.tensor([0, 2])), tmp_path, amp_tools, optimizer="adamw", lr=1e-2)


class _Checkpointed(nn.Module):
    """A block under activation checkpointing (``torch.utils.checkpoint``, as transformers'
    ``gradient_checkpointing_enable()`` puts every layer): its backward runs the block again."""

    def __init__(self, use_reentrant):
        super().__init__()
        self.use_reentrant = use_reentrant
        self.a = nn.Linear(8, 16)
        self.block = nn.Sequential(nn.Linear(16, 16), nn.GELU(), nn.Linear(16, 16))
        self.head = nn.Linear(16, 3)

    def forward(self, x):
        from torch.utils.checkpoint import checkpoint
        h = self.a(x)
        return self.head(h + checkpoint(self.block, h, use_reentrant=self.use_reentrant))


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_activation_checkpointing_trains_as_pytorch(use_reentrant, tmp_path, amp_tools):
    """The recomputation in the backward runs on the step's parameters: the step trains as PyTorch. (It ran
    on the model's own, so the block's gradients used its initial weights at every step: the third loss was
    1e-3 off, silently; the re-entrant form, which refuses torch.autograd.grad, failed to capture.)"""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.randn(4, 8), torch.tensor([0, 1, 2, 0]))
    _trains_as_pytorch(_Checkpointed(use_reentrant), inputs, tmp_path, amp_tools, optimizer="adamw", lr=1e-2)


def test_max_pool3d_trains_as_pytorch(tmp_path, amp_tools):
    """A video network's 3-D max pooling (S3D's): its gradient, which torch-mlir leaves, decomposed; fp32
    trains as PyTorch."""
    _torch_mlir()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv3d(3, 4, 3, padding=1), nn.MaxPool3d((1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1)),
                          nn.ReLU(), nn.MaxPool3d(2), nn.Flatten(), nn.Linear(4 * 1 * 2 * 2, 3))
    inputs = (torch.randn(2, 3, 2, 8, 8), torch.tensor([0, 2]))
    _trains_as_pytorch(model, inputs, tmp_path, amp_tools, optimizer="adamw", lr=1e-2)


class _Sampler(nn.Module):
    """Features read at learned offsets from a regular grid (RAFT's correlation lookup, deformable
    sampling): ``F.grid_sample`` with gradients to both the features and the grid."""

    def __init__(self, mode, padding_mode, align_corners):
        super().__init__()
        self.options = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.offset = nn.Parameter(torch.randn(1, 5, 6, 2) * 0.3)
        self.fc = nn.Linear(4 * 5 * 6, 3)

    def forward(self, x):
        base = torch.stack(torch.meshgrid(torch.linspace(-1.2, 1.2, 6), torch.linspace(-1, 1, 5), indexing="xy"), -1)
        grid = (base[None] + self.offset).expand(x.shape[0], -1, -1, -1)
        return self.fc(F.grid_sample(self.conv(x), grid, **self.options).flatten(1))


@pytest.mark.parametrize("mode, padding_mode, align_corners", [
    ("bilinear", "zeros", True), ("bilinear", "border", False), ("bilinear", "reflection", True),
    ("nearest", "zeros", False), ("bicubic", "zeros", False), ("bicubic", "border", True)])
def test_grid_sample_trains_as_pytorch(mode, padding_mode, align_corners, tmp_path, amp_tools):
    """``grid_sample``'s backward (``grid_sampler_2d_backward``), which torch-mlir leaves (torchvision's RAFT
    stopped on it): the capture computes the op as PyTorch's own decomposition does, and autograd records
    that one's backward. Its gradients equal the op's own in float64 (to 1e-13); fp32 trains as PyTorch,
    gradients to the grid included (5e-5: the sums in another order, through three AdamW steps)."""
    _torch_mlir()
    from torch._decomp.decompositions import _grid_sampler_2d
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(2, 3, 8, 8, dtype=torch.float64, generator=gen, requires_grad=True)
    grid = (torch.rand(2, 5, 6, 2, dtype=torch.float64, generator=gen) * 2.8 - 1.4).requires_grad_()
    weight = torch.randn(2, 3, 5, 6, dtype=torch.float64, generator=gen)
    options = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    unused = dict(allow_unused=True, materialize_grads=True)  # nearest: no gradient to the grid
    want = torch.autograd.grad((F.grid_sample(x, grid, **options) * weight).sum(), (x, grid), **unused)
    got = torch.autograd.grad((_grid_sampler_2d(x, grid, ["bilinear", "nearest", "bicubic"].index(mode),
                                                ["zeros", "border", "reflection"].index(padding_mode),
                                                align_corners) * weight).sum(), (x, grid), **unused)
    for a, b in zip(got, want):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-13)
    torch.manual_seed(0)
    inputs = (torch.randn(2, 1, 8, 8), torch.tensor([0, 2]))
    step, _ = _trains_as_pytorch(_Sampler(mode, padding_mode, align_corners), inputs, tmp_path, amp_tools,
                                 optimizer="adamw", lr=1e-2, rtol=5e-5)
    # The corners are read by a gather over each (sample, channel) plane: the backward's one-hot spans one
    # plane a point (2 x 4 x 30 points x 64), not every element for every point (240 x 512, by indexing).
    import re
    sizes = [math.prod(int(d) for d in m.group(1).split("x")[:-1])
             for m in re.finditer(r"tensor<((?:\d+x)+)[a-z]+\d*>", step.mlir_path.read_text())]
    assert max(sizes) <= 2 * 4 * 30 * 64


class _MaskLikeEmbeddings(nn.Module):
    """UDOP's patch mask: ``full_like(embeddings[:, :, 0], True)`` (the embeddings' shape only), entries set
    False from an input, then a boolean index whose count that input decides."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Linear(4, 8)
        self.fc = nn.Linear(8, 3)

    def forward(self, x, cols):  # x: [batch, tokens, 4], cols: [batch] in [0, tokens)
        h = self.emb(x)
        mask = torch.full_like(h[:, :, 0], True).bool()
        mask[torch.arange(h.shape[0]), cols] = False
        return self.fc(torch.stack([h[i][mask[i]].mean(0) for i in range(h.shape[0])]))


def test_value_read_from_a_tensor_made_like_a_parameters_one(tmp_path, amp_tools):
    """A ``*_like`` factory reads its argument's shape, not its values: a count decided by the inputs alone
    through such a tensor is specialized with the warning, not refused as decided by the parameters (UDOP
    was refused)."""
    _torch_mlir()
    from amp_mlir.torch._torch_mlir import SpecializationWarning
    torch.manual_seed(0)
    inputs = (torch.randn(2, 6, 4), torch.tensor([1, 4]), torch.tensor([0, 2]))
    with pytest.warns(SpecializationWarning, match=r"nonzero count 5, from the example inputs x1$"):
        _trains_as_pytorch(_MaskLikeEmbeddings(), inputs, tmp_path, amp_tools, optimizer="adamw", lr=1e-2)


def test_linear_1d_resampling_trains_as_pytorch(tmp_path, amp_tools):
    """``F.interpolate(mode="linear")`` of a learned 1-D table (SAM's relative positions), whose gradient
    torch-mlir leaves: fp32 trains as PyTorch."""
    _torch_mlir()
    torch.manual_seed(0)

    class Table(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(8, 6)
            self.out = nn.Linear(10 + 4, 3)

        def forward(self, x):
            h = self.fc(x)[:, None, :]
            up = F.interpolate(h, size=10, mode="linear")[:, 0]
            down = F.interpolate(h, size=4, mode="linear", align_corners=True)[:, 0]
            return self.out(torch.cat([up, down], -1))

    _trains_as_pytorch(Table(), (torch.randn(2, 8), torch.tensor([0, 2])), tmp_path, amp_tools, optimizer="adamw",
                       lr=1e-2)


def test_ctc_loss_matches_pytorch():
    """The CTC loss as the capture computes it (the alpha recursion in log space) equals ATen's in float64,
    gradients included: reductions, repeated labels, varied input and target lengths (an empty target),
    concatenated targets, an impossible alignment (inf; 0 with zero_infinity), one sequence."""
    from amp_mlir.torch._decompositions import ctc_loss
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(12, 3, 6, dtype=torch.float64, generator=gen, requires_grad=True)
    lp = x.log_softmax(-1)
    targets = torch.randint(1, 6, (3, 4), generator=gen)
    targets[0, 1] = targets[0, 0]
    for reduction in ("mean", "sum", "none"):
        args = (lp, targets, torch.tensor([12, 9, 5]), torch.tensor([4, 2, 0]))
        want, got = F.ctc_loss(*args, reduction=reduction), ctc_loss(*args, reduction=reduction)
        torch.testing.assert_close(got, want, rtol=1e-12, atol=0)
        (gw,) = torch.autograd.grad(want.sum(), x, retain_graph=True)
        (gg,) = torch.autograd.grad(got.sum(), x, retain_graph=True)
        torch.testing.assert_close(gg, gw, rtol=0, atol=1e-13)
    flat = torch.randint(1, 6, (7,), generator=gen)
    torch.testing.assert_close(ctc_loss(lp, flat, [12, 9, 5], [3, 2, 2]), F.ctc_loss(lp, flat, [12, 9, 5], [3, 2, 2]))
    short = (lp, targets, [2, 12, 12], [4, 4, 4])
    assert torch.equal(torch.isinf(ctc_loss(*short, reduction="none")), torch.tensor([True, False, False]))
    torch.testing.assert_close(ctc_loss(*short, zero_infinity=True), F.ctc_loss(*short, zero_infinity=True))
    torch.testing.assert_close(ctc_loss(lp[:, 0], targets[0], (12,), (4,)), F.ctc_loss(lp[:, 0], targets[0], (12,), (4,)))


class _CTCHead(nn.Module):
    """A speech model's CTC head: 1-D convolutions over frames, per-frame log-probabilities [T, N, C]."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 16, 3, padding=1)
        self.out = nn.Linear(16, 6)

    def forward(self, x):  # x: [N, 4, T]
        return self.out(torch.relu(self.conv(x)).transpose(1, 2)).log_softmax(-1).transpose(0, 1)


def _ctc(log_probs, targets):
    return F.ctc_loss(log_probs, targets, torch.tensor([10, 7]), torch.tensor([3, 2]))


def test_ctc_loss_trains_as_pytorch(tmp_path, amp_tools):
    """``F.ctc_loss`` (torch-mlir lowers neither it nor its backward; transformers' Parakeet CTC stopped on
    it) as the recursion above, its ops pinned f32 (PyTorch's autocast keeps losses in float32): fp32 trains
    as PyTorch, and f16 stays within 1e-3 of it."""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.randn(2, 4, 10), torch.tensor([[1, 3, 3], [2, 5, 0]]))
    step, fp32 = _trains_as_pytorch(_CTCHead(), inputs, tmp_path, amp_tools, loss=_ctc, optimizer="adamw", lr=1e-2)
    assert "tosa.reduce_max" in step.mlir_path.read_text()  # logsumexp, not the op
    assert 'loc("torch.autocast(enabled=False)"' in step.mlir_path.read_text()
    np.testing.assert_allclose(_losses(amp_tools, step, 3, "f16"), fp32, rtol=1e-3)


def test_pooling_window_wider_than_the_map_trains_as_pytorch(tmp_path, amp_tools):
    """transformers' EfficientNet pools its last 2 x 2 map with ``AvgPool2d(hidden_dim, ceil_mode=True)``
    (1280): torch-mlir's ``tosa.avg_pool2d`` failed its verifier and the export's time grew with the window's
    area; as window matrices, fp32 trains as PyTorch."""
    _torch_mlir()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 1), nn.AvgPool2d(1280, ceil_mode=True), nn.Flatten(), nn.Linear(4, 3))
    _trains_as_pytorch(model, (torch.randn(2, 3, 2, 2), torch.tensor([0, 2])), tmp_path, amp_tools,
                       optimizer="adamw", lr=1e-2)


class _IntegerMasks(nn.Module):
    """Integer tensors compared with non-integral floats, as TimesFM-2.5's padding mask is
    (``zeros_like(x, dtype=long) >= 0.5``): constant ones (which crashed torch-mlir's folder) and ones made
    from the input, with every comparison."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        pad = torch.zeros_like(x, dtype=torch.long)  # TimesFM's default padding
        const = pad + torch.arange(6)  # 0..5, constant
        made = (x * 3).long()  # from the input
        masks = [pad >= 0.5, pad < 0.5, pad == 0.5,
                 const >= 2.5, const < 1.5, const > 3.5, const <= 0.5, const == 2.5, const != 2.5,
                 made >= 0.5, made < -0.5, made > 1.5, made <= -1.5, made == 0.5, made != 0.5]
        return self.fc(sum(m.float() * (i + 1) for i, m in enumerate(masks)) * x)


def test_integer_tensor_compared_with_a_float(tmp_path, amp_tools):
    """Each comparison of an integer tensor with a non-integral float gives PyTorch's answer: the step trains
    as PyTorch (a constant integer tensor's crashed the export with a segmentation fault)."""
    _torch_mlir()
    torch.manual_seed(0)
    _trains_as_pytorch(_IntegerMasks(), (torch.randn(4, 6), torch.tensor([0, 2, 1, 0])), tmp_path, amp_tools,
                       optimizer="adamw", lr=1e-2)


@pytest.mark.parametrize("shape, weight, options", [
    ((2, 8, 5, 7, 6), (8, 1, 3, 3, 3), dict(stride=(1, 2, 2), padding=1, groups=8)),  # MViT's pooling
    ((1, 6, 7, 5, 5), (9, 2, 2, 3, 1), dict(stride=2, padding=(1, 0, 0), dilation=(2, 1, 1), groups=3)),
    ((6, 4, 6, 6), (6, 2, 3, 1, 3), dict(stride=(2, 1, 1), padding=(0, 1, 1), groups=3)),  # one clip
])
def test_grouped_conv3d_matches_pytorch(shape, weight, options):
    """A grouped 3-D convolution as the capture computes it (per depth tap, the frames it reads folded into
    the batch, a 2-D convolution each) equals ATen's in float64, gradients included."""
    from amp_mlir.torch._decompositions import grouped_conv3d
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(*shape, dtype=torch.float64, generator=gen, requires_grad=True)
    w = torch.randn(*weight, dtype=torch.float64, generator=gen, requires_grad=True)
    b = torch.randn(weight[0], dtype=torch.float64, generator=gen, requires_grad=True)
    want, got = F.conv3d(x, w, b, **options), grouped_conv3d(x, w, b, **options)
    torch.testing.assert_close(got, want, rtol=0, atol=1e-13)
    for a, c in zip(torch.autograd.grad(got.sum(), (x, w, b)), torch.autograd.grad(want.sum(), (x, w, b))):
        torch.testing.assert_close(a, c, rtol=0, atol=1e-13)
    assert grouped_conv3d(x, w, b, **{**options, "groups": 1}) is NotImplemented  # torch-mlir's


def test_grouped_conv3d_trains_as_pytorch(tmp_path, amp_tools):
    """A video network's depthwise and grouped 3-D convolutions (torch-mlir lowers neither; torchvision's MViT
    stopped on them): fp32 trains as PyTorch."""
    _torch_mlir()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv3d(3, 8, 1), nn.Conv3d(8, 8, 3, stride=(1, 2, 2), padding=1, groups=8),
                          nn.GELU(), nn.Conv3d(8, 4, (2, 3, 3), padding=(0, 1, 1), groups=2), nn.Flatten(),
                          nn.Linear(4 * 1 * 4 * 4, 3))
    _trains_as_pytorch(model, (torch.randn(2, 3, 2, 8, 8), torch.tensor([0, 2])), tmp_path, amp_tools,
                       optimizer="adamw", lr=1e-2)


def test_refused_read_names_a_torchvision_line(tmp_path):
    """A value read inside torchvision is named at torchvision's line: torch's own files are skipped by their
    directory, whose name also prefixes torchvision's (SSDlite's reads were all named at the model's caller)."""
    _torch_mlir()
    torchvision = pytest.importorskip("torchvision", reason="torchvision is not installed")

    class Boxes(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            boxes = self.fc(x).abs().cumsum(-1)
            keep = torchvision.ops.remove_small_boxes(boxes, 0.5)  # a count the parameters decide
            return boxes[keep].sum(0, keepdim=True)[:, :3].expand(2, 3)

    torch.manual_seed(0)
    with pytest.raises(UnsupportedOpError, match=r"\n  boxes\.py:\d+ in remove_small_boxes \("):
        export_train_step(Boxes(), F.cross_entropy, (torch.randn(3, 4), torch.tensor([0, 1])), optimizer="sgd",
                          lr=0.1, out_dir=tmp_path)


def _poisoned_losses(tools, step, steps, poison):
    """amp-train's f16 rows over ``steps`` steps with +inf in the batch at step ``poison``."""
    out = _run([tools["amp_train"], str(step.mlir_path), "--inputs", str(step.out_dir), "--steps", str(steps),
                "--precision=f16", "--no-jit-cache", "--poison-step", str(poison)])
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def test_poison_step_with_the_learning_rate_an_argument(tmp_path, amp_tools):
    """``--poison-step`` puts its inf into the batch, not into the learning rate (``lr_input``: a rank-0 float
    argument before the batch, where the inf made the update NaN and the step was not skipped); a step whose
    batch is token ids gets it in its backward seed. Either way the step is skipped, the next one trains on."""
    _torch_mlir()
    torch.manual_seed(0)
    cases = [(nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4)),
              (torch.randn(8, 16), torch.randint(0, 4, (8,)))),
             (nn.Sequential(nn.Embedding(10, 8), nn.Flatten(), nn.Linear(24, 4)),
              (torch.randint(0, 10, (8, 3)), torch.randint(0, 4, (8,))))]
    for n, (model, inputs) in enumerate(cases):
        step = export_train_step(model, F.cross_entropy, inputs, optimizer=torch.optim.AdamW(model.parameters()),
                                 lr_input=True, out_dir=tmp_path / str(n))
        rows = _poisoned_losses(amp_tools, step, 3, 1)
        assert [r["skipped"] for r in rows] == [False, True, False], rows
        assert rows[2]["loss"] is not None and math.isfinite(rows[2]["loss"])


@pytest.mark.parametrize("optimizer,options,rtol", [
    ("sgd", {"lr": 0.5, "max_grad_norm": 0.1}, 1e-5),
    # Adam's update divides by the gradients' root mean square: fp32 rounding is amplified at lr 0.05 (2.5e-5;
    # from PyTorch with a clip of 100 that never acts: 1.4e-5).
    ("adamw", {"lr": 0.05, "weight_decay": 0.01, "max_grad_norm": 0.05, "grad_norm_type": math.inf}, 1e-4)])
def test_gradient_clipping(optimizer, options, rtol, tmp_path, amp_tools):
    """``max_grad_norm`` clips the gradients as ``clip_grad_norm_`` does (2-norm and largest magnitude; the
    clip is active: PyTorch's losses without it differ by over 10%), fp32 as PyTorch. In f16
    the norm reads the unscaled gradients, as after ``GradScaler.unscale_`` (read scaled by 65536, the clip
    would shrink every update 65536 times): f16 within 1e-3 of fp32; a poisoned step is skipped and the next
    one computes the loss of the step before it again (parameters and moments unchanged)."""
    _torch_mlir()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 4))
    inputs = (torch.randn(8, 16), torch.randint(0, 4, (8,)))
    step, fp32 = _trains_as_pytorch(model, inputs, tmp_path, amp_tools, rtol=rtol, steps=5, optimizer=optimizer,
                                    **options)
    unclipped = torch_reference_losses(model, F.cross_entropy, inputs, steps=5, optimizer=optimizer,
                                       **{k: v for k, v in options.items() if k not in ("max_grad_norm",
                                                                                        "grad_norm_type")})
    assert np.max(np.abs(np.array(unclipped) / fp32 - 1)) > 0.1
    np.testing.assert_allclose(_losses(amp_tools, step, 5, "f16"), fp32, rtol=1e-3)
    rows = _poisoned_losses(amp_tools, step, 3, 1)
    assert [r["skipped"] for r in rows] == [False, True, False]
    assert rows[2]["loss"] == _losses(amp_tools, step, 2, "f16")[1]


def test_bad_clip_and_learning_rate_options(tmp_path):
    """A clip that means nothing, or a clip or learning-rate argument the builtin front end cannot build, is
    refused before capturing."""
    _torch_mlir()
    model, inputs = nn.Linear(4, 2), (torch.randn(3, 4), torch.tensor([0, 1, 1]))
    for options, message in [({"max_grad_norm": 0.0}, "positive finite"),
                             ({"max_grad_norm": math.inf}, "positive finite"),
                             ({"max_grad_norm": 1.0, "grad_norm_type": 0}, "grad_norm_type"),
                             ({"max_grad_norm": 1.0, "frontend": "builtin"}, "frontend=.torch-mlir."),
                             ({"lr_input": True, "frontend": "builtin"}, "lr_input needs")]:
        with pytest.raises(ValueError, match=message):
            export_train_step(model, F.cross_entropy, inputs, out_dir=tmp_path, **options)


@pytest.mark.parametrize("optimizer", ["sgd", "adamw"])
def test_learning_rate_argument_follows_a_schedule(optimizer, tmp_path, amp_tools, amp_mlir_native):
    """``lr_input=True``: the learning rate is a ``tensor<f32>`` argument (kind ``lr``, initially ``lr``) that
    the caller sets at every step. Set from a warm-up-then-cosine schedule through ``Trainer.set_argument``,
    the step trains as PyTorch with the same schedule (``LambdaLR``, gradients clipped) does: fp32 within 1e-4
    (Adam's rounding, see test_gradient_clipping), f16 within 2e-3. amp-train, which sets nothing, trains at
    the constant initial ``lr``."""
    _torch_mlir()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 4))
    inputs = (torch.randn(8, 16), torch.randint(0, 4, (8,)))
    options = dict(optimizer=optimizer, lr=0.05, weight_decay=0.01, max_grad_norm=0.5)
    step = export_train_step(model, F.cross_entropy, inputs, lr_input=True, out_dir=tmp_path, **options)
    (lr_arg,) = [a for a in step.manifest["arguments"] if a["kind"] == "lr"]
    assert lr_arg["shape"] == [] and lr_arg["amp_init"] == "#amp.init<fill(0.05)>"
    assert f"{lr_arg['index']}: learning rate (lr)" in step.text
    np.testing.assert_allclose(_losses(amp_tools, step, 3),
                               torch_reference_losses(model, F.cross_entropy, inputs, steps=3, **options), rtol=1e-4)

    def schedule(i):
        return 0.05 * min(1.0, (i + 1) / 3) * 0.5 * (1 + math.cos(math.pi * i / 6))

    reference = copy.deepcopy(model)
    opt = (torch.optim.SGD(reference.parameters(), lr=0.05, weight_decay=0.01) if optimizer == "sgd" else
           torch.optim.AdamW(reference.parameters(), lr=0.05, weight_decay=0.01, foreach=False))
    scheduler = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: schedule(i) / 0.05)
    want = []
    for _ in range(6):
        opt.zero_grad()
        loss = F.cross_entropy(reference(inputs[0]), inputs[1])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(reference.parameters(), 0.5, foreach=False)
        opt.step()
        scheduler.step()
        want.append(float(loss))
    for precision, rtol in (("fp32", 1e-4), ("f16", 2e-3)):
        trainer = amp_mlir_native.Trainer(step.text, precision, source_name=str(step.mlir_path))
        trainer.reset(step.out_dir)
        got = []
        for i in range(6):
            trainer.set_argument(lr_arg["index"], np.array(schedule(i), np.float32))
            got.append(trainer.step()["loss"])
        np.testing.assert_allclose(got, want, rtol=rtol, err_msg=precision)


def test_gradient_accumulation(tmp_path, amp_tools):
    """``accumulation_steps=4``: the batch of 8 is 4 micro-batches, each loss divided by 4 and backpropagated
    in turn, one update (a gradient-accumulation loop). fp32 within 1e-5 of PyTorch's loop over 3 steps, and
    batch norm's running mean after them equal to PyTorch's (updated once per micro-batch: 12 times); the
    whole-batch step parts from it (statistics per micro-batch). f16 within 1e-3 of fp32. A batch that does
    not split evenly is refused."""
    _torch_mlir()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(8, 5))
    inputs = (torch.randn(8, 3, 8, 8), torch.randint(0, 5, (8,)))
    options = dict(optimizer="sgd", lr=0.1, momentum=0.9)
    step = export_train_step(model, F.cross_entropy, inputs, accumulation_steps=4, out_dir=tmp_path / "step",
                             **options)
    assert step.manifest["optimizer"]["accumulation_steps"] == 4
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=3, accumulation_steps=4, **options)
    fp32 = _losses(amp_tools, step, 3)
    np.testing.assert_allclose(fp32, want, rtol=1e-5)
    whole = torch_reference_losses(model, F.cross_entropy, inputs, steps=3, **options)
    assert np.max(np.abs(np.array(whole) / want - 1)) > 1e-3
    reference = copy.deepcopy(model)
    opt = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    for _ in range(3):
        torch_train_step(reference, F.cross_entropy, opt, inputs[:-1], inputs[-1], accumulation_steps=4)
    dumped = tmp_path / "dumped"
    _run([amp_tools["amp_train"], str(step.mlir_path), "--inputs", str(step.out_dir), "--steps", "3",
          "--precision=fp32", "--dump", str(dumped)])
    (mean,) = [a["index"] for a in step.manifest["arguments"] if a["name"] == "buffer 1.running_mean"]
    np.testing.assert_allclose(np.load(dumped / f"arg{mean}.npy"), reference[1].running_mean.numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(_losses(amp_tools, step, 3, "f16"), fp32, rtol=1e-3)
    for k, message in [(3, r"example input 0 has shape \[8, 3, 8, 8\]"), (0, "positive int")]:
        with pytest.raises(ValueError, match=message):
            export_train_step(model, F.cross_entropy, inputs, accumulation_steps=k, out_dir=tmp_path / "bad",
                              **options)


def _grouped_mlp():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 4))
    inputs = (torch.randn(8, 16), torch.randint(0, 4, (8,)))
    decay = [p for p in model.parameters() if p.ndim == 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    return model, inputs, decay, no_decay


def _step_on_another_batch(optimizer, model, inputs, steps):
    """``steps`` eager PyTorch steps of ``optimizer`` on another batch (``-3 x``), as a resumed run leaves it."""
    for _ in range(steps):
        optimizer.zero_grad()
        F.cross_entropy(model(-3 * inputs[0]), inputs[1]).backward()
        optimizer.step()
    optimizer.zero_grad()


def _fresh(groups):
    """Copies of param group dicts (an optimizer writes its defaults into the dicts it is given)."""
    return [dict(g) for g in groups]


def _negated_cross_entropy(output, target):
    return -F.cross_entropy(output, target)


@pytest.mark.parametrize("case", ["adamw_groups_amsgrad", "sgd_nesterov_groups", "adam_l2_maximize"])
def test_torch_optim_param_groups_train_as_pytorch(case, tmp_path, amp_tools):
    """A torch.optim.SGD / Adam / AdamW instance is the optimizer: each param group trains with its own options
    (transformers' and timm's usual groups: no weight decay on biases and norms, another learning rate), with
    Nesterov momentum, amsgrad and maximize as torch.optim computes them. fp32 within 1e-4 of PyTorch over 5
    steps (Adam's rounding at lr 0.05, see test_gradient_clipping), and the groups matter: the same optimizer
    over one group, or without amsgrad / Nesterov, parts from it by more than 1%. f16 within 2e-3 of fp32.
    With ``lr_input`` every group's learning rate is an argument of its own."""
    _torch_mlir()
    model, inputs, decay, no_decay = _grouped_mlp()
    loss = F.cross_entropy
    # Each case also names optimizers that differ in one thing (the groups, amsgrad, Nesterov): PyTorch's
    # losses with those part from the case's by more than 1%, so each option is seen to act.
    if case == "adamw_groups_amsgrad":  # amsgrad acts where the second moment falls: b2 = 0.6 in group 0
        make = lambda groups, amsgrad=True: torch.optim.AdamW(_fresh(groups), lr=0.05, amsgrad=amsgrad)  # noqa: E731
        groups = [{"params": decay, "weight_decay": 0.5, "betas": (0.8, 0.6)},
                  {"params": no_decay, "weight_decay": 0.0, "lr": 0.01}]
        others = [make([{"params": decay + no_decay, "weight_decay": 0.5, "betas": (0.8, 0.6)}]),
                  make(groups, amsgrad=False)]
    elif case == "sgd_nesterov_groups":
        make = lambda groups, nesterov=True: torch.optim.SGD(_fresh(groups), lr=0.1, momentum=0.9,  # noqa: E731
                                                             nesterov=nesterov, weight_decay=1e-2)
        groups = [{"params": decay}, {"params": no_decay, "lr": 0.3, "momentum": 0.5}]
        others = [make([{"params": decay + no_decay}]), make(groups, nesterov=False)]
    else:  # minimising cross entropy as maximising its negation, with L2 weight decay on the weights only
        loss = _negated_cross_entropy
        make = lambda groups: torch.optim.Adam(_fresh(groups), lr=0.05, maximize=True)  # noqa: E731
        groups = [{"params": decay, "weight_decay": 0.1}, {"params": no_decay}]
        others = [make([{"params": decay + no_decay, "weight_decay": 0.1}])]
    optimizer = make(groups)
    step = export_train_step(model, loss, inputs, optimizer=optimizer, lr_input=True, out_dir=tmp_path)
    lrs = [a for a in step.manifest["arguments"] if a["kind"] == "lr"]
    assert [a["name"] for a in lrs] == ["learning rate of param group 0", "learning rate of param group 1"]
    assert [a["amp_init"] for a in lrs] == [f"#amp.init<fill({g['lr']})>" for g in optimizer.param_groups]
    described = step.manifest["optimizer"]["groups"]
    assert [len(g["params"]) for g in described] == [2, 4] and described[1]["params"][0] == "0.bias"
    assert "2 param groups" in step.text.splitlines()[1]
    want = torch_reference_losses(model, loss, inputs, steps=5, optimizer=optimizer)
    fp32 = _losses(amp_tools, step, 5)
    np.testing.assert_allclose(fp32, want, rtol=1e-4)
    for other in others:
        assert np.max(np.abs(np.array(torch_reference_losses(model, loss, inputs, steps=5, optimizer=other))
                             / want - 1)) > 0.01, other
    np.testing.assert_allclose(_losses(amp_tools, step, 5, "f16"), fp32, rtol=2e-3)


_MORE_OPTIMIZERS = {
    "rmsprop_centered_momentum": lambda ps: torch.optim.RMSprop(ps, lr=0.01, alpha=0.9, centered=True, momentum=0.5,
                                                                weight_decay=0.01),
    "rmsprop": lambda ps: torch.optim.RMSprop(ps, lr=0.01),
    "adagrad": lambda ps: torch.optim.Adagrad(ps, lr=0.1, lr_decay=0.1, initial_accumulator_value=0.5,
                                              weight_decay=0.01),
    "adamax": lambda ps: torch.optim.Adamax(ps, lr=0.02, weight_decay=0.01),
    # one momentum product per group: the groups' momentum decays differ
    "nadam_groups": lambda ps: torch.optim.NAdam([{"params": ps[:2]}, {"params": ps[2:], "momentum_decay": 0.1,
                                                                         "lr": 0.01}], lr=0.02, weight_decay=0.01),
    "nadam_decoupled": lambda ps: torch.optim.NAdam(ps, lr=0.02, weight_decay=0.1, decoupled_weight_decay=True),
    # b2 = 0.99: steps 1-5 unrectified, 6-8 rectified (rho_t passes 5)
    "radam": lambda ps: torch.optim.RAdam(ps, lr=0.02, betas=(0.9, 0.99), weight_decay=0.01),
    "radam_decoupled": lambda ps: torch.optim.RAdam(ps, lr=0.02, betas=(0.9, 0.99), weight_decay=0.1,
                                                    decoupled_weight_decay=True),
    # b2 = 0.9999: rho_t = 4.9996 at step 5 and 5.9994 at step 6, a difference of two numbers near 19999 (the
    # scalar factors in float64, their constants too: in float32 the rectification started at step 5)
    "radam_b2_9999": lambda ps: torch.optim.RAdam(ps, lr=0.01, betas=(0.9, 0.9999))}


@pytest.mark.parametrize("case", sorted(_MORE_OPTIMIZERS))
def test_more_torch_optimizers_train_as_pytorch(case, tmp_path, amp_tools):
    """torch.optim's RMSprop (centered, momentum), Adagrad (lr decay, initial accumulator), Adamax, NAdam and
    RAdam (L2 and decoupled weight decay) train as PyTorch's: fp32 within 1e-4 over 8 steps (measured
    2.3e-7..1.6e-5: PyTorch's scalar factors are double, ours float32), f16 within 2e-3 of fp32. Adagrad's
    accumulator and NAdam's momentum product start at their constant (a fill hint, not zeros)."""
    _torch_mlir()
    model, inputs, _, _ = _grouped_mlp()
    optimizer = _MORE_OPTIMIZERS[case](list(model.parameters()))
    step = export_train_step(model, F.cross_entropy, inputs, optimizer=optimizer, out_dir=tmp_path)
    kinds = {a["kind"]: a for a in step.manifest["arguments"]}
    if case == "adagrad":
        assert kinds["sum"]["amp_init"] == "#amp.init<fill(0.5)>"
    if case.startswith("nadam"):
        assert kinds["mu_product"]["amp_init"] == "#amp.init<fill(1.0)>"
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=8, optimizer=optimizer)
    fp32 = _losses(amp_tools, step, 8)
    np.testing.assert_allclose(fp32, want, rtol=1e-4)
    np.testing.assert_allclose(_losses(amp_tools, step, 8, "f16"), fp32, rtol=2e-3)


def _timm_optimizers():
    """timm's own optimizers (what ``timm.optim.create_optimizer_v2`` builds for lion / lamb / lars / rmsproptf /
    nadamw / sgdw / adamw-legacy and their cautious / corrected / clipped variants), each with the options
    that change its update: ``make(params, **changes)``."""
    optim = pytest.importorskip("timm.optim", reason="timm is not installed (make py-models)")

    def halved(optimizer):  # a schedule has halved the lr: corrected weight decay (lr^2 / max_lr) acts
        for group in optimizer.param_groups:
            group["lr"] /= 2
        return optimizer

    def case(cls, after=lambda o: o, **options):
        return lambda ps, **changes: after(cls(ps, **{**options, **changes}))
    return {
        "lion": case(optim.Lion, lr=1e-3, weight_decay=0.1),
        "lion_caution_corrected": case(optim.Lion, halved, lr=1e-2, weight_decay=0.5, caution=True,
                                       corrected_weight_decay=True),
        # eps 1e-2: Lamb's update is nearly invariant to the gradients' scale, so the global norm clipping (to
        # 0.05; the default 1.0 does not act here) acts through eps only
        "lamb_decoupled_caution": case(optim.Lamb, lr=0.01, decoupled_decay=True, weight_decay=0.1, caution=True,
                                       max_grad_norm=0.05, eps=1e-2),
        # eps 0.1: updates smaller than the weights, so the trust ratio passes 1 and is clipped
        "lamb_trust_clip": case(optim.Lamb, lr=0.01, max_grad_norm=None, trust_clip=True, eps=0.1),
        "lamb_adapt_no_averaging": case(optim.Lamb, lr=0.01, weight_decay=0.0, always_adapt=True,
                                        grad_averaging=False, bias_correction=False),
        "lars_nesterov_clip": case(optim.Lars, lr=0.5, momentum=0.9, weight_decay=1e-4, nesterov=True,
                                   trust_clip=True),
        "rmsproptf": case(optim.RMSpropTF, lr=0.01, momentum=0.9, weight_decay=1e-4),
        "rmsproptf_centered": case(optim.RMSpropTF, halved, lr=0.02, momentum=0.9, weight_decay=0.1, centered=True,
                                   decoupled_decay=True, caution=True, lr_in_momentum=False),
        "nadamw_caution_clip": case(optim.NAdamW, lr=0.02, weight_decay=0.1, caution=True, clipping_threshold=0.5,
                                    corrected_weight_decay=True),
        "sgdw_caution": case(optim.SGDW, lr=0.1, momentum=0.9, weight_decay=0.1, caution=True),
        "adamw_legacy_clip": case(optim.AdamWLegacy, lr=0.02, weight_decay=0.1, amsgrad=True,
                                  clipping_threshold=0.3),
        # Adan: three moments (the gradient, its difference to the last one, the squared Nesterov estimate), the
        # step count per param group
        "adan_noprox_caution": case(optim.Adan, lr=0.01, weight_decay=0.1, no_prox=True, caution=True),
        # Adopt: its first step only sets the second moment (the loss stays); the normalized gradient clipped
        "adopt_decoupled": case(optim.Adopt, lr=0.01, weight_decay=0.1, decoupled=True, caution=True),
        # AdaBelief: rectified (b2 0.99: from step 7), SGD with momentum before that
        "adabelief": case(optim.AdaBelief, lr=0.01, betas=(0.9, 0.99), weight_decay=0.01),
        "adabelief_amsgrad_l2": case(optim.AdaBelief, lr=0.01, rectify=False, amsgrad=True, weight_decay=0.1,
                                     decoupled_decay=False),
        # AdamP / SGDP: the update's radial part removed where a weight looks scale-invariant (delta 1.0: some
        # do here), its decay scaled by wd_ratio
        "adamp_nesterov_caution": case(optim.AdamP, lr=0.01, weight_decay=0.1, nesterov=True, caution=True, delta=1.0),
        "sgdp_dampening_caution": case(optim.SGDP, lr=0.1, momentum=0.9, weight_decay=0.01, nesterov=True,
                                       caution=True, delta=1.0, dampening=0.1),
        # MADGRAD: dual averaging from the starting point x0 (state: the parameter itself at the start)
        "madgrad": case(optim.MADGRAD, lr=0.01, weight_decay=0.01),
        "madgrad_no_momentum_decoupled": case(optim.MADGRAD, lr=0.01, momentum=0.0, weight_decay=0.1,
                                              decoupled_decay=True),
        # NvNovoGrad: one second moment per tensor, starting at the first squared norm
        "novograd_averaging_amsgrad": case(optim.NvNovoGrad, lr=0.01, weight_decay=0.1, grad_averaging=True,
                                           amsgrad=True, decoupled_decay=True),
        # NAdamLegacy: a warming momentum schedule (a Python float in timm's state), L2 decay
        "nadamlegacy": case(optim.NAdamLegacy, lr=0.01, weight_decay=0.01, schedule_decay=1.0),
        # RAdamLegacy: b2 0.99, rectified from step 6, SGD with momentum before
        "radamlegacy": case(optim.RAdamLegacy, lr=0.01, betas=(0.9, 0.99), weight_decay=0.1),
        # LaProp: the normalized gradient averaged, bias corrections from averages of the lr and of 1
        "laprop_caution_corrected": case(optim.LaProp, halved, lr=0.01, weight_decay=0.5, caution=True,
                                         corrected_weight_decay=True),
        # Mars: the gradient corrected by its change since the last step (the last gradient is state), normalized;
        # AdamW's moments of it for the weights, plain AdamW for the 1-d parameters (their own betas and lr)
        "mars": case(optim.Mars, lr=0.01, weight_decay=0.1, gamma=0.5),
        # AdafactorBigVision: the second moment factored over the two largest dims (min 8 here), a bfloat16
        # momentum (each value rounded), RMS clipping; its beta2 schedule from the step count
        "adafactorbv": case(optim.AdafactorBigVision, lr=0.01, min_dim_size_to_factor=8, weight_decay=0.1,
                             clipping_threshold=1.0, decay_offset=2),
        "adafactorbv_float32_caution": case(optim.AdafactorBigVision, halved, lr=0.1, min_dim_size_to_factor=8,
                                             momentum_dtype=torch.float32, caution=True, weight_decay=0.5,
                                             unscaled_wd=True, corrected_weight_decay=True),
        # timm's Muon: the weights orthogonalized (quintic coefficients, Kimi's lr scale), the biases on its AdamW
        # fallback; AdaMuon; a convolution batched per position, Nesterov (the fallback NAdamW), polar express
        "timm-muon": case(optim.Muon, lr=0.02, weight_decay=0.1, fallback_lr_scale=0.5),
        "timm-muon_adamuon": case(optim.Muon, lr=0.02, weight_decay=0.1, algo="adamuon"),
        "timm-muon_adamuon_bias_corrected": case(optim.Muon, lr=0.02, algo="adamuon", adjust_lr_fn="rms_to_rms"),
        "timm-muon_nesterov_polar": case(optim.Muon, lr=0.02, nesterov=True, ns_coefficients="polar_express",
                                         ns_steps=6, safety_factor=1.01, adjust_lr_fn="original", scale_eps=True),
        "mars_lion_caution": case(optim.Mars, lr=0.01, weight_decay=0.1, mars_type="lion", lr_1d_factor=0.5,
                                  betas_1d=(0.5, 0.9), caution=True)}


# The option each case is there for, and the case without it: timm's losses part by more than 1%.
_TIMM_ABLATIONS = {
    "lion_caution_corrected": [dict(caution=False), dict(corrected_weight_decay=False)],
    "lamb_decoupled_caution": [dict(max_grad_norm=None)],
    "lamb_trust_clip": [dict(trust_clip=False)],
    "lamb_adapt_no_averaging": [dict(always_adapt=False), dict(grad_averaging=True)],
    "lars_nesterov_clip": [dict(trust_clip=False), dict(nesterov=False)],
    "rmsproptf_centered": [dict(caution=False)],
    "nadamw_caution_clip": [dict(clipping_threshold=None), dict(caution=False)],
    "sgdw_caution": [dict(caution=False)],
    "adamw_legacy_clip": [dict(clipping_threshold=None)],
    "adan_noprox_caution": [dict(caution=False)],
    "adopt_decoupled": [dict(clip_exp=None), dict(decoupled=False), dict(caution=False)],
    "adabelief": [dict(rectify=False), dict(degenerated_to_sgd=False)],
    "adabelief_amsgrad_l2": [dict(decoupled_decay=True)],
    "adamp_nesterov_caution": [dict(delta=0.0), dict(caution=False), dict(nesterov=False)],
    "sgdp_dampening_caution": [dict(delta=0.0), dict(caution=False), dict(dampening=0.0)],
    "madgrad": [dict(momentum=0.0)],
    "novograd_averaging_amsgrad": [dict(grad_averaging=False)],
    "nadamlegacy": [dict(schedule_decay=4e-3)],
    "radamlegacy": [dict(betas=(0.9, 0.999))],
    "laprop_caution_corrected": [dict(caution=False), dict(corrected_weight_decay=False)],
    "mars": [dict(gamma=0.0), dict(optimize_1d=True)],
    "timm-muon": [dict(fallback_lr_scale=1.0), dict(adjust_lr_fn="original")],
    "timm-muon_adamuon": [dict(algo="muon")],
    "timm-muon_nesterov_polar": [dict(nesterov=False), dict(ns_coefficients="quintic")],
    "adafactorbv": [dict(momentum=None), dict(clipping_threshold=None), dict(min_dim_size_to_factor=64)],
    "adafactorbv_float32_caution": [dict(caution=False), dict(unscaled_wd=False)],
    "mars_lion_caution": [dict(caution=False), dict(lr_1d_factor=1.0)]}


@pytest.mark.parametrize("case", ["lion", "lion_caution_corrected", "lamb_decoupled_caution", "lamb_trust_clip",
                                  "lamb_adapt_no_averaging", "lars_nesterov_clip", "rmsproptf",
                                  "rmsproptf_centered", "nadamw_caution_clip", "sgdw_caution", "adamw_legacy_clip",
                                  "adan_noprox_caution", "adopt_decoupled", "adabelief", "adabelief_amsgrad_l2",
                                  "adamp_nesterov_caution", "sgdp_dampening_caution", "madgrad",
                                  "madgrad_no_momentum_decoupled", "novograd_averaging_amsgrad", "nadamlegacy",
                                  "radamlegacy", "laprop_caution_corrected", "mars", "mars_lion_caution",
                                  "adafactorbv", "adafactorbv_float32_caution"])
def test_timm_optimizers_train_as_timm(case, tmp_path, amp_tools):
    """timm's Lion, Lamb (its global gradient-norm clipping, trust ratio, decoupled decay), Lars (LARC's trust
    clip, Nesterov), RMSpropTF (eps inside the root, lr inside the momentum, ones as the first square average),
    NAdamW, SGDW, AdamWLegacy, Adan, Adopt, AdaBelief (rectified, amsgrad), AdamP and SGDP (the projection of
    scale-invariant weights), MADGRAD, NvNovoGrad, NAdamLegacy, RAdamLegacy, LaProp, Mars and AdafactorBigVision (its
    bfloat16 momentum), with caution, corrected weight
    decay and RMS update clipping, train as timm's
    own classes: fp32 within 1e-5 over 8 steps (measured 1e-7..2e-6), f16 within 5e-3 of fp32; each case's
    options act (without one, timm's losses part by more than 1%)."""
    _torch_mlir()
    make = _timm_optimizers()[case]
    model, inputs, _, _ = _grouped_mlp()
    optimizer = make(list(model.parameters()))
    step = export_train_step(model, F.cross_entropy, inputs, optimizer=optimizer, out_dir=tmp_path)
    assert step.manifest["optimizer"]["kind"] == case.split("_")[0]
    if case.startswith("rmsproptf"):  # TensorFlow's first square average: ones
        squares = [a["amp_init"] for a in step.manifest["arguments"] if a["kind"] == "square_avg"]
        assert squares and set(squares) == {"#amp.init<fill(1.0)>"}
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=8, optimizer=optimizer)
    fp32 = _losses(amp_tools, step, 8)
    np.testing.assert_allclose(fp32, want, rtol=1e-5)
    for changes in _TIMM_ABLATIONS.get(case, []):
        other = torch_reference_losses(model, F.cross_entropy, inputs, steps=8,
                                       optimizer=make(list(model.parameters()), **changes))
        assert np.max(np.abs(np.array(other) / want - 1)) > 0.01, changes
    np.testing.assert_allclose(_losses(amp_tools, step, 8, "f16"), fp32, rtol=5e-3)


def _adafactors():
    """transformers' and timm's Adafactor (``make(params, **changes)``), and what each case's options are seen
    against (timm's and transformers' losses without them part by more than 1%)."""
    optimization = pytest.importorskip("transformers.optimization", reason="transformers is not installed")
    optim = pytest.importorskip("timm.optim", reason="timm is not installed (make py-models)")

    def case(cls, **options):
        return lambda ps, **changes: cls(ps, **{**options, **changes})
    return {
        # the defaults: relative step (min(1e-2, 1 / sqrt(t)) times the parameter's RMS), every weight of 2+ dims
        # factored over its last two dims (the convolutions' 3 x 3 too)
        "transformers": (case(optimization.Adafactor), [dict(scale_parameter=False)]),
        "transformers_lr_beta1_decay": (case(optimization.Adafactor, lr=1e-2, relative_step=False, beta1=0.9,
                                             weight_decay=0.1, clip_threshold=0.5), [dict(beta1=None)]),
        "transformers_warmup": (case(optimization.Adafactor, warmup_init=True, decay_rate=-0.5),
                                [dict(warmup_init=False)]),
        # timm's: factored over the first two dims of a convolution, the last two of a linear layer, where
        # both are larger than min_dim_size_to_factor
        "timm": (case(optim.Adafactor, min_dim_size_to_factor=8), [dict(scale_parameter=False)]),
        "timm_lr_beta1_caution": (case(optim.Adafactor, lr=1e-2, betas=(0.9, 0.999), weight_decay=0.1, caution=True,
                                       min_dim_size_to_factor=8), [dict(caution=False)]),
        # torch.optim's: min(lr, 1 / sqrt(t)) times max(eps2, rms(p)), row and column variances from the
        # gradient's norms (their outer product a matmul, kept in f32 in f16 steps: the update is pinned)
        "torch": (case(torch.optim.Adafactor), [dict(eps=(None, 1e-1))]),
        "torch_lr_decay": (case(torch.optim.Adafactor, lr=0.1, weight_decay=0.1, eps=(1e-3, 1e-2), beta2_decay=-0.5),
                           [dict(weight_decay=0.0), dict(beta2_decay=-0.8)])}


@pytest.mark.parametrize("case", ["transformers", "transformers_lr_beta1_decay", "transformers_warmup", "timm",
                                  "timm_lr_beta1_caution", "torch", "torch_lr_decay"])
def test_adafactor_trains_as_its_library(case, tmp_path, amp_tools):
    """transformers' Adafactor (T5's), timm's and torch.optim's train as theirs: the relative step from the step count and the
    parameter's RMS, the second moment factored into row and column statistics (their own shapes in the
    manifest), update clipping, the optional first moment, weight decay, timm's caution. A small CNN (4-d,
    2-d and 1-d parameters): fp32 within 1e-5 over 6 steps (measured 7e-8..1.2e-7), f16 within 5e-3 of fp32.
    A relative step with ``lr_input`` is refused (it reads no lr)."""
    _torch_mlir()
    make, ablations = _adafactors()[case]
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 3), nn.ReLU(), nn.Conv2d(16, 24, 3), nn.ReLU(), nn.Flatten(),
                          nn.Linear(24 * 4 * 4, 5))
    inputs = (torch.randn(4, 3, 8, 8), torch.randint(0, 5, (4,)))
    optimizer = make(list(model.parameters()))
    step = export_train_step(model, F.cross_entropy, inputs, optimizer=optimizer, out_dir=tmp_path)
    shapes = {a["name"]: a["shape"] for a in step.manifest["arguments"]}
    if case == "transformers":
        assert shapes["row second moments of 2.weight"] == [24, 16, 3]
        assert shapes["column second moments of 2.weight"] == [24, 16, 3]
        assert "relative step" in step.text.splitlines()[1]
    if case == "torch":  # keepdim shapes
        assert shapes["row variances of 2.weight"] == [24, 16, 3, 1]
        assert shapes["column variances of 2.weight"] == [24, 16, 1, 3]
    if case == "timm":  # the first two dims of the convolution (24 x 16), the last two of the linear layer
        assert shapes["row second moments of 2.weight"] == [24, 3, 3]
        assert shapes["column second moments of 2.weight"] == [16, 3, 3]
        assert shapes["second moment of 0.weight"] == [16, 3, 3, 3]  # 3 input channels: not factored
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=6, optimizer=optimizer)
    fp32 = _losses(amp_tools, step, 6)
    np.testing.assert_allclose(fp32, want, rtol=1e-5)
    for changes in ablations:
        other = torch_reference_losses(model, F.cross_entropy, inputs, steps=6,
                                       optimizer=make(list(model.parameters()), **changes))
        assert np.max(np.abs(np.array(other) / want - 1)) > 0.01, changes
    np.testing.assert_allclose(_losses(amp_tools, step, 6, "f16"), fp32, rtol=5e-3)
    if optimizer.param_groups[0].get("relative_step"):
        with pytest.raises(ValueError, match="computes its learning rate from the step count"):
            export_train_step(model, F.cross_entropy, inputs, optimizer=optimizer, lr_input=True,
                              out_dir=tmp_path / "lr")


@pytest.mark.parametrize("case", ["adamw_k3", "sgd_k2_resumed", "adamw_k3_resumed", "lookahead_radam"])
def test_timm_lookahead_trains_as_timm(case, tmp_path, amp_tools):
    """timm's Lookahead around any optimizer the step writes (``create_optimizer_v2``'s ``lookahead_`` names;
    Ranger is ``lookahead_radam``): every k steps the slow weights move toward the fast ones by alpha and the
    fast ones restart from them; the first sync only makes the slow copy (timm's lazily made buffer), and a
    resumed Lookahead starts from its slow weights and count. fp32 within 1e-5 of timm over 10-14 steps (measured
    1e-7..2.7e-6), f16 within 5e-3 of fp32; the base optimizer alone parts by more than 1%."""
    _torch_mlir()
    optim = pytest.importorskip("timm.optim", reason="timm is not installed (make py-models)")
    model, inputs, _, _ = _grouped_mlp()
    make, steps_before = {
        "adamw_k3": (lambda base: optim.Lookahead(base, alpha=0.5, k=3), 0),
        "sgd_k2_resumed": (lambda base: optim.Lookahead(base, alpha=0.8, k=2), 5),
        "adamw_k3_resumed": (lambda base: optim.Lookahead(base, alpha=0.5, k=3), 4),
        "lookahead_radam": (None, 0)}[case]
    base = (torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9) if case.startswith("sgd") else
            torch.optim.AdamW(model.parameters(), lr=0.02))
    optimizer = (optim.create_optimizer_v2(model, "lookahead_radam", lr=0.02) if make is None else make(base))
    _step_on_another_batch(optimizer, model, inputs, steps_before)
    step = export_train_step(model, F.cross_entropy, inputs, optimizer=optimizer, out_dir=tmp_path)
    assert "lookahead_k=" in step.text.splitlines()[1]
    counter = [a for a in step.manifest["arguments"] if a["kind"] == "lookahead_step"]
    assert len(counter) == 1 and float(np.load(tmp_path / counter[0]["file"])) == steps_before
    steps = 14 if case == "lookahead_radam" else 10  # (k = 6: its first sync only makes the slow copy)
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=steps, optimizer=optimizer)
    fp32 = _losses(amp_tools, step, steps)
    np.testing.assert_allclose(fp32, want, rtol=1e-5)
    alone = torch_reference_losses(model, F.cross_entropy, inputs, steps=steps, optimizer=optimizer._base_optimizer)
    assert np.max(np.abs(np.array(alone) / want - 1)) > 0.01
    np.testing.assert_allclose(_losses(amp_tools, step, steps, "f16"), fp32, rtol=5e-3)


def test_timm_optimizers_resume(tmp_path, amp_tools):
    """A resumed timm Lamb starts from its moments and its param groups' step count (``group['step']``, not
    per parameter), with the learning rate an argument (``lr_input``); a resumed RMSpropTF from its square
    averages and momentum; NAdamLegacy from its momentum schedule and LaProp from its learning-rate and
    bias-correction averages (Python floats and a float32 tensor in timm's state: state per param group here),
    LaProp's learning rate a tensor then (stepped on another batch first). fp32 within 1e-5 of timm continuing;
    a fresh optimizer parts by more than 1%."""
    _torch_mlir()
    optim = pytest.importorskip("timm.optim", reason="timm is not installed (make py-models)")
    for make in (lambda ps: optim.Lamb(ps, lr=0.02, weight_decay=0.1),
                 lambda ps: optim.RMSpropTF(ps, lr=0.01, momentum=0.9),
                 lambda ps: optim.NAdamLegacy(ps, lr=0.01, schedule_decay=1.0),
                 lambda ps: optim.LaProp(ps, lr=0.01, weight_decay=0.1)):
        model, inputs, _, _ = _grouped_mlp()
        optimizer = make(model.parameters())
        _step_on_another_batch(optimizer, model, inputs, 2)
        out = tmp_path / type(optimizer).__name__
        step = export_train_step(model, F.cross_entropy, inputs, optimizer=optimizer, lr_input=True, out_dir=out)
        if isinstance(optimizer, optim.Lamb):
            (counter,) = [a for a in step.manifest["arguments"] if a["kind"] == "step"]
            assert float(np.load(out / counter["file"])) == 2.0
        want = torch_reference_losses(model, F.cross_entropy, inputs, steps=4, optimizer=optimizer)
        np.testing.assert_allclose(_losses(amp_tools, step, 4), want, rtol=1e-5)
        fresh = torch_reference_losses(model, F.cross_entropy, inputs, steps=4, optimizer=make(model.parameters()))
        assert np.max(np.abs(np.array(fresh) / want - 1)) > 0.01


_OTHER_TORCH_OPTIMIZERS = {
    "adadelta": lambda ps: torch.optim.Adadelta(ps, rho=0.8, weight_decay=0.01),
    # the step sizes grow by 1.3 where a gradient keeps its sign, shrink by 0.4 where it flips (no step there),
    # within [1e-4, 0.05]
    "rprop": lambda ps: torch.optim.Rprop(ps, lr=0.01, etas=(0.4, 1.3), step_sizes=(1e-4, 0.05)),
    # averaging from step 3 (t0 = 2): the average's weight 1 / (t - t0) after it
    "asgd": lambda ps: torch.optim.ASGD(ps, lr=0.05, t0=2, weight_decay=0.01)}


@pytest.mark.parametrize("case", sorted(_OTHER_TORCH_OPTIMIZERS))
def test_adadelta_rprop_asgd_train_as_pytorch(case, tmp_path, amp_tools):
    """torch.optim's Adadelta, Rprop (its step sizes start at lr: a fill hint) and ASGD (its averaged parameters,
    step size and averaging weight as state, float32 numbers as torch.optim keeps them): fp32 within 1e-5 of
    PyTorch over 8 steps (measured 1e-7..2e-7), ASGD's average after them within 1e-6 of torch.optim's ``ax``;
    f16 within 5e-3 of fp32 (Rprop 2e-2: its sign flips, as its losses fall to 3e-3). ASGD's step size
    is one value for every parameter: the step returns it several times (amp-distinct-returned-buffers)."""
    _torch_mlir()
    model, inputs, _, _ = _grouped_mlp()
    optimizer = _OTHER_TORCH_OPTIMIZERS[case](list(model.parameters()))
    step = export_train_step(model, F.cross_entropy, inputs, optimizer=optimizer, out_dir=tmp_path)
    if case == "rprop":
        sizes = {a["amp_init"] for a in step.manifest["arguments"] if a["kind"] == "step_size"}
        assert sizes == {"#amp.init<fill(0.01)>"}
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=8, optimizer=optimizer)
    fp32 = _losses(amp_tools, step, 8)
    np.testing.assert_allclose(fp32, want, rtol=1e-5)
    if case == "asgd":  # the averaged parameters after 8 steps, against torch.optim's own
        reference, dumped = copy.deepcopy(model), tmp_path / "dumped"
        opt = torch.optim.ASGD(reference.parameters(), lr=0.05, t0=2, weight_decay=0.01)
        for _ in range(8):
            torch_train_step(reference, F.cross_entropy, opt, inputs[:-1], inputs[-1])
        _run([amp_tools["amp_train"], str(step.mlir_path), "--inputs", str(step.out_dir), "--steps", "8",
              "--precision=fp32", "--dump", str(dumped)])
        (ax,) = [a["index"] for a in step.manifest["arguments"] if a["name"] == "average of 0.weight"]
        np.testing.assert_allclose(np.load(dumped / f"arg{ax}.npy"), opt.state[reference[0].weight]["ax"].numpy(),
                                   rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(_losses(amp_tools, step, 8, "f16"), fp32, rtol=5e-3 if case != "rprop" else 2e-2)


def _muon_and_adamw(params, **options):
    matrices = [p for p in params if p.ndim == 2]
    return [torch.optim.Muon(matrices, lr=0.02, **options),
            torch.optim.AdamW([p for p in params if p.ndim != 2], lr=0.01)]


@pytest.mark.parametrize("case", ["timm-muon", "timm-muon_adamuon", "timm-muon_adamuon_bias_corrected",
                                  "timm-muon_nesterov_polar", "timm-muon_cnn_batched", "timm-muon_cnn_flatten"])
def test_timm_muon_trains_as_timm(case, tmp_path, amp_tools, monkeypatch):
    """timm's Muon: the weights timm finds fit orthogonalized by its Newton-Schulz schedule in bfloat16 (each op
    rounded once where PyTorch's ends), the biases and norms on its AdamW fallback (NAdamW with nesterov) at
    ``lr * fallback_lr_scale``; AdaMuon's second moment of the orthogonalized update (RMS-normalized, or
    bias-corrected); a convolution's weight flattened or batched per position; polar express coefficients,
    ``safety_factor``, ``scale_eps``. With the iteration in float32 on both sides the losses are timm's within 1e-5
    over 8 steps (the rule itself; measured up to 1e-6, 2.4e-6 for the bias-corrected AdaMuon, whose first update
    is a sign); in bfloat16 within 2e-3 (a float32 sum in another order can round to another
    bfloat16; measured 2.8e-6..2.8e-4), except the bias-corrected AdaMuon, whose first update is the sign of the
    orthogonalized momentum (elements near 0 flip with the last bit: 1.3% there, no comparison). f16 within 1e-2
    of fp32 for the others (AdaMuon 5.2e-3); each case's options act (timm's losses part by more than 1% without
    them)."""
    _torch_mlir()
    optim = pytest.importorskip("timm.optim", reason="timm is not installed (make py-models)")
    from amp_mlir.torch import _optim
    import timm.optim.muon as timm_muon
    if case.startswith("timm-muon_cnn"):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.Flatten(),
                              nn.Linear(8 * 6 * 6, 4))
        inputs = (torch.randn(4, 3, 6, 6), torch.randint(0, 4, (4,)))
        mode = case.rsplit("_", 1)[1]
        make = lambda ps, **changes: optim.Muon(ps, **{**dict(lr=0.02, conv_mode=mode, weight_decay=0.1), **changes})
        ablations = [dict(conv_mode="flatten" if mode == "batched" else "batched")]
    else:
        model, inputs, _, _ = _grouped_mlp()
        make = _timm_optimizers()[case]
        ablations = _TIMM_ABLATIONS.get(case, [])
    optimizer = make(list(model.parameters()))
    step = export_train_step(model, F.cross_entropy, inputs, optimizer=optimizer, out_dir=tmp_path)
    assert step.manifest["optimizer"]["kind"] == "timm-muon"
    kinds = {a["kind"] for a in step.manifest["arguments"]}
    assert {"momentum", "adam_m"} <= kinds  # the weights' momentum, the fallback's moments
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=8, optimizer=optimizer)
    fp32 = _losses(amp_tools, step, 8)
    if case != "timm-muon_adamuon_bias_corrected":
        np.testing.assert_allclose(fp32, want, rtol=2e-3)
        np.testing.assert_allclose(_losses(amp_tools, step, 8, "f16"), fp32, rtol=1e-2)
    for changes in ablations:
        other = torch_reference_losses(model, F.cross_entropy, inputs, steps=8,
                                       optimizer=make(list(model.parameters()), **changes))
        assert np.max(np.abs(np.array(other) / want - 1)) > 0.01, changes
    # the rule itself, without bfloat16's rounding: float32 Newton-Schulz on both sides
    ns = timm_muon.zeropower_via_newtonschulz
    monkeypatch.setattr(timm_muon, "zeropower_via_newtonschulz",
                        lambda *args, **kwargs: ns(*args, **{**kwargs, "dtype": torch.float32}))
    ours = _optim._timm_newton_schulz
    monkeypatch.setattr(_optim, "_timm_newton_schulz", lambda x, group: ours(x, group, dtype=torch.float32))
    exact = export_train_step(model, F.cross_entropy, inputs, optimizer=optimizer, out_dir=tmp_path / "f32")
    np.testing.assert_allclose(_losses(amp_tools, exact, 8), torch_reference_losses(
        model, F.cross_entropy, inputs, steps=8, optimizer=optimizer), rtol=1e-5)


def _float32_newton_schulz(grad, coefficients, steps, eps):
    """torch.optim.Muon's orthogonalization with float32 in place of its bfloat16."""
    a, b, c = coefficients
    x = grad.float().T if grad.shape[0] > grad.shape[1] else grad.float()
    x = x / x.norm().clamp(min=eps)
    for _ in range(steps):
        gram = x @ x.T
        x = torch.addmm(x, torch.addmm(gram, gram, gram, beta=b, alpha=c), x, beta=a)
    return x.T if grad.shape[0] > grad.shape[1] else x


@pytest.mark.parametrize("options", [{}, dict(nesterov=False, adjust_lr_fn="match_rms_adamw")])
def test_muon_with_adamw_trains_as_pytorch(options, tmp_path, amp_tools, monkeypatch):
    """A list of optimizers, torch.optim.Muon for the matrices and an AdamW for the rest (Muon's own rule): each
    parameter updates with its optimizer's rule, the manifest's groups name theirs. Muon's Newton-Schulz
    iteration runs in bfloat16 as PyTorch's, each op float32 math rounded once where PyTorch's op ends: fp32
    within 2e-3 of PyTorch over 8 steps (measured 1e-7 and 5.7e-4: a float32 sum in another order can round to
    another bfloat16, and the iteration carries it); with the iteration in float32 on both sides, within 1e-6
    (measured 2e-7): the update is PyTorch's. f16 within 5e-3 of fp32. A parameter in both optimizers is
    refused (torch.optim.Muon itself refuses vectors)."""
    _torch_mlir()
    from amp_mlir.torch import _optim
    model, inputs, _, _ = _grouped_mlp()
    optimizers = _muon_and_adamw(list(model.parameters()), **options)
    step = export_train_step(model, F.cross_entropy, inputs, optimizer=optimizers, out_dir=tmp_path)
    assert step.manifest["optimizer"]["kind"] == "muon+adamw"
    assert [g["optimizer"] for g in step.manifest["optimizer"]["groups"]] == ["muon", "adamw"]
    assert "optimizer: muon (" in step.text and ") + adamw (" in step.text
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=8, optimizer=optimizers)
    fp32 = _losses(amp_tools, step, 8)
    np.testing.assert_allclose(fp32, want, rtol=2e-3)
    np.testing.assert_allclose(_losses(amp_tools, step, 8, "f16"), fp32, rtol=5e-3)
    # the rule itself, without bfloat16's rounding: float32 Newton-Schulz on both sides
    import torch.optim._muon as muon
    monkeypatch.setattr(muon, "_zeropower_via_newtonschulz", _float32_newton_schulz)
    monkeypatch.setattr(_optim, "_newton_schulz", lambda x, group: _float32_newton_schulz(
        x, group.ns_coefficients, group.ns_steps, group.eps))
    exact = export_train_step(model, F.cross_entropy, inputs, optimizer=optimizers, out_dir=tmp_path / "f32")
    np.testing.assert_allclose(_losses(amp_tools, exact, 8), torch_reference_losses(
        model, F.cross_entropy, inputs, steps=8, optimizer=optimizers), rtol=1e-6)
    params = list(model.parameters())
    with pytest.raises(ValueError, match=r"the Muon and the AdamW both hold the parameter of shape \[32, 16\]"):
        export_train_step(model, F.cross_entropy, inputs, optimizer=[torch.optim.Muon(params[:1]),
                                                                     torch.optim.AdamW(params)], out_dir=tmp_path / "bad")


def test_torch_optim_state_resumes(tmp_path, amp_tools):
    """An optimizer that has stepped already (a resumed run) starts the step from its state: Adam's moments and
    step count (argument ``step counter`` starts at 2), SGD's momentum buffers, NAdam's momentum product. fp32 within 1e-4 of PyTorch
    continuing with that optimizer; a fresh optimizer's losses part from it by more than 1%."""
    _torch_mlir()
    model, inputs, _, _ = _grouped_mlp()
    for make, rtol in ((lambda ps: torch.optim.Adam(ps, lr=0.05), 1e-4),
                       (lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9), 1e-5),
                       (lambda ps: torch.optim.NAdam(ps, lr=0.05), 1e-4)):
        optimizer = make(model.parameters())
        _step_on_another_batch(optimizer, model, inputs, 2)
        out = tmp_path / type(optimizer).__name__
        step = export_train_step(model, F.cross_entropy, inputs, optimizer=optimizer, out_dir=out)
        if not isinstance(optimizer, torch.optim.SGD):
            (counter,) = [a for a in step.manifest["arguments"] if a["kind"] == "step"]
            assert float(np.load(out / counter["file"])) == 2.0
        if isinstance(optimizer, torch.optim.NAdam):  # its momentum product, mu_1 mu_2
            (product,) = [a for a in step.manifest["arguments"] if a["kind"] == "mu_product"]
            assert float(np.load(out / product["file"])) == pytest.approx(
                float(optimizer.state[model[0].weight]["mu_product"]))
        want = torch_reference_losses(model, F.cross_entropy, inputs, steps=4, optimizer=optimizer)
        np.testing.assert_allclose(_losses(amp_tools, step, 4), want, rtol=rtol)
        fresh = torch_reference_losses(model, F.cross_entropy, inputs, steps=4, optimizer=make(model.parameters()))
        assert np.max(np.abs(np.array(fresh) / want - 1)) > 0.01


def test_parameters_no_optimizer_holds_are_kept(tmp_path, amp_tools):
    """Trainable parameters no param group holds get a gradient but no update, as in PyTorch: the step keeps
    them (the manifest lists them under ``kept``; dumped after 3 steps they are their initial values) and the
    others train as PyTorch's."""
    _torch_mlir()
    model, inputs, _, _ = _grouped_mlp()
    optimizer = torch.optim.SGD(model[3].parameters(), lr=0.5)
    step = export_train_step(model, F.cross_entropy, inputs, optimizer=optimizer, out_dir=tmp_path / "step")
    assert step.manifest["optimizer"]["kept"] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    np.testing.assert_allclose(_losses(amp_tools, step, 3),
                               torch_reference_losses(model, F.cross_entropy, inputs, steps=3, optimizer=optimizer),
                               rtol=1e-5)
    dumped = tmp_path / "dumped"
    _run([amp_tools["amp_train"], str(step.mlir_path), "--inputs", str(step.out_dir), "--steps", "3",
          "--precision=fp32", "--dump", str(dumped)])
    args = {a["name"]: a["index"] for a in step.manifest["arguments"]}
    np.testing.assert_array_equal(np.load(dumped / f"arg{args['0.weight']}.npy"), model[0].weight.detach().numpy())
    assert not np.array_equal(np.load(dumped / f"arg{args['3.weight']}.npy"), model[3].weight.detach().numpy())


class _UnusedHead(nn.Module):
    """A model whose second head the loss never reads (BertModel's pooler under a token loss)."""

    def __init__(self):
        super().__init__()
        self.body, self.unused = nn.Linear(16, 5), nn.Linear(4, 4)

    def forward(self, x):
        return self.body(x)


def test_torch_optim_resumed_with_a_parameter_never_stepped(tmp_path, amp_tools):
    """A resumed AdamW whose unused head has no state (its gradient was always None): the step exports (that
    parameter is never updated, so its step count does not matter) and trains as PyTorch continues; clipping
    reads the optimizer's parameters only, as after ``GradScaler.unscale_(optimizer)``."""
    _torch_mlir()
    torch.manual_seed(0)
    model, inputs = _UnusedHead(), (torch.randn(8, 16), torch.randint(0, 5, (8,)))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for _ in range(2):
        optimizer.zero_grad()
        F.cross_entropy(model(inputs[0]), inputs[1]).backward()
        optimizer.step()
    assert model.unused.weight not in optimizer.state
    step = export_train_step(model, F.cross_entropy, inputs, optimizer=optimizer, out_dir=tmp_path / "resumed")
    np.testing.assert_allclose(_losses(amp_tools, step, 3), torch_reference_losses(
        model, F.cross_entropy, inputs, steps=3, optimizer=optimizer), rtol=1e-5)
    head_only = torch.optim.SGD(model.body.parameters(), lr=0.5, momentum=0.9)
    model.unused.weight.requires_grad_(False)
    step = export_train_step(model, F.cross_entropy, inputs, optimizer=head_only, max_grad_norm=0.05,
                             out_dir=tmp_path / "clipped")
    np.testing.assert_allclose(_losses(amp_tools, step, 4), torch_reference_losses(
        model, F.cross_entropy, inputs, steps=4, optimizer=head_only, max_grad_norm=0.05), rtol=1e-6)


class _Dot(nn.Module):
    """``x . w`` over one row: under an L1 loss whose target it never reaches, the gradient is exactly -x."""

    def __init__(self, width):
        super().__init__()
        self.w = nn.Parameter(torch.randn(width))

    def forward(self, x):
        return (x * self.w).sum(-1)


def test_centered_rmsprop_rounds_as_pytorch(tmp_path, amp_tools):
    """A resumed centered RMSpropTF (timm) rounds its averages as PyTorch's fused CPU kernels do
    (``add(alpha=)``, ``addcmul``: one rounding each, ``_optim._fma``). The gradient is exact and the same on
    both sides (-x, no weight decay), so after 6 steps from a state PyTorch left after 30 the square and
    gradient averages must be PyTorch's bit for bit; with ``a * b + c`` rounded twice they part by 1-2 ulps,
    and the parameters by up to 8.6e-4 (relative, element by element) through ``sqrt(s - a^2 + eps)``, where
    the averages cancel (measured 2026-12-06; the single-rounding step is 6.6e-6 from PyTorch there, from the
    momentum's ``addcdiv``, 3 ulps). An earlier version compared 6 losses of a resumed MobileNetV3-small
    with train-mode batch norm, whose losses fork at step 3 by 1.1e-3, the size of the double rounding,
    differently on each CPU and PyTorch thread count."""
    _torch_mlir()
    timm = pytest.importorskip("timm", reason="timm is not installed (make py-models)")
    import timm.optim  # not imported by `import timm`

    torch.manual_seed(0)
    model = _Dot(4096)  # a multiple of every vector width: PyTorch's kernels take no scalar tail
    generator = torch.Generator().manual_seed(1)
    inputs = (torch.randn(1, 4096, generator=generator), torch.full((1,), 1e4))
    optimizer = timm.optim.RMSpropTF(model.parameters(), lr=1e-3, alpha=0.9, momentum=0.9, centered=True)
    for _ in range(30):
        optimizer.zero_grad()
        F.l1_loss(model(inputs[0]), inputs[1]).backward()
        optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    step = export_train_step(model, F.l1_loss, inputs, optimizer=optimizer, out_dir=tmp_path / "step")
    dumped = tmp_path / "dumped"
    _run([amp_tools["amp_train"], str(step.mlir_path), "--inputs", str(step.out_dir), "--steps", "6",
          "--precision=fp32", "--dump", str(dumped)])
    for _ in range(6):
        optimizer.zero_grad()
        F.l1_loss(model(inputs[0]), inputs[1]).backward()
        optimizer.step()
    state = optimizer.state[model.w]
    ours = {a["kind"]: np.load(dumped / a["file"]) for a in step.manifest["arguments"]
            if a["kind"] in ("param", "square_avg", "grad_avg", "momentum")}
    np.testing.assert_array_equal(ours["square_avg"], state["square_avg"].numpy())
    np.testing.assert_array_equal(ours["grad_avg"], state["grad_avg"].numpy())
    want = model.w.detach().numpy()
    (start,) = [a["file"] for a in step.manifest["arguments"] if a["kind"] == "param"]
    assert not np.array_equal(want, np.load(step.out_dir / start))
    np.testing.assert_allclose(ours["momentum"], state["momentum_buffer"], rtol=2e-6)
    np.testing.assert_allclose(ours["param"], want, rtol=0, atol=1e-6 * float(np.max(np.abs(want))))


def test_parameters_at_different_step_counts_train_as_pytorch(tmp_path, amp_tools):
    """A resumed optimizer whose parameters are at different step counts, as a fine-tuning script leaves it: a
    backbone unfrozen after the head stepped twice (an AdamW; its weights start at count 0, the head's at 2), a
    param group added after a step (timm's Lamb counts per group). Each parameter gets its own step counter
    (``step counter of <name>``); fp32 within 1e-5 of PyTorch continuing, and with one shared count (the head's)
    the losses part by more than 1%."""
    _torch_mlir()
    optim = pytest.importorskip("timm.optim", reason="timm is not installed (make py-models)")
    model, inputs, _, _ = _grouped_mlp()
    for make in (lambda: torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.1),
                 lambda: optim.Lamb([{"params": model[3].parameters()}], lr=0.05)):
        for p in model.parameters():
            p.requires_grad_(True)
        torch.manual_seed(0)
        for m in (model[0], model[2], model[3]):
            m.reset_parameters()
        optimizer = make()
        if isinstance(optimizer, torch.optim.AdamW):  # the backbone frozen while the head trains
            for p in (*model[0].parameters(), *model[2].parameters()):
                p.requires_grad_(False)
        _step_on_another_batch(optimizer, model, inputs, 2)
        for p in model.parameters():
            p.requires_grad_(True)
        if isinstance(optimizer, optim.Lamb):
            optimizer.add_param_group({"params": [*model[0].parameters(), *model[2].parameters()]})
        out = tmp_path / type(optimizer).__name__
        step = export_train_step(model, F.cross_entropy, inputs, optimizer=optimizer, out_dir=out)
        counters = {a["name"]: float(np.load(out / a["file"])) for a in step.manifest["arguments"]
                    if a["kind"] == "step"}
        assert counters["step counter of 3.weight"] == 2.0 and counters["step counter of 0.weight"] == 0.0
        want = torch_reference_losses(model, F.cross_entropy, inputs, steps=5, optimizer=optimizer)
        np.testing.assert_allclose(_losses(amp_tools, step, 5), want, rtol=1e-5)
        for g in optimizer.param_groups:  # every parameter at the head's count instead: PyTorch parts from it
            if isinstance(optimizer, optim.Lamb):
                g["step"] = torch.tensor(2.0)
            else:
                for p in g["params"]:
                    optimizer.state[p].setdefault("step", torch.tensor(2.0))
                    optimizer.state[p]["step"] = torch.tensor(2.0)
                    for k in ("exp_avg", "exp_avg_sq"):
                        optimizer.state[p].setdefault(k, torch.zeros_like(p))
        other = torch_reference_losses(model, F.cross_entropy, inputs, steps=5, optimizer=optimizer)
        assert np.max(np.abs(np.array(other) / want - 1)) > 0.01


class _CancellingFloat64(nn.Module):
    """float64 arithmetic whose Python constants float32 cannot hold (RAdam's rho_t as a model computes it):
    ``19999 - 2 t b^t / (1 - b^t)`` with b = 0.9999 cancels to 5 digits."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 2)

    def forward(self, x):
        t = self.lin.weight.sum().double() * 0 + 5.0
        e = torch.pow(0.9999, t)
        rho = 19999 - 2 * t * e / (1 - e)
        return self.lin(x) * (rho * 1.0000001 - 4.9).float()


def test_float64_constants_keep_their_digits(tmp_path, amp_tools):
    """A Python number in float64 arithmetic stays float64 (``_float64_scalars``): torch-mlir's TOSA conversion
    made it a float32 constant, so ``0.9999 ** 5`` and ``* 1.0000001`` lost half their digits and the first loss
    came out 0.959 against PyTorch's 0.685: fp32 now within 1e-6 of PyTorch."""
    _torch_mlir()
    torch.manual_seed(0)
    _trains_as_pytorch(_CancellingFloat64(), (torch.randn(3, 4), torch.tensor([0, 1, 1])), tmp_path, amp_tools,
                       rtol=1e-6, optimizer="sgd", lr=0.1)


def test_torch_optim_refusals(tmp_path):
    """What the step cannot write is refused by name: another optimizer class (timm's Adahessian too), AdafactorBigVision's
    momentum kept in another type, SGD's and timm
    Lars's dampening, options given
    twice, a parameter that is not the model's, a parameter listed twice, a subclass with its own step(), a step
    hook, an optimizer instance with the builtin front end (all before capturing), and a NAdam whose parameters
    are at different step counts. Every lr 0 (a warm-up schedule before its first step) is a warning."""
    _torch_mlir()
    model, inputs, _, _ = _grouped_mlp()
    stray = nn.Parameter(torch.zeros(3))
    twice = torch.optim.SGD([{"params": [model[0].weight, model[0].weight]}], lr=0.1)

    class Centralized(torch.optim.SGD):  # gradient centralisation: its own step()
        def step(self, closure=None):
            return super().step(closure)

    hooked = torch.optim.SGD(model.parameters(), lr=0.1)
    hooked.register_step_pre_hook(lambda optimizer, args, kwargs: None)
    try:
        import timm.optim as timm_optim
    except ImportError:
        timm_optim = None
    for optimizer, options, message in [
            (torch.optim.LBFGS(model.parameters()), {}, r"torch.optim.SGD / .* or a timm.optim.Lion / .*; got LBFGS"),
            (torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, dampening=0.1), {}, "dampening"),
            (torch.optim.SGD(model.parameters(), lr=0.1), {"lr": 0.2}, "lr given with a torch.optim optimizer"),
            (torch.optim.SGD([*model.parameters(), stray], lr=0.1), {}, r"shape \[3\] that is neither"),
            (twice, {}, r"holds a parameter of shape \[32, 16\] twice"),
            (Centralized(model.parameters(), lr=0.1), {}, r"Centralized overrides torch.optim's step\(\)"),
            (hooked, {}, r"has 1 step hook\(s\)"),
            (torch.optim.SGD(model.parameters(), lr=0.1), {"frontend": "builtin"}, "needs frontend='torch-mlir'"),
            *([] if timm_optim is None else [
                (timm_optim.Adahessian(model.parameters()), {}, "; got Adahessian"),
                (timm_optim.AdafactorBigVision(model.parameters(), momentum_dtype=torch.float64), {},
                 "momentum_dtype float64 is not supported"),
                (timm_optim.Lars(model.parameters(), lr=0.1, momentum=0.9, dampening=0.1), {}, "Lars's dampening")])]:
        with pytest.raises(ValueError, match=message):
            export_train_step(model, F.cross_entropy, inputs, optimizer=optimizer, out_dir=tmp_path, **options)
    with pytest.warns(UserWarning, match="every param group of the SGD has lr 0"):
        export_train_step(model, F.cross_entropy, inputs, optimizer=torch.optim.SGD(model.parameters(), lr=0.0),
                          out_dir=tmp_path)
    # NAdam keeps one momentum product per group: its parameters at different step counts are refused
    nadam = torch.optim.NAdam([{"params": model[0].parameters()}], lr=0.1)
    F.cross_entropy(model(inputs[0]), inputs[1]).backward()
    nadam.step()
    nadam.add_param_group({"params": model[3].parameters()})
    with pytest.raises(ValueError, match=r"the nadam parameters are at different step counts \(\[0.0, 1.0\]\)"):
        export_train_step(model, F.cross_entropy, inputs, optimizer=nadam, out_dir=tmp_path)


class _SpecialHead(nn.Module):
    """A probit / von Mises style head over the special functions and index tables torch-mlir does not lower:
    ``log_ndtr``, ``erfcx``, ``ndtri``, ``i0e`` / ``i1``, ``copysign``, ``searchsorted``, ``histc``,
    ``combinations`` (``nonzero_static``) and ``tril_indices``."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 8)

    def forward(self, x):
        h = self.lin(x)
        rows, cols = torch.tril_indices(4, 4)
        pairs = torch.stack([torch.combinations(r[:4]).prod(-1) for r in h])
        buckets = torch.searchsorted(torch.tensor([-0.5, 0.0, 0.5]), h.detach()).float()
        counts = torch.histc(h.detach(), bins=8, min=-2, max=2)
        return torch.cat([torch.special.log_ndtr(h), torch.special.erfcx(h.clamp(-2, 2)) * 0.1,
                          torch.special.ndtri(torch.sigmoid(h)), torch.special.i0e(h), torch.special.i1(h) * 0.1,
                          torch.copysign(h, -h[:, [1, 0, 3, 2, 5, 4, 7, 6]]), h[:, rows] * h[:, cols], pairs,
                          h * buckets, h * counts / 10], 1).mean(1, keepdim=True)


def test_special_functions_and_index_tables_train_as_pytorch(tmp_path, amp_tools):
    """fp32 within 1e-5 of PyTorch through ``_decompositions``' Cephes expansions, erfcx fit, ``searchsorted``,
    ``histc``, ``nonzero_static``, ``tril_indices`` and ``copysign``."""
    _torch_mlir()
    torch.manual_seed(0)
    _trains_as_pytorch(_SpecialHead(), (torch.randn(8, 6), torch.randn(8, 1)), tmp_path, amp_tools, loss=F.mse_loss,
                       optimizer="sgd", lr=0.1)


class _MaxNormBag(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed, self.head = nn.Embedding(12, 6, max_norm=1.0), nn.Linear(6, 4)

    def forward(self, ids):
        return self.head(self.embed(ids).mean(1))


def test_embedding_max_norm_trains_as_pytorch(tmp_path, amp_tools):
    """``nn.Embedding(max_norm=1.0)`` renormalizes the rows it looks up in place before each lookup
    (``_decompositions.embedding_renorm``): the renormed weight is the one the optimizer updates, as in
    PyTorch, fp32 within 1e-5 over 4 Adam steps; the updated weight's looked-up rows are renormed again."""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.tensor([[1, 2, 2, 5], [7, 1, 0, 0], [3, 3, 3, 11]]), torch.tensor([0, 3, 1]))
    _trains_as_pytorch(_MaxNormBag(), inputs, tmp_path, amp_tools, optimizer="adam", lr=0.05, steps=4)


class _Orthogonal(nn.Module):
    """``parametrizations.orthogonal`` by each map: ``matrix_exp`` (square), ``householder`` (6 x 10) and
    ``cayley`` (whose weight is a transposed view: saved as a Fortran-order .npy), then a ``qr`` of features."""

    def __init__(self):
        super().__init__()
        P = nn.utils.parametrizations
        self.a = P.orthogonal(nn.Linear(6, 6), orthogonal_map="matrix_exp")
        self.b = P.orthogonal(nn.Linear(6, 10), orthogonal_map="householder")
        self.c = P.orthogonal(nn.Linear(10, 10), orthogonal_map="cayley")
        self.head = nn.Linear(10, 3)

    def forward(self, x):
        h = self.c(torch.tanh(self.b(torch.tanh(self.a(x)))))
        q, r = torch.linalg.qr(h.view(-1, 5, 2))
        return self.head(h) + (q.sum((1, 2)) + r.diagonal(0, 1, 2).sum(1)).unsqueeze(1) * 0.1


def test_orthogonal_parametrizations_and_qr_train_as_pytorch(tmp_path, amp_tools):
    """``matrix_exp`` (forward and the block-matrix backward, ``_decompositions.matrix_exp``),
    ``householder_product`` and ``qr`` (unrolled Householder reflections, LAPACK's signs), which torch-mlir
    does not lower: fp32 within 1e-5 of PyTorch over 3 Adam steps."""
    _torch_mlir()
    torch.manual_seed(0)
    _trains_as_pytorch(_Orthogonal(), (torch.randn(8, 6), torch.randint(0, 3, (8,))), tmp_path, amp_tools,
                       optimizer="adam", lr=0.02)


class _Centered(nn.Module):
    """A parameter read only through ``.detach()`` and an unused head: both get no gradient (``.grad`` None)."""

    def __init__(self):
        super().__init__()
        self.inp, self.out, self.unused = nn.Linear(8, 24), nn.Linear(24, 3), nn.Linear(24, 5)
        self.center = nn.Parameter(torch.full((24,), 2.0))

    def forward(self, x):
        return self.out(torch.tanh(self.inp(x)) - self.center.detach())


@pytest.mark.parametrize("options", [dict(optimizer="sgd", lr=0.5, momentum=0.9, weight_decay=0.2),
                                     dict(optimizer="adamw", lr=0.05, weight_decay=0.5, max_grad_norm=1.0)],
                         ids=["sgd-momentum-wd", "adamw-wd-clip"])
def test_parameters_without_gradients_are_not_updated(options, tmp_path, amp_tools):
    """torch.optim skips a parameter whose ``.grad`` is None: no weight decay, no momentum, its state kept
    (the exported step decayed it as if its gradient were zeros: 0.38 off PyTorch at step 3 with SGD): fp32
    within 2e-5 of PyTorch, and the exported step returns those parameters unchanged."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _Centered()
    inputs = (torch.randn(8, 8), torch.tensor([0, 2, 1, 2, 0, 1, 1, 0]))
    step, _ = _trains_as_pytorch(model, inputs, tmp_path, amp_tools, rtol=2e-5, **options)
    dump = tmp_path / "dump"
    _run([amp_tools["amp_train"], str(step.mlir_path), "--inputs", str(step.out_dir), "--steps", "3",
          "--precision=fp32", "--dump", str(dump)])
    frozen = [a for a in step.manifest["arguments"] if a["name"] in ("center", "unused.weight", "unused.bias")]
    assert len(frozen) == 3
    for arg in frozen:
        np.testing.assert_array_equal(np.load(dump / arg["file"]), np.load(step.out_dir / arg["file"]))


class _FrozenAverage(nn.Module):
    """A running average kept as a frozen ``nn.Parameter`` and updated in place by the forward pass, and a frozen
    projection that is only read."""

    def __init__(self):
        super().__init__()
        self.inp, self.out = nn.Linear(8, 24), nn.Linear(24, 3)
        self.avg = nn.Parameter(torch.zeros(24), requires_grad=False)
        self.proj = nn.Parameter(torch.randn(24, 24) * 0.2, requires_grad=False)

    def forward(self, x):
        h = torch.tanh(self.inp(x)) @ self.proj
        with torch.no_grad():
            self.avg.mul_(0.5).add_(h.mean(0), alpha=0.5)
        return self.out(h - self.avg)


def test_frozen_parameter_updated_in_place_is_state(tmp_path, amp_tools):
    """A frozen parameter the forward pass updates in place (the capture stopped at PyTorch's internal assert
    "mutating a non-functional tensor with a functional tensor") is an argument the step updates, as a buffer;
    the frozen parameter it only reads stays a constant: fp32 within 1e-5 of PyTorch."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _FrozenAverage()
    step, _ = _trains_as_pytorch(model, (torch.randn(8, 8), torch.tensor([0, 2, 1, 2, 0, 1, 1, 0])), tmp_path,
                                 amp_tools, optimizer="sgd", lr=0.5)
    kinds = {a["name"]: a["kind"] for a in step.manifest["arguments"]}
    assert kinds.get("buffer avg") == "buffer" and not any("proj" in name for name in kinds)
    assert torch.equal(model.avg, torch.zeros(24))  # the export's eager run put it back


class _MaskedMean(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp, self.out = nn.Linear(8, 24), nn.Linear(24, 3)

    def forward(self, x, mask):  # a boolean padding mask input: a masked mean over the tokens
        h = torch.relu(self.inp(x)).masked_fill(~mask[..., None], 0.0)
        return self.out(h.sum(1) / mask.sum(1, keepdim=True))


def test_boolean_mask_input(tmp_path, amp_tools):
    """A ``torch.bool`` model input (a padding mask) is an i1 argument with a hint i1 takes (``labels(2)``;
    amp-train refused ``labels`` on i1 before, even with the mask's .npy given): fp32 within 1e-5 of PyTorch,
    and the step also runs from its hints alone."""
    _torch_mlir()
    torch.manual_seed(0)
    mask = torch.tensor([[True, True, True, False, False], [True, True, True, True, True]])
    step, _ = _trains_as_pytorch(_MaskedMean(), (torch.randn(2, 5, 8), mask, torch.tensor([0, 2])), tmp_path,
                                 amp_tools, optimizer="sgd", lr=0.1)
    assert "tensor<2x5xi1> {amp.init = #amp.init<labels(2)>}" in step.text
    _run([amp_tools["amp_train"], str(step.mlir_path), "--steps", "1", "--precision=fp32"])


class _SparseTable(nn.Module):
    def __init__(self):
        super().__init__()
        self.table, self.out = nn.Embedding(50, 16, sparse=True), nn.Linear(16, 3)

    def forward(self, ids):
        return self.out(self.table(ids).mean(1))


def test_sparse_embedding_trains_as_dense(tmp_path, amp_tools):
    """``nn.Embedding(sparse=True)`` (torch-mlir failed on the sparse gradient's ops: "'torch.aten.clone' op
    operand #0 must be Any Torch tensor type, but got '!torch.none'") looks up as the dense embedding: SGD with
    momentum updates the same rows the same way, fp32 within 1e-5 of PyTorch's sparse update."""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.randint(0, 50, (4, 6)), torch.tensor([0, 2, 1, 2]))
    _trains_as_pytorch(_SparseTable(), inputs, tmp_path, amp_tools, optimizer="sgd", lr=0.5, momentum=0.9)


class _GraphMeanPool(nn.Module):
    """Nodes mean-pooled per graph of a batch vector (PyG's ``global_mean_pool`` written in plain torch)."""

    def __init__(self):
        super().__init__()
        self.inp, self.out = nn.Linear(8, 24), nn.Linear(24, 3)

    def forward(self, x, batch):
        h = torch.relu(self.inp(x))
        sizes = torch.bincount(batch)
        weighted = torch.bincount(batch, weights=x[:, 0], minlength=4)  # bincount has no derivative
        return self.out(torch.zeros(3, 24).index_add(0, batch, h) / sizes[:, None]) + weighted[:3, None]


def test_bincount_length_is_specialized(tmp_path, amp_tools):
    """``torch.bincount`` (torch-mlir leaves it): its length read from the example (a
    SpecializationWarning names it), the counts and the weighted sums a one-hot sum: fp32 within 1e-5 of
    PyTorch."""
    _torch_mlir()
    from amp_mlir.torch._torch_mlir import SpecializationWarning

    torch.manual_seed(0)
    inputs = (torch.randn(7, 8), torch.tensor([0, 0, 1, 1, 1, 2, 2]), torch.tensor([0, 2, 1]))
    with pytest.warns(SpecializationWarning, match=r"bincount length 3, from the example inputs x1"):
        _trains_as_pytorch(_GraphMeanPool(), inputs, tmp_path, amp_tools, optimizer="sgd", lr=0.1)


class _QuantAware(nn.Module):
    """Quantization-aware training: LSQ's learnable per-tensor and per-channel fake quantization, and fixed
    per-tensor / per-channel fake quantization of the weights."""

    def __init__(self):
        super().__init__()
        self.inp, self.out = nn.Linear(8, 24), nn.Linear(24, 3)
        self.scale, self.zero = nn.Parameter(torch.tensor([0.05])), nn.Parameter(torch.tensor([3.0]))
        self.scales, self.zeros = nn.Parameter(torch.full((24,), 0.04)), nn.Parameter(torch.zeros(24))

    def forward(self, x):
        w = torch.fake_quantize_per_channel_affine(self.inp.weight, torch.full((24,), 0.02),
                                                   torch.zeros(24, dtype=torch.int32), 0, -128, 127)
        h = F.linear(x, w, self.inp.bias)
        h = torch._fake_quantize_learnable_per_tensor_affine(h, self.scale, self.zero, -128, 127, 1.0)
        h = torch._fake_quantize_learnable_per_channel_affine(torch.relu(h), self.scales, self.zeros, 1, 0, 255, 0.5)
        return self.out(torch.fake_quantize_per_tensor_affine(h, 0.03, 0, 0, 255))


def test_quantization_aware_training(tmp_path, amp_tools):
    """Fake quantization (``fake_quantize_per_{tensor,channel}_affine``) and LSQ's learnable scales and zero
    points with their gradients (``_decompositions``; torch-mlir lowers none of them): fp32 within 1e-5 of
    PyTorch over 3 SGD steps (Adam's sign-like first steps move every parameter by lr whatever its gradient,
    so a one-ulp difference in a rounding's input flips a quantization step)."""
    _torch_mlir()
    torch.manual_seed(0)
    _trains_as_pytorch(_QuantAware(), (torch.randn(8, 8), torch.randint(0, 3, (8,))), tmp_path, amp_tools,
                       optimizer="sgd", lr=0.1)


class _Spectral(nn.Module):
    """Spectral linear algebra in a training step: a nuclear-norm regularizer (``svdvals``), ZCA whitening by
    ``eigh`` (eigenvalues and eigenvectors), a wide matrix's SVD (its ``Vh``), a pseudo-inverse and a
    least-squares solve."""

    def __init__(self):
        super().__init__()
        self.inp, self.mix, self.out = nn.Linear(8, 6), nn.Linear(6, 6), nn.Linear(6, 3)

    def forward(self, x):
        h = torch.tanh(self.inp(x))
        e, v = torch.linalg.eigh(h.t() @ h / len(h) + 1e-2 * torch.eye(6))
        h = h @ v @ torch.diag(e.rsqrt()) @ v.t()
        _, s, vh = torch.linalg.svd(h[:4], full_matrices=False)
        h = h @ (vh.t() @ vh) + h @ torch.linalg.pinv(self.mix.weight + 2 * torch.eye(6))
        h = h + torch.linalg.lstsq(self.mix.weight[:, :4], h.t()).solution.t() @ self.mix.weight[:4]
        return self.out(h) * (1 + 0.1 * torch.linalg.matrix_norm(self.mix.weight, "nuc") / s.sum())


def test_spectral_linear_algebra(tmp_path, amp_tools):
    """``eigh``, ``svd``, ``svdvals`` (the nuclear norm), ``pinv`` and ``lstsq``, which torch-mlir does not lower, by Jacobi
    in float64 (``_decompositions.linalg_eigh`` / ``linalg_svd``) and PyTorch's own backward formulas: fp32
    within 2e-6 of PyTorch over 3 SGD steps. Pinned f32 with their backward under AMP (PyTorch's kernels take
    no half precision): f16 skips no step (the backward's ``1 / (s_i^2 - s_j^2)`` overflowed f16 at the 65536
    seed before) and stays within 1e-3 of fp32."""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.randn(8, 8), torch.randint(0, 3, (8,)))
    step, fp32 = _trains_as_pytorch(_Spectral(), inputs, tmp_path, amp_tools, rtol=2e-6, optimizer="sgd", lr=0.1)
    pinned = [line for line in step.mlir_path.read_text().splitlines() if "#amp.precision<f32>" in line]
    assert any("tosa.matmul" in line and "f64" in line for line in pinned)
    out = _run([amp_tools["amp_train"], str(step.mlir_path), "--inputs", str(step.out_dir), "--steps", "3",
                "--precision=f16", "--no-jit-cache"])
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert not any(row.get("skipped") for row in rows)
    np.testing.assert_allclose([row["loss"] for row in rows], fp32, rtol=1e-3)


class _BoxFeatures(nn.Module):
    """A detection-style head: features pooled per box by torchvision's ``MultiScaleRoIAlign`` (Faster R-CNN's,
    2 samples per bin), then classified."""

    def __init__(self):
        super().__init__()
        import torchvision
        self.conv, self.head = nn.Conv2d(3, 8, 3, padding=1), nn.Linear(8 * 16, 3)
        self.pool = torchvision.ops.MultiScaleRoIAlign(["feat"], 4, 2)

    def forward(self, x, boxes):
        features = {"feat": torch.relu(self.conv(x))}
        return self.head(self.pool(features, list(boxes), [(32, 32)] * len(boxes)).flatten(1))


def test_roi_align(tmp_path, amp_tools):
    """torchvision's ``roi_align`` (whose backward torch-mlir cannot lower) as gathered bilinear samples
    (``_decompositions.roi_align``): fp32 as PyTorch over 3 SGD steps, boxes across the image border included."""
    _torch_mlir()
    pytest.importorskip("torchvision")
    torch.manual_seed(0)
    boxes = torch.tensor([[[1.0, 2.0, 20.0, 25.0], [5.0, 5.0, 30.0, 12.0]],
                          [[-4.0, 0.0, 31.0, 31.0], [10.0, 8.0, 14.0, 20.0]]])
    _trains_as_pytorch(_BoxFeatures(), (torch.randn(2, 3, 16, 16), boxes, torch.tensor([0, 2, 1, 1])), tmp_path,
                       amp_tools, optimizer="sgd", lr=0.1)


class _DeformableBlock(nn.Module):
    """A DCN v2 block as detection and video restoration models write it: the offsets and the modulation mask
    predicted by a convolution initialised to zero (offsets 0, mask 0.5), ``torchvision.ops.DeformConv2d``
    with weight groups, then a classifier."""

    def __init__(self, zero_init=True):
        super().__init__()
        from torchvision.ops import DeformConv2d
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.offsets = nn.Conv2d(8, 3 * 2 * 9, 3, padding=1)  # 2 offset groups: 36 offsets, 18 mask values
        if zero_init:
            nn.init.zeros_(self.offsets.weight)
            nn.init.zeros_(self.offsets.bias)
        self.deform = DeformConv2d(8, 8, 3, padding=1, groups=2)
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.relu(self.stem(x))
        o = self.offsets(h)
        offset, mask = o[:, :36], torch.sigmoid(o[:, 36:])
        h = torch.relu(self.deform(h, offset, mask))
        return self.head(h.mean((2, 3)))


@pytest.mark.parametrize("zero_init", [True, False])
def test_deform_conv2d_trains(zero_init, tmp_path, amp_tools):
    """torchvision's ``DeformConv2d`` (which torch-mlir lowers neither way) as gathered bilinear samples and one
    grouped GEMM (``_decompositions.deform_conv2d``): fp32 as PyTorch over 3 Adam steps, from a zero-initialised
    offset branch (the border taps exactly at -1, where the offsets' gradient follows the kernel) and from
    random offsets; f16 within 1e-3 of fp32."""
    _torch_mlir()
    pytest.importorskip("torchvision")
    torch.manual_seed(0)
    step, fp32 = _trains_as_pytorch(_DeformableBlock(zero_init), (torch.randn(2, 3, 10, 10), torch.tensor([0, 3])),
                                    tmp_path, amp_tools, rtol=1e-5, optimizer="adam", lr=1e-2)
    np.testing.assert_allclose(_losses(amp_tools, step, 3, "f16"), fp32, rtol=1e-3)


class _FractionalPooling(nn.Module):
    """Graham's fractional max-pooling: ``nn.FractionalMaxPool2d`` by output ratio and ``FractionalMaxPool3d`` by
    output size, their samples drawn at every call or fixed."""

    def __init__(self, samples=None, samples3=None):
        super().__init__()
        self.conv = nn.Conv2d(3, 6, 3, padding=1)
        self.pool = nn.FractionalMaxPool2d(2, output_ratio=0.7, _random_samples=samples)
        self.pool3 = nn.FractionalMaxPool3d(2, output_size=(2, 3, 3), _random_samples=samples3)
        self.head = nn.Linear(6 * 7 * 7 + 2 * 3 * 3, 4)

    def forward(self, x):
        h = self.pool(torch.relu(self.conv(x)))  # [N, 6, 7, 7]
        v = self.pool3(h[:, :4].unsqueeze(1))  # [N, 1, 2, 3, 3]
        return self.head(torch.cat([h.flatten(1), v.flatten(1)], 1))


def test_fractional_max_pool_trains(tmp_path, amp_tools):
    """``nn.FractionalMaxPool2d`` / ``3d`` (which torch-mlir lowers neither way) as gathered windows and their
    first maximum (``_decompositions.fractional_max_pool``): with fixed samples, fp32 as PyTorch over 3 steps;
    drawn at every call, the samples come from the step's random-number state (an ``rng`` argument)."""
    _torch_mlir()
    torch.manual_seed(0)
    inputs = (torch.randn(2, 3, 10, 10), torch.tensor([0, 3]))
    fixed = _FractionalPooling(torch.rand(2, 6, 2), torch.rand(2, 1, 3))
    _trains_as_pytorch(fixed, inputs, tmp_path / "fixed", amp_tools, rtol=1e-5, optimizer="sgd", lr=0.1)
    drawn = export_train_step(_FractionalPooling(), F.cross_entropy, inputs, optimizer="sgd", lr=0.1,
                              out_dir=tmp_path / "drawn")
    assert [a["kind"] for a in drawn.manifest["arguments"]].count("rng") == 1
    assert all(np.isfinite(_losses(amp_tools, drawn, 3)))


class _EagerQuantized(nn.Module):
    """A model prepared for eager-mode quantization-aware training (``QuantStub`` / ``DeQuantStub``)."""

    def __init__(self):
        super().__init__()
        import torch.ao.quantization as tq
        self.quant, self.dequant = tq.QuantStub(), tq.DeQuantStub()
        self.conv, self.fc = nn.Conv2d(3, 4, 3), nn.Linear(4 * 6 * 6, 3)

    def forward(self, x):
        return self.dequant(self.fc(torch.relu(self.conv(self.quant(x))).flatten(1)))


def _prepared_for_qat(qconfig):
    import torch.ao.quantization as tq
    torch.manual_seed(0)
    model = _EagerQuantized().train()
    model.qconfig = qconfig
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao's deprecation notices
        return tq.prepare_qat(model)


def test_default_qat_qconfig(tmp_path, amp_tools):
    """PyTorch's default quantization-aware training (``get_default_qat_qconfig``: ``FusedMovingAvgObsFakeQuantize``,
    the moving-average observer and the fake quantization in one op, per-channel symmetric weights) straight
    after ``prepare_qat``, the per-channel observers still empty: the export sizes them as their first forward
    pass would, the step moves the running ranges and chooses scales and zero points as ATen does, and fp32
    equals PyTorch's losses (computed on a copy taken before the export) to float32 rounding. The quantizers
    stay f32 under AMP (pinned: PyTorch's own autocast cannot run them at all); f16 within 2e-3 of fp32."""
    _torch_mlir()
    import torch.ao.quantization as tq
    model = _prepared_for_qat(tq.get_default_qat_qconfig("x86"))
    assert model.conv.weight_fake_quant.activation_post_process.min_val.numel() == 0
    inputs = (torch.randn(4, 3, 8, 8, generator=torch.Generator().manual_seed(1)), torch.tensor([0, 2, 1, 2]))
    want = torch_reference_losses(copy.deepcopy(model), F.cross_entropy, inputs, steps=3, optimizer="sgd", lr=0.1)
    step = export_train_step(model, F.cross_entropy, inputs, optimizer="sgd", lr=0.1, out_dir=tmp_path)
    np.testing.assert_allclose(_losses(amp_tools, step, 3), want, rtol=1e-6)
    # the quantizers are pinned f32 (PyTorch's take float32 only), the convolution and the matmuls are not
    pinned = [line for line in step.mlir_path.read_text().splitlines() if "#amp.precision<f32>" in line]
    assert any("tosa.floor" in line for line in pinned) and any("tosa.reciprocal" in line for line in pinned)
    assert not any("tosa.conv2d" in line or "tosa.matmul" in line for line in pinned)
    np.testing.assert_allclose(_losses(amp_tools, step, 3, "f16"), want, rtol=2e-3)
    observer = model.conv.weight_fake_quant.activation_post_process
    assert observer.min_val.shape == (4,) and bool(torch.isinf(observer.min_val).all())
    # what the export did to the model is what its own first forward pass does: PyTorch trains it the same
    np.testing.assert_allclose(torch_reference_losses(model, F.cross_entropy, inputs, steps=3, optimizer="sgd",
                                                      lr=0.1), want, rtol=1e-7)


def test_unsized_observer_is_refused(tmp_path):
    """An observer whose forward the capture does not rewrite (here a subclass of a per-channel one, which may
    compute anything) takes another branch at its first call (no moving average yet) and resizes its state:
    refused by name, telling the user to run the model once."""
    _torch_mlir()
    import torch.ao.quantization as tq

    class OwnObserver(tq.MovingAveragePerChannelMinMaxObserver):
        pass

    weight = tq.FakeQuantize.with_args(observer=OwnObserver, quant_min=-128, quant_max=127, dtype=torch.qint8,
                                       qscheme=torch.per_channel_symmetric)
    model = _prepared_for_qat(tq.QConfig(activation=tq.default_fused_act_fake_quant, weight=weight))
    inputs = (torch.randn(4, 3, 8, 8), torch.tensor([0, 2, 1, 2]))
    with pytest.raises(UnsupportedOpError, match=r"buffer conv\.weight_fake_quant\..* changes shape from \[.*\] "
                       r"to \[4\] in the first forward pass .*run the model once before exporting"):
        export_train_step(model, F.cross_entropy, inputs, optimizer="sgd", lr=0.1, out_dir=tmp_path)
    assert not list(tmp_path.iterdir())

def _legacy_qconfigs():
    import torch.ao.quantization as tq
    per_channel_min_max = tq.FakeQuantize.with_args(observer=tq.PerChannelMinMaxObserver, quant_min=-128,
                                                    quant_max=127, dtype=torch.qint8,
                                                    qscheme=torch.per_channel_symmetric)
    per_channel_affine = tq.FakeQuantize.with_args(observer=tq.MovingAveragePerChannelMinMaxObserver, quant_min=0,
                                                   quant_max=255, dtype=torch.quint8, qscheme=torch.per_channel_affine)
    return {"default_qat_qconfig": tq.default_qat_qconfig,
            "per_channel_weights": tq.QConfig(activation=tq.default_fake_quant,
                                              weight=tq.default_per_channel_weight_fake_quant),
            "per_channel_min_max": tq.QConfig(activation=tq.default_fused_act_fake_quant, weight=per_channel_min_max),
            "per_channel_affine": tq.QConfig(activation=tq.default_fake_quant, weight=per_channel_affine)}


@pytest.mark.parametrize("case", ["default_qat_qconfig", "per_channel_weights", "per_channel_min_max",
                                  "per_channel_affine", "observers_then_frozen", "quantization_off"])
def test_legacy_fake_quantize_trains(case, tmp_path, amp_tools):
    """torch.ao's plain ``FakeQuantize`` (``default_qat_qconfig``, ``default_per_channel_weight_fake_quant``, any
    ``FakeQuantize.with_args(observer=<min / max observer>)``) trains: its enable flags, its observers' "nothing
    observed yet" and the qparams' 0-d reads are selects in the step (amp_mlir/torch/_fake_quantize.py). fp32
    within 1e-6 of PyTorch over 3 steps (the scales divided in float64: TOSA's multiplication by the reciprocal
    is one ulp off, and a symmetric scale puts the range's ends on a rounding tie), straight after
    ``prepare_qat`` with the per-channel ranges still empty (sized in the step's state only: the user's module
    keeps its empty buffers, so PyTorch trains it as before), after a run with the observers then disabled
    (range and scales kept), and with fake quantization disabled (the input passed through). f16 within 5e-2 of
    fp32: fake quantization is discontinuous, and the logits themselves are quantized (a level of 5.5e-3 in the
    frozen case): one flipped level moves the loss by about 1e-3 and the next step's by 2% (bf16 rounds coarser and
    happens to flip none there)."""
    _torch_mlir()
    import torch.ao.quantization as tq
    inputs = (torch.randn(4, 3, 8, 8, generator=torch.Generator().manual_seed(1)), torch.tensor([0, 2, 1, 2]))
    qconfigs = _legacy_qconfigs()
    model = _prepared_for_qat(qconfigs.get(case, tq.default_qat_qconfig if case == "quantization_off"
                                           else qconfigs["per_channel_weights"]))
    if case == "observers_then_frozen":
        model(inputs[0])
        model.apply(tq.disable_observer)
    if case == "quantization_off":
        model.apply(tq.disable_fake_quant)
    empty = {k: b.shape for k, b in model.named_buffers() if b.numel() == 0}
    assert bool(empty) == case.startswith("per_channel")
    want = torch_reference_losses(model, F.cross_entropy, inputs, steps=3, optimizer="sgd", lr=0.1)
    step = export_train_step(model, F.cross_entropy, inputs, optimizer="sgd", lr=0.1, out_dir=tmp_path)
    assert {k: b.shape for k, b in model.named_buffers() if b.numel() == 0} == empty
    fp32 = _losses(amp_tools, step, 3)
    np.testing.assert_allclose(fp32, want, rtol=1e-6)
    np.testing.assert_allclose(_losses(amp_tools, step, 3, "f16"), fp32, rtol=5e-2)


class _ByteLatents(nn.Module):
    """Latents quantized to a byte image and back (diffusers' AutoencoderTiny), and uint8 arithmetic that wraps."""

    def __init__(self):
        super().__init__()
        self.inp, self.out = nn.Linear(8, 24), nn.Linear(24, 3)

    def forward(self, x):
        h = self.inp(x)
        byte = (torch.sigmoid(h) * 255).round().byte()
        return self.out(h * (byte / 255.0) + ((byte + 100) * 3).float() / 255.0)


def test_uint8_values_keep_their_range(tmp_path, amp_tools):
    """uint8 values computed in the step (TOSA has no unsigned type: torch-mlir made them i8, so 128..255 came
    back negative and a float's conversion saturated at 127) are int32 values taken modulo 256 where uint8
    wraps: fp32 within 1e-5 of PyTorch (0.10 off before)."""
    _torch_mlir()
    torch.manual_seed(0)
    step, _ = _trains_as_pytorch(_ByteLatents(), (torch.randn(8, 8), torch.randint(0, 3, (8,))), tmp_path,
                                 amp_tools, optimizer="sgd", lr=0.1)
    assert "ui8" not in step.text


class _ReassignedQueue(nn.Module):
    """A buffer the forward pass updates by reassignment (``self.mem = ...``, as MoCo's queues and running sums
    are written), not in place."""

    def __init__(self):
        super().__init__()
        self.inp, self.out = nn.Linear(8, 24), nn.Linear(24, 3)
        self.register_buffer("mem", torch.zeros(24))

    def forward(self, x):
        h = torch.tanh(self.inp(x))
        out = self.out(h - self.mem)
        self.mem = 0.5 * self.mem + h.mean(0).detach()
        return out


def test_buffer_reassigned_in_forward_is_updated(tmp_path, amp_tools):
    """The reassigned buffer's new value is the step's (it kept its initial value at every step, silently: 1.3e-2
    off PyTorch at step 2), fp32 within 1e-5 of PyTorch; the export leaves the user's module as it was (its
    eager check reassigned the attribute)."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _ReassignedQueue()
    before = model.mem
    _trains_as_pytorch(model, (torch.randn(8, 8), torch.tensor([0, 2, 1, 2, 0, 1, 1, 0])), tmp_path, amp_tools,
                       optimizer="sgd", lr=0.5)
    assert model.mem is before and torch.equal(before, torch.zeros(24))


class _PythonCounter(nn.Module):
    """A warm-up weight kept as a Python number on the module and advanced by the forward pass."""

    def __init__(self):
        super().__init__()
        self.inp, self.out = nn.Linear(8, 24), nn.Linear(24, 3)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.out(torch.tanh(self.inp(x)) * min(1.0, self.calls / 3))


def test_python_numbers_changed_by_the_forward_pass_are_named(tmp_path):
    """Python numbers the forward pass changes are constants of the captured step (as torch.export makes
    them): a SpecializationWarning names each with its values, and the user's module gets them back (the
    capture left ``calls`` advanced by its traces)."""
    _torch_mlir()
    from amp_mlir.torch._torch_mlir import SpecializationWarning

    model = _PythonCounter()
    with pytest.warns(SpecializationWarning, match=r"changes Python numbers it keeps on its modules \(calls 0 -> \d+\)"):
        export_train_step(model, F.cross_entropy, (torch.randn(4, 8), torch.randint(0, 3, (4,))), optimizer="sgd",
                          lr=0.1, out_dir=tmp_path)
    assert model.calls == 0


def _masked_select_loss(out, target):
    valid = target >= 0  # -1 marks a missing value
    return (torch.masked_select(out, valid) - torch.masked_select(target, valid)).pow(2).mean()


def test_masked_select_is_specialized(tmp_path, amp_tools):
    """``torch.masked_select`` (torch-mlir left it) through the mask's ``nonzero`` indices with the example's
    count, as ``t[mask]``: a SpecializationWarning names the count; fp32 within 1e-5 of PyTorch."""
    _torch_mlir()
    from amp_mlir.torch._torch_mlir import SpecializationWarning

    torch.manual_seed(0)
    target = torch.randn(5, 4)
    target[target < -0.5] = -1.0
    with pytest.warns(SpecializationWarning, match="nonzero count"):
        _trains_as_pytorch(nn.Linear(6, 4), (torch.randn(5, 6), target), tmp_path, amp_tools,
                           loss=_masked_select_loss, optimizer="sgd", lr=0.1)


class _TemperatureCE(nn.Module):
    """A criterion with its own trainable parameter (a learnable temperature)."""

    def __init__(self):
        super().__init__()
        self.log_t = nn.Parameter(torch.tensor(0.5))

    def forward(self, logits, target):
        return F.cross_entropy(logits / self.log_t.exp(), target) + 0.1 * self.log_t


def test_loss_module_parameters_train(tmp_path, amp_tools):
    """A loss module's own trainable parameters are parameters of the step (``loss_fn.<name>``), as an optimizer
    given them trains them (they were constants of the step, silently): fp32 within 1e-5 of PyTorch training
    model and criterion, AdamW with weight decay."""
    _torch_mlir()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 24), nn.Tanh(), nn.Linear(24, 3))
    step, _ = _trains_as_pytorch(model, (torch.randn(8, 8), torch.tensor([0, 2, 1, 2, 0, 1, 1, 0])), tmp_path,
                                 amp_tools, loss=_TemperatureCE(), optimizer="adamw", lr=0.05, weight_decay=0.1)
    assert [a["name"] for a in step.manifest["arguments"] if a["kind"] == "param"][-1] == "loss_fn.log_t"


class _ByteImages(nn.Module):
    """A classifier fed uint8 images, normalized inside."""

    def __init__(self):
        super().__init__()
        self.conv, self.head = nn.Conv2d(3, 4, 3), nn.Linear(4, 3)

    def forward(self, x):
        h = self.conv((x.float() / 255.0 - 0.5) / 0.25)
        return self.head(h.mean((2, 3)))


def test_uint8_image_input(tmp_path, amp_tools):
    """A uint8 model input is an int32 argument (its .npy int32; torch-mlir typed it i8 and amp-train refused
    the bytes), with the values 128..255 kept: fp32 within 1e-5 of PyTorch."""
    _torch_mlir()
    torch.manual_seed(0)
    images = torch.randint(0, 256, (4, 3, 8, 8), dtype=torch.uint8)
    step, _ = _trains_as_pytorch(_ByteImages(), (images, torch.tensor([0, 2, 1, 2])), tmp_path, amp_tools,
                                 optimizer="adamw", lr=0.01)
    arg = next(a for a in step.manifest["arguments"] if a["kind"] == "input")
    assert arg["dtype"] == "int32" and np.array_equal(np.load(step.out_dir / arg["file"]), images.numpy())


class _PlainStatistic(nn.Module):
    """A running statistic kept in a plain tensor attribute (not a registered buffer), updated by the forward
    pass in place or by reassignment; a plain tensor attribute only read (a constant table)."""

    def __init__(self, in_place):
        super().__init__()
        self.l1, self.l2 = nn.Linear(8, 32), nn.Linear(32, 3)
        self.stats, self.table, self.in_place = torch.zeros(32), torch.linspace(0, 1, 32), in_place

    def forward(self, x):
        h = torch.tanh(self.l1(x)) * self.table
        out = self.l2(h - self.stats)
        with torch.no_grad():
            if self.in_place:
                self.stats.mul_(0.5).add_(h.mean(0), alpha=0.5)
            else:
                self.stats = 0.5 * self.stats + 0.5 * h.mean(0)
        return out


@pytest.mark.parametrize("in_place", [True, False], ids=["in-place", "reassigned"])
def test_plain_tensor_attribute_updated_by_forward_is_state(in_place, tmp_path, amp_tools):
    """A plain tensor attribute the forward pass updates is state of the step like a buffer (in place: the
    capture stopped at PyTorch's functionalization assert; reassigned: it kept its first value, 8e-2 off at step
    2), the one it only reads stays a constant; the export leaves the user's tensors as they were: fp32 within
    1e-5 of PyTorch."""
    _torch_mlir()
    torch.manual_seed(0)
    model = _PlainStatistic(in_place)
    before = model.stats
    step, _ = _trains_as_pytorch(model, (torch.randn(8, 8), torch.tensor([0, 2, 1, 2, 0, 1, 1, 0])), tmp_path,
                                 amp_tools, optimizer="sgd", lr=0.5)
    kinds = {a["name"]: a["kind"] for a in step.manifest["arguments"]}
    assert kinds.get("buffer stats") == "buffer" and not any("table" in name for name in kinds)
    assert model.stats is before and torch.equal(before, torch.zeros(32))


class _DataAssignments(nn.Module):
    """A buffer updated by ``.data`` assignment and a weight clamped through ``.data``, as older code writes
    them."""

    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(8, 32), nn.Linear(32, 3)
        self.register_buffer("avg", torch.zeros(32))

    def forward(self, x):
        self.l1.weight.data.clamp_(-0.25, 0.25)
        h = torch.tanh(self.l1(x))
        out = self.l2(h - self.avg)
        self.avg.data = 0.5 * self.avg.data + 0.5 * h.detach().mean(0)
        return out


def test_data_assignment_updates_the_buffer(tmp_path, amp_tools):
    """``buffer.data = new`` is the buffer's new value (the storage swap was no op the trace recorded: the buffer
    kept its first value, silently, 7% off at step 2): fp32 within 1e-5 of PyTorch; ``Tensor.data`` is
    PyTorch's own again after the export."""
    _torch_mlir()
    torch.manual_seed(0)
    _trains_as_pytorch(_DataAssignments(), (torch.randn(8, 8), torch.tensor([0, 2, 1, 2, 0, 1, 1, 0])), tmp_path,
                       amp_tools, optimizer="sgd", lr=0.5)
    assert "data" not in torch.Tensor.__dict__


class _CenteredCE(nn.Module):
    """A loss module that keeps state in a buffer its forward pass updates (DINO's teacher centering)."""

    def __init__(self, in_place):
        super().__init__()
        self.register_buffer("center", torch.zeros(1, 3))
        self.in_place = in_place

    def forward(self, logits, target):
        loss = F.cross_entropy(logits - self.center, target)
        with torch.no_grad():
            new = 0.5 * self.center + 0.5 * logits.mean(0, keepdim=True)
            if self.in_place:
                self.center.copy_(new)
            else:
                self.center = new
        return loss


class _WithFrozenTeacher(nn.Module):
    """A student and a frozen teacher (frozen parameters: the export runs the model once to find their state)."""

    def __init__(self):
        super().__init__()
        self.student = nn.Sequential(nn.Linear(8, 24), nn.Tanh(), nn.Linear(24, 3))
        self.teacher = nn.Linear(8, 3).requires_grad_(False)

    def forward(self, x):
        return self.student(x) + 0.1 * self.teacher(x)


@pytest.mark.parametrize("in_place", [True, False], ids=["in-place", "reassigned"])
@pytest.mark.parametrize("teacher", [False, True], ids=["plain", "frozen-teacher"])
def test_loss_module_buffers_are_state(in_place, teacher, tmp_path, amp_tools):
    """A loss module's buffers are state of the step (``buffer loss_fn.center``): updated in place (the capture
    stopped at PyTorch's functionalization assert) or reassigned (kept its first value, silently): fp32 within
    1e-5 of PyTorch; the user's loss module is left as it was, also where the model's frozen parameters make the
    export run the model once (that run advanced the user's center, and the step started from it)."""
    _torch_mlir()
    torch.manual_seed(0)
    loss = _CenteredCE(in_place)
    before = loss.center
    model = _WithFrozenTeacher() if teacher else nn.Sequential(nn.Linear(8, 24), nn.Tanh(), nn.Linear(24, 3))
    step, _ = _trains_as_pytorch(model, (torch.randn(8, 8), torch.tensor([0, 2, 1, 2, 0, 1, 1, 0])), tmp_path,
                                 amp_tools, loss=loss, optimizer="sgd", lr=0.5)
    assert any(a["name"] == "buffer loss_fn.center" for a in step.manifest["arguments"])
    assert loss.center is before and torch.equal(before, torch.zeros(1, 3))


def test_parameters_outside_the_model_are_named(tmp_path):
    """A loss that closes over a trainable Parameter (and a layer kept in a plain list, not registered) is held
    constant by the step: a warning says so with the shapes, and none comes for a model without such
    parameters."""
    _torch_mlir()
    temperature = nn.Parameter(torch.tensor(0.5))
    hidden = [nn.Linear(3, 3)]

    class Listed(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 3)

        def forward(self, x):
            return hidden[0](self.lin(x))

    inputs = (torch.randn(4, 8), torch.tensor([0, 2, 1, 2]))
    with pytest.warns(UserWarning, match=r"neither the model's nor the loss module's \(shapes \[3, 3\], \[3\], \[\]\)"):
        export_train_step(Listed(), lambda out, t: F.cross_entropy(out / temperature, t), inputs, optimizer="sgd",
                          lr=0.1, out_dir=tmp_path / "a")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*neither the model's.*")
        export_train_step(nn.Linear(8, 3), F.cross_entropy, inputs, optimizer="sgd", lr=0.1, out_dir=tmp_path / "b")


def test_f16_convolution_filters_through_both_pipelines(tmp_path, amp_tools):
    """A TOSA-imported convolution step in f16, whose filters' casts amp-fuse-casts-into-copies fuses into
    their transposes and flips (and those into the widenings on the CPU; a 1x1 filter's through the reshape
    between them): its losses with the runtime's
    GEMMs (the pass runs) are those of the lowering's own loops (it does not; the same f16 roundings, so
    within 1e-6 over the first two steps: the forward's roundings and one update through the backward's
    fused casts; the third step amplifies the GEMMs' other summation order through an f16 rounding of an
    activation, 1.1e-5 on an AVX2 CPU, where fp32 and bf16 stay within 3e-7), and the GPU pipeline's
    emulated losses are the CPU's."""
    _torch_mlir()
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                          nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 6, 1), nn.Flatten(),
                          nn.Linear(6 * 6 * 6, 5))
    inputs = (torch.randn(2, 3, 6, 6), torch.tensor([1, 3]))
    step = export_train_step(model, F.cross_entropy, inputs, optimizer="sgd", lr=0.1, out_dir=tmp_path,
                             dialect="tosa")

    def losses(*options):
        out = _run([amp_tools["amp_train"], str(step.mlir_path), "--inputs", str(step.out_dir), "--steps", "3",
                    "--precision=f16", "--no-jit-cache", *options])
        return [json.loads(line)["loss"] for line in out.splitlines() if line.startswith("{")]

    gemm = losses()
    np.testing.assert_allclose(gemm[:2], losses("--cpu-gemm=loops")[:2], rtol=1e-6)
    assert losses("--device=cuda-emulated") == gemm
    fp32 = _fp32_losses(amp_tools, step, 3)
    assert max(abs(a - b) / abs(b) for a, b in zip(gemm, fp32)) > 1e-5
