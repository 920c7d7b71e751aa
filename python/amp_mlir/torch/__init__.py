"""PyTorch front end of amp-mlir: export a whole training step (forward, loss, backward, optimizer
update) as an amp-mlir TOSA training step.

    from amp_mlir.torch import export_train_step
    step = export_train_step(model, torch.nn.functional.cross_entropy, (x, labels),
                             optimizer="sgd", lr=0.1, out_dir="out")
    # amp-train out/train_step.mlir --inputs out --precision=f16 --steps 50
"""

from ._export import ExportedStep, export_train_step
from ._lower import UnsupportedOpError, supported_ops
from ._reference import torch_reference_losses, torch_train_step

__all__ = ["export_train_step", "ExportedStep", "UnsupportedOpError", "supported_ops", "torch_reference_losses",
           "torch_train_step"]
