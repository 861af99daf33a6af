"""Issue 23, points 4, 8, 9, 10, 11: hostile results lines are skipped by line number, never lose a result.

A line that does not parse (an integer past Python's 4300-digit limit, nesting past the recursion
limit, a repeated key, NaN) or that parses but breaks a field a command reads (model.args a list,
a negative std, a string chance, a missing main metric, per_seed shorter than seeds, task or
version contradicting the signature) is a warning naming file and line in every reader; a writer
moves such an unterminated last line aside before appending, so the new result is kept.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from faults.conftest import results_lines, run_cli, run_counting
from fixtures.registries import entry_points

import harness.plugins.registry
import harness.results.jsonl
from harness.plugins.registry import build_registry
from harness.results.jsonl import write_json_lines_atomic
from harness.results.records import read_records

HUGE = "1" * 5000  # past sys.get_int_max_str_digits() (4300 by default)
DEEP = "[" * 100_000 + "]" * 100_000


def _run(capsys, data_dir: str, output: Path, *extra: str) -> tuple[int, str, str]:
    return run_counting(capsys, data_dir, output, *extra, seed=None)


@pytest.fixture
def good_line(data_dir, tmp_path, capsys) -> dict[str, Any]:
    """One valid results line (seed 0), as the harness writes it."""
    assert _run(capsys, data_dir, tmp_path / "first", "--seed", "0")[0] == 0
    return results_lines(tmp_path / "first")[0]


@pytest.fixture
def no_hang() -> Iterator[None]:
    """Fail (instead of hanging the suite) when the block takes more than 20 s."""

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError("hung for 20 s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(20)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_an_unterminated_huge_integer_line_is_moved_aside_and_the_new_result_is_kept(
    data_dir, tmp_path, capsys, good_line
):
    output = tmp_path / "out"
    output.mkdir()
    hostile = '{"task": ' + HUGE + "}"
    (output / "results.jsonl").write_text(json.dumps(good_line) + "\n" + hostile)
    code, _, err = _run(capsys, data_dir, output, "--seed", "1")
    assert code == 0, err
    lines = results_lines(output)  # every line whole JSON again
    assert [line["seeds"] for line in lines] == [[0], [1]]
    assert (output / "results.jsonl.torn").read_text() == hostile + "\n"


def _file_with(tmp_path: Path, good: dict[str, Any], *hostile: str) -> Path:
    path = tmp_path / "mixed" / "results.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_text("\n".join([json.dumps(good), *hostile]) + "\n")
    return path


UNPARSABLE = {
    "huge integer": ('{"task": ' + HUGE + "}", "integer of more than 4300 digits"),
    "deep nesting": (DEEP, "nested too deeply"),
    "NaN": ('{"task": NaN}', "NaN"),
}


@pytest.mark.parametrize("kind", UNPARSABLE)
def test_every_reader_skips_an_unparsable_line_by_number(kind, tmp_path, good_line, capsys, data_dir):
    text, reason = UNPARSABLE[kind]
    path = _file_with(tmp_path, good_line, text)
    records, problems = read_records(path)
    assert len(records) == 1
    assert [(p.line, reason in p.reason) for p in problems] == [(2, True)], problems
    code, out, err = run_cli(capsys, "leaderboard", str(path.parent), "-o", str(tmp_path / "board"), "--no-plots")
    assert code == 0, err
    assert f"harness: warning: skipped {path}, line 2: " in err and "1 bad lines skipped" in out
    code, _, err = _run(capsys, data_dir, path.parent, "--seed", "0", "--resume")
    assert code == 0 and "skipped mean_similarity: already in the results" in err
    assert f"{path}, line 2: " in err


def _mutated(good: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> str:
    line = json.loads(json.dumps(good))
    change(line)
    return json.dumps(line)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(line: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target = line
        for name in parents:
            target = target[name]
        target[last] = value

    return change


LONG = "1" * 400  # within Python's 4300-digit limit, far past a float's range


def _with_raw(good: dict[str, Any], path: str, raw: str) -> str:
    """The line with the value at ``path`` (a list: its first item) written as the raw JSON ``raw``."""
    marker = "__HOSTILE__"
    *parents, last = path.split(".")
    line = json.loads(json.dumps(good))
    target = line
    for name in parents:
        target = target[name]
    if isinstance(target.get(last), list):
        target[last] = [marker, *target[last][1:]]
    else:
        target[last] = marker
    return json.dumps(line).replace(f'"{marker}"', raw)


def _signature_task(line: dict[str, Any]) -> None:
    line["task"] = "corr"


HOSTILE_VALUES: dict[str, tuple[Callable[[dict[str, Any]], str], str]] = {
    "NaN in dataset": (
        lambda g: _mutated(g, _set("dataset.size", 1)).replace('"size": 1', '"size": NaN'),
        "NaN",
    ),
    "Infinity in harness": (
        lambda g: _mutated(g, _set("harness.version", 1)).replace('"version": 1', '"version": -Infinity'),
        "-Infinity",
    ),
    "model.args a list": (lambda g: _mutated(g, _set("model.args", [1, 2])), "'model.args'"),
    "model.name missing": (lambda g: _mutated(g, lambda line: line["model"].pop("name")), "'model.name'"),
    "negative std": (lambda g: _mutated(g, _set("metrics_std.similarity", -0.5)), "'metrics_std.similarity'"),
    "string chance": (
        lambda g: _mutated(g, _set("metric_info", {"similarity": {"chance": "0.5"}})),
        "'metric_info.similarity.chance'",
    ),
    "main metric missing": (lambda g: _mutated(g, _set("main_metric", "recall")), "'main_metric'"),
    "per_seed shorter than seeds": (lambda g: _mutated(g, _set("seeds", [0, 1])), "'per_seed.similarity'"),
    "task contradicts the signature": (lambda g: _mutated(g, _signature_task), "'task'"),
    "version contradicts the signature": (lambda g: _mutated(g, _set("task_version", 99)), "'task_version'"),
    "signature contradicts the task signature": (
        lambda g: _mutated(g, _set("signature", g["signature"].replace("skip:0", "skip:1"))),
        "'signature'",
    ),
    "unreadable task signature": (lambda g: _mutated(g, _set("task_signature", "xlr|k:10")), "'task_signature'"),
    "repeated key": (
        lambda g: json.dumps(g).replace('"task": "mean_similarity"', '"task": "corr", "task": "mean_similarity"', 1),
        "repeated key 'task'",
    ),
    # issue 38.5: values JSON allows that no line the harness writes holds, each named by its field
    **{
        f"400-digit integer in {where}": (
            lambda g, where=where: _with_raw(g, where, LONG),
            f"field '{where}{index}': an integer of 400 digits, past a float's range",
        )
        for where, index in (
            ("metrics.similarity", ""),
            ("per_seed.similarity", "[0]"),
            ("metrics_std.similarity", ""),
            ("wall_seconds", ""),
        )
    },
    "1e400 in dataset.size": (lambda g: _with_raw(g, "dataset.size", "1e400"), "field 'dataset.size': a number out"),
    "400-digit dataset.size": (lambda g: _with_raw(g, "dataset.size", LONG), "field 'dataset.size': expected a count"),
    "lone surrogate in model.name": (
        lambda g: _with_raw(g, "model.name", '"e5\\ud800"'),
        "field 'model.name': text with a lone surrogate",
    ),
    "NUL in model.name": (
        lambda g: _with_raw(g, "model.name", '"e5\\u0000x"'),
        "field 'model.name': text with a NUL character",
    ),
    "NUL in a key": (lambda g: _with_raw(g, "extra", '{"a\\u0000": 1}'), "field 'extra.a\\x00'"),
    "unparseable started": (
        lambda g: _mutated(g, _set("started", "yesterday")),
        "field 'started': 'yesterday' is not an ISO 8601 time",
    ),
    "far-future started": (
        lambda g: _mutated(g, _set("started", "9999-01-01T00:00:00+00:00")),
        "field 'started': 9999-01-01T00:00:00+00:00 is in the future",
    ),
}


@pytest.mark.parametrize("kind", HOSTILE_VALUES)
def test_a_line_with_a_hostile_value_is_skipped_with_its_number(kind, tmp_path, good_line):
    build, field = HOSTILE_VALUES[kind]
    path = _file_with(tmp_path, good_line, build(good_line))
    records, problems = read_records(path)
    assert len(records) == 1
    assert len(problems) == 1 and problems[0].line == 2 and field in problems[0].reason, problems


def test_the_leaderboard_skips_every_hostile_value_and_merges_the_rest(tmp_path, good_line, capsys):
    path = _file_with(tmp_path, good_line, *(build(good_line) for build, _ in HOSTILE_VALUES.values()))
    code, out, err = run_cli(capsys, "leaderboard", str(path), "-o", str(tmp_path / "board"), "--no-plots")
    assert code == 0, err
    assert "merged 1 results" in out and f"{len(HOSTILE_VALUES)} bad lines skipped" in out
    for line in range(2, len(HOSTILE_VALUES) + 2):
        assert f"skipped {path}, line {line}: " in err
    assert "corr" not in (tmp_path / "board" / "leaderboard.csv").read_text()


def test_a_fifo_named_results_jsonl_is_refused_by_the_leaderboard(tmp_path, capsys, no_hang):
    folder = tmp_path / "results"
    folder.mkdir()
    os.mkfifo(folder / "results.jsonl")
    for given in (folder, folder / "results.jsonl"):
        code, _, err = run_cli(capsys, "leaderboard", str(given), "-o", str(tmp_path / "board"))
        assert code == 2 and f"{folder / 'results.jsonl'} is not a regular file" in err, err


def test_a_fifo_named_results_jsonl_is_refused_by_run(data_dir, tmp_path, capsys, no_hang):
    folder = tmp_path / "out"
    folder.mkdir()
    os.mkfifo(folder / "results.jsonl")
    for extra in ((), ("--resume",)):
        code, _, err = _run(capsys, data_dir, folder, "--seed", "0", *extra)
        assert code == 2 and f"{folder / 'results.jsonl'} is not a regular file" in err, err


def test_ctrl_c_while_writing_the_samples_file_leaves_no_temporary(tmp_path, monkeypatch):
    def interrupted(fd: int, data: bytes) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(harness.results.jsonl, "write_all", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_json_lines_atomic(tmp_path / "samples_x.jsonl", [{"id": 1}])
    assert list(tmp_path.iterdir()) == []


def test_every_command_skips_a_400_digit_metric_and_writes_clean_outputs(
    tmp_path, good_line, capsys, data_dir, monkeypatch
):
    # issue 38.5: an OverflowError took down leaderboard, compare, --resume, meta and calibrate; NUL reached the page
    installed = list(metadata.entry_points(group="harness"))  # meta and calibrate are the built-in plugins' commands
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", build_registry([*installed, *entry_points("fake")]))
    hostile = [
        _with_raw(good_line, "metrics.similarity", LONG),
        _with_raw(good_line, "model.name", '"e5\\u0000x"'),
        _with_raw(good_line, "dataset.size", "1e400"),
    ]
    path = _file_with(tmp_path, good_line, *hostile)
    skipped = [f"{path}, line {n}: " for n in (2, 3, 4)]
    code, out, err = run_cli(capsys, "leaderboard", str(path), "-o", str(tmp_path / "board"), "--no-plots")
    assert code == 0 and "merged 1 results" in out and all(line in err for line in skipped), err
    for name in ("index.html", "README.md", "leaderboard.json", "leaderboard.csv"):
        data = (tmp_path / "board" / name).read_bytes()
        assert b"\x00" not in data and b"Infinity" not in data and b"\\u0000" not in data
        data.decode("utf-8")
    json.loads((tmp_path / "board" / "leaderboard.json").read_text())
    for command in (
        ("compare", "counting-encoder", "x", "--task", "mean_similarity", "--results", str(path)),
        ("meta", str(path), "--output", str(tmp_path / "meta")),
        ("calibrate", "fit", str(path), "--output", str(tmp_path / "calibration.json")),
    ):
        code, _, err = run_cli(capsys, *command)
        assert code in (0, 2) and "internal error" not in err and all(line in err for line in skipped), err
    code, _, err = _run(capsys, data_dir, path.parent, "--seed", "0", "--resume")
    assert code == 0 and "skipped mean_similarity: already in the results" in err and skipped[0] in err


def test_a_file_of_bad_lines_says_why_each_was_skipped(tmp_path, good_line, capsys):
    lines = [_with_raw(good_line, "wall_seconds", LONG), _mutated(good_line, _set("started", "soon"))]
    path = tmp_path / "bad" / "results.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run_cli(capsys, "leaderboard", str(path), "-o", str(tmp_path / "board"))
    assert code == 2 and err == (
        f"harness: error: no valid results in {path} (2 lines skipped: {path}, line 1: does not match the results "
        f"schema: field 'wall_seconds': an integer of 400 digits, past a float's range; {path}, line 2: does not "
        "match the results schema: field 'started': 'soon' is not an ISO 8601 time)\n"
    )


def test_the_page_escapes_nul_and_lone_surrogates_of_any_other_source():
    from harness.leaderboard.page import esc

    # a folder name's undecodable byte (surrogateescape) labels a model: the page stays valid UTF-8 without NUL
    name = b"mod\xe8le\x00<b>".decode("utf-8", "surrogateescape")
    assert esc(name) == "mod\ufffdle&lt;b&gt;" and esc(name).encode("utf-8")
