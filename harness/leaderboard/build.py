"""Write a whole leaderboard folder from merged results, touching only what a leaderboard owns.

The output folder must be new, empty, or marked by an earlier run: ``.leaderboard-manifest.json``
lists every file that run wrote. A file the new run would overwrite must be in that list, and only
files in that list are ever deleted (those the new run no longer produces), so a folder holding
anything else (a user's README, their PNGs, the input results) is refused or left alone.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from harness.errors import HarnessError
from harness.leaderboard.export import to_csv, to_json
from harness.leaderboard.markdown import readme
from harness.leaderboard.merge import Board, merge
from harness.leaderboard.page import page
from harness.leaderboard.plots import write_plots
from harness.leaderboard.sections import family_sections
from harness.leaderboard.tables import family_tables
from harness.results.jsonl import BadLine
from harness.results.load import load_entries

PLOTS = "plots"
MANIFEST = ".leaderboard-manifest.json"
GENERATOR = "harness leaderboard"


@dataclass(frozen=True)
class Built:
    """What was written, and the lines that were skipped."""

    board: Board
    problems: list[BadLine]
    files: list[Path]


def _manifest(files: list[str]) -> str:
    return json.dumps({"generator": GENERATOR, "files": sorted(files)}, indent=1) + "\n"


def previous_files(folder: Path) -> set[str]:
    """The files an earlier run wrote into ``folder`` (none for a new or empty folder).

    Raises ``HarnessError`` for a folder that holds anything but is not marked as a leaderboard.
    """
    if not folder.exists():
        return set()
    if not folder.is_dir():
        raise HarnessError(f"the leaderboard output {str(folder)!r} is a file, not a folder")
    marker = folder / MANIFEST
    if not marker.is_file():
        if any(folder.iterdir()):
            raise HarnessError(
                f"the folder {str(folder)!r} is not empty and no earlier `harness leaderboard` run marked it "
                f"(no {MANIFEST}); write the leaderboard into a new or empty folder"
            )
        return set()
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
        files = data["files"]
        if data.get("generator") != GENERATOR or not all(isinstance(f, str) for f in files):
            raise ValueError("not a leaderboard manifest")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise HarnessError(
            f"{marker}: unreadable leaderboard manifest ({exc}); move it away or choose another folder"
        ) from None
    unsafe = [f for f in files if PurePosixPath(f).is_absolute() or ".." in PurePosixPath(f).parts or f == MANIFEST]
    if unsafe:
        raise HarnessError(f"{marker}: the manifest lists {unsafe[0]!r}, outside the folder; refusing to touch it")
    return set(files)


def _check_overwrites(folder: Path, names: list[str], previous: set[str]) -> None:
    foreign = [name for name in names if name not in previous and (folder / name).exists()]
    if foreign:
        raise HarnessError(
            f"{folder / foreign[0]} exists and was not written by an earlier leaderboard run; "
            "move it away or choose another folder"
        )


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
    try:
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
            names = list(contents) + [f"{PLOTS}/{p.file}" for p in written]
            _check_overwrites(folder, names, previous)
            folder.mkdir(parents=True, exist_ok=True)
            if written:
                (folder / PLOTS).mkdir(exist_ok=True)
            (folder / MANIFEST).write_text(_manifest(sorted(previous | set(names))), encoding="utf-8")
            for plot in written:
                shutil.copyfile(Path(drawn) / plot.file, folder / PLOTS / plot.file)
        for name, text in contents.items():
            (folder / name).write_text(text, encoding="utf-8", newline="\n")
        for stale in sorted(previous - set(names)):
            (folder / stale).unlink(missing_ok=True)
        (folder / MANIFEST).write_text(_manifest(names), encoding="utf-8")
    except OSError as exc:
        raise HarnessError(f"cannot write the leaderboard to {str(folder)!r}: {exc.strerror or exc}") from None
    return Built(board, problems, [folder / name for name in names] + [folder / MANIFEST])
