"""``index.html``: one static, self-contained page that a researcher reads.

One table per family, data set and direction (rows: models, best first; columns: the metrics
with short headers, each cell with its interval), a chance row, the full signatures as tooltips
and footnotes, filters by task, data set, language pair and model, sorting that starts with the
best, the family's extra tables and plots, and a footer with the harness versions and data
revisions. Every string from the results goes through ``html.escape``; the script only reorders
and hides existing elements (it never parses text as HTML), and nothing is loaded from the network.
"""

from __future__ import annotations

import html
import itertools
import math
from collections.abc import Sequence

from harness.leaderboard.figures import Plot
from harness.leaderboard.merge import Board
from harness.leaderboard.sections import Section
from harness.leaderboard.tables import MISSING, UNDEFINED, Cell, FamilyTable, long_rows

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; padding: 0 1em; max-width: 1240px; color: #222; line-height: 1.4; }
h1 { margin-bottom: 0.2em; }
h2 { margin-top: 1.6em; border-bottom: 2px solid #ddd; }
h3 { margin: 1.2em 0 0.3em; font-size: 1.05em; }
.filters { position: sticky; top: 0; background: #fff; padding: 0.5em 0; border-bottom: 1px solid #ddd; z-index: 1; }
.filters label { margin-right: 1.2em; white-space: nowrap; }
.boards { display: flex; flex-wrap: wrap; gap: 0 2.5em; align-items: flex-start; }
.board { max-width: 600px; min-width: 0; }
.scroll { max-width: 100%; overflow-x: auto; }
table { border-collapse: collapse; margin: 0.4em 0; font-size: 0.88em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.55em; }
th { background: #f3f3f3; vertical-align: bottom; }
table.sortable thead th { cursor: pointer; user-select: none; }
th[aria-sort="ascending"]::after { content: " \\25B2"; }
th[aria-sort="descending"]::after { content: " \\25BC"; }
td.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.model { font-weight: 600; }
.ci { display: block; color: #666; font-size: 0.82em; }
.warn { color: #b35900; cursor: help; }
tfoot td { font-style: italic; color: #555; background: #fafafa; }
ol.notes { font-size: 0.8em; color: #444; margin: 0.2em 0 0.8em; }
ol.notes code, .long code { word-break: break-all; }
p.note { font-size: 0.85em; color: #444; margin: 0.2em 0 1em; }
.figures { display: flex; flex-wrap: wrap; gap: 0 1em; align-items: flex-start; }
figure { margin: 1em 0; max-width: 100%; }
figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #444; }
.long { table-layout: fixed; width: 100%; }
.long td { overflow-wrap: anywhere; }
footer { margin-top: 2em; border-top: 1px solid #ddd; font-size: 0.82em; color: #555; }
"""

SCRIPT = """
(function () {
  "use strict";
  function each(list, f) { Array.prototype.forEach.call(list, f); }
  function sortKey(cell, numeric) {
    var raw = cell.getAttribute("data-sort");
    if (raw === null || raw === "") { return null; }
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
  document.body.setAttribute("data-ready", "yes");
})();
"""


def esc(text: object) -> str:
    """Escaped text for element content and quoted attribute values."""
    return html.escape(str(text), quote=True)


def _number(value: float | None) -> str:
    return "" if value is None or not math.isfinite(value) else repr(float(value))


def _td(text: str, sort: str, numeric: bool = False, css: str = "") -> str:
    classes = " ".join(c for c in ("number" if numeric else "", css) if c)
    attribute = f' class="{classes}"' if classes else ""
    return f'<td{attribute} data-sort="{esc(sort)}">{esc(text)}</td>'


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


def _cell(cell: Cell | None) -> str:
    if cell is None:
        return _td(MISSING, "", numeric=True)
    spread = f'<span class="ci">{esc(cell.spread)}</span>' if cell.spread else ""
    warn = '<span class="warn"> ⚠</span>' if cell.warnings else ""
    return (
        f'<td class="number" data-sort="{esc(_number(cell.value))}" title="{esc(_tooltip(cell))}">'
        f"{esc(cell.number)}{warn}{spread}</td>"
    )


def _board(table: FamilyTable) -> list[str]:
    tasks = " ".join(sorted({c.task for c in table.columns}))
    attrs = f'class="board" data-board="" data-tasks="{esc(tasks)}" data-dataset="{esc(table.dataset)}" data-pair="{esc(table.pair or "")}"'
    headers = [_th("model", False)] + [
        _th(header, True, column.task_signature, info.higher_is_better, index + 1)
        for index, (header, column, info) in enumerate(zip(table.headers, table.columns, table.infos))
    ]
    if table.averaged:
        headers.append(_th("average", True, "only for models that have every column of the table"))
    lines = [
        f"<div {attrs}>",
        f"<h3>{esc(table.title)}</h3>",
        '<div class="scroll"><table class="sortable">',
        "<thead><tr>" + "".join(headers) + "</tr></thead>",
        "<tbody>",
    ]
    for row in table.rows:
        cells = [_td(row.label, row.label, css="model")] + [_cell(c) for c in row.cells]
        if table.averaged:
            cells.append(
                _td(MISSING if row.average is None else f"{row.average:.4f}", _number(row.average), numeric=True)
            )
        lines.append("<tr>" + "".join(cells) + "</tr>")
    lines.append("</tbody>")
    if table.has_chance:
        chance = [MISSING if info.chance is None else f"{info.chance:.4f}" for info in table.infos]
        extra = ["<td></td>"] if table.averaged else []
        lines.append(
            "<tfoot><tr><td>chance</td>"
            + "".join(f'<td class="number">{esc(c)}</td>' for c in chance)
            + "".join(extra)
            + "</tr></tfoot>"
        )
    lines += ["</table></div>", '<ol class="notes">']
    lines += [f"<li>{esc(h)}: <code>{esc(c.task_signature)}</code></li>" for h, c in zip(table.headers, table.columns)]
    return [*lines, "</ol>", "</div>"]


def _section(section: Section) -> list[str]:
    lines = ['<div class="board">', f"<h3>{esc(section.title)}</h3>"]
    if section.rows:
        lines += [
            '<div class="scroll"><table>',
            "<thead><tr>" + "".join(f'<th scope="col">{esc(h)}</th>' for h in section.header) + "</tr></thead>",
            "<tbody>",
        ]
        lines += ["<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in section.rows]
        lines += ["</tbody>", "</table></div>"]
    if section.note:
        lines.append(f'<p class="note">{esc(section.note)}</p>')
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
        attrs = f' data-tasks="{esc(row["task"])}" data-dataset="{esc(row["dataset"])}" data-pair="{esc(row["pair"] or "")}"'
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
                cells.append(f'<td data-sort="{esc(value)}"><code>{esc(value)}</code></td>')
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
    tasks = sorted({c.task for t in tables for c in t.columns})
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
        f"<p>{len(board.results) - superseded} results of {len(board.labels)} models ({superseded} superseded, kept in "
        '<a href="leaderboard.json">leaderboard.json</a>; also <a href="leaderboard.csv">leaderboard.csv</a>). '
        "One table per data set and direction; rows are ranked best first. A cell is the value (the mean over seeds) "
        "with its interval over items below it, or ± the standard deviation over seeds where no interval was recorded; "
        f"hover a cell for both, a header for its full signature. {esc(MISSING)}: not run; {esc(UNDEFINED)}: undefined "
        "(hover for why); ⚠: the run warns (hover). Click a header to sort, best first.</p>",
        _filters(tables),
    ]
    for family, group in itertools.groupby(tables, key=lambda t: t.family):
        lines += [f'<section class="family" data-family="{esc(family.name)}">', f"<h2>{esc(family.title)}</h2>"]
        lines.append('<div class="boards">')
        for table in group:
            lines += _board(table)
        lines.append("</div>")
        lines += _family_end(family.name, (sections or {}).get(family.name, []), plots)
    lines += _long_table(board)
    lines += _footer(board)
    lines += [f"<script>{SCRIPT}</script>", "</body>", "</html>"]
    return "\n".join(lines) + "\n"


def _family_end(family: str, sections: Sequence[Section], plots: Sequence[Plot]) -> list[str]:
    lines = ['<div class="boards">'] + [line for section in sections for line in _section(section)] + ["</div>"]
    lines.append('<div class="figures">')
    for plot in (p for p in plots if p.family == family):
        lines.append(
            f'<figure><img src="plots/{esc(plot.file)}" alt="{esc(plot.title)}" loading="lazy">'
            f"<figcaption>{esc(plot.title)}</figcaption></figure>"
        )
    return [*lines, "</div>", "</section>"]
