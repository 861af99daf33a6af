"""The model pages (card, every result, where it disagrees most with the best other model) and the item pages
(the items behind one value), linked from the ranked tables."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from math import isfinite
from typing import Any

from harness.errors import HarnessError
from harness.leaderboard.items import Items, disagreements, finer_values, item_values, read_items
from harness.leaderboard.merge import Board, Result, telling_apart
from harness.leaderboard.models import HEADERS, card_of, model_rows, newest
from harness.leaderboard.page import crumbs, document, esc, footer, number_key, scrolling, td, th
from harness.leaderboard.ranking import Ranking, Samples
from harness.leaderboard.site import UP, Site
from harness.leaderboard.tables import cell_of, dataset_of, pair_of, result_family
from harness.results.metrics import info_of

DISAGREEMENTS = 5


def _shown(value: Any, decimals: int = 4) -> str:
    """A log value as text: a number to ``decimals`` places (its column's, ``_decimals``), anything else as is."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.{decimals}f}"
    return value if isinstance(value, str) else json.dumps(value)


def _decimals(values: Sequence[Any]) -> int:
    """The fewest decimal places, up to four, that write every float of a column as four would: hits as 1 and 0,
    ranks as 2.0 and 24.5 (a tie), reciprocal ranks as 0.3333 (an int is written whole, as it is)."""
    numbers = [v for v in values if isinstance(v, float) and isfinite(v)]
    return next(d for d in range(5) if all(round(v, d) == round(v, 4) for v in numbers))


def where(result: Result) -> str:
    """``<data set> <direction>`` of a result."""
    record = result.record
    pair = pair_of(record)
    return f"{dataset_of(record)} {pair}" if pair else dataset_of(record)


def _value_td(value: Any, number: bool, decimals: int) -> str:
    """A cell of an item table: a number right-aligned with its sort key, anything else as text."""
    sort = number_key(value) if number and value is not None else _shown(value)
    return td(_shown(value, decimals), sort, numeric=number, css="" if number else "text")


def item_page(board: Board, result: Result, items: Items, site: Site) -> str:
    """The items behind one value: a sortable table of the log's fields per item."""
    record = result.record
    family = board.index.of_record(record)
    cell = cell_of(record, record.main_metric)
    info = info_of(record, record.main_metric)
    title = f"{result.model_label} on {record.task}, {where(result)}"
    numeric = [
        all(isinstance(v[i], (int, float)) or v[i] is None for _, v in items.rows) for i in range(len(items.fields))
    ]
    decimals = [_decimals([v[i] for _, v in items.rows]) for i in range(len(items.fields))]
    table = [
        '<table class="sortable">',
        "<thead><tr>"
        + th("item", False)
        + "".join(th(f, n, higher=None) for f, n in zip(items.fields, numeric))
        + "</tr></thead>",
        "<tbody>",
    ]
    rendered: dict[tuple[type, str, bool, int], str] = {}  # values repeat (hits, ranks): each cell written once

    def value_cell(value: Any, number: bool, places: int) -> str:
        key = (type(value), repr(value), number, places)  # by its text: 0.0 and -0.0 are equal but shown apart
        if key not in rendered:
            rendered[key] = _value_td(value, number, places)
        return rendered[key]

    for item, values in items.rows:
        cells = "".join(value_cell(v, n, d) for v, n, d in zip(values, numeric, decimals))
        table.append(f"<tr>{td(item, item)}{cells}</tr>")
    table += ["</tbody>", "</table>"]
    seeds = f", {items.seeds} seeds averaged per item" if items.seeds > 1 else ""
    kept = (
        " The log is compact: it keeps only the fields the metric reads (no texts; an item's rank is about 1/rr)."
        if items.compact
        else ""
    )
    body = [
        crumbs(
            ("Leaderboard", f"{UP}index.html"),
            (family.title, site.families.get(family.name) and UP + site.families[family.name]),
            (result.model_label, site.model(result.model_label, UP)),
            (f"{record.task} {where(result)}", None),
        ),
        f"<h1>{esc(title)}</h1>",
        f'<p class="intro">{esc(info.display)} = {esc(cell.text)} over {len(items.rows)} items of '
        f"{esc(where(result))}{esc(seeds)}. Click a header to sort.{esc(kept)}</p>",
        f'<p class="note">Signature: <code>{esc(record.signature)}</code></p>',
        *scrolling(table),
        *footer(board),
    ]
    return document(f"{title}: items", body)


def _card(result: Result, fields: Sequence[str]) -> list[str]:
    model = result.record.model
    card = card_of(result.record)
    languages = card.get("languages") if isinstance(card.get("languages"), list) else None
    pairs = [
        ("name", model.get("name")),
        ("adapter", model.get("adapter")),
        ("source", model.get("source")),
        ("revision", model.get("revision")),
        ("arguments", json.dumps(model.get("args") or {}, sort_keys=True)),
        *(
            (h, ", ".join(str(x) for x in languages) if h == "languages" and languages else f)
            for h, f in zip(HEADERS[1:-1], fields)
        ),
        ("control", card.get("control")),
    ]
    return ['<dl class="card">'] + [
        f"<dt>{esc(name)}</dt><dd>{esc(value)}</dd>" for name, value in pairs if value not in (None, "", "—")
    ] + ["</dl>"]  # fmt: skip


def _results_table(board: Board, results: list[Result], site: Site) -> list[str]:
    results = sorted(
        results,
        key=lambda r: (result_family(board, r), r.record.task, where(r)),
    )
    alike: dict[tuple[str, str], list[Result]] = {}
    for result in results:
        alike.setdefault((result.record.task, where(result)), []).append(result)
    apart = {  # a task run twice on one data set and direction (two image models, say): what tells them apart
        signature: f" ({', '.join(parts)})"
        for same in alike.values()
        if len(same) > 1
        for signature, parts in telling_apart(r.signature for r in same).items()
    }
    rows = []
    for result in results:
        record = result.record
        cell = cell_of(record, record.main_metric)
        info = info_of(record, record.main_metric)
        href = site.item(result, UP)
        value = f'<a href="{esc(href)}">{esc(cell.number)}</a>' if href else esc(cell.number)
        data = where(result) + apart.get(result.signature, "")
        rows.append(
            "<tr>"
            + td(board.index.of_record(record).title, result_family(board, result))
            + td(record.task, record.task)
            + td(data, data)
            + td(info.display, info.display)
            + f'<td class="number" data-sort="{esc(number_key(cell.value))}">{value}'
            f'<span class="ci">{esc(cell.spread)}</span></td>' + "</tr>"
        )
    header = "".join(th(h, h == "value", higher=None) for h in ("family", "task", "data set", "metric", "value"))
    return [
        "<h2>Every result</h2>",
        *scrolling(
            ['<table class="sortable">', f"<thead><tr>{header}</tr></thead>", "<tbody>", *rows, "</tbody>", "</table>"]
        ),
    ]


def _disagreements(key: str, rankings: Sequence[Ranking], samples: Samples, site: Site) -> list[str]:
    """Per ranked family, the items where the model and the best other model differ most, per direction."""
    from harness.leaderboard.compare import statistic_of

    lines: list[str] = []
    for ranking in rankings:
        own = next((r for r in ranking.rows if key in r.keys), None)
        other = next((r for r in ranking.rows if key not in r.keys), None)
        if own is None or other is None:
            continue
        found_rows: list[tuple[str, str, float, float]] = []  # direction, item cell, this, other
        for index, direction in enumerate(ranking.directions):
            mine, theirs = own.results[index], other.results[index]
            if mine is None or theirs is None:
                continue
            a, b = samples.values(mine), samples.values(theirs)
            if a is None or b is None:
                continue
            try:
                statistic = statistic_of(mine, mine.record.main_metric)
            except HarnessError:
                continue
            finer = finer_values(mine, statistic), finer_values(theirs, statistic)
            pair = (finer[0], finer[1]) if finer[0] is not None and finer[1] is not None else None
            for found in disagreements(item_values(a, statistic), item_values(b, statistic), DISAGREEMENTS, pair):
                href = site.item(mine, UP)
                item = f'<a href="{esc(href)}">{esc(found.item)}</a>' if href else esc(found.item)
                found_rows.append((direction.title, item, found.a, found.b))
        places = _decimals([v for *_, a, b in found_rows for v in (a, b)])
        rows = [
            f"<tr>{td(title, title)}<td>{item}</td>"
            + "".join(td(_shown(float(v), places), number_key(v), numeric=True) for v in (a, b))
            + "</tr>"
            for title, item, a, b in found_rows
        ]
        if rows:
            header = "".join(
                th(h, n, higher=None)
                for h, n in (("direction", False), ("item", False), ("this", True), ("other", True))
            )
            lines += [
                f"<h3>{esc(ranking.family.title)}: against {esc(other.label)}</h3>",
                f'<p class="note">The {DISAGREEMENTS} items per direction where the two differ most on '
                f"{esc(ranking.info.display)} of {esc(ranking.role)} (per-item value; a score is standardised).</p>",
                *scrolling(['<table class="sortable">', f"<thead><tr>{header}</tr></thead>", "<tbody>", *rows,
                            "</tbody>", "</table>"]),
            ]  # fmt: skip
    return ["<h2>Where it disagrees most</h2>", *lines] if lines else []


def model_pages(board: Board, rankings: Sequence[Ranking], samples: Samples, site: Site) -> dict[str, str]:
    """Page path -> page, one per model."""
    rows = {row.label: row for row in model_rows(board)}
    shown = newest(board)
    own: dict[str, list[Result]] = {}
    for result in board.current:
        own.setdefault(result.model_key, []).append(result)
    pages = {}
    for key, label in board.labels.items():
        path = site.model(label)
        if path is None or key not in shown or label not in rows:
            continue
        ranks = [
            f"{esc(r.family.title)}: "
            + (f"rank {row.rank}{' (shared)' if row.shared else ''}" if row.rank is not None else esc(row.note or "not ranked"))
            for r in rankings
            for row in r.rows
            if key in row.keys
        ]  # fmt: skip
        body = [
            crumbs(("Leaderboard", f"{UP}index.html"), (label, None)),
            f"<h1>{esc(label)}</h1>",
            *([f'<p class="intro">{"; ".join(ranks)}.</p>'] if ranks else []),
            *_card(shown[key], rows[label].fields),
            *_results_table(board, own[key], site),
            *_disagreements(key, rankings, samples, site),
            *footer(board),
        ]
        pages[path] = document(f"{label}: xling-harness leaderboard", body)
    return pages


def readable_items(results: Sequence[Result]) -> list[tuple[Result, Items]]:
    """The items of each result whose log can be read (one that cannot is a warning, and gets no page)."""
    found = []
    for result in results:
        if not result.record.samples_file:
            continue
        try:
            found.append((result, read_items(result)))
        except HarnessError as exc:
            print(
                f"harness: warning: no item page for {result.model_label} on {result.record.task}: {exc}",
                file=sys.stderr,
            )
    return found
