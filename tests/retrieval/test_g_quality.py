"""``harness g-sweep``: degradations, g's neighbour and rank agreement by hand, and one tiny end-to-end sweep."""

from __future__ import annotations

import argparse
import json
import re

import numpy as np
import pytest
from retrieval.builders import write_ikea

from harness.cli import main
from harness.errors import HarnessError
from harness_tasks.retrieval.analysis import meta
from harness_tasks.retrieval.analysis.g_quality import (
    COMMAND,
    Degradation,
    ModelSpec,
    neighbour_agreement,
    rank_agreement,
)

# two tight pairs: a ~ b and c ~ d (cos .98), across the pairs cos 0 to .385
A, B, C, D = (1.0, 0.0), (1.0, 0.2), (0.0, 1.0), (0.2, 1.0)
REFERENCE = np.array([A, B, C, D])


def test_neighbour_agreement_by_hand():
    assert neighbour_agreement(REFERENCE, REFERENCE, k=1) == 1.0
    # b's and c's vectors swapped: every image's nearest neighbour is now from the other pair
    assert neighbour_agreement(REFERENCE, np.array([A, C, B, D]), k=1) == 0.0
    # a constant g ties everything: k / (N - 1)
    assert neighbour_agreement(REFERENCE, np.ones((4, 2)), k=1) == pytest.approx(1 / 3)
    # a: b ties with c (cos 0) -> 1/2; b: c is better than a -> 0; c: b is better than d -> 0; d: c ties with b -> 1/2
    assert neighbour_agreement(REFERENCE, np.array([(1, 0), (0, 1), (0, 1), (-1, 0)]), k=1) == pytest.approx(0.25)
    with pytest.raises(HarnessError, match="1 <= k < N - 1"):
        neighbour_agreement(REFERENCE, REFERENCE, k=3)


def test_rank_agreement_by_hand():
    assert rank_agreement(REFERENCE, REFERENCE) == pytest.approx(1.0)
    # per image, Spearman of its cosines to the other three before and after the swap: -1, -1/2, -1/2, +1/2
    assert rank_agreement(REFERENCE, np.array([A, C, B, D])) == pytest.approx(-0.375)
    assert rank_agreement(REFERENCE, np.ones((4, 2))) is None


def test_degradations():
    features = np.array([[3.0, 4.0], [0.0, 1.0]])
    z = np.random.default_rng(7).standard_normal((2, 2))
    noisy = Degradation("noise", 2).apply(features, seed=7)
    # ratio 2 of the norm (5 and 1), spread over sqrt(2) dimensions
    assert noisy == pytest.approx(features + 2 * np.array([[5.0], [1.0]]) / np.sqrt(2) * z)
    assert Degradation("noise", 0).apply(features) == pytest.approx(features)
    assert Degradation("truncate", 1).apply(features).tolist() == [[3.0], [0.0]]
    assert [Degradation(*c).label for c in (("clean", 0), ("noise", 0.5), ("truncate", 64))] == [
        "clean",
        "noise-0.5",
        "truncate-64",
    ]
    with pytest.raises(HarnessError, match=re.escape("whole number of dimensions in 1..2")):
        Degradation("truncate", 3).apply(features)
    with pytest.raises(HarnessError, match="at least 0"):
        Degradation("noise", -1).apply(features)
    assert ModelSpec.parse("e5-small-hf:pooling=cls;normalize=false") == ModelSpec(
        "e5-small-hf", "pooling=cls,normalize=false"
    )


def test_the_default_sweep_truncates_down_to_one_dimension():
    parser = argparse.ArgumentParser()
    COMMAND.add_arguments(parser)
    args = parser.parse_args(["--data-dir", "ikea", "--model", "tfidf-char"])
    assert [float(v) for v in args.truncate.split(",")] == [512, 128, 32, 8, 2, 1]
    # IKEA's features are non-negative (pooled ReLU outputs): one dimension leaves a constant g, agreement at chance
    features = np.abs(np.random.default_rng(0).standard_normal((12, 8))) + 0.1
    one = Degradation("truncate", 1).apply(features)
    assert one.shape == (12, 1) and neighbour_agreement(features, one, k=2) == pytest.approx(2 / 11)


def test_a_tiny_sweep_end_to_end(tmp_path, capsys):
    features = np.array(
        [[1, 0, 0, 0], [1, 0.2, 0, 0], [0, 1, 0, 0], [0, 1, 0.2, 0], [0, 0, 1, 0], [0, 0, 1, 0.2]], dtype=np.float32
    )
    data = write_ikea(tmp_path / "ikea", features=features)
    out = tmp_path / "sweep"
    assert (
        main(
            [
                "g-sweep",
                "--data-dir",
                str(data),
                "--model",
                "random-encoder",
                "--model",
                "tfidf-char",
                "--model",
                "random-encoder:seed=1",
                "--noise",
                "1",
                "--truncate",
                "1",
                "--seeds",
                "2",
                "--k",
                "1",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    table = capsys.readouterr().out
    summary = json.loads((out / "sweep.json").read_text())
    levels = {row["condition"]: row for row in summary["levels"]}
    assert list(levels) == ["clean", "noise-1", "truncate-1"] and (out / "g_sweep.png").stat().st_size > 0
    assert levels["clean"]["agreement"] == 1.0
    # one dimension: 1, 1, 0, 0, 0, 0; the first two keep each other (cos 1), each zero row ties its neighbour
    # with the other four (cos 0): agreement (1 + 1 + 4 / 5) / 6
    assert levels["truncate-1"]["agreement"] == pytest.approx((2 + 4 / 5) / 6)
    # the correlations are harness meta's on that level's results
    clean = meta.meta_evaluate(meta.group_models(meta.load_records([str(out / "clean")])))
    assert levels["clean"]["correlations"] == json.loads(json.dumps(clean["correlations"]))
    assert table.splitlines()[1].startswith("clean") and np.load(
        data / "en.de" / "test.image_features.npy"
    ) == pytest.approx(features)


def _sweep(args, out):
    common = ["--model", "random-encoder", "--model", "tfidf-char", "--model", "random-encoder:seed=1"]
    levels = ["--noise", "1", "--truncate", "1", "--seeds", "2", "--k", "1", "--output", str(out)]
    assert main(["g-sweep", *args, *common, *levels]) == 0
    return json.loads((out / "sweep.json").read_text())["levels"]


def test_a_user_s_preset_sweeps_as_its_data_folder_does(tmp_path, monkeypatch):
    """Issue 22: a retrieval preset in the user's folder, with a relative source, run from another directory."""
    features = np.array(
        [[1, 0, 0, 0], [1, 0.2, 0, 0], [0, 1, 0, 0], [0, 1, 0.2, 0], [0, 0, 1, 0], [0, 0, 1, 0.2]], dtype=np.float32
    )
    presets = tmp_path / "mine"
    data = write_ikea(presets / "data", features=features)
    (presets / "p.yaml").write_text(
        "name: my_en_de_corr\nbase: corr\ndataset:\n  loader: ikea\n  source: data\n  split: test\n"
        "args: {src: en, tgt: de}\n",
        encoding="utf-8",
    )
    direct = _sweep(["--data-dir", str(data)], tmp_path / "direct")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    through_preset = _sweep(["--preset", "my_en_de_corr", "--include-path", str(presets)], tmp_path / "preset")
    assert [row["condition"] for row in through_preset] == ["clean", "noise-1", "truncate-1"]
    assert [row["correlations"] for row in through_preset] == [row["correlations"] for row in direct]
    assert [row["agreement"] for row in through_preset] == [row["agreement"] for row in direct]
    tasks = {r.task for r in meta.load_records([str(tmp_path / "preset" / "noise-1")])}
    assert tasks == {"xlr", "backretrieval", "my_en_de_corr"}  # the preset itself plays corr (issue 35)


def test_a_preset_of_another_family_is_refused(tmp_path, capsys):
    assert main(["g-sweep", "--preset", "commute_en_fr_tc", "--model", "a", "--model", "b", "--model", "c"]) == 2
    assert "g-sweep needs an xlr-, backretrieval- or corr-like task" in capsys.readouterr().err
