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

# IREE runs each model's step in one low precision here, f16 and bf16 taking turns over the models and
# the two imports, its losses held to amp-train's fp32 (model_zoo.check_backend): iree-compile is the
# suite's largest cost (mobilenet_v3_small's three took 339-413 s of its 656-752 s on a 2-core VM), and
# make check must stay well inside CI's 90 min. `make model-zoo` runs IREE in all three precisions (the
# docs/ModelZoo.md table), and the op-coverage matrix runs every op of the policy through IREE in each.
IREE_PRECISION = {"regression": "f16", "mnist_mlp": "bf16", "lstm": "f16", "resnet18": "bf16",
                  "mobilenet_v3_small": "f16", "gpt2": "bf16", "bert": "f16", "vit_tiny": "bf16"}
LINALG_IREE_PRECISION = {"gpt2": "f16", "mobilenet_v3_small": "bf16"}

# Every op of the zoo has a category (resnet18's max-pool argmax, torch-mlir's generic that compares
# an element it extracts with the pooled value, was the last unknown one: docs/Policy.md linalg rule
# 3), and the AMP pipeline warns about none of them.
def _assert_classified(name, res):
    assert res["unknown_ops"] == 0, f"{name}: {res['unknown_ops']} unknown ops"
    assert not res["amp_warnings"], "\n".join(res["amp_warnings"][:5])


@pytest.mark.parametrize("name", MODELS)
def test_model_trains_like_pytorch(name, amp_tools, repo_dir, tmp_path, guarded_gpu_lowering):
    zoo = _zoo(repo_dir)
    from pathlib import Path

    build = Path(amp_tools["amp_train"]).parent.parent
    res = zoo.run_model(name, build, tmp_path, iree=zoo.iree_available(), iree_precisions=(IREE_PRECISION[name],))
    if "skipped" in res:
        pytest.skip(f"{name}: {res['skipped']}")
    fails = zoo.check(res)
    assert not fails, "\n".join(fails) + f"\nours: {res.get('ours')}\niree: {res.get('iree')}\ntorch: {res.get('torch')}"
    _assert_classified(name, res)
    # The criteria compare against something: five losses of each kind, the float64 run among them.
    assert len(res["ours"]["fp32"]) == zoo.STEPS and len(res["torch"]["f64"]) == zoo.STEPS
    if zoo.iree_available():
        assert len(res["iree"][IREE_PRECISION[name]]) == zoo.STEPS, res.get("iree_errors")
    else:
        print(f"{name}: IREE is not installed, the IREE backend was not run")
    # The GPU pipeline's structure on the same step (no GPU needed): GEMM calls for every contraction,
    # no single-block or one-thread giants, coalesced accesses (test/tools/check_gpu_structure.py), in
    # the precision with the most casts and in fp32 (mobilenet_v3_small's fp32 step has transposes
    # with a per-channel scale fused in that its f16 step has not).
    step = tmp_path / name / "train_step.mlir"
    for precision in ("f16", "fp32"):
        guarded_gpu_lowering(step, tmp_path / f"{name}.{precision}.gpu.mlir", precision)


@pytest.mark.parametrize("name", ["gpt2", "mobilenet_v3_small"])
def test_linalg_import_trains_like_pytorch(name, amp_tools, repo_dir, tmp_path):
    """The same criteria for a step imported linalg-first (``dialect="linalg"``: torch-mlir's cf.assert
    checks, linalg contractions for the embedding's one-hot GEMMs, AdamW; a CNN's convolution
    backward with its weight-flip gathers), with IREE and the GPU pipeline's PTX through ptxas where
    they are installed. resnet18 is not here: its linalg import's fp32 losses part from float64 by
    4.7e-4 relative at step 3 where PyTorch fp32's stay within 1e-4 (momentum 0.9, train-mode batch
    norm), though its step-0 gradients are as close to float64 as the TOSA import's (1.1e-5 at
    most, PyTorch fp32 5.3e-6)."""
    zoo = _zoo(repo_dir)
    import shutil
    from pathlib import Path

    build = Path(amp_tools["amp_train"]).parent.parent
    gpu = bool(shutil.which("ptxas") or Path("/usr/local/cuda/bin/ptxas").exists())
    res = zoo.run_model(name, build, tmp_path, iree=zoo.iree_available(), gpu=gpu, dialect="linalg",
                        iree_precisions=(LINALG_IREE_PRECISION[name],))
    if "skipped" in res:
        pytest.skip(f"{name}: {res['skipped']}")
    assert "linalg.generic" in (tmp_path / name / "train_step.mlir").read_text()
    fails = zoo.check(res)
    assert not fails, "\n".join(fails) + f"\nours: {res.get('ours')}\niree: {res.get('iree')}"
    assert len(res["ours"]["fp32"]) == zoo.STEPS
    if zoo.iree_available():
        assert len(res["iree"][LINALG_IREE_PRECISION[name]]) == zoo.STEPS, res.get("iree_errors")
    _assert_classified(name, res)
    if gpu:
        assert res["gpu"] == "ptxas clean", res["gpu"]


def test_fp32_is_checked_without_a_float64_run(repo_dir):
    """A loss holding float32 tensors of its own (a class weight) cannot run in float64, and the fp32
    criterion used to be skipped then: it now holds amp-train's fp32 losses to PyTorch's fp32 run within
    1e-4 relative, and says why."""
    model_zoo = _zoo(repo_dir)
    res = {"ours": {"fp32": [2.0, 1.5, 1.2, 1.0, 0.9]}, "errors": {}, "report": True,
           "torch": {"fp32": [2.0, 1.50001, 1.2, 1.0, 0.9]},
           "torch_errors": {"f64": "RuntimeError: expected scalar type Double but found Float"}}
    assert model_zoo.check(res) == []
    res["ours"]["fp32"][2] = 1.201
    fails = model_zoo.check(res)
    assert len(fails) == 1 and fails[0].startswith("amp-train fp32 step 2: |ours - torch fp32| = 0.001 > 1e-4 "
                                                   "rel (no float64 run: RuntimeError: expected scalar type "
                                                   "Double"), fails


def test_iree_in_one_precision_is_held_to_amp_train_fp32(repo_dir):
    """make check runs IREE in one low precision per model (IREE_PRECISION): without IREE's own fp32
    losses, its f16 / bf16 losses are held to amp-train's fp32 losses by the same 2% criterion, not left
    unchecked."""
    model_zoo = _zoo(repo_dir)
    fp32 = [2.0, 1.5, 1.2, 1.0, 0.9]
    res = {"ours": {"fp32": fp32, "f16": list(fp32)}, "errors": {}, "report": True,
           "torch": {"f64": fp32, "fp32": fp32, "autocast_f16": fp32},
           "iree": {"f16": [2.0, 1.51, 1.2, 1.0, 0.9]}, "iree_errors": {}}
    assert model_zoo.check(res) == []
    res["iree"]["f16"][3] = 1.03
    fails = model_zoo.check(res)
    assert len(fails) == 1 and fails[0].startswith("IREE f16 step 3: 1.03 is 3.00% from amp-train's fp32 1.0"), fails
    assert model_zoo.coverage_cell(res, "iree", "f16") == "fails"
    assert model_zoo.coverage_cell(res, "iree", "fp32") == "not run"
