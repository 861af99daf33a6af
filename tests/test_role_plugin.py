"""Issue 35's test: a plugin, written with the public API only, joins the xlr role of the retrieval family with a
task of its own on its own data (a JSONL file), and meta, calibrate, g-sweep, compare and the leaderboard's
meta-evaluation read it as they read the built-in xlr, without it declaring arguments it does not use
(no dataset, n, ties, split, retrieval or csls_k; its languages and cut-off under names of its own)."""

from __future__ import annotations

import json
import re
import textwrap
from importlib.metadata import EntryPoint

import numpy as np
import pytest
from fixtures.oracles import oracles
from fixtures.registries import project_entry_points

import harness
import harness.plugins.registry
from harness.cli import main
from harness.plugins.registry import build_registry

ITEMS = 12
PAIRS = (("de", "fr"), ("fr", "de"))
RUNS = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:.*every seed would evaluate the same")]

PLUGIN = '''
"""pairs_plugin: an xlr-like task over any JSONL of parallel texts (``text_<lang>`` columns)."""

import numpy as np

from harness import Capability, Metric, Param, Task, TaskOutput, hookimpl


def _chance(values):
    return min(values["cutoff"] / values["n_used"], 1.0)


class PairXlr(Task):
    """Recall@cutoff of each source's own target among all targets (cosine), MRR and median rank."""

    family = "retrieval"
    role = "xlr"
    dataset = "files"
    requires = (Capability.TEXT_ENCODER,)
    main_metric = "recall@k"
    params = {
        "source_lang": Param("de", "language of the queries", meaning="lang.source"),
        "target_lang": Param("fr", "language of the candidates", meaning="lang.target"),
        "cutoff": Param(1, "a hit is a rank at most this", min=1, meaning="retrieval.k"),
    }
    metrics = (
        Metric("recall@k", "R@{cutoff}", True, _chance, "mean:hit", "own target within the first {cutoff}"),
        Metric("mrr", "MRR", True, None, "mean:rr", "mean reciprocal rank of the own target"),
        Metric("median_rank", "median rank", False, None, None, "median rank of the own target"),
    )

    def evaluate(self, data, model, ctx):
        src, tgt = self.args["source_lang"], self.args["target_lang"]
        a = np.asarray(model.encode_texts(list(data[f"text_{src}"]), lang=src), dtype=float)
        b = np.asarray(model.encode_texts(list(data[f"text_{tgt}"]), lang=tgt), dtype=float)
        a /= np.linalg.norm(a, axis=1, keepdims=True)
        b /= np.linalg.norm(b, axis=1, keepdims=True)
        similarity = a @ b.T
        own = np.diag(similarity)
        ranks = 1 + (similarity > own[:, None]).sum(axis=1)
        samples = [
            {"id": str(i), "rank": int(r), "hit": float(r <= self.args["cutoff"]), "rr": 1.0 / float(r)}
            for i, r in zip(data["id"], ranks)
        ]
        metrics = {
            "recall@k": float(np.mean([s["hit"] for s in samples])),
            "mrr": float(np.mean([s["rr"] for s in samples])),
            "median_rank": float(np.median(ranks)),
        }
        return TaskOutput([metrics], samples, {"n_used": len(ranks)})


@hookimpl
def register_tasks(register):
    register("pair_xlr", "pairs_plugin:PairXlr", "Recall@k of parallel texts in a JSONL file (an xlr-like task).")
'''


ENCODERS = oracles(ITEMS)


def _data(path):
    features = np.eye(ITEMS) + np.random.default_rng(0).random((ITEMS, ITEMS)) * 0.3
    rows = [
        {"id": f"item{i}", "text_de": f"de Ding {i}", "text_fr": f"fr chose {i}", "feat": features[i].tolist()}
        for i in range(ITEMS)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _args(src, tgt):
    """The run's task arguments: the built-in tasks read the file through image-text, the plugin's through files."""
    mapped = "image_features:feat"
    return {
        "src": src,
        "tgt": tgt,
        "k": 1,
        "pair_xlr.source_lang": src,
        "pair_xlr.target_lang": tgt,
        "backretrieval.dataset": "image-text",
        "corr.dataset": "image-text",
        "backretrieval.columns": mapped,
        "corr.columns": mapped,
    }


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    """The plugin on sys.path with its entry point, in the process-wide registry; its data; its results."""
    root = tmp_path_factory.mktemp("plugin")
    (root / "pairs_plugin.py").write_text(textwrap.dedent(PLUGIN))
    data = _data(root / "pairs.jsonl")
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(root))
        registry = build_registry([*project_entry_points(), EntryPoint("pairs", "pairs_plugin", "harness")])
        patch.setattr(harness.plugins.registry, "_REGISTRY", registry)
        for encoder in ENCODERS:
            for src, tgt in PAIRS:
                harness.evaluate(
                    ["pair_xlr", "backretrieval", "corr"],
                    encoder,
                    data_dir=str(data),
                    task_args=_args(src, tgt),
                    seeds=3,
                    output=str(root / "results"),
                    log_samples=True,
                    resamples=0,
                )
        yield root, data, registry


def test_the_plugin_imports_only_harness_and_meets_its_role_s_contract(plugin):
    root, _, registry = plugin
    imports = re.findall(r"^\s*(?:from|import) (\S+)", (root / "pairs_plugin.py").read_text(), re.M)
    assert sorted(set(imports)) == ["harness", "numpy"]
    assert not [w for w in registry.warnings if "pair_xlr" in w]  # no contract gap, no typo


@RUNS[0]
@RUNS[1]
def test_its_lines_record_the_role_and_the_meaning_of_each_argument(plugin):
    root, _, _ = plugin
    records, problems = harness.read_records(root / "results" / "results.jsonl")
    mine = [r for r in records if r.task == "pair_xlr"]
    assert problems == [] and len(mine) == len(ENCODERS) * len(PAIRS)
    assert (mine[0].family, mine[0].role) == ("retrieval", "xlr")
    assert mine[0].arg_meanings == {
        "source_lang": "lang.source",
        "target_lang": "lang.target",
        "cutoff": "retrieval.k",
    }
    assert "n" not in mine[0].task_args and "ties" not in mine[0].task_args
    mrr = {(r.model["name"], r.task_args["source_lang"]): r.metrics["mrr"] for r in mine}
    assert all(mrr["sharp", src] > mrr["blind", src] for src, _ in PAIRS)  # the better oracle ranks better


@RUNS[0]
@RUNS[1]
def test_meta_and_its_plot_read_the_plugin_s_task_as_xlr(plugin, tmp_path, capsys):
    root, _, _ = plugin
    assert main(["meta", str(root / "results"), "--output", str(tmp_path / "m"), "--select", "src=de,tgt=fr"]) == 0
    result = json.loads((tmp_path / "m" / "meta.json").read_text())
    assert result["direction"] == "de-fr" and len(result["models"]) == len(ENCODERS)
    assert set(result["correlations"]) == {"backretrieval", "corr"} and result["k"] == 1
    assert result["signatures"]["xlr"].startswith("xlr|")  # named by the role
    assert main(["meta", str(root / "results"), "--output", str(tmp_path / "both")]) == 0  # both directions
    both = json.loads((tmp_path / "both" / "meta.json").read_text())
    assert set(both["directions"]) == {"de-fr", "fr-de"} and "skipped" not in both["directions"]["fr-de"]


@RUNS[0]
@RUNS[1]
def test_calibrate_fits_and_applies_with_the_plugin_s_task_as_xlr(plugin, tmp_path, capsys):
    root, _, _ = plugin
    calibration = tmp_path / "c.json"
    assert main(["calibrate", "fit", str(root / "results"), "--output", str(calibration)]) == 0
    fitted = json.loads(calibration.read_text())
    assert fitted["scope"]["k"] == 1 and len(fitted["provenance"]["points"]) == len(ENCODERS) * len(PAIRS)
    assert main(["calibrate", "apply", str(calibration), str(root / "results")]) == 0
    assert "estimated XLR R@1" in capsys.readouterr().out


@RUNS[0]
@RUNS[1]
def test_compare_pairs_two_models_on_the_plugin_s_task_by_its_role(plugin, capsys):
    root, _, _ = plugin
    argv = ["compare", "sharp", "blind", "--task", "xlr", "--results", str(root / "results"), "--json"]
    assert main([*argv, "--select", "src=de,tgt=fr"]) == 0  # selected by the conventional names of its meanings
    compared = json.loads(capsys.readouterr().out)
    assert compared["task"] == "xlr" and compared["task_signature"].startswith("pair_xlr|")
    assert compared["metric"] == "recall@k" and compared["units"] == ITEMS
    assert compared["recorded_a"] > compared["recorded_b"]  # sharp over blind, recomputed from the samples


@RUNS[0]
@RUNS[1]
def test_the_leaderboard_s_meta_section_pairs_the_plugin_s_xlr(plugin, tmp_path):
    root, _, _ = plugin
    assert main(["leaderboard", str(root / "results"), "--output", str(tmp_path / "board"), "--no-plots"]) == 0
    readme = (tmp_path / "board" / "README.md").read_text()
    assert "Meta-evaluation, files de-fr test" in readme and "Meta-evaluation, files fr-de test" in readme
    assert "columns left out" not in readme
    # a backretrieval column no xlr pairs with (another cut-off) is named with the reason, not dropped silently
    _, data, _ = plugin
    args = {"src": "de", "tgt": "fr", "k": 2, "dataset": "image-text", "columns": "image_features:feat"}
    harness.evaluate(
        "backretrieval", ENCODERS[0], data_dir=str(data), task_args=args, seeds=3, output=str(tmp_path / "r")
    )
    assert (
        main(["leaderboard", str(root / "results"), str(tmp_path / "r"), "-o", str(tmp_path / "b2"), "--no-plots"]) == 0
    )
    readme = (tmp_path / "b2" / "README.md").read_text()
    assert "Meta-evaluation: columns left out" in readme
    assert "(image-text de-fr test): no xlr column pairs with it (different cutoff / k (retrieval.k: 1 vs 2)" in readme


@RUNS[0]
@RUNS[1]
def test_g_sweep_runs_the_plugin_s_task_on_its_own_data(plugin, tmp_path, capsys):
    _, data, _ = plugin
    out = tmp_path / "sweep"
    models = ["random-encoder", "tfidf-char", "random-encoder:seed=1"]
    argv = ["g-sweep", "--tasks", "pair_xlr,backretrieval,corr", "--data-dir", str(data)]
    argv += [a for m in models for a in ("--model", m)]
    args = ",".join(f"{k}={v}" for k, v in _args("de", "fr").items())
    argv += ["--task-args", args, "--noise", "4", "--truncate", "1", "--seeds", "2", "--k", "1", "--output", str(out)]
    assert main(argv) == 0
    summary = json.loads((out / "sweep.json").read_text())
    assert summary["tasks"] == ["pair_xlr", "backretrieval", "corr"] and summary["task_args"]["pair_xlr.cutoff"] == 1
    levels = {row["condition"]: row for row in summary["levels"]}
    assert list(levels) == ["clean", "noise-4", "truncate-1"] and levels["clean"]["agreement"] == 1.0
    for level in levels:
        records, _ = harness.read_records(out / level / "results.jsonl")
        assert {r.task for r in records} == {"pair_xlr", "backretrieval", "corr"}  # the plugin's task, not xlr
        assert len({r.dataset["revision"] for r in records}) == 1  # one level's data: its tasks pair
    assert levels["truncate-1"]["bkr"] != levels["clean"]["bkr"]  # the degraded features reached backretrieval
