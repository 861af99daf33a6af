"""The family tables: one per data set and direction, short headers from the results' metric info,
ranking in each metric's direction, intervals, chance, undefined metrics; older lines still render."""

from __future__ import annotations

from pathlib import Path

import pytest
from leaderboard.builders import record

from harness.leaderboard.markdown import readme
from harness.leaderboard.merge import merge
from harness.leaderboard.tables import Cell, family_tables, headers_of, pair_of
from harness.results.load import Entry

R10 = {"display": "R@10", "higher_is_better": True, "chance": 0.1, "statistic": "mean:hit"}
RANK = {"display": "median rank", "higher_is_better": False, "chance": None, "statistic": "median:rank"}


def with_info(item, info: dict, metric: str | None = None, **fields):
    item.metric_info = {metric or item.main_metric: info}
    for name, value in fields.items():
        setattr(item, name, value)
    return item


def board_of(*records):
    return merge([Entry(r, Path("results.jsonl")) for r in records])


def xlr(model: str, value, tgt: str = "de", **fields):
    return with_info(record("xlr", model, value, args={"src": "en", "tgt": tgt, "dataset": "ikea"}), R10, **fields)


def test_one_table_per_data_set_and_direction_with_short_headers():
    board = board_of(
        xlr("a", 0.5),
        xlr("b", 0.7),
        xlr("a", 0.4, tgt="fr"),
        with_info(record("backretrieval", "a", 0.3, args={"src": "en", "tgt": "de", "dataset": "ikea"}), R10),
    )
    tables = family_tables(board)
    assert [(t.family.name, t.title, t.headers) for t in tables] == [
        ("retrieval", "ikea test en→de", ("xlr R@10", "backretrieval R@10")),  # the task is named where displays repeat
        ("retrieval", "ikea test en→fr", ("R@10",)),
    ]
    assert [row.label for row in tables[0].rows] == ["b", "a"]  # best first
    assert tables[0].has_chance and [i.chance for i in tables[0].infos] == [0.1, 0.1]


def test_a_lower_is_better_metric_ranks_the_smallest_first():
    rank = [
        with_info(record("xlr", m, v, args={"src": "en", "tgt": "de", "dataset": "ikea"}), RANK)
        for m, v in (("a", 3.0), ("b", 1.0), ("c", 2.0))
    ]
    (table,) = family_tables(board_of(*rank))
    assert [row.label for row in table.rows] == ["b", "c", "a"]


def test_older_lines_fall_back_to_the_metric_name_higher_is_better_and_no_interval():
    (table,) = family_tables(board_of(record("xlr", "a", 0.2), record("xlr", "b", 0.6)))
    assert table.headers == ("recall@k",) and not table.has_chance
    assert [row.label for row in table.rows] == ["b", "a"]
    assert table.rows[0].cells[0].text == "0.6000"


def test_cells_show_the_interval_else_a_non_zero_seed_spread():
    assert Cell(0.5, 0.01, 3, (0.45, 0.56)).text == "0.5000 [0.4500, 0.5600]"
    assert Cell(0.5, 0.01, 3).text == "0.5000 ± 0.0100"
    assert Cell(0.5, 0.0, 25).text == "0.5000"  # 25 identical seeds: no "± 0.0000"
    assert Cell(0.5, 0.2, 1).text == "0.5000"
    assert Cell(None, None, 1, reason="text-only scorer").text == "n/a"


def test_intervals_undefined_reasons_and_warnings_reach_the_readme():
    good = xlr("a", 0.5, intervals={"recall@k": {"low": 0.4, "high": 0.6, "confidence": 0.95}})
    limited = xlr("b", 0.9, warnings=["--limit 10: only 10 items were evaluated"])
    text = readme(board_of(good, limited), family_tables(board_of(good, limited)), [], "c")
    assert "| b | 0.9000 ⚠ |" in text and "| a | 0.5000 [0.4000, 0.6000] |" in text
    assert "| *chance* | 0.1000 |" in text
    assert "⚠ b, R@10: --limit 10: only 10 items were evaluated." in text


def test_headers_add_the_differing_signature_parts_when_the_display_repeats_within_one_task():
    board = board_of(
        xlr("a", 0.5),
        with_info(record("xlr", "a", 0.4, args={"src": "en", "tgt": "de", "dataset": "ikea"}, size=50), R10),
    )
    (table,) = family_tables(board)
    assert sorted(table.headers) == ["R@10 (items:100)", "R@10 (items:50)"]  # one task: its name tells nothing
    assert headers_of([], []) == []


def test_headers_name_the_task_where_two_tasks_share_a_display_name():
    bkr = with_info(record("backretrieval", "a", 0.3, args={"src": "en", "tgt": "de", "dataset": "ikea"}), R10)
    (table,) = family_tables(board_of(xlr("a", 0.5), bkr))
    assert sorted(table.headers) == ["backretrieval R@10", "xlr R@10"]


@pytest.mark.parametrize(
    ("args", "split", "pair"),
    [
        ({"src": "en", "tgt": "de"}, "test", "en→de"),
        ({"lang": "fr"}, "en-fr", "en→fr"),
        ({"lang": "cs"}, "test", "cs"),
        ({}, "test", None),
    ],
)
def test_the_language_pair(args, split, pair):
    item = record("xlr", "a", 0.5, args=args)
    item.dataset["split"] = split
    assert pair_of(item) == pair


def test_a_header_may_wrap_between_the_words_of_a_setting_and_stays_escaped():
    from harness.leaderboard.page import th

    assert ">TC <wbr>(prefix_<wbr>removal:<wbr>False)<" in th("TC (prefix_removal:False)", True)
    assert ">a&lt;b_<wbr>c<" in th("a<b_c", False)  # escaped first: only the page's own <wbr> is markup
