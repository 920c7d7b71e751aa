#!/usr/bin/env python3
"""Pass-time benchmark: amp-autocast vs. canonicalize+cse on synthetic graphs.

    run_pass_benchmark.py [--sizes 1000,10000,100000] [--repeat 3]
                          [--out docs/benchmarks.md] [--amp-opt PATH]
                          [--mlir-opt PATH] [--seed S] [--keep DIR]

For every size N it generates a TOSA training step with about N ops
(bench/gen_training_graph.py) into a temporary directory and times, in the
same run:

  (a) amp-opt  FILE --amp-autocast          -o /dev/null
  (b) mlir-opt FILE --canonicalize --cse    -o /dev/null
  (c) amp-opt  FILE                         -o /dev/null   (parse + print)
  (d) mlir-opt FILE                         -o /dev/null   (parse + print)

(mlir-opt also gets --allow-unregistered-dialect: it reads the #amp.init hints of the graphs.)

Wall time is the best of --repeat runs (time.perf_counter around
subprocess.run). Pass-only time is the best of --repeat runs of the same
command with `--mlir-timing --mlir-timing-display=list`, reading the
AmpAutocastPass line for (a) and Canonicalizer + CSE for (b).

The results go into --out between the markers <!-- pass-time:begin --> and
<!-- pass-time:end --> (the rest of the file is left alone). Exits non-zero
when a tool fails. Standard library only.
"""

import argparse
import datetime
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import gen_training_graph  # noqa: E402

BEGIN = "<!-- pass-time:begin -->"
END = "<!-- pass-time:end -->"
TIMING_FLAGS = ["--mlir-timing", "--mlir-timing-display=list"]
# A single run longer than this is not repeated (keeps 100k+ sizes bearable).
MAX_REPEAT_SECONDS = 120.0
LINEAR_SLOPE = 1.15

AUTOCAST_NAMES = ("AmpAutocastPass", "amp-autocast")
CANON_NAMES = ("Canonicalizer", "canonicalize")
CSE_NAMES = ("CSE", "cse")


class ToolError(RuntimeError):
    pass


def run_tool(cmd, timeout):
    """Runs cmd; returns (wall seconds, stderr text). Raises ToolError."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ToolError(f"timed out after {timeout} s: {' '.join(cmd)}")
    except OSError as err:
        raise ToolError(f"cannot run {cmd[0]}: {err}")
    wall = time.perf_counter() - start
    err = proc.stderr.decode(errors="replace")
    if proc.returncode != 0:
        raise ToolError(f"exit status {proc.returncode}: {' '.join(cmd)}\n{err[-4000:]}")
    return wall, err


_ROW = re.compile(r"^\s*((?:\d+(?:\.\d+)?\s*\(\s*[\d.]+%\)\s*)+)\s*(\S.*?)\s*$")
_CELL = re.compile(r"(\d+(?:\.\d+)?)\s*\(\s*[\d.]+%\)")


def parse_timing(text):
    """Parses an -mlir-timing report (list or tree display) into
    {name: wall seconds}, summing rows of the same name. The wall column is
    found from the '----Wall Time----' header (it is the last time column when
    user time is shown too)."""
    wall_col = None
    columns = None
    times = {}
    for line in text.splitlines():
        if "----Name----" in line:
            heads = re.findall(r"-+([A-Za-z ]+?)-+", line)
            heads = [h.strip() for h in heads if h.strip() != "Name"]
            columns = len(heads)
            wall_col = heads.index("Wall Time") if "Wall Time" in heads else len(heads) - 1
            continue
        m = _ROW.match(line)
        if not m or columns is None:
            continue
        cells = [float(c) for c in _CELL.findall(m.group(1))]
        if len(cells) != columns:
            continue
        name = m.group(2).strip()
        times[name] = times.get(name, 0.0) + cells[wall_col]
    if not times:
        raise ToolError("no -mlir-timing report found in the tool output:\n" + text[-2000:])
    return times


def pick(times, names):
    """Sum of the rows whose name is one of `names` (None if there is none)."""
    found = [v for k, v in times.items() if k in names]
    return sum(found) if found else None


_OP_LINE = re.compile(
    r'^\s*(?:%[\w$.\-]+(?::\d+)?(?:\s*,\s*%[\w$.\-]+(?::\d+)?)*\s*=\s*)?'
    r'"?[A-Za-z_][\w$]*\.[\w$.]+"?[\s(<{:]')
_RETURN = re.compile(r"^\s*(?:func\.)?return\b")


def count_ops(path):
    """Ops actually in the file: every line that starts an operation
    (`%r = dialect.op`, `"dialect.op"`, `func.func`, `return`), comments
    excluded. The generator prints one op per line."""
    n = 0
    with open(path) as f:
        for line in f:
            s = line.lstrip()
            if not s or s.startswith("//"):
                continue
            if _OP_LINE.match(line) or _RETURN.match(line):
                n += 1
    return n


def best_of(cmd, repeat, timeout, timing=None):
    """Best wall time of `repeat` runs; with timing=(names...), the best
    pass-only time from -mlir-timing instead (returns (wall, pass))."""
    walls, passes = [], []
    for i in range(repeat):
        wall, err = run_tool(cmd, timeout)
        walls.append(wall)
        if timing is not None:
            times = parse_timing(err)
            parts = [pick(times, names) for names in timing]
            if any(p is None for p in parts):
                raise ToolError(f"pass {timing} not in the -mlir-timing report of "
                                f"{' '.join(cmd)}:\n{err[-2000:]}")
            passes.append(sum(parts))
        if wall > MAX_REPEAT_SECONDS:
            break
    return min(walls), (min(passes) if passes else None)


def measure_sizes(sizes, args, prefix, name, measure):
    """Generates the training graph of each size (gen_training_graph, --seed) in a work folder
    (--keep, else a temporary one, removed at the end) and calls measure(n, path, row) on it with
    row = {"n", "ops", "mb"}; returns the rows, or None when a tool failed (reported as `name`)."""
    workdir = args.keep or tempfile.mkdtemp(prefix=prefix)
    os.makedirs(workdir, exist_ok=True)
    rows = []
    try:
        for n in sorted(sizes):
            path = os.path.join(workdir, f"train_step_{n}.mlir")
            text, _, layers = gen_training_graph.generate(n, seed=args.seed)
            with open(path, "w") as f:
                f.write(text)
            del text
            row = {"n": n, "ops": count_ops(path), "mb": os.path.getsize(path) / 1e6}
            print(f"[{n}] {layers} layers, {row['ops']} ops, {row['mb']:.1f} MB: {path}", file=sys.stderr)
            measure(n, path, row)
            rows.append(row)
    except ToolError as err:
        print(f"{name}: tool failed: {err}", file=sys.stderr)
        return None
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    return rows


def slope(n1, t1, n2, t2):
    if not (n1 and n2 and t1 and t2) or n1 == n2:
        return None
    return math.log(t2 / t1) / math.log(n2 / n1)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def tool_version(tool):
    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=30)
        for line in out.stdout.splitlines():
            if "version" in line.lower():
                return line.strip()
    except (OSError, subprocess.TimeoutExpired):
        pass
    return "unknown"


def git_revision():
    try:
        rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
        return rev + (" (with uncommitted changes)" if dirty else "") if rev else "unknown"
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def ms(x):
    if x is None:
        return "n/a"
    return f"{x * 1e3:.1f}" if x < 10 else f"{x * 1e3:.0f}"


def fmt(x, spec):
    return "n/a" if x is None else format(x, spec)


def rel(path):
    try:
        r = os.path.relpath(path, REPO)
        return path if r.startswith("..") else r
    except ValueError:
        return path


def interpret(rows):
    """A short paragraph written from the numbers."""
    out = []
    big = rows[-1]
    auto_slopes = [r["slope_auto"] for r in rows[1:] if r["slope_auto"] is not None]
    canon_slopes = [r["slope_canon"] for r in rows[1:] if r["slope_canon"] is not None]
    if auto_slopes:
        last = auto_slopes[-1]
        worst = max(auto_slopes)
        if worst <= LINEAR_SLOPE:
            verdict = "grows linearly with the graph"
        elif last <= LINEAR_SLOPE:
            verdict = ("grows linearly at the largest sizes, though one step "
                       f"has a slope of {worst:.2f}")
        else:
            verdict = (f"grows faster than linearly (slope {last:.2f} between the two "
                       "largest sizes, where 1.0 is linear)")
        out.append(f"amp-autocast pass time {verdict}: log-log slopes "
                   + ", ".join(f"{s:.2f}" for s in auto_slopes)
                   + f"; time per op goes from {rows[0]['per_op_auto'] * 1e6:.2f} us at "
                   f"{rows[0]['ops']} ops to {big['per_op_auto'] * 1e6:.2f} us at {big['ops']} ops.")
    if canon_slopes:
        out.append("canonicalize+cse slopes: " + ", ".join(f"{s:.2f}" for s in canon_slopes) + ".")
    ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
    if ratios:
        if all(x < 1.0 for x in ratios):
            out.append(f"amp-autocast is faster than canonicalize+cse at every size "
                       f"(ratio {min(ratios):.2f}-{max(ratios):.2f}).")
        elif all(x >= 1.0 for x in ratios):
            out.append(f"amp-autocast is slower than canonicalize+cse at every size "
                       f"({min(ratios):.2f}x-{max(ratios):.2f}x the pass-only time).")
        else:
            out.append("amp-autocast vs canonicalize+cse pass-only ratio: "
                       + ", ".join(f"{r['ops']} ops {r['ratio']:.2f}" for r in rows
                                   if r["ratio"] is not None) + ".")
    if big["wall_auto"] and big["wall_base_amp"]:
        share = max(0.0, big["wall_auto"] - big["wall_base_amp"]) / big["wall_auto"]
        out.append(f"At {big['ops']} ops, parsing and printing take "
                   f"{ms(big['wall_base_amp'])} ms of the {ms(big['wall_auto'])} ms "
                   f"amp-opt --amp-autocast wall time; the pass and its verification "
                   f"account for about {share * 100:.0f}% of the run.")
    return " ".join(out)


def render(rows, meta):
    L = []
    L.append(BEGIN)
    L.append("## amp-autocast pass time")
    L.append("")
    L.append("Written by `bench/run_pass_benchmark.py` (do not edit by hand; re-run the "
             "script). Graphs come from `bench/gen_training_graph.py`: a residual "
             "RMS-norm MLP training step in TOSA (batch 16, width 32, forward + "
             "softmax cross-entropy + hand-written backward + SGD), one "
             "`func.func @train_step`.")
    L.append("")
    L.append(f"- Date: {meta['date']}")
    L.append(f"- Machine: {meta['cpu']}, {meta['nproc']} hardware threads (`nproc`), "
             f"{meta['os']}")
    L.append(f"- amp-mlir revision: {meta['git']}; mlir-opt: {meta['mlir_version']}")
    L.append(f"- Command: `{meta['argv']}`; best of {meta['repeat']} runs per cell "
             f"(a run over {MAX_REPEAT_SECONDS:.0f} s is not repeated)")
    L.append("")
    L.append("Commands timed for each generated `FILE` (seed " + str(meta["seed"]) + "):")
    L.append("")
    L.append("```sh")
    for line in meta["commands"]:
        L.append(line)
    L.append("```")
    L.append("")
    L.append("Wall = `time.perf_counter()` around `subprocess.run` (process start, parse, "
             "pass, verification, print). Pass = the wall time `-mlir-timing` reports for "
             "the `AmpAutocastPass` row, resp. `Canonicalizer` + `CSE` (this includes the "
             "verifier run after each pass, which `-mlir-timing` counts in the pass). "
             "All times in milliseconds.")
    L.append("")
    L.append("| ops | file MB | wall autocast (a) | wall canon+cse (b) | wall parse+print amp-opt (c) "
             "| wall parse+print mlir-opt (d) | pass autocast | pass canon+cse "
             "| ratio autocast / (canon+cse) |")
    L.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        L.append(f"| {r['ops']} | {r['mb']:.1f} | {ms(r['wall_auto'])} | {ms(r['wall_canon'])} "
                 f"| {ms(r['wall_base_amp'])} | {ms(r['wall_base_mlir'])} | {ms(r['pass_auto'])} "
                 f"| {ms(r['pass_canon'])} | {fmt(r['ratio'], '.2f')} |")
    L.append("")
    L.append("Growth (pass-only times; slope = log(t2/t1) / log(n2/n1) against the previous "
             "size, 1.0 = linear):")
    L.append("")
    L.append("| ops | autocast us/op | autocast slope | canon+cse us/op | canon+cse slope "
             "| wall autocast slope |")
    L.append("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        L.append(f"| {r['ops']} | {fmt(r['per_op_auto'] and r['per_op_auto'] * 1e6, '.3f')} "
                 f"| {fmt(r['slope_auto'], '.2f') if r['slope_auto'] is not None else '-'} "
                 f"| {fmt(r['per_op_canon'] and r['per_op_canon'] * 1e6, '.3f')} "
                 f"| {fmt(r['slope_canon'], '.2f') if r['slope_canon'] is not None else '-'} "
                 f"| {fmt(r['slope_wall'], '.2f') if r['slope_wall'] is not None else '-'} |")
    L.append("")
    L.append("**Interpretation.** " + interpret(rows))
    if meta.get("notes"):
        L.append("")
        L.append(meta["notes"])
    L.append(END)
    return "\n".join(L) + "\n"


def publish(lines, out, begin, end):
    """Prints the section made of `lines` (its begin marker first, without the end marker) and,
    with `out`, writes it between the markers there; shared by the benchmark scripts."""
    section = "\n".join(list(lines) + [end])
    print(section)
    if out:
        write_section(out, section, begin, end)


def write_section(path, section, begin=BEGIN, end=END):
    """Replaces the text between the begin and end markers in path (appending
    the section when they are missing); shared by every benchmark script."""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    else:
        text = "# Benchmarks\n"
    b, e = text.find(begin), text.find(end)
    if b != -1 and e != -1 and e > b:
        text = text[:b] + section.rstrip("\n") + text[e + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    if not text.endswith("\n"):
        text += "\n"
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def default_mlir_opt():
    for cand in ("/usr/lib/llvm-22/bin/mlir-opt", shutil.which("mlir-opt-22"),
                 shutil.which("mlir-opt")):
        if cand and os.path.exists(cand):
            return cand
    return "mlir-opt"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000",
                    help="comma-separated op counts (default 1000,10000,100000)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(REPO, "docs", "benchmarks.md"),
                    help="markdown file to update ('-' prints the section only)")
    ap.add_argument("--amp-opt", default=os.path.join(REPO, "build", "bin", "amp-opt"))
    ap.add_argument("--mlir-opt", default=default_mlir_opt())
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=1800.0, help="per tool run, seconds")
    ap.add_argument("--keep", metavar="DIR", help="write the graphs here and keep them")
    args = ap.parse_args()

    sizes = [int(s) for s in args.sizes.replace(" ", "").split(",") if s]
    if not sizes or args.repeat < 1:
        ap.error("need at least one size and --repeat >= 1")
    for tool in (args.amp_opt, args.mlir_opt):
        if not (os.path.exists(tool) or shutil.which(tool)):
            print(f"run_pass_benchmark: tool not found: {tool}", file=sys.stderr)
            return 2

    amp, mlir = args.amp_opt, args.mlir_opt
    commands = {
        "auto": [amp, "{FILE}", "--amp-autocast", "-o", "/dev/null"],
        "canon": [mlir, "{FILE}", "--allow-unregistered-dialect", "--canonicalize", "--cse", "-o", "/dev/null"],
        "base_amp": [amp, "{FILE}", "-o", "/dev/null"],
        "base_mlir": [mlir, "{FILE}", "--allow-unregistered-dialect", "-o", "/dev/null"],
    }
    labels = {"auto": "(a)", "canon": "(b)", "base_amp": "(c)", "base_mlir": "(d)"}
    timed = {"auto": (AUTOCAST_NAMES,), "canon": (CANON_NAMES, CSE_NAMES)}

    def measure(n, path, row):
        for key, tmpl in commands.items():
            cmd = [path if c == "{FILE}" else c for c in tmpl]
            wall, _ = best_of(cmd, args.repeat, args.timeout)
            row["wall_" + key] = wall
            if key in timed:
                _, p = best_of(cmd + TIMING_FLAGS, args.repeat, args.timeout, timed[key])
                row["pass_" + key] = p
            print(f"[{n}] {labels[key]} wall {ms(wall)} ms"
                  + (f", pass {ms(row['pass_' + key])} ms" if key in timed else ""),
                  file=sys.stderr)

    rows = measure_sizes(sizes, args, "amp-pass-bench-", "run_pass_benchmark", measure)
    if rows is None:
        return 1

    prev = None
    for r in rows:
        r["ratio"] = r["pass_auto"] / r["pass_canon"] if r["pass_canon"] else None
        r["per_op_auto"] = r["pass_auto"] / r["ops"]
        r["per_op_canon"] = r["pass_canon"] / r["ops"]
        r["slope_auto"] = slope(prev["ops"], prev["pass_auto"], r["ops"], r["pass_auto"]) if prev else None
        r["slope_canon"] = slope(prev["ops"], prev["pass_canon"], r["ops"], r["pass_canon"]) if prev else None
        r["slope_wall"] = slope(prev["ops"], prev["wall_auto"], r["ops"], r["wall_auto"]) if prev else None
        prev = r

    shown = [" ".join("FILE" if c == "{FILE}" else rel(c) for c in commands[key])
             + "   # " + labels[key] for key in commands]
    shown.append("# pass-only: (a) and (b) again with " + " ".join(TIMING_FLAGS))
    meta = {
        "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "cpu": cpu_model(),
        "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "os": f"{platform.system()} {platform.release()}",
        "git": git_revision(),
        "mlir_version": tool_version(mlir),
        "argv": "bench/run_pass_benchmark.py " + " ".join(sys.argv[1:]),
        "repeat": args.repeat,
        "seed": args.seed,
        "commands": shown,
    }
    section = render(rows, meta)
    if args.out == "-":
        sys.stdout.write(section)
    else:
        write_section(args.out, section)
        print(f"run_pass_benchmark: wrote {args.out}", file=sys.stderr)
    if args.out != "-":
        sys.stdout.write(section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
