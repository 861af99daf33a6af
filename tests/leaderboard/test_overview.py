"""The answer first (issue 24.1): per family, data set and direction, the best model, the runner-up and
whether the gap is real; a family fixed by construction collapsed under one sentence."""

from __future__ import annotations

from pathlib import Path

from leaderboard.builders import record, with_samples, write_results

from harness.cli import main
from harness.leaderboard.merge import merge
from harness.leaderboard.overview import overview
from harness.leaderboard.tables import family_tables
from harness.results.load import Entry, load_entries

INFO = {"recall@k": {"display": "R@10", "higher_is_better": True, "chance": 0.1, "statistic": "mean:hit"}}


def xlr(model: str, value: float, low: float | None = None, high: float | None = None):
    item = record("xlr", model, value)
    item.metric_info = INFO
    if low is not None:
        item.intervals = {"recall@k": {"low": low, "high": high, "confidence": 0.95, "units": 100}}
    return item


def lines_of(*records):
    board = merge([Entry(r, Path("results.jsonl")) for r in records])
    return board, overview(board, family_tables(board))


def test_best_and_runner_up_with_intervals_that_do_not_overlap():
    _, found = lines_of(xlr("c", 0.5, 0.45, 0.55), xlr("a", 0.9, 0.85, 0.95), xlr("b", 0.7, 0.65, 0.75))
    (family,) = found
    assert family.family.name == "retrieval" and family.models == 3 and family.collapsed is None
    (line,) = family.lines
    assert line.title == "ikea test en→de" and line.header == "R@10"
    assert (line.best[0], line.best[1].text) == ("a", "0.9000 [0.8500, 0.9500]")
    assert (line.runner_up[0], line.runner_up[1].text) == ("b", "0.7000 [0.6500, 0.7500]")
    assert line.gap == "No per-item samples for a paired test; the two intervals over items do not overlap."


def test_overlapping_intervals_do_not_claim_a_difference():
    _, found = lines_of(xlr("a", 0.9, 0.8, 0.95), xlr("b", 0.85, 0.75, 0.9))
    assert found[0].lines[0].gap == (
        "No per-item samples for a paired test; the two intervals over items overlap, so the gap is not shown to be real."
    )


def test_a_single_model_and_a_tie():
    _, alone = lines_of(xlr("a", 0.9))
    assert alone[0].lines[0].runner_up is None and alone[0].lines[0].gap == "The only model with a value here."
    _, tied = lines_of(xlr("b", 0.9, 0.8, 1.0), xlr("a", 0.9, 0.8, 1.0))
    line = tied[0].lines[0]
    assert (line.best[0], line.runner_up[0]) == ("a", "b")  # the table's order: by label on equal values
    assert line.gap == "Tied at 0.9000: no per-item samples for a paired test."


def test_the_paired_bootstrap_over_the_logged_samples_decides_the_gap(tmp_path):
    folder = tmp_path / "results"
    ids = [f"s{i}" for i in range(40)]
    # a hits the first 30 items, b the first 10: a - b = 20/40 = +0.5, every differing item in a's favour
    first = xlr("a", 0.75, 0.6, 0.87)
    second = xlr("b", 0.25, 0.12, 0.38)
    with_samples(folder, first, [{"id": i, "hit": float(n < 30)} for n, i in enumerate(ids)], "samples_a.jsonl")
    with_samples(folder, second, [{"id": i, "hit": float(n < 10)} for n, i in enumerate(ids)], "samples_b.jsonl")
    write_results(folder, [first, second])
    entries, _ = load_entries([str(folder)])
    board = merge(entries)
    (line,) = overview(board, family_tables(board))[0].lines
    assert line.gap.startswith("a − b: +0.5000, 95% interval [+0.")
    assert "(paired bootstrap over 40 items, p < 0.001); a is better at 95%." in line.gap


def commute_lines(model: str):
    """A text-only scorer on CoMMuTE: TC 0.5 and GTC 0 by construction, IC and GIC undefined."""
    args = {"lang": "de", "ties": "wrong", "temperature": 1.0}
    found = []
    for task, value in (("commute_tc", 0.5), ("commute_ic", None), ("commute_gtc", 0.0), ("commute_gic", None)):
        item = record(task, model, [value], args=args)
        if value is None:
            item.undefined = {item.main_metric: "the scorer ignores the image"}
        else:
            item.warnings = [f"{task}: TC = 0.5 and GTC = 0, the values a text-only scorer gets by construction"]
        found.append(item)
    return found


def test_a_family_fixed_by_construction_is_collapsed_under_one_sentence_and_comes_last(tmp_path):
    _, found = lines_of(*commute_lines("gemma"), xlr("a", 0.9), xlr("b", 0.8))
    assert [f.family.name for f in found] == ["retrieval", "commute"]  # two models compared before one
    assert found[1].collapsed == (
        "CoMMuTE: its only model (gemma) gets values fixed by construction or undefined (n/a), so nothing is "
        "compared. TC = 0.5 and GTC = 0, the values a text-only scorer gets by construction."
    )
    write_results(tmp_path / "results", [*commute_lines("gemma"), xlr("a", 0.9), xlr("b", 0.8)])
    assert main(["leaderboard", str(tmp_path / "results"), "-o", str(tmp_path / "board"), "--no-plots"]) == 0
    readme = (tmp_path / "board" / "README.md").read_text(encoding="utf-8")
    overview_part = readme.split("## Overview")[1].split("\n## ")[0]
    assert (
        "### Image-pivoted retrieval (2 models)" in overview_part
        and "| ikea test en→de | R@10 | **a** 0.9000 | b" in overview_part
    )
    assert "- CoMMuTE: its only model (gemma) gets values fixed" in overview_part and "### CoMMuTE" not in overview_part
    assert "## CoMMuTE\n\n<details>\n<summary>CoMMuTE: its only model" in readme
    page = (tmp_path / "board" / "index.html").read_text(encoding="utf-8")
    assert page.index('<div class="filters">') < page.index('id="family-retrieval"') < page.index('id="family-commute"')
    commute = page.split('id="family-commute"')[1]
    assert '<tbody class="apart">' in commute and "values fixed by construction or undefined: not ranked" in commute
    assert '<tbody class="ranked">' not in commute  # nothing of it is ranked, so nothing is named best


def test_a_family_with_one_informative_model_is_not_collapsed():
    lines = commute_lines("gemma")
    lines[0].warnings = []  # this TC is the model's own number
    _, found = lines_of(*lines)
    assert found[0].collapsed is None and found[0].lines[0].best[0] == "gemma"


def test_a_paired_difference_whose_interval_holds_zero_is_not_called_significant(tmp_path):
    folder = tmp_path / "results"
    ids = [f"s{i}" for i in range(40)]
    # a hits items 0-20, b items 1-21: one item each way, a - b = 0 exactly
    first, second = xlr("a", 21 / 40), xlr("b", 21 / 40)  # equal: the table puts a first by its label
    with_samples(folder, first, [{"id": i, "hit": float(n <= 20)} for n, i in enumerate(ids)], "samples_a.jsonl")
    with_samples(folder, second, [{"id": i, "hit": float(1 <= n <= 21)} for n, i in enumerate(ids)], "samples_b.jsonl")
    write_results(folder, [first, second])
    board = merge(load_entries([str(folder)])[0])
    (line,) = overview(board, family_tables(board))[0].lines
    assert line.gap.startswith("a − b: +0.0000, 95% interval [-0.")
    assert line.gap.endswith("(paired bootstrap over 40 items, p = 1.000); the difference is not significant at 95%.")


def test_a_collapsed_family_comes_after_an_informative_one_with_as_many_models():
    _, found = lines_of(*commute_lines("gemma"), record("yisi2_sts", "e5", 0.7, args={"src": "en", "tgt": "de"}))
    assert [(f.family.name, f.collapsed is None) for f in found] == [("yisi", True), ("commute", False)]


def test_models_tied_with_the_best_are_named_and_the_runner_up_is_the_next_other_value():
    _, found = lines_of(xlr("a", 0.9, 0.8, 1.0), xlr("b", 0.9, 0.8, 1.0), xlr("c", 0.5, 0.45, 0.55))
    (line,) = found[0].lines
    assert (line.best[0], line.runner_up[0]) == ("a", "c")
    assert line.gap == (
        "Tied with b at 0.9000; the runner-up is the next model with another value. "
        "No per-item samples for a paired test; the two intervals over items do not overlap."
    )


def test_a_table_fixed_by_construction_says_so_and_comes_after_the_informative_ones():
    fixed = commute_lines("text-only")  # its own data set (commute en→de): TC 0.5 by construction
    shapes = []
    for model, value in (("mmt", 0.95), ("text-only", 0.5)):
        args = {"lang": "de", "ties": "wrong", "temperature": 1.0}
        item = record("commute_tc", model, [value], args=args, data_revision="sha256:shapes")
        item.dataset = {**item.dataset, "source": "/sets/xling-shapes-commute"}
        if model == "text-only":
            item.warnings = ["commute_tc: TC = 0.5 and GTC = 0, the values a text-only scorer gets by construction"]
        shapes.append(item)
    _, found = lines_of(*fixed, *shapes)
    (family,) = found
    assert family.collapsed is None
    first, *rest = family.lines
    assert first.best[0] == "mmt" and first.runner_up is None  # the text-only model's fixed TC does not compete
    assert first.gap == "No other model competes: the values of text-only are fixed by construction."
    assert rest and all(line.gap.startswith("Nothing to compare. TC = 0.5 and GTC = 0") for line in rest)
