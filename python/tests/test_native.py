"""The native API: amp_mlir.run_pipeline (output, located MLIRError for malformed IR, bad pipelines, pass
failures) and amp_mlir.Trainer (bit-for-bit the numbers and parameters of amp-train on
examples/mlp_sgd.mlir in fp32 and f16, poisoned steps skipped with every argument kept, argument access)."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import amp_train_records

STEPS = 20


@pytest.fixture(scope="module")
def mlp_sgd(repo_dir):
    path = repo_dir / "examples" / "mlp_sgd.mlir"
    return path, path.read_text()


# --------------------------------------------------------------------------- run_pipeline
def test_run_pipeline_amp(amp_mlir_native, mlp_sgd, tmp_path):
    path, text = mlp_sgd
    report = tmp_path / "report.json"
    out = amp_mlir_native.run_pipeline(
        text, f"builtin.module(amp-pipeline{{precision=f16 report={report}}})", source_name=str(path))
    assert re.search(r"tosa\.matmul .*tensor<1x16x32xf16>", out)
    assert "amp.scale_state" in out and "amp.skipped" in out  # loss scaling threaded through
    assert "loc(" not in out
    summary = json.loads(report.read_text())["summary"]
    assert 0 < summary["low_precision_ops"] < summary["float_ops"]
    # the output is valid input again, and locations can be kept
    again = amp_mlir_native.run_pipeline(out, "builtin.module(canonicalize)", print_locations=True)
    assert "loc(" in again


def test_run_pipeline_cpu_lowering(amp_mlir_native, mlp_sgd):
    _, text = mlp_sgd
    out = amp_mlir_native.run_pipeline(text, "builtin.module(amp-pipeline{precision=bf16},amp-cpu-pipeline)")
    assert "llvm.func @_mlir_ciface_train_step" in out
    assert "tosa." not in out


def test_malformed_ir_raises_located_error(amp_mlir_native):
    ir = ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
          "  %b = tosa.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
          "  return %c : tensor<4xf32>\n"
          "}\n")
    with pytest.raises(amp_mlir_native.MLIRError) as info:
        amp_mlir_native.run_pipeline(ir, "builtin.module(canonicalize)", source_name="bad.mlir")
    assert re.search(r"^bad\.mlir:3:\d+: error: use of undeclared SSA value name", str(info.value), re.M), str(info.value)
    assert isinstance(info.value, RuntimeError)


def test_verifier_error_is_located(amp_mlir_native):
    ir = ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
          "  %b = \"tosa.add\"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi32>\n"
          "  return %a : tensor<4xf32>\n"
          "}\n")
    with pytest.raises(amp_mlir_native.MLIRError, match=r"(?m)^v\.mlir:2:\d+: error: ") as info:
        amp_mlir_native.run_pipeline(ir, "builtin.module(canonicalize)", source_name="v.mlir")
    assert "tosa.add" in str(info.value)


def test_bad_pass_option(amp_mlir_native, mlp_sgd):
    _, text = mlp_sgd
    with pytest.raises(amp_mlir_native.MLIRError) as info:
        amp_mlir_native.run_pipeline(text, "builtin.module(amp-pipeline{precision=f17})")
    message = str(info.value)
    assert "f17" in message and "precision" in message, message
    with pytest.raises(amp_mlir_native.MLIRError, match=r"error: .*'amp-no-such-pass'") as info:
        amp_mlir_native.run_pipeline(text, "builtin.module(amp-no-such-pass)")
    assert re.search(r"\d+:\d+: error: ", str(info.value)), str(info.value)  # position in the pipeline text


def test_loss_scaling_rules_are_the_pass_options(amp_mlir_native, amp_tools):
    # One list (LossScalingRules.def) with amp-loss-scaling's defaults (Passes.td), seen from Python
    # and from amp-opt's help alike.
    import amp_mlir
    rules = amp_mlir.loss_scaling_rules()
    assert rules == {"init_scale": 65536.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000,
                     "backoff_interval": 1, "min_scale": 0.0, "max_scale": 0.0}
    assert isinstance(rules["growth_interval"], int) and isinstance(rules["init_scale"], float)
    help_lines = subprocess.run([amp_tools["amp_opt"], "--help"], capture_output=True,
                                text=True).stdout.splitlines()
    # amp-loss-scaling's own options (Passes.td), but `mode`, are exactly the rules: an option added
    # to the pass and not to LossScalingRules.def fails here even where the static_asserts cannot
    # see it (a small field in the padding after `mode`).
    start = next(i for i, line in enumerate(help_lines) if line.strip().startswith("--amp-loss-scaling "))
    indent = len(help_lines[start]) - len(help_lines[start].lstrip())
    pass_options = set()
    for line in help_lines[start + 1:]:
        stripped = line.lstrip()
        if len(line) - len(stripped) <= indent and stripped.startswith("--"):
            break
        if stripped.startswith("--"):
            pass_options.add(stripped[2:].split("=")[0].split()[0].replace("-", "_"))
    assert pass_options - {"mode"} == set(rules), pass_options
    help_text = "\n".join(help_lines)
    for name in rules:
        assert f"--{name.replace('_', '-')}=" in help_text, name
    with pytest.raises(TypeError, match="init_scael"):
        amp_mlir.Trainer("module {}", init_scael=2.0)


@pytest.mark.parametrize("pipeline", ["func.func(amp-pipeline)", "builtin.module(func.func(amp-pipeline))",
                                      "builtin.module(func.func(amp-loss-scaling))"])
def test_misnested_pipeline_is_an_error(amp_mlir_native, mlp_sgd, pipeline):
    # Module passes under func.func: an LLVM fatal error in mlir-opt; here an MLIRError, and the process lives on.
    _, text = mlp_sgd
    with pytest.raises(amp_mlir_native.MLIRError, match=r"error: .*'builtin\.module'") as info:
        amp_mlir_native.run_pipeline(text, pipeline)
    assert "func.func" in str(info.value), str(info.value)
    assert amp_mlir_native.run_pipeline(text, "builtin.module(canonicalize)")


def test_pass_failure_is_located(amp_mlir_native):
    # strict=true: a float op the policy does not know fails amp-autocast at the op.
    ir = ("func.func @f(%t: tensor<4xf32>, %i: index) -> f32 {\n"
          "  %e = tensor.extract %t[%i] : tensor<4xf32>\n"
          "  return %e : f32\n"
          "}\n")
    with pytest.raises(amp_mlir_native.MLIRError) as info:
        amp_mlir_native.run_pipeline(ir, "builtin.module(amp-autocast{strict=true})", source_name="s.mlir")
    assert re.search(r"(?m)^s\.mlir:2:\d+: error: 'tensor\.extract' is not in the precision policy",
                     str(info.value)), str(info.value)


# --------------------------------------------------------------------------- Trainer vs amp-train
def _amp_train(tools, path, precision, *extra):
    return amp_train_records(tools["amp_train"], path, f"--precision={precision}", *extra, steps=STEPS,
                             timeout=120)


def _assert_rows_identical(cli_rows, py_rows):
    """amp-train prints %.9g (round-trips an f32) and null for non-finite numbers."""
    assert len(cli_rows) == len(py_rows)
    for cli, py in zip(cli_rows, py_rows):
        assert cli["step"] == py["step"] and cli["skipped"] == py["skipped"], (cli, py)
        for key in ("loss", "scale"):
            if cli[key] is None:
                assert not np.isfinite(py[key]), (key, cli, py)
            else:
                assert np.float32(cli[key]).tobytes() == np.float32(py[key]).tobytes(), (key, cli, py)


@pytest.mark.parametrize("precision, poison, lowering", [
    ("fp32", (), "inline"), ("f16", (), "inline"), ("f16", (3, 4, 11), "inline"), ("bf16", (), "inline"),
    ("f16", (3, 4, 11), "runtime"), ("f16", (3, 4, 11), "check-in-update"), ("bf16", (), "check-in-update"),
    ("f16", (3, 4, 11), "auto")])
def test_trainer_matches_amp_train(amp_mlir_native, amp_tools, mlp_sgd, tmp_path, precision, poison, lowering):
    path, _ = mlp_sgd
    # The same lowering on both sides (amp-train's CPU default, neither --lowering nor --check-in-update,
    # is the Trainer's "auto").
    extra = ["--dump", str(tmp_path / "dump")]
    extra += (["--check-in-update=true"] if lowering == "check-in-update"
              else [] if lowering == "auto"
              else [f"--lowering={lowering}", "--check-in-update=false"])
    if poison:
        extra.append("--poison-step=" + ",".join(map(str, poison)))
    cli = _amp_train(amp_tools, path, precision, *extra)
    if lowering == "runtime" and os.environ.get("AMP_MLIR_INSTALLED") == "1":
        # The runner looks for the runtime next to the module and in AMP_RUNTIME_DIR; a wheel has none
        # (Load.cpp, findRuntimeLibrary; "auto" picks check-in-update there instead).
        with pytest.raises(amp_mlir_native.MLIRError, match="cannot find libamp_runtime_cpu.so"):
            amp_mlir_native.Trainer.from_file(path, precision, lowering=lowering)
        return
    trainer = amp_mlir_native.Trainer.from_file(path, precision, lowering=lowering)
    rows = trainer.run(STEPS, poison_steps=poison)
    _assert_rows_identical(cli, rows)
    if poison:
        assert [r["step"] for r in rows if r["skipped"]] == list(poison)
    # the trained parameters are the ones amp-train dumps, bit for bit
    for arg in trainer.arguments:
        if arg.is_updated and not arg.is_scale_state:
            dumped = np.load(tmp_path / "dump" / f"arg{arg.index}.npy")
            assert dumped.dtype == trainer.argument(arg.index).dtype
            assert dumped.tobytes() == trainer.argument(arg.index).tobytes(), arg.name


@pytest.mark.parametrize("precision, lowering", [("f16", "runtime"), ("f16", "inline"), ("bf16", "runtime")])
def test_trainer_cuda_emulated_matches_amp_train(amp_mlir_native, amp_tools, mlp_sgd, tmp_path, precision,
                                                 lowering):
    """device="cuda-emulated" is amp-train --device=cuda-emulated (the GPU pipeline, kernels on the host),
    bit for bit, and trains like the CPU."""
    path, _ = mlp_sgd
    if os.environ.get("AMP_MLIR_INSTALLED") == "1":
        pytest.skip("the emulated GPU step links the build tree's CPU runtime")
    poison = (3, 4)
    cli = _amp_train(amp_tools, path, precision, "--device=cuda-emulated", f"--lowering={lowering}",
                     "--poison-step=3,4")
    trainer = amp_mlir_native.Trainer.from_file(path, precision, lowering=lowering, device="cuda-emulated")
    rows = trainer.run(STEPS, poison_steps=poison)
    _assert_rows_identical(cli, rows)
    # bf16 has no loss scaling by default: nothing is skipped, the loss is not finite from step 3 on.
    assert [r["step"] for r in rows if r["skipped"]] == (list(poison) if precision == "f16" else [])
    cpu = amp_mlir_native.Trainer.from_file(path, precision, lowering=lowering).run(STEPS, poison_steps=poison)
    for a, b in zip(cpu, rows):
        assert a["skipped"] == b["skipped"] and a["scale"] == b["scale"]
        if np.isfinite(a["loss"]):
            assert abs(a["loss"] - b["loss"]) <= 1e-4 * abs(a["loss"]), (a, b)


@pytest.mark.parametrize("native_bf16", [True, False])
def test_trainer_native_bf16_matches_amp_train(amp_mlir_native, amp_tools, repo_dir, native_bf16):
    """``native_bf16`` is amp-train's ``--cpu-native-bf16``. The step's matmul operand is an f32 subnormal
    (2^-130): rounding it to bf16 in integer code keeps it, as PyTorch's conversion does, on every host."""
    path = repo_dir / "test" / "Integration" / "Inputs" / "subnormal_bf16_step.mlir"
    cli = _amp_train(amp_tools, path, "bf16", f"--cpu-native-bf16={str(native_bf16).lower()}")
    rows = amp_mlir_native.Trainer.from_file(path, "bf16", native_bf16=native_bf16).run(STEPS)
    _assert_rows_identical(cli, rows)
    if not native_bf16:
        assert all(r["loss"] == np.float32(2.0**-127) for r in rows), rows


def test_trainer_device_errors(amp_mlir_native, mlp_sgd):
    path, _ = mlp_sgd
    with pytest.raises(ValueError, match="device must be one of"):
        amp_mlir_native.Trainer.from_file(path, "f16", device="tpu")


def test_trainer_option_names_come_from_the_library(amp_mlir_native, mlp_sgd):
    """The Trainer's enum options take the names of the C++ option tables (amp-train's spellings)."""
    from amp_mlir import _require_native

    tables = _require_native().enum_values()
    assert tables["lowering"] == {"inline": 0, "runtime": 1, "check-in-update": 2, "auto": 3}
    assert tables["precision"] == {"fp32": 0, "f16": 1, "bf16": 2}
    assert tables["device"] == {"cpu": 0, "cuda": 1, "cuda-emulated": 2}
    assert tables["loss_scaling"] == {"auto": 0, "dynamic": 1, "static": 2, "none": 3}
    path, _ = mlp_sgd
    for option, value in [("lowering", "fused"), ("loss_scaling", "adaptive")]:
        with pytest.raises(ValueError, match=f"{option} must be one of"):
            amp_mlir_native.Trainer.from_file(path, "f16", **{option: value})
    with pytest.raises(ValueError, match="precision must be one of"):
        amp_mlir_native.Trainer.from_file(path, "fp8")
    assert amp_mlir_native.Trainer.from_file(path, "f32").precision == "fp32"


def test_trainer_inputs_dir_matches_amp_train(amp_mlir_native, amp_tools, mlp_sgd, tmp_path):
    path, _ = mlp_sgd
    rng = np.random.default_rng(1)
    np.save(tmp_path / "arg4.npy", rng.standard_normal((16, 32)).astype(np.float32))  # x
    np.save(tmp_path / "arg5.npy", rng.integers(0, 10, 16).astype(np.int64))  # labels (i32 takes int64)
    cli = _amp_train(amp_tools, path, "f16", "--inputs", str(tmp_path), "--seed", "7")
    trainer = amp_mlir_native.Trainer.from_file(path, "f16", seed=7)
    _assert_rows_identical(cli, trainer.run(STEPS, inputs_dir=tmp_path))
    # run() with inputs_dir starts over: the same rows again
    _assert_rows_identical(cli, trainer.run(STEPS, inputs_dir=tmp_path))


def test_poisoned_step_keeps_arguments(amp_mlir_native, mlp_sgd):
    path, _ = mlp_sgd
    trainer = amp_mlir_native.Trainer.from_file(path, "f16")
    trainer.run(2)
    updated = [a.index for a in trainer.arguments if a.is_updated and not a.is_scale_state]
    assert len(updated) == 4
    before = {i: trainer.argument(i) for i in range(len(trainer.arguments))}
    scale_before = float(trainer.argument("scale"))
    row = trainer.step(poison=True)
    assert row["skipped"] and not np.isfinite(row["loss"])
    assert row["scale"] == scale_before * 0.5
    for i in updated + [4, 5]:  # parameters and the batch: bit for bit
        assert trainer.argument(i).tobytes() == before[i].tobytes(), trainer.arguments[i].name
    row = trainer.step()
    assert not row["skipped"] and np.isfinite(row["loss"])
    assert any(trainer.argument(i).tobytes() != before[i].tobytes() for i in updated)


def test_arguments_and_set_argument(amp_mlir_native, mlp_sgd):
    path, text = mlp_sgd
    trainer = amp_mlir_native.Trainer(text, "f16")
    args = trainer.arguments
    assert [a.name for a in args] == ["w1", "b1", "w2", "b2", "x", "labels", "scale", "growth_tracker",
                                      "overflow_tracker"]
    assert trainer.num_original_arguments == 6 and trainer.is_loss_scaled
    assert trainer.entry_name == "train_step"
    w1 = args[0]
    assert (w1.type, w1.dtype, w1.shape, w1.init, w1.updated_by) == (
        "tensor<32x64xf32>", "float32", (32, 64), "#amp.init<uniform(0.17)>", 0)
    assert args[5].dtype == "int32" and args[5].updated_by == -1 and not args[5].is_updated
    assert args[6].is_scale_state and trainer.argument("scale").item() == 65536.0
    assert np.abs(trainer.argument("w1")).max() <= 0.17

    w = np.full((32, 64), 0.01, np.float32)
    trainer.set_argument("w1", w)
    assert trainer.argument(0).tobytes() == w.tobytes()
    labels = np.arange(16, dtype=np.int64) % 10
    trainer.set_argument(5, labels)  # int64 into i32
    assert trainer.argument(5).dtype == np.int32 and (trainer.argument(5) == labels).all()
    with pytest.raises(ValueError, match=r"expects float32 with shape \(32, 64\), got float32 with shape \(64, 32\)"):
        trainer.set_argument(0, w.T.copy())
    with pytest.raises(ValueError, match="expects float32"):
        trainer.set_argument(0, np.zeros((32, 64), np.int32))
    with pytest.raises(TypeError, match="unsupported array dtype"):
        trainer.set_argument(0, np.zeros((32, 64), np.float64))
    with pytest.raises(ValueError, match="does not fit in i32"):
        trainer.set_argument(5, np.full(16, 2 ** 40, np.int64))
    with pytest.raises(KeyError):
        trainer.argument("nope")
    with pytest.raises(IndexError):
        trainer.argument(99)
    row = trainer.step()
    assert row["step"] == 0 and np.isfinite(row["loss"])


def test_trainer_errors_are_located(amp_mlir_native, mlp_sgd):
    path, text = mlp_sgd
    # A bad number is an error at the hint; a hint that does not suit its argument one at the function.
    bad = text.replace("#amp.init<uniform(0.17)>", "#amp.init<uniform(-0.17)>", 1)
    line = next(i for i, l in enumerate(bad.splitlines(), 1) if "%w1:" in l)
    with pytest.raises(amp_mlir_native.MLIRError, match=rf"(?m)^m\.mlir:{line}:\d+: error: "
                                                         r"#amp.init<uniform\(A\)> needs a finite non-negative"):
        amp_mlir_native.Trainer(bad, "fp32", source_name="m.mlir")
    bad = text.replace("#amp.init<uniform(0.17)>", "#amp.init<labels(10)>", 1)
    line = next(i for i, l in enumerate(bad.splitlines(), 1) if "func.func @train_step" in l)
    with pytest.raises(amp_mlir_native.MLIRError, match=rf"(?m)^m\.mlir:{line}:\d+: error: .*argument #0: "
                                                         r"#amp.init<labels> cannot initialise 'f32' elements"):
        amp_mlir_native.Trainer(bad, "fp32", source_name="m.mlir")
    with pytest.raises(amp_mlir_native.MLIRError, match="inputs directory '/no/such/dir' does not exist"):
        amp_mlir_native.Trainer(text, "fp32", inputs_dir="/no/such/dir")
    with pytest.raises(ValueError, match="precision"):
        amp_mlir_native.Trainer(text, "f8")


def test_trainer_without_initialization(amp_mlir_native, mlp_sgd):
    # A step whose argument has no hint needs an inputs directory, or initialize=False and set_argument.
    _, text = mlp_sgd
    no_hint = text.replace('{amp.init = #amp.init<normal(1.0)>}', "", 1)
    with pytest.raises(amp_mlir_native.MLIRError, match=r"argument #4 \(tensor<16x32xf32>\) has no amp.init hint"):
        amp_mlir_native.Trainer(no_hint, "fp32")
    trainer = amp_mlir_native.Trainer(no_hint, "f16", initialize=False)
    assert trainer.argument("scale").item() == 0.0 and not trainer.argument("w1").any()
    trainer.set_argument("x", np.ones((16, 32), np.float32))
    hinted = amp_mlir_native.Trainer(text, "f16")
    for a in trainer.arguments:
        if a.name != "x":
            trainer.set_argument(a.index, hinted.argument(a.index))
    hinted.set_argument("x", np.ones((16, 32), np.float32))
    assert trainer.run(3) == hinted.run(3)


def test_c_api_from_c(amp_tools, mlp_sgd):
    """amp-capi-smoke (C99 over include/amp-c/AmpMLIR.h) prints amp-train's lines."""
    path, _ = mlp_sgd
    smoke = os.path.join(os.path.dirname(amp_tools["amp_train"]), "amp-capi-smoke")
    assert os.path.exists(smoke), f"{smoke} is not built (ninja amp-capi-smoke)"
    r = subprocess.run([smoke, str(path), str(STEPS)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "argument 6: scale tensor<f32>" in r.stderr
    # The C enums' names and values, read from the library's option tables.
    assert "precision: fp32=0 f16=1 bf16=2\n" in r.stderr
    assert "loss-scaling: auto=0 dynamic=1 static=2 none=3\n" in r.stderr
    assert "lowering: inline=0 runtime=1 check-in-update=2 auto=3\n" in r.stderr
    assert "device: cpu=0 cuda=1 cuda-emulated=2\n" in r.stderr
    _assert_rows_identical(_amp_train(amp_tools, path, "f16"), [json.loads(l) for l in r.stdout.splitlines()])


def test_trainer_autocast_report_in_memory(amp_mlir_native, mlp_sgd, tmp_path):
    """Trainer.autocast_report (the C API's ampTrainerGetAutocastReport) is the report= file, made in memory."""
    path, _ = mlp_sgd
    report = amp_mlir_native.Trainer.from_file(path, "f16").autocast_report
    out = tmp_path / "report.json"
    amp_mlir_native.run_pipeline(open(path).read(), f"builtin.module(amp-pipeline{{precision=f16 report={out}}})",
                                 source_name=str(path))
    assert report == json.loads(out.read_text())
    assert report["precision"] == "f16" and report["summary"]["float_ops"] == len(report["ops"]) > 0
    assert {"function", "op", "location", "category", "precision", "reason"} <= set(report["ops"][0])
    assert amp_mlir_native.Trainer.from_file(path, "bf16").autocast_report["precision"] == "bf16"
    assert amp_mlir_native.Trainer.from_file(path, "fp32").autocast_report is None


def test_trainer_refuses_a_batch_that_fails_a_check(amp_mlir_native, repo_dir):
    """A batch that fails one of the step's checks (torch-mlir's, amp_mlir.torch's guards) is an error of
    step(), before the step runs: the embedding process lives on, nothing is updated, and the next good
    batch trains (amp-outline-batch-checks; in amp-train, exit status 3)."""
    path = repo_dir / "test" / "Codegen" / "CPU" / "Inputs" / "failing-check-step.mlir"
    # the GPU pipeline's step too (its checks compiled for the host on their own)
    for precision, device in (("fp32", "cpu"), ("f16", "cpu"), ("f16", "cuda-emulated")):
        trainer = amp_mlir_native.Trainer.from_file(path, precision, device=device)
        before = {a.index: trainer.argument(a.index) for a in trainer.arguments}
        for _ in range(2):
            with pytest.raises(amp_mlir_native.MLIRError,
                               match=r"failing-check-step\.mlir:16:3: error: the compiled step failed a check: "
                                     r"the ids' sum is not 100 \(the batch was refused before the step ran"):
                trainer.step()
        for index, value in before.items():
            np.testing.assert_array_equal(trainer.argument(index), value)
        assert trainer.steps_taken == 0
        trainer.set_argument("ids", np.full(4, 25, np.int32))
        rows = trainer.run(2)
        assert [r["step"] for r in rows] == [0, 1] and all(np.isfinite(r["loss"]) for r in rows), rows
        assert not np.array_equal(trainer.argument("w"), before[1])


def test_failed_check_is_located_with_its_call_stack(amp_mlir_native, repo_dir):
    """The error of a failed check of the batch is located at the op the check comes from (the check's
    `#amp.check` location), and a call-site location's callers follow as notes, as amp-train prints them."""
    path = repo_dir / "test" / "Codegen" / "CPU" / "Inputs" / "failing-check-step.mlir"
    assertion = 'cf.assert %ok, "the ids\' sum is not 100"'
    text = path.read_text()
    assert text.count(assertion) == 1
    text = text.replace(assertion, assertion + ' loc(callsite("model.py":7:0 at callsite("train.py":3:0 at "main.py":9:0)))')
    trainer = amp_mlir_native.Trainer(text, "fp32")
    with pytest.raises(amp_mlir_native.MLIRError) as failed:
        trainer.step()
    lines = str(failed.value).splitlines()
    assert lines[0].startswith("model.py:7:0: error: the compiled step failed a check: the ids' sum is not 100 (the "
                               "batch was refused"), lines
    assert lines[1:3] == ["train.py:3:0: note: called from", "main.py:9:0: note: called from"], lines


# --------------------------------------------------------------------------- OpenMP wait policy
_WAIT_PROBE = """
import sys
sys.path.insert(0, sys.argv[1])
if sys.argv[3] == "torch":
    import torch  # loads torch's own libgomp.so.1 before the runtime does
import amp_mlir
amp_mlir.Trainer.from_file(sys.argv[2], precision="fp32").run(1)
"""


@pytest.mark.parametrize("first, environment, spin_count", [
    ("amp_mlir", {}, "0"),  # nothing set: the Trainer makes idle workers sleep
    ("amp_mlir", {"OMP_WAIT_POLICY": "active"}, "30000000000"),  # the user's choice is kept
    ("torch", {}, "300000"),  # libgomp already loaded by torch: its default stays (docs/Python.md)
])
def test_trainer_openmp_wait_policy(amp_mlir_native, mlp_sgd, repo_dir, first, environment, spin_count):
    """libgomp prints the spin count it read (OMP_DISPLAY_ENV=verbose): 0 is OMP_WAIT_POLICY=passive."""
    if first == "torch":
        pytest.importorskip("torch")
    path, _ = mlp_sgd
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(environment, OMP_DISPLAY_ENV="verbose")
    r = subprocess.run([sys.executable, "-c", _WAIT_PROBE, str(repo_dir / "python"), str(path), first],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    if "GOMP_SPINCOUNT" not in r.stderr:
        pytest.skip("the runtime does not run on libgomp in this build")
    assert re.search(r"GOMP_SPINCOUNT = '%s'" % spin_count, r.stderr), r.stderr[-3000:]
