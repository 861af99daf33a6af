"""The items behind a value (full and compact logs), the items two models disagree on most (``harness compare
--items``, the model pages), the item pages and the controls group, in a headless browser."""

from __future__ import annotations

import json
from pathlib import Path

from leaderboard.builders import record, with_samples, write_results
from leaderboard.test_page import needs_chromium, run_driver

from harness.cli import main
from harness.leaderboard.items import RANK, disagreements, item_values, read_items
from harness.leaderboard.merge import merge
from harness.results.bootstrap import Statistic
from harness.results.load import Entry, load_entries
from harness.results.samples import compact_folder

INFO = {
    "recall@k": {"display": "R@10", "higher_is_better": True, "statistic": "mean:hit"},
    "mrr": {"statistic": "mean:rr"},
}


def seeded(folder: Path, name: str, rows: list[dict[str, object]], values: tuple[float, float] = (2 / 3, 1 / 3)):
    """A two-seed XLR line whose recall is its rows' hits (per seed), with the rows as its log."""
    item = record("xlr", name, list(values), seeds=[0, 1])
    item.metric_info = INFO
    return with_samples(folder, item, rows, f"samples_{name}.jsonl")


ROWS_A = [
    {"id": "x", "seed": 0, "hit": 1.0, "rr": 1.0, "rank": 1.0},
    {"id": "x", "seed": 1, "hit": 0.0, "rr": 0.25, "rank": 4.0},
    {"id": "y", "seed": 0, "hit": 0.0, "rr": 0.5, "rank": 2.0},
    {"id": "y", "seed": 1, "hit": 0.0, "rr": 0.5, "rank": 2.0},
    {"id": "z", "seed": 0, "hit": 1.0, "rr": 1.0, "rank": 1.0},
    {"id": "z", "seed": 1, "hit": 1.0, "rr": 1.0, "rank": 1.0},
]
ROWS_B = [{**row, "hit": 1.0 - float(row["hit"]) if row["id"] != "y" else 0.0} for row in ROWS_A]


def board_of(folder: Path):
    entries, _ = load_entries([str(folder)])
    return merge(entries)


def test_items_average_their_seeds_and_a_compact_log_gets_the_rank_from_rr(tmp_path):
    full = tmp_path / "full"
    write_results(full, [seeded(full, "a", ROWS_A)])
    (result,) = board_of(full).current
    items = read_items(result)
    assert items.fields == ("hit", "rr", "rank") and items.seeds == 2 and not items.compact
    assert items.rows == (("x", (0.5, 0.625, 2.5)), ("y", (0.0, 0.5, 2.0)), ("z", (1.0, 1.0, 1.0)))
    compact_folder(full, tmp_path / "compact")
    (result,) = board_of(tmp_path / "compact").current
    items = read_items(result)
    assert items.fields == ("hit", "rr", RANK) and items.compact  # the compact log keeps what the metrics read
    assert items.rows[0] == ("x", (0.5, 0.625, 1.6))  # rank ≈ 1 / mean rr = 1 / 0.625


def test_the_rank_from_rr_is_to_one_decimal_so_a_whole_rank_reads_whole(tmp_path):
    rows = [{"id": i, "seed": seed, "hit": 0.0, "rr": rr} for i, rr in (("x", 1 / 49), ("y", 1.0)) for seed in (0, 1)]
    assert 1 / (1 / 49) != 49  # what the division alone would show: 49.00000000000001
    write_results(tmp_path / "full", [seeded(tmp_path / "full", "a", rows, values=(0.0, 0.0))])
    compact_folder(tmp_path / "full", tmp_path / "compact")
    (result,) = board_of(tmp_path / "compact").current
    assert [values[-1] for _, values in read_items(result).rows] == [49.0, 1.0]


def test_the_items_two_models_disagree_on_most_come_first_ties_broken_by_a_finer_field():
    a, b = {"x": 1.0, "y": 0.0, "z": 0.5, "w": 1.0}, {"x": 0.0, "y": 0.0, "z": 1.0, "w": 0.0}
    assert [(d.item, d.difference) for d in disagreements(a, b, 3)] == [("w", 1.0), ("x", 1.0), ("z", -0.5)]
    finer = ({"w": 0.5, "x": 0.9}, {"w": 0.4, "x": 0.1})  # x's reciprocal ranks differ more than w's
    assert [d.item for d in disagreements(a, b, 2, finer)] == ["x", "w"]
    assert disagreements(a, a, 5) == []  # agreeing everywhere: nothing to show
    scores = {(None, "p"): (1.0,), (None, "q"): (3.0,)}  # a score is standardised: (v - 2) / 1
    assert item_values(scores, Statistic("auc", ("score", "label"))) == {"p": -1.0, "q": 1.0}


def test_harness_compare_items_lists_where_two_models_disagree_most(tmp_path, capsys):
    folder = tmp_path / "results"
    write_results(folder, [seeded(folder, "a", ROWS_A), seeded(folder, "b", ROWS_B, (0.0, 1 / 3))])
    assert main(["compare", "a", "b", "--task", "xlr", "--results", str(folder), "--items", "2"]) == 0
    out = capsys.readouterr().out.split("items where a and b disagree most (mean of hit per item):\n")[1]
    # per item, hit over two seeds: a x 0.5, z 1.0; b x 0.5, z 0.0 -> z differs by 1; x and y by 0
    assert out.splitlines() == ["item         A         B     A - B", "z       1.0000    0.0000   +1.0000"]
    assert main(["compare", "a", "b", "--task", "xlr", "--results", str(folder), "--items", "1", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)["items"]
    assert found == [{"item": "z", "a": 1.0, "b": 0.0, "difference": 1.0}]  # one JSON document, the items in it
    assert main(["compare", "a", "b", "--task", "xlr", "--results", str(folder), "--items", "0"]) == 2
    assert "--items must be at least 1" in capsys.readouterr().err


def controls_board(folder: Path) -> Path:
    """Three ranked models and a control with the best values, each with a log."""
    results = folder / "results"
    lines = []
    for name, pattern, card in (
        ("alpha", "1111111100", None),
        ("beta", "1111100000", None),
        ("gamma", "1100000000", None),
        ("noisy", "1111111111", {"control": "noise added on purpose"}),
    ):
        item = record("xlr", name, pattern.count("1") / 10)
        item.metric_info = INFO
        item.intervals = {"recall@k": {"low": 0.0, "high": 1.0, "confidence": 0.95}}
        if card:
            item.model = {**item.model, "card": card}
        rows = [{"id": f"s{i}", "hit": float(c), "rr": 1.0 if c == "1" else 0.1} for i, c in enumerate(pattern)]
        lines.append(with_samples(results, item, rows, f"samples_{name}.jsonl"))
    write_results(results, lines)
    assert main(["leaderboard", str(results), "-o", str(folder / "board"), "--no-plots"]) == 0
    return folder / "board"


# sort the ranked table by its value column both ways; the controls stay in their own group, last
CONTROLS = """
var table = document.querySelector("table.ranked"), header = table.tHead.rows[1].cells[3];
function bodies() { return Array.prototype.map.call(table.tBodies, function (body) {
  return body.className + ":" + Array.prototype.filter.call(body.rows, function (r) { return !r.classList.contains("group"); })
    .map(function (r) { return r.querySelector(".model a").textContent; }).join(","); }).join("|"); }
var first = bodies(); header.click(); header.click(); var reversed = bodies();
var grey = getComputedStyle(table.tBodies[1].querySelector("td.model a")).color;
document.body.setAttribute("data-result", [first, reversed, grey].join(";"));
"""


@needs_chromium
def test_controls_are_greyed_in_their_own_group_below_the_ranked_models_whatever_the_sort(tmp_path):
    board = controls_board(tmp_path)
    dom = run_driver(board / "index.html", CONTROLS, tmp_path / "profile")
    first, reversed_, grey = dom.split('data-result="')[1].split('"')[0].split(";")
    assert first == "ranked:alpha,beta,gamma|control:noisy"  # the best values, never ranked nor named best
    assert reversed_ == "ranked:gamma,beta,alpha|control:noisy"
    assert grey == "rgb(138, 138, 138)"
    page = (board / "index.html").read_text(encoding="utf-8")
    assert "noise added on purpose" in page and "Controls: random, degraded or image-blanked on purpose" in page


# the item page of a cell: its rows, sorted by rank (ascending first for a text-less field? no: numbers best first)
ITEMS = """
var table = document.querySelector("table.sortable"), headers = table.tHead.rows[0].cells;
function order() { return Array.prototype.map.call(table.tBodies[0].rows, function (r) { return r.cells[0].textContent; }).join(","); }
var first = order(); headers[2].click(); var byRr = order();
document.body.setAttribute("data-result", [first, byRr, headers.length].join(";"));
"""


@needs_chromium
def test_a_value_links_to_its_items_and_the_item_page_sorts(tmp_path):
    board = controls_board(tmp_path)
    page = (board / "index.html").read_text(encoding="utf-8")
    link = page.split('title="0.8000 [0.0000, 1.0000] (click for the items)"><a href="')[1].split('"')[0]
    assert link.startswith("items/xlr-") and (board / link).is_file()
    dom = run_driver(board / link, ITEMS, tmp_path / "profile")
    first, by_rr, columns = dom.split('data-result="')[1].split('"')[0].split(";")
    assert first == ",".join(f"s{i}" for i in range(10)) and columns == "4"  # item, hit, rr, rank ≈ 1/rr
    assert by_rr.split(",")[-2:] == ["s8", "s9"]  # the two misses (rr 0.1) last, sorted descending
    text = (board / link).read_text(encoding="utf-8")
    assert "alpha on xlr, ikea test en→de" in text and "over 10 items of ikea test en→de" in text
    model = (board / "models" / "alpha.html").read_text(encoding="utf-8")
    assert f'<a href="../{link}">0.8000</a>' in model  # the same items from the model page
    assert "Image-pivoted retrieval: against beta" in model and ">s5</a>" in model  # s5-s7: alpha hits, beta not


def test_the_readme_ranks_as_the_page_does_and_its_overview_never_names_a_control_best(tmp_path):
    board = controls_board(tmp_path)
    text = (board / "README.md").read_text(encoding="utf-8")
    ranked = text.split("## Ranked")[1].split("## Overview")[0]
    # intervals [0, 1] everywhere, but the logs allow the paired test: alpha and beta share rank 1, gamma is worse
    # (alpha - gamma: 6 of 10 items apart, p < 0.05 / 2 under Holm; alpha - beta: 3 items, not significant)
    assert "| 1= | alpha | 0.8000 [0.0000, 1.0000] | 1 | 0.8000 |" in ranked
    assert "| 1= | beta | 0.5000" in ranked and "| 3 | gamma | 0.2000" in ranked
    assert "| – | noisy (control: noise added on purpose) | 1.0000" in ranked
    overview = text.split("## Overview")[1].split("## How to read")[0]
    assert "**alpha**" in overview and "**noisy**" not in overview


def test_an_item_page_writes_equal_values_of_different_text_apart():
    """0.0 and -0.0 compare equal but are shown (and sorted) as written; a repeated value's cell is the same."""
    from harness.leaderboard.detail import item_page
    from harness.leaderboard.items import Items
    from harness.leaderboard.site import site_of

    items = Items(("delta",), (("p", (0.0,)), ("q", (-0.0,)), ("r", (0.0,)), ("s", (0.25,))), 1, False)
    board = merge([Entry(record("xlr", "a", 0.5), Path("results.jsonl"))])
    page = item_page(board, board.current[0], items, site_of(board, []))
    assert page.count(">0.00</td>") == 2 and page.count(">-0.00</td>") == 1 and ">0.25</td>" in page


def test_an_item_page_writes_each_column_with_the_fewest_decimals_its_numbers_need():
    """Whole ranks read as 1 and 20, not 1.0000 and 20.0000; a column with one fraction (a tie's expected hit)
    writes all its values with that fraction's places, so that they line up; a reciprocal rank keeps four."""
    from harness.leaderboard.detail import item_page
    from harness.leaderboard.items import Items
    from harness.leaderboard.site import site_of

    rows = (("p", (1.0, 1.0, 1 / 3, "a b")), ("q", (0.0, 20.0, 0.05, "c")), ("r", (0.5, 3.0, 1.0, "d")))
    items = Items(("hit", "rank", "rr", "text"), rows, 1, False)
    board = merge([Entry(record("xlr", "a", 0.5), Path("results.jsonl"))])
    page = item_page(board, board.current[0], items, site_of(board, []))
    cells = [c.split(">")[-1] for c in page.split("</td>") if 'class="num' in c.rsplit("<td", 1)[-1]]
    assert cells == ["1.0", "1", "0.3333", "0.0", "20", "0.0500", "0.5", "3", "1.0000"]
    assert ">a b</td>" in page  # text as written
