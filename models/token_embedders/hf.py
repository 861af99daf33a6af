"""Any Hugging Face encoder as a token embedder: the vectors of layer L, special tokens removed.

Layer indexing follows ``output_hidden_states``: layer 0 is the embedding output
(``hidden_states[0]``) and layer L the output of the L-th transformer layer
(``hidden_states[L]``); ``mbert-l9`` is ``hidden_states[9]`` of bert-base-multilingual-cased.
The model is built with ``num_hidden_layers=L``, so the layers above L are neither loaded nor
computed, and layer L is the truncated model's ``last_hidden_state`` (the same tensor as
``hidden_states[L]`` for encoders without a final norm after the last layer: BERT, XLM-R,
DistilBERT, ...; keeping every layer's states would cost memory for nothing). Texts are tokenized as the tokenizer does (subword units), truncated at the
model's maximum length and batched by token count (nothing is padded); the units the tokenizer marks as special
([CLS], [SEP], <s>, </s>, ...) are dropped. ``backend`` runs the truncated encoder in ONNX Runtime (the
default where it is installed, on a CPU in float32; the PyTorch model is then loaded only to export it)
or PyTorch (``all_layers`` always runs PyTorch).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.adapters.capabilities import Capability, TokenEmbeddings
from harness.adapters.model import ModelAdapter, ModelIdentity, source_revision
from harness.errors import HarnessError
from harness.params import Param
from harness_models.encoders.batching import length_sorted_batches, map_batches
from harness_models.encoders.onnx_encoder import (
    BACKEND_PARAM,
    backend_identity,
    check_backend,
    export_folder,
    onnx_hidden_states,
    onnx_workers,
    resolve_backend,
)
from harness_models.encoders.precision import DTYPE_PARAM, checked_dtype, torch_dtype
from harness_models.loading import STRICT_PARAM, KeyMismatch, beyond_layer, from_pretrained, identity_args


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """Silence transformers' load report and progress bars (a truncated model leaves weights unused)."""
    from transformers.utils import logging

    verbosity, bars = logging.get_verbosity(), logging.is_progress_bar_enabled()
    logging.set_verbosity_error()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        logging.set_verbosity(verbosity)
        if bars:
            logging.enable_progress_bar()


class HFTokenEmbedder(ModelAdapter):
    """Layer-L contextual token vectors of a Hugging Face encoder (BERT, XLM-R, DistilBERT, ...)."""

    capabilities = frozenset({Capability.TOKEN_EMBEDDER})
    params = {
        "pretrained": Param(None, "Hub id or local folder of the encoder", str),
        "revision": Param(None, "Hub revision (branch, tag or commit)", str),
        "layer": Param(9, "hidden_states index: 0 is the embedding output, L the L-th layer's output", min=0),
        "strict": STRICT_PARAM,
        "dtype": DTYPE_PARAM,
        "backend": BACKEND_PARAM,
    }

    def __init__(self, name: str, args: dict[str, Any] | None = None, **kwargs: Any):
        super().__init__(name, args, **kwargs)
        if not self.args["pretrained"]:
            raise HarnessError(f"model {name!r}: give a Hub id or folder (pretrained=...)")
        self._revision = source_revision(self.args["pretrained"], self.args["revision"])
        self.args["backend"] = resolve_backend(self.args, self.device)  # the identity names the one that runs
        self.hidden_states: Any = None
        self._model: Any = None
        self.key_mismatch = KeyMismatch()  # with strict=true a mismatch is an error, never recorded

    def identity(self) -> ModelIdentity:
        """Source, resolved revision and layer (in the arguments)."""
        check_backend(self.name, self.args, self.device)
        return ModelIdentity(
            self.name,
            self.adapter_name,
            self.args["pretrained"],
            self._revision,
            backend_identity(identity_args(self)),
            checked_dtype(self.name, self.args["dtype"], self.device),
        )

    def load(self) -> None:
        """Load the tokenizer, and the encoder truncated to ``layer`` layers unless its ONNX export exists."""
        from transformers import AutoConfig, AutoTokenizer

        source, revision, layer = self.args["pretrained"], self.args["revision"], self.args["layer"]
        with self._loading():
            config = AutoConfig.from_pretrained(source, revision=revision)
            depth = getattr(config, "num_hidden_layers", None)
            if depth is None:
                raise HarnessError(f"model {self.name!r}: {source} has no num_hidden_layers in its config")
            if layer > depth:
                raise HarnessError(f"model {self.name!r}: layer {layer} does not exist, {source} has {depth} layers")
            self.tokenizer = AutoTokenizer.from_pretrained(source, revision=revision)
        self.dim = int(config.hidden_size)
        limits = [self.tokenizer.model_max_length, getattr(config, "max_position_embeddings", None)]
        self.max_length = min(int(v) for v in limits if v is not None)
        check_backend(self.name, self.args, self.device)
        if self.args["backend"] != "onnxruntime" or not self.args["strict"]:
            self._torch_model()  # PyTorch runs it, or its key mismatches enter the identity
        if self.args["backend"] == "onnxruntime":
            self.hidden_states = onnx_hidden_states(self._torch_model, "token-embedder", self._export())

    def _export(self) -> Path:
        """The folder of the ONNX export (the encoder up to ``layer``), named by the source's content revision."""
        return export_folder(
            "token-embedder", self.args["pretrained"], self._revision, self.args["layer"], self.args["strict"]
        )

    def artefacts(self, capability: Capability) -> list[Path]:
        """The ONNX export, when ONNX Runtime runs the model."""
        return [self._export()] if self.args["backend"] == "onnxruntime" else []

    @contextlib.contextmanager
    def _loading(self) -> Iterator[None]:
        """Quiet transformers; a source that cannot be read is a ``HarnessError``."""
        try:
            with quiet_transformers():
                yield
        except OSError as exc:
            raise HarnessError(f"model {self.name!r}: cannot load {self.args['pretrained']!r}: {exc}") from None

    @property
    def model(self) -> Any:
        """The PyTorch encoder truncated to ``layer`` layers, loaded on first use."""
        return self._torch_model()

    def _torch_model(self) -> Any:
        if self._model is None:
            from transformers import AutoModel

            source, layer = self.args["pretrained"], self.args["layer"]
            with self._loading():
                model, self.key_mismatch = from_pretrained(  # the layers above `layer` are dropped on purpose
                    AutoModel.from_pretrained,
                    source,
                    source,
                    self.args["strict"],
                    unused=beyond_layer(layer),
                    revision=self.args["revision"],
                    num_hidden_layers=layer,
                )
            dtype = torch_dtype(checked_dtype(self.name, self.args["dtype"], self.device))
            self._model = model.to(self.device, dtype).eval()
        return self._model

    def embed_tokens(
        self, texts: Sequence[str], lang: str | None = None, all_layers: bool = False
    ) -> list[TokenEmbeddings]:
        """Tokens and layer vectors of each text, in input order (``lang`` is not used).

        With ``all_layers`` the vectors of every layer 0..L of one forward pass, shape (L + 1, n_tokens, dim).
        Batches hold texts of one token count (``length_sorted_batches``): nothing is padded, so a text's
        vectors do not depend on the batch size or on the texts beside it. Texts without tokens (not even
        special ones) are not run. ONNX Runtime runs ``onnx_workers()`` batches at once.
        """
        self.ensure_loaded()
        encoded = self.tokenizer(
            list(texts), truncation=True, max_length=self.max_length, return_special_tokens_mask=True
        )
        ids, special = encoded["input_ids"], encoded["special_tokens_mask"]
        results: list[TokenEmbeddings] = [TokenEmbeddings([], np.zeros((0, self.dim), np.float32))] * len(texts)
        batches = [b for b in length_sorted_batches([len(i) for i in ids], self.batch_size) if ids[b[0]]]
        onnx = self.hidden_states is not None and not all_layers
        states = map_batches(
            batches,
            lambda batch: self._states(np.array([ids[i] for i in batch], dtype=np.int64), all_layers),
            onnx_workers() if onnx else 1,
        )
        for batch, vectors in zip(batches, states):
            for row, i in enumerate(batch):
                keep = np.flatnonzero(np.logical_not(special[i]))
                tokens = self.tokenizer.convert_ids_to_tokens([ids[i][p] for p in keep])
                results[i] = TokenEmbeddings(list(tokens), vectors[:, row, keep] if all_layers else vectors[row, keep])
        return results

    def _states(self, input_ids: np.ndarray, all_layers: bool) -> np.ndarray:
        """Layer L's vectors (batch, length, dim), or every layer's (L + 1, batch, length, dim), float32."""
        import torch

        mask = np.ones_like(input_ids)
        if self.hidden_states is not None and not all_layers:
            return self.hidden_states(input_ids, mask)
        output = self.model(
            input_ids=torch.from_numpy(input_ids).to(self.device),
            attention_mask=torch.from_numpy(mask).to(self.device),
            output_hidden_states=all_layers,
        )
        # a model of 0 layers returns no hidden states: its only layer, the embeddings, is the last hidden state
        layers = output.hidden_states if all_layers and output.hidden_states else (output.last_hidden_state,)
        states = torch.stack(layers) if all_layers else output.last_hidden_state
        return states.float().cpu().numpy()
