#!/usr/bin/env python3
"""amp-demo: an fp32 and an f16 training run side by side, plus a poisoned run.

    amp-demo.py [--amp-train build/bin/amp-train] [--steps 30] [--poison-step 10]
                [EXAMPLE.mlir]

Runs `amp-train` three times on the same training step (default
examples/mlp_sgd.mlir) from the same amp.init values:

  fp32      --precision=fp32                       the step as written
  f16       --precision=f16                        amp-pipeline: autocast + dynamic loss scaling
  poisoned  --precision=f16 --poison-step=K        +inf in the input batch at step K

and prints one table row per step: the fp32 loss, the f16 loss, their relative
difference, the f16 loss scale and skip flag, and the poisoned run's loss,
scale and skip flag. The poisoned step is skipped (parameters unchanged, loss
null) and the scale halves (GradScaler's backoff factor 0.5); after it the
poisoned run repeats the clean f16 run one step late.

Standard library only. Exits non-zero when amp-train fails.
"""

import argparse
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def train(amp_train, example, steps, *extra):
    cmd = [amp_train, example, f"--steps={steps}", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"amp-demo: failed ({proc.returncode}): {' '.join(cmd)}")
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    if len(rows) != steps:
        raise SystemExit(f"amp-demo: expected {steps} lines, got {len(rows)}: {' '.join(cmd)}")
    return cmd, rows


def num(x, spec=".6f"):
    return "null" if x is None else format(x, spec)


def scale(x):
    return "null" if x is None else f"{x:g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("example", nargs="?", default=os.path.join("examples", "mlp_sgd.mlir"))
    ap.add_argument("--amp-train", default=os.path.join(REPO, "build", "bin", "amp-train"))
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--poison-step", type=int, default=10)
    args = ap.parse_args()
    if not 0 <= args.poison_step < args.steps:
        ap.error("--poison-step must be a step of the run (0 <= K < --steps)")

    runs = {
        "fp32": train(args.amp_train, args.example, args.steps, "--precision=fp32"),
        "f16": train(args.amp_train, args.example, args.steps, "--precision=f16"),
        "poisoned": train(args.amp_train, args.example, args.steps, "--precision=f16",
                          f"--poison-step={args.poison_step}"),
    }
    for name, (cmd, _) in runs.items():
        shown = ["amp-train" if c == args.amp_train else c for c in cmd[1:]]
        print(f"  {name:9s} amp-train {' '.join(shown)}")
    print()

    fp32, f16, bad = (runs[k][1] for k in ("fp32", "f16", "poisoned"))
    print((f"{'':6s} {'fp32':>10s}   {'f16: amp-pipeline, loss scaling':^41s}   "
           f"{'f16, poisoned at step ' + str(args.poison_step):^30s}").rstrip())
    print(f"{'step':>6s} {'loss':>10s}   {'loss':>10s} {'rel. diff':>10s} {'scale':>10s} "
          f"{'skipped':>8s}   {'loss':>10s} {'scale':>10s} {'skipped':>8s}")
    worst = 0.0
    for a, b, c in zip(fp32, f16, bad):
        if a["loss"] is not None and b["loss"] is not None:
            diff = abs(b["loss"] - a["loss"]) / abs(a["loss"])
            worst = max(worst, diff)
            diff_s = f"{diff:.2e}"
        else:
            diff_s = "-"
        mark = "  <-" if c["skipped"] else ""
        print(f"{a['step']:>6d} {num(a['loss']):>10s}   {num(b['loss']):>10s} {diff_s:>10s} "
              f"{scale(b['scale']):>10s} {str(b['skipped']).lower():>8s}   "
              f"{num(c['loss']):>10s} {scale(c['scale']):>10s} "
              f"{str(c['skipped']).lower():>8s}{mark}")
    print()

    k = args.poison_step
    print(f"f16 vs fp32: largest relative loss difference {worst:.2e} over {args.steps} steps; "
          f"final loss {num(fp32[-1]['loss'])} (fp32) vs {num(f16[-1]['loss'])} (f16).")
    skipped = [r["step"] for r in bad if r["skipped"]]
    before = bad[k - 1]["scale"] if k > 0 else None
    change = (f"scale {scale(before)} -> {scale(bad[k]['scale'])} at step {k}" if k > 0
              else f"scale {scale(bad[0]['scale'])} after step 0")
    print(f"poisoned run: skipped step(s) {skipped}; {change}.", end=" ")
    # After the skipped step the poisoned run is the clean run one step late:
    # the parameters were kept bit for bit, and a power-of-two scale change
    # leaves the unscaled gradients unchanged.
    late = [bad[i + 1]["loss"] == f16[i]["loss"] for i in range(k, args.steps - 1)]
    if late and all(late):
        print(f"Steps {k + 1}..{args.steps - 1} repeat the clean f16 losses of steps "
              f"{k}..{args.steps - 2} exactly (the parameters were left unchanged).")
    elif late:
        print(f"{sum(late)}/{len(late)} later steps repeat the clean f16 loss one step late.")
    else:
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
