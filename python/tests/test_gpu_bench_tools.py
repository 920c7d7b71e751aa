"""The GPU session's tooling (bench/gpu), checked where it is made: the GPU machine has PyTorch but no
torch-mlir, so bench/gpu/pack.sh exports the benchmark's steps here without their arrays
(run_gpu_benchmark.py --export-to) and run_gpu_benchmark.write_arguments writes them there from the
model, argument by argument as the manifest names them. They must be the arrays the export writes,
byte for byte (parameters, Adam's moments and step counter, SGD's momentum buffers, the batch, the
backward seed), or the two sides of the benchmark would not start from the same point."""

import importlib.util
import shutil

import pytest

pytest.importorskip("torch")
pytest.importorskip("torch_mlir.fx", reason="torch-mlir is not installed (make py-models)")


def _benchmark_module(repo_dir):
    import sys

    sys.path.insert(0, str(repo_dir / "bench"))  # run_pass_benchmark, which the script imports
    spec = importlib.util.spec_from_file_location("run_gpu_benchmark",
                                                  repo_dir / "bench" / "gpu" / "run_gpu_benchmark.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("optimizer,options", [("adam", {"lr": 1e-3}), ("sgd", {"lr": 0.1, "momentum": 0.9})])
def test_write_arguments_reproduces_the_exported_arrays(tmp_path, repo_dir, optimizer, options):
    import torch

    from amp_mlir.torch import export_train_step
    from amp_mlir.torch.models import MLP

    bench = _benchmark_module(repo_dir)
    torch.manual_seed(0)
    model = MLP(12, 16, 4)
    inputs = (torch.randn(6, 12), torch.randint(0, 4, (6,)))
    exported = tmp_path / "exported"
    export_train_step(model, torch.nn.functional.cross_entropy, inputs, out_dir=exported,
                      optimizer=optimizer, **options)
    rebuilt = tmp_path / "rebuilt"
    rebuilt.mkdir()
    for name in ("train_step.mlir", "manifest.json"):
        shutil.copy(exported / name, rebuilt / name)
    bench.write_arguments(rebuilt, model, inputs)
    arrays = sorted(p.name for p in exported.glob("arg*.npy"))
    assert arrays and arrays == sorted(p.name for p in rebuilt.glob("arg*.npy"))
    for name in arrays:
        assert (exported / name).read_bytes() == (rebuilt / name).read_bytes(), name


def test_write_arguments_rejects_a_model_of_other_shapes(tmp_path, repo_dir):
    import torch

    from amp_mlir.torch import export_train_step
    from amp_mlir.torch.models import MLP

    bench = _benchmark_module(repo_dir)
    torch.manual_seed(0)
    inputs = (torch.randn(6, 12), torch.randint(0, 4, (6,)))
    export_train_step(MLP(12, 16, 4), torch.nn.functional.cross_entropy, inputs, out_dir=tmp_path,
                      optimizer="sgd", lr=0.1)
    with pytest.raises(ValueError, match="has shape"):
        bench.write_arguments(tmp_path, MLP(12, 8, 4), inputs)
