"""``vgamt``: the VGAMT multimodal scorer (CLIP-only variant), see ``vgamt_modules``.

A checkpoint whose MDETR region branch was trained is refused (``strict=false`` scores it without
that branch, recorded in the identity); an untrained branch, which every authors' checkpoint
holds, is dropped (docs/checkpoints.md).

Parts: ``mbart`` (an mBART-50: configuration and tokenizer), ``clip`` (a CLIP model: the vision
tower and projection, ``encode_image`` of ViT-B/32 for the released models) and ``checkpoint``
(all mBART weights plus the image modules and adapters, keys as the authors saved them).

Perplexity as VGAMT computes it: the target is ``[lang_code] x1..xn </s>``, the language code is
the first decoder input, and every subword and ``</s>`` is scored.
"""

from __future__ import annotations

from typing import Any

from harness.adapters.capabilities import ScoreRequest
from harness.errors import HarnessError
from harness_models.translation.base import TargetTokens
from harness_models.translation.layout import load_into
from harness_models.translation.multimodal import MbartClipScorer, mbart_clip_params

PROJECTION_KEY = "model.encoder.proj_full_img.linear.weight"


class VgamtScorer(MbartClipScorer):
    """mBART-50 + CLIP image token + bottleneck adapters (Futeral et al., 2023)."""

    model_type = "vgamt"
    label = "VGAMT"
    params = mbart_clip_params(label, model_type)

    def load(self) -> None:
        """The checkpoint, an mBART with VGAMT's modules (adapters if the checkpoint has them), CLIP."""
        from harness_models.translation import vgamt_modules

        parts = self.require_parts()
        state = self.checkpoint_state(parts, PROJECTION_KEY)
        strict, trained = self.args["strict"], vgamt_modules.region_branch_trained(state)
        if trained and strict:
            keys = vgamt_modules.region_keys(state)
            raise HarnessError(
                f"{parts['checkpoint']}: a VGAMT trained with the MDETR region features ({len(keys)} keys, e.g. "
                f"{', '.join(keys[:5])}); the harness implements the CLIP-only VGAMT, since regional features need "
                "MDETR itself (see docs/checkpoints.md); pass --model-args strict=false to score it without them"
            )
        clip_dim = int(state[PROJECTION_KEY].shape[1])
        mbart = self.new_mbart(parts)
        vgamt_modules.install(mbart, clip_dim, vgamt_modules.adapter_size(state))
        untrained = () if trained else vgamt_modules.MDETR_KEYS
        self.key_mismatch = load_into(mbart, state, self.label, strict, ignored=untrained)
        self.finish_loading(mbart, parts, clip_dim)

    def target_tokens(self, request: ScoreRequest) -> TargetTokens:
        """Decoder inputs ``[lang] x1..xn``, labels ``x1..xn </s>``, all scored."""
        full = self.languages.target_ids(request.target, request.src_lang, request.tgt_lang)
        return TargetTokens(tuple(full[:-1]), tuple(full[1:]), (True,) * (len(full) - 1))

    def encode(self, ids: Any, mask: Any, images: list[Any]) -> dict[str, Any]:
        """Text encoder states computed with each group's image token."""
        from harness_models.translation import vgamt_modules

        hidden = vgamt_modules.encode(self.model, ids, mask, self.features(images))
        return {"hidden": hidden, "mask": mask}
