"""Weight averages inside the exported step (``export_train_step(..., ema=...)``, amp_mlir/torch/_ema.py):
torch.optim.swa_utils.AveragedModel (EMA, SWA, with buffers) and timm's ModelEmaV2 / ModelEmaV3 (constant
decay, warm-up from a step count), against PyTorch's loop that updates the average after its optimizer; a
skipped f16 step (dynamic loss scaling) keeps the parameters and moves the average toward them, as
PyTorch's loop does after GradScaler skipped the optimizer (``amp.after_step``)."""

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
pytest.importorskip("torch_mlir.fx", reason="torch-mlir is not installed (make py-models)")
nn = torch.nn
F = torch.nn.functional

from amp_mlir.torch import export_train_step, torch_train_step  # noqa: E402
from amp_mlir.torch._ema import reference_update  # noqa: E402
from torch.optim.swa_utils import AveragedModel, get_ema_avg_fn, get_ema_multi_avg_fn  # noqa: E402
from conftest import amp_train_records  # noqa: E402

STEPS = 6


def _timm_ema(name, **options):
    timm_utils = pytest.importorskip("timm.utils", reason="timm is not installed (make py-models)")
    return lambda model: getattr(timm_utils, name)(model, **options)


# name -> (make the average of a model, ema_step)
CASES = {
    "averaged_ema": (lambda m: AveragedModel(m, multi_avg_fn=get_ema_multi_avg_fn(0.8)), None),
    "averaged_ema_avg_fn": (lambda m: AveragedModel(m, avg_fn=get_ema_avg_fn(0.8)), None),
    "averaged_swa": (lambda m: AveragedModel(m), None),
    "averaged_ema_buffers": (lambda m: AveragedModel(m, multi_avg_fn=get_ema_multi_avg_fn(0.8), use_buffers=True),
                             None),
    "timm_v2": ("ModelEmaV2", dict(decay=0.8), None),
    "timm_v3": ("ModelEmaV3", dict(decay=0.8), None),
    "timm_v3_no_buffers": ("ModelEmaV3", dict(decay=0.8, exclude_buffers=True, foreach=False), None),
    "timm_v3_warmup": ("ModelEmaV3", dict(decay=0.95, use_warmup=True, update_after_step=1, warmup_gamma=2.0), 1),
}


def _make(case, model):
    spec = CASES[case]
    if isinstance(spec[0], str):
        return _timm_ema(spec[0], **spec[1])(model), spec[2]
    return spec[0](model), spec[1]


def _model():
    torch.manual_seed(0)
    # batch norm after the activation: its bias gradients are not rounding noise (see test_torch_export)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.BatchNorm1d(32), nn.Linear(32, 4))
    return model, (torch.randn(8, 16), torch.randint(0, 4, (8,)))


def _train(tools, step, steps, precision="fp32", *extra, dump):
    return amp_train_records(tools["amp_train"], step.mlir_path, "--inputs", step.out_dir,
                             f"--precision={precision}", "--dump", dump, "--no-jit-cache", *extra, steps=steps,
                             timeout=300)


def _pytorch(model, ema, inputs, steps, ema_step):
    """PyTorch's loop: AdamW step, then the average's own update."""
    model, ema = copy.deepcopy(model), copy.deepcopy(ema)
    opt = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.01)
    losses = []
    for i in range(steps):
        losses.append(float(torch_train_step(model, F.cross_entropy, opt, inputs[:-1], inputs[-1]).detach()))
        reference_update(ema, model, None if ema_step is None else ema_step + i)
    return losses, ema


def _averaged(step, dump):
    """The averaged tensors amp-train dumped, by the name the manifest gives them (without ``ema ``)."""
    return {a["name"][len("ema "):]: np.load(dump / f"arg{a['index']}.npy")
            for a in step.manifest["arguments"] if a["kind"] == "ema"}


@pytest.mark.parametrize("case", sorted(CASES))
def test_weight_average_as_pytorch(case, tmp_path, amp_tools):
    """After 6 AdamW steps every averaged tensor (parameters, batch-norm statistics and their integer count
    where the class averages buffers, AveragedModel's n_averaged) is PyTorch's within 1e-5 of its largest
    magnitude (measured 1.7e-6..3.1e-6: the parameters' own fp32 drift from PyTorch's); the losses are
    PyTorch's (the average does not feed back). The results carry amp.after_step. ``ExportedStep.load_into``
    puts the trained parameters, buffers and average back into copies of the model and the average (an average
    that copies the model's buffers gets the trained ones): the average's outputs are PyTorch's."""
    model, inputs = _model()
    ema, ema_step = _make(case, model)
    opt = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.01)
    step = export_train_step(model, F.cross_entropy, inputs, optimizer=opt, out_dir=tmp_path / "step", ema=ema,
                             ema_step=ema_step)
    kinds = [a["kind"] for a in step.manifest["arguments"]]
    assert kinds.count("ema") == len(step.manifest["ema"]["follows"]) + (step.manifest["ema"]["step_counter"]
                                                                         is not None)
    assert step.text.count("amp.after_step") == kinds.count("ema")
    want_losses, reference = _pytorch(model, ema, inputs, STEPS, ema_step)
    rows = _train(amp_tools, step, STEPS, dump=tmp_path / "dump")
    np.testing.assert_allclose([r["loss"] for r in rows], want_losses, rtol=1e-5)
    got = _averaged(step, tmp_path / "dump")
    want = {k: v.detach().numpy() for k, v in reference.module.state_dict().items()}
    if isinstance(reference, AveragedModel):
        want["n_averaged"] = reference.n_averaged.numpy()
        if not reference.use_buffers:  # the average's buffers are the model's: no state of their own
            assert not any("running" in k for k in got)
    if ema_step is not None:
        want["step"] = np.int64(ema_step + STEPS)
    assert set(got) <= set(want) and len(got) >= 6, sorted(got)
    for key, value in got.items():
        scale = max(float(np.max(np.abs(want[key]))), 1e-30)
        assert np.max(np.abs(value - want[key])) <= 1e-5 * scale, key
    # back into PyTorch: a copy of the model and of the average take what amp-train trained
    trained_model, trained_ema = copy.deepcopy(model), copy.deepcopy(ema)
    loaded = step.load_into(trained_model, tmp_path / "dump", ema=trained_ema)
    assert "0.weight" in loaded and "ema 0.weight" in loaded
    index = {a["name"]: a["index"] for a in step.manifest["arguments"]}
    for name in ("0.weight", "3.bias"):
        np.testing.assert_array_equal(trained_model.state_dict()[name].numpy(),
                                      np.load(tmp_path / "dump" / f"arg{index[name]}.npy"))
    np.testing.assert_array_equal(trained_model.state_dict()["2.running_mean"].numpy(),
                                  np.load(tmp_path / "dump" / f"arg{index['buffer 2.running_mean']}.npy"))
    np.testing.assert_array_equal(trained_ema.module.state_dict()["0.weight"].numpy(), got["0.weight"])
    with torch.no_grad():
        np.testing.assert_allclose(trained_ema.module(inputs[0]).numpy(), reference.module(inputs[0]).numpy(),
                                   rtol=1e-4, atol=1e-5)


def test_weight_average_of_tied_weights(tmp_path, amp_tools):
    """A weight tied to another (an embedding and its output head) is two state_dict entries of one tensor:
    timm's EMA updates it once per entry, as its loop over the state_dict does; so does the step (one state
    tensor, the two updates in order), from the parameter's new value (not a stale copy under the second key)."""
    torch.manual_seed(0)

    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(12, 8)
            self.mix = nn.Linear(8, 8)
            self.head = nn.Linear(8, 12, bias=False)
            self.head.weight = self.emb.weight

        def forward(self, x):
            return self.head(torch.tanh(self.mix(self.emb(x)))).flatten(0, 1)

    model = Tied()
    inputs = (torch.randint(0, 12, (4, 5)), torch.randint(0, 12, (20,)))
    ema = _timm_ema("ModelEmaV3", decay=0.8)(model)
    opt = torch.optim.AdamW(model.parameters(), lr=0.05)
    step = export_train_step(model, F.cross_entropy, inputs, optimizer=opt, out_dir=tmp_path / "step", ema=ema)
    assert step.manifest["ema"]["follows"]["ema emb.weight"] == ["emb.weight", "emb.weight"]
    _, reference = _pytorch(model, ema, inputs, STEPS, None)
    _train(amp_tools, step, STEPS, dump=tmp_path / "dump")
    got = _averaged(step, tmp_path / "dump")
    want = reference.module.state_dict()
    for key in ("emb.weight", "mix.weight"):
        np.testing.assert_allclose(got[key], want[key].numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", ["averaged_ema", "timm_v3"])
def test_weight_average_after_a_skipped_step(case, tmp_path, amp_tools):
    """f16 with dynamic loss scaling, an inf in the batch at step 2: the step is skipped, the parameters keep
    their values bit for bit, and the average still moves, to exactly lerp(average, kept parameters, 0.2)
    (float32, as amp-train's step 1 left them), as PyTorch's loop updates the EMA after GradScaler skipped
    ``optimizer.step()``; AveragedModel's n_averaged counts the skipped step. (Kept like the parameters,
    without amp.after_step, the average would not move at all.)"""
    model, inputs = _model()
    ema, _ = _make(case, model)
    opt = torch.optim.AdamW(model.parameters(), lr=0.05, weight_decay=0.01)
    step = export_train_step(model, F.cross_entropy, inputs, optimizer=opt, out_dir=tmp_path / "step", ema=ema)
    before = _train(amp_tools, step, 2, "f16", dump=tmp_path / "two")
    rows = _train(amp_tools, step, 3, "f16", "--poison-step", "2", dump=tmp_path / "three")
    assert [r["skipped"] for r in rows] == [False, False, True] and rows[:2] == before
    index = {a["name"]: a["index"] for a in step.manifest["arguments"]}
    moved = 0.0
    for name in ("0.weight", "0.bias", "3.weight"):
        p1, p2 = (np.load(tmp_path / d / f"arg{index[name]}.npy") for d in ("two", "three"))
        e1, e2 = (np.load(tmp_path / d / f"arg{index['ema ' + name]}.npy") for d in ("two", "three"))
        np.testing.assert_array_equal(p2, p1)
        np.testing.assert_allclose(e2, e1 + np.float32(0.2) * (p1 - e1), rtol=0, atol=2e-7)
        moved = max(moved, float(np.max(np.abs(e2 - e1))))
    assert moved > 1e-3
    if case == "averaged_ema":
        assert int(np.load(tmp_path / "three" / f"arg{index['ema n_averaged']}.npy")) == 3


def test_weight_average_refusals(tmp_path):
    """What the step cannot reproduce is a ValueError naming it, before anything is written."""
    model, inputs = _model()
    opt = torch.optim.AdamW(model.parameters(), lr=0.05)
    other = nn.Sequential(nn.Linear(16, 4))
    class Clamped(AveragedModel):  # its own update: the step would write AveragedModel's
        def update_parameters(self, model):
            super().update_parameters(model)

    same_count = nn.Sequential(nn.Linear(16, 8), nn.GELU(), nn.BatchNorm1d(8), nn.Linear(8, 4))
    cases = [
        (dict(ema=AveragedModel(other)), "AveragedModel of this model"),
        (dict(ema=AveragedModel(same_count)), r"0.weight has shape \[8, 16\], the model's 0.weight \[32, 16\]"),
        (dict(ema=Clamped(model)), r"Clamped overrides AveragedModel's update_parameters\(\)"),
        (dict(ema=copy.deepcopy(model)), "AveragedModel or a timm ModelEmaV2 / ModelEmaV3"),
        (dict(ema=AveragedModel(model), ema_step=3), "ema_step is the step argument of timm's ModelEmaV3"),
        (dict(ema_step=3), "give ema too"),
        (dict(ema=AveragedModel(copy.deepcopy(model).double())), "float64"),
    ]
    for options, message in cases:
        with pytest.raises(ValueError, match=message):
            export_train_step(model, F.cross_entropy, inputs, optimizer=opt, out_dir=tmp_path / "refused",
                              **options)
        assert not (tmp_path / "refused").exists() or not any((tmp_path / "refused").iterdir())
    timm_utils = pytest.importorskip("timm.utils", reason="timm is not installed (make py-models)")

    class Halved(timm_utils.ModelEmaV3):
        def get_decay(self, step=None):
            return 0.5

    with pytest.raises(ValueError, match=r"Halved overrides ModelEmaV3's get_decay\(\)"):
        export_train_step(model, F.cross_entropy, inputs, optimizer=opt, out_dir=tmp_path / "refused",
                          ema=Halved(model))
    with pytest.raises(ValueError, match="ema_step must be a non-negative integer"):
        export_train_step(model, F.cross_entropy, inputs, optimizer=opt, out_dir=tmp_path / "refused",
                          ema=timm_utils.ModelEmaV3(model), ema_step=2.0)
    # a loop's counter as a numpy or torch integer is a step count
    for count in (np.int64(3), torch.tensor(3)):
        step = export_train_step(model, F.cross_entropy, inputs, optimizer=opt, out_dir=tmp_path / "counted",
                                 ema=timm_utils.ModelEmaV3(model), ema_step=count)
        assert int(np.load(tmp_path / "counted" / next(a["file"] for a in step.manifest["arguments"]
                                                       if a["name"] == "ema step"))) == 3
    with pytest.raises(ValueError, match="ema needs frontend='torch-mlir'"):
        export_train_step(model, F.cross_entropy, inputs, optimizer="sgd", out_dir=tmp_path / "builtin",
                          frontend="builtin", ema=AveragedModel(model))
