"""Issue 38.2: per-sample logs that are not those of their results (swapped, stripped of their header) are never
compared: ``harness compare`` refuses in one line (exit 2) and the leaderboard's overview says "not compared" with a
warning, naming no winner; both run the same checks (``paired_difference``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from leaderboard.builders import record, with_samples, write_results

from harness.cli import main
from harness.errors import HarnessError
from harness.leaderboard.compare import paired_difference
from harness.leaderboard.merge import merge
from harness.results.load import load_entries
from harness.results.samples import compact_folder

INFO = {"recall@k": {"display": "R@10", "higher_is_better": True, "chance": 0.1, "statistic": "mean:hit"}}
IDS = [f"s{i:02d}" for i in range(40)]
HITS = {"good": 30, "poor": 10}  # good hits the first 30 of 40 items (R@10 0.75), poor the first 10 (0.25)


def xlr_pair(folder: Path) -> Path:
    """Two models' xlr results with full per-sample logs that reproduce their recorded R@10."""
    lines = []
    for model, hits in HITS.items():
        item = record("xlr", model, hits / len(IDS))
        item.metric_info = INFO
        rows = [{"id": i, "hit": float(n < hits)} for n, i in enumerate(IDS)]
        lines.append(with_samples(folder, item, rows, f"samples_xlr_{model}.jsonl"))
    write_results(folder, lines)
    return folder


def swap(first: Path, second: Path) -> None:
    data = first.read_bytes()
    first.write_bytes(second.read_bytes())
    second.write_bytes(data)


def strip_header(path: Path) -> None:
    """The compact log without its first line (the header holding the run's signature)."""
    lines = gzip.decompress(path.read_bytes()).splitlines(keepends=True)
    path.write_bytes(gzip.compress(b"".join(lines[1:])))


def compact_swapped(tmp_path: Path) -> Path:
    """The issue's reproduction: compact logs, headers stripped, bodies swapped."""
    kept = tmp_path / "kept"
    compact_folder(xlr_pair(tmp_path / "full"), kept)
    logs = kept / "samples_xlr_good.jsonl.gz", kept / "samples_xlr_poor.jsonl.gz"
    for log in logs:
        strip_header(log)
    swap(*logs)
    return kept


def full_swapped_unsigned(tmp_path: Path) -> Path:
    """Full logs whose samples carry no signature, swapped: only the recomputed statistic can tell."""
    folder = xlr_pair(tmp_path / "full")
    for model in HITS:
        path = folder / f"samples_xlr_{model}.jsonl"
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "signature"}) + "\n" for r in rows))
    swap(folder / "samples_xlr_good.jsonl", folder / "samples_xlr_poor.jsonl")
    return folder


def board_overview(folder: Path, tmp_path: Path, capsys) -> tuple[str, str]:
    """The overview section of the board's README, and what the command printed on stderr."""
    assert main(["leaderboard", str(folder), "-o", str(tmp_path / "board"), "--no-plots"]) == 0
    err = capsys.readouterr().err
    readme = (tmp_path / "board" / "README.md").read_text(encoding="utf-8")
    return readme.split("## Overview")[1].split("\n## ")[0], err


def test_the_untouched_logs_are_compared_by_both(tmp_path, capsys):
    kept = tmp_path / "kept"
    compact_folder(xlr_pair(tmp_path / "full"), kept)
    assert main(["compare", "good", "poor", "--task", "xlr", "--results", str(kept), "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and json.loads(out)["bootstrap"]["difference"] == pytest.approx(0.5)
    overview, err = board_overview(kept, tmp_path, capsys)
    assert "good is better at 95%" in overview and "not compared" not in err


def test_compact_logs_stripped_and_swapped_are_refused_by_compare_and_not_compared_on_the_board(tmp_path, capsys):
    kept = compact_swapped(tmp_path)
    assert main(["compare", "good", "poor", "--task", "xlr", "--results", str(kept)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "samples_xlr_good.jsonl.gz, line 1: a compact log without a header" in err
    overview, err = board_overview(kept, tmp_path, capsys)
    assert "is better" not in overview
    assert "Not compared: " in overview and "a compact log without a header naming its run's signature" in overview
    warnings = [line for line in err.splitlines() if "not compared" in line]
    assert warnings == [  # once, though the README and the page both build the overview
        f"harness: warning: good and poor on xlr are not compared: {kept / 'samples_xlr_good.jsonl.gz'}, line 1: "
        "a compact log without a header naming its run's signature: it cannot be checked"
    ]


def test_swapped_logs_without_signatures_are_caught_by_the_recorded_metric(tmp_path, capsys):
    folder = full_swapped_unsigned(tmp_path)
    assert main(["compare", "good", "poor", "--task", "xlr", "--results", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err == (
        "harness: error: mean:hit of good's samples (samples_xlr_good.jsonl) is 0.250000, but its xlr line records "
        "recall@k = 0.75; mean:hit of poor's samples (samples_xlr_poor.jsonl) is 0.750000, but its xlr line records "
        "recall@k = 0.25: the per-sample log is not that of the result\n"
    )
    overview, err = board_overview(folder, tmp_path, capsys)
    assert "is better" not in overview and "Not compared: mean:hit of good's samples" in overview
    assert "harness: warning: good and poor on xlr are not compared: mean:hit of good's samples" in err


def test_one_damaged_side_is_enough_and_a_chosen_statistic_is_not_held_to_the_recorded_metric(tmp_path, capsys):
    folder = xlr_pair(tmp_path / "full")
    path = folder / "samples_xlr_poor.jsonl"
    path.write_text(path.read_text().replace('"hit": 0.0', '"hit": 1.0', 1))  # one more hit than recorded
    board = merge(load_entries([str(folder)])[0])
    good, poor = sorted(board.current, key=lambda r: r.model_label)
    with pytest.raises(Exception, match=r"^mean:hit of poor's samples \(samples_xlr_poor.jsonl\) is 0.275000, but"):
        paired_difference(good, poor, resamples=10)
    # naming the recorded statistic with --statistic keeps the check; another statistic has no recorded value
    command = ["compare", "good", "poor", "--task", "xlr", "--results", str(folder), "--statistic"]
    assert main([*command, "mean:hit"]) == 2
    assert "is 0.275000, but its xlr line records recall@k = 0.25" in capsys.readouterr().err
    assert main([*command, "mean:hit,hit", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["bootstrap"]["b"] == pytest.approx(0.275)


# Issue 38.6: compact logs that are damaged, that expand without bound, or that name a file outside the folder.


def test_a_flipped_byte_inside_the_deflate_stream_is_one_line_naming_the_file(tmp_path, capsys):
    kept = tmp_path / "kept"
    compact_folder(xlr_pair(tmp_path / "full"), kept)
    log = kept / "samples_xlr_poor.jsonl.gz"
    data = bytearray(log.read_bytes())
    data[len(data) // 2] ^= 0xFF
    log.write_bytes(bytes(data))
    assert main(["compare", "good", "poor", "--task", "xlr", "--results", str(kept)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"harness: error: {log}: not a readable gzip file (")
    overview, err = board_overview(kept, tmp_path, capsys)
    assert "is better" not in overview and "Not compared: " in overview and "not a readable gzip file (" in overview


def bomb(path: Path, megabytes: int) -> None:
    """A compact log whose header is followed by one line of ``megabytes`` MiB without a newline."""
    zeros = b"0" * (1 << 20)
    with gzip.GzipFile(path, "wb", compresslevel=1, mtime=0) as handle:
        handle.write(b'{"signature": "x", "compact": ["hit"]}\n{"id": "')
        for _ in range(megabytes):
            handle.write(zeros)


def test_a_line_that_expands_without_bound_is_refused_as_soon_as_it_passes_the_cap(tmp_path, capsys, monkeypatch):
    import harness.results.jsonl
    import harness.results.samples

    monkeypatch.setattr(harness.results.jsonl, "MAX_LINE", 1 << 20)
    kept = tmp_path / "kept"
    compact_folder(xlr_pair(tmp_path / "full"), kept)
    log = kept / "samples_xlr_poor.jsonl.gz"
    bomb(log, 64)  # 64 MiB of one line, in about 300 KB
    read = []

    class Spy(gzip.GzipFile):
        def close(self):
            if not self.closed:
                read.append(self.tell())
            super().close()

    monkeypatch.setattr(harness.results.samples.gzip, "open", lambda path, mode: Spy(path, mode))
    assert main(["compare", "good", "poor", "--task", "xlr", "--results", str(kept)]) == 2
    err = capsys.readouterr().err
    assert err == f"harness: error: {log}, line 2: a line longer than 1 MiB (no line the harness writes is)\n"
    assert read[-1] <= (1 << 20) + 64  # it stopped at the cap: the 63 MiB behind it were never decompressed


def test_a_log_that_expands_past_the_total_cap_is_refused(tmp_path, capsys, monkeypatch):
    import harness.results.samples

    monkeypatch.setattr(harness.results.samples, "MAX_DECOMPRESSED", 200)
    kept = tmp_path / "kept"
    compact_folder(xlr_pair(tmp_path / "full"), kept)
    assert main(["compare", "good", "poor", "--task", "xlr", "--results", str(kept)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"harness: error: {kept / 'samples_xlr_good.jsonl.gz'}: expands past 0 MiB, which no compact log the "
        "harness writes does; not read further\n"
    )


@pytest.mark.parametrize("name", ["../../../../etc/passwd", "/etc/passwd", "sub/../../x.jsonl"])
def test_a_samples_file_outside_the_results_folder_is_refused(tmp_path, capsys, name):
    folder = xlr_pair(tmp_path / "full")
    (tmp_path / "passwd").write_text('{"id": "s00", "hit": 1.0}\n')
    text = (folder / "results.jsonl").read_text().replace('"samples_xlr_poor.jsonl"', json.dumps(name))
    (folder / "results.jsonl").write_text(text)
    assert main(["compare", "good", "poor", "--task", "xlr", "--results", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"harness: error: {folder / 'results.jsonl'}: samples_file {name!r} is not a file name inside the "
        "results folder; not read or written\n"
    )
    with pytest.raises(HarnessError, match="is not a file name inside the results folder"):
        compact_folder(folder, tmp_path / "kept")
    assert not (tmp_path / "kept" / "results.jsonl").exists()  # refused before the results were kept


def test_a_400_digit_value_in_a_log_or_an_interval_is_refused_or_ignored_never_a_crash(tmp_path, capsys):
    folder = xlr_pair(tmp_path / "full")
    log = folder / "samples_xlr_poor.jsonl"
    log.write_text(log.read_text().replace('"hit": 0.0', '"hit": ' + "9" * 400, 1))
    assert main(["compare", "good", "poor", "--task", "xlr", "--results", str(folder)]) == 2
    err = capsys.readouterr().err
    assert err == f"harness: error: {log}, line 11: field 'hit': expected a finite number, got {'9' * 37}...\n"
    # an interval is read only where it is a finite number: a 400-digit bound leaves the cell without one
    results = folder / "results.jsonl"
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    lines[0]["intervals"] = {"recall@k": {"low": "LOW", "high": 0.9, "confidence": 0.95}}
    results.write_text("".join(json.dumps(line).replace('"LOW"', "1" * 400) + "\n" for line in lines))
    overview, err = board_overview(folder, tmp_path, capsys)
    assert "skipped" not in err and "| **good** 0.7500 |" in overview
