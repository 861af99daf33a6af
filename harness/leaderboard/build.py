"""Write a whole leaderboard folder from merged results (how it is written safely: ``output``)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.leaderboard.export import to_csv, to_json
from harness.leaderboard.markdown import readme
from harness.leaderboard.merge import Board, merge
from harness.leaderboard.output import previous_files, publish
from harness.leaderboard.page import page
from harness.leaderboard.plots import write_plots
from harness.leaderboard.sections import family_sections
from harness.leaderboard.tables import family_tables
from harness.results.jsonl import BadLine
from harness.results.load import load_entries

PLOTS = "plots"


@dataclass(frozen=True)
class Built:
    """What was written, and the lines that were skipped."""

    board: Board
    problems: list[BadLine]
    files: list[Path]


def write_leaderboard(locations: list[str], output: str | Path, command: str, plots: bool = True) -> Built:
    """Read, merge and write README.md, leaderboard.csv, leaderboard.json, index.html, plots/ and the manifest."""
    entries, problems = load_entries(locations)
    if not entries:
        raise HarnessError(
            f"no valid results in {', '.join(locations)}" + (f" ({len(problems)} lines skipped)" if problems else "")
        )
    board = merge(entries)
    folder = Path(output)
    previous = previous_files(folder)
    with tempfile.TemporaryDirectory(prefix="harness-plots-") as drawn:
        written = write_plots(board, Path(drawn)) if plots else []
        tables = family_tables(board)
        sections = family_sections(board)
        contents = {
            "README.md": readme(board, tables, written, command, sections),
            "leaderboard.csv": to_csv(board),
            "leaderboard.json": to_json(board),
            "index.html": page(board, tables, written, sections),
        }
        files = publish(folder, previous, contents, {f"{PLOTS}/{p.file}": Path(drawn) / p.file for p in written})
    return Built(board, problems, files)
