"""amp_mlir.compare: one model and batch trained four ways, side by side.

    python -m amp_mlir.compare --model mlp|transformer|cnn [--steps 50] [--out DIR]

(a) PyTorch in fp32 (torch.optim); (b) PyTorch with ``torch.autocast(device_type="cpu",
dtype=torch.float16)`` and ``torch.amp.GradScaler("cpu")`` (bfloat16 without a scaler where this
torch has no float16 CPU autocast; the report says so); (c) amp-mlir in fp32 and (d) with the AMP
pipeline, both through :class:`amp_mlir.Trainer` on the step exported by
:func:`amp_mlir.torch.export_train_step`. The report has

1. a per-op precision table: for every aten op kind of the exported step, the dtype PyTorch's
   autocast computes each of its nodes in (recorded with a TorchDispatchMode while the exported step
   function runs eagerly under autocast) against amp-mlir's decision for the TOSA ops emitted for
   that node (amp-autocast's JSON report, mapped back through the exporter's
   ``loc("aten.addmm.default[addmm]")`` locations), with an agreement column and a summary;
2. the four loss curves;
3. the loss-scale trajectories and skipped steps of GradScaler and of amp-mlir, and a check that
   amp-mlir's trajectory is exactly what PyTorch's own rule (``torch._amp_update_scale_``) gives for
   amp-mlir's sequence of overflow flags;
4. ``loss_curves.png`` (losses and scales), ``report.json`` and ``report.txt`` in the output folder.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import difflib
import json
import math
import operator
import re
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

try:
    import torch
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError("amp_mlir.compare needs PyTorch (and matplotlib): pip install torch matplotlib, "
                      "or pip install './python[torch]'; see docs/Python.md for what that costs") from error
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from . import Trainer, run_pipeline
from .torch import export_train_step, torch_reference_losses
from .torch.models import TransformerBlock

__all__ = ["compare", "format_report", "make_model", "MODELS", "replay_grad_scaler", "op_precision_table"]

# aten ops that only move or view data: their "precision" is the dtype of what flows through them.
LAYOUT_OPS = {
    "aten.t.default", "aten.view.default", "aten._unsafe_view.default", "aten._reshape_alias.default",
    "aten.reshape.default", "aten.permute.default", "aten.expand.default", "aten.transpose.int",
    "aten.clone.default", "aten.squeeze.dim", "aten.squeeze.dims", "aten.unsqueeze.default",
    "aten.slice.Tensor", "aten.select.int", "aten.alias.default", "aten.detach.default",
}
# What autocast inserts, not part of the traced step.
_CAST_OPS = {"aten._to_copy.default", "aten.to.dtype", "aten.to.dtype_layout"}
_SHORT = {torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32", torch.float64: "f64"}


# --------------------------------------------------------------------------- models
def _mlp():
    nn = torch.nn
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 10))
    return model, torch.nn.functional.cross_entropy, (torch.randn(16, 16), torch.randint(0, 10, (16,))), \
        dict(optimizer="sgd", lr=0.1)


def _transformer():
    return TransformerBlock(), torch.nn.functional.mse_loss, (torch.randn(2, 8, 16), torch.randn(2, 8, 16)), \
        dict(optimizer="adam", lr=1e-3)


def _cnn():
    nn = torch.nn
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(8 * 4 * 4, 10))
    return model, torch.nn.functional.cross_entropy, (torch.randn(8, 3, 8, 8), torch.randint(0, 10, (8,))), \
        dict(optimizer="sgd", lr=0.1)


MODELS = {"mlp": _mlp, "transformer": _transformer, "cnn": _cnn}


def make_model(name: str, seed: int = 0):
    """``(model, loss_fn, example_inputs, optimizer_options)`` of a built-in model (torch seeded)."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose from {sorted(MODELS)}")
    torch.manual_seed(seed)
    return MODELS[name]()


# --------------------------------------------------------------------------- PyTorch runs
def cpu_autocast_dtype():
    """``(dtype, note)``: float16 when CPU autocast computes a matmul in float16, else bfloat16."""
    try:
        a = torch.randn(4, 4)
        with torch.autocast(device_type="cpu", dtype=torch.float16):
            out = torch.mm(a, a)
        if out.dtype == torch.float16:
            return torch.float16, None
        why = f"a matmul under float16 CPU autocast computed in {out.dtype}"
    except (RuntimeError, TypeError, ValueError) as e:  # older torch: "only bfloat16 is supported"
        why = str(e).splitlines()[0]
    return torch.bfloat16, f"float16 CPU autocast is unavailable in torch {torch.__version__} ({why}); " \
                           "using bfloat16 without GradScaler, and amp-mlir with precision=bf16"


def _make_optimizer(params, optimizer="sgd", lr=None, momentum=0.0, weight_decay=0.0, betas=(0.9, 0.999),
                    eps=1e-8):
    if optimizer == "sgd":
        return torch.optim.SGD(params, lr=0.01 if lr is None else lr, momentum=momentum,
                               weight_decay=weight_decay, foreach=False)
    return torch.optim.Adam(params, lr=1e-3 if lr is None else lr, betas=betas, eps=eps,
                            weight_decay=weight_decay, foreach=False)


def _poison_index(inputs):
    """The batch tensor amp-mlir poisons: the first float one (the first f32 argument nothing updates)."""
    for i, t in enumerate(inputs):
        if t.is_floating_point() and t.numel():
            return i
    return None


def _found_inf(scaler, opt) -> bool:
    per_device = scaler._found_inf_per_device(opt)  # after step(), before update()
    return sum(float(v.item()) for v in per_device.values()) > 0


def torch_amp_run(model, loss_fn, example_inputs, *, steps, dtype, opt_options, init_scale=65536.0,
                  growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, poison_steps=()):
    """Train a copy of ``model`` on the fixed batch with autocast (+ GradScaler for float16).

    Returns rows ``{"step", "loss", "scale", "skipped"}`` like amp-mlir's: the loss before the step's
    update, the scale after ``scaler.update()`` and whether GradScaler found an inf/nan and skipped the
    optimizer step. A poisoned step adds +inf to element 0 of the first float batch tensor.
    """
    model = copy.deepcopy(model).float()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = _make_optimizer(params, **opt_options)
    use_scaler = dtype == torch.float16
    scaler = torch.amp.GradScaler("cpu", init_scale=init_scale, growth_factor=growth_factor,
                                  backoff_factor=backoff_factor, growth_interval=growth_interval,
                                  enabled=use_scaler)
    inputs = [t.float() if t.is_floating_point() else t for t in example_inputs]
    poison_at = _poison_index(inputs)
    poison = {int(s) for s in poison_steps}
    rows = []
    for k in range(steps):
        batch = [t.clone() for t in inputs]
        if k in poison and poison_at is not None:
            batch[poison_at].view(-1)[0] += float("inf")
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cpu", dtype=dtype):
            loss = loss_fn(model(*batch[:-1]), batch[-1])
        scaler.scale(loss).backward()
        scaler.step(opt)
        skipped = _found_inf(scaler, opt) if use_scaler else False
        scaler.update()
        rows.append({"step": k, "loss": float(loss.detach().float()),
                     "scale": float(scaler.get_scale()) if use_scaler else 1.0, "skipped": bool(skipped)})
    return rows


def replay_grad_scaler(flags, *, init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5,
                       growth_interval=2000):
    """The scale after each update when GradScaler's rule (``torch._amp_update_scale_`` on CPU tensors,
    float32 scale, int32 growth tracker) is fed the overflow ``flags`` one step at a time."""
    scale = torch.full((), init_scale, dtype=torch.float32)
    tracker = torch.zeros((), dtype=torch.int32)
    out = []
    for flag in flags:
        found_inf = torch.full((), 1.0 if flag else 0.0, dtype=torch.float32)
        torch._amp_update_scale_(scale, tracker, found_inf, growth_factor, backoff_factor, growth_interval)
        out.append(float(scale))
    return out


def _same_f32(a, b) -> bool:
    """Bitwise equality of two float sequences as float32 (inf and nan compare by bits)."""
    return len(a) == len(b) and np.array(a, np.float32).tobytes() == np.array(b, np.float32).tobytes()


# --------------------------------------------------------------------------- precision decisions
class _DtypeRecorder(TorchDispatchMode):
    """Records every aten op below autocast with the floating dtypes it produced and consumed."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        outs = [t.dtype for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and t.is_floating_point()]
        ins = [t.dtype for t in tree_flatten((args, kwargs or {}))[0]
               if isinstance(t, torch.Tensor) and t.is_floating_point()]
        self.ops.append((str(func), outs, ins))
        return out


def _compute_dtype(outs, ins):
    """The dtype an op computes in: that of its float results (else of its float operands)."""
    dtypes = outs or ins
    if not dtypes:
        return None
    names = sorted({_SHORT.get(d, str(d).replace("torch.", "")) for d in dtypes})
    return names[0] if len(names) == 1 else "mixed(" + ",".join(names) + ")"


def _flat_step_arguments(model, example_inputs, optimizer):
    """Parameters, optimizer state and batch in the exporter's argument order."""
    params = [p.detach().clone().float() for _, p in model.named_parameters() if p.requires_grad]
    if optimizer == "sgd":
        state = []
    else:
        state = [torch.zeros_like(p) for p in params] + [torch.zeros_like(p) for p in params]
        state.append(torch.zeros((), dtype=torch.float32))
    inputs = [t.detach().clone() for t in example_inputs]
    inputs = [t.float() if t.is_floating_point() else t for t in inputs]
    return params, state, inputs


def record_torch_dtypes(model, loss_fn, example_inputs, opt_options, dtype, rules="cpu"):
    """Run the exporter's step function (forward, loss, backward via torch.func, update) once, eagerly,
    with the forward pass and the loss under ``torch.autocast("cpu", dtype)`` (the backward pass and the
    update outside it, as PyTorch's AMP recipe has it) and a TorchDispatchMode; returns the recorded ops
    ``(name, float result dtypes, float operand dtypes)`` in execution order, autocast's casts included.
    ``rules="cuda"`` runs autocast with PyTorch's CUDA lists instead of the CPU ones
    (:mod:`amp_mlir.torch.autocast_rules`)."""
    from .torch._export import _make_step_fn  # the function export_train_step traces with make_fx
    from .torch.autocast_rules import cuda_autocast_rules

    if rules not in ("cpu", "cuda"):
        raise ValueError(f"rules must be 'cpu' or 'cuda', not {rules!r}")
    model = copy.deepcopy(model).float()
    opt = dict(opt_options)
    optimizer = opt.get("optimizer", "sgd")
    lr = opt.get("lr")
    lr = (1e-3 if optimizer == "adam" else 0.01) if lr is None else lr
    momentum = opt.get("momentum", 0.0)
    params, state, inputs = _flat_step_arguments(model, example_inputs, optimizer)
    if optimizer == "sgd" and momentum:
        state = [torch.zeros_like(p) for p in params]
    names = [k for k, p in model.named_parameters() if p.requires_grad]
    step_fn = _make_step_fn(model, loss_fn, names, len(params), len(inputs), optimizer, float(lr),
                            float(momentum), float(opt.get("weight_decay", 0.0)),
                            tuple(float(b) for b in opt.get("betas", (0.9, 0.999))), float(opt.get("eps", 1e-8)),
                            forward_context=lambda: torch.autocast(device_type="cpu", dtype=dtype))
    recorder = _DtypeRecorder()
    with (cuda_autocast_rules(dtype) if rules == "cuda" else contextlib.nullcontext()), recorder:
        step_fn(*params, *state, *inputs)
    return recorder.ops


_LOC = re.compile(r'\s+loc\("([^"]*)"\)\s*$')
_NODE = re.compile(r"^(.*)\[([^\]]+)\]$")


def amp_mlir_decisions(mlir_text: str, precision: str, report_path: Path, source_name="train_step.mlir"):
    """Run amp-pipeline on the exported step with ``report=``; returns ``({node: [report entries]}, report)``.

    The exporter gives each op ``loc("aten.addmm.default[addmm]")``; amp-autocast's report prints file
    positions, so the locations are moved out of the text and each report entry is mapped back through
    its line number (one op per line).
    """
    lines, line_names = [], {}
    for number, line in enumerate(mlir_text.splitlines(), start=1):
        m = _LOC.search(line)
        if m:
            line_names[number] = m.group(1)
            line = line[: m.start()]
        lines.append(line)
    pipeline = f"builtin.module(amp-pipeline{{precision={precision} report={report_path}}})"
    run_pipeline("\n".join(lines) + "\n", pipeline, source_name=source_name)
    report = json.loads(Path(report_path).read_text())
    by_node = defaultdict(list)
    for entry in report["ops"]:
        loc = entry.get("location", "")
        name = None
        m = re.search(r":(\d+):\d+$", loc)
        if m:
            name = line_names.get(int(m.group(1)))
        if name is None:  # a report that keeps the name itself
            m = re.search(r"(aten\.[\w.]+\[\w+\])", loc)
            name = m.group(1) if m else None
        node = _NODE.match(name).group(2) if name and _NODE.match(name) else (name or "<unmapped>")
        by_node[node].append(entry)
    return by_node, report


def _amp_node_decision(entries):
    """amp-mlir's precision for one aten node: that of its non-layout ('clear') TOSA ops when it has
    some, else of all of them; ``mixed`` when they differ."""
    if not entries:
        return None, ""
    main = [e for e in entries if e.get("category") != "clear"] or entries
    precisions = {e["precision"] for e in main}
    if len(precisions) == 1:
        return precisions.pop(), ""
    detail = ", ".join(f"{op} {p}" for op, p in sorted(Counter((e["op"], e["precision"]) for e in main)))
    return "mixed", detail


def op_precision_table(graph_module, torch_ops, amp_by_node):
    """Per-node and per-aten-op-kind comparison of PyTorch autocast's dtypes and amp-mlir's decisions.

    ``torch_ops`` (from :func:`record_torch_dtypes`, casts removed) are aligned with the graph's
    call_function nodes by op name (they come from the same function, so the sequences normally match
    one for one).
    """
    nodes = [n for n in graph_module.graph.nodes if n.op == "call_function" and n.target is not operator.getitem]
    graph_names = [str(n.target) for n in nodes]
    recorded = [op for op in torch_ops if op[0] not in _CAST_OPS]
    matcher = difflib.SequenceMatcher(None, graph_names, [op[0] for op in recorded], autojunk=False)
    torch_of = {}
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            torch_of[block.a + k] = recorded[block.b + k]
    rows = []
    for i, node in enumerate(nodes):
        kind = graph_names[i]
        rec = torch_of.get(i)
        torch_dtype = _compute_dtype(rec[1], rec[2]) if rec else None
        amp, detail = _amp_node_decision(amp_by_node.get(node.name, []))
        if torch_dtype is None or amp is None:
            agree = None
        elif amp == "mixed":
            agree = "partial"
        else:
            agree = "yes" if amp == torch_dtype else "no"
        rows.append({"node": node.name, "op": kind, "layout": kind in LAYOUT_OPS, "torch": torch_dtype,
                     "amp_mlir": amp, "amp_mlir_detail": detail, "agree": agree,
                     "tosa_ops": [f"{e['op']}:{e['precision']}" for e in amp_by_node.get(node.name, [])]})
    kinds = []
    for kind in sorted({r["op"] for r in rows}):
        group = [r for r in rows if r["op"] == kind]
        compared = [r for r in group if r["agree"] is not None]
        kinds.append({
            "op": kind, "nodes": len(group), "layout": kind in LAYOUT_OPS,
            "torch": dict(Counter(r["torch"] or "-" for r in group)),
            "amp_mlir": dict(Counter(r["amp_mlir"] or "-" for r in group)),
            "agree": sum(r["agree"] == "yes" for r in compared), "partial": sum(r["agree"] == "partial" for r in compared),
            "compared": len(compared)})

    def summary(selected):
        compared = [r for r in selected if r["agree"] is not None]
        yes = sum(r["agree"] == "yes" for r in compared)
        partial = sum(r["agree"] == "partial" for r in compared)
        return {"agree": yes, "partial": partial, "compared": len(compared),
                "percent": round(100.0 * yes / len(compared), 1) if compared else None}

    return {"nodes": rows, "kinds": kinds, "summary": summary(rows),
            "summary_compute": summary([r for r in rows if not r["layout"]]),
            "aligned": matcher.ratio() == 1.0}


# --------------------------------------------------------------------------- the comparison
def _finite_or_none(values):
    return [v if isinstance(v, float) and math.isfinite(v) else (None if isinstance(v, float) else v)
            for v in values]


def _plot(report, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    losses = report["losses"]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 7), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    styles = {"torch_fp32": ("PyTorch fp32", "-", "C0"), "torch_amp": (f"PyTorch autocast {report['autocast_dtype']}", "--", "C1"),
              "amp_mlir_fp32": ("amp-mlir fp32", ":", "C2"), "amp_mlir_amp": (f"amp-mlir {report['amp_mlir_precision']}", "-.", "C3")}
    for key, (label, style, color) in styles.items():
        ys = np.array([np.nan if v is None else v for v in losses[key]], dtype=float)
        ax1.plot(np.arange(len(ys)), ys, style, color=color, label=label, linewidth=1.6)
    ax1.set_ylabel("loss (before the step's update)")
    ax1.set_title(f"{report['model']}: {report['steps']} steps on one batch")
    ax1.legend()
    ax1.grid(alpha=0.3)
    scale = report["loss_scale"]
    for key, label, style, color in (("torch", "GradScaler", "--", "C1"), ("amp_mlir", "amp-mlir", "-.", "C3")):
        ys = np.array(scale[key], dtype=float)
        ax2.plot(np.arange(len(ys)), np.log2(ys), style, color=color, label=label, drawstyle="steps-post")
        skipped = [i for i, s in enumerate(scale[key + "_skipped"]) if s]
        if skipped:
            ax2.plot(skipped, np.log2(ys[skipped]), "x", color=color, label=f"{label} skipped")
    ax2.set_ylabel("log2(loss scale) after step")
    ax2.set_xlabel("step")
    ax2.legend()
    ax2.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def compare(model, loss_fn, example_inputs, *, optimizer="sgd", lr=None, momentum=0.0, weight_decay=0.0,
            betas=(0.9, 0.999), eps=1e-8, steps=50, out_dir=None, init_scale=65536.0, growth_factor=2.0,
            backoff_factor=0.5, growth_interval=2000, poison_steps=(), name=None, plot=True) -> dict:
    """Train ``model`` on the fixed batch ``example_inputs`` (model inputs..., target) for ``steps`` steps
    in PyTorch fp32, PyTorch autocast + GradScaler, amp-mlir fp32 and amp-mlir with the AMP pipeline,
    and compare them (module docstring). The loss-scale options go to both GradScaler and amp-mlir;
    ``poison_steps`` add +inf to the input batch in those steps of both AMP runs (to force overflows).
    Writes ``report.json``, ``report.txt``, ``loss_curves.png`` and the exported step (``export/``) into
    ``out_dir`` (a temporary folder if None) and returns the report as a dict.
    """
    if not isinstance(optimizer, str):  # its PyTorch AMP run and dtype record build the optimizer by name
        raise ValueError("compare takes the optimizer by name ('sgd', 'adam'); a torch.optim instance goes to "
                         "amp_mlir.torch.export_train_step")
    out_dir = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="amp-compare-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    optimizer = optimizer.lower()
    opt_options = dict(optimizer=optimizer, lr=lr, momentum=momentum, weight_decay=weight_decay, betas=betas, eps=eps)
    if optimizer == "adam":
        opt_options.pop("momentum")
    scaler_options = dict(init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                          growth_interval=growth_interval)
    dtype, note = cpu_autocast_dtype()
    precision = "f16" if dtype == torch.float16 else "bf16"
    model = copy.deepcopy(model).float()

    # (c) the exported step, then amp-mlir's runs
    exported = export_train_step(copy.deepcopy(model), loss_fn, example_inputs, frontend="builtin", out_dir=out_dir / "export",
                                 **opt_options)
    source = str(exported.mlir_path)
    fp32 = Trainer(exported.text, "fp32", source_name=source).run(steps, inputs_dir=exported.out_dir)
    amp_trainer = Trainer(exported.text, precision, source_name=source, **scaler_options)
    amp = amp_trainer.run(steps, inputs_dir=exported.out_dir, poison_steps=poison_steps)

    # (a), (b) PyTorch
    torch_fp32 = torch_reference_losses(model, loss_fn, example_inputs, steps=steps, **opt_options)
    torch_amp = torch_amp_run(model, loss_fn, example_inputs, steps=steps, dtype=dtype, opt_options=opt_options,
                              poison_steps=poison_steps, **scaler_options)

    # 1. per-op precision decisions
    torch_ops = record_torch_dtypes(model, loss_fn, example_inputs, opt_options, dtype)
    by_node, autocast_report = amp_mlir_decisions(exported.text, precision, out_dir / "amp_autocast_report.json")
    table = op_precision_table(exported.graph_module, torch_ops, by_node)
    table["torch_casts"] = sum(op[0] in _CAST_OPS for op in torch_ops)
    table["amp_mlir_summary"] = autocast_report["summary"]

    # 3. loss scale
    amp_flags = [r["skipped"] for r in amp]
    amp_scales = [r["scale"] for r in amp]
    if amp_trainer.is_loss_scaled:
        replay = replay_grad_scaler(amp_flags, **scaler_options)
    else:
        replay = [1.0] * len(amp)
    scale = {
        "torch": [r["scale"] for r in torch_amp], "torch_skipped": [r["skipped"] for r in torch_amp],
        "amp_mlir": amp_scales, "amp_mlir_skipped": amp_flags, "replay": replay,
        "replay_matches": _same_f32(amp_scales, replay),
        "flags_match": [r["skipped"] for r in torch_amp] == amp_flags,
        "trajectories_match": _same_f32([r["scale"] for r in torch_amp], amp_scales),
        "loss_scaled": amp_trainer.is_loss_scaled, **scaler_options, "poison_steps": sorted(int(s) for s in poison_steps),
    }

    # 2. losses
    amp_fp32_losses = [r["loss"] for r in fp32]
    rel = [abs(a - t) / abs(t) for a, t in zip(amp_fp32_losses, torch_fp32) if math.isfinite(a) and t != 0]
    report = {
        "model": name or type(model).__name__, "steps": steps, "torch_version": torch.__version__,
        "autocast_dtype": _SHORT[dtype], "amp_mlir_precision": precision, "note": note,
        "optimizer": opt_options, "out_dir": str(out_dir),
        "ops": table,
        "losses": {"torch_fp32": torch_fp32, "torch_amp": [r["loss"] for r in torch_amp],
                   "amp_mlir_fp32": amp_fp32_losses, "amp_mlir_amp": [r["loss"] for r in amp]},
        "loss_metrics": {"amp_mlir_fp32_vs_torch_fp32_max_rel": max(rel) if rel else None},
        "loss_scale": scale,
        "files": {"report_json": str(out_dir / "report.json"), "report_txt": str(out_dir / "report.txt"),
                  "plot": str(out_dir / "loss_curves.png") if plot else None,
                  "exported_step": source, "amp_autocast_report": str(out_dir / "amp_autocast_report.json")},
    }
    if plot:
        _plot(report, out_dir / "loss_curves.png")
    text = format_report(report)
    (out_dir / "report.txt").write_text(text + "\n")
    serializable = json.loads(json.dumps(report, default=str))
    for key, values in serializable["losses"].items():
        serializable["losses"][key] = _finite_or_none(values)
    (out_dir / "report.json").write_text(json.dumps(serializable, indent=2, allow_nan=False) + "\n")
    return report


# --------------------------------------------------------------------------- text report
def _fmt_counts(counts: dict) -> str:
    if len(counts) == 1:
        return next(iter(counts))
    return ", ".join(f"{k} x{v}" for k, v in sorted(counts.items()))


def _fmt_loss(v) -> str:
    return "nan" if v is None or not math.isfinite(v) else f"{v:.6f}"


def _percent(s) -> str:
    if not s["compared"]:
        return "n/a"
    extra = f", {s['partial']} partial" if s["partial"] else ""
    return f"{s['agree']}/{s['compared']} nodes ({s['percent']:.1f}%{extra})"


def format_report(report: dict) -> str:
    """The readable text form of a :func:`compare` report."""
    out = []
    p, a = report["amp_mlir_precision"], report["autocast_dtype"]
    out.append(f"== amp_mlir.compare: {report['model']}, {report['steps']} steps, optimizer "
               f"{report['optimizer']['optimizer']} (torch {report['torch_version']})")
    if report.get("note"):
        out.append(f"   NOTE: {report['note']}")
    ops = report["ops"]
    out.append("")
    out.append(f"1. Per-op precision: PyTorch autocast ({a}) vs amp-mlir (amp-autocast, {p})")
    width = max(len(k["op"]) for k in ops["kinds"]) + 4
    tw = max([len(_fmt_counts(k["torch"])) for k in ops["kinds"]] + [len("torch autocast")]) + 2
    aw = max([len(_fmt_counts(k["amp_mlir"])) for k in ops["kinds"]] + [len("amp-mlir")]) + 2
    out.append(f"   {'aten op':<{width}}{'nodes':>5}  {'torch autocast':<{tw}}{'amp-mlir':<{aw}}agree")
    for k in ops["kinds"]:
        agree = f"{k['agree']}/{k['compared']}" + (f" (+{k['partial']} partial)" if k["partial"] else "")
        if not k["compared"]:
            agree = "-"
        name = k["op"] + (" *" if k["layout"] else "")
        out.append(f"   {name:<{width}}{k['nodes']:>5}  {_fmt_counts(k['torch']):<{tw}}"
                   f"{_fmt_counts(k['amp_mlir']):<{aw}}{agree}")
    out.append("   (torch autocast: the dtype each node computes in; amp-mlir: the precision amp-autocast chose "
               "for the node's TOSA ops, '-' where it emitted no float op)")
    out.append("   (* layout op: moves data, its dtype is that of what flows through it)")
    mixed = [r for r in ops["nodes"] if r["amp_mlir"] == "mixed"]
    for r in mixed:
        out.append(f"   mixed node {r['node']} ({r['op']}): {r['amp_mlir_detail']}")
    out.append(f"   agreement: {_percent(ops['summary'])}; compute ops only (no layout ops): "
               f"{_percent(ops['summary_compute'])}")
    s = ops["amp_mlir_summary"]
    out.append(f"   amp-mlir converted {s['low_precision_ops']}/{s['float_ops']} float TOSA ops to {p} with "
               f"{s['casts_inserted']} casts; PyTorch autocast inserted {ops['torch_casts']} casts (_to_copy)")
    if not ops["aligned"]:
        out.append("   (the eager op sequence differed from the traced graph; unmatched nodes show '-')")

    losses = report["losses"]
    n = report["steps"]
    out.append("")
    out.append("2. Loss curves (loss before each step's update)")
    out.append(f"   {'step':>5}  {'torch fp32':>12}  {'torch ' + a:>12}  {'amp-mlir fp32':>13}  {'amp-mlir ' + p:>13}")
    shown = sorted({0, 1, 2, n - 1} | set(range(0, n, max(1, n // 10))))
    for i in shown:
        if 0 <= i < n:
            out.append(f"   {i:>5}  {_fmt_loss(losses['torch_fp32'][i]):>12}  {_fmt_loss(losses['torch_amp'][i]):>12}  "
                       f"{_fmt_loss(losses['amp_mlir_fp32'][i]):>13}  {_fmt_loss(losses['amp_mlir_amp'][i]):>13}")
    rel = report["loss_metrics"]["amp_mlir_fp32_vs_torch_fp32_max_rel"]
    if rel is not None:
        out.append(f"   amp-mlir fp32 vs PyTorch fp32: max relative difference {rel:.2e}")

    sc = report["loss_scale"]
    out.append("")
    out.append("3. Loss scale (after each step's update) and skipped steps")
    if not sc["loss_scaled"]:
        out.append(f"   no loss scaling ({p})")
    else:
        out.append(f"   rule: init {sc['init_scale']:g}, growth x{sc['growth_factor']:g} every {sc['growth_interval']} "
                   f"clean steps, backoff x{sc['backoff_factor']:g}; poisoned steps: {sc['poison_steps'] or 'none'}")

        def runs(values, flags):
            parts, start = [], 0
            for i in range(1, len(values) + 1):
                if i == len(values) or values[i] != values[start]:
                    parts.append(f"{values[start]:g} (steps {start}-{i - 1})" if i - 1 > start else f"{values[start]:g} (step {start})")
                    start = i
            skipped = [i for i, f in enumerate(flags) if f]
            return "; ".join(parts), skipped

        for key, label in (("torch", "GradScaler"), ("amp_mlir", "amp-mlir")):
            traj, skipped = runs(sc[key], sc[key + "_skipped"])
            out.append(f"   {label:<10} scale: {traj}")
            out.append(f"   {'':<10} skipped steps: {skipped or 'none'}")
        out.append(f"   overflow flags GradScaler == amp-mlir: {sc['flags_match']}; "
                   f"scale trajectories identical: {sc['trajectories_match']}")
        out.append(f"   amp-mlir trajectory == torch._amp_update_scale_ replay of amp-mlir's flags: "
                   f"{'EXACT (bitwise f32)' if sc['replay_matches'] else 'MISMATCH'}")
    out.append("")
    files = report["files"]
    out.append(f"4. Files: {files['report_json']}, {files['report_txt']}" + (f", {files['plot']}" if files["plot"] else ""))
    return "\n".join(out)


# --------------------------------------------------------------------------- command line
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m amp_mlir.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="mlp")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--out", default=None, help="output folder (default: a new temporary folder)")
    parser.add_argument("--poison-steps", default="", help="comma-separated steps that get +inf in the batch")
    parser.add_argument("--init-scale", type=float, default=65536.0)
    parser.add_argument("--growth-interval", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0, help="torch.manual_seed for the model and batch")
    args = parser.parse_args(argv)
    model, loss_fn, inputs, opt = make_model(args.model, args.seed)
    poison = [int(s) for s in args.poison_steps.split(",") if s.strip()]
    report = compare(model, loss_fn, inputs, steps=args.steps, out_dir=args.out, name=args.model,
                     init_scale=args.init_scale, growth_interval=args.growth_interval, poison_steps=poison, **opt)
    print(format_report(report))
    return 0 if report["loss_scale"]["replay_matches"] else 1


if __name__ == "__main__":
    sys.exit(main())
