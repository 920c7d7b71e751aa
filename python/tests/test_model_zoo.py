"""The model zoo in make check (test/model-zoo/model_zoo.py, docs/ModelZoo.md): each real model exported
whole through torch-mlir, trained 5 steps by amp-train in fp32 / f16 / bf16 and compared with PyTorch
(float64, float32, torch.autocast) on the same batch with the same optimizer; and, where IREE is
installed (make check installs it), the same steps compiled by iree-compile (llvm-cpu) and run by
amp_mlir.iree.IreeStep, held to the same criteria. A model whose package is not installed is skipped and
says which; without IREE the IREE half is left out and the test says so in its report."""

import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("torch_mlir.fx", reason="torch-mlir is not installed (make py-models)")


def _zoo(repo_dir):
    sys.path.insert(0, str(repo_dir / "test" / "model-zoo"))
    import model_zoo

    return model_zoo


MODELS = ["regression", "mnist_mlp", "lstm", "resnet18", "mobilenet_v3_small", "gpt2", "bert", "vit_tiny"]


@pytest.mark.parametrize("name", MODELS)
def test_model_trains_like_pytorch(name, amp_tools, repo_dir, tmp_path):
    zoo = _zoo(repo_dir)
    from pathlib import Path

    build = Path(amp_tools["amp_train"]).parent.parent
    res = zoo.run_model(name, build, tmp_path, iree=zoo.iree_available())
    if "skipped" in res:
        pytest.skip(f"{name}: {res['skipped']}")
    fails = zoo.check(res)
    assert not fails, "\n".join(fails) + f"\nours: {res.get('ours')}\niree: {res.get('iree')}\ntorch: {res.get('torch')}"
    # The criteria compare against something: five losses of each kind, the float64 run among them.
    assert len(res["ours"]["fp32"]) == zoo.STEPS and len(res["torch"]["f64"]) == zoo.STEPS
    if zoo.iree_available():
        assert all(len(res["iree"][p]) == zoo.STEPS for p in zoo.PRECISIONS), res.get("iree_errors")
    else:
        print(f"{name}: IREE is not installed, the IREE backend was not run")


@pytest.mark.parametrize("name", ["gpt2"])
def test_linalg_import_trains_like_pytorch(name, amp_tools, repo_dir, tmp_path):
    """The same criteria for a step imported linalg-first (``dialect="linalg"``: torch-mlir's cf.assert
    checks, linalg contractions for the embedding's one-hot GEMMs, AdamW), with IREE and the GPU
    pipeline's PTX through ptxas where they are installed."""
    zoo = _zoo(repo_dir)
    import shutil
    from pathlib import Path

    build = Path(amp_tools["amp_train"]).parent.parent
    gpu = bool(shutil.which("ptxas") or Path("/usr/local/cuda/bin/ptxas").exists())
    res = zoo.run_model(name, build, tmp_path, iree=zoo.iree_available(), gpu=gpu, dialect="linalg")
    if "skipped" in res:
        pytest.skip(f"{name}: {res['skipped']}")
    assert "linalg.generic" in (tmp_path / name / "train_step.mlir").read_text()
    fails = zoo.check(res)
    assert not fails, "\n".join(fails) + f"\nours: {res.get('ours')}\niree: {res.get('iree')}"
    assert len(res["ours"]["fp32"]) == zoo.STEPS
    if gpu:
        assert res["gpu"] == "ptxas clean", res["gpu"]
