"""Warnings (issue 24.3): a note every result of a column carries is a numbered column note; ⚠ marks only a
cell whose own number must be read differently; every message is a complete sentence."""

from __future__ import annotations

from pathlib import Path

from leaderboard.builders import family_pages, record

from harness.leaderboard.markdown import readme
from harness.leaderboard.merge import merge
from harness.leaderboard.tables import family_tables, sentence
from harness.results.load import Entry

# as lines written before the runner completed the sentence carry it
RAN_ONCE = (
    "xlr: every seed would evaluate the same 100 items, so it ran once (seed 0); the spread over seeds is not "
    "defined, the interval over items is"
)
COMPLETE = (
    "Every seed would evaluate the same 100 items, so it ran once (seed 0); the spread over seeds is undefined; "
    "the interval over items is shown instead."
)


def board_of(*records):
    return merge([Entry(r, Path("results.jsonl")) for r in records])


def two_runs():
    a = record("xlr", "a", 0.5)
    b = record("xlr", "b", 0.4)
    for line in (a, b):
        line.metric_info = {"recall@k": {"display": "R@10", "higher_is_better": True}}
    a.warnings = [RAN_ONCE]
    b.warnings = [RAN_ONCE, "xlr: --limit 10: 10 items evaluated (not comparable with a run on the full data)"]
    return board_of(a, b)


def test_a_warning_every_result_of_a_column_carries_is_a_column_note_not_a_cell_mark():
    board = two_runs()
    (table,) = family_tables(board)
    assert table.notes == ((COMPLETE,),)
    rows = {row.label: row.cells[0] for row in table.rows}
    assert rows["a"].warnings == ()
    assert rows["b"].warnings == ("--limit 10: 10 items evaluated (not comparable with a run on the full data).",)
    text = readme(board, [table], [], "c")
    assert "| model | R@10 ¹ |" in text and "| a | 0.5000 |" in text and "| b | 0.4000 ⚠ |" in text
    assert f"¹ R@10 (whole column): {COMPLETE}" in text
    assert "⚠ b, R@10: --limit 10: 10 items evaluated (not comparable with a run on the full data)." in text
    html = family_pages(board, [table])
    assert '<th data-type="number" data-higher="1" title="xlr|' in html and "R@10<sup>1</sup></th>" in html
    assert f"<li><sup>1</sup> R@10 (whole column): {COMPLETE}</li>" in html
    body = html.split("<tbody>")[1].split("</tbody>")[0]
    row_a, row_b = body.split("</tr>")[:2]
    assert "⚠" not in row_a and 'href="#t1-a"' in row_b and ">⚠<sup>a</sup></a>" in row_b
    assert '<li id="t1-a"><sup>a</sup> --limit 10: 10 items evaluated' in html


def test_the_ran_once_note_is_a_column_note_on_every_xlr_column_of_the_committed_results():
    from harness.results.load import load_entries

    entries, _ = load_entries([str(Path(__file__).parents[2] / "leaderboard" / "results" / "ikea")])
    board = merge(entries)
    tables = family_tables(board)
    assert tables and all(c is None or not c.warnings for t in tables for row in t.rows for c in row.cells)
    assert all(t.notes[0] and t.notes[0][0].startswith("Every seed would evaluate") for t in tables)


def test_messages_are_complete_sentences():
    assert sentence(RAN_ONCE, ("xlr",)) == COMPLETE
    assert sentence("commute_tc: TC = 0.5 by construction", ("commute_tc",)) == "TC = 0.5 by construction."
    assert sentence("other_task: kept prefix", ("xlr",)) == "Other_task: kept prefix."
    assert sentence("Already a sentence!") == "Already a sentence!" and sentence("  ") == ""


def test_columns_with_the_same_note_share_its_number_and_one_line():
    args = {"lang": "de", "ties": "wrong", "temperature": 1.0}
    said = "commute_{}: TC = 0.5 and GTC = 0 by construction"
    tc, gtc = record("commute_tc", "m", 0.5, args=args), record("commute_gtc", "m", 0.0, args=args)
    tc.warnings, gtc.warnings = [said.format("tc")], [said.format("gtc")]
    board = board_of(tc, gtc)
    text = readme(board, family_tables(board), [], "c")
    assert "| model | tc ¹ | gtc ¹ | average |" in text
    assert text.count("TC = 0.5 and GTC = 0 by construction.") == 3  # the note, the overview, the folded section
    assert "¹ tc, gtc (whole column): TC = 0.5 and GTC = 0 by construction." in text


def test_what_a_column_measures_is_written_under_its_table_without_hover():
    item = record("xlr", "a", 0.5)
    item.metric_info = {
        "recall@k": {"display": "R@10", "description": "share of sources whose target is in the top 10"}
    }
    board = board_of(item)
    tables = family_tables(board)
    assert tables[0].descriptions == ("Share of sources whose target is in the top 10.",)
    text = readme(board, tables, [], "c")
    assert "- R@10: Share of sources whose target is in the top 10. `xlr|dataset:ikea|" in text
    html = family_pages(board, tables)
    assert "<li>R@10: Share of sources whose target is in the top 10. <code>xlr|dataset:ikea|" in html
