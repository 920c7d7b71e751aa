"""amp-mlir in front of IREE: `amp-compile --target=iree-input`, iree-compile for llvm-cpu, and
amp_mlir.iree.IreeStep running 20 steps with the state on the device, against amp-train's numbers
(the native Trainer, bit-identical to amp-train): the same skipped steps and scales, losses within 1e-5
relative in fp32, 1e-3 in f16 and 2^-8 (half a bf16 ulp) in bf16. The f16 runs (dynamic loss scaling)
poison step 5. bf16 gets the wider bound because IREE sums in another order than the CPU pipeline's
loops and, on a CPU without bf16 arithmetic, rounds bf16 only where a dispatch stores it
(test_sixteen_bit_rounding_inside_a_dispatch): an f32 difference of a few ulps flips an element's rounding to bf16 by one bf16 ulp (2^-7
relative), and on the smallest example (linalg_mlp, 10 classes x 16 rows) such flips move the loss by up
to 1.9e-3 (mlp_sgd 5.6e-4, transformer_adam 7.5e-4, measured); f16's 11-bit mantissa keeps them under
2e-4. Also: the
contract survives iree-compile as reflection metadata, and a CUDA compile (PTX for sm_80) succeeds.
Skipped when iree-base-compiler / iree-base-runtime are not installed (`make check` installs them into
build/venv)."""

import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("iree.compiler", reason="iree-base-compiler is not installed (pip install iree-base-compiler)")
pytest.importorskip("iree.runtime", reason="iree-base-runtime is not installed (pip install iree-base-runtime)")

from amp_mlir.iree import BatchRefused, IreeStep, compile_step  # noqa: E402

STEPS = 20
POISON = 5
TOLERANCE = {"fp32": 1e-5, "f16": 1e-3, "bf16": 2.0**-8}
EXAMPLES = ["mlp_sgd", "transformer_adam", "linalg_mlp"]


def _finite(v):
    return v if v is not None and math.isfinite(v) else None


def _compile(amp_tools, source, precision, out_dir):
    iree_input = out_dir / f"step.{precision}.mlir"
    subprocess.run([amp_tools["amp_compile"], str(source), "--target=iree-input", f"--precision={precision}",
                    "-o", str(iree_input)], check=True, capture_output=True, text=True)
    return iree_input


def _check_against_amp_train(amp_mlir, source, vmfb, precision, inputs_dir=None):
    trainer = amp_mlir.Trainer.from_file(source, precision=precision, inputs_dir=inputs_dir)
    initial = [trainer.argument(i) for i in range(len(trainer.arguments))]
    poison = {POISON} if precision == "f16" else set()
    reference = trainer.run(STEPS, poison_steps=poison)
    rows = IreeStep.load(vmfb).run(initial, STEPS, poison_steps=poison)
    worst = 0.0
    for ours, ref in zip(rows, reference):
        assert ours["skipped"] == ref["skipped"], (ours, ref)
        assert ours["scale"] == ref["scale"], (ours, ref)
        assert (ours["loss"] is None) == (_finite(ref["loss"]) is None), (ours, ref)
        if ours["loss"] is not None:
            worst = max(worst, abs(ours["loss"] - ref["loss"]) / abs(ref["loss"]))
    assert worst <= TOLERANCE[precision], f"largest relative loss difference {worst:.3g}"
    if precision == "f16":
        assert rows[POISON]["skipped"]
        assert rows[POISON]["scale"] == rows[POISON - 1]["scale"] / 2
    return worst


@pytest.mark.parametrize("precision", ["fp32", "f16", "bf16"])
@pytest.mark.parametrize("example", EXAMPLES)
def test_examples_on_llvm_cpu(example, precision, amp_tools, amp_mlir_native, tmp_path, repo_dir):
    source = repo_dir / "examples" / f"{example}.mlir"
    vmfb = compile_step(_compile(amp_tools, source, precision, tmp_path), tmp_path / "step.vmfb")
    _check_against_amp_train(amp_mlir_native, source, vmfb, precision)


_EXPORT_SCRIPT = """
import sys, torch
from amp_mlir.torch import export_train_step
from amp_mlir.torch.models import TransformerClassifier
torch.manual_seed(0)
model = TransformerClassifier(d=32, heads=4, mlp_ratio=2, classes=10)
inputs = (torch.randn(2, 8, 32), torch.randint(0, 10, (2,)))
export_train_step(model, torch.nn.functional.cross_entropy, inputs, optimizer="adam", lr=1e-3, out_dir=sys.argv[1])
"""


def _export_compile_check(script, precision, amp_tools, amp_mlir_native, tmp_path):
    """The step ``script`` exports (to its first argument) compiled for llvm-cpu and run against amp-train.
    The export runs in a process of its own: torch.fx imports triton, whose LLVM must not meet the libLLVM
    that amp_mlir's native module (loaded in this process) brings."""
    pytest.importorskip("torch", reason="PyTorch is not installed")
    out = tmp_path / "export"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    subprocess.run([sys.executable, "-c", script, str(out)], check=True, env=env, timeout=600)
    source = out / "train_step.mlir"
    vmfb = compile_step(_compile(amp_tools, source, precision, tmp_path), tmp_path / "step.vmfb")
    _check_against_amp_train(amp_mlir_native, source, vmfb, precision, inputs_dir=out)


@pytest.mark.parametrize("precision", ["fp32", "f16", "bf16"])
def test_pytorch_export_on_llvm_cpu(precision, amp_tools, amp_mlir_native, tmp_path):
    _export_compile_check(_EXPORT_SCRIPT, precision, amp_tools, amp_mlir_native, tmp_path)


_GUARDED_SCRIPT = """
import sys, torch
from amp_mlir.torch import export_train_step

class Counts(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x):
        n = int((x[:, 0] > 0).sum())  # read from the example: 3, checked by the step
        return self.fc(x) * n

torch.manual_seed(0)
x = torch.randn(6, 4)
x[:, 0] = torch.tensor([1.0, -1.0, 2.0, -2.0, 3.0, -0.5])
export_train_step(Counts(), torch.nn.functional.cross_entropy, (x, torch.randint(0, 3, (6,))), optimizer="adam",
                  lr=1e-2, out_dir=sys.argv[1])
"""


def test_specialized_value_check_on_llvm_cpu(amp_tools, amp_mlir_native, tmp_path):
    """A step exported from a model that reads a value from its batch checks that value (a cf.assert, which
    IREE compiles as a status check): on the example's batch it trains as amp-train does; a batch with
    another count is refused by the step's checks function before the step runs, with the check's message
    (the line is unknown to a model defined in ``python -c``); unchecked, IREE's call of the step fails with
    the same message."""
    _export_compile_check(_GUARDED_SCRIPT, "fp32", amp_tools, amp_mlir_native, tmp_path)
    out = tmp_path / "export"
    source = out / "train_step.mlir"
    assert "captured for another batch" in source.read_text()
    trainer = amp_mlir_native.Trainer.from_file(source, precision="fp32", inputs_dir=out)
    initial = [trainer.argument(i) for i in range(len(trainer.arguments))]
    names = [a["name"] for a in json.loads((out / "manifest.json").read_text())["arguments"]]
    x = initial[names.index("x")].copy()
    x[1, 0] = 5.0  # 4 positive rows
    initial[names.index("x")] = x
    step = IreeStep.load(tmp_path / "step.vmfb")
    with pytest.raises(BatchRefused, match=r"error: the compiled step failed a check: amp_mlir: the training "
                                           r"step was captured for another batch: at .* the model reads value 3 "
                                           r"in the example"):
        step.set_arguments(initial)
    step.set_arguments(initial, check=False)
    with pytest.raises(RuntimeError, match=r"FAILED_PRECONDITION; amp_mlir: the training step was captured for "
                                           r"another batch: at .* the model reads value 3 in the example"):
        step.step()


_LABELS_SCRIPT = """
import sys, torch
import torch.nn.functional as F
from amp_mlir.torch import export_train_step

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
export_train_step(model, F.cross_entropy, (torch.randn(8, 6), torch.randint(0, 3, (8,))), optimizer="sgd",
                  lr=0.1, out_dir=sys.argv[1], dialect=sys.argv[2])
"""


@pytest.mark.parametrize("dialect", ["tosa", "linalg"])
def test_label_past_the_classes_is_refused_on_llvm_cpu(dialect, amp_tools, amp_mlir_native, tmp_path):
    """A class label past the classes of an exported cross-entropy step, in IREE: the checks function
    amp-compile exports (the TOSA import's pick of each row's label from the flattened logits, checked
    per coordinate; the linalg import's payload assert, hoisted) refuses it at the loss function's line.
    A label equal to ``ignore_index`` passes and trains as amp-train does."""
    pytest.importorskip("torch", reason="PyTorch is not installed")
    out = tmp_path / "export"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    subprocess.run([sys.executable, "-c", _LABELS_SCRIPT, str(out), dialect], check=True, env=env, timeout=600)
    source = out / "train_step.mlir"
    step = IreeStep.load(compile_step(_compile(amp_tools, source, "fp32", tmp_path), tmp_path / "step.vmfb"))
    trainer = amp_mlir_native.Trainer.from_file(source, precision="fp32", inputs_dir=out)
    initial = [trainer.argument(i) for i in range(len(trainer.arguments))]
    target = [a["name"] for a in json.loads((out / "manifest.json").read_text())["arguments"]].index("target")
    past = initial[target].copy()
    past[0] = 3  # flattened: 0 * 3 + 3, inside the 8 x 3 logits
    check = {"tosa": r"an index read from the batch is outside \[0, 8\) x \[0, 3\) in 'tosa\.gather'",
             "linalg": r"index must be smaller than dim size \(in 'linalg\.generic'\)"}[dialect]
    with pytest.raises(BatchRefused, match=r"torch/nn/functional\.py:\d+:0: error: the compiled step failed a "
                                           r"check: " + check):
        step.set_arguments(initial[:target] + [past] + initial[target + 1:])
    ignored = initial[target].copy()
    ignored[0] = -100
    step.set_arguments(initial[:target] + [ignored] + initial[target + 1:])
    trainer.set_argument(target, ignored)
    for ours, ref in zip([step.step() for _ in range(3)], trainer.run(3)):
        assert ours["loss"] == pytest.approx(ref["loss"], rel=TOLERANCE["fp32"])


@pytest.mark.parametrize("precision", ["fp32", "f16"])
def test_index_past_the_table_is_refused_on_llvm_cpu(precision, amp_tools, amp_mlir_native, tmp_path, repo_dir):
    """A token id past the embedding table: IREE's gather reads outside it and trains on (a loss of 129
    where the ids in range give 159, no error). The step's checks function, which amp-compile exports
    next to it, refuses the batch before the step runs, located at the gather, and leaves the arguments
    as they were; a good batch trains as amp-train does."""
    source = repo_dir / "test" / "Integration" / "Inputs" / "out_of_range_ids_step.mlir"
    vmfb = compile_step(_compile(amp_tools, source, precision, tmp_path), tmp_path / "step.vmfb")
    step = IreeStep.load(vmfb)
    assert [c["location"] for c in step.checks] == [f"{source}:12:11"]
    trainer = amp_mlir_native.Trainer.from_file(source, precision=precision)
    initial = [trainer.argument(i) for i in range(len(trainer.arguments))]
    good = initial[1] % 4
    step.set_arguments(initial[:1] + [good] + initial[2:])
    before = step.arguments()
    for bad in (4, 1000, -1):
        ids = good.copy()
        ids[-1] = bad
        with pytest.raises(BatchRefused, match=rf"{source}:12:11: error: the compiled step failed a check: an "
                                               r"index read from the batch is outside \[0, 4\) in 'tosa.gather' "
                                               r"\(the batch was refused before the step ran: nothing was "
                                               r"updated\)") as refused:
            step.set_arguments(initial[:1] + [ids] + initial[2:])
        assert refused.value.check["message"].startswith("an index read from the batch")
        assert all(np.array_equal(a, b) for a, b in zip(step.arguments(), before))
    trainer.set_argument(1, good)
    reference = trainer.run(3)
    rows = [step.step() for _ in range(3)]
    for ours, ref in zip(rows, reference):
        assert ours["loss"] == pytest.approx(ref["loss"], rel=TOLERANCE[precision])


_MASK_WRITE_SCRIPT = """
import sys, torch
from amp_mlir.torch import export_train_step

class MaskWrite(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 6)
        self.head = torch.nn.Linear(6, 3)

    def forward(self, x):
        h = self.fc(x)
        mask = x[:, 0] > 0  # 3 rows, checked by the step
        h = h.clone()
        h[mask] = h[mask] * 2.0  # an index_put of rows read from the tensor written
        return self.head(h)

torch.manual_seed(0)
x = torch.randn(6, 4)
x[:, 0] = torch.tensor([1.0, -1.0, 2.0, -2.0, 3.0, -0.5])
export_train_step(MaskWrite(), torch.nn.functional.cross_entropy, (x, torch.randint(0, 3, (6,))), optimizer="sgd",
                  lr=0.1, out_dir=sys.argv[1])
"""


@pytest.mark.parametrize("precision", ["fp32", "f16"])
def test_masked_write_on_llvm_cpu(precision, amp_tools, amp_mlir_native, tmp_path):
    """``h[mask] = h[mask] * 2``: tosa.scatter of rows gathered from the tensor they are written into (and the
    scatters of the mask's nonzero indices and of the backward). Upstream's sequential lowering of the
    scatter failed in iree-compile's stream partitioning ("circular dependency: input operation uses
    partition output"); amp-tosa-scatter-to-gather makes each a gather, and the step trains as in
    amp-train."""
    _export_compile_check(_MASK_WRITE_SCRIPT, precision, amp_tools, amp_mlir_native, tmp_path)
    iree_input = (tmp_path / f"step.{precision}.mlir").read_text()
    assert '"scf.for"' not in iree_input


_SCATTER = """func.func @main(%v: {v}, %i: {i}) -> {v} {{
  %rows = tosa.gather %v, %i : ({v}, {i}) -> {x}
  %two = "tosa.const"() <{{values = dense<2.0> : tensor<1x1x1xf32>}}> : () -> tensor<1x1x1xf32>
  %shift = "tosa.const"() <{{values = dense<0> : tensor<1xi8>}}> : () -> tensor<1xi8>
  %x = tosa.mul %rows, %two, %shift : ({x}, tensor<1x1x1xf32>, tensor<1xi8>) -> {x}
  %0 = tosa.scatter %v, %i, %x : ({v}, {i}, {x}) -> {v}
  return %0 : {v}
}}
"""


@pytest.mark.parametrize("shape", [(2, 16, 4, 3), (1, 65536, 512, 8), (3, 20000, 1000, 2)])
def test_scatter_on_llvm_cpu(shape, amp_tools, tmp_path):
    """A write of rows read from the tensor they are written into (``v[i] = v[i] * 2``), small and with N x K
    x W = 33.5M and 60M index comparisons, which the IREE input kept as upstream's loop below a limit of
    2^24 until bench/iree/run_scatter_benchmark.py measured the gather no slower: each is a gather (no
    ``scf.for``), and IREE's result equals numpy's."""
    import numpy as np
    import iree.runtime as rt

    n, k, w, c = shape
    types = {"v": f"tensor<{n}x{k}x{c}xf32>", "i": f"tensor<{n}x{w}xi32>", "x": f"tensor<{n}x{w}x{c}xf32>"}
    (tmp_path / "scatter.mlir").write_text(_SCATTER.format(**types))
    iree_input = tmp_path / "scatter.iree.mlir"
    subprocess.run([amp_tools["amp_opt"], str(tmp_path / "scatter.mlir"), "--amp-tensor-input-pipeline", "-o",
                    str(iree_input)], check=True, capture_output=True, text=True)
    assert "scf.for" not in iree_input.read_text()
    vmfb = compile_step(iree_input, tmp_path / "scatter.vmfb")
    config = rt.Config("local-task")
    context = rt.SystemContext(config=config)
    context.add_vm_module(rt.VmModule.mmap(config.vm_instance, str(vmfb)))
    rng = np.random.default_rng(0)
    values = rng.standard_normal((n, k, c), dtype=np.float32)
    indices = np.stack([rng.choice(k, w, replace=False) for _ in range(n)]).astype(np.int32)
    expected = values.copy()
    for b in range(n):
        expected[b, indices[b]] *= 2
    np.testing.assert_array_equal(context.modules.module["main"](values, indices).to_host(), expected)


_ROUNDING = """
#m = affine_map<(d0) -> (d0)>
func.func @main(%xi: tensor<4xi16>, %yi: tensor<4xi16>) -> tensor<4xi16> {{
  %e = tensor.empty() : tensor<4xi16>
  %r = linalg.generic {{indexing_maps = [#m, #m, #m], iterator_types = ["parallel"]}}
      ins(%xi, %yi : tensor<4xi16>, tensor<4xi16>) outs(%e : tensor<4xi16>) {{
  ^bb0(%ai: i16, %bi: i16, %o: i16):
    %a = arith.bitcast %ai : i16 to {t}
    %b = arith.bitcast %bi : i16 to {t}
    %s = arith.addf %a, %b : {t}
    %d = arith.subf %s, %a : {t}
    %di = arith.bitcast %d : {t} to i16
    linalg.yield %di : i16
  }} -> tensor<4xi16>
  return %r : tensor<4xi16>
}}
"""


@pytest.mark.parametrize("precision", ["f16", "bf16"])
def test_sixteen_bit_rounding_inside_a_dispatch(precision, tmp_path):
    """``(x + y) - x`` in one linalg body (one IREE dispatch), the operands passed as their bits.

    f16 rounds after each op as the f16 step (and PyTorch) does, overflow to inf included: the f16 step's
    inf check in IREE rests on that. bf16 does not: iree-compile's ``iree-convert-bf16-arith-to-f32``
    computes a dispatch's bf16 ops in f32 and rounds only what it stores (a ``truncf`` to bf16 followed by
    an ``extf`` inside a dispatch disappears; docs/IREE.md), on a CPU without bf16 arithmetic and, compiled
    for the host, on one with AVX512_BF16 and AMX alike. This pins both; if IREE starts rounding bf16
    inside a dispatch, the bf16 case fails and docs/IREE.md and the op-coverage exclusion (bf16
    ``math.roundeven``) are updated."""
    import numpy as np
    import iree.runtime as rt

    (tmp_path / "rounding.mlir").write_text(_ROUNDING.format(t=precision))
    vmfb = compile_step(tmp_path / "rounding.mlir", tmp_path / "rounding.vmfb")
    config = rt.Config("local-task")
    context = rt.SystemContext(config=config)
    context.add_vm_module(rt.VmModule.mmap(config.vm_instance, str(vmfb)))
    if precision == "f16":
        x = np.array([1.0, 1.0, 2048.0, 60000.0], np.float16)
        y = np.array([2.0**-12, 2.0**-10, 1.0, 10000.0], np.float16)
        out = context.modules.module["main"](x.view(np.int16), y.view(np.int16)).to_host().view(np.float16)
        with np.errstate(over="ignore", invalid="ignore"):
            np.testing.assert_array_equal(out, (x + y) - x)  # [0, 2^-10, 0, inf]
        assert np.isinf(out[3])
    else:
        # Every value and every f32 result here is exact in bf16, so the bits are the f32 ones' top half.
        x = np.array([1.0, 1.0, 256.0, 3.0], np.float32)
        y = np.array([2.0**-9, 2.0**-7, 1.0, 2.0**-8], np.float32)
        bits = lambda v: (v.view(np.uint32) >> 16).astype(np.uint16).view(np.int16)  # noqa: E731
        out = context.modules.module["main"](bits(x), bits(y)).to_host()
        rounded_each_op = np.array([0.0, 2.0**-7, 0.0, 0.0], np.float32)  # PyTorch's bf16 (x + y) - x
        in_f32 = (x + y) - x  # [2^-9, 2^-7, 1, 2^-8]
        assert not np.array_equal(out, bits(rounded_each_op))
        np.testing.assert_array_equal(out, bits(in_f32))


_SIXTEEN_BIT_SUMS = """
func.func @main(%x: tensor<4x2xf32>, %y: tensor<300xf32>) -> (tensor<1x2xf32>, tensor<1xf32>, tensor<1x1xf32>) {
  %xh = tosa.cast %x : (tensor<4x2xf32>) -> tensor<4x2xf16>
  %s = tosa.reduce_sum %xh {axis = 0 : i32} : (tensor<4x2xf16>) -> tensor<1x2xf16>
  %sw = tosa.cast %s : (tensor<1x2xf16>) -> tensor<1x2xf32>
  %yb = tosa.cast %y : (tensor<300xf32>) -> tensor<300xbf16>
  %t = tosa.reduce_sum %yb {axis = 0 : i32} : (tensor<300xbf16>) -> tensor<1xbf16>
  %tw = tosa.cast %t : (tensor<1xbf16>) -> tensor<1xf32>
  %row = tosa.transpose %xh {perms = array<i32: 1, 0>} : (tensor<4x2xf16>) -> tensor<2x4xf16>
  %r = tensor.extract_slice %row[0, 0] [1, 4] [1, 1] : tensor<2x4xf16> to tensor<1x4xf16>
  %ones = arith.constant dense<1.0> : tensor<4x1xf16>
  %e = tensor.empty() : tensor<1x1xf16>
  %z = arith.constant 0.0 : f16
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<1x1xf16>) -> tensor<1x1xf16>
  %m = linalg.matmul ins(%r, %ones : tensor<1x4xf16>, tensor<4x1xf16>) outs(%f : tensor<1x1xf16>) -> tensor<1x1xf16>
  %mw = tosa.cast %m : (tensor<1x1xf16>) -> tensor<1x1xf32>
  return %sw, %tw, %mw : tensor<1x2xf32>, tensor<1xf32>, tensor<1x1xf32>
}
"""


def test_sixteen_bit_sums_on_llvm_cpu(amp_tools, tmp_path):
    """Sums written in f16 and bf16 (``tosa.reduce_sum``) and an f16 ``linalg.matmul`` accumulate in f32 and
    round once in IREE too (amp-widen-16bit-accumulators in amp-tensor-input-pipeline), as PyTorch's kernels
    do: accumulated in f16, 40000 + 30000 was inf before -50016 came (IREE returned inf for the sum and for
    the matmul of the same values with ones before the pass); the bf16 sum
    of 256 and 299 ones is 555, rounded once to 556 (or not rounded: below)."""
    import numpy as np
    import iree.runtime as rt

    (tmp_path / "sums.mlir").write_text(_SIXTEEN_BIT_SUMS)
    iree_input = tmp_path / "sums.iree.mlir"
    subprocess.run([amp_tools["amp_opt"], str(tmp_path / "sums.mlir"), "--amp-tensor-input-pipeline", "-o",
                    str(iree_input)], check=True, capture_output=True, text=True)
    vmfb = compile_step(iree_input, tmp_path / "sums.vmfb")
    config = rt.Config("local-task")
    context = rt.SystemContext(config=config)
    context.add_vm_module(rt.VmModule.mmap(config.vm_instance, str(vmfb)))
    x = np.array([[40000.0, 1.0], [30000.0, -1.0], [-50016.0, 1.0], [16.0, -1.0]], np.float32)
    y = np.ones(300, np.float32)
    y[0] = 256.0
    s, t, m = context.modules.module["main"](x, y)
    np.testing.assert_array_equal(s.to_host(), [[20000.0, 0.0]])
    np.testing.assert_array_equal(m.to_host(), [[20000.0]])
    # 555 where IREE computes the bf16 cast back to f32 inside the dispatch without rounding (on a CPU without
    # bf16 arithmetic; test_sixteen_bit_rounding_inside_a_dispatch); bf16 partial sums would lose the ones.
    assert t.to_host()[0] in (555.0, 556.0), t.to_host()


_MATH = """
#m = affine_map<(d0) -> (d0)>
func.func @main(%y: tensor<{n}xf32>, %x: tensor<{n}xf32>) -> tensor<{n}xf32> {{
  %e = tensor.empty() : tensor<{n}xf32>
  %r = linalg.generic {{indexing_maps = [#m, #m, #m], iterator_types = ["parallel"]}}
      ins(%y, %x : tensor<{n}xf32>, tensor<{n}xf32>) outs(%e : tensor<{n}xf32>) {{
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = {op}
    linalg.yield %t : f32
  }} -> tensor<{n}xf32>
  return %r : tensor<{n}xf32>
}}
"""


def _magnitudes(rng, n, low, high):
    """n values of both signs, their magnitudes 10^u for u uniform in [low, high)."""
    return 10.0 ** rng.uniform(low, high, n) * rng.choice([-1.0, 1.0], n)


@pytest.mark.parametrize("op", ["atan", "atan2", "asinh", "acosh", "atanh", "sinh", "cosh", "sin", "cos", "tan", "cbrt",
                                "powf", "exp2"])
def test_math_on_llvm_cpu(op, amp_tools, tmp_path):
    """The f32 math ops that amp-iree-expand-math writes itself for IREE (IREE's own are 39-40 ulp off for atan /
    atan2, and for asinh infinite from |x| = 7.7e9, acosh 351 ulp near 1, atanh 12,901 ulp near 0, sinh 105 ulp
    near 0; sin / tan wrong for small negative x, sin(-1e-8) = +6.2e-8; cos 170,000 ulp near pi/2, sin / cos
    2.3e-4 off at |x| < 8192; cbrt 11.9 ulp and NaN for +-inf, kept as the first guess of a Newton step; cosh
    infinite from |x| = 88.7; powf 125 ulp off and NaN for every negative base, exp2 17 ulp off at 88.7, both computed
    in f64), against float64 over 60,000 values spanning each op's domain (magnitudes 1e-30 to 1e30, near 1 for
    acosh, up to 89.4 for sinh and cosh, up to 51,471 for sin / cos (where Cephes' reduction holds), 100 and next
    to pi/2 for tan, 1.3e-38 to 3e38 for cbrt; for powf bases 1e-3 to 1e3, a quarter of them negative with integer
    exponents, exponents up to 40 in magnitude; for exp2 -149 to 128, integers among them, whose powers of 2 are
    exact) and +-1, +-2: within 3 ulp (tan 4: 2.8 measured; cbrt 0.71); sin and cos next to their zeros within
    2e-9 absolute (an ulp of 1/64: the error of the reduced argument, 9e-10 measured); 0, -0, +-inf and NaN (for
    atan2 and powf every pair with one of them, powf's also with +-0.5 and +-3) as numpy's libm gives them, signs
    of zero included. Results below f32's normal range are left out of the ulp count: IREE's CPU code flushes
    subnormals."""
    import itertools
    import numpy as np
    import iree.runtime as rt

    rng = np.random.default_rng(0)
    n = 60000
    wide = lambda: _magnitudes(rng, n, -30, 30)  # noqa: E731
    inputs = {
        "atan": wide, "atan2": wide, "asinh": lambda: _magnitudes(rng, n, -30, 38),
        "acosh": lambda: np.concatenate([1 + np.abs(_magnitudes(rng, n // 2, -7, 1)),
                                         np.abs(_magnitudes(rng, n - n // 2, 0, 38))]),
        "atanh": lambda: np.concatenate([rng.uniform(-1, 1, n // 2), _magnitudes(rng, n - n // 2, -30, 0)]),
        "sinh": lambda: np.concatenate([rng.uniform(-89.4, 89.4, n // 2), _magnitudes(rng, n - n // 2, -30, 0)]),
        # bases: magnitudes 1e-3 to 1e3, every fourth negative with an integer exponent (x below)
        "powf": lambda: _magnitudes(rng, n, -3, 3),
        "exp2": lambda: np.concatenate([rng.uniform(-149, 128, n // 2), np.round(rng.uniform(-149, 128, n // 4)),
                                        _magnitudes(rng, n - 3 * (n // 4), -30, 0)]),
        "sin": lambda: np.concatenate([rng.uniform(-51471, 51471, n // 3), rng.uniform(-1.6, 1.6, n // 3),
                                       _magnitudes(rng, n - 2 * (n // 3), -30, 0)]),
        "tan": lambda: np.concatenate([rng.uniform(-100, 100, n // 3), _magnitudes(rng, n // 3, -8, -1.3) + np.pi / 2,
                                       _magnitudes(rng, n - 2 * (n // 3), -30, 0)]),
    }
    inputs["cos"] = inputs["sin"]
    inputs["cosh"] = inputs["sinh"]
    inputs["cbrt"] = lambda: np.concatenate([rng.uniform(-10, 10, n // 2), _magnitudes(rng, n - n // 2, -37.9, 38.5)])
    exact_of = {"atan": np.arctan, "atan2": np.arctan2, "asinh": np.arcsinh, "acosh": np.arccosh,
                "atanh": np.arctanh, "sinh": np.sinh, "cosh": np.cosh, "sin": np.sin, "cos": np.cos, "tan": np.tan,
                "cbrt": np.cbrt, "powf": np.power, "exp2": np.exp2}[op]
    binary = op in ("atan2", "powf")
    y, x = inputs[op]().astype(np.float32), wide().astype(np.float32)
    if op == "powf":  # exponents up to 40: |x log y| up to 276, results over f32's whole range
        x = rng.uniform(-40, 40, n).astype(np.float32)
        y[::4] = -np.abs(y[::4])
        x[::4] = np.round(x[::4])
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0]
    if op == "powf":  # odd and non-integer exponents of negative bases
        special += [0.5, -0.5, 3.0, -3.0]
    pairs = list(itertools.product(special, special)) if binary else [(v, 1.0) for v in special]
    y[:len(pairs)], x[:len(pairs)] = zip(*pairs)
    if op == "atan2":
        y[100:200] = x[100:200] * np.float32(1.0001)  # next to the diagonal
    body = f"math.{op} %a, %b : f32" if binary else f"math.{op} %a : f32"
    (tmp_path / "math.mlir").write_text(_MATH.format(n=n, op=body))
    iree_input = tmp_path / "math.iree.mlir"
    subprocess.run([amp_tools["amp_opt"], str(tmp_path / "math.mlir"), "--amp-tensor-input-pipeline", "-o",
                    str(iree_input)], check=True, capture_output=True, text=True)
    text = iree_input.read_text()
    if op in ("sin", "cos", "tan"):  # Cephes' reduction; IREE's own op only of |x| (from 51,471 on)
        own = re.findall(rf"math\.{op} %(\w+) ", text)
        assert len(own) == 1 and re.search(rf"%{own[0]} = math\.absf ", text) and "arith.fptosi" in text, text
    elif op == "cbrt":  # IREE's own, then a Newton step
        assert text.count("math.cbrt ") == 1 and "arith.divf" in text, text
    elif op in ("powf", "exp2"):  # IREE's own, in f64
        assert re.findall(rf"math\.{op} [^\n]*: (\w+)\n", text) == ["f64"], text
    else:
        assert f"math.{op} " not in text
    vmfb = compile_step(iree_input, tmp_path / "math.vmfb")
    config = rt.Config("local-task")
    context = rt.SystemContext(config=config)
    context.add_vm_module(rt.VmModule.mmap(config.vm_instance, str(vmfb)))
    out = context.modules.module["main"](y, x).to_host()
    args64 = (y.astype(np.float64), x.astype(np.float64)) if binary else (y.astype(np.float64),)
    args32 = (y, x) if binary else (y,)
    with np.errstate(all="ignore"):
        exact, libm = exact_of(*args64), exact_of(*args32)
    for i in range(len(pairs)):
        if all(np.isfinite(v) and v != 0 for v in pairs[i]):
            continue  # +-1, +-2: in the ulp count below
        assert (np.isnan(out[i]) and np.isnan(libm[i])) or (
            out[i] == libm[i] and np.signbit(out[i]) == np.signbit(libm[i])), (op, y[i], x[i], out[i], libm[i])
    normal = np.isfinite(exact) & (np.abs(exact) >= np.finfo(np.float32).tiny) & (np.abs(exact) <= 3e38)
    ulps = np.abs(out[normal] - exact[normal]) / np.spacing(np.abs(exact[normal]).astype(np.float32))
    if op in ("sin", "cos"):  # next to a zero: the absolute error of the reduced argument
        near_zero = np.abs(exact[normal]) < 1 / 64
        assert np.abs(out[normal] - exact[normal])[near_zero].max() <= 2e-9
        ulps[near_zero] = 0
    worst = ulps.argmax()
    bound = 4.0 if op == "tan" else 3.0
    assert ulps.max() <= bound, f"{ulps.max():.2f} ulp at y = {y[normal][worst]!r}, x = {x[normal][worst]!r}"


_EMA_SCRIPT = """
import sys, torch
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from amp_mlir.torch import export_train_step
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(), torch.nn.BatchNorm1d(32), torch.nn.Linear(32, 4))
inputs = (torch.randn(8, 16), torch.randint(0, 4, (8,)))
ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9), use_buffers=True)
export_train_step(model, torch.nn.functional.cross_entropy, inputs, optimizer=torch.optim.AdamW(model.parameters(),
                  lr=0.01), ema=ema, out_dir=sys.argv[1])
"""


@pytest.mark.parametrize("precision", ["fp32", "f16"])
def test_weight_average_on_llvm_cpu(precision, amp_tools, amp_mlir_native, tmp_path):
    """A step with a weight average (amp.after_step results: on the poisoned f16 step the average is computed
    again from the kept parameters) compiles for IREE and trains as amp-train: the same skipped steps and
    losses, and the average after the 20 steps within 1e-5 (fp32) / 1e-3 (f16) of amp-train's."""
    _export_compile_check(_EMA_SCRIPT, precision, amp_tools, amp_mlir_native, tmp_path)
    out = tmp_path / "export"
    manifest = json.loads((out / "manifest.json").read_text())
    averaged = [a["index"] for a in manifest["arguments"] if a["kind"] == "ema" and a["shape"]]
    assert averaged
    source = out / "train_step.mlir"
    trainer = amp_mlir_native.Trainer.from_file(source, precision=precision, inputs_dir=out)
    initial = [trainer.argument(i) for i in range(len(trainer.arguments))]
    poison = {POISON} if precision == "f16" else set()
    trainer.run(STEPS, poison_steps=poison)
    iree = IreeStep.load(tmp_path / "step.vmfb")
    iree.run(initial, STEPS, poison_steps=poison)
    values = iree.arguments()
    for index in averaged:
        want = trainer.argument(index)
        scale = max(float(abs(want).max()), 1e-30)
        assert float(abs(values[index] - want).max()) <= TOLERANCE[precision] * scale, manifest["arguments"][index]


def test_contract_survives_iree_compile(amp_tools, tmp_path, repo_dir):
    vmfb = compile_step(_compile(amp_tools, repo_dir / "examples" / "mlp_sgd.mlir", "f16", tmp_path),
                        tmp_path / "step.vmfb")
    step = IreeStep.load(vmfb)
    assert step.entry == "train_step" and step.is_loss_scaled
    args, results = step.contract["arguments"], step.contract["results"]
    assert [a["role"] for a in args] == ["updated"] * 4 + ["input"] * 2 + [
        "scale", "growth_tracker", "overflow_tracker"]
    assert [r["role"] for r in results] == ["update"] * 4 + ["loss", "scale", "growth_tracker",
                                                             "overflow_tracker", "skipped"]
    assert [a["updated_by"] for a in args] == [0, 1, 2, 3, -1, -1, 5, 6, 7]
    assert step.poison_argument == 4
    assert json.loads(json.dumps(step.contract)) == step.contract


def test_poisoned_token_step_on_llvm_cpu(amp_tools, amp_mlir_native, tmp_path, repo_dir):
    """A step whose batch is token ids (and whose rank-0 learning rate comes first): the contract names the
    backward seed as the argument to poison, as amp-train chooses it; IREE skips that step like amp-train."""
    source = repo_dir / "test" / "Tools" / "amp-compile" / "iree-contract.mlir"
    vmfb = compile_step(_compile(amp_tools, source, "f16", tmp_path), tmp_path / "step.vmfb")
    assert IreeStep.load(vmfb).poison_argument == 3
    _check_against_amp_train(amp_mlir_native, source, vmfb, "f16")


def test_cuda_compile(amp_tools, tmp_path, repo_dir):
    iree_input = _compile(amp_tools, repo_dir / "examples" / "mlp_sgd.mlir", "f16", tmp_path)
    out = compile_step(iree_input, tmp_path / "step.cuda.vmfb", target="cuda",
                       extra_args=["--iree-cuda-target=sm_80"])
    assert (tmp_path / "step.cuda.vmfb").stat().st_size > 0 and out.endswith(".vmfb")


def test_iree_input_errors(amp_tools, tmp_path):
    bad = tmp_path / "no_step.mlir"
    bad.write_text("func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}\n")
    r = subprocess.run([amp_tools["amp_compile"], str(bad), "--target=iree-input", "--precision=fp32", "-o",
                        str(tmp_path / "out.mlir")], capture_output=True, text=True)
    assert r.returncode != 0 and "no training step in the module" in r.stderr
    assert not (tmp_path / "out.mlir").exists()
    r = subprocess.run([amp_tools["amp_compile"], str(bad), "--target=iree-input", "--emit=llvm"],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "emits MLIR only" in r.stderr


_BEIT_SCRIPT = """
import sys
from amp_mlir.torch.zoo import UNSEEN
UNSEEN["beit"]().export(sys.argv[1])
"""


def test_beit_relative_position_bias_on_llvm_cpu(amp_tools, amp_mlir_native, tmp_path):
    """BEiT's relative position bias (a constant index table gathered through a one-hot matrix) made
    IREE's global optimisation stop at its iteration limit ("maximum iteration count exceeded in fixed
    point pipeline"); compile_step compiles such a step again without constant expression hoisting,
    and it trains like amp-train."""
    pytest.importorskip("transformers", reason="transformers is not installed")
    _export_compile_check(_BEIT_SCRIPT, "fp32", amp_tools, amp_mlir_native, tmp_path)


_SPLIT_FOURIER_SCRIPT = """
import sys, torch
from amp_mlir.torch import export_train_step
from test_torch_export import _LongSpectrum
torch.manual_seed(0)
inputs = (torch.randn(2, 8, generator=torch.Generator().manual_seed(1)), torch.tensor([0, 2]))
export_train_step(_LongSpectrum(), torch.nn.functional.cross_entropy, inputs, optimizer="sgd", lr=0.01,
                  out_dir=sys.argv[1])
"""


@pytest.mark.parametrize("precision", ["fp32", "f16"])
def test_split_fourier_transforms_on_llvm_cpu(precision, amp_tools, amp_mlir_native, tmp_path):
    """Fourier transforms of 150 samples, split as Cooley and Tukey do (``_complex._dft_last``), with a real
    inverse from a zero-padded spectrum: IREE compiles them and trains like amp-train. (A first real inverse
    mirrored the spectrum with ``flip``; IREE's llvm-cpu could not lower that reversed strided read:
    "LLVM Translation failed for operation: builtin.unrealized_conversion_cast".)"""
    _export_compile_check(_SPLIT_FOURIER_SCRIPT, precision, amp_tools, amp_mlir_native, tmp_path)
