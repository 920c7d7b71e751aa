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
