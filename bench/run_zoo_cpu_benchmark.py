#!/usr/bin/env python3
"""Real-model CPU step time and compile time: the model zoo (python/amp_mlir/torch/zoo.py) through
amp-train against PyTorch eager on the same machine, in one run.

    build/venv/bin/python bench/run_zoo_cpu_benchmark.py [--models resnet18,gpt2] [--steps 8]
        [--rounds 5] [--threads N] [--bf16-portable] [--out docs/benchmarks.md]

Per model: export_train_step (torch-mlir) once; amp-train --precision fp32 / bf16 / f16 with --timing
and a cold JIT (an empty cache directory): compile_ms and the median "ms" of the steps after the first
two; then, for a step too short for --steps of them to take --min-ms, a second run (the step from the
cache) of as many steps as do, whose median is the one reported (PyTorch likewise: a 0.04 ms step
timed 18 times is mostly the noise of this machine);
PyTorch eager (torch.optim, the same batch) with torch.set_num_threads(--threads): fp32, and CPU
autocast bf16 / f16 (torch.autocast("cpu") around forward and loss, f16 with torch.amp.GradScaler("cpu"),
as our f16 step scales its loss): the median step time after two warm-up steps. Both sides run with OMP_WAIT_POLICY=passive (idle GEMM workers sleep
instead of spinning on a shared machine) and the same thread count (OMP_NUM_THREADS for amp-train's
oneDNN / OpenBLAS). With --rounds R, our three steps then run again from the cache, in turn, R times:
the table reports each one's median over the rounds and the median of the rounds' f16 / fp32 ratios (the
speed of a shared machine drifts over minutes, and steps timed in turn see the same drift). With
--bf16-portable, a fourth step, bf16 with `--cpu-native-bf16=false` (what a CPU without bf16 instructions
runs: no oneDNN bf16 / AMX kernels, the rounding in integer code), is timed and alternated with them, in a
column of its own: what the native paths buy on a CPU that has them. The table goes between
<!-- zoo-cpu:begin --> and <!-- zoo-cpu:end --> in --out.
"""

import argparse
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "test" / "model-zoo"))
BEGIN, END = "<!-- zoo-cpu:begin -->", "<!-- zoo-cpu:end -->"


def ranged_steps(steps, step_ms, min_ms, most=20000):
    """At least `steps`, and enough for `min_ms` of steps of `step_ms` each (at most `most`)."""
    if not step_ms or steps * step_ms >= min_ms:
        return steps
    return min(most, max(steps, int(min_ms / step_ms) + 3))


def torch_step_ms(case, steps, precision="fp32", min_ms=0.0):
    """PyTorch eager's median step in ms; for bf16 / f16 CPU autocast (f16 with a GradScaler). None
    where PyTorch cannot run the step in that precision. Steps too short for `steps` of them to take
    `min_ms` are timed again, as many of them as do."""
    import copy

    import torch
    import torch.utils._pytree as pytree
    import model_zoo

    # each module in the mode the case gives it, as the export takes it (model_zoo.torch_losses)
    model = copy.deepcopy(case.model)
    opt = model_zoo._optimizer([p for p in model.parameters() if p.requires_grad], case.optimizer, case.options)
    inputs = pytree.tree_map(lambda t: t.float() if isinstance(t, torch.Tensor) and t.is_floating_point() else t,
                             list(case.inputs))
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}.get(precision)
    scaler = torch.amp.GradScaler("cpu") if precision == "f16" else None
    def timed(n):
        times = []
        for _ in range(n):
            t = time.perf_counter()
            model_zoo.torch_step(case, model, opt, inputs, dtype, scaler)
            times.append((time.perf_counter() - t) * 1000)
        return statistics.median(times[2:])

    try:
        ms = timed(steps)
        more = ranged_steps(steps, ms, min_ms)
        return timed(more) if more > steps else ms
    except RuntimeError:
        return None


# amp-train's options for each step timed: a precision, or bf16 on the portable paths (--bf16-portable).
STEP_OPTIONS = {"fp32": ["--precision=fp32"], "bf16": ["--precision=bf16"], "f16": ["--precision=f16"],
                "bf16-portable": ["--precision=bf16", "--cpu-native-bf16=false"]}


def amp_train_ms(build, step_dir, precision, n, env):
    """(median step ms after the first two, compile s, error) of one amp-train run of `n` steps
    (`precision` a key of STEP_OPTIONS), its JIT cache in step_dir/jit-cache-<precision>."""
    cache = step_dir / f"jit-cache-{precision}"
    proc = subprocess.run([str(build / "bin" / "amp-train"), str(step_dir / "train_step.mlir"), "--inputs",
                           str(step_dir), "--steps", str(n), *STEP_OPTIONS[precision], "--timing",
                           f"--jit-cache-dir={cache}"], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        return None, None, proc.stderr[-300:]
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    compile_ms = next(json.loads(line)["compile_ms"] for line in proc.stderr.splitlines() if "compile_ms" in line)
    return statistics.median(r["ms"] for r in rows[2:]), compile_ms / 1000, None


def ours(build, step_dir, precision, steps, env, min_ms=0.0):
    """(median step ms, compile s, error, steps run): the first run compiles into an empty JIT cache (a
    cold compile); a step too short for `steps` of them to take `min_ms` runs again from the cache, as
    many steps as do."""
    shutil.rmtree(step_dir / f"jit-cache-{precision}", ignore_errors=True)
    ms, compile_s, err = amp_train_ms(build, step_dir, precision, steps, env)
    more = ranged_steps(steps, ms, min_ms)
    if ms is not None and more > steps:
        ms = amp_train_ms(build, step_dir, precision, more, env)[0]
        steps = more
    return ms, compile_s, err, steps


def alternated(build, step_dir, res, rounds, env):
    """The precisions' warm runs (from the JIT cache, as many steps as `res` ran) alternated `rounds`
    times: each precision's median over the rounds, and the median of the rounds' f16 / fp32 ratios.
    On a shared machine the speed drifts over minutes; precisions timed in turn see the same drift."""
    runs = {p: [] for p in res if res[p][2] is None}
    for _ in range(rounds):
        for p in runs:
            runs[p].append(amp_train_ms(build, step_dir, p, res[p][3], env)[0])
    ms = {p: statistics.median(t) for p, t in runs.items() if None not in t}
    ratios = [f / b for f, b in zip(runs.get("f16", []), runs.get("fp32", [])) if f and b]
    return ms, statistics.median(ratios) if ratios else None


def fmt_ms(ms):
    """A step time with three significant digits (one decimal from 100 ms)."""
    return f"{ms:.1f}" if ms >= 100 else f"{ms:.3g}"


def main():
    import torch
    from amp_mlir.torch.zoo import ZOO

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(ZOO))
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--min-ms", type=float, default=2000.0,
                    help="time a step too short for --steps of them to take this long again, as many as do")
    ap.add_argument("--rounds", type=int, default=1,
                    help="after the cold runs, time our fp32 / bf16 / f16 steps again this many times in turn "
                         "and report the medians over the rounds")
    ap.add_argument("--bf16-portable", action="store_true",
                    help="also time bf16 with --cpu-native-bf16=false, in a column of its own")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--build", type=Path, default=REPO / "build")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    env = dict(os.environ, OMP_WAIT_POLICY="passive", OMP_NUM_THREADS=str(args.threads))
    os.environ.update(OMP_WAIT_POLICY="passive")
    torch.set_num_threads(args.threads)
    work = Path(tempfile.mkdtemp(prefix="zoo-bench-"))
    rows = []
    for name in args.models.split(","):
        try:
            case = ZOO[name]()
        except ModuleNotFoundError as e:
            rows.append(f"| {name} | skipped: {e.name} not installed | | | | | | | | | |")
            continue
        case.export(work / name)
        torch_ms = {p: torch_step_ms(case, args.steps, p, args.min_ms) for p in ("fp32", "bf16", "f16")}
        t_ms = torch_ms["fp32"]
        steps = ("fp32", "bf16", "f16") + (("bf16-portable",) if args.bf16_portable else ())
        res = {p: ours(args.build, work / name, p, args.steps, env, args.min_ms) for p in steps}
        step_ms = {p: res[p][0] for p in res}
        f16_ratio = step_ms["f16"] / step_ms["fp32"] if step_ms["f16"] and step_ms["fp32"] else None
        if args.rounds > 1:
            warm, f16_ratio = alternated(args.build, work / name, res, args.rounds, env)
            step_ms.update(warm)
        cells = []
        for p in steps:
            ms, err = step_ms[p], res[p][2]
            cells.append(fmt_ms(ms) if ms is not None else f"fails: {err[:60]}")
        fp32 = step_ms["fp32"]
        ratio = f"{fp32 / t_ms:.2f}x" if fp32 else "-"
        compile_s = "/".join(f"{res[p][1]:.0f}" if res[p][1] is not None else "-" for p in ("fp32", "bf16", "f16"))
        torch_cells = [fmt_ms(torch_ms[p]) if torch_ms[p] is not None else "fails" for p in ("bf16", "f16")]
        f16_cell = f"{f16_ratio:.2f}x" if f16_ratio else "-"
        portable = f" {cells[3]} |" if args.bf16_portable else ""
        rows.append(f"| {name} | {fmt_ms(t_ms)} | {cells[0]} | {ratio} | {torch_cells[0]} | {cells[1]} "
                    f"| {torch_cells[1]} | {cells[2]} | {f16_cell} | {compile_s} |{portable}")
        print(rows[-1], flush=True)
    table = [
        BEGIN,
        f"Measured {datetime.date.today()} on {platform.node()} ({os.cpu_count()} cores), {args.threads} threads on "
        f"both sides, OMP_WAIT_POLICY=passive, torch {torch.__version__}, median step after 2 warm-up steps of "
        f"{args.steps} (of as many as take {args.min_ms / 1000:g} s where {args.steps} take less), compile time "
        f"cold (`bench/run_zoo_cpu_benchmark.py`)"
        + (f"; ours: the median of {args.rounds} rounds of warm runs, {' / '.join(steps)} in turn, and of their "
           f"f16 / fp32 ratios" if args.rounds > 1 else "") + ":",
        "",
        "| model | PyTorch eager fp32 ms | ours fp32 ms | ours / PyTorch | PyTorch bf16 autocast ms "
        "| ours bf16 ms | PyTorch f16 autocast ms | ours f16 ms | ours f16 / fp32 | compile s (fp32/bf16/f16) |"
        + (" ours bf16 portable ms |" if args.bf16_portable else ""),
        "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if args.bf16_portable else ""),
        *rows,
        END,
    ]
    text = "\n".join(table)
    print(text)
    if args.out:
        doc = args.out.read_text()
        if BEGIN in doc:
            doc = doc[:doc.index(BEGIN)] + text + doc[doc.index(END) + len(END):]
        else:
            doc += "\n## Real models on the CPU (the model zoo)\n\n" + text + "\n"
        args.out.write_text(doc)


if __name__ == "__main__":
    main()
