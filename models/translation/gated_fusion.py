"""``gated-fusion``: the Gated Fusion MMT model of Wu et al. (ACL 2021).

A text transformer encodes the source into H (n x d). The image's pooled ResNet-50 feature v
(2048-d) is projected, p = W_v v + b_v, and mixed into every source position through a gate:

    Lambda = sigmoid(W_g [H ; p] + b_g),    H' = H + Lambda * p

and the decoder cross-attends to H'. ``gate`` replaces Lambda by a fixed value (0.25, 0.5, 0.75
in the analyses of the paper) to measure how much the image path matters.

Parts: ``text_model`` (a Hugging Face seq2seq folder or Hub id: the text transformer, its
tokenizer and decoder), ``image_model`` (a vision model with a pooled output, e.g.
``microsoft/resnet-50``) and ``fusion`` (the four fusion tensors, named as in the authors'
fairseq code: ``encoder.dense.{weight,bias}`` and ``encoder.gate_dense.{weight,bias}``).
Tokens are scored exactly as by the text-only ``seq2seq`` adapter.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from harness.errors import HarnessError
from harness.params import Param
from harness_models.loading import STRICT_PARAM, from_pretrained
from harness_models.translation.base import torch_dtype
from harness_models.translation.layout import load_into, load_state_dict
from harness_models.translation.multimodal import LANGUAGE_PARAMS, MultimodalScorer, check_dim


class GateFusion(nn.Module):
    """H' = H + gate * (W_v v + b_v), with a learned (or fixed) gate."""

    def __init__(self, d_model: int, image_dim: int):
        super().__init__()
        self.dense = nn.Linear(image_dim, d_model)
        self.gate_dense = nn.Linear(2 * d_model, d_model)

    def forward(self, text: torch.Tensor, image: torch.Tensor, fixed_gate: float | None = None) -> torch.Tensor:
        projected = self.dense(image.to(text.dtype)).unsqueeze(1).expand_as(text)
        if fixed_gate is None:
            gate = torch.sigmoid(self.gate_dense(torch.cat([text, projected], dim=-1)))
            return text + gate * projected
        return text + fixed_gate * projected


class FusionWeights(nn.Module):
    """The fusion module under the authors' key prefix ``encoder.``."""

    def __init__(self, fusion: GateFusion):
        super().__init__()
        self.encoder = fusion


def parse_gate(value: str) -> float | None:
    """``learned`` -> None; a number in [0, 1] -> that fixed gate."""
    if value == "learned":
        return None
    try:
        gate = float(value)
    except ValueError:
        gate = -1.0
    if not 0.0 <= gate <= 1.0:
        raise HarnessError(f"gate must be 'learned' or a number between 0 and 1, got {value!r}")
    return gate


class GatedFusionScorer(MultimodalScorer):
    """A seq2seq transformer whose encoder output is gated with a pooled image feature."""

    model_type = "gated_fusion"
    part_names = ("text_model", "image_model", "fusion")
    params = {
        "pretrained": Param(None, "a Gated Fusion folder (config.json with model_type gated_fusion)", str),
        "text_model": Param(None, "Hub id or folder of the text seq2seq model", str),
        "image_model": Param(None, "Hub id or folder of the vision model with a pooled output (ResNet-50)", str),
        "fusion": Param(None, "the fusion weights (.safetensors or .pth)", str),
        "strict": STRICT_PARAM,
        "gate": Param("learned", "the gate: learned, or a fixed value in [0, 1] such as 0.25, 0.5, 0.75", str),
        **LANGUAGE_PARAMS,
    }

    def __init__(self, name: str, args: dict[str, Any] | None = None, **kwargs: Any):
        super().__init__(name, args, **kwargs)
        self.fixed_gate = parse_gate(self.args["gate"])

    def load(self) -> None:
        """The text model, the fusion weights, then the vision model."""
        from transformers import AutoModel, AutoModelForSeq2SeqLM, AutoTokenizer

        parts = self.require_parts()
        state = load_state_dict(parts["fusion"])
        if "encoder.dense.weight" not in state:
            raise HarnessError(f"{parts['fusion']}: not Gated Fusion weights (no encoder.dense.weight)")
        dtype = torch_dtype(self.args["dtype"])
        self.tokenizer = AutoTokenizer.from_pretrained(parts["text_model"])
        strict = self.args["strict"]
        model, text_keys = from_pretrained(
            AutoModelForSeq2SeqLM.from_pretrained, parts["text_model"], str(parts["text_model"]), strict, dtype=dtype
        )
        self.model = model.to(self.device).eval()
        d_model, image_dim = state["encoder.dense.weight"].shape
        self.fusion = GateFusion(int(d_model), int(image_dim))
        self.key_mismatch = text_keys + load_into(FusionWeights(self.fusion), state, "Gated Fusion", strict)
        self.fusion = self.fusion.to(self.device, dtype).eval()
        self.load_vision(parts["image_model"], AutoModel, int(image_dim))
        check_dim(self._pooled_size(), int(image_dim), parts["image_model"], "Gated Fusion")
        self.setup_text(self.tokenizer, self.model)

    def _pooled_size(self) -> int:
        sizes = getattr(self.vision.config, "hidden_sizes", None)
        return int(sizes[-1]) if sizes else int(self.vision.config.hidden_size)

    def vision_features(self, pixels: Any) -> Any:
        """The vision model's pooled output, flattened (ResNet: global average pool, 2048-d)."""
        return self.vision(pixel_values=pixels.to(self.device, self.vision.dtype)).pooler_output.flatten(1)

    def encode(self, ids: Any, mask: Any, images: list[Any]) -> dict[str, Any]:
        """Text encoder states with the gated image projection added."""
        context = super().encode(ids, mask, images)
        context["hidden"] = self.fusion(context["hidden"], self.features(images), self.fixed_gate)
        return context
