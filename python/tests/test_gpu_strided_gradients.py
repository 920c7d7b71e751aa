"""A strided convolution's input gradient through the f16 GPU pipeline without a GPU.

A stride-2 convolution's input gradient is computed per stride sublattice of the input grid and the
sublattices interleaved (python/amp_mlir/torch/_decompositions.py, docs/GPU.md); the interleaving
inserts each part along a new dimension of 2 and collapses it into rows twice as long (8 x 2 into 16),
then places those rows among zero rows. amp-eliminate-empty-tensors writes the parts straight into the
result through `expand_shape` views of its slices (a reshape that merges dimensions larger than 1, and
parts that are themselves insertion chains): no buffer of their own and no copy kernel. The emulated GPU
trains as the CPU does, every kernel access bounds-checked."""

import re
import subprocess

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir.fx", reason="torch-mlir is not installed (make py-models)")


class _Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.c2(torch.relu(self.c1(x))))
        return self.head(x.mean((2, 3)))


def test_interleaved_input_gradient_is_written_in_place(amp_tools, guarded_gpu_lowering, train_records, tmp_path):
    from amp_mlir.torch import export_train_step

    torch.manual_seed(0)
    x, y = torch.randn(2, 3, 16, 16), torch.tensor([1, 7])
    export_train_step(_Net(), torch.nn.functional.cross_entropy, (x, y), optimizer="sgd", lr=0.1,
                      momentum=0.9, out_dir=tmp_path)
    step = tmp_path / "train_step.mlir"
    guarded_gpu_lowering(step, tmp_path / "step.gpu.mlir")

    bufferized = subprocess.run([amp_tools["amp_compile"], str(step), "--target=cuda", "--emit=gpu",
                                 "--precision=f16", "-o", str(tmp_path / "again.mlir"),
                                 "--mlir-print-ir-after=one-shot-bufferize"],
                                check=True, capture_output=True, text=True).stderr
    # The input gradient of c1's output, 2 x 8 x 16 x 16 f16 interleaved from rows of 8 x 2: its rows of 16
    # live in a 2 x 8 x 8 x 32 buffer (rows of values and rows of zeros, strides 2048, 256, 32, 1).
    copies = re.findall(r"memref\.copy .*: (memref<[^>]*>>?) to (memref<[^>]*>>?)", bufferized)
    into_rows = [(src, dst) for src, dst in copies if "strided<[2048, 256, 32, 1]" in dst]
    assert into_rows, "the interleaved gradient's buffer is not in the bufferized step: the test's model changed"
    assert all(src == dst for src, dst in into_rows), into_rows  # only self-copies, which canonicalize erases

    cpu = train_records(tmp_path, "--precision=f16", steps=4)
    emulated = train_records(tmp_path, "--precision=f16", "--device=cuda-emulated", "--check-bounds", steps=4)
    assert [(r["loss"], r["scale"], r["skipped"]) for r in emulated] == \
        [(r["loss"], r["scale"], r["skipped"]) for r in cpu]
