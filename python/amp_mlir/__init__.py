"""amp_mlir: the Python API of amp-mlir.

    import amp_mlir
    out = amp_mlir.run_pipeline(ir_text, "builtin.module(amp-pipeline{precision=f16})")
    trainer = amp_mlir.Trainer(ir_text, precision="f16")
    for row in trainer.run(50, inputs_dir="out"):   # same numbers as amp-train
        print(row)                                  # {'step': 0, 'loss': ..., 'scale': ..., 'skipped': False}

Subpackages and modules:
    amp_mlir.torch     export a PyTorch training step (forward, loss, backward, optimizer) as TOSA
    amp_mlir.compare   PyTorch fp32 / torch.autocast + GradScaler vs amp-mlir fp32 / f16, side by side

The native part (``_amp_mlir_native``, a nanobind module over the C API include/amp-c/AmpMLIR.h) is
built by CMake into ``build/python/amp_mlir/`` next to copies of these sources, so that
``PYTHONPATH=build/python`` gives the whole package; ``pip install ./python`` installs both. When this
file is imported from a source checkout (``python/amp_mlir``), the native module is looked up in the
build tree: ``$AMP_MLIR_BUILD_DIR/python/amp_mlir`` or else ``<checkout>/build/python/amp_mlir``.
The pure-Python parts (``amp_mlir.torch``) work without it.
"""

from __future__ import annotations

import os
from pathlib import Path

__version__ = "0.1.0"


def _load_native():
    """Import _amp_mlir_native from this package, or from the CMake build tree of a checkout."""
    try:
        from . import _amp_mlir_native  # installed wheel, or build/python/amp_mlir

        return _amp_mlir_native, None
    except ImportError as error:
        first_error = error
    candidates = []
    if os.environ.get("AMP_MLIR_BUILD_DIR"):
        candidates.append(Path(os.environ["AMP_MLIR_BUILD_DIR"]) / "python" / "amp_mlir")
    candidates.append(Path(__file__).resolve().parents[2] / "build" / "python" / "amp_mlir")
    for candidate in candidates:
        if not any(candidate.glob("_amp_mlir_native*")):
            continue
        __path__.append(str(candidate))  # noqa: F821 (the package's search path)
        try:
            from . import _amp_mlir_native

            return _amp_mlir_native, None
        except ImportError as error:
            __path__.remove(str(candidate))  # noqa: F821
            first_error = error
    return None, first_error


_native, _native_error = _load_native()

if _native is not None:
    MLIRError = _native.MLIRError
else:

    class MLIRError(RuntimeError):
        """An MLIR failure: the diagnostics, one per line, as ``file:line:col: error: message``."""


def native_available() -> bool:
    """True if the native module (run_pipeline, Trainer) could be imported."""
    return _native is not None


def _require_native():
    if _native is None:
        raise ImportError(
            "amp_mlir's native module _amp_mlir_native is not built or cannot be loaded "
            f"({_native_error}); build it with `ninja -C build _amp_mlir_native` and use "
            "PYTHONPATH=build/python, or `pip install ./python`")
    return _native


def run_pipeline(ir: str, pipeline: str, *, source_name: str = "<input>",
                 print_locations: bool = False) -> str:
    """Parse ``ir`` (a builtin.module in MLIR assembly), run the textual pass ``pipeline`` on it and
    return the printed result.

    ``pipeline`` is anchored like mlir-opt's ``--pass-pipeline``, e.g.
    ``"builtin.module(amp-pipeline{precision=f16 report=report.json})"``; every amp and MLIR pass is
    available. ``source_name`` names the input in locations and diagnostics; ``print_locations``
    keeps ``loc(...)`` in the output. Raises :class:`MLIRError` with the diagnostics (parser,
    pass-pipeline parser, passes, verifier), each as ``file:line:col: error: message``.
    """
    return _require_native().run_pipeline(ir, pipeline, source_name, print_locations)


def loss_scaling_rules() -> dict:
    """The loss-scaling rules :class:`Trainer` takes as keyword arguments, with their defaults: the
    options of the amp-loss-scaling pass (``init_scale`` is its ``init-scale``, ...), from the one
    list the C++ layers share (include/amp/Config/LossScalingRules.def)."""
    return dict(_require_native().loss_scaling_rules())


from ._trainer import Argument, Trainer  # noqa: E402

__all__ = ["MLIRError", "run_pipeline", "Trainer", "Argument", "loss_scaling_rules", "native_available",
           "__version__"]
