"""The GPU benchmark's transformer block (bench/gpu/run_gpu_benchmark.py: d=512, 8 heads, 4x GELU MLP,
Adam), exported whole through torch-mlir at the benchmark's small size (B=16, T=128), through the GPU pipeline without a GPU:

- the structural guard (test/tools/check_gpu_structure.py) on `amp-compile --target=cuda --emit=gpu`
  in f16: no violation, one GEMM call per contraction (attention's batch x heads included: one
  amp_rt_gemm_nested call), no contraction left as loops (every tosa.matmul of the step is a call),
  coalesced accesses to each kernel's largest buffer (or a documented exception);
- trained through the emulated GPU pipeline (amp-train --device=cuda-emulated, bounds-checked) against
  the CPU pipeline: fp32 within 1e-5 relative, f16 within 1e-4, same scales and skipped steps.

And a step whose reductions have few rows (a layer norm 2048 wide, a 50257-word cross entropy over 64
tokens): no single-block launch, no thread walking more than 256 elements, the emulated losses the CPU's."""

import re

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir.fx", reason="torch-mlir is not installed (make py-models)")


@pytest.fixture(scope="module")
def block_step(tmp_path_factory):
    import torch

    from amp_mlir.torch import export_train_step
    from amp_mlir.torch.models import TransformerClassifier

    torch.manual_seed(0)
    model = TransformerClassifier(d=512, heads=8, mlp_ratio=4, classes=16)
    x, y = torch.randn(16, 128, 512), torch.randint(0, 16, (16,))  # the benchmark's small size
    out = tmp_path_factory.mktemp("block")
    export_train_step(model, torch.nn.functional.cross_entropy, (x, y), optimizer="adam", lr=1e-3,
                      out_dir=out)
    return out


def test_block_gpu_structure(block_step, guarded_gpu_lowering, tmp_path):
    lowered = tmp_path / "block.gpu.mlir"
    out = guarded_gpu_lowering(block_step / "train_step.mlir", lowered)
    matmuls = int(re.search(r"contractions in the input: (\d+)", out).group(1))
    calls = int(re.search(r"GEMM calls: (\d+)", out).group(1))
    lowered_n, most = map(int, re.search(r"lowered contractions: (\d+), most GEMM calls for one: (\d+)",
                                         out).groups())
    assert most == 1 and calls == lowered_n >= matmuls, out
    assert "amp_rt_gemm_nested" in lowered.read_text()  # attention's [batch, heads]
    assert "coalescing: 0 kernel(s)" in out, out


@pytest.mark.parametrize("precision, rtol", [("fp32", 1e-5), ("f16", 1e-4)])
def test_block_emulated_gpu_trains_like_cpu(block_step, train_records, precision, rtol):
    cpu = train_records(block_step, f"--precision={precision}")
    emu = train_records(block_step, f"--precision={precision}", "--device=cuda-emulated", "--check-bounds")
    for a, b in zip(cpu, emu):
        assert a["skipped"] == b["skipped"] and a["scale"] == b["scale"], (a, b)
        if a["loss"] is not None:
            assert abs(a["loss"] - b["loss"]) <= rtol * abs(a["loss"]), (a, b)


class _WideVocabHead(torch.nn.Module):
    """64 tokens through a layer norm 2048 wide and a head over GPT-2's 50257-word vocabulary."""

    def __init__(self):
        super().__init__()
        self.up, self.norm = torch.nn.Linear(16, 2048), torch.nn.LayerNorm(2048)
        self.down, self.head = torch.nn.Linear(2048, 16), torch.nn.Linear(16, 50257)

    def forward(self, x):
        return self.head(self.down(self.norm(self.up(x))))


def test_few_row_reductions_run_on_many_threads(guarded_gpu_lowering, train_records, tmp_path):
    """Reductions over few rows (64) but much work in all, on the GPU pipeline: the layer norm's variance,
    which reads its row's mean through a broadcast, and the cross entropy's max and sum over 50257 words,
    split into 1733 partials of 29 per row, whose combining stage (1733, a prime) is padded and split again.
    Before, each was one block of 64 threads, a thread walking its row's 2048 elements or 1733 partials
    (the guard's single-block rule). The emulated device trains as the CPU does (fp32: the same sums in
    another order)."""
    from amp_mlir.torch import export_train_step

    torch.manual_seed(0)
    x, y = torch.randn(64, 16), torch.randint(0, 50257, (64,))
    export_train_step(_WideVocabHead(), torch.nn.functional.cross_entropy, (x, y), optimizer="sgd", lr=0.1,
                      out_dir=tmp_path)
    out = guarded_gpu_lowering(tmp_path / "train_step.mlir", tmp_path / "step.gpu.mlir")
    assert int(re.search(r"largest thread work: (\d+)", out).group(1)) <= 256, out
    cpu = [r["loss"] for r in train_records(tmp_path, "--precision=fp32")]
    emulated = [r["loss"] for r in train_records(tmp_path, "--precision=fp32", "--device=cuda-emulated")]
    assert cpu[0] > 10 and cpu[-1] < cpu[0], cpu  # ln(50257) = 10.8 at the start, then it trains
    assert emulated == pytest.approx(cpu, rel=1e-6), (emulated, cpu)
