"""Shared pytest configuration for the amp_mlir Python tests.

Puts python/ on sys.path (so `import amp_mlir` works from a source checkout; the package then loads
its native module from the CMake build tree) and locates the tools:
  AMP_MLIR_BUILD_DIR  CMake build tree holding python/amp_mlir/_amp_mlir_native*.so (default: <repo>/build)
  AMP_MLIR_BIN        directory of amp-opt / amp-train (default: $AMP_MLIR_BUILD_DIR/bin)
  MLIR_OPT            Debian's mlir-opt 22 (default: /usr/lib/llvm-22/bin/mlir-opt, else mlir-opt on PATH)
With AMP_MLIR_INSTALLED=1 the tests import the installed amp_mlir (pip install ./python) instead.
"""

import json
import os
import shutil
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]
REPO_DIR = PYTHON_DIR.parent
if os.environ.get("AMP_MLIR_INSTALLED") != "1" and str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))


def pytest_configure(config):
    """triton (which torch's make_fx imports through torch._inductor) and torch-mlir's MLIR each carry
    their own LLVM; loaded after IREE has run in the same process they segfault at import. Load them
    first, so that the tests' order does not matter.

    A package that is not installed is fine: the tests that need it skip and say so. One that is
    installed but fails to import (a half-finished install, a full disk) stops the run here with its
    own error: torch refuses a second import, so every test would otherwise report only "`torch` can
    only be initialized once per process" and hide the cause."""
    for module in ("torch._inductor", "torch_mlir.fx"):
        package = module.split(".")[0]
        try:
            __import__(module)
        except ModuleNotFoundError as error:
            if error.name != package:  # the package is there, one of its own imports is not
                _broken_package(module, error)
        except Exception as error:
            _broken_package(module, error)


# The suite's longest tests and their rough cost in seconds: `--durations=0` of a run on 2 pytest-xdist
# workers of a 2-core VM beside a build (2026-12-05), the model zoo's less the two IREE precisions
# make check no longer runs. `--dist worksteal` hands each worker a contiguous share of the collected
# order and lets an idle worker take tests from the end of another's queue, never a running one: a
# long test collected late becomes the run's tail (that run ended with mobilenet_v3_small's linalg
# import and vit_tiny, minutes after the rest). pytest_collection_modifyitems puts them at the front of
# the workers' shares, spread so that each share's long tests add up to about the same (longest
# first, each to the share with the least so far).
SLOW_TESTS = {
    "test_model_zoo.py::test_model_trains_like_pytorch[mobilenet_v3_small]": 650,
    "test_op_coverage.py::test_op_coverage_matrix": 475,
    "test_model_zoo.py::test_linalg_import_trains_like_pytorch[mobilenet_v3_small]": 450,
    "test_model_zoo.py::test_model_trains_like_pytorch[resnet18]": 450,
    "test_torch_export.py::test_spectral_linear_algebra": 215,
    "test_model_zoo.py::test_model_trains_like_pytorch[lstm]": 150,
    "test_iree.py::test_beit_relative_position_bias_on_llvm_cpu": 155,
    "test_torch_export.py::test_pivoted_elimination_on_the_gpu_pipeline": 140,
    "test_decompositions.py::test_eigh[16]": 135,
    "test_model_zoo.py::test_model_trains_like_pytorch[vit_tiny]": 120,
    "test_model_zoo.py::test_model_trains_like_pytorch[bert]": 115,
    "test_model_zoo.py::test_model_trains_like_pytorch[gpt2]": 95,
    "test_model_zoo.py::test_linalg_import_trains_like_pytorch[gpt2]": 95,
}


def _share_sizes(count, workers):
    """The contiguous shares xdist's WorkStealingScheduling.check_schedule sends to idle workers."""
    sizes = []
    for i in range(workers):
        sizes.append(count // (workers - i))
        count -= sizes[-1]
    return sizes


def _cost(item):
    """The item's rough cost in SLOW_TESTS (keyed by file and test), or None."""
    return SLOW_TESTS.get(item.nodeid.rsplit("/", 1)[-1])


def pytest_collection_modifyitems(config, items):
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    slow = sorted((i for i in items if _cost(i) is not None), key=lambda i: -_cost(i))
    rest = [i for i in items if _cost(i) is None]
    shares, load = [[] for _ in range(workers)], [0] * workers
    for item in slow:
        k = load.index(min(load))
        shares[k].append(item)
        load[k] += _cost(item)
    ordered = []
    for share, size in zip(shares, _share_sizes(len(items), workers)):
        take = max(0, size - len(share))
        ordered += share + rest[:take]
        rest = rest[take:]
    items[:] = ordered + rest


def _broken_package(module, error):
    where = "".join(traceback.format_exception(error)[-6:])
    pytest.exit(f"{module.split('.')[0]} is installed but {module} does not import ({sys.executable}); "
                f"reinstall it, or remove it to skip the tests that need it:\n{where}",
                returncode=pytest.ExitCode.USAGE_ERROR)


def _build_dir() -> Path:
    return Path(os.environ.get("AMP_MLIR_BUILD_DIR", REPO_DIR / "build"))


def _amp_bin() -> Path:
    return Path(os.environ.get("AMP_MLIR_BIN", _build_dir() / "bin"))


def _mlir_opt():
    env = os.environ.get("MLIR_OPT")
    if env:
        return env
    deb = Path("/usr/lib/llvm-22/bin/mlir-opt")
    if deb.exists():
        return str(deb)
    return shutil.which("mlir-opt-22") or shutil.which("mlir-opt")


@pytest.fixture(scope="session")
def amp_tools():
    """Paths of amp-opt, amp-train and mlir-opt; skips when amp-train is not built."""
    bindir = _amp_bin()
    amp_train = bindir / "amp-train"
    if not (amp_train.exists() and os.access(amp_train, os.X_OK)):
        pytest.skip(f"amp-train is not built ({amp_train}); build it with `ninja -C build amp-train`")
    return {"amp_opt": str(bindir / "amp-opt"), "amp_train": str(amp_train),
            "amp_compile": str(bindir / "amp-compile"), "mlir_opt": _mlir_opt()}


@pytest.fixture(scope="session")
def amp_mlir_native():
    """The amp_mlir package with its native module; skips when the module is not built."""
    import amp_mlir

    if not amp_mlir.native_available():
        pytest.skip(f"amp_mlir's native module is not built or cannot be loaded ({amp_mlir._native_error}); "
                    "build it with `ninja -C build _amp_mlir_native`")
    return amp_mlir


@pytest.fixture(scope="session")
def repo_dir() -> Path:
    return REPO_DIR


def amp_train_records(amp_train, mlir, *flags, steps, timeout=600):
    """``amp-train MLIR --steps STEPS FLAGS...``'s per-step JSON records (step, loss, scale, skipped, ...),
    asserting that it succeeded (with its command and the tail of its stderr). The tests' amp-train
    helpers (the ``train_records`` fixture, test_torch_export's, test_native's, test_weight_averages')
    all run it through this; import it with ``from conftest import amp_train_records``."""
    cmd = [str(amp_train), str(mlir), "--steps", str(steps), *map(str, flags)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-4000:]}"
    return [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]


@pytest.fixture(scope="session")
def train_records(amp_tools):
    """A function ``(step_dir, *flags, steps=3)`` that runs ``amp-train`` on ``step_dir``'s exported step
    (its train_step.mlir and initial arrays) and returns its per-step JSON records (loss, scale,
    skipped, ...); it asserts that amp-train succeeded."""

    def run(step_dir, *flags, steps=3):
        return amp_train_records(amp_tools["amp_train"], Path(step_dir) / "train_step.mlir", "--inputs", step_dir,
                                 "--no-jit-cache", *flags, steps=steps)

    return run


@pytest.fixture(scope="session")
def guarded_gpu_lowering(amp_tools):
    """A function ``(step, lowered, precision="f16")`` that compiles ``step`` through the GPU pipeline
    (``amp-compile --target=cuda --emit=gpu``) into ``lowered`` and returns the structural guard's report
    on it (test/tools/check_gpu_structure.py), asserting that the guard found no violation."""

    def run(step, lowered, precision="f16"):
        subprocess.run([amp_tools["amp_compile"], str(step), "--target=cuda", "--emit=gpu", f"--precision={precision}",
                        "-o", str(lowered)], check=True, capture_output=True, text=True)
        guard = subprocess.run([sys.executable, str(REPO_DIR / "test" / "tools" / "check_gpu_structure.py"),
                                str(step), str(lowered)], capture_output=True, text=True)
        assert guard.returncode == 0, guard.stdout + guard.stderr
        return guard.stdout

    return run
