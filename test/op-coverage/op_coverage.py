#!/usr/bin/env python3
"""The op-coverage matrix: every op of the default precision policy, in f32, f16 and bf16, on every
backend, generated from the policy itself.

    op_coverage.py --build build --write docs/OpCoverage.md    # regenerate the published matrix
    op_coverage.py --build build --check docs/OpCoverage.md    # make check: fail if any cell differs

The ops are those that `amp-opt --amp-list-policy-ops` prints (every op with an AmpPolicyOpInterface
model); the cases per op are in cases.py. For each element type, every case of every op goes into one
training step (its inputs are arguments, its f32-converted result is an amp.update_of result), which
runs through
  cpu   amp-cpu-pipeline through the JIT (amp_mlir.Trainer, precision fp32: the step as written), each
        result compared with a float64 numpy reference on the inputs rounded to the element type;
  gpu   amp-compile --target=cuda --emit=ptx (amp-gpu-pipeline), the PTX checked by ptxas (sm_80);
  gpu-emu  amp-gpu-pipeline with its kernels run on the host (amp_mlir.Trainer(device="cuda-emulated"):
        every block and thread in turn, the runtime's CPU backend), compared with the same reference;
  iree  amp-compile --target=iree-input, iree-compile for llvm-cpu, run by the IREE runtime, compared
        with the same reference.
A step that fails to compile is split per op (then per case) to find the cells that fail. A cell is
`pass`, `FAIL` (with the reason), or `excl.` with its reason in KNOWN_FAILURES below: a known failure
is a documented exclusion, and one that passes again is reported so that the exclusion is removed.

Tolerances, per element type (eps: 2^-23, 2^-10, 2^-7): |got - ref| <= rtol * |ref| + atol + eps * K *
max|terms|, with rtol = 8 eps for f32 (the polynomial tanh and libm differ by a few ulp), 2 eps for f16
and bf16 (the result is rounded once to the type, and the op computes in f32 inside), atol = eps (for an
elementwise op of one operand eps * min(1, |x|), so that f(x) ~ x near 0 keeps its relative accuracy), and
K the number of terms an output sums (reductions and contractions; 1 otherwise). A reference beyond
the element type's range is its infinity (exp(12.5) in f16), and an infinite reference is met exactly.
Inputs of the default domain are uniform in [-2, 2] (the "unit" domain: (-0.9, 0.9)) with six small
magnitudes first (+-1e-3, +-2.5e-4, +-7e-5: normal in every type); an elementwise op's inputs have six
large magnitudes next (LARGE: 12.5 to 5e4; their absolute values in the positive domain); pow's
"negative base" case has bases of both signs and integer exponents -3..3.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cases as C  # noqa: E402

DTYPES = ("f32", "f16", "bf16")
BACKENDS = ("cpu", "gpu", "gpu-emu", "iree")
EPS = {"f32": 2.0 ** -23, "f16": 2.0 ** -10, "bf16": 2.0 ** -7}
RTOL = {"f32": 8 * EPS["f32"], "f16": 2 * EPS["f16"], "bf16": 2 * EPS["bf16"]}

# (op, dtype or "*", backend) -> why the cell cannot pass today. Each one is a documented exclusion
# (docs/OpCoverage.md); one that starts passing makes the check fail until it is removed here.
KNOWN_FAILURES: dict = {
    ("math.roundeven", "bf16", "iree"): "iree-compile computes a dispatch's bf16 ops in f32 (iree-convert-bf16-arith-"
                                        "to-f32), so the input is not rounded to bf16 first: -0.501 rounds to -1 "
                                        "(bf16: -0.5 -> -0); IREE's bf16 roundeven itself is right",
    **{(op, "bf16", "iree"): "iree-compile computes a dispatch's bf16 ops in f32 (iree-convert-bf16-arith-to-f32), so "
                             "the input is not rounded to bf16 first, and at a large argument that is another "
                             "angle: sin(-1500) = 0.99, where bf16's -1504 gives -0.73; IREE's sin / cos of a bf16 "
                             "value are right"
       for op in ("math.sin", "math.cos", "tosa.sin", "tosa.cos")},
}


# --------------------------------------------------------------------------- values

def round_to(x: np.ndarray, t: str) -> np.ndarray:
    """x (float32) rounded to element type t, as float64."""
    x = np.asarray(x, dtype=np.float32)
    if t == "f32":
        return x.astype(np.float64)
    if t == "f16":
        return x.astype(np.float16).astype(np.float64)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16  # round to nearest even
    return rounded.astype(np.uint32).view(np.float32).astype(np.float64)


def inputs_for(case, op: str) -> list:
    seed = int(hashlib.sha256(f"{op}/{case.name}".encode()).hexdigest()[:8], 16)
    rng = np.random.default_rng(seed)
    arrays = []
    for index, shape in enumerate(case.in_shapes):
        n = int(np.prod(shape)) if shape else 1
        if case.domain == "pos":
            v = rng.uniform(0.25, 2.0, n)
        elif case.domain == "unit":
            v = rng.uniform(-0.9, 0.9, n)
            v[:len(SMALL)] = SMALL[:n]
        elif case.domain == "ge1":
            v = rng.uniform(1.1, 3.0, n)
        elif case.domain == "nonzero":
            v = rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n)
        elif case.domain == "int":  # few distinct values: comparisons see equal elements too
            v = rng.integers(-2, 3, n).astype(np.float64)
        elif case.domain == "int exponent":  # pow of bases of both signs, integer exponents -3..3
            v = rng.integers(-3, 4, n).astype(np.float64) if index else rng.uniform(-2.0, 2.0, n)
            if not index:
                v[:len(SMALL)] = SMALL[:n]
        elif case.domain == "distinct":  # argmax without ties
            v = rng.permutation(n).astype(np.float64) / 4 - n / 8
        else:
            v = rng.uniform(-2.0, 2.0, n)
            v[:len(SMALL)] = SMALL[:n]
        if case.large and case.domain in ("any", "pos", "nonzero") and n > len(SMALL):
            # each operand its own order, so that a binary op meets two different magnitudes
            large = np.roll(LARGE, index)[:n - len(SMALL)]
            v[len(SMALL):len(SMALL) + len(large)] = np.abs(large) if case.domain == "pos" else large
        arrays.append(v.astype(np.float32).reshape(shape))
    return arrays


# The first values of the "any" and "unit" domains: small magnitudes of both signs, normal in f16 (from
# 6.1e-5) and bf16. An op that is right on [-2, 2] can lose its relative accuracy there (IREE's
# sin(-1e-8) was +6.2e-8; the CPU's expm1, as exp(x) - 1, was 200 ulp off at 1e-3).
SMALL = np.array([1e-3, -1e-3, 2.5e-4, -2.5e-4, 7e-5, -7e-5])

# The next values of an elementwise op's inputs ("any", "pos" as magnitudes, "nonzero"): large magnitudes,
# where an expansion can overflow before its result does (exp(89) is inf in f32, sinh(-89) is not) and
# where a 16-bit result overflows (exp(12.5) is inf in f16, and 4e4 * -5e4). Below 51,471 (IREE's sin and
# cos are documented as loose from there on: docs/IREE.md) and below f16's largest finite value 65,504.
LARGE = np.array([12.5, -89.0, 700.0, -1500.0, 4.0e4, -5.0e4])


def tolerance(case, t: str, ref: np.ndarray, inputs64: list) -> np.ndarray:
    scale = max([float(np.max(np.abs(a))) for a in inputs64 if a.size] + [1.0])
    terms = scale ** min(2, len(inputs64)) if case.reduction > 1 else 0.0
    atol = np.full(ref.shape, EPS[t])
    if len(inputs64) == 1 and inputs64[0].shape == ref.shape and case.reduction == 1 and case.kind == "float":
        # an elementwise op of one operand: where |x| < 1, the absolute term scales with x, so that
        # f(x) ~ x near 0 (sin, tanh, erf, gelu) is held to its relative accuracy
        atol = EPS[t] * np.minimum(1.0, np.abs(inputs64[0]))
    return RTOL[t] * np.abs(ref) + atol + EPS[t] * case.reduction * terms * (case.reduction > 1)


# --------------------------------------------------------------------------- steps

class Cell:
    def __init__(self, op, case, index):
        self.op, self.case, self.ns = op, case, f"c{index}_"


def build_step(cells: list, t: str) -> str:
    """One training step applying every cell's case in element type t."""
    args, results, body, returns = [], [], [], []
    for cell in cells:
        for i, shape in enumerate(cell.case.in_shapes):
            args.append(f"%{cell.ns}in{i}: {C.ttype(shape, 'f32')} {{amp.init = #amp.init<zeros>}}")
    outputs = []
    for cell in cells:
        lines, out = cell.case.body(cell.ns, t)
        body += lines
        outputs.append((cell, out))
    first_out = len(args)
    for k, (cell, out) in enumerate(outputs):
        args.append(f"%{cell.ns}o: {C.ttype(cell.case.out_shape, 'f32')} {{amp.init = #amp.init<zeros>}}")
        results.append(f"{C.ttype(cell.case.out_shape, 'f32')} {{amp.update_of = {first_out + k} : i64}}")
        returns.append((out, C.ttype(cell.case.out_shape, "f32")))
    results.append("tensor<f32> {amp.loss}")
    # The contract wants a backward seed (amp-compile) and a loss: one constant serves as both.
    body.append("%loss = arith.constant {amp.grad_seed} dense<1.0> : tensor<f32>")
    returns.append(("%loss", "tensor<f32>"))
    text = ["func.func @train_step(" + ",\n    ".join(args) + ")\n    -> (" + ", ".join(results) + ") {"]
    text += ["  " + line for line in body]
    text.append("  return " + ", ".join(r for r, _ in returns) + " : " + ", ".join(ty for _, ty in returns))
    text.append("}")
    return "\n".join(text) + "\n"


def step_arguments(cells: list) -> list:
    arrays = []
    for cell in cells:
        arrays += inputs_for(cell.case, cell.op)
    for cell in cells:
        arrays.append(np.zeros(cell.case.out_shape, dtype=np.float32))
    return arrays


def compare(cells: list, t: str, outputs: list) -> dict:
    """{cell: None (pass) or a reason} for outputs in cell order."""
    verdicts = {}
    for cell, got in zip(cells, outputs):
        inputs64 = [round_to(a, t) for a in inputs_for(cell.case, cell.op)]
        with np.errstate(all="ignore"):
            ref = np.asarray(cell.case.reference(*inputs64), dtype=np.float64).reshape(cell.case.out_shape)
            # a result beyond the element type's range is its infinity (exp(12.5) in f16)
            rounded = round_to(ref, t)
        ref = np.where(np.isinf(rounded), rounded, ref)
        got = np.asarray(got, dtype=np.float64).reshape(cell.case.out_shape)
        tol = tolerance(cell.case, t, ref, inputs64)
        both_nan = np.isnan(ref) & np.isnan(got)
        # an infinite reference is met exactly (its tolerance is infinite too)
        close = (np.abs(got - ref) <= tol) & np.isfinite(ref)
        bad = ~(both_nan | close | (got == ref))
        if np.any(bad):
            k = int(np.argmax(bad.reshape(-1)))
            verdicts[cell] = (f"{cell.case.name}: {int(bad.sum())}/{bad.size} elements off, e.g. got "
                              f"{got.reshape(-1)[k]:.6g}, expected {ref.reshape(-1)[k]:.6g}")
        else:
            verdicts[cell] = None
    return verdicts


# --------------------------------------------------------------------------- backends

WORKER = r"""
import sys, numpy as np
sys.path.insert(0, sys.argv[1])
import amp_mlir
data = np.load(sys.argv[3])
trainer = amp_mlir.Trainer(open(sys.argv[2]).read(), "f32", loss_scaling="none", opt_level=1,
                           source_name=sys.argv[2], device=sys.argv[5])
n = len(data.files)
for i in range(n):
    trainer.set_argument(i, data[f"a{i}"])
trainer.step()
np.savez(sys.argv[4], *[trainer.argument(i) for i in range(n)])
"""


class Runner:
    def __init__(self, build: Path, work: Path, python_dir: Path):
        self.build, self.work, self.python_dir = build, work, python_dir
        self.counter = 0
        self.ptxas = self._ptxas()
        try:
            import iree.compiler  # noqa: F401
            import iree.runtime  # noqa: F401
            self.iree = True
        except ImportError:
            self.iree = False

    @staticmethod
    def _ptxas():
        for candidate in (os.environ.get("PTXAS"), "/usr/local/cuda/bin/ptxas"):
            if candidate and os.access(candidate, os.X_OK):
                return candidate
        return None

    def available(self, backend):
        if backend == "gpu":
            return self.ptxas is not None and (self.build / "bin" / "amp-compile").exists()
        if backend == "iree":
            return self.iree
        return True

    def _files(self, text):
        self.counter += 1
        path = self.work / f"step{self.counter}.mlir"
        path.write_text(text)
        return path

    @staticmethod
    def _first_error(text):
        for line in text.splitlines():
            if "error" in line:
                return line.strip()[:300]
        return (text.strip().splitlines() or ["no output"])[-1][:300]

    def run(self, backend, cells, t):
        """None and the outputs, or an error message for the whole step."""
        step = self._files(build_step(cells, t))
        arrays = step_arguments(cells)
        n_in = len(arrays) - len(cells)
        if backend in ("cpu", "gpu-emu"):
            device = "cpu" if backend == "cpu" else "cuda-emulated"
            npz_in, npz_out = step.with_suffix(".in.npz"), step.with_suffix(".out.npz")
            np.savez(npz_in, **{f"a{i}": a for i, a in enumerate(arrays)})
            env = dict(os.environ, AMP_MLIR_BUILD_DIR=str(self.build), AMP_CACHE_DIR=str(self.work / "jit"))
            proc = subprocess.run([sys.executable, "-c", WORKER, str(self.python_dir), str(step), str(npz_in),
                                   str(npz_out), device], capture_output=True, text=True, env=env, timeout=600)
            if proc.returncode != 0:
                return self._first_error(proc.stderr or proc.stdout), None
            out = np.load(npz_out)
            return None, [out[f"arr_{n_in + k}"] for k in range(len(cells))]
        if backend == "gpu":
            ptx = step.with_suffix(".ptx")
            proc = subprocess.run([str(self.build / "bin" / "amp-compile"), str(step), "--target=cuda",
                                   "--precision=fp32", "--chip=sm_80", "--emit=ptx", "-o", str(ptx)], capture_output=True, text=True,
                                  timeout=600)
            if proc.returncode != 0:
                return self._first_error(proc.stderr), None
            proc = subprocess.run([self.ptxas, "-arch=sm_80", str(ptx), "-o", str(ptx.with_suffix(".cubin"))],
                                  capture_output=True, text=True, timeout=600)
            if proc.returncode != 0:
                return "ptxas: " + self._first_error(proc.stderr), None
            return None, None
        # iree
        iree_in = step.with_suffix(".iree.mlir")
        proc = subprocess.run([str(self.build / "bin" / "amp-compile"), str(step), "--target=iree-input", "--precision=fp32", "-o",
                               str(iree_in)], capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            return self._first_error(proc.stderr), None
        sys.path.insert(0, str(self.python_dir))
        from amp_mlir.iree import IreeStep, compile_step
        vmfb = step.with_suffix(".vmfb")
        try:
            compile_step(iree_in, vmfb)
            runner = IreeStep.load(vmfb)
            runner.set_arguments(arrays)
            runner.step()
            values = runner.arguments()
        except Exception as error:  # noqa: BLE001 (iree-compile's and the runtime's errors)
            return "iree: " + self._first_error(str(error)), None
        return None, [values[n_in + k] for k in range(len(cells))]


def evaluate(runner, backend, cells, t, log):
    """{cell: None or reason}: the whole step first, then halves of a failing one, down to one cell."""
    error, outputs = runner.run(backend, cells, t)
    if error is None:
        if outputs is None:
            return {cell: None for cell in cells}
        return compare(cells, t, outputs)
    if len(cells) == 1:
        return {cells[0]: error}
    log(f"  {backend}/{t}: a step of {len(cells)} cases failed ({error[:120]}); splitting")
    mid = len(cells) // 2
    verdicts = evaluate(runner, backend, cells[:mid], t, log)
    verdicts.update(evaluate(runner, backend, cells[mid:], t, log))
    return verdicts


# --------------------------------------------------------------------------- the matrix

def policy_ops(build: Path) -> list:
    out = subprocess.run([str(build / "bin" / "amp-opt"), "--amp-list-policy-ops"], capture_output=True,
                         text=True, check=True).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def compute(build: Path, work: Path, python_dir: Path, backends, log) -> tuple:
    ops = policy_ops(build)
    covered, excluded, uncovered = {}, {}, []
    for op in ops:
        reason = C.excluded_reason(op)
        cases = C.cases_for(op)
        if cases:
            covered[op] = cases
        elif reason:
            excluded[op] = reason
        else:
            uncovered.append(op)
    runner = Runner(build, work, python_dir)
    cells = []
    for op, cases in covered.items():
        for case in cases:
            cells.append(Cell(op, case, len(cells)))
    results = {}  # (op, t, backend) -> None | reason
    unavailable = [b for b in backends if not runner.available(b)]
    for backend in backends:
        if backend in unavailable:
            continue
        for t in DTYPES:
            log(f"{backend}/{t}: {len(cells)} cases of {len(covered)} ops")
            verdicts = evaluate(runner, backend, cells, t, log)
            for cell, verdict in verdicts.items():
                key = (cell.op, t, backend)
                if verdict is not None:
                    results[key] = (results.get(key) or []) + [verdict]
                else:
                    results.setdefault(key, None)
    return ops, covered, excluded, uncovered, results, unavailable


def cell_status(op, t, backend, results):
    known = KNOWN_FAILURES.get((op, t, backend)) or KNOWN_FAILURES.get((op, "*", backend))
    failures = results.get((op, t, backend))
    if failures is None:
        return ("pass-but-excluded" if known else "pass"), None
    if known:
        return "excl.", known
    return "FAIL", "; ".join(failures)


def render(ops, covered, excluded, uncovered, results, backends) -> str:
    lines = ["# Op coverage",
             "",
             "Generated by `make op-coverage` (test/op-coverage/op_coverage.py); `make check` regenerates it and",
             "fails if any cell differs from this file. Do not edit by hand.",
             "",
             "Every op with a default precision policy (`amp-opt --amp-list-policy-ops`), in f32, f16 and bf16,",
             "applied by small training steps (elementwise, broadcasting operands, reductions along each axis,",
             "the op's own shapes for contractions, convolutions and pooling; test/op-coverage/cases.py), run",
             "through:",
             "",
             "- **cpu**: `amp-cpu-pipeline` through the JIT (`amp_mlir.Trainer`), compared with a float64 numpy",
             "  reference on the inputs rounded to the element type;",
             "- **gpu**: `amp-compile --target=cuda --emit=ptx` (`amp-gpu-pipeline`), the PTX accepted by",
             "  `ptxas -arch=sm_80` (compiled, not run: no GPU on the machines that generate this file);",
             "- **gpu-emu**: the same `amp-gpu-pipeline` with its kernels run on the host, every block and thread",
             "  in turn (`amp_mlir.Trainer(device=\"cuda-emulated\")`, `amp-gpu-emulate-on-host`: the GPU",
             "  pipeline's tiling, guards, split reductions and GEMM calls), compared with the same reference;",
             "- **iree**: `amp-compile --target=iree-input`, `iree-compile` for llvm-cpu, run by the IREE",
             "  runtime, compared with the same reference.",
             "",
             "Inputs (unless an op needs a domain): uniform in [-2, 2] ((-0.9, 0.9) for asin, acos, atanh, tan",
             "and log1p), the first six of each input the small magnitudes +-1e-3, +-2.5e-4, +-7e-5 (normal in",
             "every type); an elementwise op's inputs the large magnitudes 12.5, -89, 700, -1500, 4e4, -5e4 next",
             "(each operand in its own order; their absolute values where the op needs positive inputs), where",
             "an expansion can overflow before its result does and 16-bit results overflow; pow's `negative",
             "base` case: bases of both signs, integer exponents -3..3. Tolerance (eps = 2^-23, 2^-10, 2^-7 for",
             "f32, f16, bf16): |got - ref| <= rtol |ref| + atol + eps K max|input|^2, rtol = 8 eps (f32) or 2 eps",
             "(f16, bf16), atol = eps (eps min(1, |x|) for an elementwise op of one operand x, so that f(x) ~ x",
             "near 0 keeps its relative accuracy), K the number of terms each output sums (1 for elementwise",
             "ops); a reference beyond the element type's range is its infinity, met exactly. `pass`: every case",
             "of the op passes; `excl.`: a documented exclusion (reason below); `FAIL`: a regression (make check",
             "fails).",
             ""]
    header = "| op | cases | " + " | ".join(f"{b} {t}" for b in backends for t in DTYPES) + " |"
    lines += [header, "|" + "---|" * (2 + len(backends) * len(DTYPES))]
    notes = []
    for op in ops:
        if op not in covered:
            continue
        row = [f"`{op}`", ", ".join(c.name for c in covered[op])]
        for backend in backends:
            for t in DTYPES:
                status, reason = cell_status(op, t, backend, results)
                if (op, t, backend) not in results and status == "pass":
                    row.append("n/a")
                    continue
                if reason:
                    notes.append(f"- `{op}` {backend} {t}: {reason}")
                    row.append(f"{status} [{len(notes)}]")
                else:
                    row.append(status)
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "## Notes", ""]
    lines += [f"{i + 1}. {n[2:]}" for i, n in enumerate(notes)] or ["None: every cell passes."]
    lines += ["", "## Ops without cells", "", "| op | why |", "|---|---|"]
    lines += [f"| `{op}` | {why} |" for op, why in sorted(excluded.items())]
    lines += [f"| `{op}` | **not covered**: the policy names it and cases.py has no case |" for op in uncovered]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", type=Path, default=Path("build"))
    parser.add_argument("--python-dir", type=Path, default=Path(__file__).resolve().parents[2] / "python")
    parser.add_argument("--work", type=Path, help="keep the generated steps here (default: a temporary directory)")
    parser.add_argument("--backends", default=",".join(BACKENDS))
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", type=Path, help="write the matrix (Markdown) here")
    group.add_argument("--check", type=Path, help="fail unless the matrix equals this file")
    args = parser.parse_args(argv)
    backends = [b for b in args.backends.split(",") if b]
    log = lambda message: print(message, file=sys.stderr, flush=True)  # noqa: E731
    with tempfile.TemporaryDirectory(prefix="amp-op-coverage-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        ops, covered, excluded, uncovered, results, unavailable = compute(
            args.build.resolve(), work.resolve(), args.python_dir.resolve(), backends, log)
    if uncovered:
        log("error: the policy names ops that the matrix does not cover (add cases to cases.py, or an "
            "EXCLUDED entry with the reason): " + ", ".join(uncovered))
    text = render(ops, covered, excluded, uncovered, results, backends)
    if args.write:
        if unavailable:
            log(f"error: cannot write the full matrix: backend(s) {', '.join(unavailable)} unavailable here")
            return 1
        args.write.write_text(text)
        log(f"wrote {args.write}")
        return 1 if uncovered else 0
    expected = args.check.read_text()
    if unavailable:
        log(f"note: backend(s) {', '.join(unavailable)} unavailable here; their columns are not compared")
        keep = [b for b in backends if b not in unavailable]
        expected = project(expected, keep)
        text = project(render(ops, covered, excluded, uncovered, results, keep), keep)
    if text != expected:
        import difflib
        sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                                   str(args.check), "now"))
        log(f"error: the op-coverage matrix differs from {args.check} (a FAIL cell is a regression; a cell "
            "that passes now: regenerate the file with `make op-coverage`)")
        return 1
    log(f"op coverage: {sum(len(c) for c in covered.values())} cases of {len(covered)} ops match {args.check}")
    return 1 if uncovered else 0


def project(text: str, backends) -> str:
    """The table rows restricted to `backends`' columns (notes and their numbers dropped), to compare
    matrices on a machine that lacks a backend."""
    out, header = [], None
    for line in text.splitlines():
        if line.startswith("| op | cases |"):
            header = [h.strip() for h in line.strip("|").split("|")]
        elif header and line.startswith("| `"):
            cols = line.strip("|").split("|")
            keep = [c.split("[")[0].strip() for c, h in zip(cols, header)
                    if h in ("op", "cases") or h.split(" ")[0] in backends]
            out.append(" | ".join(keep))
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
