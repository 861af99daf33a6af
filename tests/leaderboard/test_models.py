"""The model table: each model's card (parameters, dimension, input length, languages, licence, weights) and the
families it has results in; a model's name in any table links to its row."""

from __future__ import annotations

from pathlib import Path

from leaderboard.builders import family_pages, record

from harness.leaderboard.markdown import readme
from harness.leaderboard.merge import merge
from harness.leaderboard.models import model_rows
from harness.leaderboard.tables import family_tables
from harness.results.load import Entry

CARD = {
    "parameters": 117_653_760,
    "dimension": 384,
    "max_length": 512,
    "languages": ["en", "de", "fr"],
    "license": "mit",
    "source": "hub",
    "weights_digest": "sha256:0123456789abcdef0123",
}


def board_of(*records):
    return merge([Entry(r, Path("results.jsonl")) for r in records])


def test_each_model_has_its_card_and_its_families_and_an_old_line_shows_unknowns():
    carded = record("xlr", "e5", 0.9, started="2026-02-01T00:00:00+00:00")
    carded.model = {**carded.model, "card": CARD}
    older = record("yisi2_sts", "e5", 0.5, args={"src": "en", "tgt": "de"}, started="2026-01-01T00:00:00+00:00")
    plain = record("xlr", "old", 0.4)
    board = board_of(carded, older, plain)
    rows = {row.label: row for row in model_rows(board)}
    assert rows["e5"].fields == (
        "118 M",
        "384",
        "512",
        "en, de, fr",
        "mit",
        "Hub e5 (sha256:0123456789ab)",
    )
    assert [f.name for f in rows["e5"].families] == ["retrieval", "yisi"]
    assert rows["old"].fields == ("—",) * 5 + ("old",)  # no card: where the identity says the weights are
    assert [f.name for f in rows["old"].families] == ["retrieval"]
    tables = family_tables(board)
    text = readme(board, tables, [], "c")
    assert (
        "| e5 | 118 M | 384 | 512 | en, de, fr | mit | Hub e5 (sha256:0123456789ab) | Image-pivoted retrieval, YiSi-2 |"
        in text
    )
    html = family_pages(board, tables)
    assert '<td class="model"><a href="../models/e5.html">e5</a></td>' in html
    assert '<section class="family" id="family-retrieval"' in html


def test_a_model_page_shows_its_card_and_every_result(tmp_path):
    from leaderboard.builders import write_results

    from harness.cli import main

    carded = record("xlr", "e5", 0.9, started="2026-02-01T00:00:00+00:00")
    carded.model = {**carded.model, "card": CARD}
    write_results(tmp_path / "results", [carded, record("xlr", "old", 0.4), record("backretrieval", "e5", 0.3)])
    assert main(["leaderboard", str(tmp_path / "results"), "-o", str(tmp_path / "board"), "--no-plots"]) == 0
    text = (tmp_path / "board" / "models" / "e5.html").read_text(encoding="utf-8")
    assert "<dt>parameters</dt><dd>118 M</dd>" in text and "<dt>licence</dt><dd>mit</dd>" in text
    assert "<dt>languages</dt><dd>en, de, fr</dd>" in text
    assert "Image-pivoted retrieval: rank 1 (shared)." in text  # no interval, no logs: not shown to beat old
    assert text.count('<tr><td data-sort="retrieval">Image-pivoted retrieval</td>') == 2  # xlr and backretrieval
    assert '<a href="../index.html">Leaderboard</a>' in text
    old = (tmp_path / "board" / "models" / "old.html").read_text(encoding="utf-8")
    assert "<dt>parameters</dt>" not in old and "Image-pivoted retrieval: rank 1 (shared)." in old


def test_a_model_page_tells_apart_two_results_of_one_task_data_set_and_direction():
    from harness.leaderboard.detail import model_pages
    from harness.leaderboard.ranking import Samples, rankings
    from harness.leaderboard.site import site_of

    args = {"src": "en", "tgt": "de", "dataset": "ikea", "k": 10}
    image = {"image": {"name": "effnet", "revision": "sha256:" + "ab" * 32}}
    board = merge(
        [
            Entry(record("backretrieval", "a", 0.4, args=args, aux_models=image), Path("results.jsonl")),
            Entry(record("backretrieval", "a", 0.2, args=args), Path("results.jsonl")),
        ]
    )
    samples = Samples()
    site = site_of(board, [])
    (page,) = model_pages(board, rankings(board, samples), samples, site).values()
    assert "ikea test en→de (image:effnet)</td>" in page and "ikea test en→de (no image model)</td>" in page
