"""``README.md``: the overview first, then a table per family, data set and direction, with its notes, signatures, extra tables and plots."""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Sequence

from harness.leaderboard.figures import Plot
from harness.leaderboard.merge import Board
from harness.leaderboard.models import HEADERS as MODEL_HEADERS
from harness.leaderboard.models import ModelRow, model_rows
from harness.leaderboard.overview import NOTHING, FamilyOverview, overview
from harness.leaderboard.ranking import APART, CONTROL, Ranking
from harness.leaderboard.ranking import NOTHING as NOTHING_RANKED
from harness.leaderboard.sections import Section
from harness.leaderboard.tables import (
    MISSING,
    UNDEFINED,
    Cell,
    FamilyTable,
    column_note_lines,
    note_marks,
    sentence,
)

SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")

_MARKDOWN_SPECIALS = str.maketrans({c: "\\" + c for c in "\\`*_[]|"})


def md_text(text: str) -> str:
    """Text safe in a Markdown table cell: HTML and Markdown specials escaped, one line."""
    return html.escape(" ".join(str(text).split()), quote=False).translate(_MARKDOWN_SPECIALS)


def md_code(text: str) -> str:
    """An inline code span (outside tables) that survives backticks in ``text``."""
    body = " ".join(str(text).split())
    fence = "`" * (max((len(run) for run in re.findall("`+", body)), default=0) + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def _cell(cell: Cell | None) -> str:
    if cell is None:
        return MISSING
    return cell.text + (" ⚠" if cell.warnings else "")


def _table(table: FamilyTable) -> list[str]:
    marks = note_marks(table)
    header = ["model"] + [
        md_text(h) + (f" {str(m).translate(SUPERSCRIPTS)}" if m is not None else "")
        for h, m in zip(table.headers, marks)
    ]
    header += ["average"] if table.averaged else []
    lines = ["| " + " | ".join(header) + " |", "|---" + "|---:" * (len(header) - 1) + "|"]
    for row in table.rows:
        cells = [md_text(row.label)] + [_cell(c) for c in row.cells]
        if table.averaged:
            cells.append(MISSING if row.average is None else f"{row.average:.4f}")
        lines.append("| " + " | ".join(cells) + " |")
    if table.has_chance:
        chance = [MISSING if i.chance is None else f"{i.chance:.4f}" for i in table.infos]
        lines.append("| *chance* | " + " | ".join(chance + ([""] if table.averaged else [])) + " |")
    return lines


def _section(section: Section) -> list[str]:
    lines = ["", f"#### {md_text(section.title)}", ""]
    if section.rows:
        lines += ["| " + " | ".join(md_text(h) for h in section.header) + " |", "|---" * len(section.header) + "|"]
        lines += ["| " + " | ".join(md_text(c) for c in row) + " |" for row in section.rows]
        lines.append("")
    if section.note:
        lines.append(md_text(sentence(section.note)))
    return lines


def _notes(table: FamilyTable) -> list[str]:
    """The table's column notes (numbered as in its header), then the warnings of single cells (⚠)."""
    lines = [
        f"{str(m).translate(SUPERSCRIPTS)} {md_text(h)} (whole column): {md_text(text)}"
        for m, h, text in column_note_lines(table)
    ]
    cells = sorted(
        {
            (row.label, h, w)
            for row in table.rows
            for h, c in zip(table.headers, row.cells)
            if c is not None
            for w in c.warnings
        }
    )
    lines += [f"⚠ {md_text(label)}, {md_text(h)}: {md_text(w)}" for label, h, w in cells]
    return [line + "  " for line in lines[:-1]] + lines[-1:]  # two spaces: a line break in Markdown


def _models(rows: Sequence[ModelRow]) -> list[str]:
    """The model table: each model's card (—: not recorded) and the families it has results in."""
    if not rows:
        return []
    lines = ["", "## Models", "", "| " + " | ".join(MODEL_HEADERS) + " |", "|---" * len(MODEL_HEADERS) + "|"]
    for row in rows:
        cells = [row.label, *row.fields, ", ".join(f.title for f in row.families)]
        lines.append("| " + " | ".join(md_text(c) for c in cells) + " |")
    return lines


def _overview(found: Sequence[FamilyOverview]) -> list[str]:
    lines = ["", "## Overview", ""]
    lines += [
        "Per family, data set and direction: the best model on the family's main metric (the first ranked column of "
        "its table), the runner-up, and whether the gap between them is real (the paired bootstrap of `harness "
        "compare` where both runs logged their samples, else whether the intervals overlap).",
    ]
    for item in (f for f in found if f.collapsed is None and f.lines):
        lines += ["", f"### {md_text(item.family.title)} ({item.models} model{'' if item.models == 1 else 's'})", ""]
        lines += ["| data set | metric | best | runner-up | gap |", "|---|---|---|---|---|"]
        for line in item.lines:
            second = MISSING if line.runner_up is None else f"{md_text(line.runner_up[0])} {line.runner_up[1].text}"
            named = md_text(line.best[0])
            best = f"**{named}**" if not line.gap.startswith(NOTHING) else f"{named} (nothing compared, no best)"
            lines.append(
                f"| {md_text(line.title)} | {md_text(line.header)} | {best} {line.best[1].text} "
                f"| {second} | {md_text(line.gap)} |"
            )
    collapsed = [f for f in found if f.collapsed is not None]
    if collapsed:
        lines += ["", *(f"- {md_text(f.collapsed or '')}" for f in collapsed)]
    return lines


def _ranked(rankings: Sequence[Ranking]) -> list[str]:
    """Per family its ranked table, as on ``index.html``: rank (``=`` shared), model, mean with interval and count,
    a value per data set and direction; the models not ranked and the controls after, marked."""
    lines = ["", "## Ranked", ""]
    lines.append(
        "Per family, the models ranked on its main metric: the mean over the directions most models were run on, "
        "ranks shared (=) where the gap to the best of the group is not significant; the models not ranked "
        "(fewer directions, values fixed by construction) and the controls (never ranked) after them."
    )
    for ranking in rankings:
        lines += ["", f"### {md_text(ranking.family.title)}: {md_text(ranking.info.display)} of {ranking.role}", ""]
        lines.append(
            "One model: nothing to compare."
            if ranking.method == NOTHING_RANKED
            else f"Shared ranks by {md_text(ranking.method)}."
        )
        lines += [
            "",
            "| # | model | mean | n | " + " | ".join(md_text(d.title) for d in ranking.directions) + " |",
            "|---:|---|---:|---:|" + "---:|" * len(ranking.directions),
        ]
        for row in ranking.rows:
            rank = "–" if row.rank is None else f"{row.rank}{'=' if row.shared else ''}"
            note = {APART: f" ({row.note})", CONTROL: f" (control: {row.note})"}.get(row.group, "")
            twins = " (twins)" if len(row.labels) > 1 else ""
            mean = MISSING if row.mean is None else f"{row.mean:.4f}"
            if row.interval is not None:
                mean += f" [{row.interval[0]:.4f}, {row.interval[1]:.4f}]"
            cells = [MISSING if c is None else c.number for c in row.cells]
            lines.append(
                f"| {rank} | {md_text(row.label + twins + note)} | {mean} | {row.count} | " + " | ".join(cells) + " |"
            )
    return lines


def readme(
    board: Board,
    tables: Sequence[FamilyTable],
    plots: Sequence[Plot],
    command: str,
    sections: dict[str, list[Section]] | None = None,
    rankings: Sequence[Ranking] = (),
) -> str:
    """The whole ``README.md``."""
    superseded = sum(r.superseded for r in board.results)
    answers = overview(board, tables)
    lines = [
        "# Leaderboard",
        "",
        f"{len(board.results) - superseded} results of {len(board.labels)} models ({superseded} superseded, kept in "
        "[leaderboard.json](leaderboard.json); also [leaderboard.csv](leaderboard.csv) and [index.html](index.html)).",
        *(_ranked(rankings) if rankings else []),
        *_overview(answers),
        "",
        "## How to read the tables",
        "",
        "One table per data set and direction; rows are ranked best first. A cell is the value (the mean over seeds) with "
        "its interval over items in brackets, or ± the standard deviation over seeds where no interval was recorded; "
        f"{MISSING}: not run; {UNDEFINED}: undefined. A note that holds for a whole column is numbered in its header "
        "and written under the table; ⚠ marks a cell whose own number must be read differently (said under the "
        "table). A column is one task signature: results with different signatures are never merged. "
        "Generated by `harness leaderboard`; regenerate with:",
        "",
        "```bash",
        command,
        "```",
    ]
    collapsed = {f.family.name: f.collapsed for f in answers if f.collapsed is not None}
    for family, grouped in itertools.groupby(tables, key=lambda t: t.family):
        group = list(grouped)
        lines += ["", f"## {md_text(family.title)}"]
        if family.name in collapsed:
            lines += ["", "<details>", f"<summary>{md_text(collapsed[family.name])}</summary>"]
        for table in group:
            lines += ["", f"### {md_text(table.title)}", "", *_table(table), ""]
            notes = _notes(table)
            if notes:
                lines += [*notes, ""]
            if table.averaged:
                lines += [f"Average: over the {len(table.columns)} columns, only for models that have all of them.", ""]
            lines += [
                f"- {md_text(h)}: {md_text(d) + ' ' if d else ''}{' = '.join(md_code(t) for t in c.recorded)}"
                for h, c, d in zip(table.headers, table.columns, table.descriptions or [""] * len(table.columns))
            ]
        for section in (sections or {}).get(family.name, []):
            lines += _section(section)
        family_plots = [p for p in plots if p.family == family.name]
        if family_plots:
            lines += ["", "Plots:", ""]
            lines += [f"- [{md_text(p.title)}](plots/{p.file})" for p in family_plots]
        if family.name in collapsed:
            lines += ["", "</details>"]
    lines += _models(model_rows(board))
    return "\n".join(lines) + "\n"
