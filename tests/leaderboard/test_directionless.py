"""Metrics whose ``higher_is_better`` is null (counts, tie rates, hubness) have no direction: they are
neither ranked by nor given a best-first sort in the tables and the page."""

from __future__ import annotations

from pathlib import Path

from leaderboard.builders import record

from harness.leaderboard.merge import merge
from harness.leaderboard.page import th
from harness.leaderboard.tables import family_tables
from harness.results.load import Entry
from harness.results.metrics import info_of

SKEW = {"display": "N10 skew", "higher_is_better": None, "chance": None, "statistic": None}


def skew(model: str, value: float):
    item = record("xlr", model, value, args={"src": "en", "tgt": "de", "dataset": "ikea"})
    item.metric_info = {item.main_metric: SKEW}
    return item


def test_null_direction_stays_null_and_a_missing_one_falls_back_to_higher():
    assert info_of(skew("a", 1.0), "recall@k").higher_is_better is None
    assert info_of(skew("a", 1.0), "recall@k").rank_sign == 0.0
    assert info_of(record("xlr", "a", 0.2), "recall@k").higher_is_better is True  # an older line: no metric_info


def test_a_column_without_direction_does_not_rank_the_rows():
    board = merge([Entry(skew(m, v), Path("results.jsonl")) for m, v in (("b", 1.0), ("c", 3.0), ("a", 2.0))])
    (table,) = family_tables(board)
    assert [row.label for row in table.rows] == ["a", "b", "c"]  # by label only, not by value in either direction


def test_the_page_header_of_such_a_column_names_no_best_direction():
    assert "data-higher" not in th("N10 skew", True, None, None)
    assert 'data-higher="0"' in th("median rank", True, None, False)
