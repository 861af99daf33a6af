"""The ranked tables: Holm's procedure, WMT-style clusters of shared ranks, the mean's interval, the paired test from
cached resamples, controls, twins and models run on fewer directions (hand-computed cases)."""

from __future__ import annotations

from pathlib import Path

import pytest
from leaderboard.builders import record, with_samples, write_results

from harness.leaderboard.compare import compare
from harness.leaderboard.merge import merge
from harness.leaderboard.ranking import (
    APART,
    CONTROL,
    NOTHING,
    OVERLAP,
    PAIRED,
    RANKED,
    RankedRow,
    Samples,
    clusters,
    combined_p,
    holm,
    mean_interval,
    rankings,
)
from harness.leaderboard.tables import Cell
from harness.results.bootstrap import Bootstrap
from harness.results.load import load_entries


def test_holm_rejects_step_by_step_and_stops_at_the_first_kept_hypothesis():
    # sorted: 0.01 <= 0.05/3 rejected; 0.03 > 0.05/2 kept, and so is everything after it
    assert holm([0.01, 0.04, 0.03]) == [True, False, False]
    assert holm([0.001, 0.02]) == [True, True]  # 0.001 <= 0.025, then 0.02 <= 0.05
    assert holm([0.05, 0.05]) == [False, False]  # 0.05 > 0.025
    assert holm([]) == []


def boot(difference: float, low: float, high: float, p: float) -> Bootstrap:
    return Bootstrap(0.0, 0.0, difference, low, high, p, 0.95, 1000, 1000, 0)


def test_the_combined_p_value_of_several_directions_reads_their_intervals_as_normal_errors():
    assert combined_p([boot(0.1, 0.0, 0.2, 0.04)]) == 0.04  # one direction: its own bootstrap p-value
    # two directions, each 0.1 with [0.0, 0.2]: se = 0.2 / (2 * 1.96) = 0.05102 each, of the mean 0.036078,
    # z = 2.7718, p = 2 * (1 - Phi(2.7718)) = 0.005575
    assert combined_p([boot(0.1, 0.0, 0.2, 0.04)] * 2) == pytest.approx(0.005575, abs=2e-6)
    assert combined_p([boot(0.0, 0.0, 0.0, 1.0)] * 2) == 1.0  # no spread, no difference
    assert combined_p([boot(0.1, 0.1, 0.1, 0.0)] * 2) == 0.0  # no spread, a difference


def test_the_interval_of_a_mean_adds_each_side_in_quadrature():
    cells = [Cell(0.5, None, 1, (0.4, 0.6)), Cell(0.75, None, 1, (0.7, 0.8))]
    # mean 0.625; half-width sqrt(0.1^2 + 0.05^2) / 2 = 0.0559017
    low, high = mean_interval(cells)
    assert (low, high) == pytest.approx((0.5690983, 0.6809017), abs=1e-7)
    assert mean_interval([Cell(0.5, None, 1, None)]) is None and mean_interval([]) is None
    assert mean_interval([Cell(0.8, None, 1, (0.0, 1.0))]) == pytest.approx(
        (0.0, 1.0)
    )  # one cell: its own interval, asymmetric


def row(label: str, mean: float, interval: tuple[float, float] | None = None) -> RankedRow:
    return RankedRow((label,), (label,), RANKED, None, False, mean, interval, 1, (None,), (label,))  # type: ignore[arg-type]


def fake_tests(p_values: dict[tuple[str, str], float | None]):
    def test(first, second):
        p = p_values.get((first, second))
        return None if p is None else boot(0.1, 0.0, 0.2, p)

    return test


def ranks(rows):
    return [(r.label, r.rank, r.shared) for r in rows]


def test_models_not_significantly_worse_than_the_best_of_their_group_share_its_rank():
    rows = [row("c", 0.5), row("a", 0.9), row("d", 0.49), row("b", 0.85)]
    p = {("a", "b"): 0.2, ("a", "c"): 0.001, ("a", "d"): 0.001, ("c", "d"): 0.5}
    found, method = clusters(rows, 1.0, fake_tests(p), [0])
    # a's group: b is not significantly worse (0.2), c and d are (Holm: 0.001 <= 0.05/3, 0.001 <= 0.05/2)
    assert ranks(found) == [("a", 1, True), ("b", 1, True), ("c", 3, True), ("d", 3, True)]
    assert method == PAIRED


def test_a_lower_is_better_metric_ranks_the_smallest_first_and_holm_keeps_a_borderline_gap():
    rows = [row("a", 3.0), row("b", 1.0), row("c", 2.0)]
    p = {("b", "c"): 0.03, ("b", "a"): 0.01, ("c", "a"): 0.001}  # Holm: 0.01 <= 0.05 / 2, then 0.03 <= 0.05 / 1
    found, _ = clusters(rows, -1.0, fake_tests(p), [0])
    assert ranks(found) == [("b", 1, False), ("c", 2, False), ("a", 3, False)]
    p[("b", "a")] = 0.03  # now both 0.03: 0.03 > 0.05 / 2, nothing rejected
    found, _ = clusters(rows, -1.0, fake_tests(p), [0])
    assert ranks(found) == [("b", 1, True), ("c", 1, True), ("a", 1, True)]


def test_ties_one_model_and_no_logs():
    found, method = clusters([row("b", 0.5), row("a", 0.5)], 1.0, fake_tests({("a", "b"): 1.0}), [0])
    assert ranks(found) == [("a", 1, True), ("b", 1, True)] and method == PAIRED  # equal: by label, one rank
    found, method = clusters([row("solo", 0.7)], 1.0, fake_tests({}), [0])
    assert ranks(found) == [("solo", 1, False)] and method == NOTHING
    # no logs: the intervals of the means decide; overlapping ones share, apart ones do not
    rows = [row("a", 0.9, (0.85, 0.95)), row("b", 0.8, (0.7, 0.86)), row("c", 0.5, (0.45, 0.55))]
    found, method = clusters(rows, 1.0, fake_tests({}), [0])
    assert ranks(found) == [("a", 1, True), ("b", 1, True), ("c", 3, False)] and method == OVERLAP
    found, _ = clusters([row("a", 0.9), row("b", 0.1)], 1.0, fake_tests({}), [0])
    assert ranks(found) == [("a", 1, True), ("b", 1, True)]  # no interval at all: not shown to differ


def hits(pattern: str) -> list[dict[str, object]]:
    return [{"id": f"s{i}", "hit": float(c == "1"), "rr": 1.0 if c == "1" else 0.1} for i, c in enumerate(pattern)]


INFO = {
    "recall@k": {"display": "R@10", "higher_is_better": True, "statistic": "mean:hit"},
    "mrr": {"statistic": "mean:rr"},
}


def logged(folder: Path, name: str, pattern: str, tgt: str = "de", card: dict | None = None):
    item = record("xlr", name, pattern.count("1") / len(pattern), args={"src": "en", "tgt": tgt, "dataset": "ikea"})
    item.metric_info = INFO
    if card is not None:
        item.model = {**item.model, "card": card}
    return with_samples(folder, item, hits(pattern), f"samples_{name}_{tgt}.jsonl")


def test_the_paired_test_from_cached_resamples_is_harness_compare_s(tmp_path):
    folder = tmp_path / "results"
    write_results(folder, [logged(folder, "a", "1101101111" * 4), logged(folder, "b", "1001001011" * 4)])
    entries, _ = load_entries([str(folder)])
    board = merge(entries)
    first, second = (board.cells[key, board.columns[0]] for key in board.labels)
    mine = Samples().test(first, second)
    theirs = compare(board, "a", "b", "xlr").bootstrap
    assert mine == theirs


def test_controls_twins_and_fewer_directions_are_apart_from_the_ranked_models(tmp_path):
    folder = tmp_path / "results"
    good, twin, worse = "1111111110" * 4, "1111111110" * 4, "1000000000" * 4
    lines = [
        logged(folder, "best", good),
        logged(folder, "best", good, tgt="fr"),
        logged(folder, "alias", twin),
        logged(folder, "alias", twin, tgt="fr"),
        logged(folder, "worse", worse),
        logged(folder, "worse", worse, tgt="fr"),
        logged(folder, "half", good),  # en→de only
        logged(folder, "noise", "1111111111" * 4, card={"control": "degraded on purpose"}),
        logged(folder, "noise", "1111111111" * 4, tgt="fr", card={"control": "degraded on purpose"}),
    ]
    write_results(folder, lines)
    entries, _ = load_entries([str(folder)])
    (ranking,) = rankings(merge(entries))
    shown = [(r.label, r.group, r.rank, r.count, r.note) for r in ranking.rows]
    assert shown == [
        ("alias = best", RANKED, 1, 2, ""),  # twins: one row, so the runner-up is another model
        ("worse", RANKED, 2, 2, ""),
        ("half", APART, None, 1, "run on 1 of the 2 ranked directions: not ranked"),
        ("noise", CONTROL, None, 2, "degraded on purpose"),  # the highest values, never ranked nor best
    ]
    assert ranking.method == PAIRED and ranking.ranked_over == (0, 1)
    assert [d.title for d in ranking.directions] == ["ikea test en→de", "ikea test en→fr"]
    assert ranking.rows[0].mean == pytest.approx(0.9)


def test_a_direction_run_in_two_settings_counts_once_in_the_mean_at_the_task_s_defaults(tmp_path):
    folder = tmp_path / "results"
    lines = []
    for name, default, other in (("a", "1111111110", "1000000000"), ("b", "1111100000", "1111111111")):
        lines.append(logged(folder, name, default * 4))
        variant = record("xlr", name, other.count("1") / 10, args={"src": "en", "tgt": "de", "dataset": "ikea", "k": 5})
        variant.metric_info = INFO
        lines.append(with_samples(folder, variant, hits(other * 4), f"samples_{name}_k5.jsonl"))
    write_results(folder, lines)
    entries, _ = load_entries([str(folder)])
    (ranking,) = rankings(merge(entries))
    assert len(ranking.directions) == 2  # both settings are shown ...
    (counted,) = ranking.ranked_over  # ... but en→de counts once, at xlr's default k = 10
    assert "k:5" not in ranking.directions[counted].title
    assert [(r.label, r.mean, r.count) for r in ranking.rows] == [("a", pytest.approx(0.9), 1), ("b", 0.5, 1)]


def test_a_run_on_the_first_items_says_so_in_its_heading_even_alone_in_its_direction(tmp_path):
    folder = tmp_path / "results"
    de, fr = {"src": "en", "tgt": "de", "dataset": "ikea"}, {"src": "en", "tgt": "fr", "dataset": "ikea"}
    lines = [
        record("xlr", "a", 0.5, args=de),
        record("xlr", "a", 0.6, args=de, limit=40, size=40),
        record("xlr", "a", 0.7, args=fr, limit=40, size=40),  # the only en→fr column: nothing differs, limit shown
    ]
    write_results(folder, lines)
    entries, _ = load_entries([str(folder)])
    (ranking,) = rankings(merge(entries))
    # the two limited columns share one heading ("items:40" says nothing more there); the full run keeps its items
    assert [d.title for d in ranking.directions] == [
        "ikea test (items:100) en→de",
        "ikea test (limit:40) en→de",
        "ikea test (limit:40) en→fr",
    ]
