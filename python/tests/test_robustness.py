"""The Python API under threads and bad input (issue 26, first part): one Trainer stepped from several
threads gives the same parameters as the same steps from one thread (calls on a handle are
serialised); NUL characters inside IR or names are a ValueError instead of a silently cut input;
an inputs directory with arg<N>.npy for an argument the step does not have is an error naming it."""

import threading
from pathlib import Path

import numpy as np
import pytest

STEP = Path(__file__).resolve().parents[2] / "test" / "Integration" / "Inputs" / "small_step.mlir"
X = np.array([1.0, 2.0, 3.0, 4.0], np.float32)


def test_trainer_from_threads(amp_mlir_native):
    serial = amp_mlir_native.Trainer.from_file(STEP, "fp32", initialize=False)
    serial.set_argument(0, np.ones(4, np.float32))
    serial.set_argument(1, X)
    expected_losses = sorted(serial.step()["loss"] for _ in range(40))
    expected_w = serial.argument(0)

    shared = amp_mlir_native.Trainer.from_file(STEP, "fp32", initialize=False)
    shared.set_argument(0, np.ones(4, np.float32))
    shared.set_argument(1, X)
    losses, errors = [], []

    def work():
        try:
            for _ in range(10):
                losses.append(shared.step()["loss"])
                shared.argument(0)  # reads interleave with other threads' steps
        except Exception as error:  # noqa: BLE001
            errors.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    # 40 steps in some order: the same 40 losses (each step sees the previous one's update), the same w.
    assert sorted(losses) == expected_losses
    assert shared.argument(0).tobytes() == expected_w.tobytes()


def test_nul_in_ir_is_an_error(amp_mlir_native):
    text = STEP.read_text()
    cut = text.index("func.func")
    with pytest.raises(ValueError, match="NUL character at offset"):
        amp_mlir_native.run_pipeline(text[:cut] + "\0" + text[cut:], "builtin.module(canonicalize)")
    with pytest.raises(ValueError, match="NUL character"):
        amp_mlir_native.Trainer(text[:cut] + "\0" + text[cut:], "fp32")
    with pytest.raises(ValueError, match="NUL character"):
        amp_mlir_native.run_pipeline(text, "builtin.module(canonicalize)\0cse")


def test_unknown_input_file(amp_mlir_native, tmp_path):
    np.save(tmp_path / "arg1.npy", X)
    np.save(tmp_path / "arg5.npy", X)
    with pytest.raises(amp_mlir_native.MLIRError, match="holds arg5.npy but the step has 2 arguments"):
        amp_mlir_native.Trainer.from_file(STEP, "fp32", inputs_dir=tmp_path)


def test_report_to_a_full_device(amp_mlir_native):
    """report= on a full device: an MLIRError, where LLVM's stream error used to end the interpreter."""
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    text = (Path(__file__).resolve().parents[2] / "examples" / "mlp_sgd.mlir").read_text()
    with pytest.raises(amp_mlir_native.MLIRError, match="No space left on device"):
        amp_mlir_native.run_pipeline(text, "builtin.module(amp-autocast{report=/dev/full})")
    # The process goes on: the same call with a good pipeline works.
    assert "tosa" in amp_mlir_native.run_pipeline(text, "builtin.module(amp-autocast)")


def test_failed_run_writes_no_report(amp_mlir_native, tmp_path):
    """run_pipeline writes a pass's report only when the whole run succeeds, as amp-opt does."""
    text = (Path(__file__).resolve().parents[2] / "examples" / "mlp_sgd.mlir").read_text()
    report = tmp_path / "report.json"
    # amp-check-lowered fails on the autocast output (TOSA is not the LLVM dialect).
    with pytest.raises(amp_mlir_native.MLIRError, match="is left after"):
        amp_mlir_native.run_pipeline(text, f"builtin.module(amp-autocast{{report={report}}}, amp-check-lowered)")
    assert not report.exists()
    assert not list(tmp_path.iterdir())
    amp_mlir_native.run_pipeline(text, f"builtin.module(amp-autocast{{report={report}}})")
    assert report.exists()


def test_kill_9_mid_write_leaves_nothing_behind(amp_tools, repo_dir, tmp_path):
    """amp-opt killed with -9 while it works on OUT: OUT is not created (nothing half-written), its
    OUT.tmp-<pid>-* stays, and the next run for OUT removes it."""
    import signal
    import subprocess
    import sys
    import time

    graph = tmp_path / "big.mlir"
    with open(graph, "w") as out:
        subprocess.run([sys.executable, str(repo_dir / "bench" / "gen_training_graph.py"), "3000"], stdout=out,
                       stderr=subprocess.DEVNULL, check=True)
    target = tmp_path / "out.mlir"
    proc = subprocess.Popen([amp_tools["amp_opt"], str(graph), "--amp-pipeline", "--amp-cpu-pipeline", "-o",
                             str(target)], stderr=subprocess.DEVNULL)
    deadline = time.time() + 30
    while not list(tmp_path.glob("out.mlir.tmp-*")) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(0.5)
    if proc.poll() is not None:
        pytest.skip("amp-opt finished before it could be killed")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not target.exists()
    leftovers = list(tmp_path.glob("out.mlir.tmp-*"))
    assert leftovers == [tmp_path / f"out.mlir.tmp-{proc.pid}-{leftovers[0].name.split('-')[-1]}"]
    subprocess.run([amp_tools["amp_opt"], str(repo_dir / "examples" / "mlp_sgd.mlir"), "-o", str(target)],
                   check=True)
    assert target.exists()
    assert not list(tmp_path.glob("out.mlir.tmp-*"))


# Bad arguments to the Python API: each must raise a Python exception (never crash or exit the
# interpreter). Each probe runs in a child interpreter so that a crash is seen as one.
PROBES = {
    "precision": "amp_mlir.Trainer(text, 'f8')",
    "loss_scaling": "amp_mlir.Trainer(text, 'f16', loss_scaling='sometimes')",
    "lowering": "amp_mlir.Trainer(text, 'f16', lowering='magic')",
    "unknown rule": "amp_mlir.Trainer(text, 'f16', growth_rate=2)",
    "bad rule value": "amp_mlir.Trainer(text, 'f16', init_scale='big')",
    "negative interval": "amp_mlir.Trainer(text, 'f16', growth_interval=-5)",
    "opt level": "amp_mlir.Trainer(text, 'fp32', opt_level=9)",
    "entry": "amp_mlir.Trainer(text, 'fp32', entry='nope')",
    "policy file": "amp_mlir.Trainer(text, 'f16', policy='/nonexistent/policy.yaml')",
    "empty IR": "amp_mlir.Trainer('', 'fp32')",
    "not a step": "amp_mlir.Trainer('func.func @f() { return }', 'fp32')",
    "garbage IR": "amp_mlir.Trainer('func.func @f( {{{', 'fp32')",
    "inputs dir": "amp_mlir.Trainer(text, 'fp32', inputs_dir='/nonexistent')",
    "index": "amp_mlir.Trainer(text, 'fp32').argument(99)",
    "negative index": "amp_mlir.Trainer(text, 'fp32').argument(-1)",
    "name": "amp_mlir.Trainer(text, 'fp32').argument('nope')",
    "dtype": "amp_mlir.Trainer(text, 'fp32').set_argument(0, np.zeros((32, 64), np.float64))",
    "shape": "amp_mlir.Trainer(text, 'fp32').set_argument(0, np.zeros((3,), np.float32))",
    "object": "amp_mlir.Trainer(text, 'fp32').set_argument(0, object())",
    "dump target": "amp_mlir.Trainer(text, 'fp32').dump('/proc/no/such/dir')",
    "pipeline": "amp_mlir.run_pipeline(text, 'builtin.module(no-such-pass)')",
    "pipeline option": "amp_mlir.run_pipeline(text, 'builtin.module(amp-autocast{precision=f17})')",
    "pipeline nesting": "amp_mlir.run_pipeline(text, 'func.func(builtin.module(canonicalize))')",
    "pipeline type": "amp_mlir.run_pipeline(text, 42)",
    "ir type": "amp_mlir.run_pipeline(b'bytes', 'builtin.module(canonicalize)')",
    "huge tensor": "amp_mlir.Trainer(text.replace('tensor<32x64xf32>', 'tensor<1048576x1048576xf32>'), 'fp32')",
}


@pytest.mark.parametrize("probe", list(PROBES))
def test_bad_argument_raises(probe, amp_mlir_native, repo_dir):
    import subprocess
    import sys

    code = "\n".join([
        "import sys, numpy as np",
        f"sys.path.insert(0, {str(repo_dir / 'python')!r})",
        "import amp_mlir",
        f"text = open({str(repo_dir / 'examples' / 'mlp_sgd.mlir')!r}).read()",
        "try:",
        f"    {PROBES[probe]}",
        "except Exception as error:",
        "    print('raised', type(error).__name__, str(error).splitlines()[0][:200] if str(error) else '')",
        "else:",
        "    print('no exception')",
    ])
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"the interpreter died (status {proc.returncode}): {proc.stderr[-2000:]}"
    assert proc.stdout.startswith("raised "), proc.stdout + proc.stderr[-2000:]
