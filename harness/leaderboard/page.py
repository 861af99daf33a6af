"""``index.html``: one static, self-contained page that a researcher reads.

First the overview (per family, data set and direction: the best model, the runner-up and
whether the gap is real), then one table per family, data set and direction (rows: models, best
first; columns: the metrics with short headers, each cell with its interval), a chance row,
numbered column notes and ⚠-marked cell notes written under the table (reachable without
hover, on a phone too), the full signatures folded under each table, filters by task, data set,
language pair and model, sorting that starts with the best, the family's extra tables and plots,
and a footer with the harness versions and data revisions. At phone width the model column stays
in view while a wide table scrolls sideways, with a shadow and a line saying there is more. Every string from the results goes through ``html.escape``; the script only reorders
and hides existing elements (it never parses text as HTML), and nothing is loaded from the network.
"""

from __future__ import annotations

import html
import itertools
import math
import re
from collections.abc import Sequence

from harness.leaderboard.figures import Plot
from harness.leaderboard.merge import Board
from harness.leaderboard.models import HEADERS as MODEL_HEADERS
from harness.leaderboard.models import ModelRow, model_rows
from harness.leaderboard.overview import FamilyOverview, overview
from harness.leaderboard.sections import Section
from harness.leaderboard.tables import (
    MISSING,
    UNDEFINED,
    Cell,
    FamilyTable,
    column_note_lines,
    long_rows,
    note_marks,
    sentence,
)

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; padding: 0 1em; max-width: 1240px; color: #222; line-height: 1.4; }
h1 { margin-bottom: 0.2em; }
h2 { margin-top: 1.6em; border-bottom: 2px solid #ddd; }
h3 { margin: 1.2em 0 0.3em; font-size: 1.05em; }
.filters { position: sticky; top: 0; background: #fff; padding: 0.5em 0; border-bottom: 1px solid #ddd; z-index: 1; }
.filters label { margin-right: 1.2em; white-space: nowrap; }
.boards { display: flex; flex-wrap: wrap; gap: 0 2.5em; align-items: flex-start; }
.board { max-width: 580px; min-width: 0; }
.scroll-wrap { position: relative; max-width: 100%; }
.scroll { max-width: 100%; overflow-x: auto; -webkit-overflow-scrolling: touch; }
.scroll-wrap.more::after { content: ""; position: absolute; top: 0; right: 0; bottom: 0; width: 1.6em; pointer-events: none;
  background: linear-gradient(to right, rgba(0,0,0,0), rgba(0,0,0,0.16)); }
.scroll-hint { display: none; font-size: 0.8em; color: #666; margin: 0.1em 0 0; }
.scroll-wrap.more + .scroll-hint { display: block; }
th:first-child, td:first-child { position: sticky; left: 0; z-index: 1; background: #fff; background-clip: padding-box; }
th:first-child { background: #f3f3f3; }
tfoot td:first-child { background: #fafafa; }
.overview td { vertical-align: top; }
.overview td.gap { font-size: 0.9em; color: #333; min-width: 16em; max-width: 30em; }
.overview .best { font-weight: 600; }
p.collapsed, details.collapsed > summary { color: #555; font-size: 0.92em; }
details.collapsed > summary { cursor: pointer; margin: 0.6em 0; }
.intro { font-size: 0.92em; color: #333; }
a.mark { color: #b35900; text-decoration: none; }
table { border-collapse: separate; border-spacing: 0; border-top: 1px solid #ccc; border-left: 1px solid #ccc; margin: 0.4em 0; font-size: 0.88em; }
th, td { border-right: 1px solid #ccc; border-bottom: 1px solid #ccc; padding: 0.25em 0.55em; }  /* separate borders: a sticky cell keeps its own */
th { background: #f3f3f3; vertical-align: bottom; }
table.sortable thead th { cursor: pointer; user-select: none; }
th[aria-sort="ascending"]::after { content: " \\25B2"; }
th[aria-sort="descending"]::after { content: " \\25BC"; }
td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.model { font-weight: 600; }
.ci { display: block; color: #666; font-size: 0.82em; }
.warn { color: #b35900; cursor: help; }
tfoot td { font-style: italic; color: #555; background: #fafafa; }
ol.notes, ul.notes { font-size: 0.8em; color: #444; margin: 0.2em 0 0.8em; padding-left: 1.6em; }
ul.notes { list-style: none; padding-left: 0; }
details.signatures { font-size: 0.8em; color: #444; margin: 0 0 0.8em; }
details.signatures code, .long code { word-break: break-all; }
:target { background: #fff3c4; }
p.note { font-size: 0.85em; color: #444; margin: 0.2em 0 1em; }
.figures { display: flex; flex-wrap: wrap; gap: 0 1em; align-items: flex-start; }
figure { margin: 1em 0; max-width: 100%; }
figure img { display: block; max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #444; }
.long { table-layout: fixed; width: 100%; }
.long td { overflow-wrap: anywhere; }
footer { margin-top: 2em; border-top: 1px solid #ddd; font-size: 0.82em; color: #555; }
@media (max-width: 600px) {
  body { margin: 0.6em auto; padding: 0 0.6em; }
  h1 { font-size: 1.5em; }
  .board { max-width: 100%; }
  .filters { position: static; }
  .filters label { display: inline-block; margin: 0 0.6em 0.3em 0; }
  .filters select { max-width: 11em; }
  figure { margin: 0.6em 0; }
  table.overview, table.overview tbody, table.overview tr, table.overview td { display: block; }
  table.overview { border: none; }
  table.overview thead { display: none; }
  table.overview tr { border: 1px solid #ccc; margin: 0 0 0.5em; }
  table.overview td { border: none; position: static; padding: 0.15em 0.5em; max-width: none; min-width: 0; }
  table.overview td.what { font-weight: 600; background: #f3f3f3; }
  table.overview td[data-label]::before { content: attr(data-label) ": "; color: #666; font-size: 0.85em; }
  table.overview .ci { display: inline; margin-left: 0.4em; }
}
"""

SCRIPT = """
(function () {
  "use strict";
  function each(list, f) { Array.prototype.forEach.call(list, f); }
  function sortKey(cell, numeric) {
    var raw = cell.getAttribute("data-sort");
    if (raw === null) { raw = cell.textContent; }
    if (raw === "") { return null; }
    return numeric ? parseFloat(raw) : raw.toLowerCase();
  }
  function sortBy(table, index, header) {
    var numeric = header.getAttribute("data-type") === "number";
    var best = header.getAttribute("data-higher") === "0" ? "ascending" : "descending";
    if (!numeric) { best = "ascending"; }
    var current = header.getAttribute("aria-sort");
    var direction = current === best ? (best === "ascending" ? "descending" : "ascending") : best;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    each(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", direction);
    rows.sort(function (a, b) {
      var x = sortKey(a.cells[index], numeric), y = sortKey(b.cells[index], numeric);
      if (x === null || y === null) { return (x === null) - (y === null); }
      if (x === y) { return 0; }
      return (x < y ? -1 : 1) * (direction === "ascending" ? 1 : -1);
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  each(document.querySelectorAll("table.sortable"), function (table) {
    each(table.tHead.rows[0].cells, function (header, index) {
      header.addEventListener("click", function () { sortBy(table, index, header); });
    });
  });
  function value(id) { return document.getElementById(id).value; }
  function matches(element, task, dataset, pair) {
    var tasks = (element.getAttribute("data-tasks") || "").split(" ");
    return (task === "" || tasks.indexOf(task) >= 0) &&
      (dataset === "" || element.getAttribute("data-dataset") === dataset) &&
      (pair === "" || element.getAttribute("data-pair") === pair);
  }
  function apply() {
    var task = value("filter-task"), dataset = value("filter-dataset"), pair = value("filter-pair");
    var model = value("filter-model").toLowerCase();
    each(document.querySelectorAll("[data-board]"), function (board) {
      board.hidden = !matches(board, task, dataset, pair);
    });
    each(document.querySelectorAll("section.family"), function (family) {
      family.hidden = family.querySelectorAll("[data-board]:not([hidden])").length === 0;
    });
    each(document.querySelectorAll("table.sortable tbody tr"), function (row) {
      var name = row.cells[0].textContent.toLowerCase();
      row.hidden = (model !== "" && name.indexOf(model) < 0) || (row.hasAttribute("data-tasks") && !matches(row, task, dataset, pair));
    });
  }
  each(document.querySelectorAll(".filters select, .filters input"), function (control) {
    control.addEventListener("input", apply);
    control.addEventListener("change", apply);
  });
  function cue(box) {
    var more = box.scrollWidth - box.clientWidth - box.scrollLeft > 2;
    box.parentNode.classList.toggle("more", more);
  }
  each(document.querySelectorAll(".scroll-wrap > .scroll"), function (box) {
    cue(box);
    box.addEventListener("scroll", function () { cue(box); });
  });
  function recue() { each(document.querySelectorAll(".scroll-wrap > .scroll"), cue); }
  window.addEventListener("resize", recue);
  each(document.querySelectorAll("details"), function (d) { d.addEventListener("toggle", recue); });
  document.body.setAttribute("data-ready", "yes");
})();
"""


_SURROGATE = re.compile("[\ud800-\udfff]")


def esc(text: object) -> str:
    """Escaped text for element content and quoted attribute values; a NUL is dropped and a lone surrogate (a file
    name's undecodable byte) becomes U+FFFD, so the page is always valid UTF-8 without NUL."""
    return html.escape(_SURROGATE.sub("\ufffd", str(text).replace("\0", "")), quote=True)


def _number(value: float | None) -> str:
    return "" if value is None or not math.isfinite(value) else repr(float(value))


def _td(text: str, sort: str, numeric: bool = False, css: str = "") -> str:
    classes = " ".join(c for c in ("number" if numeric else "", css) if c)
    attribute = f' class="{classes}"' if classes else ""
    key = "" if sort == text else f' data-sort="{esc(sort)}"'  # none where the text sorts as itself (page size)
    return f"<td{attribute}{key}>{esc(text)}</td>"


def _th(text: str, numeric: bool, title: str | None = None, higher: bool | None = True, note: int | None = None) -> str:
    kind = "number" if numeric else "text"
    tip = f' title="{esc(title)}"' if title else ""
    direction = f' data-higher="{int(higher)}"' if numeric and higher is not None else ""
    mark = f"<sup>{note}</sup>" if note is not None else ""
    return f'<th data-type="{kind}"{direction}{tip} scope="col">{esc(text)}{mark}</th>'


def _tooltip(cell: Cell) -> str:
    parts = []
    if cell.value is None:
        parts.append(f"undefined: {cell.reason}" if cell.reason else "undefined")
    if cell.interval is not None:
        parts.append(f"interval over items [{cell.interval[0]:.4f}, {cell.interval[1]:.4f}]")
    if cell.value is not None and cell.std is not None:
        parts.append(
            f"mean ± std over {cell.seeds} seeds: {cell.value:.4f} ± {cell.std:.4f}" if cell.seeds > 1 else "one seed"
        )
    parts += [f"warning: {w}" for w in cell.warnings]
    return "; ".join(parts)


class Notes:
    """A table's cell notes (a cell's warnings, an undefined value's reason), each text once, lettered a, b, ...

    ``prefix`` makes the anchors unique on the page."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.texts: dict[str, str] = {}

    def mark(self, text: str) -> str:
        """The letter of a note (added on first use)."""
        return self.texts.setdefault(text, _letter(len(self.texts)))

    def link(self, text: str, symbol: str) -> str:
        """A mark in a cell that jumps to its note (a tap on a phone, no hover needed)."""
        letter = self.mark(text)
        return f'<a class="mark" href="#{self.prefix}-{letter}" title="{esc(text)}">{symbol}<sup>{letter}</sup></a>'


def _letter(index: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return (
        letters[index] if index < len(letters) else letters[index // len(letters) - 1] + letters[index % len(letters)]
    )


def _cell(cell: Cell | None, notes: Notes) -> str:
    if cell is None:
        return _td(MISSING, "", numeric=True)
    spread = f'<span class="ci">{esc(cell.spread)}</span>' if cell.spread else ""
    reason = f" {notes.link(sentence(cell.reason), '')}" if cell.value is None and cell.reason else ""
    warn = "".join(f" {notes.link(w, '⚠')}" for w in cell.warnings)
    return (
        f'<td class="number" data-sort="{esc(_number(cell.value))}" title="{esc(_tooltip(cell))}">'
        f"{esc(cell.number)}{reason}{warn}{spread}</td>"
    )


def scrolling(table: list[str]) -> list[str]:
    """A table in a box that scrolls sideways when the screen is narrower, with a shadow and a line saying so."""
    return [
        '<div class="scroll-wrap"><div class="scroll">',
        *table,
        "</div></div>",
        '<p class="scroll-hint">Swipe the table sideways for more columns →</p>',
    ]


def _model_td(label: str, anchors: dict[str, str]) -> str:
    """A model's cell: its name, a link to its row in the model table."""
    anchor = anchors.get(label)
    if anchor is None:
        return _td(label, label, css="model")
    return f'<td class="model"><a href="#{anchor}">{esc(label)}</a></td>'


def _models(rows: Sequence[ModelRow], anchors: dict[str, str]) -> list[str]:
    """The model table: each model's card and the families it has results in (links to their sections)."""
    body = []
    for row in rows:
        families = ", ".join(f'<a href="#family-{esc(f.name)}">{esc(f.title)}</a>' for f in row.families)
        body.append(
            f'<tr id="{anchors[row.label]}">{_td(row.label, row.label, css="model")}'
            + "".join(_td(v, v) for v in row.fields)
            + f'<td data-sort="{esc(", ".join(f.title for f in row.families))}">{families}</td></tr>'
        )
    table = [
        '<table class="models">',
        "<thead><tr>" + "".join(f'<th scope="col">{esc(h)}</th>' for h in MODEL_HEADERS) + "</tr></thead>",
        "<tbody>",
        *body,
        "</tbody>",
        "</table>",
    ]
    return [
        '<section id="models">',
        "<h2>Models</h2>",
        '<p class="intro">What each model is, from its results lines\' model card (—: not recorded; lines written '
        "before cards existed have none), and the families it has results in. A model's name in any table links "
        "here.</p>",
        *scrolling(table),
        "</section>",
    ]


def _board(table: FamilyTable, number: int, anchors: dict[str, str]) -> list[str]:
    tasks = " ".join(sorted({c.role for c in table.columns}))
    attrs = f'class="board" data-board="" data-tasks="{esc(tasks)}" data-dataset="{esc(table.dataset)}" data-pair="{esc(table.pair or "")}"'
    marks = note_marks(table)
    headers = [_th("model", False)] + [
        _th(header, True, column.task_signature, info.higher_is_better, mark)
        for header, column, info, mark in zip(table.headers, table.columns, table.infos, marks)
    ]
    if table.averaged:
        headers.append(_th("average", True, "only for models that have every column of the table"))
    notes = Notes(f"t{number}")
    body = []
    for row in table.rows:
        cells = [_model_td(row.label, anchors)] + [_cell(c, notes) for c in row.cells]
        if table.averaged:
            cells.append(
                _td(MISSING if row.average is None else f"{row.average:.4f}", _number(row.average), numeric=True)
            )
        body.append("<tr>" + "".join(cells) + "</tr>")
    inner = [
        '<table class="sortable">',
        "<thead><tr>" + "".join(headers) + "</tr></thead>",
        "<tbody>",
        *body,
        "</tbody>",
    ]
    if table.has_chance:
        chance = [MISSING if info.chance is None else f"{info.chance:.4f}" for info in table.infos]
        extra = ["<td></td>"] if table.averaged else []
        inner.append(
            "<tfoot><tr><td>chance</td>"
            + "".join(f'<td class="number">{esc(c)}</td>' for c in chance)
            + "".join(extra)
            + "</tr></tfoot>"
        )
    inner.append("</table>")
    lines = [f"<div {attrs}>", f"<h3>{esc(table.title)}</h3>", *scrolling(inner)]
    column_notes = [
        f"<li><sup>{m}</sup> {esc(h)} (whole column): {esc(text)}</li>" for m, h, text in column_note_lines(table)
    ]
    cell_notes = [
        f'<li id="{notes.prefix}-{letter}"><sup>{letter}</sup> {esc(text)}</li>' for text, letter in notes.texts.items()
    ]
    if column_notes or cell_notes:
        lines += ['<ul class="notes">', *column_notes, *cell_notes, "</ul>"]
    lines += ['<details class="signatures"><summary>What the columns measure, and their signatures</summary><ol>']
    lines += [
        f"<li>{esc(h)}: {esc(d) + ' ' if d else ''}"
        + " = ".join(f"<code>{esc(t)}</code>" for t in c.recorded)
        + "</li>"
        for h, c, d in zip(table.headers, table.columns, table.descriptions or [""] * len(table.columns))
    ]
    return [*lines, "</ol></details>", "</div>"]


def _overview(found: Sequence[FamilyOverview]) -> list[str]:
    lines = [
        '<section id="overview">',
        "<h2>Overview</h2>",
        '<p class="intro">Per data set and direction, the best model on the family\'s main metric, the runner-up, '
        "and whether the gap between them is real: the paired bootstrap over items of <code>harness compare</code> "
        "where both runs logged their samples, else whether the two intervals over items overlap.</p>",
    ]
    for item in (f for f in found if f.collapsed is None and f.lines):
        lines.append(f"<h3>{esc(item.family.title)} ({item.models} model{'' if item.models == 1 else 's'})</h3>")
        rows = []
        for line in item.lines:
            second = (
                f'<td data-label="runner-up">{esc(MISSING)}</td>'
                if line.runner_up is None
                else f'<td data-label="runner-up">{esc(line.runner_up[0])}'
                f'<span class="ci">{esc(line.runner_up[1].text)}</span></td>'
            )
            rows.append(
                f'<tr><td class="what">{esc(line.title)}<span class="ci">{esc(line.header)}</span></td>'
                f'<td data-label="best"><span class="best">{esc(line.best[0])}</span>'
                f'<span class="ci">{esc(line.best[1].text)}</span></td>'
                f'{second}<td class="gap">{esc(line.gap)}</td></tr>'
            )
        lines += scrolling(
            [
                '<table class="overview">',
                "<thead><tr>"
                + "".join(f'<th scope="col">{h}</th>' for h in ("data set, metric", "best", "runner-up", "gap"))
                + "</tr></thead>",
                "<tbody>",
                *rows,
                "</tbody>",
                "</table>",
            ]
        )
    lines += [f'<p class="collapsed">{esc(f.collapsed)}</p>' for f in found if f.collapsed is not None]
    return [*lines, "</section>"]


def _section(section: Section) -> list[str]:
    lines = ['<div class="board">', f"<h3>{esc(section.title)}</h3>"]
    if section.rows:
        lines += scrolling(
            [
                "<table>",
                "<thead><tr>" + "".join(f'<th scope="col">{esc(h)}</th>' for h in section.header) + "</tr></thead>",
                "<tbody>",
                *("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in section.rows),
                "</tbody>",
                "</table>",
            ]
        )
    if section.note:
        lines.append(f'<p class="note">{esc(sentence(section.note))}</p>')
    return [*lines, "</div>"]


def _long_table(board: Board) -> list[str]:
    names = ("model", "task", "metric", "value", "low", "high", "std", "n", "seeds", "signature")
    widths = ("11%", "9%", "8%", "7%", "7%", "7%", "7%", "5%", "5%", "34%")
    numeric = {"value", "low", "high", "std", "n", "seeds"}
    lines = [
        "<details>",
        "<summary>All current results, one row per metric (also in leaderboard.csv)</summary>",
        '<table class="sortable long">',
        "<colgroup>" + "".join(f'<col style="width:{w}">' for w in widths) + "</colgroup>",
        "<thead><tr>" + "".join(_th(n, n in numeric) for n in names) + "</tr></thead>",
        "<tbody>",
    ]
    for row in long_rows(board, detailed=False):
        attrs = f' data-tasks="{esc(row["role"])}" data-dataset="{esc(row["dataset"])}" data-pair="{esc(row["pair"] or "")}"'
        cells = []
        for name in names:
            value = row[name]
            if name in ("value", "low", "high", "std"):
                cells.append(
                    _td(
                        UNDEFINED if value is None and name == "value" else "" if value is None else f"{value:.4f}",
                        _number(value),
                        numeric=True,
                    )
                )
            elif name == "signature":
                cells.append(f"<td><code>{esc(value)}</code></td>")
            else:
                cells.append(
                    _td("" if value is None else str(value), "" if value is None else str(value), name in numeric)
                )
        lines.append(f"<tr{attrs}>" + "".join(cells) + "</tr>")
    return [*lines, "</tbody>", "</table>", "</details>"]


def _options(select: str, label: str, values: Sequence[str]) -> str:
    options = '<option value="">all</option>' + "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in values)
    return f'<label>{esc(label)} <select id="{select}">{options}</select></label>'


def _filters(tables: Sequence[FamilyTable]) -> str:
    tasks = sorted({c.role for t in tables for c in t.columns})
    datasets = sorted({t.dataset for t in tables})
    pairs = sorted({t.pair for t in tables if t.pair})
    return (
        '<div class="filters">'
        + _options("filter-task", "Task", tasks)
        + _options("filter-dataset", "Data set", datasets)
        + _options("filter-pair", "Language pair", pairs)
        + '<label>Model <input id="filter-model" type="search" placeholder="model name"></label></div>'
    )


def _footer(board: Board) -> list[str]:
    versions = sorted(
        {
            f"{r.record.harness.get('version')}"
            + (f" (git {str(r.record.harness['git'])[:12]})" if r.record.harness.get("git") else "")
            for r in board.current
        }
    )
    data = sorted(
        {
            f"{r.record.dataset.get('loader')} {r.record.dataset.get('split') or ''}".strip()
            + f" @ {r.record.dataset.get('revision')}"
            for r in board.current
        }
    )
    return [
        "<footer>",
        f"<p>Harness: {esc('; '.join(versions))}.</p>",
        f"<p>Data revisions: {esc('; '.join(data))}.</p>",
        "</footer>",
    ]


def page(
    board: Board, tables: Sequence[FamilyTable], plots: Sequence[Plot], sections: dict[str, list[Section]] | None = None
) -> str:
    """The whole ``index.html``."""
    superseded = sum(r.superseded for r in board.results)
    answers = overview(board, tables)
    collapsed = {f.family.name: f.collapsed for f in answers if f.collapsed is not None}
    models = model_rows(board)
    anchors = {row.label: f"model-{index + 1}" for index, row in enumerate(models)}
    lines = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>xling-harness leaderboard</title>",
        f"<style>{STYLE}</style>",
        "</head>",
        "<body>",
        "<h1>Leaderboard</h1>",
        f'<p class="intro">{len(board.results) - superseded} results of {len(board.labels)} models '
        f'({superseded} superseded, kept in <a href="leaderboard.json">leaderboard.json</a>; also '
        '<a href="leaderboard.csv">leaderboard.csv</a>).</p>',
        *_overview(answers),
        '<details class="intro"><summary>How to read the tables</summary><p>'
        "One table per data set and direction; rows are ranked best first. A cell is the value (the mean over seeds) "
        "with its interval over items below it, or ± the standard deviation over seeds where no interval was recorded. "
        f"{esc(MISSING)}: not run; {esc(UNDEFINED)}: undefined (its lettered note says why). A numbered note in a "
        "header holds for the whole column; ⚠ marks a cell whose own number must be read differently, its lettered "
        "note is under the table (tap or click the mark). Click a header to sort, best first; the signatures of "
        "the columns are folded under each table.</p></details>",
        _filters(tables),
    ]
    number = 0
    for family, group in itertools.groupby(tables, key=lambda t: t.family):
        lines += [
            f'<section class="family" id="family-{esc(family.name)}" data-family="{esc(family.name)}">',
            f"<h2>{esc(family.title)}</h2>",
        ]
        if family.name in collapsed:
            lines.append(f'<details class="collapsed"><summary>{esc(collapsed[family.name])}</summary>')
        lines.append('<div class="boards">')
        for table in group:
            number += 1
            lines += _board(table, number, anchors)
        lines.append("</div>")
        lines += _family_end(family.name, (sections or {}).get(family.name, []), plots)
        if family.name in collapsed:
            lines.append("</details>")
        lines.append("</section>")
    lines += _models(models, anchors)
    lines += _long_table(board)
    lines += _footer(board)
    lines += [f"<script>{SCRIPT}</script>", "</body>", "</html>"]
    return "\n".join(lines) + "\n"


def _family_end(family: str, sections: Sequence[Section], plots: Sequence[Plot]) -> list[str]:
    lines = ['<div class="boards">'] + [line for section in sections for line in _section(section)] + ["</div>"]
    lines.append('<div class="figures">')
    for plot in (p for p in plots if p.family == family):
        lines.append(
            f'<figure><a href="plots/{esc(plot.file)}"><img src="plots/{esc(plot.file)}" alt="{esc(plot.title)}" '
            f'loading="lazy"></a><figcaption>{esc(plot.title)} (tap for full size)</figcaption></figure>'
        )
    return [*lines, "</div>"]
