#!/usr/bin/env python3
"""Pass-time benchmark: amp-loss-scaling and amp-pipeline on synthetic graphs.

    run_loss_scaling_benchmark.py [--sizes 1000,10000,100000] [--repeat 3]
                                  [--out docs/benchmarks.md] [--amp-opt PATH]
                                  [--seed S] [--keep DIR] [--timeout S]

For every size N it generates a TOSA training step with about N ops
(bench/gen_training_graph.py, batch 16, width 32) into a temporary directory
and times, in the same run:

  (a) amp-opt FILE --amp-autocast --amp-loss-scaling   -o /dev/null
  (b) amp-opt FILE --amp-pipeline                      -o /dev/null
  (c) amp-opt FILE --canonicalize --cse                -o /dev/null   (reference)
  (d) amp-opt FILE                                     -o /dev/null   (parse + print)

Wall time is the best of --repeat runs (time.perf_counter around
subprocess.run). Pass-only times are the best of --repeat runs of (a), (b)
and (c) with `--mlir-timing --mlir-timing-display=list`: (a) gives the
AmpAutocastPass and AmpLossScalingPass rows, (b) the sum of the same two rows
as amp-pipeline runs them, (c) Canonicalizer + CSE.

The results go into --out between <!-- loss-scaling-pass:begin --> and
<!-- loss-scaling-pass:end --> (the rest of the file is left alone). Exits 1
when a tool fails, 2 when it is not found. Standard library only; the timing
helpers are those of bench/run_pass_benchmark.py.
"""

import argparse
import datetime
import os
import platform
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_training_graph  # noqa: E402
import run_pass_benchmark as rpb  # noqa: E402
from run_pass_benchmark import (best_of, fmt, ms, rel,  # noqa: E402
                                slope, TIMING_FLAGS, MAX_REPEAT_SECONDS)

REPO = rpb.REPO
BEGIN = "<!-- loss-scaling-pass:begin -->"
END = "<!-- loss-scaling-pass:end -->"

AUTOCAST = ("AmpAutocastPass", "amp-autocast")
LOSS_SCALING = ("AmpLossScalingPass", "amp-loss-scaling")


def write_section(path, section, begin=BEGIN, end=END):
    rpb.write_section(path, section, begin, end)


def nproc():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def machine_meta(tool, revision=None):
    return {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "cpu": rpb.cpu_model(),
        "nproc": nproc(),
        "os": f"{platform.system()} {platform.release()}",
        "git": revision or rpb.git_revision(),
        "llvm": rpb.tool_version(tool),
    }


def interpret(rows):
    out = []
    ls = [r["slope_ls"] for r in rows[1:] if r["slope_ls"] is not None]
    pipe = [r["slope_pipe"] for r in rows[1:] if r["slope_pipe"] is not None]
    first, big = rows[0], rows[-1]
    if ls:
        worst = max(ls)
        verdict = ("grows linearly with the graph" if worst <= rpb.LINEAR_SLOPE else
                   f"grows faster than linearly (largest slope {worst:.2f}, 1.0 is linear)")
        out.append(f"amp-loss-scaling pass time {verdict}: log-log slopes "
                   + ", ".join(f"{s:.2f}" for s in ls)
                   + f"; {first['per_op_ls'] * 1e6:.2f} us per op at {first['ops']} ops, "
                   f"{big['per_op_ls'] * 1e6:.2f} us at {big['ops']} ops.")
    if pipe:
        out.append("amp-pipeline (autocast + loss scaling) slopes: "
                   + ", ".join(f"{s:.2f}" for s in pipe) + ".")
    ratios = [r["ratio_ls"] for r in rows if r["ratio_ls"] is not None]
    if ratios:
        out.append(f"amp-loss-scaling costs {min(ratios):.2f}-{max(ratios):.2f}x the time of "
                   "canonicalize+cse on the same graph, and "
                   + ", ".join(f"{r['share_ls'] * 100:.0f}%" for r in rows)
                   + " of the autocast + loss-scaling pass time in (a).")
    if big["wall_pipe"] and big["wall_base"]:
        share = max(0.0, big["wall_pipe"] - big["wall_base"]) / big["wall_pipe"]
        out.append(f"At {big['ops']} ops, parsing and printing take {ms(big['wall_base'])} ms "
                   f"of the {ms(big['wall_pipe'])} ms amp-opt --amp-pipeline wall time; the "
                   f"two passes and their verification account for about {share * 100:.0f}%.")
    return " ".join(out)


def render(rows, meta):
    L = [BEGIN, "## amp-loss-scaling and amp-pipeline pass time", ""]
    L.append("Written by `bench/run_loss_scaling_benchmark.py` (do not edit by hand; re-run "
             "the script). Graphs come from `bench/gen_training_graph.py` (batch 16, width 32, "
             "seed " + str(meta["seed"]) + "), the same graphs as the amp-autocast table above. "
             "amp-loss-scaling runs on the output of amp-autocast, as in amp-pipeline "
             "(f16: dynamic loss scaling).")
    L.append("")
    L.append(f"- Date: {meta['date']}")
    L.append(f"- Machine: {meta['cpu']}, {meta['nproc']} hardware threads (`nproc`), {meta['os']}")
    L.append(f"- amp-mlir revision: {meta['git']}; {meta['llvm']}")
    L.append(f"- Command: `{meta['argv']}`; best of {meta['repeat']} runs per cell "
             f"(a run over {MAX_REPEAT_SECONDS:.0f} s is not repeated)")
    if meta.get("note"):
        L.append(f"- Note: {meta['note']}")
    L.append("")
    L.append("Commands timed for each generated `FILE`:")
    L.append("")
    L.append("```sh")
    L.extend(meta["commands"])
    L.append("```")
    L.append("")
    L.append("Wall = `time.perf_counter()` around `subprocess.run`. Pass = the wall time "
             "`-mlir-timing` reports for the `AmpLossScalingPass` / `AmpAutocastPass` rows of "
             "(a), their sum in (b), `Canonicalizer` + `CSE` in (c); each includes the "
             "verifier run after the pass. Milliseconds.")
    L.append("")
    L.append("| ops | file MB | wall autocast+loss-scaling (a) | wall amp-pipeline (b) "
             "| wall parse+print (d) | pass loss-scaling | pass autocast | pass amp-pipeline "
             "| pass canon+cse | loss-scaling / (canon+cse) |")
    L.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        L.append(f"| {r['ops']} | {r['mb']:.1f} | {ms(r['wall_sep'])} | {ms(r['wall_pipe'])} "
                 f"| {ms(r['wall_base'])} | {ms(r['pass_ls'])} | {ms(r['pass_auto'])} "
                 f"| {ms(r['pass_pipe'])} | {ms(r['pass_canon'])} | {fmt(r['ratio_ls'], '.2f')} |")
    L.append("")
    L.append("Growth (pass-only times; slope = log(t2/t1) / log(n2/n1) against the previous "
             "size, 1.0 = linear):")
    L.append("")
    L.append("| ops | loss-scaling us/op | loss-scaling slope | amp-pipeline us/op "
             "| amp-pipeline slope | canon+cse slope |")
    L.append("|---:|---:|---:|---:|---:|---:|")
    dash = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
    for r in rows:
        L.append(f"| {r['ops']} | {r['per_op_ls'] * 1e6:.3f} | {dash(r['slope_ls'])} "
                 f"| {r['per_op_pipe'] * 1e6:.3f} | {dash(r['slope_pipe'])} "
                 f"| {dash(r['slope_canon'])} |")
    L.append("")
    L.append("**Interpretation.** " + interpret(rows))
    L.append(END)
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks.md"),
                    help="markdown file to update ('-' prints the section only)")
    ap.add_argument("--amp-opt", default=os.path.join(REPO, "build", "bin", "amp-opt"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=1800.0, help="per tool run, seconds")
    ap.add_argument("--keep", metavar="DIR", help="write the graphs here and keep them")
    ap.add_argument("--revision", help="amp-mlir revision to record (default: git)")
    ap.add_argument("--note", help="a line added to the machine description")
    args = ap.parse_args()

    sizes = sorted(int(s) for s in args.sizes.replace(" ", "").split(",") if s)
    if not sizes or args.repeat < 1:
        ap.error("need at least one size and --repeat >= 1")
    amp = args.amp_opt
    if not (os.path.exists(amp) or shutil.which(amp)):
        print(f"run_loss_scaling_benchmark: tool not found: {amp}", file=sys.stderr)
        return 2

    commands = {
        "sep": [amp, "{FILE}", "--amp-autocast", "--amp-loss-scaling", "-o", "/dev/null"],
        "pipe": [amp, "{FILE}", "--amp-pipeline", "-o", "/dev/null"],
        "canon": [amp, "{FILE}", "--canonicalize", "--cse", "-o", "/dev/null"],
        "base": [amp, "{FILE}", "-o", "/dev/null"],
    }
    labels = {"sep": "(a)", "pipe": "(b)", "canon": "(c)", "base": "(d)"}

    def measure(n, path, row):
        for key, tmpl in commands.items():
            cmd = [path if c == "{FILE}" else c for c in tmpl]
            row["wall_" + key], _ = best_of(cmd, args.repeat, args.timeout)
        sep = [path if c == "{FILE}" else c for c in commands["sep"]] + TIMING_FLAGS
        _, row["pass_ls"] = best_of(sep, args.repeat, args.timeout, (LOSS_SCALING,))
        _, row["pass_auto"] = best_of(sep, args.repeat, args.timeout, (AUTOCAST,))
        pipe = [path if c == "{FILE}" else c for c in commands["pipe"]] + TIMING_FLAGS
        _, row["pass_pipe"] = best_of(pipe, args.repeat, args.timeout, (AUTOCAST, LOSS_SCALING))
        canon = [path if c == "{FILE}" else c for c in commands["canon"]] + TIMING_FLAGS
        _, row["pass_canon"] = best_of(canon, args.repeat, args.timeout,
                                       (rpb.CANON_NAMES, rpb.CSE_NAMES))
        print(f"[{n}] wall (a) {ms(row['wall_sep'])} (b) {ms(row['wall_pipe'])} "
              f"(c) {ms(row['wall_canon'])} (d) {ms(row['wall_base'])} ms; pass "
              f"loss-scaling {ms(row['pass_ls'])}, autocast {ms(row['pass_auto'])}, "
              f"pipeline {ms(row['pass_pipe'])}, canon+cse {ms(row['pass_canon'])} ms",
              file=sys.stderr)

    rows = rpb.measure_sizes(sizes, args, "amp-ls-bench-", "run_loss_scaling_benchmark", measure)
    if rows is None:
        return 1

    prev = None
    for r in rows:
        r["ratio_ls"] = r["pass_ls"] / r["pass_canon"] if r["pass_canon"] else None
        r["share_ls"] = r["pass_ls"] / (r["pass_ls"] + r["pass_auto"])
        r["per_op_ls"] = r["pass_ls"] / r["ops"]
        r["per_op_pipe"] = r["pass_pipe"] / r["ops"]
        for key, col in (("slope_ls", "pass_ls"), ("slope_pipe", "pass_pipe"),
                         ("slope_canon", "pass_canon")):
            r[key] = slope(prev["ops"], prev[col], r["ops"], r[col]) if prev else None
        prev = r

    shown = [" ".join("FILE" if c == "{FILE}" else rel(c) for c in commands[k]) + "   # " + labels[k]
             for k in commands]
    shown.append("# pass-only: (a), (b), (c) again with " + " ".join(TIMING_FLAGS))
    meta = machine_meta(amp, args.revision)
    meta.update({
        "argv": "bench/run_loss_scaling_benchmark.py " + " ".join(sys.argv[1:]),
        "repeat": args.repeat,
        "seed": args.seed,
        "commands": shown,
        "note": args.note,
    })
    section = render(rows, meta)
    if args.out != "-":
        write_section(args.out, section)
        print(f"run_loss_scaling_benchmark: wrote {args.out}", file=sys.stderr)
    sys.stdout.write(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
