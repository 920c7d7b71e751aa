"""The op-coverage matrix (test/op-coverage, docs/OpCoverage.md) in make check: every op of the default
policy, in f32 / f16 / bf16, through the CPU pipeline (run, compared with numpy), the GPU pipeline (PTX
through ptxas) and the IREE path (run); the matrix regenerated here must equal docs/OpCoverage.md, so a
cell that regresses fails this test (and one that starts passing asks for the file to be regenerated
with `make op-coverage`)."""

import os
import subprocess
import sys

import pytest


def test_op_coverage_matrix(amp_tools, amp_mlir_native, repo_dir, tmp_path):
    pytest.importorskip("numpy")
    build = os.environ.get("AMP_MLIR_BUILD_DIR", str(repo_dir / "build"))
    proc = subprocess.run(
        [sys.executable, str(repo_dir / "test" / "op-coverage" / "op_coverage.py"), "--build", build,
         "--work", str(tmp_path), "--check", str(repo_dir / "docs" / "OpCoverage.md")],
        capture_output=True, text=True, timeout=3600)
    print(proc.stderr[-4000:])
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-4000:]
