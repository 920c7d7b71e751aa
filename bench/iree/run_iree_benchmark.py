#!/usr/bin/env python3
"""IREE step-time benchmark: amp-mlir's rewritten training steps compiled and run by IREE.

    run_iree_benchmark.py [--target llvm-cpu|cuda] [--models mlp,block] [--sizes small]
                          [--steps 5] [--warmup 1] [--out docs/benchmarks.md]

The two models of the GPU benchmark (bench/gpu/run_gpu_benchmark.py: MLP 1024-4096-4096-1024-16 with
SGD, batch 512 / 8192; pre-norm transformer block d=512, 8 heads, B=16 / 128, T=128, with Adam), exported
from PyTorch once, then for fp32 (as written), bf16 (autocast, no loss scaling) and f16 (autocast +
dynamic loss scaling, the inline lowering): `amp-compile --target=iree-input`, `iree-compile` for the
target, and amp_mlir.iree.IreeStep for --warmup + --steps steps with the state on the device. Reports the
median step time, the first and last loss, and the number of dispatches (and how many are found-inf
reductions to i1) from bench/iree/dispatches.py. Results go between <!-- iree-step:begin --> and
<!-- iree-step:end --> in --out, with the target, machine, date and revision.

Needs torch (the export runs in a subprocess), iree-base-compiler, iree-base-runtime, and
build/bin/amp-compile; run with build/venv/bin/python.
"""

import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "build", "python"))
import dispatches as dsp  # noqa: E402
import run_pass_benchmark as rpb  # noqa: E402  (bench/: publish)

BEGIN = "<!-- iree-step:begin -->"
END = "<!-- iree-step:end -->"

EXPORT = """
import sys, torch
sys.path.insert(0, {bench!r})
import run_gpu_benchmark as g
from amp_mlir.torch import export_train_step
model, inputs, opt, title = g.build(sys.argv[1], sys.argv[2])
export_train_step(model, torch.nn.functional.cross_entropy, inputs, out_dir=sys.argv[3], **opt)
print(title)
"""


def export(model, size, out_dir):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(REPO, "build", "python")] + sys.path))
    script = EXPORT.format(bench=os.path.join(REPO, "bench", "gpu"))
    proc = subprocess.run([sys.executable, "-c", script, model, size, out_dir], env=env, check=True,
                          capture_output=True, text=True)
    return proc.stdout.strip().splitlines()[-1]


def initial_arguments(step_dir, contract):
    """The exporter's arg<N>.npy files, then the loss-scale state (65536, 0, 0)."""
    import numpy as np

    arrays = []
    for spec in contract["arguments"]:
        path = os.path.join(step_dir, f"arg{spec['index']}.npy")
        if os.path.exists(path):
            arrays.append(np.load(path))
        elif spec["role"] == "scale":
            arrays.append(np.array(65536.0, dtype=np.float32))
        elif spec["role"] in ("growth_tracker", "overflow_tracker"):
            arrays.append(np.array(0, dtype=np.int32))
        else:
            raise RuntimeError(f"no initial value for argument {spec['index']}")
    return arrays



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", default="llvm-cpu", choices=["llvm-cpu", "cuda"])
    ap.add_argument("--models", default="mlp,block")
    ap.add_argument("--sizes", default="small")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks.md"))
    ap.add_argument("--amp-compile", default=os.path.join(REPO, "build", "bin", "amp-compile"))
    ap.add_argument("--revision", default=None)
    args = ap.parse_args()

    from amp_mlir.iree import IreeStep, compile_step

    driver = "local-task" if args.target == "llvm-cpu" else "cuda"
    extra = ["--iree-cuda-target=sm_80"] if args.target == "cuda" else []
    revision = args.revision or subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                                               capture_output=True, text=True).stdout.strip() or "unknown"
    rows = []
    work = tempfile.mkdtemp(prefix="amp-iree-bench-")
    try:
        for model in args.models.split(","):
            for size in args.sizes.split(","):
                step_dir = os.path.join(work, f"{model}-{size}")
                title = export(model, size, step_dir)
                for precision in ["fp32", "bf16", "f16"]:
                    iree_input = os.path.join(step_dir, f"step.{precision}.mlir")
                    subprocess.run([args.amp_compile, os.path.join(step_dir, "train_step.mlir"),
                                    "--target=iree-input", f"--precision={precision}", "-o", iree_input],
                                   check=True)
                    start = time.perf_counter()
                    vmfb = compile_step(iree_input, os.path.join(step_dir, f"step.{precision}.vmfb"),
                                        target=args.target, extra_args=extra)
                    compile_s = time.perf_counter() - start
                    names = dsp.dispatches(iree_input, args.target,
                                           os.path.join(os.path.dirname(sys.executable), "iree-compile"))
                    step = IreeStep.load(vmfb, driver=driver)
                    step.set_arguments(initial_arguments(step_dir, step.contract))
                    times, losses = [], []
                    for k in range(args.warmup + args.steps):
                        t0 = time.perf_counter()
                        row = step.step()
                        times.append((time.perf_counter() - t0) * 1e3)
                        losses.append(row["loss"])
                    result = {"title": title, "precision": precision, "ms": statistics.median(times[args.warmup:]),
                              "compile_s": compile_s, "loss0": losses[0], "loss_last": losses[-1],
                              "dispatches": len(names), "found_inf": sum(1 for n in names if n.endswith("xi1"))}
                    print(result, flush=True)
                    rows.append(result)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    from importlib.metadata import version
    machine = (f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs"
               if args.target == "llvm-cpu" else "CUDA device (see the GPU benchmark for its name)")
    L = [BEGIN, "", f"### IREE step time ({args.target})", "",
         f"- IREE {version('iree-base-compiler')} from PyPI; target {args.target} ({machine})",
         f"- date {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; "
         f"revision {revision}; median of {args.steps} steps after {args.warmup} warm-up",
         "", "| model | precision | ms / step | dispatches | found-inf reductions to i1 | loss first -> last "
         "| iree-compile s |", "|---|---|---:|---:|---:|---|---:|"]
    for r in rows:
        L.append(f"| {r['title']} | {r['precision']} | {r['ms']:.1f} | {r['dispatches']} | {r['found_inf']} | "
                 f"{r['loss0']:.4f} -> {r['loss_last']:.4f} | {r['compile_s']:.1f} |")
    rpb.publish(L + [""], args.out, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
