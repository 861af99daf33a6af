"""Inference-time rewrites of convolutional networks: batch norms folded into the convolutions before them.

In evaluation mode a batch norm is an affine map per channel, ``gamma * (y - mean) / sqrt(var + eps) + beta``;
applied to a convolution's output ``y = W x + b`` it equals one convolution with weights scaled per
output channel and a new bias, which saves a full pass over the activations.
"""

from __future__ import annotations

from typing import Any


def fold_batch_norms(model: Any) -> int:
    """Fold, in place, every batch norm that a module applies right after its convolution (modules with
    ``convolution`` and ``normalization`` children, as transformers' ResNet and RegNet layers have);
    returns how many were folded."""
    import torch

    folded = 0
    for module in list(model.modules()):
        conv, norm = getattr(module, "convolution", None), getattr(module, "normalization", None)
        if isinstance(conv, torch.nn.Conv2d) and isinstance(norm, torch.nn.BatchNorm2d) and not norm.training:
            module.convolution, module.normalization = fold_batch_norm(conv, norm), torch.nn.Identity()
            folded += 1
    return folded


def fold_batch_norm(conv: Any, norm: Any, padding: tuple[int, int] | None = None) -> Any:
    """A ``Conv2d`` computing ``norm(conv(x))`` (inference statistics) in one convolution, with ``padding``
    instead of the convolution's own if given."""
    import torch

    scale = norm.weight / torch.sqrt(norm.running_var + norm.eps)
    bias = norm.bias - norm.running_mean * scale
    if conv.bias is not None:
        bias = bias + conv.bias * scale
    layer = torch.nn.Conv2d(
        conv.in_channels,
        conv.out_channels,
        conv.kernel_size,
        conv.stride,
        conv.padding if padding is None else padding,
        conv.dilation,
        conv.groups,
        bias=True,
    )
    assert layer.bias is not None  # built with bias=True
    with torch.no_grad():
        layer.weight.copy_(conv.weight * scale.reshape(-1, 1, 1, 1))
        layer.bias.copy_(bias)
    return layer.eval()
