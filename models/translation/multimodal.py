"""What the multimodal scorers share: their parts (a model folder or separate sources) and images.

A multimodal model is assembled from parts named in its folder's ``config.json`` (see
``layout``) or, without a folder, by adapter arguments of the same names. Images reach the
vision model through ``ImageSpec`` (PIL or ``MixedImage``) or arrive as precomputed features.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from harness.errors import HarnessError
from harness.params import Param
from harness_models.translation.base import DTYPE_PARAM
from harness_models.translation.images import ImageSpec, image_features
from harness_models.translation.layout import read_layout
from harness_models.translation.seq2seq import Seq2SeqScorer

LANGUAGE_PARAMS = {
    "src_code": Param(None, "the model's token for the source language, if not derived from it", str),
    "tgt_code": Param(None, "the model's token for the target language, if not derived from it", str),
    "dtype": DTYPE_PARAM,
}


class MultimodalScorer(Seq2SeqScorer):
    """A seq2seq scorer whose encoder or decoder also sees an image."""

    uses_images = True
    model_type: ClassVar[str] = ""
    part_names: ClassVar[tuple[str, ...]] = ()
    optional_parts: ClassVar[tuple[str, ...]] = ()

    def parts(self) -> dict[str, Any]:
        """The parts: from the folder's config.json when a folder is given, else from the arguments."""
        if self.args.get("pretrained"):
            layout = read_layout(self.args["pretrained"], self.model_type)
            return {name: layout.get(name) for name in self.part_names}
        return {name: self.args.get(name) for name in self.part_names}

    def sources(self) -> dict[str, str | None]:
        """The folder and the parts outside it (Hub ids), or the parts."""
        folder = self.args.get("pretrained")
        parts = {name: value for name, value in self.parts().items() if isinstance(value, str)}
        if not folder:
            return parts
        root = Path(folder).expanduser().resolve()
        outside = {name: value for name, value in parts.items()
                   if not Path(value).expanduser().resolve().is_relative_to(root)}
        return {"pretrained": folder, **outside}

    def require_parts(self) -> dict[str, Any]:
        """All parts, or an error naming the missing ones."""
        parts = self.parts()
        missing = [name for name in self.part_names if not parts.get(name) and name not in self.optional_parts]
        if missing:
            raise HarnessError(
                f"model {self.name!r} needs {', '.join(missing)}: give a {self.model_type} folder or "
                f"--model-args {','.join(f'{m}=...' for m in missing)} (see docs/commute.md)"
            )
        return parts

    def load_vision(self, source: str, model_class: Any, expected_dim: int) -> None:
        """The vision model, its preprocessing, and the feature size the fusion expects."""
        self.vision = model_class.from_pretrained(source, dtype=self.model.dtype).to(self.device).eval()
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
