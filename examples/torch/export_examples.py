#!/usr/bin/env python3
"""Export three PyTorch training steps with amp_mlir.torch and compare amp-train with PyTorch.

    python3 examples/torch/export_examples.py [OUT_DIR] [--steps N] [--precision fp32|f16|bf16]

For each model (MLP + cross-entropy + SGD, transformer block + MSE + Adam, CNN + cross-entropy + SGD)
this writes OUT_DIR/<model>/train_step.mlir, arg<N>.npy and manifest.json, runs
`amp-train train_step.mlir --inputs OUT_DIR/<model>` and prints its losses next to PyTorch's.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
from amp_mlir.torch import export_train_step, torch_reference_losses  # noqa: E402
from amp_mlir.torch.models import TransformerBlock  # noqa: E402


def models():
    torch.manual_seed(0)
    yield ("mlp_sgd", nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10)), F.cross_entropy,
           (torch.randn(16, 16), torch.randint(0, 10, (16,))), dict(optimizer="sgd", lr=0.1))
    yield ("transformer_adam", TransformerBlock(), F.mse_loss, (torch.randn(2, 8, 16), torch.randn(2, 8, 16)),
           dict(optimizer="adam", lr=1e-3))
    yield ("cnn_sgd", nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                                    nn.Linear(128, 10)), F.cross_entropy,
           (torch.randn(8, 3, 8, 8), torch.randint(0, 10, (8,))), dict(optimizer="sgd", lr=0.1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir", nargs="?", default="/tmp/amp_mlir_torch_examples")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--amp-train", default=str(REPO / "build" / "bin" / "amp-train"))
    args = ap.parse_args()
    for name, model, loss_fn, inputs, kw in models():
        step = export_train_step(model, loss_fn, inputs, out_dir=Path(args.out_dir) / name, **kw)
        ref = torch_reference_losses(model, loss_fn, inputs, steps=args.steps, **kw)
        out = subprocess.run([args.amp_train, str(step.mlir_path), f"--precision={args.precision}",
                              "--inputs", str(step.out_dir), "--steps", str(args.steps)],
                             capture_output=True, text=True, check=True).stdout
        rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        worst = max(abs(r["loss"] - t) / abs(t) for r, t in zip(rows, ref))
        print(f"{name}: {step.mlir_path} ({len(step.manifest['arguments'])} arguments)")
        print(f"  step 0 loss: amp-train {rows[0]['loss']:.6f}  torch {ref[0]:.6f}")
        print(f"  step {args.steps - 1} loss: amp-train {rows[-1]['loss']:.6f}  torch {ref[-1]:.6f}")
        print(f"  max relative difference over {args.steps} steps ({args.precision}): {worst:.2e}")


if __name__ == "__main__":
    main()
