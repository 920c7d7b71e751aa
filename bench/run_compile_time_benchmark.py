#!/usr/bin/env python3
"""Compile-time and memory benchmark of the CPU lowering (issue 23).

    run_compile_time_benchmark.py [--sizes 1000,3000,10000] [--big-width 1024]
                                  [--out docs/benchmarks.md] [--amp-opt PATH] [--timeout S]

For every size N, a TOSA training step of about N ops (bench/gen_training_graph.py) goes through

    amp-opt FILE --amp-pipeline --amp-cpu-pipeline -o /dev/null

and the wall time and the peak resident memory of that process (os.wait4's ru_maxrss) are recorded,
with the per-op ratios that show whether they grow linearly. One more step has tensors of 1M
elements (width --big-width: DxD weights, a batch of D rows) and few ops: its compile time must not
depend on the element count (vectorisation and unrolling do not grow with it). The table goes into
--out between <!-- compile-time:begin --> and <!-- compile-time:end -->. Standard library only.
"""

import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BEGIN, END = "<!-- compile-time:begin -->", "<!-- compile-time:end -->"


def measure(cmd, timeout):
    """(seconds, peak RSS in MiB, exit status) of one run; status None on timeout."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = start + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            return time.perf_counter() - start, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)
        if time.perf_counter() > deadline:
            proc.kill()
            _, _, usage = os.wait4(proc.pid, 0)
            return time.perf_counter() - start, usage.ru_maxrss / 1024, None
        time.sleep(0.05)


def generate(path, args):
    with open(path, "w") as out:
        subprocess.run([sys.executable, str(HERE / "gen_training_graph.py")] + args, stdout=out,
                       stderr=subprocess.PIPE, check=True)
    return sum(1 for line in open(path) if " = " in line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,3000,10000")
    ap.add_argument("--big-width", type=int, default=1024)
    ap.add_argument("--amp-opt", default=str(HERE.parent / "build" / "bin" / "amp-opt"))
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--out", help="Markdown file to update between the markers")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(f"{n} ops", ["%d" % n]) for n in (int(s) for s in args.sizes.split(","))]
        d = args.big_width
        cases.append((f"{d}x{d} tensors", ["1", "--width", str(d), "--batch", str(d)]))
        for label, gen_args in cases:
            path = Path(tmp) / "step.mlir"
            ops = generate(path, gen_args)
            seconds, rss, status = measure([args.amp_opt, str(path), "--amp-pipeline", "--amp-cpu-pipeline",
                                            "-o", os.devnull], args.timeout)
            result = "ok" if status == 0 else ("timeout" if status is None else f"exit {status}")
            rows.append((label, ops, seconds, rss, result))
            print(f"{label}: {ops} ops, {seconds:.2f} s, {rss:.0f} MiB peak RSS, {result}", flush=True)
    base = rows[0]
    lines = [BEGIN, "",
             f"`python3 bench/run_compile_time_benchmark.py --sizes {args.sizes} --big-width {args.big_width}` "
             f"({datetime.date.today()}, {platform.machine()}, {os.cpu_count()} cores): "
             "`amp-opt FILE --amp-pipeline --amp-cpu-pipeline -o /dev/null`, wall time and peak RSS of the process.",
             "", "| step | ops | time (s) | peak RSS (MiB) | ms / op | KiB / op | time vs linear from the first row | result |",
             "|---|---|---|---|---|---|---|---|"]
    for label, ops, seconds, rss, result in rows:
        linear = base[2] * ops / base[1]
        lines.append(f"| {label} | {ops} | {seconds:.2f} | {rss:.0f} | {1000 * seconds / ops:.2f} | "
                     f"{1024 * rss / ops:.0f} | {seconds / linear:.1f}x | {result} |")
    lines += ["", END]
    text = "\n".join(lines)
    print(text)
    if args.out:
        doc = Path(args.out).read_text()
        if BEGIN in doc:
            doc = doc[:doc.index(BEGIN)] + text + doc[doc.index(END) + len(END):]
        else:
            doc += "\n## CPU lowering compile time and memory (bench/run_compile_time_benchmark.py)\n\n" + text + "\n"
        Path(args.out).write_text(doc)
    return 0 if all(r[4] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
