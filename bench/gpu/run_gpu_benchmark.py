#!/usr/bin/env python3
"""GPU step-time benchmark: amp-train --device=cuda against PyTorch on the same GPU.

    run_gpu_benchmark.py [--models mlp,block] [--sizes small,large] [--steps 20] [--warmup 5]
                         [--ncu [--ncu-sizes small] [--ncu-precisions f16] [--ncu-torch f16,bf16]]
                         [--out docs/benchmarks.md] [--revision REV]
                         [--amp-train build/bin/amp-train] [--exported DIR] [--torch-modes ...]
    run_gpu_benchmark.py --export-to DIR [--models ...] [--sizes ...]

Two models, each exported once from PyTorch with amp_mlir.torch.export_train_step (so both sides
start from the same weights and batch):

  mlp    MLP 1024-4096-4096-1024-16, cross-entropy, SGD lr 0.1; batch 512 (small), 8192 (large)
  block  pre-norm transformer block d=512, 8 heads, 4x GELU MLP, mean-pool + linear head (16
         classes), cross-entropy, Adam lr 1e-3; B=16 (small), 128 (large), T=128

and for each, side by side in one run:

  amp-mlir fp32 / f16 (autocast + dynamic loss scaling) / bf16   amp-train --device=cuda --timing
  PyTorch eager fp32 (TF32 off), eager autocast f16 + GradScaler, eager autocast bf16,
  torch.compile f16 (autocast + GradScaler)

Time per step: amp-train's median "ms" over the steps after --warmup (each includes the
step's one device synchronisation and the 9-byte read-back of loss, scale and skipped flag);
PyTorch: wall time of --steps steps after --warmup, one synchronisation at the end, divided by
--steps (PyTorch's best case: no per-step read-back). The first and last loss of every run
are printed to show that the runs are real and agree.

With --ncu, Nsight Compute profiles two steps of amp-train per model (gpu__time_duration.sum per
kernel) and the ten kernels with the most GPU time are listed with their launches and grids: f16
at the small size by default; --ncu-sizes and --ncu-precisions choose others. --ncu-torch f16,bf16
profiles PyTorch's eager steps of those modes the same way, two steps after --warmup (a child
process of this script under `ncu --profile-from-start off`), so both sides' kernels can be set
side by side.

The GPU machine has PyTorch but not torch-mlir: `--export-to DIR` (on a machine with torch-mlir,
no GPU needed) writes each case's train_step.mlir and manifest.json to DIR/<model>-<size>/ without
the arrays, and `--exported DIR` (on the GPU machine) reads them; the arrays (arg<N>.npy) are then
written from the model built there, argument by argument as the manifest names them, so both sides
still start from the same weights and batch.

Results go into --out between <!-- gpu-step:begin --> and <!-- gpu-step:end -->, with the
device name, the date and the revision. Needs a CUDA GPU, torch with CUDA, and the
amp_mlir Python package (build/python on PYTHONPATH); exits 2 without a GPU.
"""

import argparse
import copy
import csv
import datetime
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "build", "python"))
import run_pass_benchmark as rpb  # noqa: E402  (bench/: write_section)

BEGIN = "<!-- gpu-step:begin -->"
END = "<!-- gpu-step:end -->"

SIZES = {
    "mlp": {"small": 512, "large": 8192},
    "block": {"small": 16, "large": 128},
}
AMP_PRECISIONS = [("fp32", "fp32"), ("f16", "f16"), ("bf16", "bf16")]


def build(model_name, size):
    """The model, its example batch and the optimizer settings of one benchmark case."""
    import torch
    from amp_mlir.torch.models import MLP, TransformerClassifier

    torch.manual_seed(0)
    batch = SIZES[model_name][size]
    if model_name == "mlp":
        model = MLP(1024, 4096, 4096, 1024, 16)
        x = torch.randn(batch, 1024)
        y = torch.randint(0, 16, (batch,))
        return model, (x, y), {"optimizer": "sgd", "lr": 0.1}, f"MLP 1024-4096-4096-1024-16, batch {batch}"
    model = TransformerClassifier(d=512, heads=8, mlp_ratio=4, classes=16)
    x = torch.randn(batch, 128, 512)
    y = torch.randint(0, 16, (batch,))
    return model, (x, y), {"optimizer": "adam", "lr": 1e-3}, f"transformer block d=512, B={batch}, T=128"


def write_arguments(step_dir, model, inputs):
    """arg<N>.npy for every argument the manifest lists, from this model and batch (the
    optimizer state starts at zero, the backward seed at one, as export_train_step writes them)."""
    import numpy as np

    with open(os.path.join(step_dir, "manifest.json")) as f:
        manifest = json.load(f)
    state = {name: t.detach().numpy() for name, t in model.state_dict().items()}
    batch = [t.numpy() for t in inputs[:-1]]
    for arg in manifest["arguments"]:
        kind, shape = arg["kind"], tuple(arg["shape"])
        if kind in ("param", "buffer"):
            value = state[arg["name"]]
        elif kind == "input":
            value = batch.pop(0)
        elif kind == "target":
            value = inputs[-1].numpy()
        elif kind == "seed":
            value = np.ones(shape, np.float32)
        else:  # optimizer state: moments, momentum buffers, step counter
            value = np.zeros(shape, np.dtype(arg["dtype"]))
        if tuple(value.shape) != shape:
            raise ValueError(f"{step_dir}: argument {arg['index']} ({arg['name']}) has shape {shape} "
                             f"in the manifest, {tuple(value.shape)} here")
        np.save(os.path.join(step_dir, arg["file"]), np.array(value, np.dtype(arg["dtype"]), order="C"))


def run_amp_train(amp_train, step_dir, precision, steps, warmup, extra=()):
    cmd = [amp_train, os.path.join(step_dir, "train_step.mlir"), "--inputs", step_dir,
           "--device=cuda", f"--precision={precision}", "--steps", str(warmup + steps), "--timing",
           *extra]
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    total = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-4000:]}")
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    times = [line["ms"] for line in lines[warmup:]]
    losses = [line["loss"] for line in lines]
    skipped = sum(1 for line in lines if line["skipped"])
    return {"ms": statistics.median(times), "first_ms": lines[0]["ms"], "wall_s": total,
            "loss0": losses[0], "loss_last": losses[-1], "skipped": skipped}


def torch_step(model, inputs, opt_args, mode):
    """One PyTorch training step on the GPU as a closure: eager fp32 (TF32 off), autocast f16 +
    GradScaler, autocast bf16, or torch.compile f16; the optimizer as exported."""
    import torch
    from amp_mlir.torch import torch_train_step

    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = copy.deepcopy(model).to(device).float()
    x, y = (t.to(device) for t in inputs)
    params = [p for p in model.parameters() if p.requires_grad]
    if opt_args["optimizer"] == "sgd":
        opt = torch.optim.SGD(params, lr=opt_args["lr"])
    else:
        opt = torch.optim.Adam(params, lr=opt_args["lr"])
    dtype = {"fp32": None, "f16": torch.float16, "bf16": torch.bfloat16, "compile-f16": torch.float16}[mode]
    scaler = torch.amp.GradScaler("cuda") if dtype == torch.float16 else None
    forward = torch.compile(model) if mode.startswith("compile") else model
    loss_fn = torch.nn.functional.cross_entropy

    def step():
        return torch_train_step(forward, loss_fn, opt, (x,), y, device_type="cuda", autocast=dtype,
                                scaler=scaler)

    return step


def run_torch(model, inputs, opt_args, mode, steps, warmup):
    import torch

    step = torch_step(model, inputs, opt_args, mode)
    losses = []
    for _ in range(warmup):
        losses.append(float(step().detach()))
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(steps):
        last = step()
    torch.cuda.synchronize()
    ms = (time.perf_counter() - start) * 1e3 / steps
    return {"ms": ms, "loss0": losses[0] if losses else float("nan"), "loss_last": float(last.detach())}


def amp_train_command(amp_train, step_dir, precision):
    """Two steps of amp-train, what --ncu profiles."""
    return [amp_train, os.path.join(step_dir, "train_step.mlir"), "--inputs", step_dir,
            "--device=cuda", f"--precision={precision}", "--steps", "2"]


def torch_child_command(model_name, size, mode, warmup):
    """This script as a child that runs PyTorch's step: `warmup` steps, then two profiled ones."""
    return [sys.executable, os.path.abspath(__file__), "--torch-child", f"{model_name},{size},{mode}",
            "--warmup", str(warmup)]


def torch_child(spec, warmup):
    """--torch-child MODEL,SIZE,MODE: the profiled side of --ncu-torch (see torch_child_command)."""
    import torch

    model_name, size, mode = spec.split(",")
    model, inputs, opt_args, _ = build(model_name, size)
    step = torch_step(model, inputs, opt_args, mode)
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    for _ in range(2):
        step()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    return 0


def ncu_top(cmd, top=10, from_start=True):
    """Nsight Compute's per-kernel GPU time for the kernels `cmd` launches (all of them, or with
    from_start=False those between cudaProfilerStart and cudaProfilerStop)."""
    ncu = shutil.which("ncu")
    if not ncu:
        return None, "ncu not found"
    cmd = [ncu, "--metrics", "gpu__time_duration.sum", "--csv", "--print-units", "base",
           *([] if from_start else ["--profile-from-start", "off"]), *cmd]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    text = proc.stdout
    start = text.find('"ID"')
    if proc.returncode != 0 or start < 0:
        return None, f"ncu failed ({proc.returncode}): {proc.stderr[-2000:]}"
    rows = list(csv.DictReader(io.StringIO(text[start:])))
    kernels = {}
    for row in rows:
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        name = row.get("Kernel Name", "?")
        value = float(row.get("Metric Value", "0").replace(",", ""))
        entry = kernels.setdefault(name, {"ns": 0.0, "launches": 0, "grids": set(), "blocks": set()})
        entry["ns"] += value
        entry["launches"] += 1
        entry["grids"].add(row.get("Grid Size", "?"))
        entry["blocks"].add(row.get("Block Size", "?"))
    total = sum(k["ns"] for k in kernels.values())
    ranked = sorted(kernels.items(), key=lambda kv: -kv[1]["ns"])[:top]
    return {"total_ms": total / 1e6, "launches": sum(k["launches"] for k in kernels.values()),
            "top": [(name[:70], k["ns"] / 1e6, k["launches"], " ".join(sorted(k["grids"]))[:40],
                     " ".join(sorted(k["blocks"]))[:20]) for name, k in ranked]}, None


def fmt_ms(v):
    return f"{v:.3g}" if v < 10 else f"{v:.1f}"


def render(meta, results, profiles):
    L = [BEGIN, "", "### GPU step time: amp-train --device=cuda vs PyTorch", "",
         f"- device: {meta['device']}; driver/CUDA: {meta['cuda']}; PyTorch {meta['torch']}",
         f"- date: {meta['date']}; amp-mlir revision: {meta['revision']}",
         f"- {meta['steps']} timed steps after {meta['warmup']} warm-up steps; "
         "bench/gpu/run_gpu_benchmark.py", "",
         "| model | amp fp32 | amp f16 | amp bf16 | torch fp32 | torch f16 AMP | torch bf16 | "
         "torch.compile f16 | f16 / torch f16 | f16 speed-up over amp fp32 |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for case in results:
        r = case["runs"]
        ms = {k: r[k]["ms"] if k in r else None for k in
              ["amp fp32", "amp f16", "amp bf16", "torch fp32", "torch f16", "torch bf16", "torch compile-f16"]}
        vs_torch = f"{ms['amp f16'] / ms['torch f16']:.2f}x" if ms["torch f16"] else "-"
        L.append(f"| {case['title']} | " + " | ".join(fmt_ms(v) if v is not None else "-" for v in ms.values())
                 + f" | {vs_torch} | {ms['amp fp32'] / ms['amp f16']:.2f}x |")
    L += ["", "Times in ms per step. Losses (first step -> last step), to show the runs are real:", ""]
    for case in results:
        parts = [f"{k} {v['loss0']:.4f} -> {v['loss_last']:.4f}" for k, v in case["runs"].items()]
        L.append(f"- {case['title']}: " + "; ".join(parts))
    for title, prof in profiles:
        L += ["", f"Nsight Compute, two steps of {title}: "
              f"{prof['launches']} launches, {prof['total_ms']:.2f} ms of GPU time; top kernels:", "",
              "| kernel | ms | launches | grid | block |", "|---|---:|---:|---|---|"]
        for name, ms, launches, grids, blocks in prof["top"]:
            L.append(f"| `{name}` | {ms:.3f} | {launches} | {grids} | {blocks} |")
    L += ["", END]
    return "\n".join(L)



def write_section(path, section):
    rpb.write_section(path, section, BEGIN, END)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="mlp,block")
    ap.add_argument("--sizes", default="small,large")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--ncu", action="store_true")
    ap.add_argument("--ncu-sizes", default="small", help="the sizes --ncu profiles")
    ap.add_argument("--ncu-precisions", default="f16", help="amp-train's precisions --ncu profiles")
    ap.add_argument("--ncu-torch", default="", help="PyTorch's modes --ncu profiles too (fp32,f16,bf16)")
    ap.add_argument("--torch-child", metavar="MODEL,SIZE,MODE", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks.md"))
    ap.add_argument("--json", help="also write the raw results here")
    ap.add_argument("--revision", default=None)
    ap.add_argument("--amp-train", default=os.path.join(REPO, "build", "bin", "amp-train"))
    ap.add_argument("--export-to", metavar="DIR", help="only export each case's step (no arrays) here")
    ap.add_argument("--exported", metavar="DIR", help="read the steps --export-to wrote instead of exporting")
    ap.add_argument("--torch-modes", default="fp32,f16,bf16,compile-f16")
    args = ap.parse_args()

    if args.torch_child:
        return torch_child(args.torch_child, args.warmup)
    import torch
    from amp_mlir.torch import export_train_step

    if args.export_to:
        for model_name in args.models.split(","):
            for size in args.sizes.split(","):
                model, inputs, opt_args, title = build(model_name, size)
                step_dir = os.path.join(args.export_to, f"{model_name}-{size}")
                export_train_step(model, torch.nn.functional.cross_entropy, inputs, out_dir=step_dir, **opt_args)
                for name in os.listdir(step_dir):
                    if name.endswith(".npy"):
                        os.remove(os.path.join(step_dir, name))
                print(f"{title}: {step_dir}")
        return 0
    if not torch.cuda.is_available():
        print("run_gpu_benchmark: no CUDA GPU visible to torch", file=sys.stderr)
        return 2

    revision = args.revision
    if revision is None:
        proc = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        revision = proc.stdout.strip() or "unknown"
    meta = {"device": torch.cuda.get_device_name(0), "cuda": torch.version.cuda, "torch": torch.__version__,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "revision": revision, "steps": args.steps, "warmup": args.warmup}
    results, profiles = [], []
    work = tempfile.mkdtemp(prefix="amp-gpu-bench-")
    try:
        for model_name in args.models.split(","):
            for size in args.sizes.split(","):
                model, inputs, opt_args, title = build(model_name, size)
                step_dir = os.path.join(work, f"{model_name}-{size}")
                if args.exported:
                    shutil.copytree(os.path.join(args.exported, f"{model_name}-{size}"), step_dir)
                else:
                    export_train_step(model, torch.nn.functional.cross_entropy, inputs, out_dir=step_dir,
                                      **opt_args)
                write_arguments(step_dir, model, inputs)
                runs = {}
                for label, precision in AMP_PRECISIONS:
                    runs[f"amp {label}"] = run_amp_train(args.amp_train, step_dir, precision, args.steps, args.warmup)
                    print(f"{title}: amp {label}: {runs[f'amp {label}']}", flush=True)
                for mode in args.torch_modes.split(","):
                    runs[f"torch {mode}"] = run_torch(model, inputs, opt_args, mode, args.steps, args.warmup)
                    print(f"{title}: torch {mode}: {runs[f'torch {mode}']}", flush=True)
                results.append({"model": model_name, "size": size, "title": title, "runs": runs})
                if args.ncu and size in args.ncu_sizes.split(","):
                    jobs = [(f"amp-train {p}", amp_train_command(args.amp_train, step_dir, p), True)
                            for p in args.ncu_precisions.split(",") if p]
                    jobs += [(f"PyTorch eager {m}", torch_child_command(model_name, size, m, args.warmup), False)
                             for m in args.ncu_torch.split(",") if m]
                    for who, cmd, from_start in jobs:
                        prof, why = ncu_top(cmd, from_start=from_start)
                        if prof:
                            profiles.append((f"{who}, {title}", prof))
                            print(f"{who}, {title}: {json.dumps(prof)}", flush=True)
                        else:
                            print(f"{title}: no profile of {who}: {why}", file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    section = render(meta, results, profiles)
    print(section)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "results": results,
                       "profiles": [(t, p) for t, p in profiles]}, f, indent=1, default=str)
    if args.out:
        write_section(args.out, section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
