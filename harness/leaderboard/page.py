"""The pieces every page of the leaderboard is made of (style, script, escaped cells, sortable tables), and the
family pages.

The board is a set of static, self-contained pages: ``index.html`` (the ranked tables, ``index``), a page
per family (here: one table per data set and direction, rows best first, columns the metrics with short
headers, each cell with its interval, a chance row, numbered column notes and ⚠-marked cell notes under
the table, the full signatures folded, filters, the family's extra tables and plots), a page per model
(``model_page``) and a page per item set (``items``). At phone width the model column stays in view while
a wide table scrolls sideways, with a shadow and a line saying there is more. Every string from the
results goes through ``html.escape``; the script only reorders and hides existing elements (it never
parses text as HTML), and nothing is loaded from the network.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from harness.leaderboard.families import Family
from harness.leaderboard.figures import Plot
from harness.leaderboard.merge import Board
from harness.leaderboard.sections import Section
from harness.leaderboard.site import UP, Site
from harness.leaderboard.tables import (
    MISSING,
    UNDEFINED,
    Cell,
    FamilyTable,
    column_note_lines,
    note_marks,
    sentence,
)
from harness.results.records import finite_number

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; padding: 0 1em; max-width: 1240px; color: #222; line-height: 1.4; }
h1 { margin-bottom: 0.2em; }
h2 { margin-top: 1.6em; border-bottom: 2px solid #ddd; }
h3 { margin: 1.2em 0 0.3em; font-size: 1.05em; }
.filters { position: sticky; top: 0; background: #fff; padding: 0.5em 0; border-bottom: 1px solid #ddd; z-index: 1; }
.filters label { margin-right: 1.2em; white-space: nowrap; }
.boards { display: flex; flex-wrap: wrap; gap: 0 2.5em; align-items: flex-start; }
.board { max-width: 580px; min-width: 0; }
.board.wide { max-width: 100%; }
.board.wide th { max-width: 6.5em; overflow-wrap: anywhere; }
.board.wide th:first-child { max-width: none; }
.board.wide td.number { white-space: normal; }
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
table.ranked th { font-size: 0.86em; max-width: 7.5em; overflow-wrap: anywhere; }
table.ranked th.name, table.ranked td.model { min-width: 10em; max-width: 16em; overflow-wrap: anywhere; }
table.ranked tr.groups th { position: static; text-align: center; max-width: none; font-weight: 600; }
table.ranked tr.groups th:first-child { border-bottom: none; }
h2 a.more { font-size: 0.62em; font-weight: normal; margin-left: 0.6em; }
section.family > p.note { margin: 0.2em 0 0.4em; }
table.ranked td.rank, table.ranked th.rank { box-sizing: content-box; width: 24px; min-width: 24px; max-width: 24px;
  padding: 0.25em 6px; text-align: right; }  /* in pixels: the model column is pinned right after it */
table.ranked th:nth-child(2), table.ranked td:nth-child(2) { position: sticky; left: 37px; z-index: 1; background: #fff; }
table.ranked th:nth-child(2) { background: #f3f3f3; }
table.ranked td.facts { font-size: 0.78em; color: #444; max-width: 10em; }
table.ranked td[data-dataset], table.ranked th[data-dataset] { padding-left: 0.4em; padding-right: 0.4em; }
table.ranked td.mean { font-weight: 600; white-space: nowrap; }
table.ranked td.mean .ci { display: inline; margin-left: 0.4em; font-weight: normal; }
table.ranked td.number a { color: inherit; text-decoration: none; border-bottom: 1px dotted #999; }
table.ranked tr.group td { background: #f7f7f7; font-size: 0.82em; color: #555; font-style: italic; position: static; }
tbody.control td, tbody.control td a, tbody.control td:nth-child(2) { color: #8a8a8a; }
tbody.control td:nth-child(2), tbody.apart td:nth-child(2) { background: #fbfbfb; }
.mark-note { color: #b35900; font-size: 0.8em; display: block; font-weight: normal; }
.shared { color: #666; }
.crumbs { font-size: 0.88em; margin: 0 0 0.4em; }
dl.card { display: grid; grid-template-columns: max-content 1fr; gap: 0.15em 1em; font-size: 0.92em; }
dl.card dt { color: #555; }
dl.card dd { margin: 0; overflow-wrap: anywhere; }
td.text { max-width: 28em; overflow-wrap: anywhere; }
footer { margin-top: 2em; border-top: 1px solid #ddd; font-size: 0.82em; color: #555; }
@media (max-width: 600px) {
  body { margin: 0.6em auto; padding: 0 0.6em; }
  h1 { font-size: 1.5em; }
  .board { max-width: 100%; }
  .filters { position: static; }
  .filters label { display: inline-block; margin: 0 0.6em 0.3em 0; }
  .filters select { max-width: 11em; }
  table.ranked td.facts, table.ranked th.facts { display: none; }
  table.ranked td.mean { white-space: normal; }
  table.ranked td.mean .ci { display: block; margin-left: 0; }
  table.ranked th.name, table.ranked td.model { min-width: 8em; }
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
  function last(table) { return table.tHead.rows[table.tHead.rows.length - 1]; }  /* the row of column headers */
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
    each(last(table).cells, function (h) { h.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", direction);
    each(table.tBodies, function (body) {  /* each group (ranked, apart, controls) is sorted within itself */
      var rows = Array.prototype.filter.call(body.rows, function (r) { return !r.classList.contains("group"); });
      rows.sort(function (a, b) {
        var x = sortKey(a.cells[index], numeric), y = sortKey(b.cells[index], numeric);
        if (x === null || y === null) { return (x === null) - (y === null); }
        if (x === y) { return 0; }
        return (x < y ? -1 : 1) * (direction === "ascending" ? 1 : -1);
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  }
  each(document.querySelectorAll("table.sortable"), function (table) {
    each(last(table).cells, function (header, index) {
      header.addEventListener("click", function () { sortBy(table, index, header); });
      header.addEventListener("keydown", function (e) { if (e.key === "Enter") { sortBy(table, index, header); } });
    });
  });
  function value(id) { var found = document.getElementById(id); return found ? found.value : ""; }
  function fits(element, name, wanted) {
    if (wanted === "" || !element.hasAttribute(name)) { return true; }
    var own = element.getAttribute(name);
    return name === "data-tasks" ? own.split(" ").indexOf(wanted) >= 0 : own === wanted;
  }
  function matches(element, want) {
    return fits(element, "data-tasks", want.task) && fits(element, "data-dataset", want.dataset) &&
      fits(element, "data-pair", want.pair) && fits(element, "data-family", want.family);
  }
  function apply() {
    var want = {task: value("filter-task"), dataset: value("filter-dataset"), pair: value("filter-pair"),
      family: value("filter-family")};
    var model = value("filter-model").toLowerCase();
    each(document.querySelectorAll("[data-board]"), function (board) { board.hidden = !matches(board, want); });
    each(document.querySelectorAll("table.ranked [data-dataset]"), function (cell) { cell.hidden = !matches(cell, want); });
    each(document.querySelectorAll("section.family"), function (family) {
      family.hidden = !fits(family, "data-family", want.family) ||
        (family.querySelectorAll("[data-board]").length > 0 && family.querySelectorAll("[data-board]:not([hidden])").length === 0);
    });
    each(document.querySelectorAll("table.sortable tbody tr"), function (row) {
      if (row.classList.contains("group")) { return; }
      var named = row.querySelector(".model") || row.cells[0];
      row.hidden = (model !== "" && named.textContent.toLowerCase().indexOf(model) < 0) ||
        (row.hasAttribute("data-tasks") && !matches(row, want));
    });
    each(document.querySelectorAll("table.sortable tbody tr.group"), function (group) {  /* no rows left: no title */
      group.hidden = group.parentNode.querySelectorAll("tr:not(.group):not([hidden])").length === 0;
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
_SPECIAL = re.compile("[&<>\"'\0\ud800-\udfff]")  # what ``esc`` changes; most cells hold none of it


def esc(text: object) -> str:
    """Escaped text for element content and quoted attribute values; a NUL is dropped and a lone surrogate (a file
    name's undecodable byte) becomes U+FFFD, so the page is always valid UTF-8 without NUL."""
    text = str(text)
    if _SPECIAL.search(text) is None:
        return text
    return html.escape(_SURROGATE.sub("\ufffd", text.replace("\0", "")), quote=True)


def number_key(value: float | None) -> str:
    """A number as a sort key (empty for none, not finite, or an integer past a float's range)."""
    number = finite_number(value)
    return "" if number is None else repr(number)


def td(text: str, sort: str, numeric: bool = False, css: str = "") -> str:
    """A cell of escaped text with its sort key (left out where the text sorts as itself)."""
    classes = " ".join(c for c in ("number" if numeric else "", css) if c)
    attribute = f' class="{classes}"' if classes else ""
    key = "" if sort == text else f' data-sort="{esc(sort)}"'  # none where the text sorts as itself (page size)
    return f"<td{attribute}{key}>{esc(text)}</td>"


def th(text: str, numeric: bool, title: str | None = None, higher: bool | None = True, note: int | None = None) -> str:
    """A sortable header: its type, which way is better (numbers with a direction), a tooltip, a note's number."""
    kind = "number" if numeric else "text"
    tip = f' title="{esc(title)}"' if title else ""
    direction = f' data-higher="{int(higher)}"' if numeric and higher is not None else ""
    mark = f"<sup>{note}</sup>" if note is not None else ""
    return f'<th data-type="{kind}"{direction}{tip} scope="col">{_breakable(esc(text))}{mark}</th>'


def _breakable(text: str) -> str:
    """Escaped header text with a line break allowed after ``_`` and ``:`` and before ``(``, so that a narrow
    column wraps ``commute_tc (prefix_removal:False)`` between its words rather than inside them."""
    return text.replace("_", "_<wbr>").replace(":", ":<wbr>").replace(" (", " <wbr>(")


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
        return td(MISSING, "", numeric=True)
    spread = f'<span class="ci">{esc(cell.spread)}</span>' if cell.spread else ""
    reason = f" {notes.link(sentence(cell.reason), '')}" if cell.value is None and cell.reason else ""
    warn = "".join(f" {notes.link(w, '⚠')}" for w in cell.warnings)
    return (
        f'<td class="number" data-sort="{esc(number_key(cell.value))}" title="{esc(_tooltip(cell))}">'
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


def model_td(label: str, href: str | None, css: str = "model") -> str:
    """A model's cell: its name, a link to its page when it has one."""
    if href is None:
        return td(label, label, css=css)
    return f'<td class="{css}"><a href="{esc(href)}">{esc(label)}</a></td>'


def linked_cell(cell: Cell | None, notes: Notes, href: str | None) -> str:
    """A value cell whose number links to the items behind it (``href``), when they are on a page."""
    shown = _cell(cell, notes)
    if href is None or cell is None or cell.value is None:
        return shown
    number = esc(cell.number)
    return shown.replace(f">{number}", f'><a href="{esc(href)}" title="the items behind this value">{number}</a>', 1)


def _board(table: FamilyTable, number: int, board: Board, site: Site) -> list[str]:
    tasks = " ".join(sorted({c.role for c in table.columns}))
    wide = " wide" if len(table.columns) > WIDE else ""  # a table of many columns takes the page's width
    attrs = f'class="board{wide}" data-board="" data-tasks="{esc(tasks)}" data-dataset="{esc(table.dataset)}" data-pair="{esc(table.pair or "")}"'
    marks = note_marks(table)
    headers = [th("model", False)] + [
        th(header, True, column.task_signature, info.higher_is_better, mark)
        for header, column, info, mark in zip(table.headers, table.columns, table.infos, marks)
    ]
    if table.averaged:
        headers.append(th("average", True, "only for models that have every column of the table"))
    notes = Notes(f"t{number}")
    body = []
    for row in table.rows:
        key = board.key_of(row.label)
        cells = [model_td(row.label, site.model(row.label, UP))] + [
            linked_cell(c, notes, site.item(board.cells.get((key, column)), UP))
            for c, column in zip(row.cells, table.columns)
        ]
        if table.averaged:
            cells.append(
                td(MISSING if row.average is None else f"{row.average:.4f}", number_key(row.average), numeric=True)
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


def options(select: str, label: str, values: Sequence[str]) -> str:
    """A filter's select, ``all`` first."""
    options = '<option value="">all</option>' + "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in values)
    return f'<label>{esc(label)} <select id="{select}">{options}</select></label>'


def _filters(tables: Sequence[FamilyTable]) -> str:
    tasks = sorted({c.role for t in tables for c in t.columns})
    datasets = sorted({t.dataset for t in tables})
    pairs = sorted({t.pair for t in tables if t.pair})
    return (
        '<div class="filters">'
        + options("filter-task", "Task", tasks)
        + options("filter-dataset", "Data set", datasets)
        + options("filter-pair", "Language pair", pairs)
        + '<label>Model <input id="filter-model" type="search" placeholder="model name"></label></div>'
    )


def footer(board: Board) -> list[str]:
    """The harness versions and data revisions the board's results come from (worked out once per board: every
    page has it)."""
    return list(board.once("footer", _footer))


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


def document(title: str, body: Sequence[str]) -> str:
    """A whole page: head, style, ``body`` and the script."""
    lines = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title>",
        f"<style>{STYLE}</style>",
        "</head>",
        "<body>",
        *body,
        f"<script>{SCRIPT}</script>",
        "</body>",
        "</html>",
    ]
    return "\n".join(lines) + "\n"


def crumbs(*parts: tuple[str, str | None]) -> str:
    """The line of links back to where a page hangs: ``(text, href or None)`` each."""
    shown = [f'<a href="{esc(href)}">{esc(text)}</a>' if href else esc(text) for text, href in parts]
    return f'<p class="crumbs">{" › ".join(shown)}</p>'


WIDE = 4  # more columns than this: a table of its own width, headers wrapped

READING = (
    "One table per data set and direction; rows are ranked best first. A cell is the value (the mean over seeds) "
    "with its interval over items below it, or ± the standard deviation over seeds where no interval was recorded. "
    f"{MISSING}: not run; {UNDEFINED}: undefined (its lettered note says why). A numbered note in a header holds "
    "for the whole column; ⚠ marks a cell whose own number must be read differently, its lettered note is under "
    "the table (tap or click the mark). Click a header to sort, best first; a value links to the items behind it "
    "where they were logged; the signatures of the columns are folded under each table."
)


def family_page(
    board: Board,
    family: Family,
    tables: Sequence[FamilyTable],
    plots: Sequence[Plot],
    sections: Sequence[Section],
    site: Site,
) -> str:
    """A family's page: its tables per data set and direction, its extra tables (the meta-evaluation), its plots."""
    own = [t for t in tables if t.family == family]
    body = [
        crumbs(("Leaderboard", f"{UP}index.html"), (family.title, None)),
        f"<h1>{esc(family.title)}</h1>",
        f'<details class="intro"><summary>How to read the tables</summary><p>{esc(READING)}</p></details>',
        _filters(own),
        f'<section class="family" id="family-{esc(family.name)}" data-family="{esc(family.name)}">',
        '<div class="boards">',
    ]
    for number, table in enumerate(own, 1):
        body += _board(table, number, board, site)
    body.append("</div>")
    body += _family_end(family.name, sections, plots)
    body += ["</section>", *footer(board)]
    return document(f"{family.title}: xling-harness leaderboard", body)


def _family_end(family: str, sections: Sequence[Section], plots: Sequence[Plot]) -> list[str]:
    lines = ['<div class="boards">'] + [line for section in sections for line in _section(section)] + ["</div>"]
    lines.append('<div class="figures">')
    for plot in (p for p in plots if p.family == family):
        lines.append(
            f'<figure><a href="{UP}plots/{esc(plot.file)}"><img src="{UP}plots/{esc(plot.file)}" alt="{esc(plot.title)}" '
            f'loading="lazy"></a><figcaption>{esc(plot.title)} (tap for full size)</figcaption></figure>'
        )
    return [*lines, "</div>"]
