#!/usr/bin/env python3
"""ptxas register / spill report of the runtime's CUDA kernels.

Compiles runtime/lib/cuda/CudaKernels.cu with `nvcc -arch=sm_XX -Xptxas -v`
for each architecture and prints one markdown row per kernel: registers,
stack frame, spill stores, spill loads, constant bank bytes. Exit status 1
when any kernel spills (the target is 0; test/Runtime/ptxas-spills.test
checks the same).

  bench/runtime/ptxas_report.py [--arch sm_80 --arch sm_90] [--nvcc PATH]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCE = os.path.join(ROOT, "runtime", "lib", "cuda", "CudaKernels.cu")


def report(nvcc, arch):
    cmd = [nvcc, "-std=c++17", f"-arch={arch}", "-Xptxas", "-v",
           "-I" + os.path.join(ROOT, "runtime", "include"), "-c", SOURCE, "-o", os.devnull]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    rows, current = [], None
    for line in (out.stdout + out.stderr).splitlines():
        m = re.search(r"Compiling entry function '([^']+)' for '(\w+)'", line)
        if m:
            current = {"kernel": m.group(1), "arch": m.group(2)}
            rows.append(current)
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            current.update(stack=int(m.group(1)), stores=int(m.group(2)), loads=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            current["registers"] = int(m.group(1))
            c = re.search(r"(\d+) bytes cmem\[0\]", line)
            current["cmem"] = int(c.group(1)) if c else 0
    return " ".join(cmd), rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", action="append", default=None)
    parser.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    args = parser.parse_args()
    spilled = False
    print("| kernel | arch | registers | stack frame B | spill stores B | spill loads B | cmem[0] B |")
    print("|---|---|---:|---:|---:|---:|---:|")
    commands = []
    for arch in args.arch or ["sm_80", "sm_90"]:
        cmd, rows = report(args.nvcc, arch)
        commands.append(cmd)
        for r in rows:
            spilled |= r.get("stores", 0) > 0 or r.get("loads", 0) > 0
            print(f"| `{r['kernel']}` | {r['arch']} | {r.get('registers', '?')} | {r.get('stack', '?')} "
                  f"| {r.get('stores', '?')} | {r.get('loads', '?')} | {r.get('cmem', '?')} |")
    print()
    for cmd in commands:
        print("    " + cmd.replace(ROOT + "/", ""))
    return 1 if spilled else 0


if __name__ == "__main__":
    sys.exit(main())
