"""``cliptrans``: CLIP-Trans (Gupta et al., ICCV 2023), mBART-50 with a visual prefix.

A mapping network turns the CLIP image embedding (512-d for ViT-B/32) into ``prefix_length``
vectors of mBART's width, placed in the decoder input after the start token, as in the authors'
training: decoder inputs ``</s> P1..Pk [lang] x1..xn``. The prefix positions are not scored;
every subword and ``</s>`` is, the forced language code is not (as for the ``seq2seq`` adapter).

Parts: ``mbart`` (configuration and tokenizer), ``clip`` (the CLIP model) and ``checkpoint``
(the CLIPTrans state dict as the authors' module names it: ``adapter.hidden.*`` for the mapping
network, MLP ``Linear + PReLU`` or hidden MLP ``Linear + ReLU + Linear + PReLU``, and
``mbart.*`` for the translation model; ``clip.*`` entries are ignored).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from harness_models.translation.base import torch_dtype
from harness_models.translation.layout import load_into
from harness_models.translation.multimodal import MbartClipScorer, mbart_clip_params


class MappingNetwork(nn.Module):
    """CLIP embedding -> ``prefix_length`` x ``d_model`` (the authors' MLPAdapter / HiddenMLPAdapter)."""

    def __init__(self, clip_dim: int, d_model: int, prefix_length: int, hidden: bool):
        super().__init__()
        layers: list[nn.Module] = [nn.Linear(clip_dim, d_model), nn.ReLU()] if hidden else []
        layers += [nn.Linear(d_model if hidden else clip_dim, prefix_length * d_model), nn.PReLU()]
        self.hidden = nn.Sequential(*layers)
        self.prefix_length, self.d_model = prefix_length, d_model

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.hidden(features).view(-1, self.prefix_length, self.d_model)


class ClipTransCheckpoint(nn.Module):
    """The authors' module layout: ``adapter`` and ``mbart``."""

    def __init__(self, adapter: MappingNetwork, mbart: nn.Module):
        super().__init__()
        self.adapter = adapter
        self.mbart = mbart


class ClipTransScorer(MbartClipScorer):
    """mBART-50 with a CLIP visual prefix in the decoder."""

    model_type = "cliptrans"
    label = "CLIP-Trans"
    params = mbart_clip_params(label, model_type)

    def load(self) -> None:
        """The checkpoint, the mBART and the mapping network it holds, then CLIP."""
        parts = self.require_parts()
        state = self.checkpoint_state(parts, "adapter.hidden.0.weight")
        hidden = "adapter.hidden.2.weight" in state
        mbart = self.new_mbart(parts)
        d_model, clip_dim = mbart.config.d_model, int(state["adapter.hidden.0.weight"].shape[1])
        prefix_length = int(state[f"adapter.hidden.{2 if hidden else 0}.weight"].shape[0]) // d_model
        mapping = MappingNetwork(clip_dim, d_model, prefix_length, hidden)
        self.key_mismatch = load_into(
            ClipTransCheckpoint(mapping, mbart), state, self.label, self.args["strict"], ignored=("clip.",)
        )
        self.mapping = mapping.to(self.device, torch_dtype(self.args["dtype"])).eval()
        self.finish_loading(mbart, parts, clip_dim)

    def encode(self, ids: Any, mask: Any, images: list[Any]) -> dict[str, Any]:
        """Text encoder states plus each group's visual prefix."""
        context = super().encode(ids, mask, images)
        context["prefix"] = self.mapping(self.features(images).to(self.model.dtype))
        return context

    def decode(self, context: dict[str, Any], decoder_ids: Any, decoder_mask: Any) -> Any:
        """Logits with the prefix after the first decoder input, realigned to the decoder ids."""
        from transformers.modeling_outputs import BaseModelOutput

        prefix = context["prefix"]
        embedded = self.model.model.decoder.embed_tokens(decoder_ids)
        inputs = torch.cat([embedded[:, :1], prefix, embedded[:, 1:]], dim=1)
        ones = torch.ones(prefix.shape[:2], dtype=decoder_mask.dtype, device=decoder_mask.device)
        mask = torch.cat([decoder_mask[:, :1], ones, decoder_mask[:, 1:]], dim=1)
        logits = self.model(
            encoder_outputs=BaseModelOutput(last_hidden_state=context["hidden"]),
            attention_mask=context["mask"],
            decoder_inputs_embeds=inputs,
            decoder_attention_mask=mask,
            use_cache=False,
        ).logits
        return torch.cat([logits[:, :1], logits[:, 1 + prefix.shape[1] :]], dim=1)
