"""A ResNet stem (7x7 convolution, batch norm, ReLU, 3x3 max pooling with stride 2, average pooling, a
linear head), exported whole through torch-mlir, through the f16 GPU pipeline without a GPU.

The max pooling's backward is amp_mlir.torch's scatter-free decomposition (_decompositions.py: a select
per window tap, the taps summed per stride sublattice of the input grid and the sublattices interleaved).
It used to move each axis last and back with transposes; fused into a tap's select, the kernel stored rows
but read the saved argmax indices across them, with a stride of the pooled map's width (the guard's
uncoalesced load; ResNet-18 and -50 had 9 such kernels a step at 224 px). Now the taps are placed along
each axis where it is: no transpose, every kernel coalesced; the emulated GPU trains as the CPU does."""

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir.fx", reason="torch-mlir is not installed (make py-models)")


class _Stem(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 16, 7, stride=2, padding=3, bias=False)
        self.bn = torch.nn.BatchNorm2d(16)
        self.pool = torch.nn.MaxPool2d(3, stride=2, padding=1)
        self.head = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn(self.conv(x))))
        return self.head(torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1))


def test_max_pool_backward_is_coalesced(guarded_gpu_lowering, train_records, tmp_path):
    from amp_mlir.torch import export_train_step

    torch.manual_seed(0)
    x, y = torch.randn(2, 3, 112, 112), torch.tensor([1, 7])  # a 28 x 28 pooled map
    export_train_step(_Stem(), torch.nn.functional.cross_entropy, (x, y), optimizer="sgd", lr=0.1,
                      momentum=0.9, out_dir=tmp_path)
    guard = guarded_gpu_lowering(tmp_path / "train_step.mlir", tmp_path / "step.gpu.mlir")
    assert "coalescing: 0 kernel(s)" in guard, guard
    cpu = train_records(tmp_path, "--precision=f16")
    emulated = train_records(tmp_path, "--precision=f16", "--device=cuda-emulated", "--check-bounds")
    assert [(r["loss"], r["scale"], r["skipped"]) for r in emulated] == \
        [(r["loss"], r["scale"], r["skipped"]) for r in cpu]
