"""Training-level op coverage (issue 22): PyTorch training steps built from the ops real models use --
exact and tanh GELU, SiLU, softmax, log-softmax (cross entropy), layer norm, mean pooling, sigmoid /
BCE losses -- exported to TOSA and trained by amp-mlir on the CPU (amp_mlir.Trainer, the JIT of
amp-train) in fp32 and f16, with SGD and Adam.

  fp32   every one of 50 losses within 1e-3 relative of PyTorch's fp32 training of the same model;
  f16    (amp-pipeline, dynamic loss scaling) the loss after the same number of applied updates within
         2% of the initial loss of fp32's;
  poison a step whose input holds +inf is skipped: every amp.update_of argument bit-identical.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
nn = torch.nn
F = torch.nn.functional

from amp_mlir.torch import export_train_step, torch_reference_losses  # noqa: E402

STEPS = 50
FP32_RTOL = 1e-3
F16_TOL = 0.02


class Block(nn.Module):
    """Linear, layer norm, activation, a softmax attention over the sequence, mean pooling, head."""

    def __init__(self, act, attention):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.norm = nn.LayerNorm(32)
        self.act = act
        self.attention = attention
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):                      # x: (batch, seq, 16)
        h = self.act(self.norm(self.fc1(x)))
        if self.attention:
            weights = torch.softmax(h @ h.transpose(1, 2) / 32 ** 0.5, dim=-1)
            h = weights @ h
        return self.fc2(h).mean(dim=1)         # mean pooling over the sequence


def cross_entropy(out, y):
    return F.cross_entropy(out, y)             # log-softmax + nll


def bce_logits(out, y):
    return F.binary_cross_entropy_with_logits(out, y)


def sigmoid_bce(out, y):
    return F.binary_cross_entropy(torch.sigmoid(out), y)


ACTIVATIONS = {"gelu": lambda: nn.GELU(), "gelu_tanh": lambda: nn.GELU(approximate="tanh"),
               "silu": lambda: nn.SiLU()}
LOSSES = {"ce": cross_entropy, "bce_logits": bce_logits, "sigmoid_bce": sigmoid_bce}
CASES = {
    # name: (activation, attention, loss, optimizer)
    "gelu-ce-adam": ("gelu", True, "ce", "adam"),
    "gelu-bce-sgd": ("gelu", False, "bce_logits", "sgd"),
    "gelu_tanh-ce-sgd": ("gelu_tanh", True, "ce", "sgd"),
    "silu-sigmoid_bce-adam": ("silu", True, "sigmoid_bce", "adam"),
    "silu-ce-sgd": ("silu", False, "ce", "sgd"),
}


def _batch(loss):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, 6, 16, generator=g)
    if loss == "ce":
        return x, torch.randint(0, 8, (4,), generator=g)
    return x, (torch.rand(4, 8, generator=g) > 0.5).float()


_EXPORTS = {}


def _export(name, tmp_path_factory):
    if name not in _EXPORTS:
        act, attention, loss, optimizer = CASES[name]
        torch.manual_seed(0)
        model = Block(ACTIVATIONS[act](), attention)
        options = dict(optimizer=optimizer, lr=1e-2 if optimizer == "adam" else 0.1)
        inputs = _batch(loss)
        step = export_train_step(model, LOSSES[loss], inputs, out_dir=tmp_path_factory.mktemp(name), **options)
        ref = torch_reference_losses(model, LOSSES[loss], inputs, steps=STEPS, **options)
        _EXPORTS[name] = (step, ref)
    return _EXPORTS[name]


@pytest.mark.parametrize("name", list(CASES))
def test_fp32_matches_pytorch(name, tmp_path_factory, amp_mlir_native):
    step, ref = _export(name, tmp_path_factory)
    trainer = amp_mlir_native.Trainer(step.text, "fp32", source_name=str(step.mlir_path))
    rows = trainer.run(STEPS, inputs_dir=step.out_dir)
    losses = np.array([r["loss"] for r in rows])
    rel = np.abs(losses - np.array(ref)) / np.abs(np.array(ref))
    assert rel.max() <= FP32_RTOL, f"max relative loss difference {rel.max():.3g} at step {rel.argmax()}"
    assert losses[-1] < losses[0]


@pytest.mark.parametrize("name", list(CASES))
def test_f16_tracks_fp32(name, tmp_path_factory, amp_mlir_native):
    step, _ = _export(name, tmp_path_factory)
    fp32 = [r["loss"] for r in amp_mlir_native.Trainer(step.text, "fp32").run(STEPS, inputs_dir=step.out_dir)]
    rows = amp_mlir_native.Trainer(step.text, "f16").run(STEPS, inputs_dir=step.out_dir)
    losses = [r["loss"] for r in rows]
    assert all(np.isfinite(losses))
    applied = sum(not r["skipped"] for r in rows[:-1])
    assert applied >= STEPS // 2
    diff = abs(losses[-1] - fp32[applied])
    assert diff <= F16_TOL * fp32[0], f"f16 {losses[-1]} vs fp32 {fp32[applied]} after {applied} steps"


@pytest.mark.parametrize("name", ["gelu-ce-adam", "silu-sigmoid_bce-adam"])
def test_poisoned_step_is_skipped(name, tmp_path_factory, amp_mlir_native):
    step, _ = _export(name, tmp_path_factory)
    trainer = amp_mlir_native.Trainer(step.text, "f16", inputs_dir=step.out_dir)
    trainer.run(3)
    updated = [a for a in trainer.arguments[:trainer.num_original_arguments] if a.is_updated]
    before = {a.index: trainer.argument(a.index).copy() for a in updated}
    row = trainer.step(poison=True)
    assert row["skipped"]
    for index, value in before.items():
        assert trainer.argument(index).tobytes() == value.tobytes(), \
            f"argument {index} changed on a skipped step"
    assert not trainer.step()["skipped"]
