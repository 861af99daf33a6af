"""The YiSi-2 layer sweeps: hand-computed metrics per layer, the best layer, one cached forward pass,
equality with the single-layer tasks on a tiny BERT, and the leaderboard's layer plot."""

from __future__ import annotations

import math

import datasets
import numpy as np
import pytest

from harness.adapters.cache import Cache
from harness.adapters.cached_model import CachedModel
from harness.adapters.capabilities import Capability, TokenEmbeddings
from harness.adapters.model import ModelAdapter, ModelIdentity
from harness.errors import HarnessError
from harness.run.context import RunContext
from harness_models.token_embedders.hf import HFTokenEmbedder
from harness_tasks.yisi.layers import Yisi2FilterLayers, Yisi2StsLayers, best_layer
from harness_tasks.yisi.plots import layer_values
from harness_tasks.yisi.tasks import Yisi2Filter

# layer 0 and layer 1 vectors of each word (a word is a unit; no context)
LAYERS = [
    {"x": (1.0, 0.0), "y": (0.0, 1.0), "z": (0.6, 0.8)},
    {"x": (1.0, 0.0), "y": (1.0, 0.0), "z": (0.0, 1.0)},
]
CTX = RunContext(seeds=[0])


class TwoLayerWords(ModelAdapter):
    """A token embedder with two layers of fixed word vectors; counts its calls."""

    capabilities = frozenset({Capability.TOKEN_EMBEDDER})
    calls = 0

    def identity(self) -> ModelIdentity:
        return ModelIdentity(self.name, "two-layer-words", "test", "1", {}, "float32")

    def load(self) -> None:
        pass

    def embed_tokens(self, texts, lang=None, all_layers=False):
        TwoLayerWords.calls += 1
        out = []
        for text in texts:
            words = text.split()
            stacked = np.array([[layer[w] for w in words] for layer in LAYERS], dtype=np.float32).reshape(2, -1, 2)
            out.append(TokenEmbeddings(words, stacked if all_layers else stacked[-1]))
        return out


class OneLayerOnly(TwoLayerWords):
    """A token embedder that knows nothing of all_layers."""

    def embed_tokens(self, texts, lang=None):
        return [TokenEmbeddings(t.split(), np.ones((len(t.split()), 2), dtype=np.float32)) for t in texts]


def filter_data():
    # one-word pairs with idf=none: YiSi-2 = max(0, cos)
    # layer 0: good 1.0 (x/x), 0.8 (y/z); bad 0.0 (x/y), 0.6 (x/z) -> ROC AUC 1
    # layer 1: good 1.0, 0.0; bad 1.0, 0.0 -> (1 vs 1) 0.5 + (1 vs 0) 1 + (0 vs 1) 0 + (0 vs 0) 0.5 = 2 of 4 -> 0.5
    return datasets.Dataset.from_dict(
        {
            "id": ["1:good", "2:good", "1:mismatch", "2:mismatch"],
            "sentence1": ["x", "y", "x", "x"],
            "sentence2": ["x", "z", "y", "z"],
            "label": [1, 1, 0, 0],
            "kind": ["good", "good", "mismatch", "mismatch"],
        }
    )


def test_filter_sweep_per_layer_by_hand():
    task = Yisi2FilterLayers("yisi2_filter_layers", {"idf": "none"})
    out = task.evaluate(filter_data(), CachedModel(TwoLayerWords("w"), cache=None), CTX)
    metrics = out.per_seed[0]
    assert metrics["roc_auc@L0"] == 1.0 and metrics["roc_auc@L1"] == 0.5
    assert metrics["best_layer"] == 0.0 and metrics["best_roc_auc"] == 1.0 and metrics["layers"] == 2.0
    assert out.samples[1]["yisi2"] == pytest.approx([0.8, 0.0]) and out.samples[2]["yisi2"] == pytest.approx([0.0, 1.0])
    info = task.metric_info(out)
    assert info["roc_auc@L1"]["display"] == "ROC AUC L1" and info["roc_auc@L1"]["chance"] == 0.5
    assert info["mean_f2@L0"]["higher_is_better"] is True and info["best_layer"]["higher_is_better"] is None
    assert set(info) >= {f"{m}@L{layer}" for m in ("roc_auc", "mean_f1", "mean_f2") for layer in (0, 1)}
    # chance of mean F1 with N = 4 pairs, E = 2 bad: mean of k / (2 + k) = (1/3 + 1/2 + 3/5 + 2/3) / 4 = 21/40
    assert info["mean_f1@L0"]["chance"] == pytest.approx(21 / 40) == info["mean_f1@L1"]["chance"]
    assert layer_values(metrics, "roc_auc") == [1.0, 0.5]


def test_sts_sweep_per_layer_by_hand():
    data = datasets.Dataset.from_dict(
        {"id": ["a", "b", "c"], "sentence1": ["x", "y", "x"], "sentence2": ["x", "z", "z"], "score": [3.0, 2.0, 1.0]}
    )
    out = Yisi2StsLayers("yisi2_sts_layers", {"idf": "none"}).evaluate(
        data, CachedModel(TwoLayerWords("w"), cache=None), CTX
    )
    metrics = out.per_seed[0]
    # layer 0: (1, 0.8, 0.6) is linear in gold (3, 2, 1): r = 1; layer 1: (1, 0, 0) against (3, 2, 1): r = 1 / sqrt(2/3 * 2)
    assert metrics["pearson@L0"] == pytest.approx(1.0)
    assert metrics["pearson@L1"] == pytest.approx(math.sqrt(3) / 2)
    assert metrics["best_layer"] == 0.0 and metrics["best_pearson"] == pytest.approx(1.0) and metrics["n"] == 3.0


def test_best_layer_ties_and_undefined():
    assert best_layer([0.5, 0.7, 0.7, 0.6]) == 1  # the lowest index on a tie
    assert best_layer([None, 0.2, None]) == 1
    assert best_layer([None, None]) is None and best_layer([]) is None


def test_all_layers_are_cached_once(tmp_path):
    cache = Cache(tmp_path / "cache")
    TwoLayerWords.calls = 0
    task = Yisi2FilterLayers("yisi2_filter_layers", {"idf": "none"})
    first = task.evaluate(filter_data(), CachedModel(TwoLayerWords("w"), cache), CTX)
    assert TwoLayerWords.calls == 2  # one call per side
    again = task.evaluate(filter_data(), CachedModel(TwoLayerWords("w"), cache), CTX)
    assert TwoLayerWords.calls == 2 and again.per_seed == first.per_seed  # every layer from the cache
    single = Yisi2Filter("yisi2_filter", {"idf": "none"}).evaluate(
        filter_data(), CachedModel(TwoLayerWords("w"), cache), CTX
    )
    assert TwoLayerWords.calls == 4  # the single-layer vectors have their own key
    assert single.per_seed[0]["roc_auc"] == first.per_seed[0]["roc_auc@L1"]


def test_a_model_without_all_layers_is_a_clear_error():
    with pytest.raises(HarnessError, match="does not return the vectors of all its layers"):
        Yisi2FilterLayers("yisi2_filter_layers", {}).evaluate(
            filter_data(), CachedModel(OneLayerOnly("one"), None), CTX
        )


def test_sweep_equals_the_single_layer_task_at_every_layer_of_a_tiny_bert(tiny_encoder, multi30k_dir):
    from harness_tasks.yisi.filter_data import Multi30kFilterLoader

    data = (
        Multi30kFilterLoader("multi30k_filter")
        .load(str(multi30k_dir), {"src": "en", "tgt": "de", "split": "test_2016_flickr", "corruption_seed": 0})
        .data
    )
    top = 3
    sweep = Yisi2FilterLayers("yisi2_filter_layers", {}).evaluate(
        data, CachedModel(HFTokenEmbedder("tiny", {"pretrained": str(tiny_encoder), "layer": top}), None), CTX
    )
    assert sweep.per_seed[0]["layers"] == top + 1
    for layer in range(top + 1):
        single = Yisi2Filter("yisi2_filter", {}).evaluate(
            data, CachedModel(HFTokenEmbedder("tiny", {"pretrained": str(tiny_encoder), "layer": layer}), None), CTX
        )
        assert sweep.per_seed[0][f"roc_auc@L{layer}"] == pytest.approx(single.per_seed[0]["roc_auc"])
        assert [s["yisi2"][layer] for s in sweep.samples] == pytest.approx(
            [s["yisi2"] for s in single.samples], abs=1e-5
        )


def test_layer_plot_on_the_leaderboard(tmp_path):
    from leaderboard.builders import record

    from harness.leaderboard.merge import merge
    from harness.results.load import Entry
    from harness_tasks.yisi.plots import layer_plots

    args = {"src": "en", "tgt": "de"}
    swept = {"roc_auc@L0": 0.6, "roc_auc@L1": 0.8, "roc_auc@L2": None, "layers": 3.0}
    board = merge(
        [
            Entry(record("yisi2_filter_layers", "m", 0.8, args=args, extra_metrics=swept), tmp_path / "r.jsonl"),
            Entry(record("yisi2_filter", "m", 0.7, args=args), tmp_path / "r.jsonl"),
        ]
    )
    plots = layer_plots(board, tmp_path)
    assert [p.file for p in plots] == ["yisi_layers_yisi2_filter_layers_ikea_en-de.png"]  # none for yisi2_filter
    assert (tmp_path / plots[0].file).stat().st_size > 0
    sweep = next(r.record for r in board.results if r.record.task == "yisi2_filter_layers")
    assert layer_values(sweep.metrics, "roc_auc") == [0.6, 0.8, None]
    empty = merge([Entry(record("yisi2_filter_layers", "m", 0.8, args=args), tmp_path / "r.jsonl")])
    assert layer_plots(empty, tmp_path) == []  # a line without per-layer values draws nothing


def test_shards_together_compute_every_value_of_the_sweep_once(tmp_path):
    # under --shard a value another shard computes is a token-less stand-in: 2-D, with or without
    # an all-layers value at hand as template; the sweep must get through both sides anyway
    from harness.run.distributed import ShardPartition

    cache = Cache(tmp_path / "cache")
    task = Yisi2FilterLayers("yisi2_filter_layers", {"idf": "none"})
    placeholders = []
    for index in range(2):
        shard = CachedModel(TwoLayerWords("w"), cache, partition=ShardPartition(index, 2))
        task.evaluate(filter_data(), shard, CTX)
        placeholders.append(shard.placeholders)
    # the first shard stands in for the values of the second, the second finds the first's in the cache
    assert placeholders[0] > 0 and placeholders[1] == 0
    TwoLayerWords.calls = 0
    merged = task.evaluate(filter_data(), CachedModel(TwoLayerWords("w"), cache), CTX)
    assert TwoLayerWords.calls == 0  # both shards computed their share of both sides
    assert merged.per_seed == task.evaluate(filter_data(), CachedModel(TwoLayerWords("w"), None), CTX).per_seed


def test_a_sweep_over_stand_ins_only_scores_zero_layers():
    # a shard holding no value at all (no template for the stand-ins' shape) still asks for both sides
    from harness.run.distributed import ShardPartition

    class ComputesNothing(ShardPartition):
        def mine(self, keys):
            return []

    model = CachedModel(TwoLayerWords("w"), None, partition=ComputesNothing(0, 2))
    out = Yisi2StsLayers("yisi2_sts_layers", {}).evaluate(
        datasets.Dataset.from_dict({"id": ["a"], "sentence1": ["x y"], "sentence2": ["z"], "score": [1.0]}), model, CTX
    )
    assert (
        model.placeholders == 2
        and out.per_seed[0]["layers"] == 0.0
        and out.samples == [{"id": "a", "gold": 1.0, "yisi2": []}]
    )
