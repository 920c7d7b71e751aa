"""amp_mlir.autocast_compare: amp-autocast's decisions against PyTorch's CUDA autocast, aten op by aten op.

    python -m amp_mlir.autocast_compare [--model NAME ...] [--precision f16|bf16] [--json FILE]

For each model, the training step (forward, loss, backward, optimizer update) is exported with
:func:`amp_mlir.torch.export_train_step` and rewritten by amp-autocast (its JSON report, mapped back to
the aten nodes through the exporter's ``loc("aten.addmm.default[addmm]")`` locations). The same step
runs eagerly in PyTorch with its forward pass and loss under autocast following the **CUDA** lists
(:mod:`amp_mlir.torch.autocast_rules`: lower_precision_fp, fp32, fp32_set_opt_dtype, promote, and the
ops outside the lists, which run in whatever type their inputs have); the backward pass and the update
run outside autocast, as in PyTorch's AMP recipe. A TorchDispatchMode records the dtype every aten op
computes in.

Per aten node, amp-mlir's precision is the low type when one of the node's non-clear MLIR ops computes
in it or, for a reduction that accumulates in f32, reads its input in it (PyTorch's sum kernels read f16
and accumulate in f32 the same way); a node made only of clear ops (data movement, relu) takes the low
type when any of them does. PyTorch's precision is the dtype of the node's floating results.

*Compute nodes* leave out layout ops (view, permute, t, expand, ...) and elementwise add/sub/mul/div,
which the exported graph shares between the model and the optimizer. Every kind of disagreement that is
deliberate is listed once in :data:`DELIBERATE_DIFFERENCES` with its reason, and in docs/Policy.md.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

try:
    import torch
except ImportError as error:  # pragma: no cover - depends on the environment
    raise ImportError("amp_mlir.autocast_compare needs PyTorch: pip install torch") from error

from .compare import LAYOUT_OPS, amp_mlir_decisions, op_precision_table, record_torch_dtypes
from .torch import export_train_step
from .torch.autocast_rules import cuda_category
from .torch.models import TransformerBlock

__all__ = ["MODELS", "DELIBERATE_DIFFERENCES", "ELEMENTWISE_OPS", "compare_model", "compare_models",
           "format_table", "main"]

# Elementwise arithmetic: in the exported step it serves the model and the optimizer alike.
ELEMENTWISE_OPS = {
    "aten.add.Tensor", "aten.add.Scalar", "aten.sub.Tensor", "aten.sub.Scalar", "aten.rsub.Scalar",
    "aten.mul.Tensor", "aten.mul.Scalar", "aten.div.Tensor", "aten.div.Scalar",
}

# The CUDA autocast list that decides a traced (inner) aten op: the composite op that autocast sees.
_AUTOCAST_ENTRY = {
    "aten._log_softmax.default": "log_softmax.int (dtype given by cross_entropy: input type)",
    "aten._softmax.default": "softmax.int",
    "aten.nll_loss_forward.default": "nll_loss",
    "aten.native_layer_norm.default": "native_layer_norm",
    "aten.mse_loss.default": "mse_loss",
    "aten.addmm.default": "addmm (linear)",
    "aten.mm.default": "mm",
    "aten.bmm.default": "bmm (matmul)",
    "aten.gelu.default": "gelu",
    "aten.relu.default": "relu",
}

# aten op -> why amp-mlir decides otherwise than PyTorch's CUDA autocast on purpose.
DELIBERATE_DIFFERENCES = {
    "aten._log_softmax.default":
        "cross_entropy passes log_softmax its input dtype, so CUDA runs the fused kernel with f16 input and "
        "output (and f32 math inside). The exported step holds the decomposed pieces: exp, log and the sum "
        "are on the fp32 list and stay f32, so the node computes in f32.",
    "aten._log_softmax_backward_data.default":
        "follows _log_softmax: its exp and sum stay f32.",
}


def _mnist_mlp():
    nn = torch.nn
    return (nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)), torch.nn.functional.cross_entropy,
            (torch.randn(32, 784), torch.randint(0, 10, (32,))), dict(optimizer="sgd", lr=0.1))


def _regression():
    nn = torch.nn
    return (nn.Sequential(nn.Linear(10, 20), nn.ReLU(), nn.Linear(20, 1)), torch.nn.functional.mse_loss,
            (torch.randn(32, 10), torch.randn(32, 1)), dict(optimizer="sgd", lr=0.01))


def _mlp_layernorm_gelu():
    nn = torch.nn
    return (nn.Sequential(nn.Linear(32, 64), nn.LayerNorm(64), nn.GELU(), nn.Linear(64, 10)),
            torch.nn.functional.cross_entropy, (torch.randn(16, 32), torch.randint(0, 10, (16,))),
            dict(optimizer="adam", lr=1e-3))


def _attention():
    return (TransformerBlock(), torch.nn.functional.mse_loss, (torch.randn(2, 8, 16), torch.randn(2, 8, 16)),
            dict(optimizer="adam", lr=1e-3))


# The four kinds of model of the comparison: an MNIST MLP, a 10-20-1 regression, an MLP with LayerNorm and
# GELU, and a pre-norm attention block.
MODELS = {"mnist_mlp": _mnist_mlp, "regression": _regression, "mlp_layernorm_gelu": _mlp_layernorm_gelu,
          "attention": _attention}


def _our_precision(entries, low: str):
    """amp-mlir's precision for one aten node (module docstring), or None when it emitted no float op."""
    if not entries:
        return None
    main = [e for e in entries if e.get("category") != "clear"] or entries
    if any(e["precision"] == low or e.get("inputs") == low for e in main):
        return low
    return "f32"


def compare_model(name: str, precision: str = "f16", seed: int = 0, work_dir=None) -> dict:
    """Compare one model of :data:`MODELS`; returns ``{"model", "rows", "summary", "aligned", "report"}``."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose from {sorted(MODELS)}")
    torch.manual_seed(seed)
    model, loss_fn, inputs, opt = MODELS[name]()
    work = Path(work_dir) if work_dir else Path(tempfile.mkdtemp(prefix="amp-autocast-compare-"))
    work.mkdir(parents=True, exist_ok=True)
    exported = export_train_step(copy.deepcopy(model), loss_fn, inputs, frontend="builtin", out_dir=work / name, **opt)
    low = {"f16": torch.float16, "bf16": torch.bfloat16}[precision]
    torch_ops = record_torch_dtypes(model, loss_fn, inputs, opt, low, rules="cuda")
    by_node, report = amp_mlir_decisions(exported.text, precision, work / f"{name}.report.json",
                                         source_name=str(exported.mlir_path))
    table = op_precision_table(exported.graph_module, torch_ops, by_node)
    rows = []
    for row in table["nodes"]:
        op = row["op"]
        ours = _our_precision(by_node.get(row["node"], []), precision)
        compute = not row["layout"] and op not in ELEMENTWISE_OPS
        agree = None if ours is None or row["torch"] is None else ours == row["torch"]
        rows.append({
            "node": row["node"], "op": op, "compute": compute, "torch": row["torch"], "amp_mlir": ours,
            "agree": agree, "cuda_autocast": cuda_category(op),
            "autocast_entry": _AUTOCAST_ENTRY.get(op, ""), "mlir_ops": row["tosa_ops"],
            "deliberate": DELIBERATE_DIFFERENCES.get(op) if agree is False else None,
        })
    compared = [r for r in rows if r["compute"] and r["agree"] is not None]
    agreed = sum(r["agree"] for r in compared)
    summary = {"compute_nodes": len(compared), "agree": agreed,
               "percent": round(100.0 * agreed / len(compared), 1) if compared else None,
               "unexplained": sum(1 for r in compared if not r["agree"] and not r["deliberate"])}
    return {"model": name, "precision": precision, "rows": rows, "summary": summary,
            "aligned": table["aligned"], "report": report["summary"]}


def compare_models(names=None, precision: str = "f16", work_dir=None) -> dict:
    """:func:`compare_model` over several models, with the total."""
    results = [compare_model(n, precision, work_dir=work_dir) for n in (names or list(MODELS))]
    compute = sum(r["summary"]["compute_nodes"] for r in results)
    agree = sum(r["summary"]["agree"] for r in results)
    return {"models": results, "total": {
        "compute_nodes": compute, "agree": agree,
        "percent": round(100.0 * agree / compute, 1) if compute else None,
        "unexplained": sum(r["summary"]["unexplained"] for r in results)}}


def format_table(result: dict) -> str:
    """The per-aten-op table of :func:`compare_models`, as text."""
    lines = []
    for model in result["models"]:
        s = model["summary"]
        lines.append(f"== {model['model']} ({model['precision']}): {s['agree']}/{s['compute_nodes']} compute nodes "
                     f"agree ({s['percent']}%); bytes converted by casts: {model['report']['bytes_converted']}")
        kinds = {}
        for r in model["rows"]:
            kinds.setdefault(r["op"], []).append(r)
        lines.append(f"  {'aten op':42} {'nodes':>5}  {'CUDA autocast':20} {'PyTorch':10} {'amp-mlir':10} agree")
        for op, group in sorted(kinds.items()):
            torch_dt = ",".join(f"{k}x{v}" for k, v in sorted(Counter(str(r['torch']) for r in group).items()))
            ours = ",".join(f"{k}x{v}" for k, v in sorted(Counter(str(r['amp_mlir']) for r in group).items()))
            compared = [r for r in group if r["agree"] is not None]
            agree = f"{sum(r['agree'] for r in compared)}/{len(compared)}" if compared else "-"
            if not group[0]["compute"]:
                agree += " (not counted)"
            lines.append(f"  {op:42} {len(group):>5}  {group[0]['cuda_autocast']:20} {torch_dt:10} {ours:10} {agree}")
        for r in model["rows"]:
            if r["compute"] and r["agree"] is False:
                why = r["deliberate"] or "NOT EXPLAINED"
                lines.append(f"  differs: {r['node']} ({r['op']}): PyTorch {r['torch']}, amp-mlir {r['amp_mlir']}: {why}")
    t = result["total"]
    lines.append(f"== total: {t['agree']}/{t['compute_nodes']} compute nodes agree ({t['percent']}%), "
                 f"{t['unexplained']} differences not explained")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m amp_mlir.autocast_compare", description=__doc__.split("\n")[0])
    parser.add_argument("--model", action="append", choices=sorted(MODELS),
                        help="model to compare (repeatable; default: all four)")
    parser.add_argument("--precision", choices=("f16", "bf16"), default="f16")
    parser.add_argument("--json", type=Path, help="also write the comparison as JSON")
    parser.add_argument("--work-dir", type=Path, help="keep the exported steps and reports here")
    args = parser.parse_args(argv)
    result = compare_models(args.model, args.precision, work_dir=args.work_dir)
    print(format_table(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0 if result["total"]["unexplained"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
