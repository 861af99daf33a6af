"""``blank_images=true``: a Gated Fusion model whose image input is blanked.

Every image (a true one, a mix, or none at all) is replaced by one all-black image of the vision
model's input size, so the model's scores cannot depend on the image: the adapter declares
``uses_images = False`` and the CoMMuTE tasks report IC and GIC as undefined (Kashani Motlagh
et al., WMT 2024, section 5.4) and TC at 0.5 by construction. The argument is part of the
model's identity, so blanked results never share a cache entry or a leaderboard row with the
model's own.
"""

from __future__ import annotations

from typing import Any

from harness.params import Param
from harness_models.translation.gated_fusion import GatedFusionScorer

BLANK_PARAM = Param(False, "replace every image by one all-black image (the model then ignores images)")


class BlankableGatedFusion(GatedFusionScorer):
    """Gated Fusion with the ``blank_images`` argument."""

    params = {**GatedFusionScorer.params, "blank_images": BLANK_PARAM}

    def __init__(self, name: str, args: dict[str, Any] | None = None, **kwargs: Any):
        super().__init__(name, args, **kwargs)
        if self.args["blank_images"]:
            self.uses_images = False  # type: ignore[misc]  # per instance: the class's scores do depend on the image

    def features(self, images: list[Any]) -> Any:
        """The images' features, or with ``blank_images`` the feature of one black image for each."""
        if not self.args["blank_images"]:
            return super().features(images)
        from PIL import Image

        spec = self.image_spec
        height, width = (spec.resize, spec.resize) if isinstance(spec.resize, int) else spec.resize
        black = Image.new("RGB", (width, height))
        return super().features([black]).expand(len(images), -1)
