#!/usr/bin/env python3
"""CPU step time at real sizes: amp-train against PyTorch on the same machine, in one run.

    run_cpu_step_benchmark.py [--models mlp,block] [--steps 5] [--warmup 1] [--rounds 2] [--threads N]
                              [--out docs/benchmarks.md] [--amp-train build/bin/amp-train]

The GPU benchmark's models at their small size (bench/gpu/run_gpu_benchmark.py: the MLP
1024-4096-4096-1024-16 with batch 512, cross-entropy and SGD; --models block adds the transformer block
d=512, B=16, T=128 with Adam, on by default), exported from PyTorch once (in a subprocess), then:

  amp-train --precision=fp32 / f16 (dynamic loss scaling) / bf16, and f16 --loss-scaling=none,
            --timing   median "ms" after --warmup
  PyTorch eager fp32 and bf16 autocast (torch.autocast("cpu")), torch.set_num_threads(--threads)

Every configuration runs --rounds times, the rounds interleaved, and keeps its fastest round's
median: other work on a shared machine only adds time, and runs here vary by about 10%.

amp-train's start-up is reported too: compile_ms of a run with a cold JIT cache (a fresh cache
directory) and of a second run that loads the step from the cache. The first and last loss of every run
show that the runs are real and agree.

AMP against its predicted cost: amp-autocast's report (report=) gives bytes_converted, the bytes the
inserted casts read and write per step; divided by this machine's copy bandwidth (a 256 MiB numpy copy,
bytes read + written per second) that is the time the casts should cost. The table sets it next to
what the AMP steps cost over our fp32 step. Results go between <!-- cpu-vs-torch:begin --> and
<!-- cpu-vs-torch:end --> in --out. Run with build/venv/bin/python (torch).
"""

import argparse
import copy
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "gpu"))
sys.path.insert(0, os.path.join(REPO, "build", "python"))
import run_gpu_benchmark as gpu  # noqa: E402
import run_pass_benchmark as rpb  # noqa: E402

BEGIN = "<!-- cpu-vs-torch:begin -->"
END = "<!-- cpu-vs-torch:end -->"

EXPORT = """
import sys, torch
sys.path.insert(0, {bench!r})
import run_gpu_benchmark as g
from amp_mlir.torch import export_train_step
model, inputs, opt, title = g.build(sys.argv[1], "small")
export_train_step(model, torch.nn.functional.cross_entropy, inputs, out_dir=sys.argv[2], **opt)
"""


def amp_train(tool, step_dir, precision, steps, warmup, cache_dir, extra=()):
    cmd = [tool, os.path.join(step_dir, "train_step.mlir"), "--inputs", step_dir, f"--precision={precision}",
           "--steps", str(warmup + steps), "--timing", "--jit-cache-dir", cache_dir, *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    compile_info = json.loads(next(x for x in proc.stderr.splitlines() if x.startswith('{"compile_ms"')))
    return {"ms": statistics.median(x["ms"] for x in lines[warmup:]), "loss0": lines[0]["loss"],
            "loss_last": lines[-1]["loss"], "compile_ms": compile_info["compile_ms"],
            "jit_cache": compile_info["jit_cache"]}


def keep_fastest(runs, label, run):
    """One round's `run` of configuration `label`: the first is kept whole (losses, cold start-up); later
    rounds only lower its median step time and, when they loaded the step from the JIT cache, its cached
    start-up."""
    best = runs.setdefault(label, run)
    best["ms"] = min(best["ms"], run["ms"])
    if run.get("jit_cache") == "hit" and "compile_warm_ms" in best:
        best["compile_warm_ms"] = min(best["compile_warm_ms"], run["compile_ms"])


def predicted_cast_ms(amp_opt, step_file, precision, bandwidth):
    """bytes_converted of amp-autocast's report for `precision`, and its time at `bandwidth` B/s."""
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        subprocess.run([amp_opt, "--allow-unregistered-dialect", step_file,
                        f"--amp-autocast=precision={precision} report={report}", "-o", os.devnull], check=True)
        with open(report) as f:
            converted = json.load(f)["summary"]["bytes_converted"]
    return converted, converted / bandwidth * 1e3


def copy_bandwidth():
    """Bytes read + written per second by a 256 MiB copy (best of 5)."""
    import numpy as np
    src = np.ones(64 << 20, dtype=np.float32)
    dst = np.empty_like(src)
    best = min(_timed(lambda: np.copyto(dst, src)) for _ in range(5))
    return 2 * src.nbytes / best


def _timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def torch_cpu(model, inputs, opt_args, dtype, steps, warmup):
    import torch

    model = copy.deepcopy(model).float()
    x, y = inputs
    params = [p for p in model.parameters() if p.requires_grad]
    opt = (torch.optim.SGD(params, lr=opt_args["lr"]) if opt_args["optimizer"] == "sgd"
           else torch.optim.Adam(params, lr=opt_args["lr"]))
    losses, times = [], []
    for _ in range(warmup + steps):
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        if dtype is None:
            loss = torch.nn.functional.cross_entropy(model(x), y)
        else:
            with torch.autocast("cpu", dtype=dtype):
                loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        times.append((time.perf_counter() - start) * 1e3)
    return {"ms": statistics.median(times[warmup:]), "loss0": losses[0], "loss_last": losses[-1]}



def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="mlp,block")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=2,
                    help="runs of every configuration, interleaved; the fastest round's median counts")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks.md"))
    ap.add_argument("--amp-train", default=os.path.join(REPO, "build", "bin", "amp-train"))
    ap.add_argument("--revision", default=None)
    ap.add_argument("--amp-opt", default=os.path.join(REPO, "build", "bin", "amp-opt"))
    args = ap.parse_args()

    import torch
    torch.set_num_threads(args.threads)
    revision = args.revision or subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                                               capture_output=True, text=True).stdout.strip() or "unknown"
    results = []
    bandwidth = copy_bandwidth()
    work = tempfile.mkdtemp(prefix="amp-cpu-bench-")
    try:
        for name in args.models.split(","):
            step_dir = os.path.join(work, name)
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(REPO, "build", "python")] + sys.path))
            subprocess.run([sys.executable, "-c", EXPORT.format(bench=os.path.join(HERE, "gpu")), name, step_dir],
                           env=env, check=True)
            model, inputs, opt_args, title = gpu.build(name, "small")
            runs = {}
            # Rounds interleave the configurations; each keeps its fastest round's median (other
            # work on the machine only ever adds time). Round 0 compiles with a cold JIT cache.
            configs = [("amp fp32", "fp32", []), ("amp f16", "f16", []), ("amp bf16", "bf16", []),
                       # f16 without loss scaling: what the casts alone cost.
                       ("amp f16 no-ls", "f16", ["--loss-scaling=none"])]
            for round_index in range(args.rounds):
                for label, precision, extra in configs:
                    cache = os.path.join(work, f"cache-{name}-{label.replace(' ', '-')}")
                    run = amp_train(args.amp_train, step_dir, precision, args.steps, args.warmup, cache, extra)
                    if round_index == 0:
                        warm = amp_train(args.amp_train, step_dir, precision, 1, 0, cache, extra)
                        run["compile_warm_ms"] = warm["compile_ms"]
                    keep_fastest(runs, label, run)
                    print(title, label, round_index, run, flush=True)
            for precision in ["f16", "bf16"]:
                runs[f"amp {precision}"]["converted"], runs[f"amp {precision}"]["cast_ms"] = predicted_cast_ms(
                    args.amp_opt, os.path.join(step_dir, "train_step.mlir"), precision, bandwidth)
            runs["amp f16 no-ls"]["converted"] = runs["amp f16"]["converted"]
            runs["amp f16 no-ls"]["cast_ms"] = runs["amp f16"]["cast_ms"]
            for round_index in range(args.rounds):
                for label, dtype in [("torch fp32", None), ("torch bf16", torch.bfloat16)]:
                    run = torch_cpu(model, inputs, opt_args, dtype, args.steps, args.warmup)
                    keep_fastest(runs, label, run)
                    print(title, label, round_index, run, flush=True)
            results.append((title, runs))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    L = [BEGIN, "", "### CPU step time at real sizes: amp-train vs PyTorch", "",
         f"- {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; PyTorch {torch.__version__} "
         f"with {args.threads} threads; date "
         f"{datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; revision {revision}",
         f"- median of {args.steps} steps after {args.warmup} warm-up, the fastest of {args.rounds} interleaved "
         "rounds; bench/run_cpu_step_benchmark.py", "",
         "| model | amp fp32 | amp f16 | amp bf16 | torch fp32 | torch bf16 autocast | amp fp32 / torch fp32 "
         "| start-up cold / cached (fp32) |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for title, r in results:
        L.append(f"| {title} | " + " | ".join(f"{r[k]['ms']:.0f}" for k in
                                              ["amp fp32", "amp f16", "amp bf16", "torch fp32", "torch bf16"])
                 + f" | {r['amp fp32']['ms'] / r['torch fp32']['ms']:.2f}x | "
                 f"{r['amp fp32']['compile_ms'] / 1e3:.1f} s / {r['amp fp32']['compile_warm_ms'] / 1e3:.2f} s |")
    L += ["", "Times in ms per step.", "",
          f"AMP against the cost amp-autocast's report predicts (bytes_converted at this machine's copy bandwidth, "
          f"{bandwidth / 1e9:.1f} GB/s read + written). f16 also runs dynamic loss scaling (one fused "
          "unscale-and-check pass over the gradients and guarded updates, which the cast count does not "
          "include); the f16 row without it (`--loss-scaling=none`) is what the casts alone cost.", "",
          "| model | precision | AMP - fp32 ms | bytes_converted | predicted cast ms |",
          "|---|---|---:|---:|---:|"]
    for title, r in results:
        for key, label in [("amp f16", "f16 + dynamic loss scaling"), ("amp f16 no-ls", "f16, no loss scaling"),
                           ("amp bf16", "bf16")]:
            a = r[key]
            L.append(f"| {title} | {label} | {a['ms'] - r['amp fp32']['ms']:+.0f} | {a['converted']:,} | "
                     f"{a['cast_ms']:.0f} |")
    L += ["", "Losses (first -> last):", ""]
    for title, r in results:
        L.append(f"- {title}: " + "; ".join(f"{k} {v['loss0']:.4f} -> {v['loss_last']:.4f}" for k, v in r.items()))
    rpb.publish(L + [""], args.out, BEGIN, END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
