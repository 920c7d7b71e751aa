"""amp_mlir.compare on the MLP for 20 steps: the per-op precision table, the four loss curves, the
loss-scale trajectory of amp-mlir equal (bitwise) to PyTorch's GradScaler rule replayed on amp-mlir's own
overflow flags, report.json / report.txt / the PNG plot; and the command line."""

import json
import math
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (amp_mlir.compare needs torch)")

STEPS = 20
POISON = (3, 4, 12)  # forced overflows in both AMP runs
GROWTH_INTERVAL = 5  # so that the 20 steps also see the scale grow


@pytest.fixture(scope="module")
def report(amp_mlir_native, tmp_path_factory):
    from amp_mlir.compare import compare, make_model

    model, loss_fn, inputs, opt = make_model("mlp")
    out = tmp_path_factory.mktemp("compare_mlp")
    return compare(model, loss_fn, inputs, steps=STEPS, out_dir=out, name="mlp", poison_steps=POISON,
                   growth_interval=GROWTH_INTERVAL, **opt)


def test_precision_table(report):
    ops = report["ops"]
    kinds = {k["op"]: k for k in ops["kinds"]}
    for op in ["aten.addmm.default", "aten.mm.default", "aten.relu.default", "aten._log_softmax.default",
               "aten.nll_loss_forward.default", "aten.threshold_backward.default", "aten.sum.dim_IntList",
               "aten.mul.Tensor", "aten.sub.Tensor"]:
        assert op in kinds, op
    assert ops["aligned"], "the eager autocast run and the traced graph have the same op sequence"
    # both sides compute the matmuls in f16, the loss in f32 and the SGD update in f32
    assert kinds["aten.mm.default"]["torch"] == {"f16": 3}
    assert kinds["aten.mm.default"]["amp_mlir"] == {"f16": 3}
    assert kinds["aten.addmm.default"]["torch"] == {"f16": 2}
    assert kinds["aten._log_softmax.default"]["torch"] == {"f32": 1}
    assert kinds["aten._log_softmax.default"]["amp_mlir"] == {"f32": 1}
    assert kinds["aten.sub.Tensor"]["torch"] == {"f32": 4} and kinds["aten.sub.Tensor"]["amp_mlir"] == {"f32": 4}
    nodes = [r for r in ops["nodes"] if r["agree"] is not None]
    assert all(r["tosa_ops"] for r in nodes)
    s = ops["summary"]
    assert s["compared"] == len(nodes) >= 25 and 0 < s["agree"] <= s["compared"]
    assert s["percent"] == round(100.0 * s["agree"] / s["compared"], 1)
    assert ops["torch_casts"] > 0 and ops["amp_mlir_summary"]["casts_inserted"] > 0


def test_loss_curves(report):
    losses = report["losses"]
    assert set(losses) == {"torch_fp32", "torch_amp", "amp_mlir_fp32", "amp_mlir_amp"}
    assert all(len(v) == STEPS for v in losses.values())
    # amp-mlir fp32 follows PyTorch fp32 step by step
    assert report["loss_metrics"]["amp_mlir_fp32_vs_torch_fp32_max_rel"] < 1e-3
    assert losses["amp_mlir_fp32"][-1] < losses["amp_mlir_fp32"][0]
    # both AMP runs train (the poisoned steps report a non-finite loss)
    for key in ("torch_amp", "amp_mlir_amp"):
        finite = [v for i, v in enumerate(losses[key]) if i not in POISON]
        assert all(math.isfinite(v) for v in finite) and finite[-1] < finite[0], key
        assert all(not math.isfinite(losses[key][i]) for i in POISON), key


def test_loss_scale_matches_grad_scaler(report):
    sc = report["loss_scale"]
    assert sc["loss_scaled"]
    assert sc["replay_matches"], (sc["amp_mlir"], sc["replay"])
    assert sc["amp_mlir"] == sc["replay"]
    assert [i for i, f in enumerate(sc["amp_mlir_skipped"]) if f] == list(POISON)
    assert sc["flags_match"] and sc["trajectories_match"]
    assert sc["torch"] == sc["amp_mlir"]
    # backoff, then growth after GROWTH_INTERVAL clean steps
    assert sc["amp_mlir"][3] == 32768.0 and sc["amp_mlir"][4] == 16384.0
    assert sc["amp_mlir"][9] == 32768.0 and max(sc["amp_mlir"]) > 16384.0


def test_files(report):
    files = report["files"]
    with open(files["plot"], "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    data = json.loads(open(files["report_json"]).read())
    assert data["ops"]["kinds"] and data["loss_scale"]["replay_matches"] is True
    assert data["losses"]["amp_mlir_amp"][POISON[0]] is None  # non-finite -> null
    text = open(files["report_txt"]).read()
    for needle in ["1. Per-op precision", "aten.addmm.default", "agreement:", "2. Loss curves",
                   "3. Loss scale", "torch._amp_update_scale_ replay of amp-mlir's flags: EXACT"]:
        assert needle in text, needle


def test_command_line(amp_mlir_native, tmp_path, repo_dir):
    env = dict(os.environ)
    if env.get("AMP_MLIR_INSTALLED") != "1":  # the checkout, as conftest.py does
        env["PYTHONPATH"] = os.pathsep.join(p for p in [str(repo_dir / "python"), env.get("PYTHONPATH", "")] if p)
    r = subprocess.run([sys.executable, "-m", "amp_mlir.compare", "--model", "mlp", "--steps", "6", "--out",
                        str(tmp_path), "--poison-steps", "2"], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "1. Per-op precision" in r.stdout and "EXACT" in r.stdout
    assert (tmp_path / "report.json").exists() and (tmp_path / "loss_curves.png").exists()
