"""Shared pytest configuration for the amp_mlir Python tests.

Puts python/ on sys.path (so `import amp_mlir` works from a source checkout) and locates the tools:
  AMP_MLIR_BIN  directory of amp-opt / amp-train (default: <repo>/build/bin)
  MLIR_OPT      Debian's mlir-opt 22 (default: /usr/lib/llvm-22/bin/mlir-opt, else mlir-opt on PATH)
"""

import os
import shutil
import sys
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]
REPO_DIR = PYTHON_DIR.parent
if str(PYTHON_DIR) not in sys.path:
    sys.path.insert(0, str(PYTHON_DIR))


def _amp_bin() -> Path:
    return Path(os.environ.get("AMP_MLIR_BIN", REPO_DIR / "build" / "bin"))


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
    return {"amp_opt": str(bindir / "amp-opt"), "amp_train": str(amp_train), "mlir_opt": _mlir_opt()}
