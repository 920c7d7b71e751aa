#!/usr/bin/env python3
"""Runtime benchmarks: writes the runtime section of docs/benchmarks.md.

1. CPU backend: build/runtime/amp_runtime_unscale_bench (unscale + check vs
   memcpy of the same bytes, one run).
2. CUDA kernels: ptxas registers / spills (ptxas_report.py) and an analytical
   time estimate against H100 SXM HBM3 bandwidth (3.35 TB/s): bytes moved /
   bandwidth, plus a launch-latency floor.

  bench/runtime/run_runtime_benchmark.py [--build build] [--out docs/benchmarks.md]
"""
import argparse
import datetime
import os
import platform
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BEGIN, END = "<!-- runtime:begin -->", "<!-- runtime:end -->"
HBM = 3.35e12  # bytes/s, H100 SXM
LAUNCH_US = 3.0  # typical launch + completion latency of a small kernel


def estimates():
    rows = []
    for label, elems, size in [("unscale f16, 1 B params", 1e9, 2), ("unscale bf16, 1 B params", 1e9, 2),
                               ("unscale f32, 1 B params", 1e9, 4), ("unscale f16, 100 M params", 1e8, 2),
                               ("unscale f16, 1 M params", 1e6, 2)]:
        moved = 2 * elems * size  # read + write in place
        rows.append((label, moved, moved / HBM * 1e6))
    for label, elems, size in [("check only (inv == 1) f16, 1 B params", 1e9, 2)]:
        moved = elems * size
        rows.append((label, moved, moved / HBM * 1e6))
    rows.append(("update_scale (16 B state)", 32, LAUNCH_US))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", default=os.path.join(ROOT, "docs", "benchmarks.md"))
    args = parser.parse_args()
    bench = subprocess.run([os.path.join(args.build, "runtime", "amp_runtime_unscale_bench")],
                           capture_output=True, text=True, check=True).stdout.strip()
    ptxas = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "runtime", "ptxas_report.py")],
                           capture_output=True, text=True).stdout.strip()
    cpu = open("/proc/cpuinfo").read()
    model = re.search(r"model name\s*:\s*(.*)", cpu)
    flags = re.search(r"flags\s*:\s*(.*)", cpu)
    isa = [f for f in ("avx2", "f16c", "avx512f") if flags and f in flags.group(1).split()]
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [BEGIN, "## Runtime (runtime/)", "",
             "Written by `bench/runtime/run_runtime_benchmark.py` (re-run it; do not edit by hand).", "",
             f"- Date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; amp-mlir {rev} (with uncommitted changes)",
             f"- Machine: {model.group(1) if model else platform.processor()}, {os.cpu_count()} hardware threads, "
             f"ISA extensions used by the dispatch: {', '.join(isa) or 'none (SSE2 loops)'}",
             "- Commands: `ninja -C build amp_runtime_unscale_bench && bench/runtime/run_runtime_benchmark.py` "
             "(runs `build/runtime/amp_runtime_unscale_bench` and `bench/runtime/ptxas_report.py`)", "",
             "### CPU backend: unscale + check vs memcpy (one run)", "",
             "One tensor of B bytes unscaled in place (reads B, writes B) against `memcpy` of B bytes between two "
             "buffers (reads B, writes B); GB/s = B / best of 30 runs; ratio = memcpy time / unscale time "
             "(target >= 0.8). 256 KiB stays in L2; 256 MiB goes to DRAM. Single thread, `-O3`, no `-march` "
             "(f16 uses F16C and bf16 AVX2 through run-time dispatch when the CPU has them, else SSE2 loops).", "",
             bench, "",
             "### CUDA kernels: ptxas (CUDA 13.0, no spills is the target)", "",
             ptxas, "",
             "### CUDA kernels: analytical time on H100 (not measured: no GPU here)", "",
             "Memory-bound estimate = bytes moved / 3.35 TB/s (H100 SXM HBM3); the unscale reads and writes every "
             "byte (2N for N bytes of gradients), the check-only case (inv == 1) reads N. A launch costs a few us "
             "whatever its size, so lists under ~10 MB are latency-bound; the single-thread update is latency only.", "",
             "| kernel | bytes moved | estimated time (us) |", "|---|---:|---:|"]
    for label, moved, us in estimates():
        lines.append(f"| {label} | {moved:.3g} | {us:.1f} |")
    lines += ["", END]
    section = "\n".join(lines) + "\n"
    text = open(args.out).read() if os.path.exists(args.out) else "# Benchmarks\n"
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        text = head + section + tail
    else:
        text = text.rstrip("\n") + "\n\n" + section
    open(args.out, "w").write(text)
    print(section)


if __name__ == "__main__":
    main()
