"""Extra tables a family adds under its own (the retrieval family's meta-evaluation): plain text
cells that the README and the page escape and lay out like any other table."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from harness.leaderboard.families import Family, section_function
from harness.leaderboard.figures import family_inputs
from harness.leaderboard.kept import Kept, source_digest
from harness.leaderboard.merge import Board


@dataclass(frozen=True)
class Section:
    """A titled table of text cells, with a note under it."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    note: str = ""


def family_sections(board: Board, kept: Kept | None = None) -> dict[str, list[Section]]:
    """Family name -> its sections, for the families present that register a sections function; with ``kept``,
    those the previous build made from the same inputs (the family's current results and the model order, and the
    function's code: ``figures.family_inputs``) are taken from it.

    A failing sections function costs a warning naming the family; the rest is still written.
    """
    found: dict[str, list[Section]] = {}
    for family, _ in board.families():
        sections = _sections(family, board, kept)
        if sections:
            found[family.name] = sections
    return found


def _sections(family: Family, board: Board, kept: Kept | None) -> list[Section]:
    try:
        function = section_function(family)
        if function is None:
            return []
        key = kept.key("sections", source_digest(function), family.name, family_inputs(board, family)) if kept else ""
        held, value = kept.fact(key) if kept else (False, [])
        if held:
            return [Section(title, tuple(header), tuple(map(tuple, rows)), note) for title, header, rows, note in value]
        sections = list(function(board))
    except Exception as exc:  # a plugin's extra table must not cost the leaderboard
        print(
            f"harness: warning: no extra tables for family {family.name!r} (plugin {family.plugin!r}): "
            f"{type(exc).__name__}: {exc}",
            file=sys.stderr,
        )
        return []
    for section in sections:
        if not isinstance(section, Section) or any(len(row) != len(section.header) for row in section.rows):
            print(f"harness: warning: family {family.name!r} returned a malformed section; left out", file=sys.stderr)
            return []
    if kept:
        kept.remember(key, [[s.title, list(s.header), [list(row) for row in s.rows], s.note] for s in sections])
    return sections
