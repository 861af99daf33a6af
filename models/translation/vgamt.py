"""``vgamt``: the VGAMT multimodal scorer (CLIP-only variant), see ``vgamt_modules``.

Parts: ``mbart`` (an mBART-50: configuration and tokenizer), ``clip`` (a CLIP model: the vision
tower and projection, ``encode_image`` of ViT-B/32 for the released models) and ``checkpoint``
(all mBART weights plus the image modules and adapters, keys as the authors saved them).

Perplexity as VGAMT computes it: the target is ``[lang_code] x1..xn </s>``, the language code is
the first decoder input, and every subword and ``</s>`` is scored.
"""

from __future__ import annotations

from typing import Any

from harness.capabilities import ScoreRequest
from harness.errors import HarnessError
from harness.params import Param
from harness_models.translation.base import TargetTokens, torch_dtype
from harness_models.translation.layout import load_into, load_state_dict
from harness_models.translation.multimodal import LANGUAGE_PARAMS, MultimodalScorer, check_dim

PROJECTION_KEY = "model.encoder.proj_full_img.linear.weight"


class VgamtScorer(MultimodalScorer):
    """mBART-50 + CLIP image token + bottleneck adapters (Futeral et al., 2023)."""

    model_type = "vgamt"
    part_names = ("mbart", "clip", "checkpoint")
    params = {
        "pretrained": Param(None, "a VGAMT folder (config.json with model_type vgamt)", str),
        "mbart": Param(None, "Hub id or folder of the mBART-50 (configuration and tokenizer)", str),
        "clip": Param(None, "Hub id or folder of the CLIP model whose image embeddings VGAMT uses", str),
        "checkpoint": Param(None, "the VGAMT state dict (.safetensors or the authors' .pth)", str),
        **LANGUAGE_PARAMS,
    }

    def load(self) -> None:
        """Tokenizer and configuration of the mBART, the checkpoint, then the CLIP tower."""
        from transformers import AutoConfig, AutoTokenizer, CLIPVisionModelWithProjection, MBartForConditionalGeneration

        from harness_models.translation import vgamt_modules

        parts = self.require_parts()
        state = load_state_dict(parts["checkpoint"])
        if PROJECTION_KEY not in state:
            raise HarnessError(f"{parts['checkpoint']}: not a VGAMT checkpoint (no {PROJECTION_KEY})")
        clip_dim = int(state[PROJECTION_KEY].shape[1])
        self.tokenizer = AutoTokenizer.from_pretrained(parts["mbart"])
        mbart = MBartForConditionalGeneration(AutoConfig.from_pretrained(parts["mbart"]))
        vgamt_modules.install(mbart, clip_dim, vgamt_modules.adapter_size(state))
        load_into(mbart, state, "VGAMT", ignored=vgamt_modules.MDETR_KEYS)
        self.model = mbart.to(self.device, torch_dtype(self.args["dtype"])).eval()
        self.load_vision(parts["clip"], CLIPVisionModelWithProjection, clip_dim)
        check_dim(self.vision.config.projection_dim, clip_dim, parts["clip"], "VGAMT")
        self.setup_text(self.tokenizer, self.model)

    def target_tokens(self, request: ScoreRequest) -> TargetTokens:
        """Decoder inputs ``[lang] x1..xn``, labels ``x1..xn </s>``, all scored."""
        full = self.languages.target_ids(request.target, request.src_lang, request.tgt_lang)
        return TargetTokens(tuple(full[:-1]), tuple(full[1:]), (True,) * (len(full) - 1))

    def vision_features(self, pixels: Any) -> Any:
        """CLIP image embeddings (projected, not normalised)."""
        return self.vision(pixel_values=pixels.to(self.device, self.vision.dtype)).image_embeds

    def encode(self, ids: Any, mask: Any, images: list[Any]) -> dict[str, Any]:
        """Text encoder states computed with each group's image token."""
        from harness_models.translation import vgamt_modules

        hidden = vgamt_modules.encode(self.model, ids, mask, self.features(images))
        return {"hidden": hidden, "mask": mask}
