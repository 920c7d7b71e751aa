"""Training steps built around what once hung or broke the CPU lowering (issue 23), trained by
amp_mlir.Trainer (amp-train's JIT) against numpy: a padded tosa.avg_pool2d (amp-cpu-vectorize
looped forever on its divisor) and a linalg.generic reading linalg.index (a causal mask with position
offsets). fp32: every loss of 20 steps within 1e-5 relative of numpy's float64 training of the same
step; f16: within 2% of it."""

from pathlib import Path

import numpy as np
import pytest

INPUTS = Path(__file__).resolve().parents[2] / "test" / "Integration" / "Inputs"
STEPS = 20


def avg_pool_padded(x):
    """tosa.avg_pool2d 2x2, stride 2, pad (0, 1, 0, 1): each window divided by the input elements it covers."""
    n, h, w, c = x.shape
    out = np.zeros((n, 4, 4, c))
    for i in range(4):
        for j in range(4):
            win = x[:, 2 * i:min(2 * i + 2, h), 2 * j:min(2 * j + 2, w), :]
            out[:, i, j, :] = win.sum(axis=(1, 2)) / (win.shape[1] * win.shape[2])
    return out


def iota_mask(x):
    i = np.arange(x.shape[0])[:, None]
    j = np.arange(x.shape[1])[None, :]
    return np.where(j <= i, x, 0.0) + 0.125 * i


CASES = {
    # step file: (feature function, shapes of w / x / t, learning rate)
    "avg_pool_padded_step.mlir": (avg_pool_padded, (1, 4, 4, 2), (1, 7, 7, 2), 0.1),
    "iota_mask_step.mlir": (iota_mask, (8, 16), (8, 16), 0.05),
}


def numpy_losses(features, w, x, t, lr):
    f = features(x.astype(np.float64))
    w = w.astype(np.float64)
    losses = []
    for _ in range(STEPS):
        d = w * f - t
        losses.append(0.5 * float(np.sum(d * d)))
        w = w - lr * d * f
    return losses


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("precision", ["fp32", "f16"])
def test_trains_like_numpy(name, precision, amp_mlir_native):
    features, wshape, xshape, lr = CASES[name]
    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, xshape).astype(np.float32)
    t = rng.uniform(-1, 1, wshape).astype(np.float32)
    trainer = amp_mlir_native.Trainer.from_file(INPUTS / name, precision)  # w = 0.5 (its amp.init)
    trainer.set_argument(1, x)
    trainer.set_argument(2, t)
    ref = numpy_losses(features, np.full(wshape, 0.5), x, t, lr)
    losses = [trainer.step()["loss"] for _ in range(STEPS)]
    tol = 1e-5 if precision == "fp32" else 0.02
    rel = np.abs(np.array(losses) - ref) / np.abs(ref)
    assert rel.max() <= tol, f"max relative loss difference {rel.max():.3g} at step {rel.argmax()}"
    assert losses[-1] < losses[0]
