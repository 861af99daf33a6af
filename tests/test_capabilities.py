"""Capabilities as contracts: cache-key flags with one safe default, protocols checked when an adapter
is built, and a capability a plugin adds without touching harness/ (issue 18, points 1-3)."""

from __future__ import annotations

import hashlib
import re
from importlib.metadata import EntryPoint
from typing import Protocol

import numpy as np
import pytest
from fixtures.plugins.contracts import TEXT_CLASSIFIER, LengthClassifier, NoEncode
from fixtures.plugins.fake import fake_data
from fixtures.registries import entry_points
from PIL import Image

import harness.plugins.registry
from harness import evaluate
from harness.adapters.cache import Cache, make_key
from harness.adapters.cached_model import CachedModel, image_content_key
from harness.adapters.capabilities import Capability, ScoreRequest, TextEncoder, TokenEmbeddings, protocol_methods
from harness.adapters.model import ModelAdapter, ModelIdentity
from harness.adapters.resolve import check_protocols
from harness.cli import main
from harness.errors import CapabilityError, HarnessError
from harness.plugins.registry import build_registry, get_registry
from harness_models.translation.base import ScorerAdapter


def contracts_registry():
    """The fake plugin (its line_pairs loader and counting encoder) and the contracts plugin."""
    return build_registry([*entry_points("fake"), EntryPoint("contracts", "fixtures.plugins.contracts", "harness")])


def fixed_identity(name: str) -> ModelIdentity:
    """An identity with every field given (no code hash looked up), so that its digest is fixed."""
    return ModelIdentity(name, f"tests:{name}", "src", "rev1", {"dim": 2}, "float32", "pkg", "1.0", "abc")


# 1. Cache-key flags: a scorer that says nothing about images never shares scores across images


class RecordingScorer(ModelAdapter):
    """A new scorer on the bare ModelAdapter that sets no flag; records the image keys it scores."""

    capabilities = frozenset({Capability.TRANSLATION_SCORER})
    scored: list[str | None] = []

    def identity(self):
        return fixed_identity("recording")

    def score_translations(self, requests, **options):
        RecordingScorer.scored.extend(r.image_key for r in requests)
        return [np.array([-1.0]) for _ in requests]


class RecordingTranslationScorer(ScorerAdapter):
    """A new scorer on the translation scorers' base class (which used to default to ignoring images)."""

    scored: list[str | None] = []

    def identity(self):
        return fixed_identity("recording-translation")

    def logprobs(self, requests, temperature):
        RecordingTranslationScorer.scored.extend(r.image_key for r in requests)
        return [np.array([-1.0]) for _ in requests]


class BlindScorer(RecordingScorer):
    """Declares that its scores cannot depend on the image."""

    uses_images = False


def two_image_requests() -> list[ScoreRequest]:
    images = [Image.new("RGB", (2, 2), (red, 0, 0)) for red in (10, 200)]
    return [ScoreRequest("a dog", "ein Hund", image, image_content_key(image), "en", "de") for image in images]


@pytest.mark.parametrize("scorer", [RecordingScorer, RecordingTranslationScorer])
def test_a_new_scorer_that_sets_nothing_never_shares_scores_across_images(scorer, tmp_path):
    scorer.scored.clear()
    cache = Cache(tmp_path)
    first, second = two_image_requests()
    CachedModel(scorer("new"), cache).score_translations([first])
    CachedModel(scorer("new"), cache).score_translations([second])  # same source and target, another image
    assert scorer.scored == [first.image_key, second.image_key] and len(cache) == 2
    assert scorer.uses_images is True


def test_a_scorer_that_declares_itself_image_blind_scores_once_whatever_the_image(tmp_path):
    BlindScorer.scored.clear()
    cache = Cache(tmp_path)
    first, second = two_image_requests()
    CachedModel(BlindScorer("blind"), cache).score_translations([first])
    CachedModel(BlindScorer("blind"), cache).score_translations([second])
    assert BlindScorer.scored == [first.image_key] and len(cache) == 1


def test_the_flags_are_declared_once_and_text_only_scorers_say_so():
    from harness_models.packaged.gemma import Gemma270m, Gemma270mCaption
    from harness_models.translation.causal import CausalLMScorer
    from harness_models.translation.multimodal import MultimodalScorer
    from harness_models.translation.seq2seq import Seq2SeqScorer

    assert (ModelAdapter.uses_images, ModelAdapter.transductive) == (True, False)
    assert "uses_images" not in vars(ScorerAdapter)  # no second, contrary default
    assert [cls.uses_images for cls in (Seq2SeqScorer, CausalLMScorer, Gemma270m)] == [False, False, False]
    assert "uses_images" in vars(Seq2SeqScorer) and "uses_images" in vars(CausalLMScorer)
    assert [cls.uses_images for cls in (MultimodalScorer, Gemma270mCaption)] == [True, True]


# 2. Capabilities checked against their protocols when the adapter is built, before weights load


def test_an_adapter_without_its_capability_method_fails_before_it_is_built(tmp_path):
    NoEncode.built.clear()
    data_dir = fake_data(tmp_path / "data", ["a", "b"], ["c", "d"])
    message = (
        "model 'no-encode': adapter fixtures.plugins.contracts:NoEncode declares text_encoder "
        "but does not implement encode_texts (the TextEncoder protocol)"
    )
    with pytest.raises(HarnessError, match=re.escape(message)):
        evaluate(
            "mean_similarity",
            "no-encode",
            data_dir=str(data_dir),
            output=tmp_path / "out",
            registry=contracts_registry(),
        )
    assert NoEncode.built == []  # neither constructed nor loaded


def test_the_cli_exits_2_naming_the_adapter_and_the_method(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", contracts_registry())
    data_dir = fake_data(tmp_path / "data", ["a", "b"], ["c", "d"])
    assert (
        main(
            [
                "run",
                "--tasks",
                "mean_similarity",
                "--model",
                "no-encode",
                "--data-dir",
                str(data_dir),
                "--output",
                str(tmp_path / "out"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "NoEncode declares text_encoder but does not implement encode_texts" in err and "Traceback" not in err


def test_a_capability_given_as_a_string_is_refused_by_name():
    class StringCapability(ModelAdapter):
        capabilities = frozenset({"text_encoder"})  # type: ignore[arg-type]

        def encode_texts(self, texts, lang=None):
            return np.zeros((len(texts), 1))

    with pytest.raises(
        HarnessError,
        match=r"declares the capability 'text_encoder', which is not a harness.adapters.capabilities.Capability",
    ):
        check_protocols("s", StringCapability)


def test_every_built_in_adapter_and_the_example_plugin_keep_their_protocols():
    pytest.importorskip(
        "harness_bitext", reason="the example plugin is not installed (pip install -e plugins/harness-bitext)"
    )
    registry = get_registry()
    checked = set()
    for name, registration in registry.entries["model"].items():
        adapter_class = registration.load()
        if isinstance(adapter_class, type) and issubclass(adapter_class, ModelAdapter):
            check_protocols(name, adapter_class)
            checked.add(registration.ref)
    assert "harness_bitext.tfidf:CharTfidfEncoder" in checked
    assert {
        "harness_models.translation.seq2seq:Seq2SeqScorer",
        "harness_models.encoders.image:HFImageEncoder",
    } <= checked


def test_a_capability_names_a_method_of_its_protocol():
    class TwoMethods(TextEncoder, Protocol):
        def extra(self) -> None: ...

    assert protocol_methods(TwoMethods) == ["encode_texts", "extra"]
    with pytest.raises(TypeError, match="'encode' is not a method of the protocol TextEncoder"):
        Capability("broken", TextEncoder, "encode")


# 3. A capability a plugin adds, run end to end through harness.evaluate and the cache


def test_a_plugin_capability_runs_end_to_end_and_is_served_from_the_cache(tmp_path, fresh_cache):
    LengthClassifier.calls.clear()
    LengthClassifier.loads.clear()
    data_dir = fake_data(
        tmp_path / "data", ["hi", "hello", "yo", "salut", "hi"], ["short", "long", "long", "long", "short"]
    )
    registry = contracts_registry()
    (first,) = evaluate(
        "label_accuracy", "length-classifier", data_dir=str(data_dir), output=tmp_path / "a", registry=registry
    )
    # predictions short, long, short, long, short: 4 of 5 right; "hi" is classified once
    assert first.metrics == {"accuracy": 0.8}
    assert [sorted(call) for call in LengthClassifier.calls] == [["hello", "hi", "salut", "yo"]]
    assert LengthClassifier.loads == ["length-classifier"]
    (second,) = evaluate(
        "label_accuracy", "length-classifier", data_dir=str(data_dir), output=tmp_path / "b", registry=registry
    )
    assert second.metrics == {"accuracy": 0.8}
    assert len(LengthClassifier.calls) == 1 and LengthClassifier.loads == ["length-classifier"]  # no call, no load
    digest = LengthClassifier("length-classifier").identity().digest()
    key = make_key(digest, "text_classifier", {"labels": ["long", "short"]}, b"salut")
    assert Cache(fresh_cache).get_many([key]) == {key: b"long"}  # the plugin's own codec and key content


def test_a_plugin_capability_is_checked_like_a_built_in(tmp_path):
    data_dir = fake_data(tmp_path / "data", ["a"], ["short"])
    with pytest.raises(
        CapabilityError,
        match="model 'counting-encoder' cannot serve task 'label_accuracy': it is not a text classifier",
    ):
        evaluate(
            "label_accuracy",
            "counting-encoder",
            data_dir=str(data_dir),
            output=tmp_path / "out",
            registry=contracts_registry(),
        )
    assert repr(TEXT_CLASSIFIER) == "Capability('text_classifier')" and TEXT_CLASSIFIER.noun == "a text classifier"


class PinnedModel(ModelAdapter):
    """All four built-in capabilities, with a fixed identity: its cache keys are pinned below."""

    capabilities = frozenset(
        {Capability.TEXT_ENCODER, Capability.IMAGE_ENCODER, Capability.TOKEN_EMBEDDER, Capability.TRANSLATION_SCORER}
    )

    def identity(self):
        return ModelIdentity("pinned", "tests:Pinned", "src", "rev1", {"dim": 2}, "float32", "pkg", "1.0", "abc")

    def encode_texts(self, texts, lang=None):
        return np.ones((len(texts), 2), np.float32)

    def encode_images(self, images):
        return np.ones((len(images), 2), np.float32)

    def embed_tokens(self, texts, lang=None):
        return [TokenEmbeddings(["a"], np.ones((1, 2), np.float32)) for _ in texts]

    def score_translations(self, requests, **options):
        return [np.zeros(1) for _ in requests]


class TransductivePinned(PinnedModel):
    transductive = True


class BlindPinned(PinnedModel):
    uses_images = False


class KeyRecorder:
    """A cache that holds nothing and records the keys written to it."""

    def __init__(self):
        self.keys: list[str] = []

    def get_many(self, keys):
        return {}

    def put_many(self, items):
        self.keys.extend(items)


# keys computed with the scheme before capabilities became a table (harness/adapters/cached_model.py at f0192d6)
PINNED = [
    (
        PinnedModel,
        lambda m: m.encode_texts(["hello"], lang="en"),
        ["1c58887570573b8fbe1bcd5b9330d0cc679a56301dbae158955e3c819d1f87a8"],
    ),
    (
        PinnedModel,
        lambda m: m.encode_images([np.zeros((2, 2, 3), np.uint8)]),
        ["4766e69f623e97002be6159ed0337759456c6221551b00c0486264dbeb4ebc63"],
    ),
    (
        PinnedModel,
        lambda m: m.embed_tokens(["hello"], lang="de"),
        ["97db2a3dfd0e619b15b5385400384b3d6c53594dc0bb4a7bf445156378408e94"],
    ),
    (
        PinnedModel,
        lambda m: m.score_translations([ScoreRequest("s", "t", "img", "k1", "en", "fr")], temperature=1.0),
        ["6ab4ef2eef63963e1c37dbe93acc93c5241db4e3c148b3c45713d72e256e5ae2"],
    ),
    (
        BlindPinned,
        lambda m: m.score_translations([ScoreRequest("s", "t", "img", "k1", "en", "fr")]),
        ["fbb5ee0a89de462694e25139d45c4734db96da396b54f3ef0613d1d7f366dc4c"],
    ),
    (
        TransductivePinned,
        lambda m: m.encode_texts(["b", "a"], lang=None),
        [
            "2b722346725b71e6d44cd16d6ccd8be4439e233524f171d0b16ff04c0f52d4e8",
            "9a1eee513b977eed17840ee5f9d323373839e0b452e1c9ef5b7fd448cd9fd5b7",
        ],
    ),
]


@pytest.mark.parametrize(("adapter", "call", "keys"), PINNED)
def test_built_in_cache_keys_are_byte_identical_to_the_old_scheme(adapter, call, keys):
    recorder = KeyRecorder()
    call(CachedModel(adapter("pinned"), recorder))  # type: ignore[arg-type]
    assert recorder.keys == keys


def test_a_text_key_by_hand():
    """SHA-256 over length-prefixed parts: identity digest, capability, options (JSON), the text's bytes."""
    digest = PinnedModel("pinned").identity().digest()
    parts = [f'"{digest}"'.encode(), b'"text_encoder"', b'{"lang": "en"}', b"hello"]
    expected = hashlib.sha256(b"".join(len(p).to_bytes(8, "little") + p for p in parts)).hexdigest()
    assert expected == PINNED[0][2][0]


def test_token_stand_ins_take_the_shape_of_the_values_at_hand():
    """A shard's stand-in for a token value it lacks: no tokens, the layer and width axes of its neighbours."""
    from harness.adapters.capabilities import TOKENS, TokenEmbeddings

    one_layer = TokenEmbeddings(["a", "b"], np.ones((2, 4), dtype=np.float32))
    all_layers = TokenEmbeddings(["a", "b"], np.ones((13, 2, 4), dtype=np.float32))
    assert TOKENS.blank({"x": one_layer}).vectors.shape == (0, 4)
    assert TOKENS.blank({"x": all_layers}).vectors.shape == (13, 0, 4)
    blank = TOKENS.blank({})
    assert blank.tokens == [] and blank.vectors.shape == (0, 1)
