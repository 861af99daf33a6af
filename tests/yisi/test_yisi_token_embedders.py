"""Token embedders: layer indexing, truncation, special tokens, batching, caching, resolution."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoTokenizer
from yisi.helpers import CAPTIONS, tiny_roberta

from harness.adapters.cache import Cache
from harness.adapters.cached_model import CachedModel
from harness.adapters.capabilities import Capability
from harness.adapters.resolve import build_adapter, find_adapter
from harness.errors import HarnessError
from harness.plugins.registry import get_registry
from harness_models.token_embedders.hf import HFTokenEmbedder
from harness_models.token_embedders.lexical import LexicalNgramEmbedder

TEXTS = ["Zwei Hunde spielen im Schnee.", "A man rides a bike down the street, near a fence.", "A woman"]


def reference(folder, text: str, layer: int) -> tuple[list[str], np.ndarray]:
    """Tokens and hidden_states[layer] of the full model, first and last (special) positions cut."""
    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()
    encoded = tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        states = model(**encoded, output_hidden_states=True).hidden_states
    return tokenizer.convert_ids_to_tokens(encoded["input_ids"][0])[1:-1], states[layer][0, 1:-1].numpy()


@pytest.mark.parametrize("layer", [0, 1, 9, 12])
def test_layer_l_is_hidden_states_l_without_special_tokens(tiny_encoder, layer):
    adapter = HFTokenEmbedder("tiny", {"pretrained": str(tiny_encoder), "layer": layer})
    results = adapter.embed_tokens(TEXTS)
    # the layers above L are not even built
    assert adapter.model.config.num_hidden_layers == layer and len(adapter.model.encoder.layer) == layer
    for text, result in zip(TEXTS, results):
        tokens, vectors = reference(tiny_encoder, text, layer)
        assert result.tokens == tokens and "[CLS]" not in result.tokens and "[SEP]" not in result.tokens
        assert result.vectors.dtype == np.float32 and result.vectors.shape == (len(tokens), 32)
        np.testing.assert_allclose(result.vectors, vectors, atol=1e-5)


def test_roberta_style_model_with_left_padding(tmp_path):
    folder = tiny_roberta(tmp_path / "roberta", CAPTIONS["en"] + CAPTIONS["fr"], layers=4, padding_side="left")
    adapter = HFTokenEmbedder("rob", {"pretrained": str(folder), "layer": 3}, batch_size=3)
    for text, result in zip(CAPTIONS["fr"], adapter.embed_tokens(CAPTIONS["fr"])):
        tokens, vectors = reference(folder, text, 3)
        assert result.tokens == tokens and "<s>" not in result.tokens and "</s>" not in result.tokens
        np.testing.assert_allclose(result.vectors, vectors, atol=1e-5)
    assert adapter.max_length == 128  # min(tokenizer maximum, position embeddings)


def test_batching_and_length_sorting_keep_input_order(tiny_encoder):
    texts = CAPTIONS["de"] + CAPTIONS["en"]
    one = HFTokenEmbedder("tiny", {"pretrained": str(tiny_encoder)}, batch_size=1).embed_tokens(texts)
    many = HFTokenEmbedder("tiny", {"pretrained": str(tiny_encoder)}, batch_size=5).embed_tokens(texts)
    for a, b in zip(one, many):
        assert a.tokens == b.tokens and len(a.tokens) > 0
        np.testing.assert_allclose(a.vectors, b.vectors, atol=1e-5)
    assert one[0].tokens == AutoTokenizer.from_pretrained(tiny_encoder).tokenize(texts[0])


def test_empty_text_has_no_tokens(tiny_encoder):
    (empty, other) = HFTokenEmbedder("tiny", {"pretrained": str(tiny_encoder)}).embed_tokens(["", "A man"])
    assert empty.tokens == [] and empty.vectors.shape == (0, 32) and len(other.tokens) == 2


def test_bad_layers_and_sources_are_clear_errors(tiny_encoder, monkeypatch):
    with pytest.raises(HarnessError, match=r"layer 13 does not exist.*has 12 layers"):
        HFTokenEmbedder("tiny", {"pretrained": str(tiny_encoder), "layer": 13}).embed_tokens(["x"])
    with pytest.raises(HarnessError, match="argument layer=-1 must be at least 0"):
        HFTokenEmbedder("tiny", {"pretrained": str(tiny_encoder), "layer": -1})
    with pytest.raises(HarnessError, match="give a Hub id or folder"):
        HFTokenEmbedder("nothing", {})
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_OFFLINE", True)  # read once, at import
    hub = HFTokenEmbedder("hub", {"pretrained": "no-such-org/no-such-model"})
    with pytest.raises(HarnessError, match="cannot load 'no-such-org/no-such-model'"):
        hub.embed_tokens(["x"])


def test_served_through_the_cache_and_the_layer_is_part_of_the_key(tiny_encoder, tmp_path):
    cache = Cache(tmp_path / "cache")
    adapter = HFTokenEmbedder("tiny", {"pretrained": str(tiny_encoder), "layer": 9})
    calls = []
    original = adapter.embed_tokens
    adapter.embed_tokens = lambda texts, lang=None: calls.append(list(texts)) or original(texts, lang)
    first = CachedModel(adapter, cache).embed_tokens(TEXTS + TEXTS[:1], lang="en")
    again = CachedModel(adapter, cache).embed_tokens(TEXTS, lang="en")
    assert len(calls) == 1 and sorted(calls[0]) == sorted(TEXTS)  # deduplicated, then answered from the cache
    for a, b in zip(first, again):
        assert a.tokens == b.tokens and np.array_equal(a.vectors, b.vectors)
    other_layer = HFTokenEmbedder("tiny", {"pretrained": str(tiny_encoder), "layer": 8})
    assert CachedModel(other_layer, cache).identity.digest() != CachedModel(adapter, cache).identity.digest()


def test_presets_and_default_adapter_resolution(tiny_encoder):
    registry = get_registry()
    needs = [Capability.TOKEN_EMBEDDER]
    registration, args = find_adapter(registry, "mbert-l9", {}, needs)
    assert registration.ref.endswith("hf:HFTokenEmbedder")
    assert args == {"pretrained": "google-bert/bert-base-multilingual-cased", "layer": 9}
    _, args = find_adapter(registry, "xlmr-l9", {"layer": "8"}, needs)
    assert args == {"pretrained": "FacebookAI/xlm-roberta-base", "layer": "8"}
    adapter = build_adapter(
        registry, str(tiny_encoder), {"layer": "4"}, {"yisi2_filter": needs}, device="cpu", batch_size=8
    )
    assert isinstance(adapter, HFTokenEmbedder) and adapter.args["layer"] == 4


def test_lexical_embedder_units_and_similarities():
    (first, second) = LexicalNgramEmbedder("lexical-ngrams").embed_tokens(["A man, a Mann!", "xyz"])
    assert first.tokens == ["A", "man", "a", "Mann"] and second.tokens == ["xyz"]
    norms = np.linalg.norm(first.vectors, axis=1)
    np.testing.assert_allclose(norms, 1.0, rtol=1e-6)
    cos = first.vectors @ first.vectors.T
    assert cos[0, 2] == pytest.approx(1.0)  # "A" and "a" after lowercasing
    assert 0.3 < cos[1, 3] < 1.0  # "man" and "mann" share n-grams
    assert float(first.vectors[1] @ second.vectors[0]) == pytest.approx(0.0, abs=1e-6)
    (empty,) = LexicalNgramEmbedder("lexical-ngrams").embed_tokens(["..."])
    assert empty.tokens == [] and empty.vectors.shape == (0, 2048)
