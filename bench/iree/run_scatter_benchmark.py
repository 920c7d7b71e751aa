#!/usr/bin/env python3
"""IREE scatter benchmark: the IREE input's two lowerings of tosa.scatter, side by side.

    run_scatter_benchmark.py [--shapes N,K,W,C ...] [--repeats 7] [--out docs/benchmarks.md]

For each shape, a function holding one `tosa.scatter` of values_in [N, K, C], indices [N, W] (distinct,
random) and input [N, W, C] goes through `amp-opt --amp-tensor-input-pipeline` in two forms:

- gather: `amp-tosa-scatter-to-gather` with no limit (the pipeline's default): a reduction over w that
  finds each output row's writer, then a parallel gather;
- loop: `tosa-to-scf` first, upstream's `scf.for` of `tensor.insert_slice`s (what the IREE input kept
  for scatters above a limit of 2^24 comparisons until this benchmark).

Both are compiled by iree-compile (llvm-cpu, the host CPU) and called from iree.runtime; the result is
checked against numpy, and the median of --repeats calls is reported. Results go between
<!-- iree-scatter:begin --> and <!-- iree-scatter:end --> in --out. Run with build/venv/bin/python
(iree-base-compiler, iree-base-runtime) after building build/bin/amp-opt.
"""

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "build", "python"))
import run_pass_benchmark as rpb  # noqa: E402  (bench/: publish)

BEGIN = "<!-- iree-scatter:begin -->"
END = "<!-- iree-scatter:end -->"

# A classifier's cross-entropy backward (batch x classes rows, one per sample), masked writes of few or
# many rows, a square one (as many rows written as there are), wide rows, and batched scatters.
SHAPES = ["1,4096,32,1", "1,8192,512,1", "32,1000,1,1", "1,65536,256,1", "1,256000,256,1",
          "1,65536,512,4", "1,1048576,64,1", "1,1048576,1024,1", "1,16384,16384,1", "4,8192,512,64",
          "2,100000,2048,8"]


def scatter_module(n, k, w, c):
    v, i, x = f"tensor<{n}x{k}x{c}xf32>", f"tensor<{n}x{w}xi32>", f"tensor<{n}x{w}x{c}xf32>"
    return (f"func.func @main(%v: {v}, %i: {i}, %x: {x}) -> {v} {{\n"
            f"  %0 = tosa.scatter %v, %i, %x : ({v}, {i}, {x}) -> {v}\n"
            f"  return %0 : {v}\n}}\n")


def iree_input(amp_opt, shape, form, work):
    """The IREE input of the scatter, in `form` ("gather" or "loop")."""
    src, pre, out = (os.path.join(work, f"{form}.{name}.mlir") for name in ("src", "pre", "in"))
    with open(src, "w") as f:
        f.write(scatter_module(*shape))
    first = ("--tosa-to-scf" if form == "loop" else
             "--pass-pipeline=builtin.module(func.func(amp-tosa-scatter-to-gather))")
    subprocess.run([amp_opt, src, first, "-o", pre], check=True)
    subprocess.run([amp_opt, pre, "--amp-tensor-input-pipeline", "-o", out], check=True)
    with open(out) as f:
        if ("scf.for" in f.read()) != (form == "loop"):
            raise RuntimeError(f"{form}: the IREE input of {shape} is not in that form")
    return out


def measure(amp_opt, shape, form, repeats, work):
    import numpy as np
    import iree.runtime as rt
    from amp_mlir.iree import compile_step

    n, k, w, c = shape
    start = time.perf_counter()
    vmfb = compile_step(iree_input(amp_opt, shape, form, work), os.path.join(work, f"{form}.vmfb"))
    compile_s = time.perf_counter() - start
    config = rt.Config("local-task")
    context = rt.SystemContext(config=config)
    context.add_vm_module(rt.VmModule.mmap(config.vm_instance, vmfb))
    main = context.modules.module["main"]
    rng = np.random.default_rng(0)
    values = rng.standard_normal((n, k, c), dtype=np.float32)
    indices = np.stack([rng.choice(k, w, replace=False) for _ in range(n)]).astype(np.int32)
    rows = rng.standard_normal((n, w, c), dtype=np.float32)
    expected = values.copy()
    for b in range(n):
        expected[b, indices[b]] = rows[b]
    if not np.array_equal(main(values, indices, rows).to_host(), expected):
        raise RuntimeError(f"{form}: wrong result for {shape}")
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        main(values, indices, rows).to_host()
        times.append(time.perf_counter() - t0)
    return compile_s, statistics.median(times) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", nargs="+", default=SHAPES, help="N,K,W,C of each scatter")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks.md"))
    ap.add_argument("--amp-opt", default=os.path.join(REPO, "build", "bin", "amp-opt"))
    args = ap.parse_args()

    revision = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip() or "unknown"
    rows = []
    with tempfile.TemporaryDirectory(prefix="amp-iree-scatter-") as work:
        for text in args.shapes:
            shape = tuple(int(x) for x in text.split(","))
            gather = measure(args.amp_opt, shape, "gather", args.repeats, work)
            loop = measure(args.amp_opt, shape, "loop", args.repeats, work)
            n, k, w, c = shape
            rows.append(f"| {n} x {k} x {c} | {w} | {n * k * w / 2**20:.1f} | {gather[1]:.2f} | "
                        f"{loop[1]:.2f} | {loop[1] / gather[1]:.2f}x |")
            print(rows[-1], flush=True)
    threads = os.environ.get("OMP_NUM_THREADS", "default")
    lines = [BEGIN, "",
             "### tosa.scatter in IREE: the gather against upstream's loop "
             "(bench/iree/run_scatter_benchmark.py)", "",
             f"- iree-compile llvm-cpu for the host ({platform.machine()}, {os.cpu_count()} CPUs, "
             f"OMP_NUM_THREADS={threads}), iree.runtime local-task", 
             f"- date {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; revision {revision}; "
             f"median of {args.repeats} calls, results checked against numpy",
             "- gather: `amp-tosa-scatter-to-gather` (N x K x W index comparisons); loop: upstream's "
             "`tosa-to-scf` (N x W iterations)", "",
             "| values_in N x K x C | rows written W | comparisons (M) | gather ms | loop ms | loop / gather |",
             "|---|---:|---:|---:|---:|---:|"] + rows + [""]
    rpb.publish(lines, args.out, BEGIN, END)


if __name__ == "__main__":
    main()
