"""Write a whole leaderboard folder from merged results (how it is written safely: ``output``)."""

from __future__ import annotations

import gc
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from harness.errors import HarnessError
from harness.leaderboard.aside import Aside
from harness.leaderboard.detail import item_page, model_pages, readable_items
from harness.leaderboard.export import write_exports
from harness.leaderboard.figures import Plot, contents_of
from harness.leaderboard.index import index_page
from harness.leaderboard.kept import Kept
from harness.leaderboard.markdown import readme
from harness.leaderboard.merge import Board, Result, merge
from harness.leaderboard.models import model_rows, newest
from harness.leaderboard.output import LEADERBOARD, previous_files, publish
from harness.leaderboard.page import family_page, footer
from harness.leaderboard.plots import INDEX, index_text, start_plots
from harness.leaderboard.ranking import Ranking, Samples, rankings
from harness.leaderboard.sections import Section, family_sections
from harness.leaderboard.site import Site, site_of
from harness.leaderboard.tables import FamilyTable, family_tables
from harness.results.jsonl import BadLine
from harness.results.load import read_then, skipped

PLOTS = "plots"
ASIDE = 20_000  # results from which the exports are written in another process (for fewer, forking costs more)
MERGE_COST = 8.0  # microseconds per line, as harness.results.load's costs: merging while helpers still check lines


def previous_folders(previous: set[str]) -> set[str]:
    """The top folders of the files an earlier run wrote (``plots`` when it drew any)."""
    return {name.split("/")[0] for name in previous if "/" in name}


@dataclass(frozen=True)
class Built:
    """What was written, the lines that were skipped, and the board it replaced: the files an earlier run had
    written there (``replaced``) and when (``replaced_at``, the time of its manifest; None for a new folder)."""

    board: Board
    problems: list[BadLine]
    files: list[Path]
    replaced: frozenset[str] = frozenset()
    replaced_at: str | None = None

    def replacement(self, folder: str | Path) -> str | None:
        """The line saying what of an earlier board was replaced, and from when (None: there was none)."""
        if self.replaced_at is None:
            return None
        written = {path.relative_to(folder).as_posix() for path in self.files}
        kept = len(self.replaced & written)
        return (
            f"replaced the leaderboard written in {folder} at {self.replaced_at}: {kept} of its "
            f"{len(self.replaced)} files written again, {len(self.replaced) - kept} removed; other files left as they were"
        )


@contextmanager
def _frozen() -> Iterator[None]:
    """Everything read so far out of the cyclic garbage collector's sight while the outputs are written: the
    records are acyclic, and each full collection would walk all of them again (and, in the plot workers, touch
    every page the fork shares)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def ranked_pages(board: Board, kept: Kept) -> tuple[Site, list[Ranking]]:
    """The pages that need no plots, into ``kept`` (made, or kept from the previous build where their inputs are the
    same): ``index.html`` (the ranked tables), the model pages and the item pages; where every page lives, and the
    ranked tables."""
    samples = Samples(kept)
    ranked = rankings(board, samples)
    shown = footer(board)
    logged = {
        id(r): r for ranking in ranked for row in ranking.rows for r in row.results if r and r.record.samples_file
    }
    every = site_of(board, logged.values())  # where each item page would be
    with_items = [r for r in logged.values() if _item_page(board, r, every, shown, kept)]
    site = site_of(board, with_items)
    current = sorted(board.current, key=lambda r: (r.model_key, str(r.signature)))
    cards = {key: result.record.model for key, result in newest(board).items()}
    kept.pages(
        kept.key(
            "ranked pages", ranked, site, current, cards, model_rows(board), board.labels, board.families(), shown
        ),
        {"index.html", *site.models.values()},
        lambda: {"index.html": index_page(board, ranked, site), **model_pages(board, ranked, samples, site)},
    )
    note = f"{len(kept.files)} kept from the previous build, " if kept.files else ""
    print(f"harness: pages {len(kept.texts) + len(kept.files)} ready ({note}{len(kept.texts)} made)", file=sys.stderr)
    return site, ranked


def _item_page(board: Board, result: Result, site: Site, shown: list[str], kept: Kept) -> bool:
    """The items behind ``result`` on their page (at ``site.item(result)``), made or kept; False when its log cannot
    be read (a warning)."""
    path = site.item(result) or ""
    family = board.index.of_record(result.record)
    links = site.families.get(family.name), site.model(result.model_label)

    def make() -> dict[str, str]:
        found = readable_items([result])
        return {path: item_page(board, result, found[0][1], site)} if found else {}

    return kept.pages(kept.key("item page", result, path, family, *links, shown), {path}, make)


def family_pages(
    board: Board, tables: list[FamilyTable], plots: list[Plot], sections: dict[str, list[Section]], site: Site
) -> dict[str, str]:
    """Each family's page: its tables, extra tables and plots."""
    return {
        site.families[family.name]: family_page(board, family, tables, plots, sections.get(family.name, []), site)
        for family, _ in board.families()
    }


def exports_into(board: Board, folder: Path) -> dict[str, Path]:
    """``leaderboard.csv`` and ``leaderboard.json`` written into ``folder``: name -> path."""
    folder.mkdir()
    written = {"leaderboard.csv": folder / "leaderboard.csv", "leaderboard.json": folder / "leaderboard.json"}
    with (
        open(written["leaderboard.json"], "xb", buffering=1 << 20) as json_out,
        open(written["leaderboard.csv"], "x", encoding="utf-8", newline="") as csv_out,
    ):
        write_exports(board, json_out, csv_out)
    return written


def write_leaderboard(locations: list[str], output: str | Path, command: str, plots: bool = True) -> Built:
    """Read, merge and write README.md, leaderboard.csv, leaderboard.json, index.html, the family, model and item
    pages, plots/ and the manifest."""
    board, _, problems = read_then(locations, lambda entries: merge(entries) if entries else None, MERGE_COST)
    if board is None:
        raise HarnessError(f"no valid results in {', '.join(locations)}" + skipped(problems))
    with _frozen():
        folder = Path(output)
        previous = previous_files(folder)
        when = written_at(folder) if previous else None
        earlier = Kept.load(folder, contents_of(board))
        with tempfile.TemporaryDirectory(prefix="harness-plots-") as drawn, ExitStack() as stack:
            # leaderboard.csv and .json in another process, beside the plots and the pages (forked first: no thread
            # runs yet); the sections here, after the pages (a process of their own costs more than it saves)
            exported = Path(drawn) / "exports"
            exports = stack.enter_context(
                closing(Aside(lambda: exports_into(board, exported), "the exports", len(board.results) >= ASIDE))
            )
            tables = family_tables(board)  # before the plot workers fork: they read the tables too
            kept = folder / PLOTS if PLOTS in previous_folders(previous) else None
            drawing = start_plots(board, Path(drawn), previous=kept) if plots else []
            if not isinstance(drawing, list):
                stack.callback(drawing.close)
            site, ranked = ranked_pages(board, earlier)
            contents: dict[str, str | bytes] = dict(earlier.texts)
            sections = family_sections(board, earlier)
            written = drawing if isinstance(drawing, list) else drawing.result()
            contents["README.md"] = readme(board, tables, written, command, sections, ranked)
            contents.update(family_pages(board, tables, written, sections, site))
            copies = {
                **exports.result(),
                **earlier.files,
                **{f"{PLOTS}/{p.file}": Path(drawn) / p.file for p in written},
            }
            if plots:
                contents[f"{PLOTS}/{INDEX}"] = index_text(written, Path(drawn))
            files = publish(folder, previous, contents, copies)
        earlier.save()
    return Built(board, problems, files, frozenset(previous), when)


def written_at(folder: Path) -> str | None:
    """When the board in ``folder`` was written: its manifest's modification time, local, to the second."""
    try:
        moment = datetime.fromtimestamp((folder / LEADERBOARD.manifest).stat().st_mtime).astimezone()
    except OSError:
        return None
    return moment.isoformat(timespec="seconds")
