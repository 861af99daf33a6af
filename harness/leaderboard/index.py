"""``index.html``: per family one ranked table (``ranking``), filters above them; everything else one click away.

A row: the rank (shared ranks marked ``=``), the model (twins named together, each a link to its page), its
facts (parameters, languages, licence; the full card on its page), the mean of the family's main metric
with its interval and the count of directions, then one cell per data set and direction, each linking to
the items behind it. Models run on fewer directions, or whose values are fixed by construction, follow
the ranked ones, marked; controls come last, greyed, never ranked.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from harness.leaderboard.merge import Board
from harness.leaderboard.models import UNKNOWN, model_rows
from harness.leaderboard.page import document, esc, footer, number_key, options, scrolling, td, th
from harness.leaderboard.ranking import APART, CONTROL, NOTHING, RANKED, RankedRow, Ranking
from harness.leaderboard.site import Site
from harness.leaderboard.tables import MISSING, UNDEFINED, Cell

GROUPS = {
    APART: "Not ranked: run on fewer of the ranked directions, or values fixed by construction",
    CONTROL: "Controls: random, degraded or image-blanked on purpose; never ranked, never best",
}
TWINS = "twins: identical outputs on every shared item"


def _facts(board: Board) -> dict[str, str]:
    """Model label -> ``parameters · languages · licence`` (unknown parts left out)."""
    found = {}
    for row in model_rows(board):
        parameters, languages, licence = row.fields[0], row.fields[3], row.fields[4]
        count = len(languages.split(", ")) + (
            int(languages.split(" and ")[1].split()[0]) if " more" in languages else 0
        )
        if count > 3:
            languages = f"{count} languages"
        parts = [f"{parameters} params" if parameters != UNKNOWN else "", languages, licence]
        found[row.label] = " · ".join(p for p in parts if p and p != UNKNOWN) or UNKNOWN
    return found


def _value(cell: Cell | None, href: str | None, direction: str) -> str:
    """A direction's cell: the value (a link to its items), its interval in the tooltip."""
    if cell is None:
        return f'<td class="number" data-sort=""{direction}>{MISSING}</td>'
    if cell.value is None:
        return f'<td class="number" data-sort=""{direction} title="{esc(cell.reason or "undefined")}">{UNDEFINED}</td>'
    tip = f"{cell.text}" + (" (click for the items)" if href else "")
    shown = f'<a href="{esc(href)}">{esc(cell.number)}</a>' if href else esc(cell.number)
    return f'<td class="number" data-sort="{esc(number_key(cell.value))}"{direction} title="{esc(tip)}">{shown}</td>'


def _row(row: RankedRow, ranking: Ranking, site: Site, facts: dict[str, str]) -> str:
    if row.rank is None:
        rank = '<td class="rank number" data-sort="">–</td>'
    else:
        mark = (
            '<span class="shared" title="shares its rank: not significantly worse than the best of its group">=</span>'
        )
        rank = f'<td class="rank number" data-sort="{row.rank}">{row.rank}{mark if row.shared else ""}</td>'
    links = " = ".join(
        f'<a href="{esc(href)}">{esc(label)}</a>' if (href := site.model(label)) else esc(label) for label in row.labels
    )
    notes = ([TWINS] if len(row.labels) > 1 else []) + ([row.note] if row.note else [])
    note = "".join(f'<span class="mark-note">{esc(n)}</span>' for n in notes)
    model = f'<td class="model" data-sort="{esc(row.label.lower())}">{links}{note}</td>'
    fact = facts.get(row.labels[0], UNKNOWN)
    if row.mean is None:
        mean = f'<td class="number mean" data-sort="">{MISSING}</td>'
    else:
        spread = f"[{row.interval[0]:.4f}, {row.interval[1]:.4f}]" if row.interval else ""
        mean = (
            f'<td class="number mean" data-sort="{esc(number_key(row.mean))}">{row.mean:.4f}'
            f'<span class="ci">{esc(spread)} n={row.count}</span></td>'
        )
    cells = [
        _value(cell, site.item(result), f' data-dataset="{esc(d.dataset)}" data-pair="{esc(d.pair or "")}"')
        for cell, result, d in zip(row.cells, row.results, ranking.directions)
    ]
    return f"<tr>{rank}{model}{td(fact, fact, css='facts')}{mean}{''.join(cells)}</tr>"


def ranked_table(ranking: Ranking, site: Site, facts: dict[str, str]) -> list[str]:
    """The ranked table of one family, its groups in their own bodies (sorting keeps them apart)."""
    info, higher = ranking.info, ranking.higher_is_better
    headers = [
        '<th class="rank" data-type="number" data-higher="0" scope="col" title="rank; = shared">#</th>',
        '<th class="name" data-type="text" scope="col">model</th>',
        '<th class="facts" data-type="text" scope="col">parameters · languages · licence</th>',
        th(f"mean {info.display}", True, "the mean over the ranked directions, its interval, the count", higher),
    ]
    for d in ranking.directions:
        headers.append(
            f'<th data-type="number" data-higher="{int(higher)}" data-dataset="{esc(d.dataset)}" '
            f'data-pair="{esc(d.pair or "")}" scope="col" title="{esc(d.title)}: {esc(d.column.task_signature)}">'
            f"{esc(d.short)}</th>"
        )
    groups = [(group, len(list(same))) for group, same in itertools.groupby(d.group for d in ranking.directions)]
    datasets = {d.group: d.dataset for d in ranking.directions}
    spans = "".join(
        f'<th colspan="{count}" class="group" scope="colgroup" data-dataset="{esc(datasets[group])}">{esc(group)}</th>'
        for group, count in groups
    )
    lines = [
        '<table class="sortable ranked">',
        f'<thead><tr class="groups"><th colspan="4" class="group"></th>{spans}</tr>'
        + "<tr>" + "".join(headers) + "</tr></thead>",
    ]  # fmt: skip
    width = len(headers)
    for group in (RANKED, APART, CONTROL):
        rows = [r for r in ranking.rows if r.group == group]
        if not rows:
            continue
        lines.append(f'<tbody class="{group}">')
        if group in GROUPS:
            lines.append(f'<tr class="group"><td colspan="{width}">{esc(GROUPS[group])}</td></tr>')
        lines += [_row(row, ranking, site, facts) for row in rows]
        lines.append("</tbody>")
    return [*lines, "</table>"]


def _caption(ranking: Ranking) -> str:
    """What the table ranks by, over which directions, and how shared ranks were decided."""
    role, info = ranking.role, ranking.info
    datasets = sorted({ranking.directions[i].dataset for i in ranking.ranked_over})
    directions = len(ranking.ranked_over)
    how = (
        "one model, nothing to compare"
        if ranking.method == NOTHING
        else f"ranks are shared where the gap to the best of the group is not significant, by {ranking.method}"
    )
    return (
        f"{info.display} of {role} ({'higher' if ranking.higher_is_better else 'lower'} is better) on "
        f"{', '.join(datasets)}: the mean over the {directions} direction{'s' if directions != 1 else ''} run by the "
        f"most models, with its interval; {how}. A value links to the items behind it."
    )


def index_page(board: Board, rankings: Sequence[Ranking], site: Site) -> str:
    """The whole ``index.html``."""
    superseded = sum(r.superseded for r in board.results)
    facts = _facts(board)
    directions = [d for r in rankings for d in r.directions]
    body = [
        "<h1>Leaderboard</h1>",
        f'<p class="intro">{len(board.results) - superseded} results of {len(board.labels)} models. Per family, '
        "the models ranked on its main metric; a family's name leads to all its tables and plots, a model's to its "
        'card and results, a value to its items (also <a href="leaderboard.csv">leaderboard.csv</a>, '
        '<a href="leaderboard.json">leaderboard.json</a>).</p>',
        '<div class="filters">'
        + options("filter-family", "Family", sorted({r.family.name for r in rankings}))
        + options("filter-dataset", "Data set", sorted({d.dataset for d in directions}))
        + options("filter-pair", "Language pair", sorted({d.pair for d in directions if d.pair}))
        + '<label>Model <input id="filter-model" type="search" placeholder="model name"></label></div>',
    ]
    for ranking in rankings:
        family = ranking.family
        page = site.families.get(family.name)
        more = f' <a class="more" href="{esc(page)}">all tables and plots →</a>' if page else ""
        body += [
            f'<section class="family" id="family-{esc(family.name)}" data-family="{esc(family.name)}">',
            f"<h2>{esc(family.title)}{more}</h2>",
            f'<p class="note">{esc(_caption(ranking))}</p>',
            *scrolling(ranked_table(ranking, site, facts)),
            "</section>",
        ]
    ranked = {r.family.name for r in rankings}
    others = [(family, site.families.get(family.name)) for family, _ in board.families() if family.name not in ranked]
    if others:
        links = ", ".join(f'<a href="{esc(href)}">{esc(f.title)}</a>' if href else esc(f.title) for f, href in others)
        body.append(f'<p class="note">Families without a ranked metric: {links}.</p>')
    body += footer(board)
    return document("xling-harness leaderboard", body)
