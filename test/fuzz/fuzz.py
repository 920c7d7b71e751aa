#!/usr/bin/env python3
"""Robustness fuzzer for amp-opt (and amp-train): seeded mutations of a corpus.

Each run takes a corpus file (MLIR chunks in the style of upstream's TOSA,
Linalg, Arith, Math and SCF tests, and the bundled training steps), applies
one to three text mutations (a changed type, an unranked or dynamic
dimension, a swapped SSA use or op name, an op of an unregistered dialect, a
deleted / duplicated / swapped line, a truncation, a flipped character ...),
and runs it through one configuration (autocast f16/bf16, amp-pipeline,
autocast + amp-lower-to-linalg, amp-cpu-pipeline, amp-gpu-pipeline with
--gpu, a mutated policy file, amp-train --steps 1). Every run is classified
(with --mlir-translate, a pipeline's output must also translate to LLVM IR):

  ok               exit 0 and the output parses and verifies again
  located error    exit != 0 and the first error names FILE:LINE:COL, or the
                   option / file it comes from (`amp-opt: error: -o '...'`)
  crash            killed by a signal, or a stack dump / LLVM ERROR
  hang             past --timeout seconds
  invalid output   exit 0 but the output does not parse or verify
  unlocated error  exit != 0 with no located error (`<unknown>:0`, nothing)

The last four are failures: the exit code is 1 if any occurred, and each
failing input is kept under --work (with the command line to replay it).
The same --seed and --count give the same runs (the lit suite runs such a
slice); --time-budget runs until the budget is spent instead.

  fuzz.py --amp-opt build/bin/amp-opt --seed 1 --time-budget 300 \\
      --corpus test/fuzz/Inputs/corpus --corpus examples --work /tmp/fuzz
"""

import argparse
import json
import os
import random
import re
import shlex
import subprocess
import sys
import time

FAILURES = ("crash", "hang", "invalid output", "unlocated error")
KINDS = ("ok", "located error") + FAILURES

# Configurations: extra amp-opt arguments ({policy} is a mutated policy file).
CONFIGS = [
    ["--amp-autocast"],
    ["--amp-autocast=precision=bf16"],
    ["--amp-pipeline"],
    ["--amp-autocast", "--amp-lower-to-linalg"],
    ["--amp-cpu-pipeline"],
    ["--amp-autocast", "--amp-cpu-pipeline"],
    ["--amp-autocast=policy={policy}"],
]
# With --gpu (a CUDA toolkit for libdevice and ptxas): the GPU pipeline too.
GPU_CONFIGS = [
    ["--amp-gpu-pipeline=chip=sm_80"],
    ["--amp-autocast", "--amp-gpu-pipeline=chip=sm_80 format=isa"],
]

# Ops that can replace each other textually (same operand shape).
OP_GROUPS = [
    ["tosa.exp", "tosa.log", "tosa.tanh", "tosa.sigmoid", "tosa.abs", "tosa.negate",
     "tosa.reciprocal", "tosa.rsqrt", "tosa.floor", "tosa.ceil", "tosa.erf"],
    ["tosa.add", "tosa.sub", "tosa.maximum", "tosa.minimum", "tosa.pow"],
    ["tosa.reduce_sum", "tosa.reduce_max", "tosa.reduce_min", "tosa.reduce_product"],
    ["arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf",
     "arith.minimumf", "arith.remf"],
    ["math.exp", "math.log", "math.tanh", "math.sqrt", "math.rsqrt", "math.absf",
     "math.erf", "math.sin"],
    ["linalg.matmul", "linalg.matmul_transpose_a", "linalg.matmul_transpose_b"],
]
OPS = [op for group in OP_GROUPS for op in group]
POLICY_OPS = OPS + ["tosa.matmul", "tosa.conv2d", "tosa.clamp", "tosa.mul", "tensor.cast",
                    "linalg.generic", "scf.for", "mydialect.op", "tosa.matmull", "matmul",
                    "tosa.", ".exp"]
CATEGORIES = ["allow", "deny", "infer", "clear", "maybe", "", "[deny]", "{a: b}", "'allow'"]

TENSOR_RE = re.compile(r"tensor<([0-9?x]*)(f32|f16|bf16|i1|i8|i32)>")
DIM_RE = re.compile(r"(?<=tensor<)([0-9?x]+)(?=x(?:f32|f16|bf16|i1|i8|i32)>)")
SSA_RE = re.compile(r"%[A-Za-z_][A-Za-z0-9_]*|%[0-9]+")
INT_RE = re.compile(r"(?<=[ <:\[,])-?[0-9]+(?=[ >,\]])")


def pick_match(rng, regex, text):
    matches = list(regex.finditer(text))
    return rng.choice(matches) if matches else None


def replace_span(text, match, new, group=0):
    return text[:match.start(group)] + new + text[match.end(group):]


# --------------------------------------------------------------------- mutators
def m_delete_line(rng, text, corpus):
    lines = text.splitlines(True)
    if len(lines) > 1:
        del lines[rng.randrange(len(lines))]
    return "".join(lines)


def m_duplicate_line(rng, text, corpus):
    lines = text.splitlines(True)
    i = rng.randrange(len(lines))
    lines.insert(i, lines[i])
    return "".join(lines)


def m_swap_lines(rng, text, corpus):
    lines = text.splitlines(True)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]
    return "".join(lines)


def m_element_type(rng, text, corpus):
    m = pick_match(rng, TENSOR_RE, text)
    if not m:
        return text
    return replace_span(text, m, rng.choice(["f16", "bf16", "f64", "i32", "f8E4M3FN"]), 2)


def m_unranked(rng, text, corpus):
    m = pick_match(rng, TENSOR_RE, text)
    if not m:
        return text
    return replace_span(text, m, "tensor<*x%s>" % m.group(2))


def m_unranked_everywhere(rng, text, corpus):
    """Every tensor of one shape becomes unranked (keeps the IR consistent)."""
    m = pick_match(rng, TENSOR_RE, text)
    if not m:
        return text
    return text.replace(m.group(0), "tensor<*x%s>" % m.group(2))


def m_dynamic_dim(rng, text, corpus):
    m = pick_match(rng, DIM_RE, text)
    if not m:
        return text
    dims = m.group(1).split("x")
    dims[rng.randrange(len(dims))] = "?"
    new = "x".join(dims)
    return text.replace("tensor<%sx" % m.group(1), "tensor<%sx" % new) \
        if rng.random() < 0.5 else replace_span(text, m, new, 1)


def m_change_dim(rng, text, corpus):
    m = pick_match(rng, DIM_RE, text)
    if not m:
        return text
    dims = m.group(1).split("x")
    dims[rng.randrange(len(dims))] = str(rng.choice([0, 1, 2, 3, 5, 7, 16, 65536]))
    return replace_span(text, m, "x".join(dims), 1)


def m_swap_ssa(rng, text, corpus):
    uses = list(SSA_RE.finditer(text))
    if len(uses) < 2:
        return text
    m = rng.choice(uses)
    return replace_span(text, m, rng.choice(uses).group(0))


def m_swap_op(rng, text, corpus):
    present = [op for op in OPS if op + " " in text]
    if not present:
        return text
    op = rng.choice(present)
    group = next(g for g in OP_GROUPS if op in g)
    return text.replace(op + " ", rng.choice(group) + " ", 1)


def m_unregistered(rng, text, corpus):
    """A value produced by an op of an unregistered dialect replaces a use."""
    m = re.search(r"func\.func @\w+\((.*?)\)", text)
    if not m:
        return text
    args = re.findall(r"(%\w+): (tensor<[^>]*>)", m.group(1))
    if not args:
        return text
    name, ty = rng.choice(args)
    brace = text.find("{", m.end())
    if brace < 0:  # an earlier mutation truncated the text before the body
        return text
    body_start = brace + 1
    new = '\n  %%fuzz = "fuzz.op"(%s) : (%s) -> %s' % (name, ty, ty)
    rest = text[body_start:]
    uses = [u for u in re.finditer(re.escape(name) + r"\b", rest)]
    if uses:
        u = rng.choice(uses)
        rest = rest[:u.start()] + "%fuzz" + rest[u.end():]
    return text[:body_start] + new + rest


def m_truncate(rng, text, corpus):
    return text[:rng.randrange(len(text))]


def m_flip_char(rng, text, corpus):
    i = rng.randrange(len(text))
    return text[:i] + rng.choice("{}()<>[]%@:,x?*=\"' 0123456789\n\t") + text[i + 1:]


def m_integer(rng, text, corpus):
    m = pick_match(rng, INT_RE, text)
    if not m:
        return text
    return replace_span(text, m, str(rng.choice([-1, 0, 1, 2, 3, 4, 7, 64, 2**31, 2**63 - 1])))


def m_splice(rng, text, corpus):
    other = rng.choice(corpus)[1].splitlines(True)
    lines = text.splitlines(True)
    lines.insert(rng.randrange(len(lines) + 1), rng.choice(other))
    return "".join(lines)


def m_pin(rng, text, corpus):
    """An amp.precision pin (valid or not) on some op."""
    ops = [m for m in re.finditer(r"= ([a-z]+\.[a-z_0-9]+) ", text)]
    if not ops:
        return text
    m = rng.choice(ops)
    pin = rng.choice(["#amp.precision<f32>", "#amp.precision<f16>", "#amp.precision<bf16>",
                      "#amp.precision<f8>", '"f16"', "1 : i32"])
    line_end = text.find("\n", m.end())
    line = text[m.start():line_end]
    colon = line.rfind(" : ")
    if colon < 0 or "{" in line:
        return text
    pos = m.start() + colon
    return text[:pos] + " {amp.precision = %s}" % pin + text[pos:]


# (mutator, weight): the ones that keep the IR parseable more often weigh
# more, so that runs reach the passes rather than stop in the parser.
MUTATORS = [(m_delete_line, 2), (m_duplicate_line, 1), (m_swap_lines, 1),
            (m_element_type, 3), (m_unranked, 2), (m_unranked_everywhere, 4),
            (m_dynamic_dim, 4), (m_change_dim, 2), (m_swap_ssa, 3), (m_swap_op, 5),
            (m_unregistered, 4), (m_truncate, 1), (m_flip_char, 1), (m_integer, 2),
            (m_splice, 1), (m_pin, 3)]


def mutate_policy(rng):
    """A policy file: usually a few entries, sometimes malformed on purpose."""
    entries = ["  %s: %s" % (rng.choice(POLICY_OPS), rng.choice(CATEGORIES))
               for _ in range(rng.randrange(0, 5))]
    text = "ops:\n" + "\n".join(entries) + "\n"
    roll = rng.random()
    if roll < 0.1:
        text = ""
    elif roll < 0.2:
        text += "---\nops:\n  tosa.exp: deny\n"
    elif roll < 0.3:
        text = text.replace("  ", "\t", 1)
    elif roll < 0.4:
        text = "rules:\n" + text
    elif roll < 0.5 and text:
        i = rng.randrange(len(text))
        text = text[:i] + rng.choice(":-[]{}#&*!|>'\"%@`") + text[i:]
    return text


# ------------------------------------------------------------------ classifying
LOCATED_RES = [
    re.compile(r"^[^\s:][^:]*:\d+:\d+: error: "),        # FILE:LINE:COL
    re.compile(r"^(amp-opt|amp-train): error: "),        # names option / file
    re.compile(r"^[^\s:][^:]*: error: "),                # FILE: error (file name)
]
CRASH_RE = re.compile(r"Stack dump:|PLEASE submit a bug report|LLVM ERROR|Assertion .* failed")


def classify(proc, stderr):
    if proc is None:
        return "hang"
    if proc.returncode < 0 or proc.returncode >= 128 or CRASH_RE.search(stderr):
        return "crash"
    if proc.returncode == 0:
        return "ok"
    for line in stderr.splitlines():
        if " error: " in line or line.startswith("error:"):
            if line.startswith("<unknown>") or line.startswith("error:"):
                return "unlocated error"
            return "located error" if any(r.match(line) for r in LOCATED_RES) \
                else "unlocated error"
    return "unlocated error"


def run(cmd, timeout):
    try:
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              timeout=timeout)
        return proc, proc.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return None, ""


def load_corpus(paths):
    files = []
    for path in paths:
        if os.path.isdir(path):
            files += sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".mlir"))
        else:
            files.append(path)
    corpus = []
    for f in files:
        with open(f) as fh:
            text = fh.read()
        # Upstream-style files hold several chunks.
        for i, chunk in enumerate(text.split("// -----")):
            if "func.func" in chunk:
                corpus.append(("%s#%d" % (os.path.basename(f), i), chunk))
    return corpus


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--amp-opt", required=True)
    parser.add_argument("--amp-train", help="also run training steps for one step")
    parser.add_argument("--corpus", action="append", required=True,
                        help="a .mlir file or a folder of them (repeatable)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, help="number of runs (deterministic)")
    parser.add_argument("--time-budget", type=float, help="seconds to keep running")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per run")
    parser.add_argument("--work", required=True, help="folder for inputs and failures")
    parser.add_argument("--json", help="write the summary and failures as JSON here")
    parser.add_argument("--gpu", action="store_true", help="also run amp-gpu-pipeline (needs CUDA)")
    parser.add_argument("--mlir-translate", help="check that the CPU / GPU pipelines' output "
                        "translates to LLVM IR (exit 0 with output that does not is 'invalid output')")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    if (args.count is None) == (args.time_budget is None):
        parser.error("give exactly one of --count and --time-budget")

    rng = random.Random(args.seed)
    corpus = load_corpus(args.corpus)
    if not corpus:
        parser.error("the corpus holds no function")
    os.makedirs(args.work, exist_ok=True)
    counts = {k: 0 for k in KINDS}
    failures = []
    start = time.monotonic()
    n = 0
    while (n < args.count) if args.count is not None else \
            (time.monotonic() - start < args.time_budget):
        name, text = rng.choice(corpus)
        mutations = []
        for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
            mutator = rng.choices([m for m, _ in MUTATORS],
                                  weights=[w for _, w in MUTATORS])[0]
            text = mutator(rng, text, corpus)
            mutations.append(mutator.__name__[2:])
        config = rng.choice(CONFIGS + (GPU_CONFIGS if args.gpu else []))
        train = args.amp_train and "amp.update_of" in text and rng.random() < 0.15
        case = os.path.join(args.work, "case-%d" % n)
        src, out = case + ".mlir", case + ".out.mlir"
        with open(src, "w") as fh:
            fh.write(text)
        if train:
            cmd = [args.amp_train, src, "--steps", "1", "--precision",
                   rng.choice(["fp32", "f16", "bf16"])]
        else:
            extra = []
            for arg in config:
                if "{policy}" in arg:
                    policy = case + ".policy.yaml"
                    with open(policy, "w") as fh:
                        fh.write(mutate_policy(rng))
                    arg = arg.replace("{policy}", policy)
                extra.append(arg)
            cmd = [args.amp_opt, "--allow-unregistered-dialect", src] + extra + ["-o", out]
        proc, stderr = run(cmd, args.timeout)
        kind = classify(proc, stderr)
        if kind == "ok" and not train:
            check, check_err = run([args.amp_opt, "--allow-unregistered-dialect", out,
                                    "-o", os.devnull], args.timeout)
            if check is None or check.returncode != 0:
                kind = "invalid output"
                stderr = check_err
            elif args.mlir_translate and any("-cpu-pipeline" in a or "-gpu-pipeline" in a
                                             for a in config):
                check, check_err = run([args.mlir_translate, "--mlir-to-llvmir", out, "-o", os.devnull],
                                       args.timeout)
                if check is None or check.returncode != 0:
                    kind = "invalid output"
                    stderr = "mlir-translate --mlir-to-llvmir: " + check_err
        counts[kind] += 1
        record = {"case": n, "source": name, "mutations": mutations,
                  "command": " ".join(shlex.quote(c) for c in cmd), "kind": kind}
        if kind in FAILURES:
            record["stderr"] = stderr[-2000:]
            failures.append(record)
            print("fuzz: %s: %s" % (kind.upper(), record["command"]), file=sys.stderr)
            for line in stderr.splitlines()[:5]:
                print("fuzz:   " + line, file=sys.stderr)
        else:
            for path in (src, out, case + ".policy.yaml"):
                if os.path.exists(path):
                    os.remove(path)
        if args.verbose:
            first = next((l for l in stderr.splitlines() if "error:" in l), "")
            print("%5d %-16s %-28s %s %s | %s" % (n, kind, name, ",".join(mutations),
                                                 "amp-train" if train else " ".join(config),
                                                 first[:160]))
        n += 1

    elapsed = time.monotonic() - start
    summary = ", ".join("%s %d" % (k, counts[k]) for k in KINDS)
    print("fuzz: seed %d, %d runs in %.1f s: %s" % (args.seed, n, elapsed, summary))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"seed": args.seed, "runs": n, "seconds": round(elapsed, 1),
                       "counts": counts, "failures": failures}, fh, indent=2)
    return 1 if any(counts[k] for k in FAILURES) else 0


if __name__ == "__main__":
    sys.exit(main())
