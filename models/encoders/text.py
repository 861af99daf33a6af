"""``hf-text-encoder``: any Hugging Face ``AutoModel`` + tokenizer as a sentence encoder.

Texts are tokenized once (truncated to ``max_length``), sorted by token count and encoded in
batches of ``--batch-size`` under ``torch.inference_mode()``; vectors come back in input
order. Pooling of the last hidden states:

- ``cls``: the first token's vector;
- ``mean``: the mean over real tokens (padding masked out);
- ``max``: the per-dimension maximum over real tokens;
- ``pooler``: the model's own pooler output (BERT: tanh(W h_cls + b)).

A sentence-transformers folder or Hub repository is read through its ``modules.json``:
its pooling (unless ``pooling=`` is given), Dense layers, normalisation, maximum sequence length
and lower-casing are applied as sentence-transformers would. ``normalize`` (default true)
L2-normalises the vectors. ``backend`` runs the encoder in ONNX Runtime (the default where it is
installed, on a CPU in float32) or PyTorch; pooling stays in PyTorch (see ``onnx_encoder``).
``dtype=int8`` runs the float32 export quantised to 8 bits in ONNX Runtime (``onnx_int8``).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np

from harness.adapters.capabilities import Capability
from harness.adapters.model import ModelAdapter, ModelIdentity, source_revision
from harness.errors import HarnessError
from harness.params import Param
from harness_models.encoders.batching import length_sorted_batches, run_batches
from harness_models.encoders.onnx_encoder import (
    BACKEND_PARAM,
    backend_identity,
    check_backend,
    export_folder,
    onnx_hidden_states,
    onnx_workers,
    resolve_backend,
)
from harness_models.encoders.onnx_int8 import INT8, TEXT_DTYPE_PARAM, int8_folder
from harness_models.encoders.precision import checked_dtype, torch_dtype
from harness_models.encoders.sentence_transformers_config import load_dense, read_config
from harness_models.loading import STRICT_PARAM, KeyMismatch, from_pretrained, identity_args, pooler_key

POOLINGS = ("cls", "mean", "max", "pooler")
DEFAULT_MAX_LENGTH = 512
# These models number positions from padding_idx + 1, so two position embeddings are not usable.
_POSITION_OFFSET = {"roberta": 2, "xlm-roberta": 2, "camembert": 2, "longformer": 2}


def pretrained_source(name: str, args: dict[str, Any]) -> str:
    """The ``pretrained`` argument, or an error saying how to give it."""
    if not args.get("pretrained"):
        raise HarnessError(
            f"model {name!r} needs a Hub id or folder: --model ID_OR_FOLDER or --model-args pretrained=..."
        )
    return str(args["pretrained"])


@contextmanager
def loading(name: str, source: str) -> Iterator[None]:
    """Turn a model that cannot be found, downloaded or read (``OSError``, ``ValueError`` from transformers) into a user error."""
    try:
        yield
    except (OSError, ValueError) as exc:
        raise HarnessError(f"model {name!r}: cannot load {source!r}: {str(exc).splitlines()[0]}") from None


def hf_identity(adapter: ModelAdapter) -> ModelIdentity:
    """Identity of a Hugging Face model adapter: source, resolved revision (or content hash) and arguments."""
    source = pretrained_source(adapter.name, adapter.args)
    dtype = checked_dtype(adapter.name, adapter.args.get("dtype", "float32"), adapter.device)
    check_backend(adapter.name, adapter.args, adapter.device)
    return ModelIdentity(
        adapter.name,
        adapter.adapter_name,
        source,
        source_revision(source, adapter.args.get("revision")),
        backend_identity(identity_args(adapter)),
        dtype,
    )


class HFTextEncoder(ModelAdapter):
    """A Hugging Face encoder (BERT, XLM-R, DistilBERT, LaBSE, sentence-transformers, ...) pooled to one vector per text."""

    capabilities = frozenset({Capability.TEXT_ENCODER})
    params = {
        "pretrained": Param(None, "Hub id or local folder", str),
        "revision": Param(None, "Hub revision (branch, tag or commit)", str),
        "pooling": Param(
            None,
            "cls, mean, max or pooler (default: the sentence-transformers config, else mean)",
            str,
            choices=(None, *POOLINGS),
        ),
        "normalize": Param(True, "L2-normalise the vectors"),
        "max_length": Param(
            None,
            "longest input in tokens (default: the sentence-transformers setting, else 512; "
            "never beyond the model's limit)",
            int,
            min=1,
        ),
        "strict": STRICT_PARAM,
        "dtype": TEXT_DTYPE_PARAM,
        "backend": BACKEND_PARAM,
    }

    def __init__(self, name: str, args: dict[str, Any] | None = None, **kwargs: Any):
        super().__init__(name, args, **kwargs)
        self.args["backend"] = resolve_backend(self.args, self.device)  # the identity names the one that runs
        self.hidden_states: Any = None
        self._model: Any = None
        self.key_mismatch = KeyMismatch()  # with strict=true a mismatch is an error, never recorded

    def identity(self) -> ModelIdentity:
        """Source, revision and arguments (no weights are loaded)."""
        return hf_identity(self)

    def load(self) -> None:
        """Load the tokenizer, the model unless its ONNX export exists, and (sentence-transformers) the extra modules."""
        from transformers import AutoConfig, AutoTokenizer

        source, revision = pretrained_source(self.name, self.args), self.args["revision"]
        with loading(self.name, source):
            st = read_config(source, revision)
            self._subfolder = {"subfolder": st.transformer_path} if st is not None and st.transformer_path else {}
            self.pooling = self.args["pooling"] or (st.pooling if st is not None and st.pooling else "mean")
            self.config = AutoConfig.from_pretrained(
                source, revision=revision, trust_remote_code=False, **self._subfolder
            )
            self.tokenizer = AutoTokenizer.from_pretrained(
                source, revision=revision, trust_remote_code=False, **self._subfolder
            )
            self.dense = [
                load_dense(source, path, revision).to(self.device).eval() for path in (st.dense_paths if st else [])
            ]
        self.lowercase = bool(st and st.do_lower_case)
        requested = self.args["max_length"] or (st.max_seq_length if st and st.max_seq_length else DEFAULT_MAX_LENGTH)
        self.max_length = min(requested, self._model_limit())
        if self.args["backend"] != "onnxruntime" or not self.args["strict"]:
            self._torch_model()  # PyTorch runs it, or its key mismatches enter the identity
        if self.pooling == "pooler" and getattr(self._torch_model(), "pooler", None) is None:
            raise HarnessError(f"model {self.name!r} has no pooler layer: use --model-args pooling=cls or pooling=mean")
        check_backend(self.name, {**self.args, "pooling": self.pooling}, self.device)
        if self.args["backend"] == "onnxruntime":
            self.hidden_states = onnx_hidden_states(self._torch_model, "text-encoder", self._export, self.args["dtype"])

    @functools.cached_property
    def _export(self) -> Path:
        """The folder of the ONNX export (all layers), named by the source's content revision (resolved once)."""
        source = pretrained_source(self.name, self.args)
        return export_folder(
            "text-encoder", source, source_revision(source, self.args["revision"]), None, self.args["strict"]
        )

    def artefacts(self, capability: Capability) -> list[Path]:
        """The ONNX export (and its int8 form with ``dtype=int8``), when ONNX Runtime runs the model."""
        if self.args["backend"] != "onnxruntime":
            return []
        return [self._export, int8_folder(self._export)] if self.args["dtype"] == INT8 else [self._export]

    @property
    def model(self) -> Any:
        """The PyTorch encoder, loaded on first use (with ONNX Runtime, only to export it)."""
        return self._torch_model()

    def _torch_model(self) -> Any:
        if self._model is None:
            from transformers import AutoModel

            source = pretrained_source(self.name, self.args)
            with loading(self.name, source):
                model, self.key_mismatch = from_pretrained(  # a pooler that is not pooled with may be absent
                    AutoModel.from_pretrained,
                    source,
                    source,
                    self.args["strict"],
                    unused=lambda key: self.pooling != "pooler" and pooler_key(key),
                    revision=self.args["revision"],
                    trust_remote_code=False,
                    **self._subfolder,
                )
            dtype = checked_dtype(self.name, self.args["dtype"], self.device)
            self._model = model.to(self.device, torch_dtype("float32" if dtype == INT8 else dtype)).eval()
        return self._model

    def _model_limit(self) -> int:
        limits = []
        if 0 < getattr(self.tokenizer, "model_max_length", 0) < 1_000_000:
            limits.append(int(self.tokenizer.model_max_length))
        positions = getattr(self.config, "max_position_embeddings", None)
        if positions:
            limits.append(int(positions) - _POSITION_OFFSET.get(self.config.model_type, 0))
        return min(limits) if limits else DEFAULT_MAX_LENGTH

    def encode_texts(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        """One vector per text, in input order."""
        self.ensure_loaded()
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        inputs = [t.lower() for t in texts] if self.lowercase else list(texts)
        encoded = self.tokenizer(inputs, truncation=True, max_length=self.max_length, padding=False)["input_ids"]
        batches = length_sorted_batches([len(ids) for ids in encoded], self.batch_size)
        workers = onnx_workers() if self.hidden_states is not None else 1
        return run_batches(
            len(texts), batches, lambda indices: self._encode_batch([encoded[i] for i in indices]), workers
        )

    def _encode_batch(self, token_ids: list[list[int]]) -> Any:
        import torch

        width = max(len(ids) for ids in token_ids)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        input_ids = torch.full((len(token_ids), width), pad, dtype=torch.long)
        mask = torch.zeros((len(token_ids), width), dtype=torch.long)
        for row, ids in enumerate(token_ids):
            input_ids[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
            mask[row, : len(ids)] = 1
        if self.hidden_states is not None:
            hidden = torch.from_numpy(self.hidden_states(input_ids.numpy(), mask.numpy()))
            vectors = pool(SimpleNamespace(last_hidden_state=hidden), mask, self.pooling)
        else:
            output = self.model(input_ids=input_ids.to(self.device), attention_mask=mask.to(self.device))
            vectors = pool(output, mask.to(self.device), self.pooling).float()
        for layer in self.dense:
            vectors = layer(vectors)
        if self.args["normalize"]:
            vectors = torch.nn.functional.normalize(vectors, p=2, dim=1)
        return vectors


def pool(output: Any, mask: Any, pooling: str) -> Any:
    """One vector per sequence from a model output and its attention mask."""
    if pooling == "pooler":
        return output.pooler_output
    hidden = output.last_hidden_state
    if pooling == "cls":
        return hidden[:, 0]
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    if pooling == "mean":
        return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
    return hidden.masked_fill(weights == 0, float("-inf")).max(dim=1).values
