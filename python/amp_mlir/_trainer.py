"""amp_mlir.Trainer: compile a training step and run it on the CPU (the Python face of amp-train)."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# The names of precision, loss_scaling, lowering and device come from the library's own option tables
# (native.enum_values(), the C API's ampEnumGetValueName); "f32" is also accepted for "fp32".
_ALIASES = {"precision": {"f32": "fp32"}}


def _choice(tables: dict, option: str, value: str) -> int:
    table = tables[option]
    name = _ALIASES.get(option, {}).get(value, value)
    if name not in table:
        raise ValueError(f"{option} must be one of {sorted(table)}, got {value!r}")
    return table[name]


@dataclass(frozen=True)
class Argument:
    """One argument of a compiled training step."""

    index: int
    #: The SSA name in the source (``p_0_weight`` for ``%p_0_weight``), ``scale`` /
    #: ``growth_tracker`` / ``overflow_tracker`` for the loss-scale state, else ``arg<N>``.
    name: str
    #: The MLIR type, e.g. ``tensor<16x32xf32>``.
    type: str
    #: The numpy dtype name of its buffer: float32, int32, int64 or bool.
    dtype: str
    shape: tuple
    #: The ``amp.init`` hint as MLIR prints it (``"#amp.init<normal(1.0)>"``), "" if none.
    init: str
    #: The result that is its new value (``amp.update_of`` or loss-scale state), or -1.
    updated_by: int
    #: True for the loss-scale state appended by amp-loss-scaling.
    is_scale_state: bool

    @property
    def is_updated(self) -> bool:
        """True if each step gives it a new value (a parameter, optimizer state, the scale state)."""
        return self.updated_by >= 0


class Trainer:
    """A training step (docs/TrainingStep.md) compiled for the CPU, and its arguments.

    ``Trainer(ir_text, precision="f16")`` parses the step, runs the AMP pipeline (``precision`` f16 or
    bf16; ``"fp32"`` runs the step as written) with the given loss-scaling options (``loss_scaling`` and
    the rules as keyword arguments: ``init_scale``, ``growth_factor``, ``backoff_factor``,
    ``growth_interval``, ``backoff_interval``, ``min_scale``, ``max_scale``; the list and the defaults
    are amp-loss-scaling's, ``amp_mlir.loss_scaling_rules()``), lowers it with the
    CPU pipeline and JIT-compiles it, exactly as ``amp-train`` does; then every argument is set from its
    ``amp.init`` hint (drawn with ``seed``) and, when ``inputs_dir`` is given, from
    ``inputs_dir/arg<N>.npy``. With ``initialize=False`` every argument starts out zero, the loss-scale
    state included (for steps whose arguments have no hints: set them all, or call :meth:`reset`).
    ``lowering`` is how the amp ops lower: ``"auto"`` (the default, amp-train's CPU default:
    ``"check-in-update"`` for a step whose updated state takes at least 32 MiB, ``"runtime"`` below it),
    ``"check-in-update"`` (amp-train's ``--check-in-update``: inline, each gradient's inf / nan check inside
    the loop that already reads it, the new state in buffers of its own), or amp-train's ``--lowering``:
    ``"inline"`` (linalg) or ``"runtime"`` (calls into the amp runtime's CPU backend: the gradients are
    checked first, then the state is updated in place). Every lowering gives the same numbers, bit for bit.
    ``device`` is amp-train's ``--device``: ``"cpu"`` (the default), ``"cuda"`` (an NVIDIA GPU) or
    ``"cuda-emulated"`` (the GPU pipeline with its kernels run on the host, block after block and thread
    after thread, and the runtime's CPU backend: no GPU needed); on the GPU pipeline
    ``"check-in-update"`` means ``"inline"``.
    ``native_bf16`` is amp-train's ``--cpu-native-bf16``: on a CPU with bf16 instructions (AVX512_BF16),
    bf16 GEMMs run on oneDNN's bf16 kernels and f32 -> bf16 rounds in one instruction; ``False`` runs
    what a CPU without them runs, the same bf16 rounding on every host.
    Contractions call the runtime's GEMM in all three, so libamp_runtime_cpu.so is found next to the
    native module, in the build tree and in a wheel alike, or in ``$AMP_RUNTIME_DIR``. Errors raise
    :class:`amp_mlir.MLIRError` with located diagnostics.

    ``trainer.run(steps, inputs_dir=...)`` on a new trainer prints the same numbers as
    ``amp-train STEP.mlir --inputs DIR --steps N --precision P`` (bit for bit).
    """

    def __init__(self, ir_text: str, precision: str = "f16", *, loss_scaling: str = "auto",
                 policy: str | os.PathLike | None = None, seed: int = 0,
                 entry: str | None = None, opt_level: int = 2, lowering: str = "auto",
                 device: str = "cpu", native_bf16: bool = True, inputs_dir: str | os.PathLike | None = None,
                 initialize: bool = True, source_name: str = "<input>", **rules):
        from . import _require_native

        native = _require_native()
        defaults = native.loss_scaling_rules()
        unknown = sorted(set(rules) - set(defaults))
        if unknown:
            raise TypeError(f"Trainer() got unexpected keyword argument(s) {', '.join(unknown)} "
                            f"(the loss-scaling rules are {', '.join(sorted(defaults))})")
        rules = {name: type(default)(rules.get(name, default)) for name, default in defaults.items()}
        tables = native.enum_values()
        precision_value = _choice(tables, "precision", precision)
        loss_scaling_value = _choice(tables, "loss_scaling", loss_scaling)
        if not 0 <= int(opt_level) <= 3:
            raise ValueError(f"opt_level must be 0 to 3, got {opt_level!r}")
        lowering_value = _choice(tables, "lowering", lowering)
        device_value = _choice(tables, "device", device)
        self.precision = _ALIASES["precision"].get(precision, precision)
        self._native = native.Trainer(
            ir_text, source_name, precision_value, loss_scaling_value, rules,
            os.fspath(policy) if policy else "", int(seed), entry or "", int(opt_level), lowering_value,
            device_value, bool(native_bf16))
        self._arguments = [Argument(**self._native.argument_info(i)) for i in range(self._native.num_arguments)]
        self._step = 0
        if initialize:
            self.reset(inputs_dir)
        elif inputs_dir is not None:
            raise ValueError("inputs_dir needs initialize=True")

    @classmethod
    def from_file(cls, path: str | os.PathLike, precision: str = "f16", **options) -> "Trainer":
        """A trainer for the step in ``path`` (locations in diagnostics name that file)."""
        path = Path(path)
        return cls(path.read_text(), precision, source_name=str(path), **options)

    # ------------------------------------------------------------------ description
    @property
    def arguments(self) -> list:
        """The arguments of the compiled step: the original ones, then the loss-scale state."""
        return list(self._arguments)

    @property
    def entry_name(self) -> str:
        return self._native.entry_name

    @property
    def is_loss_scaled(self) -> bool:
        return self._native.is_loss_scaled

    @property
    def autocast_report(self) -> dict | None:
        """What amp-autocast decided for this step, as amp-pipeline's ``report=`` file would hold it
        (``{"pass", "precision", "policy", "ops": [one entry per float op], "summary"}``), made in memory;
        ``None`` for an fp32 step."""
        text = self._native.autocast_report
        return None if text is None else json.loads(text)

    @property
    def num_original_arguments(self) -> int:
        return self._native.num_original_arguments

    @property
    def steps_taken(self) -> int:
        """The number of steps run since the arguments were last initialised."""
        return self._step

    def _index(self, key) -> int:
        if isinstance(key, str):
            for a in self._arguments:
                if a.name == key:
                    return a.index
            raise KeyError(f"no argument named {key!r} (arguments: {[a.name for a in self._arguments]})")
        index = int(key)
        if not 0 <= index < len(self._arguments):
            raise IndexError(f"argument index {index} out of range (the step has {len(self._arguments)} arguments)")
        return index

    # ------------------------------------------------------------------ values
    def argument(self, key) -> np.ndarray:
        """A copy of the current value of an argument (by index or name), e.g. a trained parameter."""
        return self._native.get_argument(self._index(key))

    def set_argument(self, key, value) -> None:
        """Set an argument (by index or name) from an array: float32 for f32 arguments, int32 or int64
        for i32 / i64 (int64 into i32 must fit), bool for i1, with the argument's shape (a rank-0
        argument also takes shape (1,)) -- the rules of amp-train's .npy inputs. Raises ValueError or
        TypeError otherwise (no silent conversion)."""
        index = self._index(key)
        array = np.ascontiguousarray(value)
        self._native.set_argument(index, array)

    def reset(self, inputs_dir: str | os.PathLike | None = None) -> None:
        """Initialise every argument again as amp-train does (hints, then ``inputs_dir/arg<N>.npy``),
        the loss-scale state included, and number the next step 0."""
        self._native.initialize(os.fspath(inputs_dir) if inputs_dir is not None else "")
        self._step = 0

    def dump(self, directory: str | os.PathLike) -> None:
        """Write every amp.update_of argument N to ``directory/arg<N>.npy`` (amp-train --dump)."""
        self._native.dump(os.fspath(directory))

    # ------------------------------------------------------------------ running
    def step(self, poison: bool = False) -> dict:
        """Run one step; returns ``{"step", "loss", "scale", "skipped"}`` like one line of amp-train.

        ``loss`` is the amp.loss result (a float; inf or nan where amp-train prints null), ``scale`` the
        loss scale after this step's update (1.0 without loss scaling), ``skipped`` whether the step found
        a non-finite gradient and left every amp.update_of argument unchanged. ``poison`` adds +inf to
        element 0 of the input batch for this call only (amp-train --poison-step).
        """
        loss, scale, skipped = self._native.step(bool(poison))
        row = {"step": self._step, "loss": float(loss), "scale": float(scale), "skipped": bool(skipped)}
        self._step += 1
        return row

    def run(self, steps: int, inputs_dir: str | os.PathLike | None = None, poison_steps=()) -> list:
        """Run ``steps`` steps and return their rows (see :meth:`step`).

        With ``inputs_dir``, the arguments are first initialised from it (:meth:`reset`), so that a run
        is ``amp-train --inputs DIR --steps N [--poison-step ...]``; without it the run continues from
        the current values. ``poison_steps`` are step numbers (as in the rows) to poison.
        """
        if inputs_dir is not None:
            self.reset(inputs_dir)
        poison = {int(s) for s in poison_steps}
        return [self.step(poison=self._step in poison) for _ in range(int(steps))]

    def __repr__(self) -> str:
        return (f"Trainer({self.entry_name!r}, precision={self.precision!r}, "
                f"arguments={len(self._arguments)}, loss_scaled={self.is_loss_scaled})")


def format_row(row: dict) -> str:
    """A row as amp-train prints it (%.9g numbers, null when not finite)."""

    def number(v):
        return "null" if not math.isfinite(v) else "%.9g" % v

    return (f'{{"step": {row["step"]}, "loss": {number(row["loss"])}, "scale": {number(row["scale"])}, '
            f'"skipped": {"true" if row["skipped"] else "false"}}}')
