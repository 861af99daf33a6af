"""Pages and paired tests kept between builds of one board folder, keyed by their inputs (``harness.leaderboard.kept``):
a rebuild makes again only what its inputs changed, and writes what a build from nothing writes."""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from pathlib import Path

import pytest
from leaderboard.builders import record, with_samples, write_results

import harness.leaderboard.build as build
import harness.leaderboard.kept as kept
from harness.cli import main
from harness.leaderboard.merge import merge
from harness.leaderboard.ranking import Samples
from harness.results.load import Entry

INFO = {"recall@k": {"display": "R@10", "higher_is_better": True, "statistic": "mean:hit"}}
PATTERNS = {"alpha": "1111111100", "beta": "1111100000", "gamma": "1100000000"}


def line(
    results: Path, name: str, pattern: str, started: str = "2026-01-01T00:00:00+00:00", log: str = "", tgt: str = "de"
):
    """An XLR line (en-``tgt``) whose recall is its log's hits."""
    args = {"src": "en", "tgt": tgt, "dataset": "ikea"}
    item = record("xlr", name, pattern.count("1") / len(pattern), started=started, args=args)
    item.metric_info = INFO
    rows = [{"id": f"s{i}", "hit": float(c), "rr": 1.0 if c == "1" else 0.2} for i, c in enumerate(pattern)]
    return with_samples(results, item, rows, f"samples_{name}_{tgt}{log}.jsonl")


def lines(results: Path) -> list:
    """Each model's lines: en-de as in ``PATTERNS``, en-fr reversed."""
    return [line(results, n, p) for n, p in PATTERNS.items()] + [
        line(results, n, p[::-1], tgt="fr") for n, p in PATTERNS.items()
    ]


@pytest.fixture
def made(monkeypatch) -> Counter[str]:
    """How many item pages, index pages, sets of model pages and paired tests each build makes."""
    counts: Counter[str] = Counter()

    def counted(name, function):
        def wrapper(*args, **kwargs):
            counts[name] += 1
            return function(*args, **kwargs)

        return wrapper

    def test(samples, first, second):
        counts["test"] += 1
        for result in (first, second):
            counts[f"test with {result.model_label} {result.record.task_args['tgt']}"] += 1
        return original(samples, first, second)

    for name in ("item_page", "index_page", "model_pages"):
        monkeypatch.setattr(build, name, counted(name, getattr(build, name)))
    original = Samples._test
    monkeypatch.setattr(Samples, "_test", test)
    return counts


def board(results: Path, folder: Path) -> dict[str, bytes]:
    """Build ``folder`` from ``results``; its files (README.md without the command that made it)."""
    assert main(["leaderboard", str(results), "-o", str(folder), "--no-plots"]) == 0
    files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
    files["README.md"] = b"\n".join(x for x in files["README.md"].splitlines() if b"harness leaderboard" not in x)
    return files


def test_a_rerun_that_reproduces_a_result_makes_no_page_again(tmp_path, made, capsys):
    results = tmp_path / "results"
    write_results(results, lines(results))
    first = board(results, tmp_path / "board")
    assert made["item_page"] == 6 and made["index_page"] == 1 and made["model_pages"] == 1 and made["test"] > 0
    assert "harness: pages 10 ready (10 made)" in capsys.readouterr().err  # 6 item pages, the index, 3 models
    made.clear()
    write_results(results, [line(results, "beta", PATTERNS["beta"], "2026-02-01T00:00:00+00:00")])  # now beta's newest
    again = board(results, tmp_path / "board")
    assert made == Counter()  # the new line is the same result: every page and test kept
    assert "harness: pages 10 ready (10 kept from the previous build, 0 made)" in capsys.readouterr().err
    assert again == board(results, tmp_path / "from-nothing")
    assert {n: again[n] for n in first if n.endswith(".html")} == {
        n: f for n, f in first.items() if n.endswith(".html")
    }


def test_a_changed_result_makes_its_own_item_page_and_the_ranked_pages_again(tmp_path, made):
    results = tmp_path / "results"
    write_results(results, lines(results))
    board(results, tmp_path / "board")
    made.clear()
    write_results(results, [line(results, "beta", "1111111000", "2026-02-01T00:00:00+00:00", log="-2")])
    again = board(results, tmp_path / "board")
    assert made["item_page"] == 1  # beta's; alpha's and gamma's kept
    assert made["index_page"] == 1 and made["model_pages"] == 1
    assert made["test"] == made["test with beta de"] > 0  # only tests of beta's new line; the others kept
    made.clear()
    assert again == board(results, tmp_path / "from-nothing")
    assert made["item_page"] == 6 and made["test"] == 6  # another folder: nothing kept


def test_a_page_changed_by_hand_an_unreadable_store_or_other_code_makes_pages_again(tmp_path, made, monkeypatch):
    results = tmp_path / "results"
    write_results(results, lines(results))
    first = board(results, tmp_path / "board")
    page = next((tmp_path / "board" / "items").iterdir())
    page.write_text("edited by hand")
    made.clear()
    assert board(results, tmp_path / "board") == first
    assert made["item_page"] == 1 and made["index_page"] == 0

    store = kept._store(tmp_path / "board")
    store.write_text("{not json")
    made.clear()
    assert board(results, tmp_path / "board") == first
    assert made["item_page"] == 6 and made["index_page"] == 1 and made["test"] > 0

    monkeypatch.setattr(kept, "_CODE", ["another version of the code"])
    made.clear()
    assert board(results, tmp_path / "board") == first
    assert made["item_page"] == 6 and made["index_page"] == 1 and made["test"] > 0


def test_inputs_text_tells_apart_what_a_page_shows_and_ignores_when_a_line_ran(tmp_path):
    assert kept.inputs_text(0.1 + 0.2) != kept.inputs_text(0.3)
    assert kept.inputs_text(math.nan) == "float(nan)" and kept.inputs_text(-0.0) != kept.inputs_text(0.0)
    assert kept.inputs_text({"a": (1, None)}) == "{'a': [1, None]}"
    early, late = record("xlr", "a", 0.5), record("xlr", "a", 0.5, started="2026-05-01T00:00:00+00:00")
    late.wall_seconds = 99.0
    first, second = (merge([Entry(r, tmp_path / "results.jsonl")]).current[0] for r in (early, late))
    assert kept.inputs_text(first) == kept.inputs_text(second)
    other = merge([Entry(record("xlr", "a", 0.6), tmp_path / "results.jsonl")]).current[0]
    assert kept.inputs_text(first) != kept.inputs_text(other)


def test_a_store_naming_a_page_outside_the_board_or_holding_a_strange_fact_is_not_followed(tmp_path, made):
    results = tmp_path / "results"
    write_results(results, lines(results))
    first = board(results, tmp_path / "board")
    store = kept._store(tmp_path / "board")
    data = json.loads(store.read_text())
    outside = tmp_path / "outside.html"
    outside.write_text("not a page of the board")
    digest = hashlib.sha256(outside.read_bytes()).hexdigest()
    for pages in data["pages"].values():
        pages["../outside.html"] = digest
    store.write_text(json.dumps(data))
    made.clear()
    assert board(results, tmp_path / "board") == first
    assert made["item_page"] == 6 and made["index_page"] == 1  # every page made again; nothing read from outside
    data = json.loads(store.read_text())
    data["facts"] = {key: {"p": 0.5} for key in data["facts"]}
    store.write_text(json.dumps(data))
    made.clear()
    assert board(results, tmp_path / "board") == first
    assert made["test"] == 6  # a store with a fact no build writes is not read at all


def test_without_a_cache_folder_a_board_is_built_and_nothing_kept(tmp_path, made, monkeypatch):
    def homeless() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(kept, "default_cache_dir", homeless)
    results = tmp_path / "results"
    write_results(results, lines(results))
    first = board(results, tmp_path / "board")
    made.clear()
    assert board(results, tmp_path / "board") == first
    assert made["item_page"] == 6 and made["index_page"] == 1


def test_a_cache_folder_that_cannot_be_written_builds_the_board_and_keeps_nothing(tmp_path, made, monkeypatch):
    blocked = tmp_path / "cache-is-a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(blocked))
    results = tmp_path / "results"
    write_results(results, lines(results))
    first = board(results, tmp_path / "board")
    made.clear()
    assert board(results, tmp_path / "board") == first
    assert made["item_page"] == 6 and made["index_page"] == 1  # nothing could be kept
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board", "cache-is-a-file", "results"]  # no temporary left


def test_a_familys_sections_are_made_again_only_when_its_results_change(tmp_path, monkeypatch):
    import harness.leaderboard.sections as sections

    calls: list[str] = []
    real = sections.section_function

    def counted(family):
        function = real(family)
        if function is None:
            return None
        return lambda board: calls.append(family.name) or [sections.Section("A table", ("a", "b"), (("1", "2"),), "n")]

    monkeypatch.setattr(sections, "section_function", counted)
    results = tmp_path / "results"
    write_results(results, lines(results))
    first = board(results, tmp_path / "board")
    assert calls == ["retrieval"] and b"A table" in first["families/retrieval.html"]
    write_results(results, [line(results, "beta", PATTERNS["beta"], "2026-02-01T00:00:00+00:00")])  # the same result
    kept_again = board(results, tmp_path / "board")
    assert calls == ["retrieval"]  # kept
    assert kept_again == board(results, tmp_path / "nothing") and calls == ["retrieval"] * 2  # another folder
    calls.clear()
    write_results(results, [line(results, "beta", "1111111000", "2026-03-01T00:00:00+00:00", log="-2")])
    again = board(results, tmp_path / "board")
    assert calls == ["retrieval"] and again == board(results, tmp_path / "from-nothing")


def test_a_stored_fact_that_no_build_writes_empties_the_store(tmp_path):
    assert kept._fact([["t", ["h"], [["c"]], "n"]]) and kept._fact([0.5, 1]) and kept._fact(None)
    assert not kept._fact([["t", ["h"], [["c", 1]], "n"]]) and not kept._fact(["text"]) and not kept._fact({})
