"""``harness suite``: a suite file run in one process (each model loaded once), resumed, sharded, then the board.

The grid here is the built-in xling-shapes data (generated, 12 items) with the weight-free ``random-encoder`` and
``tfidf-char``: every cell runs in well under a second.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from harness.adapters.model import ModelAdapter
from harness.cli import main
from harness.results.load import Entry
from harness.results.records import read_records
from harness.results.samples import read_samples

SUITE = """\
suite: 1
variables:
  out: out
results: ${out}/results
board: ${out}/board
groups:
  - name: shapes
    tasks: [xlr, backretrieval]
    models:
      - random-encoder
      - {name: tfidf-char, args: {ngram_max: 3}}
    task_args: {size: 12, n: 4, src: en, tgt: [de, fr]}
    options: {seeds: 2, resamples: 0}
    logs: compact
    logs_without: [backretrieval]
"""
CELLS = [  # (model, model arguments, target language), in the suite's order
    ("random-encoder", None, "de"),
    ("random-encoder", None, "fr"),
    ("tfidf-char", "ngram_max=3", "de"),
    ("tfidf-char", "ngram_max=3", "fr"),
]


def write_suite(folder: Path, text: str = SUITE) -> Path:
    path = folder / "suite.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def records(folder: Path) -> list:
    found, problems = read_records(folder / "results.jsonl")
    assert problems == []
    return found


@pytest.fixture
def loads(monkeypatch) -> list[str]:
    """The name of every adapter whose weights are loaded (``ensure_loaded`` on an adapter not yet loaded)."""
    seen: list[str] = []
    original = ModelAdapter.ensure_loaded

    def counting(self: ModelAdapter) -> None:
        if not self._loaded:
            seen.append(self.name)
        original(self)

    monkeypatch.setattr(ModelAdapter, "ensure_loaded", counting)
    return seen


def test_the_suite_writes_what_separate_runs_write_loading_each_model_once(tmp_path, capsys, loads, fresh_cache):
    suite = write_suite(tmp_path)
    assert main(["suite", str(suite), "--no-board"]) == 0
    out, err = capsys.readouterr()
    assert loads == ["random-encoder", "tfidf-char"]  # one load per model, not one per cell
    assert "suite: 4/4 cells (0 already in the results)" in err
    assert "suite: 4 cells: 4 run, 0 already in the results" in err
    assert out.count(": xlr recall@k ") == 4 and out.count(": backretrieval recall@k ") == 4
    folder = tmp_path / "out" / "results" / "shapes"
    by_suite = {r.signature: r for r in records(folder)}
    separate = tmp_path / "separate"
    for model, args, tgt in CELLS:
        argv = ["run", "--tasks", "xlr,backretrieval", "--model", model, "--seeds", "2", "--resamples", "0"]
        argv += ["--task-args", f"size=12,n=4,src=en,tgt={tgt}", "--output", str(separate), "--log-samples"]
        assert main(argv + (["--model-args", args] if args else [])) == 0
    capsys.readouterr()
    alone = {r.signature: r for r in records(separate)}
    assert len(by_suite) == 8 and by_suite.keys() == alone.keys()
    for signature, record in by_suite.items():
        other = alone[signature]
        for name in ("task_args", "metrics", "metrics_std", "per_seed", "seeds", "model", "dataset", "run"):
            assert getattr(record, name) == getattr(other, name), (signature, name)
        if record.task == "backretrieval":  # logs_without: no log, and the line names none
            assert record.samples_file is None
            continue
        # the compact log is named as it is, and holds the full log's values of the statistic's fields
        assert record.samples_file.endswith(".jsonl.gz") and (folder / record.samples_file).is_file()
        header = json.loads(gzip.decompress((folder / record.samples_file).read_bytes()).splitlines()[0])
        assert header == {"signature": signature, "compact": ["hit", "rr"]}  # recall@k and MRR
        kept = read_samples(Entry(record, folder / "results.jsonl"), ("hit", "rr"))
        assert kept == read_samples(Entry(other, separate / "results.jsonl"), ("hit", "rr")) and len(kept) == 2 * 4
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith("samples_")) == sorted(
        r.samples_file for r in by_suite.values() if r.samples_file
    )
    # compare finds the compact logs by the names the lines give
    argv = ["compare", "random-encoder", "tfidf-char", "--task", "xlr", "--select", "tgt=de", "--json"]
    assert main([*argv, "--results", str(folder)]) == 0
    ours = json.loads(capsys.readouterr().out)
    assert main([*argv, "--results", str(separate)]) == 0
    assert json.loads(capsys.readouterr().out) == ours


def test_a_run_config_takes_full_or_compact_logs():
    from harness.errors import HarnessError
    from harness.run.config import RunConfig

    assert RunConfig(log_form="compact", log_without=["corr"]).log_without == ("corr",)
    with pytest.raises(HarnessError, match="log_form takes full or compact, got 'gz'"):
        RunConfig(log_form="gz")


def test_a_rerun_skips_what_the_results_hold_and_runs_what_is_missing(tmp_path, capsys, fresh_cache):
    suite = write_suite(tmp_path)
    assert main(["suite", str(suite), "--no-board", "--shard", "1/2"]) == 0  # the tfidf-char half
    folder = tmp_path / "out" / "results" / "shapes"
    assert {r.model["name"] for r in records(folder)} == {"tfidf-char"}
    capsys.readouterr()
    assert main(["suite", str(suite), "--no-board"]) == 0
    _, err = capsys.readouterr()
    assert "suite: 4 cells: 2 run, 2 already in the results" in err
    assert "2 cells already in the results (shapes: tfidf-char(ngram_max=3) size=12,n=4,src=en,tgt=de to " in err
    lines = (folder / "results.jsonl").read_text().splitlines()
    assert len(lines) == 8
    assert main(["suite", str(suite), "--no-board"]) == 0
    assert "suite: 4 cells: 0 run, 4 already in the results" in capsys.readouterr().err
    assert (folder / "results.jsonl").read_text().splitlines() == lines  # nothing appended


def test_shards_partition_the_cells_in_contiguous_blocks(tmp_path, capsys):
    suite = write_suite(tmp_path)
    listed = {}
    for shard in ("0/3", "1/3", "2/3"):
        assert main(["suite", str(suite), "--dry-run", "--shard", shard]) == 0
        out = capsys.readouterr().out
        listed[shard] = [line.split(":")[0] for line in out.splitlines() if line.startswith("cell ")]
    # 4 cells over 3 shards: cell k goes to shard k * 3 // 4
    assert listed == {"0/3": ["cell 1/4", "cell 2/4"], "1/3": ["cell 3/4"], "2/3": ["cell 4/4"]}
    assert main(["suite", str(suite), "--dry-run", "--shard", "3/3"]) == 2
    assert "--shard takes i/N with 0 <= i < N" in capsys.readouterr().err


def test_the_dry_run_lists_the_cells_and_what_the_results_hold(tmp_path, capsys, fresh_cache):
    suite = write_suite(tmp_path)
    assert main(["suite", str(suite), "--dry-run"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) == 5 and lines[0].startswith("cell 1/4: shapes: random-encoder size=12,n=4,src=en,tgt=de -> ")
    assert all(line.endswith("to run (0/2 tasks in the results)") for line in lines[:4])
    assert lines[4].startswith("board: harness leaderboard ") and lines[4].endswith("/out/board")
    assert not (tmp_path / "out").exists()  # nothing run, nothing written
    assert main(["suite", str(suite), "--no-board", "--shard", "0/2"]) == 0
    capsys.readouterr()
    assert main(["suite", str(suite), "--dry-run"]) == 0
    states = [line.rsplit(": ", 1)[1] for line in capsys.readouterr().out.splitlines()[:4]]
    assert states == ["in the results"] * 2 + ["to run (0/2 tasks in the results)"] * 2


def test_prepare_steps_run_while_what_they_create_is_missing_then_the_board(tmp_path, capsys, fresh_cache):
    # a relative path in a variable is against the suite file's folder; the command's words are used as written
    text = (
        SUITE.replace("  out: out", "  out: out\n  commute: commute")
        .replace(
            "groups:",
            "prepare:\n  - creates: ${out}/images\n    command: [commute-stand-in-images, --data-dir, '${commute}', "
            '--output, "${out}/images"]\ngroups:',
        )
        .replace("tgt: [de, fr]", "tgt: de")
    )
    (tmp_path / "commute").mkdir()
    (tmp_path / "commute" / "img.order").write_text("a.jpg\nb.jpg\n")
    suite = write_suite(tmp_path, text)
    assert main(["suite", str(suite)]) == 0
    out, err = capsys.readouterr()
    assert "suite: prepare: harness commute-stand-in-images" in err
    assert sorted(p.name for p in (tmp_path / "out" / "images").iterdir()) == ["a.jpg", "b.jpg"]
    assert (tmp_path / "out" / "board" / "index.html").is_file() and "merged 4 results" in out
    assert main(["suite", str(suite), "--board-only"]) == 0
    _, err = capsys.readouterr()
    assert "prepare" not in err and "cells" not in err  # the board alone


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("tasks: [xlr, backretrieval]", "tasks: [xlr, backretreival]"), "groups[0] (shapes), cell "),
        (("tasks: [xlr, backretrieval]", "tasks: [xlr, backretreival]"), "did you mean 'backretrieval'"),
        (("- random-encoder", "- random-encodr"), "groups[0] (shapes), model 'random-encodr': unknown model"),
        (("options: {seeds: 2", "options: {seeds: 0"), "groups[0] (shapes).options: --seeds must be at least 1"),
        (("options: {", "options: {seed: 1, "), "groups[0].options: unknown key 'seed' (did you mean 'seeds'?)"),
        (("logs: compact", "logs: some"), "groups[0].logs: must be one of compact, full, none, got 'some'"),
        (("results: ${out}/results", "results: ${outt}/results"), "results: unknown variable ${outt}"),
        (("suite: 1", "suite: 2"), "suite: must be 1 (the format's version), got 2"),
        (("    tasks: [xlr, backretrieval]\n", ""), "groups[0].tasks: is required (a non-empty list)"),
        (("groups:", "prepare:\n  - command: [list]\ngroups:"), "prepare[0].creates: is required (a str)"),
    ],
)
def test_a_bad_suite_file_is_one_line_naming_the_file_and_the_key(tmp_path, capsys, change, message):
    suite = write_suite(tmp_path, SUITE.replace(*change))
    assert main(["suite", str(suite)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"harness: error: {suite}: ") and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()  # checked before anything ran


def test_set_overrides_a_variable_and_a_malformed_set_is_refused(tmp_path, capsys, fresh_cache):
    suite = write_suite(tmp_path)
    assert main(["suite", str(suite), "--dry-run", "--set", f"out={tmp_path / 'elsewhere'}"]) == 0
    assert f"{tmp_path / 'elsewhere' / 'board'}" in capsys.readouterr().out
    assert main(["suite", str(suite), "--dry-run", "--set", "out"]) == 2
    assert "--set takes NAME=VALUE, got 'out'" in capsys.readouterr().err


def test_the_grid_line_estimates_from_the_cells_that_ran(tmp_path):
    import io

    from harness.suite.run import GridProgress
    from harness.suite.spec import read_suite

    cell = read_suite(write_suite(tmp_path)).cells()[0]
    stream = io.StringIO()
    progress = GridProgress(4, stream)
    progress.cell_done(cell, 0.2, ran=False)  # skipped cells cost next to nothing: no estimate from them
    progress.cell_done(cell, 30.0, ran=True)  # 30 s per cell that ran, two left; the skipped one said with it
    progress.cell_done(cell, 90.0, ran=True)  # (30 + 90) / 2 = 60 s per cell, one left
    progress.cell_done(cell, 1.0, ran=True)
    lines = [line.split(" elapsed, ")[1] for line in stream.getvalue().splitlines()]
    label = "shapes: random-encoder size=12,n=4,src=en,tgt=de"
    assert lines == [
        f"about 1:00 left; {label}: already in the results; {label}: 0:30",
        f"about 1:00 left; {label}: 1:30",
        f"done; {label}: 0:01",
    ]
    assert stream.getvalue().splitlines()[1].startswith("suite: 3/4 cells (1 already in the results), ")


def test_a_run_of_skipped_cells_is_one_line(monkeypatch):
    """A no-op rerun of a large grid says one line, not one per cell."""
    import io

    import harness.suite.run as run

    monkeypatch.setattr(run, "cell_label", str)
    stream = io.StringIO()
    progress = run.GridProgress(3, stream)
    for cell in ("cell0", "cell1", "cell2"):
        progress.cell_done(cell, 0.1, ran=False)
    (line,) = stream.getvalue().splitlines()
    assert line.startswith("suite: 3/3 cells (3 already in the results), ")
    assert line.endswith("done; 3 cells already in the results (cell0 to cell2)")
