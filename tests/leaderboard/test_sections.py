"""The retrieval family's extra tables on the leaderboard: the meta-evaluation and the test of BkR
against CORR per direction (from ``harness meta``'s functions), and BkR over the language pairs."""

from __future__ import annotations

from pathlib import Path

from leaderboard.builders import family_pages, record

from harness.leaderboard.families import Families, Family
from harness.leaderboard.markdown import readme
from harness.leaderboard.merge import merge
from harness.leaderboard.sections import Section, family_sections
from harness.leaderboard.tables import family_tables
from harness.results.load import Entry
from harness_tasks.retrieval.plots import meta_result, triples

# five models, three seeds: BkR follows XLR closely, CORR loosely
XLR = {"a": 0.9, "b": 0.7, "c": 0.5, "d": 0.3, "e": 0.1}
BKR = {
    "a": [0.50, 0.52, 0.49],
    "b": [0.40, 0.41, 0.42],
    "c": [0.30, 0.29, 0.31],
    "d": [0.20, 0.22, 0.19],
    "e": [0.10, 0.09, 0.11],
}
CORR = {
    "a": [0.05, 0.02, 0.04],
    "b": [0.06, 0.07, 0.01],
    "c": [0.02, 0.03, 0.05],
    "d": [0.03, 0.01, 0.02],
    "e": [0.00, 0.02, 0.01],
}


def direction(tgt: str, shift: float = 0.0) -> list:
    args = {"src": "en", "tgt": tgt, "dataset": "ikea", "split": "test", "n": 100, "k": 10}
    corr_args = {"src": "en", "tgt": tgt, "dataset": "ikea", "split": "test", "n": 100, "max_pairs": 1000}
    found = []
    for model in XLR:
        found.append(record("xlr", model, [XLR[model]] * 3, args=args))
        found.append(record("backretrieval", model, [v + shift for v in BKR[model]], args=args))
        found.append(record("corr", model, CORR[model], args=corr_args))
    return found


def board_of(*records):
    return merge([Entry(r, Path("results.jsonl")) for r in records])


def test_the_meta_sections_show_harness_metas_numbers():
    board = board_of(*direction("de"))
    sections = family_sections(board)["retrieval"]
    assert [s.title for s in sections] == ["Meta-evaluation, ikea en-de test", "BkR vs CORR, ikea en-de test"]
    expected = meta_result(board, triples(board)[0])
    pearson = expected["correlations"]["backretrieval"]["pearson"]
    assert sections[0].rows[0][:2] == ("backretrieval", f"{pearson['mean']:.3f} ± {pearson['std']:.3f}")
    tested = expected["significance"]["pearson"]
    share = f"{round(tested['share_significant'] * tested['seeds_tested'])}/{tested['seeds_tested']}"
    share += f" ({tested['seeds_at_p0']} at p = 0)" if tested["seeds_degenerate"] else ""  # a seed with r = 1
    assert tested["seeds_degenerate"] == tested["seeds_at_p0"] == 1
    assert sections[1].rows[0][:3] == ("Pearson", share, f"{tested['combined_p']:.2g}")
    assert sections[1].rows[0][3].startswith(f"{tested['bootstrap']['difference']:+.3f} [")


def test_bkr_under_two_image_models_names_g_in_each_section_and_column():
    """One XLR column pairs with BkR and CORR under two image similarities g (an image model, the data's own
    features): each meta-evaluation says which g, and the table's headers tell the columns apart by name."""
    args = {"src": "en", "tgt": "de", "dataset": "ikea", "split": "test", "n": 100, "k": 10}
    corr_args = {"src": "en", "tgt": "de", "dataset": "ikea", "split": "test", "n": 100, "max_pairs": 1000}
    image = {"image": {"name": "effnet", "revision": "sha256:" + "ab" * 32, "args": {"size": 224}}}
    g_model, g_features = {"g": {"model": {"name": "effnet"}}}, {"g": {"source": "image_features"}}
    records = []
    for model in XLR:
        records.append(record("xlr", model, [XLR[model]] * 3, args=args))
        for aux, g, shift in ((image, g_model, 0.01), (None, g_features, 0.0)):
            bkr = [v + shift for v in BKR[model]]
            records.append(record("backretrieval", model, bkr, args=args, aux_models=aux, extra=g))
            records.append(record("corr", model, CORR[model], args=corr_args, aux_models=aux))
    board = board_of(*records)
    titles = [s.title for s in family_sections(board)["retrieval"]]
    assert sorted(titles) == [
        "BkR vs CORR, ikea en-de test (g: effnet)",
        "BkR vs CORR, ikea en-de test (g: image_features)",
        "Meta-evaluation, ikea en-de test (g: effnet)",
        "Meta-evaluation, ikea en-de test (g: image_features)",
    ]
    (table,) = [t for t in family_tables(board) if t.family.name == "retrieval"]
    assert sorted(h for h in table.headers if "(" in h) == [
        "backretrieval recall@k (image:effnet)",  # the revision and digests left out: the name tells them apart
        "backretrieval recall@k (no image model)",
        "spearman (image:effnet)",  # only corr's column is called so: no task name needed
        "spearman (no image model)",
    ]


def test_two_directions_add_bkr_averaged_over_the_pairs_by_hand():
    board = board_of(*direction("de"), *direction("fr", shift=0.1))
    *_, over, best = family_sections(board)["retrieval"]
    assert over.title == "BackRetrieval over language pairs, ikea test"
    assert best.title == "Best model vs the others, ikea test" and best.header[2] == "a − model"
    assert over.header == ("model", "en→de", "en→fr", "average")
    rows = {row[0]: row[1:] for row in over.rows}
    # a: mean over seeds 0.5033 (de) and 0.6033 (fr); average 0.5533
    assert rows["a"] == ("0.5033", "0.6033", "0.5533")
    assert [row[0] for row in over.rows] == ["a", "b", "c", "d", "e"]  # best average first


def test_too_few_models_say_why_instead_of_a_table():
    board = board_of(*direction("de")[:6])  # two models
    (section,) = family_sections(board)["retrieval"]
    assert section.rows == () and section.note.startswith(
        "not computed: correlating backretrieval with xlr needs at least 3"
    )


def test_sections_reach_the_readme_and_the_page_escaped():
    board = board_of(*direction("de"))
    tables = family_tables(board)
    hostile = {"retrieval": [Section("<b>x</b>", ("h|1",), (("<script>",),), "a | b")]}
    text = readme(board, tables, [], "c", hostile)
    assert "#### &lt;b&gt;x&lt;/b&gt;" in text and "| h\\|1 |" in text and "| &lt;script&gt; |" in text
    html = family_pages(board, tables, hostile)
    assert "<h3>&lt;b&gt;x&lt;/b&gt;</h3>" in html and "<td>&lt;script&gt;</td>" in html
    assert html.count("<script>") == 1  # the page's own


def test_the_meta_evaluation_is_computed_once_per_board_and_freed_with_it(monkeypatch):
    import gc

    from harness_tasks.retrieval import plots as retrieval_plots
    from harness_tasks.retrieval.analysis import meta

    calls = []
    evaluate = meta.meta_evaluate
    monkeypatch.setattr(meta, "meta_evaluate", lambda rows, **kw: calls.append(1) or evaluate(rows, **kw))
    board = board_of(*direction("de"))
    (triple,) = triples(board)
    assert meta_result(board, triple) is meta_result(board, triple) and len(calls) == 1
    family_sections(board)
    assert len(calls) == 1
    key = id(board)
    del board
    gc.collect()
    assert key not in retrieval_plots._MEMO


def test_a_sections_reference_to_a_non_function_is_a_warning_naming_the_family(capsys):
    odd = Family("odd", "Odd", ("xlr",), sections="harness.leaderboard.tables:MISSING", plugin="p")  # a string
    board = merge([Entry(record("xlr", "a", 0.5), Path("results.jsonl"))], Families((odd,)))
    assert family_sections(board) == {}
    assert (
        "family 'odd' registers sections 'harness.leaderboard.tables:MISSING', which is not a function"
        in capsys.readouterr().err
    )
