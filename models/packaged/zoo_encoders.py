"""The encoder zoo's adapters: every layer of a packaged transformer, TF-IDF, pooled n-grams, hashed words.

- ``LayerPooled``: layer ``layer`` (``hidden_states[layer]``; 0 is the embedding output) of a packaged
  folder model (``e5-small-hf`` or ``minilm``), mean-pooled over real tokens or its first token ([CLS]),
  L2-normalised. One forward pass (PyTorch) computes the mean and CLS vectors of every layer, kept in the
  harness cache per text under the base's weights (source, content revision), ``max_length`` and
  ``ALL_LAYERS`` (the version of this computation), so each further layer or pooling of the same texts is
  read, not computed, also after an unrelated change of the adapters' code. The top layer mean-pooled is
  the base model's own ``encode_texts``.
- ``Tfidf``: TF-IDF over character n-grams (``char_wb``) or word n-grams, fitted on the texts of one call
  (one language side: transductive, as ``tfidf-char`` is), placed in one space by signed feature hashing.
- ``PooledNgrams``: the mean of ``lexical-ngrams``' word vectors (hashed character n-grams of each word).
- ``HashedWords``: a bag of lower-cased words hashed into ``dim`` dimensions, plus a small constant
  everywhere (the ``toy-bow`` of docs/plugins.md, with a stable hash).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.adapters.cache import array_to_bytes, bytes_to_array, default_cache, make_key
from harness.adapters.capabilities import Capability
from harness.adapters.model import ModelAdapter, ModelIdentity
from harness.errors import HarnessError
from harness.params import Param
from harness_models.packaged.baselines import unit_rows

if TYPE_CHECKING:
    from harness_models.packaged.hf_folder import FolderModel

LAYER_BASES = {"e5-small-hf": 12, "minilm": 6}  # packaged folder models and their number of layers
POOLINGS = ("mean", "cls")
ALL_LAYERS = "zoo-all-layers-v1"  # the cache entry of one text: (layers + 1, 2 poolings, dim), unnormalised; bump
# when the computation changes
TFIDF_VERSION = 1
WORD = re.compile(r"\w+")


def build_base(name: str, base: str, device: str, batch_size: int) -> FolderModel:
    """The registered folder model ``base`` (``e5-small-hf`` or ``minilm``), on PyTorch (every hidden state)."""
    from harness.adapters.resolve import build_adapter
    from harness.plugins.registry import get_registry
    from harness_models.packaged.hf_folder import FolderModel

    registry = get_registry()
    args = {"backend": "torch"} if "backend" in registry.get("model", base).load().params else {}
    adapter = build_adapter(
        registry, base, args, {name: [Capability.TEXT_ENCODER]}, device=device, batch_size=batch_size
    )
    if not isinstance(adapter, FolderModel):
        raise HarnessError(f"model {name!r}: base {base!r} is not a packaged folder model")
    return adapter


class LayerPooled(ModelAdapter):
    """One layer of a packaged transformer, mean- or CLS-pooled: a text encoder of that layer's quality."""

    capabilities = frozenset({Capability.TEXT_ENCODER})
    params = {
        "base": Param("e5-small-hf", "the packaged folder model", choices=tuple(LAYER_BASES)),
        "layer": Param(12, "hidden_states index: 0 is the embedding output, L the L-th layer's output", min=0),
        "pooling": Param("mean", "mean over real tokens, or the first token (cls)", choices=POOLINGS),
    }

    def __init__(self, name: str, args: dict[str, Any] | None = None, **kwargs: Any):
        super().__init__(name, args, **kwargs)
        depth = LAYER_BASES[self.args["base"]]
        if self.args["layer"] > depth:
            raise HarnessError(
                f"model {name!r}: layer {self.args['layer']} does not exist, {self.args['base']} has {depth} layers"
            )
        self.base = build_base(name, self.args["base"], self.device, self.batch_size)

    def identity(self) -> ModelIdentity:
        """The base's source and revision, with the layer and pooling."""
        return ModelIdentity(
            self.name, self.adapter_name, self.base.source(), self.base.revision(), dict(self.args), "float32"
        )

    def card(self) -> dict[str, Any]:
        """The base model's card (the same weights, fewer used above ``layer``)."""
        return self.base.card()

    def load(self) -> None:
        """What the base's cached layers are keyed by (its weights load only when a text is not cached)."""
        self._layers_key = (self.base.source(), self.base.revision(), self.base.args["max_length"], ALL_LAYERS)

    def encode_texts(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        """Layer ``layer``'s ``pooling`` vector of each text (the base's prefix first), L2-normalised."""
        self.ensure_loaded()
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        pooling = POOLINGS.index(self.args["pooling"])
        layers = self.all_layers([self.base.text_prefix() + text for text in texts])
        return unit_rows(np.stack([one[self.args["layer"], pooling] for one in layers]).astype(np.float64))

    def all_layers(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Per text, its mean and CLS vectors of every layer, shape (layers + 1, 2, dim): cached, else computed."""
        self.ensure_loaded()
        cache = default_cache()
        keys = [make_key(*self._layers_key, text) for text in texts]
        found = {key: bytes_to_array(value) for key, value in (cache.get_many(keys) if cache else {}).items()}
        missing = sorted({key: text for key, text in zip(keys, texts) if key not in found}.items())
        for start in range(0, len(missing), 8 * self.batch_size):
            chunk = missing[start : start + 8 * self.batch_size]
            vectors = self._forward([text for _, text in chunk])
            fresh = {key: vectors[row] for row, (key, _) in enumerate(chunk)}
            if cache is not None:
                cache.put_many({key: array_to_bytes(value) for key, value in fresh.items()})
            found.update(fresh)
        return [found[key] for key in keys]

    def _forward(self, texts: list[str]) -> np.ndarray:
        """(texts, layers + 1, 2, dim): one forward pass per length-sorted batch with every hidden state."""
        import torch

        encoder = self.base.text_encoder()
        inputs = [t.lower() for t in texts] if encoder.lowercase else texts
        ids = encoder.tokenizer(inputs, truncation=True, max_length=encoder.max_length, padding=False)["input_ids"]
        pad = encoder.tokenizer.pad_token_id if encoder.tokenizer.pad_token_id is not None else 0
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        out: list[np.ndarray] = [np.empty(0)] * len(ids)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                batch = order[start : start + self.batch_size]
                width = max(len(ids[i]) for i in batch)
                input_ids = torch.full((len(batch), width), pad, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for row, i in enumerate(batch):
                    input_ids[row, : len(ids[i])] = torch.tensor(ids[i], dtype=torch.long)
                    mask[row, : len(ids[i])] = 1
                output = encoder.model(
                    input_ids=input_ids.to(encoder.device),
                    attention_mask=mask.to(encoder.device),
                    output_hidden_states=True,
                )
                states = torch.stack(output.hidden_states, dim=1).float().cpu()  # (batch, layers + 1, width, dim)
                weights = mask[:, None, :, None].float()
                mean = (states * weights).sum(dim=2) / weights.sum(dim=2).clamp(min=1e-9)
                pooled = torch.stack([mean, states[:, :, 0]], dim=2).numpy()  # (batch, layers + 1, 2, dim)
                for row, i in enumerate(batch):
                    out[i] = pooled[row].astype(np.float32)
        return np.stack(out)


class Tfidf(ModelAdapter):
    """TF-IDF over character or word n-grams of one language side, hashed with signs into one space."""

    capabilities = frozenset({Capability.TEXT_ENCODER})
    transductive = True
    params = {
        "analyzer": Param("char_wb", "char_wb (character n-grams within words) or word", choices=("char_wb", "word")),
        "ngram_min": Param(2, "shortest n-gram", min=1),
        "ngram_max": Param(4, "longest n-gram", min=1),
        "features": Param(1 << 15, "dimensions the n-grams are hashed into, with signs", min=1),
        "sublinear": Param(True, "1 + log(tf) instead of raw counts"),
    }

    def identity(self) -> ModelIdentity:
        """No weights: the arguments and the scikit-learn version."""
        import sklearn

        return ModelIdentity(
            self.name,
            self.adapter_name,
            "scikit-learn",
            f"{sklearn.__version__}+v{TFIDF_VERSION}",
            self.args,
            "float32",
        )

    def card(self) -> dict[str, Any]:
        """No weights: ``features``-dimensional vectors."""
        return {**super().card(), "parameters": 0, "dimension": self.args["features"], "source": "packaged"}

    def encode_texts(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        """TF-IDF vectors of ``texts`` (IDF fitted on them), hashed with signs into ``features`` dimensions."""
        from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer, TfidfTransformer
        from sklearn.preprocessing import normalize

        if self.args["ngram_min"] > self.args["ngram_max"]:
            raise HarnessError(f"model {self.name!r}: ngram_min is above ngram_max")
        counting = CountVectorizer(
            analyzer=self.args["analyzer"], ngram_range=(self.args["ngram_min"], self.args["ngram_max"])
        )
        try:
            counts = counting.fit_transform(list(texts))
        except ValueError:  # no n-gram in any text
            return np.zeros((len(texts), self.args["features"]), dtype=np.float32)
        weighted = TfidfTransformer(sublinear_tf=self.args["sublinear"]).fit_transform(counts)
        signs = HashingVectorizer(
            analyzer=_whole, n_features=self.args["features"], alternate_sign=True, norm=None
        ).transform(counting.get_feature_names_out())
        return normalize(weighted @ signs).toarray().astype(np.float32)


def _whole(gram: str) -> list[str]:
    """The n-gram itself as its only token."""
    return [gram]


class PooledNgrams(ModelAdapter):
    """The mean of ``lexical-ngrams``' word vectors, L2-normalised (a text with no word: the zero vector)."""

    capabilities = frozenset({Capability.TEXT_ENCODER})
    params = {
        "ngram_min": Param(2, "shortest character n-gram", min=1),
        "ngram_max": Param(4, "longest character n-gram", min=1),
        "features": Param(2048, "number of hashed n-gram buckets", min=1),
    }

    def identity(self) -> ModelIdentity:
        """No weights: the arguments and the scikit-learn version."""
        import sklearn

        return ModelIdentity(self.name, self.adapter_name, "scikit-learn", sklearn.__version__, self.args, "float32")

    def card(self) -> dict[str, Any]:
        """No weights: ``features``-dimensional vectors."""
        return {**super().card(), "parameters": 0, "dimension": self.args["features"], "source": "packaged"}

    def encode_texts(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        """Mean word vector per text."""
        from harness_models.token_embedders.lexical import LexicalNgramEmbedder

        words = LexicalNgramEmbedder(self.name, dict(self.args)).embed_tokens(texts)
        rows = [w.vectors.mean(axis=0) if len(w.tokens) else np.zeros(self.args["features"], np.float32) for w in words]
        return unit_rows(np.asarray(rows, dtype=np.float64).reshape(len(texts), self.args["features"]))


class HashedWords(ModelAdapter):
    """Each lower-cased word adds 1 to dimension crc32(word) mod ``dim``; ``constant`` is added everywhere."""

    capabilities = frozenset({Capability.TEXT_ENCODER})
    params = {
        "dim": Param(256, "vector size (more words share a dimension when it is small)", min=1),
        "constant": Param(0.01, "added to every dimension", min=0.0),
    }

    def card(self) -> dict[str, Any]:
        """No weights: ``dim``-dimensional vectors."""
        return {**super().card(), "parameters": 0, "dimension": self.args["dim"], "source": "packaged"}

    def encode_texts(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        """Hashed word counts plus the constant, L2-normalised."""
        vectors = np.full((len(texts), self.args["dim"]), self.args["constant"], dtype=np.float64)
        for row, text in enumerate(texts):
            for word in WORD.findall(text.lower()):
                vectors[row, zlib.crc32(word.encode()) % self.args["dim"]] += 1
        return unit_rows(vectors)
