"""What the multimodal scorers share: their parts (a model folder or separate sources) and images.

A multimodal model is assembled from parts named in its folder's ``config.json`` (see
``layout``) or, without a folder, by adapter arguments of the same names. Images reach the
vision model through ``ImageSpec`` (PIL or ``MixedImage``) or arrive as precomputed features.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from harness.errors import HarnessError
from harness.params import Param
from harness_models.loading import STRICT_PARAM, from_pretrained
from harness_models.translation.base import torch_dtype
from harness_models.translation.images import ImageSpec, image_features
from harness_models.translation.layout import load_state_dict, read_layout
from harness_models.translation.seq2seq import LANGUAGE_PARAMS, Seq2SeqScorer


class MultimodalScorer(Seq2SeqScorer):
    """A seq2seq scorer whose encoder or decoder also sees an image."""

    uses_images = True
    model_type: ClassVar[str] = ""
    part_names: ClassVar[tuple[str, ...]] = ()

    def parts(self) -> dict[str, Any]:
        """The parts: from the folder's config.json when a folder is given, else from the arguments."""
        if self.args.get("pretrained"):
            layout = read_layout(self.args["pretrained"], self.model_type)
            return {name: layout.get(name) for name in self.part_names}
        return {name: self.args.get(name) for name in self.part_names}

    def sources(self) -> Mapping[str, str | None]:
        """The folder and the parts outside it (Hub ids), or the parts."""
        folder = self.args.get("pretrained")
        parts = {name: value for name, value in self.parts().items() if isinstance(value, str)}
        if not folder:
            return parts
        root = Path(folder).expanduser().resolve()
        outside = {
            name: value for name, value in parts.items() if not Path(value).expanduser().resolve().is_relative_to(root)
        }
        return {"pretrained": folder, **outside}

    def require_parts(self) -> dict[str, Any]:
        """All parts, or an error naming the missing ones."""
        parts = self.parts()
        missing = [name for name in self.part_names if not parts.get(name)]
        if missing:
            raise HarnessError(
                f"model {self.name!r} needs {', '.join(missing)}: give a {self.model_type} folder or "
                f"--model-args {','.join(f'{m}=...' for m in missing)} (see docs/commute.md)"
            )
        return parts

    def load_vision(self, source: str, model_class: Any, expected_dim: int) -> None:
        """The vision model, its preprocessing, and the feature size the fusion expects."""
        vision, found = from_pretrained(
            model_class.from_pretrained, source, str(source), self.args["strict"], dtype=self.model.dtype
        )
        self.vision, self.key_mismatch = vision.to(self.device).eval(), self.key_mismatch + found
        self.image_spec = ImageSpec.from_pretrained(source)
        self.image_dim = expected_dim

    def vision_features(self, pixels: Any) -> Any:
        """Feature vectors (N, image_dim) of a pixel batch."""
        raise NotImplementedError

    def features(self, images: list[Any]) -> Any:
        """One feature vector per image (pixels through the vision model, or precomputed), on the device."""
        what = type(self).__name__.removesuffix("Scorer")
        return image_features(images, self.image_spec, self.vision_features, self.image_dim, what).to(self.device)


def check_dim(found: int, expected: int, source: str, what: str) -> None:
    """Fail when a vision model's feature size is not the one the fusion weights expect."""
    if found != expected:
        raise HarnessError(f"{source!r} gives {found}-d image features, the {what} weights expect {expected}")


def mbart_clip_params(label: str, model_type: str) -> dict[str, Param]:
    """The arguments of an mBART-50 + CLIP model: a folder, or its three parts."""
    return {
        "pretrained": Param(None, f"a {label} folder (config.json with model_type {model_type})", str),
        "mbart": Param(None, "Hub id or folder of the mBART-50 (configuration and tokenizer)", str),
        "clip": Param(None, "Hub id or folder of the CLIP model whose image embeddings it uses", str),
        "checkpoint": Param(None, f"the {label} state dict (.safetensors or the authors' .pth)", str),
        "strict": STRICT_PARAM,
        **LANGUAGE_PARAMS,
    }


class MbartClipScorer(MultimodalScorer):
    """An mBART-50 translation model seeing CLIP image embeddings; the checkpoint holds all its weights."""

    part_names = ("mbart", "clip", "checkpoint")
    label: ClassVar[str] = ""

    def checkpoint_state(self, parts: dict[str, Any], required_key: str) -> dict[str, Any]:
        """The checkpoint's tensors, or an error when ``required_key`` shows it is not this model's."""
        state = load_state_dict(parts["checkpoint"])
        if required_key not in state:
            raise HarnessError(f"{parts['checkpoint']}: not a {self.label} checkpoint (no {required_key})")
        return state

    def new_mbart(self, parts: dict[str, Any]) -> Any:
        """The tokenizer, and an mBART of the configured shape (its weights come from the checkpoint)."""
        from transformers import AutoConfig, AutoTokenizer, MBartForConditionalGeneration

        self.tokenizer = AutoTokenizer.from_pretrained(parts["mbart"])
        return MBartForConditionalGeneration(AutoConfig.from_pretrained(parts["mbart"]))

    def finish_loading(self, mbart: Any, parts: dict[str, Any], clip_dim: int) -> None:
        """Move the loaded mBART to the device and dtype, load CLIP, check its embedding size."""
        from transformers import CLIPVisionModelWithProjection

        self.model = mbart.to(self.device, torch_dtype(self.args["dtype"])).eval()
        self.load_vision(parts["clip"], CLIPVisionModelWithProjection, clip_dim)
        check_dim(self.vision.config.projection_dim, clip_dim, parts["clip"], self.label)
        self.setup_text(self.tokenizer, self.model)

    def vision_features(self, pixels: Any) -> Any:
        """CLIP image embeddings (projected, not normalised: ``encode_image`` / ``get_image_features``)."""
        return self.vision(pixel_values=pixels.to(self.device, self.vision.dtype)).image_embeds
