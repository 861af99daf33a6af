"""Write a whole leaderboard folder from merged results."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.jsonl import BadLine
from harness.leaderboard.export import to_csv, to_json
from harness.leaderboard.load import load_entries
from harness.leaderboard.markdown import readme
from harness.leaderboard.merge import Board, merge
from harness.leaderboard.page import page
from harness.leaderboard.plots import write_plots
from harness.leaderboard.tables import family_tables

PLOTS = "plots"


@dataclass(frozen=True)
class Built:
    """What was written, and the lines that were skipped."""

    board: Board
    problems: list[BadLine]
    files: list[Path]


def write_leaderboard(locations: list[str], output: str | Path, command: str, plots: bool = True) -> Built:
    """Read, merge and write README.md, leaderboard.csv, leaderboard.json, index.html and plots/."""
    entries, problems = load_entries(locations)
    if not entries:
        raise HarnessError(f"no valid results in {', '.join(locations)}" + (f" ({len(problems)} lines skipped)" if problems else ""))
    board = merge(entries)
    folder = Path(output)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        written = write_plots(board, folder / PLOTS) if plots else []
        tables = family_tables(board)
        contents = {
            "README.md": readme(board, tables, written, command),
            "leaderboard.csv": to_csv(board),
            "leaderboard.json": to_json(board),
            "index.html": page(board, tables, written),
        }
        for name, text in contents.items():
            (folder / name).write_text(text, encoding="utf-8", newline="\n")
    except OSError as exc:
        raise HarnessError(f"cannot write the leaderboard to {str(folder)!r}: {exc.strerror or exc}") from None
    files = [folder / name for name in contents] + [folder / PLOTS / p.file for p in written]
    return Built(board, problems, files)
