"""The model table: each model's card (parameters, dimension, input length, languages, licence, weights) and the
families it has results in; a model's name in any table links to its row."""

from __future__ import annotations

from pathlib import Path

from leaderboard.builders import record

from harness.leaderboard.markdown import readme
from harness.leaderboard.merge import merge
from harness.leaderboard.models import model_rows
from harness.leaderboard.page import page
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
    html = page(board, tables, [])
    assert '<td class="model"><a href="#model-1">e5</a></td>' in html
    assert '<tr id="model-1"><td class="model">e5</td><td>118 M</td>' in html
    assert '<a href="#family-retrieval">Image-pivoted retrieval</a>, <a href="#family-yisi">YiSi-2</a>' in html
    assert '<section class="family" id="family-retrieval"' in html
