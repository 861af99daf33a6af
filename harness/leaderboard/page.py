"""``index.html``: one static, self-contained page with sortable tables and a filter box.

Every string from the results goes through ``html.escape``; the script only reorders and hides
existing rows (it never parses text as HTML), and nothing is loaded from the network.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from harness.leaderboard.merge import Board
from harness.leaderboard.plots import Plot
from harness.leaderboard.tables import MISSING, UNDEFINED, Cell, FamilyTable, long_rows

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; }
th { background: #f3f3f3; cursor: pointer; user-select: none; }
th[aria-sort="ascending"]::after { content: " \\25B2"; }
th[aria-sort="descending"]::after { content: " \\25BC"; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
code { font-size: 0.85em; }
img { max-width: 100%; }
"""

SCRIPT = """
(function () {
  "use strict";
  function sortKey(cell, numeric) {
    var raw = cell.getAttribute("data-sort");
    if (raw === null || raw === "") { return null; }
    return numeric ? parseFloat(raw) : raw.toLowerCase();
  }
  function sortBy(table, index, header) {
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    var numeric = header.getAttribute("data-type") === "number";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    rows.sort(function (a, b) {
      var x = sortKey(a.cells[index], numeric), y = sortKey(b.cells[index], numeric);
      if (x === null || y === null) { return (x === null) - (y === null); }
      if (x === y) { return 0; }
      return (x < y ? -1 : 1) * (ascending ? 1 : -1);
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (header, index) {
      header.addEventListener("click", function () { sortBy(table, index, header); });
    });
  });
  document.getElementById("filter").addEventListener("input", function (event) {
    var query = event.target.value.toLowerCase();
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable tbody tr"), function (row) {
      row.hidden = query !== "" && row.textContent.toLowerCase().indexOf(query) < 0;
    });
  });
  document.body.setAttribute("data-ready", "yes");
})();
"""


def esc(text: object) -> str:
    """Escaped text for element content and quoted attribute values."""
    return html.escape(str(text), quote=True)


def _number(value: float | None) -> str:
    return "" if value is None or not math.isfinite(value) else repr(float(value))


def _td(text: str, sort: str, numeric: bool = False) -> str:
    css = ' class="number"' if numeric else ""
    return f'<td{css} data-sort="{esc(sort)}">{esc(text)}</td>'


def _th(text: str, numeric: bool, title: str | None = None) -> str:
    kind = "number" if numeric else "text"
    tip = f' title="{esc(title)}"' if title else ""
    return f'<th data-type="{kind}"{tip}>{esc(text)}</th>'


def _cell(cell: Cell | None) -> str:
    if cell is None:
        return _td(MISSING, "", numeric=True)
    return _td(cell.text, _number(cell.value), numeric=True)


def _family_table(table: FamilyTable, plots: Sequence[Plot]) -> list[str]:
    headers = [_th("model", False)] + [_th(c.label, True, c.task_signature) for c in table.columns]
    if table.averaged:
        headers.append(_th("average", True, "only for models that have every task of the table"))
    lines = [f"<h2>{esc(table.family.title)}</h2>", '<table class="sortable">', "<thead><tr>" + "".join(headers) + "</tr></thead>",
             "<tbody>"]
    for row in table.rows:
        cells = [_td(row.label, row.label)] + [_cell(c) for c in row.cells]
        if table.averaged:
            cells.append(_td(MISSING if row.average is None else f"{row.average:.4f}", _number(row.average), numeric=True))
        lines.append("<tr>" + "".join(cells) + "</tr>")
    lines += ["</tbody>", "</table>", "<ul>"]
    lines += [f"<li>{esc(c.label)}: <code>{esc(c.task_signature)}</code></li>" for c in table.columns]
    lines.append("</ul>")
    for plot in (p for p in plots if p.family == table.family.name):
        lines.append(f'<figure><img src="plots/{esc(plot.file)}" alt="{esc(plot.title)}"><figcaption>{esc(plot.title)}</figcaption></figure>')
    return lines


def _long_table(board: Board) -> list[str]:
    names = ("model", "task", "metric", "value", "std", "n", "seeds", "signature", "date")
    numeric = {"value", "std", "n", "seeds"}
    lines = ["<h2>All current results</h2>", '<table class="sortable">',
             "<thead><tr>" + "".join(_th(n, n in numeric) for n in names) + "</tr></thead>", "<tbody>"]
    for row in long_rows(board, detailed=False):
        cells = []
        for name in names:
            value = row[name]
            if name in ("value", "std"):
                cells.append(_td(UNDEFINED if value is None else f"{value:.4f}", _number(value), numeric=True))
            else:
                cells.append(_td("" if value is None else str(value), "" if value is None else str(value), name in numeric))
        lines.append("<tr>" + "".join(cells) + "</tr>")
    return lines + ["</tbody>", "</table>"]


def page(board: Board, tables: Sequence[FamilyTable], plots: Sequence[Plot]) -> str:
    """The whole ``index.html``."""
    superseded = sum(r.superseded for r in board.results)
    lines = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>xling-harness leaderboard</title>", f"<style>{STYLE}</style>", "</head>", "<body>",
        "<h1>Leaderboard</h1>",
        f"<p>{len(board.results) - superseded} results of {len(board.labels)} models ({superseded} superseded, kept in "
        '<a href="leaderboard.json">leaderboard.json</a>). Cells: mean ± sample standard deviation over seeds; '
        f"{esc(MISSING)}: not run; {esc(UNDEFINED)}: undefined. Click a column header to sort.</p>",
        '<p><label>Filter rows: <input id="filter" type="search" placeholder="model, task, signature"></label></p>',
    ]
    for table in tables:
        lines += _family_table(table, plots)
    lines += _long_table(board)
    lines += [f"<script>{SCRIPT}</script>", "</body>", "</html>"]
    return "\n".join(lines) + "\n"
