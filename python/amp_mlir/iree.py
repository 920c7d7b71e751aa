"""amp_mlir.iree: run an amp-mlir training step compiled by IREE, with its state kept on the device.

    amp-compile step.mlir --target=iree-input --precision=f16 -o step.iree.mlir
    iree-compile step.iree.mlir --iree-hal-target-device=local --iree-input-demote-f64-to-f32=false \\
        --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=host -o step.vmfb

    from amp_mlir.iree import IreeStep
    step = IreeStep.load("step.vmfb")                     # driver "local-task"; "cuda" on a GPU
    rows = step.run(initial_arguments, 20, poison_steps={5})
    # rows like amp-train's: {"step": 0, "loss": 2.34, "scale": 65536.0, "skipped": False}

``amp-compile --target=iree-input`` records the training-step contract as JSON in the function's
``iree.reflection`` (key ``amp.contract``), which IREE keeps on the exported function: which argument
each result updates, the loss, the skipped flag and the three loss-scale state tensors (docs/IREE.md).
:class:`IreeStep` reads it back, keeps every argument on the device as an IREE device array, passes each
updated argument's result back in as the next step's argument without a host round trip, and reads only
the loss, the scale and the skipped flag per step. Needs ``iree-base-runtime`` (PyPI).
"""

from __future__ import annotations

import json
import math
import os
import sys

import numpy as np

CONTRACT_KEY = "amp.contract"
CHECKS_KEY = "amp.checks"


class BatchRefused(ValueError):
    """A batch that fails one of the step's checks (a token id past the vocabulary, a label past the
    classes: IREE would read outside the table). ``check`` is its description: ``location``,
    ``message``."""

    def __init__(self, text: str, check: dict):
        super().__init__(text)
        self.check = check


def _shape_of(tensor_type: str) -> tuple:
    """(32, 64) for "tensor<32x64xf32>", () for "tensor<f32>"."""
    dims = tensor_type[len("tensor<"):-1].split("x")[:-1]
    return tuple(int(d) for d in dims)


class IreeStep:
    """A training step in an IREE module (``.vmfb``), callable step by step."""

    def __init__(self, vmfb: bytes, *, driver: str = "local-task", entry: str | None = None):
        import iree.runtime as ireert

        self._rt = ireert
        self.config = ireert.Config(driver)
        self.vm_module = ireert.VmModule.copy_buffer(self.config.vm_instance, vmfb)
        self.context = ireert.SystemContext(config=self.config)
        self.context.add_vm_module(self.vm_module)
        names = [entry] if entry else [n for n in self.vm_module.function_names if not n.startswith("__")]
        self.contract = None
        for name in names:
            fn = self.vm_module.lookup_function(name)
            if fn is not None and CONTRACT_KEY in fn.reflection:
                self.entry = name
                self.contract = json.loads(fn.reflection[CONTRACT_KEY])
                break
        if self.contract is None:
            raise ValueError(f"no function of the module carries the {CONTRACT_KEY!r} reflection entry "
                             "(compile the step with amp-compile --target=iree-input)")
        self._function = self.context.modules.module[self.entry]
        args, results = self.contract["arguments"], self.contract["results"]
        self._roles = {r["role"]: r["index"] for r in results}
        self._arg_roles = {a["role"]: a["index"] for a in args}
        # The argument a poisoned step perturbs: the contract names it (amp-train's choice: the input
        # batch, else the backward seed when the batch is token ids; TrainingStep::poisonArgument).
        self.poison_argument = self.contract.get("poison_argument", -1)
        self._device_args = None
        # The checks of the batch (amp-outline-batch-checks; amp-compile exports them next to the step,
        # their descriptions in the function's reflection): 0, or the number of the first that fails.
        self._checks, self.checks = None, []
        checks = self.vm_module.lookup_function(f"{self.entry}__amp_checks")
        if checks is not None and CHECKS_KEY in checks.reflection:
            self._checks = self.context.modules.module[f"{self.entry}__amp_checks"]
            self.checks = json.loads(checks.reflection[CHECKS_KEY])

    @classmethod
    def load(cls, path: str | os.PathLike, **options) -> "IreeStep":
        with open(path, "rb") as f:
            return cls(f.read(), **options)

    @property
    def is_loss_scaled(self) -> bool:
        return "scale" in self._arg_roles

    def set_arguments(self, arrays, check: bool = True) -> None:
        """Uploads every argument (numpy arrays in the step's argument order) to the device and, with
        ``check``, checks the batch with the step's checks where it has some (one call and one
        synchronisation): a batch that fails one raises :class:`BatchRefused` and leaves the arguments as
        they were. Unchecked, a bad batch fails inside the step where the step checks it itself (IREE's
        FAILED_PRECONDITION from a cf.assert) and is read outside its table where it does not (a TOSA
        gather's index)."""
        arrays = list(arrays)
        if len(arrays) != len(self.contract["arguments"]):
            raise ValueError(f"the step takes {len(self.contract['arguments'])} arguments, got {len(arrays)}")
        device = self.config.device
        uploaded = [
            self._rt.asdevicearray(device, np.ascontiguousarray(a).reshape(_shape_of(spec["type"])))
            for a, spec in zip(arrays, self.contract["arguments"])]
        if check and self._checks is not None:
            code = int(np.asarray(self._checks(*uploaded)).reshape(-1)[0])
            if code:
                failed = self.checks[code - 1]
                raise BatchRefused(f"{failed['location']}: error: the compiled step failed a check: "
                                   f"{failed['message']} (the batch was refused before the step ran: "
                                   "nothing was updated)", failed)
        self._device_args = uploaded

    def arguments(self) -> list:
        """The current arguments, copied to the host."""
        return [a.to_host() for a in self._device_args]

    def step(self, poison: bool = False) -> dict:
        """Runs one step; returns the loss, the scale after the step and the skipped flag."""
        if self._device_args is None:
            raise RuntimeError("set_arguments() first")
        args = list(self._device_args)
        if poison:
            if self.poison_argument < 0:
                raise ValueError("no f32 input argument to poison")
            host = np.array(args[self.poison_argument].to_host(), copy=True)
            host.reshape(-1)[0] += np.float32(math.inf)
            args[self.poison_argument] = self._rt.asdevicearray(self.config.device, host)
        results = self._function(*args)
        if not isinstance(results, (tuple, list)):
            results = [results]
        for spec in self.contract["results"]:
            if spec["of"] >= 0:
                self._device_args[spec["of"]] = results[spec["index"]]
        loss = float(np.asarray(results[self._roles["loss"]].to_host()).reshape(-1)[0])
        scale = 1.0
        if "scale" in self._roles:
            scale = float(np.asarray(results[self._roles["scale"]].to_host()).reshape(-1)[0])
        skipped = False
        if "skipped" in self._roles:
            skipped = bool(np.asarray(results[self._roles["skipped"]].to_host()).reshape(-1)[0])
        return {"loss": loss, "scale": scale, "skipped": skipped}

    def run(self, arguments, steps: int, poison_steps=()) -> list:
        """Sets the arguments and runs ``steps`` steps; returns amp-train-like rows."""
        self.set_arguments(arguments)
        poison = set(poison_steps)
        rows = []
        for k in range(int(steps)):
            row = self.step(poison=k in poison)
            rows.append({"step": k, "loss": row["loss"] if math.isfinite(row["loss"]) else None,
                         "scale": row["scale"], "skipped": row["skipped"]})
        return rows


# IREE's global optimisation (iree-util-fixed-point-iterator: fold / fuse globals, IPO) gives up after
# 10 rounds on some steps whose constants const-expr hoisting turns into globals: BEiT's relative
# position bias (a constant index table and the one-hot matrix computed from it) ends in "maximum
# iteration count exceeded in fixed point pipeline". Without hoisting the step compiles and trains like
# amp-train's (docs/IREE.md). compile_step retries with it off on that error only.
FIXED_POINT_ERROR = "maximum iteration count exceeded in fixed point pipeline"
NO_CONST_EXPR_HOISTING = "--iree-opt-const-expr-hoisting=false"

# IREE demotes every f64 value to f32 unless told not to: the step's f64 is deliberate (an optimizer's bias
# corrections and RAdam's rectification computed as torch.optim computes them, quantization scales divided
# correctly rounded, spectral rotations), and demoted, IREE's Adam steps parted from amp-train's by 2e-5..5e-5.
KEEP_F64 = "--iree-input-demote-f64-to-f32=false"


def compile_step(iree_input: str | os.PathLike, output: str | os.PathLike, *, target: str = "llvm-cpu",
                 extra_args=()) -> str:
    """Compiles ``amp-compile --target=iree-input`` output with iree.compiler: ``target`` "llvm-cpu"
    (the host CPU) or "cuda" (``extra_args`` may choose the chip, e.g. "--iree-cuda-target=sm_80"), f64
    kept (KEEP_F64). Where IREE's global optimisation does not reach its fixed point, compiles again without constant
    expression hoisting (FIXED_POINT_ERROR above) and says so on stderr."""
    from iree.compiler import tools

    args = list(extra_args) + [KEEP_F64]
    if target == "llvm-cpu":
        args += ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
                 "--iree-llvmcpu-target-cpu=host"]
    elif target == "cuda":
        args += ["--iree-hal-target-device=cuda"]
    else:
        raise ValueError(f"target must be llvm-cpu or cuda, got {target!r}")
    try:
        tools.compile_file(str(iree_input), output_file=str(output), extra_args=args)
    except tools.CompilerToolError as error:
        if FIXED_POINT_ERROR not in str(error) or NO_CONST_EXPR_HOISTING in args:
            raise
        print(f"amp_mlir.iree: {iree_input}: iree-compile: {FIXED_POINT_ERROR}; compiling again with "
              f"{NO_CONST_EXPR_HOISTING}", file=sys.stderr)
        tools.compile_file(str(iree_input), output_file=str(output),
                           extra_args=args + [NO_CONST_EXPR_HOISTING])
    return str(output)


def _find_amp_compile() -> str:
    """amp-compile: in $AMP_MLIR_BIN, next to $AMP_MLIR_BUILD_DIR/bin, or on PATH."""
    import shutil
    from pathlib import Path

    candidates = []
    if os.environ.get("AMP_MLIR_BIN"):
        candidates.append(Path(os.environ["AMP_MLIR_BIN"]) / "amp-compile")
    if os.environ.get("AMP_MLIR_BUILD_DIR"):
        candidates.append(Path(os.environ["AMP_MLIR_BUILD_DIR"]) / "bin" / "amp-compile")
    candidates.append(Path(__file__).resolve().parents[2] / "build" / "bin" / "amp-compile")
    for c in candidates:
        if c.exists() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which("amp-compile")
    if not found:
        raise FileNotFoundError("amp-compile not found (set AMP_MLIR_BIN or put it on PATH)")
    return found


def main(argv=None) -> int:
    """``python -m amp_mlir.iree STEP.mlir [--inputs DIR] [--precision f16] [--steps 5]``: the step through
    ``amp-compile --target=iree-input`` and iree-compile (llvm-cpu), then run by :class:`IreeStep` from the
    initial values ``amp-train`` would use (the ``amp.init`` hints, ``DIR/arg<N>.npy``, the loss-scale
    state's hints), next to the native Trainer's run of the same step (``amp-train``'s numbers, bit for
    bit). Prints one JSON object: the IREE rows, the native rows, and the amp-compile and iree-compile
    seconds."""
    import argparse
    import subprocess
    import tempfile
    import time
    from pathlib import Path

    ap = argparse.ArgumentParser(prog="python -m amp_mlir.iree", description=main.__doc__)
    ap.add_argument("step", type=Path)
    ap.add_argument("--inputs", type=Path, help="directory of arg<N>.npy initial values")
    ap.add_argument("--precision", default="f16", choices=["fp32", "f16", "bf16"])
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--work", type=Path, help="where the IREE input and the .vmfb go (default: a temporary "
                    "directory)")
    args = ap.parse_args(argv)

    from . import Trainer

    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        iree_input = work / f"step.{args.precision}.iree.mlir"
        vmfb = work / f"step.{args.precision}.vmfb"
        t = time.time()
        proc = subprocess.run([_find_amp_compile(), str(args.step), "--target=iree-input",
                               f"--precision={args.precision}", "-o", str(iree_input)],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stderr, end="", file=sys.stderr)
            return 1
        amp_compile_s = time.time() - t
        t = time.time()
        compile_step(iree_input, vmfb)
        iree_compile_s = time.time() - t
        trainer = Trainer.from_file(args.step, precision=args.precision, inputs_dir=args.inputs)
        initial = [trainer.argument(i) for i in range(len(trainer.arguments))]
        native = trainer.run(args.steps)
        rows = IreeStep.load(vmfb).run(initial, args.steps)
    print(json.dumps({"precision": args.precision, "iree": rows,
                      "native": [{"step": r["step"], "loss": r["loss"] if r["loss"] is not None and
                                  math.isfinite(r["loss"]) else None, "scale": r["scale"],
                                  "skipped": r["skipped"]} for r in native],
                      "amp_compile_s": round(amp_compile_s, 1), "iree_compile_s": round(iree_compile_s, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
