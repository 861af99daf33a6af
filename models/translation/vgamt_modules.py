"""The VGAMT architecture (Futeral et al., ACL 2023), CLIP-only variant, on a Hugging Face mBART.

The authors' ``VGAMT`` subclasses ``MBartForConditionalGeneration``; their extra modules live
inside ``model.encoder`` and in every layer, so installing ours at the same attribute paths
gives state-dict keys identical to their checkpoints:

- ``model.encoder.proj_full_img.linear`` (CLIP dim -> d_model, then ReLU),
  ``model.encoder.layer_norm_full_img``, ``model.encoder.img_embedding`` (``Linear(1, d)``,
  its weight is the image-type embedding added to the image token);
- bottleneck adapters from adapter-transformers (``AdapterConfig(mh_adapter=True,
  output_adapter=True, reduction_factor=8, non_linearity="relu")``) in every encoder and decoder
  layer: ``layers.N.attention_adapters.adapters.bottleneck_adapter.adapter_{down.0,up}`` after
  self-attention and ``layers.N.output_adapters...`` after the feed-forward block. With that
  configuration on a pre-norm mBART an adapter maps a sub-layer output h to
  ``h + up(relu(down(h)))`` before the residual addition, which forward hooks reproduce.

Encoding (their ``MultimodalTransformerEncoder`` with ``--encoder_attn_mask_text_only``): the
text embeddings (scaled, plus positions, ``layernorm_embedding``) get the image token prepended,
the encoder layers attend over both, and the decoder cross-attends to the text positions only.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import torch
from torch import nn

ADAPTER_NAME = "bottleneck_adapter"
# The MDETR region branch: the authors' encoder always builds it, so every checkpoint holds its keys;
# only a model trained with ``--features_type mdetr`` (or clip+mdetr) has used, hence trained, it.
MDETR_KEYS = ("model.encoder.proj_reg_img.", "model.encoder.region_encoder.", "model.encoder.layer_norm_reg_img.")
REGION_NORM = "model.encoder.layer_norm_reg_img."


class ImgProjector(nn.Module):
    """CLIP image embedding -> d_model, then ReLU."""

    def __init__(self, in_dim: int, d_model: int):
        super().__init__()
        self.linear = nn.Linear(in_dim, d_model)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(features))


class Bottleneck(nn.Module):
    """A sequential bottleneck adapter: h + up(relu(down(h)))."""

    def __init__(self, d_model: int, size: int):
        super().__init__()
        self.adapter_down = nn.Sequential(nn.Linear(d_model, size), nn.ReLU())
        self.adapter_up = nn.Linear(size, d_model)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return hidden + self.adapter_up(self.adapter_down(hidden))


class AdapterSlot(nn.Module):
    """adapter-transformers' per-location container (``adapters.<name>``)."""

    def __init__(self, d_model: int, size: int):
        super().__init__()
        self.adapters = nn.ModuleDict({ADAPTER_NAME: Bottleneck(d_model, size)})

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.adapters[ADAPTER_NAME](hidden)


def region_keys(state: dict[str, Any]) -> list[str]:
    """The checkpoint's keys of the MDETR region branch (``proj_reg_img``, ``region_encoder``, ...)."""
    return sorted(key for key in state if key.startswith(MDETR_KEYS))


def region_branch_trained(state: dict[str, Any]) -> bool:
    """Whether the region branch was trained (an MDETR VGAMT) rather than left at its initialisation.

    A CLIP-only run never feeds the branch, so it gets no gradient and its LayerNorm keeps the
    initial weight 1 and bias 0 exactly; any other value (or a branch without that LayerNorm) means
    it was used. A checkpoint without the branch has not trained it.
    """
    keys = region_keys(state)
    if not keys:
        return False
    weight, bias = state.get(REGION_NORM + "weight"), state.get(REGION_NORM + "bias")
    if weight is None or bias is None:
        return True
    return not (bool(torch.all(weight == 1)) and bool(torch.all(bias == 0)))


def adapter_size(state: dict[str, Any]) -> int | None:
    """The bottleneck width of the adapters in a checkpoint, or None when it has none."""
    key = f"model.encoder.layers.0.attention_adapters.adapters.{ADAPTER_NAME}.adapter_down.0.weight"
    return int(state[key].shape[0]) if key in state else None


def install(mbart: Any, clip_dim: int, bottleneck: int | None) -> None:
    """Add VGAMT's image modules and (when ``bottleneck``) its adapters to an mBART model."""
    d_model = mbart.config.d_model
    encoder = mbart.model.encoder
    encoder.proj_full_img = ImgProjector(clip_dim, d_model)
    encoder.layer_norm_full_img = nn.LayerNorm(d_model)
    encoder.img_embedding = nn.Linear(1, d_model)
    if bottleneck is None:
        return
    for layer in [*encoder.layers, *mbart.model.decoder.layers]:
        layer.attention_adapters = AdapterSlot(d_model, bottleneck)
        layer.output_adapters = AdapterSlot(d_model, bottleneck)
        layer.self_attn.register_forward_hook(partial(_after_attention, layer.attention_adapters))
        layer.fc2.register_forward_hook(partial(_after_feed_forward, layer.output_adapters))


def _after_attention(slot: AdapterSlot, module: nn.Module, inputs: Any, output: tuple[Any, ...]) -> tuple[Any, ...]:
    return (slot(output[0]), *output[1:])


def _after_feed_forward(slot: AdapterSlot, module: nn.Module, inputs: Any, output: torch.Tensor) -> torch.Tensor:
    return slot(output)


def encode(mbart: Any, ids: torch.Tensor, mask: torch.Tensor, image_features: torch.Tensor) -> torch.Tensor:
    """Encoder states of the text positions, computed with the image token prepended."""
    from transformers.masking_utils import create_bidirectional_mask

    encoder = mbart.model.encoder
    text = encoder.embed_tokens(ids) + encoder.embed_positions(ids)
    text = encoder.layernorm_embedding(text)
    image = encoder.layer_norm_full_img(encoder.proj_full_img(image_features.to(text.dtype)))
    image = image + encoder.img_embedding.weight.t()
    hidden = torch.cat([image.unsqueeze(1), text], dim=1)
    full_mask = torch.cat([torch.ones_like(mask[:, :1]), mask], dim=1)
    attention = create_bidirectional_mask(config=encoder.config, inputs_embeds=hidden, attention_mask=full_mask)
    for layer in encoder.layers:
        hidden = layer(hidden, attention)
    return encoder.layer_norm(hidden)[:, 1:]
