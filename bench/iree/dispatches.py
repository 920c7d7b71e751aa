#!/usr/bin/env python3
"""The dispatch structure IREE makes of a training step: compiles `amp-compile --target=iree-input`
output to IREE's flow level and lists every dispatch (IREE names them after what they compute:
elementwise, matmul, reduction ... with shapes and element types), with a count per kind.

    dispatches.py STEP.iree.mlir [--target llvm-cpu|cuda] [--iree-compile PATH]

Reductions to i1 (`reduction_N_f32xi1`) are the found-inf checks of the loss-scaling lowering.
Standard library only; needs iree-compile (pip install iree-base-compiler).
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile

# f64 kept, as amp_mlir.iree.compile_step keeps it (KEEP_F64 there)
TARGET_FLAGS = {
    "llvm-cpu": ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
                 "--iree-llvmcpu-target-cpu=host", "--iree-input-demote-f64-to-f32=false"],
    "cuda": ["--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80", "--iree-input-demote-f64-to-f32=false"],
}


def dispatches(path, target="llvm-cpu", iree_compile=None):
    """The dispatch names of the step in `path`, in order."""
    tool = iree_compile or shutil.which("iree-compile") or os.path.join(os.path.dirname(sys.executable),
                                                                       "iree-compile")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "flow.mlir")
        subprocess.run([tool, path, *TARGET_FLAGS[target], "--compile-to=flow", "-o", out], check=True,
                       capture_output=True, text=True)
        text = open(out).read()
    return re.findall(r"flow\.executable\.export public @(\w+)", text)


def kind(name):
    """'reduction f32xi1' for train_step_dispatch_22_reduction_2048_f32xi1."""
    m = re.match(r".*?_dispatch_\d+_?(.*)$", name)
    rest = m.group(1) if m else name
    words = [w for w in rest.split("_") if not re.fullmatch(r"[0-9x]+", w)]
    return " ".join(words) or "(unnamed: scalar code)"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step")
    ap.add_argument("--target", default="llvm-cpu", choices=sorted(TARGET_FLAGS))
    ap.add_argument("--iree-compile", default=None)
    args = ap.parse_args()
    names = dispatches(args.step, args.target, args.iree_compile)
    for name in names:
        print(name)
    print(f"{len(names)} dispatches:", ", ".join(f"{n} {k}" for k, n in
                                              collections.Counter(kind(x) for x in names).most_common()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
