#!/usr/bin/env python3
"""Step-time benchmark: amp-train on the CPU, fp32 vs AMP (f16, bf16).

    run_step_benchmark.py [--target 1.0] [--blocks 3]
                          [--large 2000] [--batch 64] [--width 256]
                          [--out docs/benchmarks.md] [--amp-train PATH]

For the three bundled examples and one generated graph
(bench/gen_training_graph.py LARGE --batch B --width D), runs

  amp-train FILE --precision=fp32                     the step as written
  amp-train FILE --precision=f16 --loss-scaling=none  autocast only
  amp-train FILE --precision=f16                      autocast + dynamic loss scaling
  amp-train FILE --precision=bf16                     autocast (bf16 default: no loss scaling)

each in ONE process of 1 + BLOCKS * N steps, and timestamps every JSON line
as it arrives (amp-train flushes after each step). The first line marks the
end of compilation + initialisation + step 0; the time per step is the best
(smallest) of BLOCKS blocks of N consecutive steps after it, divided by N.
Compilation is thus excluded without a second run. N is chosen per graph
from a short fp32 probe run so that a block takes about --target seconds
(lines of fast steps reach the pipe in bursts, so only long blocks give
meaningful timestamps).

On a CPU, f16/bf16 arithmetic is emulated in f32 by amp-cpu-pipeline
(arith-emulate-unsupported-floats: every low-precision op is computed in f32
and rounded to its type), so the AMP/fp32 ratio measures the overhead of the
casts and of the loss-scaling machinery, not a speed-up.

Results go into --out between <!-- step-time:begin --> and
<!-- step-time:end -->. Exits 1 when amp-train fails or a run skips a step,
2 when amp-train is not found. Standard library only.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_training_graph  # noqa: E402
import run_loss_scaling_benchmark as rlb  # noqa: E402
import run_pass_benchmark as rpb  # noqa: E402

REPO = rpb.REPO
BEGIN = "<!-- step-time:begin -->"
END = "<!-- step-time:end -->"

# (short name used in the tables, amp-train options, description)
CONFIGS = [
    ("fp32", ["--precision=fp32"], "the step as written"),
    ("f16 no-LS", ["--precision=f16", "--loss-scaling=none"], "amp-autocast only"),
    ("f16+LS", ["--precision=f16"], "amp-autocast + dynamic loss scaling (the f16 default)"),
    ("bf16", ["--precision=bf16"], "amp-autocast (the bf16 default: no loss scaling)"),
]
EXAMPLES = ["examples/mlp_sgd.mlir", "examples/transformer_adam.mlir", "examples/linalg_mlp.mlir"]


# Long runs drive the loss of the small examples towards 0 (they see one batch),
# into denormal gradients that are slow on x86 in every precision alike; blocks
# are capped so the runs stay in the first few thousand steps.
MAX_BLOCK_STEPS = 2000


class RunError(RuntimeError):
    pass


def timed_run(cmd, timeout):
    """Runs amp-train, timestamping each stdout line. Returns (start-up seconds,
    [per-line timestamps relative to the first line], parsed rows)."""
    import json
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            bufsize=1)
    stamps, rows = [], []
    try:
        for line in proc.stdout:
            stamps.append(time.perf_counter())
            rows.append(json.loads(line))
            if stamps[-1] - start > timeout:
                proc.kill()
                raise RunError(f"timed out after {timeout} s: {' '.join(cmd)}")
        err = proc.stderr.read()
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode != 0:
        raise RunError(f"exit status {proc.returncode}: {' '.join(cmd)}\n{err[-4000:]}")
    if not stamps:
        raise RunError(f"no output: {' '.join(cmd)}")
    bad = [r["step"] for r in rows if r["loss"] is None and not r["skipped"]]
    if bad:
        raise RunError(f"steps {bad[:10]} have a non-finite loss: {' '.join(cmd)}")
    return stamps[0] - start, [t - stamps[0] for t in stamps], rows


def calibrate(amp_train, path, extra, target, timeout):
    """Steps per block so that one block takes about `target` seconds."""
    probe = 10
    while True:
        _, stamps, _ = timed_run([amp_train, path, f"--steps={1 + probe}", *extra], timeout)
        if stamps[-1] >= min(0.2, target / 2) or probe >= 100000:
            break
        probe *= 10
    per_step = max(stamps[-1] / probe, 1e-7)
    return max(2, min(MAX_BLOCK_STEPS, int(target / per_step + 0.5)))


def measure(amp_train, path, extra, steps, blocks, timeout):
    total = 1 + blocks * steps
    cmd = [amp_train, path, f"--steps={total}", *extra]
    startup, stamps, rows = timed_run(cmd, timeout)
    per_block = [(stamps[(b + 1) * steps] - stamps[b * steps]) / steps for b in range(blocks)]
    return {"startup": startup, "step": min(per_block), "blocks": per_block,
            "loss": rows[-1]["loss"], "scale": rows[-1]["scale"], "cmd": cmd,
            "skipped": sum(1 for r in rows if r["skipped"])}


def fmt_loss(x):
    return "null" if x is None else f"{x:.3g}"


def fmt_time(x):
    """Seconds -> a short string with a unit."""
    if x < 1e-3:
        return f"{x * 1e6:.1f} us"
    if x < 1.0:
        return f"{x * 1e3:.2f} ms"
    return f"{x:.2f} s"


def interpret(results, names):
    out = []
    for key in names[1:]:
        ratios = [r["cfg"][key]["step"] / r["cfg"]["fp32"]["step"] for r in results]
        out.append(f"{key} {min(ratios):.2f}-{max(ratios):.2f}x")
    text = ("Per-step time relative to fp32: " + "; ".join(out) + ". "
            "These are CPU numbers: amp-cpu-pipeline emulates f16 and bf16 in f32 "
            "(`arith-emulate-unsupported-floats` extends every low-precision operand to f32, "
            "computes, and rounds the result back to its type), so no op gets faster and AMP "
            "can only cost time here; the ratio is the price of the extra casts and roundings "
            "and, for f16+LS, of the loss-scaling machinery (the scaled seed, the fused "
            "unscale-and-check over every gradient, a guard per updated argument, the scale "
            "update). ")
    if "f16+LS" in names and "f16 no-LS" in names:
        parts = []
        for r in results:
            ls, nols = r["cfg"]["f16+LS"]["step"], r["cfg"]["f16 no-LS"]["step"]
            parts.append(f"{r['label'].split(' (')[0]} {ls / nols:.2f}x "
                         f"({'+' if ls >= nols else '-'}{fmt_time(abs(ls - nols))} per step)")
        text += ("The loss-scaling machinery alone, f16+LS against f16 no-LS: "
                 + ", ".join(parts) + ". ")
    text += ("A speed-up needs hardware with f16/bf16 arithmetic (the GPU path); on this "
             "machine the table measures overhead only, and differences under ~10% are within "
             "the run-to-run noise of a shared 2-thread VM.")
    return text


def render(results, names, meta):
    L = [BEGIN, "## amp-train step time on the CPU (fp32 vs AMP)", ""]
    L.append("Written by `bench/run_step_benchmark.py` (do not edit by hand; re-run the script).")
    L.append("")
    L.append(f"- Date: {meta['date']}")
    L.append(f"- Machine: {meta['cpu']}, {meta['nproc']} hardware threads (`nproc`), {meta['os']}")
    L.append(f"- amp-mlir revision: {meta['git']}; {meta['llvm']}")
    L.append(f"- Command: `{meta['argv']}`")
    if meta.get("note"):
        L.append(f"- Note: {meta['note']}")
    L.append("")
    L.append("For each `FILE` (the three examples and "
             f"`bench/gen_training_graph.py {meta['large']} --batch {meta['batch']} "
             f"--width {meta['width']}`, seed 0), one process per configuration:")
    L.append("")
    L.append("```sh")
    for name, extra, what in CONFIGS:
        L.append(f"build/bin/amp-train FILE --steps=1+{meta['blocks']}*N {' '.join(extra)}"
                 f"   # {name}: {what}")
    L.append("```")
    L.append("")
    L.append("Python timestamps each JSON line as amp-train prints it (it flushes after every "
             "step). *Start-up* = process start to the first line (parse, amp-pipeline, "
             "amp-cpu-pipeline, LLVM JIT at -O2, argument initialisation, step 0). *Step* = best "
             f"of {meta['blocks']} blocks of N consecutive later steps, divided by N; N is "
             f"chosen per graph (from probe runs in fp32) so that a block takes "
             f"about {meta['target']} s (at most {MAX_BLOCK_STEPS} steps), and is the same for the four configurations. "
             "Single-threaded generated loops (linalg to scalar loops, no vectorisation "
             "pass); the loss after the last step is printed to show the runs are real.")
    L.append("")
    head = "| graph | ops | N |"
    sep = "|---|---:|---:|"
    for name in names:
        head += f" step {name} |"
        sep += "---:|"
    for name in names[1:]:
        head += f" {name} / fp32 |"
        sep += "---:|"
    L.append(head)
    L.append(sep)
    for r in results:
        line = f"| {r['label']} | {r['ops']} | {r['steps']} |"
        for name in names:
            line += f" {fmt_time(r['cfg'][name]['step'])} |"
        for name in names[1:]:
            line += f" {r['cfg'][name]['step'] / r['cfg']['fp32']['step']:.2f} |"
        L.append(line)
    L.append("")
    L.append("Start-up (compilation), the loss after the last step, and the steps f16+LS "
             "skipped (the scale grows every 2000 clean steps, so long runs reach an overflow "
             "and back off, as GradScaler does; a skipped step costs the same time):")
    L.append("")
    head = "| graph | steps run |" + "".join(f" start-up {n} |" for n in names) + "".join(
        f" loss {n} |" for n in names) + " skipped f16+LS | final scale f16+LS |"
    L.append(head)
    L.append("|---|---:|" + "---:|" * (2 * len(names) + 2))
    for r in results:
        line = f"| {r['label']} | {1 + r['blocks'] * r['steps']} |"
        line += "".join(f" {fmt_time(r['cfg'][n]['startup'])} |" for n in names)
        line += "".join(f" {fmt_loss(r['cfg'][n]['loss'])} |" for n in names)
        line += f" {r['cfg']['f16+LS']['skipped']} | {r['cfg']['f16+LS']['scale']:g} |"
        L.append(line)
    L.append("")
    L.append("**Interpretation.** " + interpret(results, names))
    L.append(END)
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", type=float, default=0.5,
                    help="seconds per block (N, the steps per block, is derived from it)")
    ap.add_argument("--blocks", type=int, default=3, help="blocks per run; the best one counts")
    ap.add_argument("--large", type=int, default=2000, help="ops of the generated graph (0: none)")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--amp-train", default=os.path.join(REPO, "build", "bin", "amp-train"))
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks.md"),
                    help="markdown file to update ('-' prints the section only)")
    ap.add_argument("--timeout", type=float, default=1800.0, help="per run, seconds")
    ap.add_argument("--note", help="a line added to the machine description")
    ap.add_argument("--revision", help="amp-mlir revision to record (default: git)")
    args = ap.parse_args()
    if args.blocks < 1 or args.target <= 0:
        ap.error("--blocks must be >= 1 and --target > 0")
    if not (os.path.exists(args.amp_train) or shutil.which(args.amp_train)):
        print(f"run_step_benchmark: amp-train not found: {args.amp_train}", file=sys.stderr)
        return 2

    names = [n for n, _, _ in CONFIGS]
    graphs = [(os.path.basename(p), os.path.join(REPO, p)) for p in EXAMPLES]
    workdir = tempfile.mkdtemp(prefix="amp-step-bench-")
    results = []
    try:
        if args.large:
            text, _, layers = gen_training_graph.generate(args.large, 0, args.batch, args.width)
            path = os.path.join(workdir, f"train_step_{args.large}.mlir")
            with open(path, "w") as f:
                f.write(text)
            graphs.append((f"generated ({layers} layers, batch {args.batch}, "
                           f"width {args.width})", path))
        for label, path in graphs:
            steps = calibrate(args.amp_train, path, CONFIGS[0][1], args.target, args.timeout)
            r = {"label": label, "ops": rpb.count_ops(path), "cfg": {}, "steps": steps,
                 "blocks": args.blocks}
            print(f"[{label}] {steps} steps per block", file=sys.stderr)
            for name, extra, _ in CONFIGS:
                m = measure(args.amp_train, path, extra, steps, args.blocks, args.timeout)
                r["cfg"][name] = m
                print(f"[{label}] {name}: start-up {fmt_time(m['startup'])}, step "
                      f"{fmt_time(m['step'])} (blocks: "
                      + ", ".join(fmt_time(b) for b in m["blocks"])
                      + f"), loss {fmt_loss(m['loss'])}, {m['skipped']} skipped",
                      file=sys.stderr)
            results.append(r)
    except RunError as err:
        print(f"run_step_benchmark: {err}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    meta = rlb.machine_meta(args.amp_train, args.revision)
    meta.update({"argv": "bench/run_step_benchmark.py " + " ".join(sys.argv[1:]),
                 "blocks": args.blocks, "target": args.target,
                 "large": args.large, "batch": args.batch, "width": args.width,
                 "note": args.note})
    section = render(results, names, meta)
    if args.out != "-":
        rlb.write_section(args.out, section, BEGIN, END)
        print(f"run_step_benchmark: wrote {args.out}", file=sys.stderr)
    sys.stdout.write(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
