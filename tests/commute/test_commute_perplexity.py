"""``harness commute-perplexity``: per-tuple perplexities from CoMMuTE per-sample logs, by hand on two tiny tuples."""

from __future__ import annotations

import json
import math
import shutil
from argparse import Namespace
from pathlib import Path

import pytest
from commute.fakes import RedScorer, TextOnlyCharScorer, run_task, solid_images
from commute.mmt_builders import write_commute

from harness.cli import main
from harness.errors import DataError, HarnessError
from harness_tasks.commute.data import CommuteLoader
from harness_tasks.commute.perplexity import COMMAND, figure3_series, ic_points, read_tables, run_tables, tc_points
from harness_tasks.commute.tasks import CommuteConsistency, CommuteIC, CommuteTC

COMMITTED = Path(__file__).resolve().parents[2] / "leaderboard" / "results" / "commute"

E = math.exp


def flat(points):
    return [value for point in points for value in point]


@pytest.fixture
def two_tuples(tmp_path):
    """Tuple 1: x#10 / y#200 with images of red 20 / 190; tuple 2: x#100 / y#150 with red 160 / 140."""
    lines = [
        ("s", "x#10", "y#200", "a.png"),
        ("s", "y#200", "x#10", "b.png"),
        ("t", "x#100", "y#150", "c.png"),
        ("t", "y#150", "x#100", "d.png"),
    ]
    data_dir = write_commute(tmp_path / "data", lines)
    images = solid_images(tmp_path / "images", {"a.png": 20, "b.png": 190, "c.png": 160, "d.png": 140})
    return CommuteLoader("commute").load(str(data_dir), {"lang": "fr"}, images_dir=str(images)).data


def write_samples(path, output):
    path.write_text("".join(json.dumps(sample) + "\n" for sample in output.samples), encoding="utf-8")
    return path


def test_tc_and_ic_points_by_hand(two_tuples, tmp_path):
    # RedScorer: perplexity of '...#N' under an image of red r is exp(|r - N| / 100)
    tc = write_samples(tmp_path / "tc.jsonl", run_task(CommuteTC("commute_tc"), two_tuples, RedScorer("r")))
    ic = write_samples(tmp_path / "ic.jsonl", run_task(CommuteIC("commute_ic"), two_tuples, RedScorer("r")))
    assert ic_points(read_tables(tc)) == []  # a TC log has no translation under the other image
    tables = read_tables(ic, read_tables(tc))
    # correct vs incorrect per image: t1 a: |20-10|, |20-200|; b: |190-200|, |190-10|; t2 c: |160-100|, |160-150|; d: |140-150|, |140-100|
    assert flat(tc_points(tables)) == pytest.approx(
        flat([(E(0.1), E(1.8)), (E(0.1), E(1.8)), (E(0.6), E(0.1)), (E(0.1), E(0.4))])
    )
    # own vs other image per translation: t1 x#10 under 20 / 190, y#200 under 190 / 20; t2 x#100 under 160 / 140, y#150 under 140 / 160
    assert flat(ic_points(tables)) == pytest.approx(
        flat([(E(0.1), E(1.8)), (E(0.1), E(1.8)), (E(0.6), E(0.4)), (E(0.1), E(0.1))])
    )


def test_a_text_only_scorer_is_identical_under_both_images(two_tuples, tmp_path):
    out = run_task(CommuteIC("commute_ic"), two_tuples, TextOnlyCharScorer("c"))
    points = ic_points(read_tables(write_samples(tmp_path / "ic.jsonl", out)))
    assert len(points) == 4 and all(x == y for x, y in points)


def test_unscored_slots_are_left_out_and_bad_logs_fail(tmp_path):
    log = tmp_path / "s.jsonl"
    log.write_text(json.dumps({"id": 1, "ppl": {"a|a": 2.0, "a|inc_a": None, "b|b": 3.0, "b|inc_b": 4.0}}) + "\n")
    assert tc_points(read_tables(log)) == [(3.0, 4.0)]
    log.write_text(json.dumps({"id": 1, "tc_ab": 1}) + "\n")
    with pytest.raises(DataError, match="has no 'id' and 'ppl'"):
        read_tables(log)
    with pytest.raises(HarnessError, match="neither a samples file, a results file nor a results folder"):
        COMMAND.run(Namespace(results=[str(tmp_path / "missing")], output=str(tmp_path / "p.png")))


def test_the_command_writes_one_row_per_run(two_tuples, tmp_path, capsys):
    red = write_samples(tmp_path / "red.jsonl", run_task(CommuteIC("commute_ic"), two_tuples, RedScorer("r")))
    blind = write_samples(
        tmp_path / "blind.jsonl", run_task(CommuteIC("commute_ic"), two_tuples, TextOnlyCharScorer("c"))
    )
    from PIL import Image

    assert COMMAND.run(Namespace(results=[str(red)], output=str(tmp_path / "one.png"))) == 0
    assert COMMAND.run(Namespace(results=[str(red), str(blind)], output=str(tmp_path / "two.png"))) == 0
    with Image.open(tmp_path / "one.png") as one, Image.open(tmp_path / "two.png") as two:
        assert one.size[0] == two.size[0] and two.size[1] > 1.8 * one.size[1]  # one row of panels per run
    assert "wrote" in capsys.readouterr().out


def test_figure3_series_by_hand(two_tuples, tmp_path):
    # WMT 2024 Figure 3: each correct translation under its correct image, the incorrect image and the 50/50 mix
    # (RedScorer: perplexity exp(|red - N| / 100); mixed red = mean of the two images' reds: 105 and 150)
    tc = write_samples(tmp_path / "tc.jsonl", run_task(CommuteTC("commute_tc"), two_tuples, RedScorer("r")))
    ic = write_samples(tmp_path / "ic.jsonl", run_task(CommuteIC("commute_ic"), two_tuples, RedScorer("r")))
    mix = write_samples(
        tmp_path / "mix.jsonl", run_task(CommuteConsistency("commute_consistency"), two_tuples, RedScorer("r"))
    )
    only_tc = figure3_series(read_tables(tc))
    assert only_tc["correct image"] == pytest.approx([E(0.1), E(0.1), E(0.6), E(0.1)])
    assert only_tc["incorrect image"] == [] and only_tc["mixed image"] == []
    series = figure3_series(read_tables(mix, read_tables(ic, read_tables(tc))))
    # tuple 1: x#10 under 20 / 190 / 105, y#200 under 190 / 20 / 105; tuple 2: x#100 under 160 / 140 / 150,
    # y#150 under 140 / 160 / 150
    assert series["correct image"] == pytest.approx([E(0.1), E(0.1), E(0.6), E(0.1)])
    assert series["incorrect image"] == pytest.approx([E(1.8), E(1.8), E(0.4), E(0.1)])
    assert series["mixed image"] == pytest.approx([E(0.95), E(0.95), E(0.5), 1.0])
    assert COMMAND.run(Namespace(results=[str(tc), str(ic), str(mix)], output=str(tmp_path / "f.png"))) == 0


def test_a_duplicate_tuple_id_is_refused_naming_the_lines(tmp_path):
    log = tmp_path / "s.jsonl"
    rows = [{"id": "7", "ppl": {"a|a": 2.0}}, {"id": "8", "ppl": {"a|a": 3.0}}, {"id": 7, "ppl": {"a|a": 4.0}}]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(DataError, match=r"tuple id '7' appears twice \(first on line 1\)") as caught:
        read_tables(log)
    assert caught.value.row == 3


def test_the_command_reads_a_results_file_and_its_samples_files(tmp_path, capsys):
    # the committed gemma-270m runs: commute_tc and commute_ic with samples, in three languages
    folder = shutil.copytree(COMMITTED, tmp_path / "commute")
    runs = run_tables(str(folder / "results.jsonl"))
    assert sorted(runs) == [f"gemma-270m (lang={lang},prefix_removal=False,ties=wrong)" for lang in ("cs", "de", "fr")]
    assert run_tables(str(folder)).keys() == runs.keys()
    de = runs["gemma-270m (lang=de,prefix_removal=False,ties=wrong)"]
    assert len(de) == 150 and all({"a|a", "a|inc_a", "b|a", "a|b"} <= set(t) for t in de.values())
    series = figure3_series(de)
    assert series["correct image"] == series["incorrect image"]  # a text-only scorer: the image changes nothing
    assert series["mixed image"] == []  # no commute_consistency log
    assert main(["commute-perplexity", str(folder / "results.jsonl"), "-o", str(tmp_path / "p.png")]) == 0
    captured = capsys.readouterr()
    assert "wrote" in captured.out
    assert "missing" not in captured.err  # every log the committed results name is committed beside them
    gtc = sorted(folder.glob("samples_commute_gtc_*.jsonl"))[0]
    gtc.unlink()  # a log the figure does not read: a warning naming it
    assert main(["commute-perplexity", str(folder / "results.jsonl"), "-o", str(tmp_path / "p2.png")]) == 0
    assert gtc.name in capsys.readouterr().err
    for log in folder.glob("samples_commute_*.jsonl"):
        log.unlink()
    assert main(["commute-perplexity", str(folder / "results.jsonl"), "-o", str(tmp_path / "q.png")]) == 2
    err = capsys.readouterr().err
    assert "samples_commute_" in err and "missing" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["commute-perplexity", str(empty), "-o", str(tmp_path / "r.png")]) == 2
    assert "holds no results.jsonl" in capsys.readouterr().err
