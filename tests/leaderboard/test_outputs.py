"""README, CSV and JSON content; byte-identical regeneration; stale plots; the command line."""

from __future__ import annotations

import csv
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

from leaderboard.builders import read_json, record, write_results

from harness.cli import main

COMMUTE = {"lang": "fr", "ties": "wrong", "temperature": 1.0}


def mixed_results(folder):
    """Two machines' results: retrieval with seeds for three models, CoMMuTE, one superseded line."""
    write_results(
        folder / "machine1",
        [
            record("xlr", "labse", [0.9, 0.8, 0.85]),
            record("backretrieval", "labse", [0.7, 0.6, 0.65]),
            record("xlr", "mbert", [0.5, 0.4, 0.45]),
            record("backretrieval", "mbert", [0.4, 0.5, 0.3]),
            record("commute_tc", "vgamt", 0.61, args=COMMUTE, started="2026-01-01T00:00:00+00:00"),
        ],
    )
    write_results(
        folder / "machine2",
        [
            record("xlr", "xlmr", [0.6, 0.7, 0.65]),
            record("backretrieval", "xlmr", [0.5, 0.55, 0.6]),
            record("commute_tc", "vgamt", 0.63, args=COMMUTE, started="2026-02-01T00:00:00+00:00"),
            record("commute_ic", "vgamt", 0.55, args=COMMUTE),
        ],
    )


def test_readme_has_a_table_per_family_with_signatures_and_plot_links(tmp_path, capsys):
    mixed_results(tmp_path / "results")
    assert main(["leaderboard", str(tmp_path / "results"), "-o", str(tmp_path / "board")]) == 0
    assert "merged 9 results (1 superseded) of 4 models into 4 columns; 0 bad lines skipped" in capsys.readouterr().out
    text = (tmp_path / "board" / "README.md").read_text(encoding="utf-8")
    assert text.index("## Image-pivoted retrieval") < text.index("## CoMMuTE")  # three models compared before one
    assert "### ikea test en→de" in text and "### ikea test fr" in text  # one table per data set and direction
    assert "| model | recall@k | recall@k |" not in text  # repeated displays are told apart by their task
    assert "| model | xlr recall@k | backretrieval recall@k |" in text
    assert "| labse | 0.8500 ± 0.0500 | 0.6500 ± 0.0500 |" in text  # mean ± sample std over three seeds
    assert "| vgamt | 0.6300 | 0.5500 | 0.5900 |" in text  # no ± for one seed; the newer TC; the average
    assert "- xlr recall@k: `xlr|dataset:ikea|src:en|tgt:de|items:100|seeds:3|data:ikea@data1|v:1`" in text
    assert "(plots/bkr_vs_xlr_ikea_en-de.png)" in text and "(plots/bkr_boxplots.png)" in text
    assert "(plots/commute_bars_ikea_fr.png)" in text and "commute_temperature" not in text  # no sweep: one temperature
    assert f"harness leaderboard {tmp_path / 'results'} -o {tmp_path / 'board'}" in text
    for name in ("bkr_vs_xlr_ikea_en-de.png", "bkr_boxplots.png", "commute_bars_ikea_fr.png"):
        assert (tmp_path / "board" / "plots" / name).read_bytes().startswith(b"\x89PNG")


def test_csv_holds_current_results_and_json_all_with_superseded_flags(tmp_path):
    mixed_results(tmp_path / "results")
    assert main(["leaderboard", str(tmp_path / "results"), "-o", str(tmp_path / "board"), "--no-plots"]) == 0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "board" / "leaderboard.csv").read_text(encoding="utf-8"))))
    assert list(rows[0]) == [
        "model",
        "task",
        "metric",
        "value",
        "std",
        "low",
        "high",
        "n",
        "seeds",
        "signature",
        "task_signature",
        "harness_version",
        "date",
    ]
    tc = [r for r in rows if r["task"] == "commute_tc"]
    assert [(r["model"], float(r["value"]), r["seeds"], r["n"], r["date"]) for r in tc] == [
        ("vgamt", 0.63, "1", "100", "2026-02-01T00:00:00+00:00")
    ]
    labse = next(r for r in rows if r["model"] == "labse" and r["task"] == "xlr")
    assert abs(float(labse["value"]) - 0.85) < 1e-12 and abs(float(labse["std"]) - 0.05) < 1e-12
    board = read_json(tmp_path / "board" / "leaderboard.json")
    assert sorted(board["models"]) == ["labse", "mbert", "vgamt", "xlmr"]
    assert board["models"]["vgamt"]["source"] == "vgamt" and board["models"]["vgamt"]["revision"] == "rev1"
    data = board["results"]
    assert not any("model_identity" in r for r in data)  # every line of a model has the identity of its entry
    tc_json = [(r["value"], r["superseded"]) for r in data if r["task"] == "commute_tc"]
    assert tc_json == [(0.63, False), (0.61, True)]
    assert next(r for r in data if r["model"] == "mbert" and r["task"] == "backretrieval")["per_seed"] == [
        0.4,
        0.5,
        0.3,
    ]


def test_a_line_with_another_identity_of_the_same_model_carries_its_own(tmp_path):
    old = record("commute_tc", "vgamt", 0.61, args=COMMUTE, started="2026-01-01T00:00:00+00:00")
    new = record("commute_tc", "vgamt", 0.63, args=COMMUTE, started="2026-02-01T00:00:00+00:00")
    new.model["card"] = {"parameters": 12}  # outside the identity: still the same model
    write_results(tmp_path / "r", [old, new])
    assert main(["leaderboard", str(tmp_path / "r"), "-o", str(tmp_path / "b"), "--no-plots"]) == 0
    text = (tmp_path / "b" / "leaderboard.json").read_text(encoding="utf-8")
    board = json.loads(text)
    assert board["models"] == {"vgamt": new.model}  # the first row's (the newest line's)
    assert [(r["value"], r.get("model_identity")) for r in board["results"]] == [(0.63, None), (0.61, old.model)]
    lines = text.splitlines()
    assert lines[-4:-2] == ['"results": [', lines[-3]] and lines[-1] == "]}"
    assert [json.loads(line.rstrip(",")) for line in lines[-3:-1]] == board["results"]  # a row per line


def test_each_json_row_has_the_shared_keys_then_its_metrics_keys_each_group_sorted_and_nested_objects_too(tmp_path):
    old = record("commute_tc", "vgamt", 0.61, args=COMMUTE, started="2026-01-01T00:00:00+00:00")
    old.harness["version"] = {"z": 1, "a": [{"y": 2, "b": 3}]}  # a version this harness never writes, still sorted
    new = record("commute_tc", "vgamt", 0.63, args=COMMUTE, started="2026-02-01T00:00:00+00:00", extra_metrics={"a": 1})
    new.model["card"] = {"zeta": 1, "alpha": 2}
    write_results(tmp_path / "r", [old, new])
    assert main(["leaderboard", str(tmp_path / "r"), "-o", str(tmp_path / "b"), "--no-plots"]) == 0
    lines = (tmp_path / "b" / "leaderboard.json").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line.rstrip(","), object_pairs_hook=lambda pairs: pairs) for line in lines[-4:-1]]
    own = ["high", "low", "main", "metric", "per_seed", "std", "undefined", "value"]
    shared = ["dataset", "date", "family", "harness_version", "model", "n", "pair", "role", "seed_list", "seeds"]
    shared += ["signature", "superseded", "task", "task_signature", "warnings"]
    assert [[key for key, _ in row] for row in rows] == [
        shared + own,
        shared + own,
        [*shared[:5], "model_identity", *shared[5:], *own],
    ]
    assert [(dict(row)["metric"], dict(row)["value"]) for row in rows] == [("tc", 0.63), ("a", 1), ("tc", 0.61)]
    version = dict(rows[2])["harness_version"]
    assert version == [("a", [[("b", 3), ("y", 2)]]), ("z", 1)]
    identity = dict(dict(rows[2])["model_identity"])
    assert list(identity) == sorted(identity) and "card" not in identity
    assert lines[1:3] == ['  "vgamt": {', '    "adapter": "hf-text",'] and '      "alpha": 2,' in lines


def test_json_rows_name_each_lines_own_data_set_and_direction(tmp_path):
    lines = [
        record("xlr", "labse", 0.5),
        record("xlr", "mbert", 0.4, args={"src": "en", "tgt": "fr", "dataset": "ikea"}),
        record("xlr", "xlmr", 0.3, args={"src": 0.0, "tgt": -0.0, "dataset": "ikea"}),  # numbers: keyed as themselves
        record("xlr", "e5", 0.2, args={"src": -0.0, "tgt": 0.0, "dataset": "ikea"}),
    ]
    lines[1].dataset["source"] = "/data/other/en-fr"
    write_results(tmp_path / "r", lines)
    assert main(["leaderboard", str(tmp_path / "r"), "-o", str(tmp_path / "b"), "--no-plots"]) == 0
    rows = read_json(tmp_path / "b" / "leaderboard.json")["results"]
    assert sorted((r["model"], r["dataset"], r["pair"]) for r in rows) == [
        ("e5", "ikea test", "-0.0→0.0"),
        ("labse", "ikea test", "en→de"),
        ("mbert", "other test", "en→fr"),
        ("xlmr", "ikea test", "0.0→-0.0"),
    ]


def test_what_orjson_cannot_write_is_written_exactly(tmp_path):
    line = record("xlr", "big", 0.5, model_args={"seed": 123456789012345678901234567890})
    line.model["card"] = {"nested": json.loads("[" * 300 + "]" * 300)}
    write_results(tmp_path / "r", [line])
    assert main(["leaderboard", str(tmp_path / "r"), "-o", str(tmp_path / "b"), "--no-plots"]) == 0
    board = read_json(tmp_path / "b" / "leaderboard.json")
    assert (
        board["models"]["big"] == line.model
        and board["models"]["big"]["args"]["seed"] == 123456789012345678901234567890
    )


def test_model_names_cannot_break_the_markdown_table(tmp_path):
    write_results(tmp_path / "r", [record("xlr", "a|b*<i>", 0.5), record("backretrieval", "plain", 0.4)])
    assert main(["leaderboard", str(tmp_path / "r"), "-o", str(tmp_path / "b"), "--no-plots"]) == 0
    lines = (tmp_path / "b" / "README.md").read_text(encoding="utf-8").splitlines()
    row = next(line for line in lines if line.startswith("| a"))
    assert row == "| a\\|b\\*&lt;i&gt; | 0.5000 | — |"
    assert row.replace("\\|", "").count("|") == lines[lines.index(row) - 2].count("|")  # as many cells as the header


def _snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_regeneration_is_byte_identical_and_removes_stale_plots(tmp_path):
    mixed_results(tmp_path / "results")
    board = tmp_path / "board"
    command = ["leaderboard", str(tmp_path / "results"), "-o", str(board)]
    assert main(command) == 0
    first = _snapshot(board)
    shutil.rmtree(board)
    assert main(command) == 0
    assert (
        _snapshot(board) == first and len(first) == 15
    )  # 4 files, 2 family and 4 model pages, 3 plots, index, manifest
    assert main(command) == 0  # over the existing folder
    assert _snapshot(board) == first
    png = first[Path("plots/bkr_boxplots.png")]
    assert b"Software" not in png and b"matplotlib" not in png.lower()  # no version stamp in the file
    write_results(tmp_path / "commute_only", [record("commute_tc", "vgamt", 0.6, args=COMMUTE)])
    assert main(["leaderboard", str(tmp_path / "commute_only"), "-o", str(board)]) == 0
    assert sorted(p.name for p in (board / "plots").iterdir()) == ["commute_bars_ikea_fr.png", "index.json"]


def test_user_errors_are_one_line_with_exit_code_2(tmp_path, capsys):
    assert main(["leaderboard", str(tmp_path / "nowhere"), "-o", str(tmp_path / "b")]) == 2
    assert "results file or folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["leaderboard", str(tmp_path / "empty"), "-o", str(tmp_path / "b")]) == 2
    assert "no results.jsonl under the folder" in capsys.readouterr().err
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "results.jsonl").write_text("{oops\n")
    assert main(["leaderboard", str(tmp_path / "bad"), "-o", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "no valid results" in err and "1 lines skipped" in err


def test_harness_list_imports_neither_the_leaderboard_nor_matplotlib():
    code = (
        "import sys; from harness.cli import main; main(['list']); "
        "print(sorted(m for m in sys.modules if m.startswith(('matplotlib', 'numpy', 'harness.leaderboard.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "['harness.leaderboard.commands']"


def test_a_folder_that_is_not_a_leaderboard_is_refused_untouched(tmp_path, capsys):
    write_results(tmp_path / "r", [record("xlr", "labse", 0.5)])
    user = tmp_path / "mine"
    user.mkdir()
    (user / "README.md").write_text("my notes\n")
    (user / "figure.png").write_bytes(b"\x89PNG mine")
    assert main(["leaderboard", str(tmp_path / "r"), "-o", str(user)]) == 2
    assert "is not empty and no earlier `harness leaderboard` run marked it" in capsys.readouterr().err
    assert sorted(p.name for p in user.iterdir()) == ["README.md", "figure.png"]
    assert (user / "README.md").read_text() == "my notes\n"


def test_only_files_listed_in_the_manifest_are_replaced_or_deleted(tmp_path, capsys):
    mixed_results(tmp_path / "results")
    board = tmp_path / "board"
    assert main(["leaderboard", str(tmp_path / "results"), "-o", str(board)]) == 0
    manifest = read_json(board / ".leaderboard-manifest.json")
    assert manifest["files"] == sorted(
        [
            "README.md",
            "families/commute.html",
            "families/retrieval.html",
            "index.html",
            "leaderboard.csv",
            "leaderboard.json",
            *(f"models/{name}.html" for name in ("labse", "mbert", "vgamt", "xlmr")),
            "plots/bkr_boxplots.png",
            "plots/bkr_vs_xlr_ikea_en-de.png",
            "plots/commute_bars_ikea_fr.png",
            "plots/index.json",
        ]
    )
    (board / "plots" / "mine.png").write_bytes(b"mine")  # the user's, beside the generated ones
    (board / "notes.txt").write_text("mine")
    write_results(tmp_path / "commute_only", [record("commute_tc", "vgamt", 0.6, args=COMMUTE)])
    assert main(["leaderboard", str(tmp_path / "commute_only"), "-o", str(board)]) == 0
    assert sorted(p.name for p in (board / "plots").iterdir()) == ["commute_bars_ikea_fr.png", "index.json", "mine.png"]
    assert (board / "notes.txt").read_text() == "mine"
    assert "plots/bkr_boxplots.png" not in read_json(board / ".leaderboard-manifest.json")["files"]
    (board / "plots" / "commute_bars_ikea_fr.png").unlink()
    (board / "plots" / "commute_bars_ikea_fr.png").write_bytes(
        b"mine too"
    )  # same name as a listed file: it is replaced
    capsys.readouterr()
    assert main(["leaderboard", str(tmp_path / "commute_only"), "-o", str(board)]) == 0
    assert (board / "plots" / "commute_bars_ikea_fr.png").read_bytes().startswith(b"\x89PNG")


def test_a_generated_name_that_the_manifest_does_not_list_is_not_overwritten(tmp_path, capsys):
    write_results(tmp_path / "r", [record("xlr", "labse", 0.5)])
    board = tmp_path / "board"
    assert main(["leaderboard", str(tmp_path / "r"), "-o", str(board), "--no-plots"]) == 0
    (board / "plots").mkdir()
    (board / "plots" / "bkr_boxplots.png").write_bytes(b"mine")
    write_results(tmp_path / "r", [record("backretrieval", "labse", 0.4)])
    assert main(["leaderboard", str(tmp_path / "r"), "-o", str(board)]) == 2
    assert "bkr_boxplots.png exists and was not written by an earlier leaderboard run" in capsys.readouterr().err
    assert (board / "plots" / "bkr_boxplots.png").read_bytes() == b"mine"


def test_a_manifest_that_points_outside_the_folder_is_refused(tmp_path, capsys):
    write_results(tmp_path / "r", [record("xlr", "labse", 0.5)])
    board = tmp_path / "board"
    board.mkdir()
    (tmp_path / "victim.txt").write_text("keep")
    (board / ".leaderboard-manifest.json").write_text(
        '{"generator": "harness leaderboard", "files": ["../victim.txt"]}'
    )
    assert main(["leaderboard", str(tmp_path / "r"), "-o", str(board)]) == 2
    assert "outside the folder" in capsys.readouterr().err and (tmp_path / "victim.txt").read_text() == "keep"


def test_text_that_a_spreadsheet_would_run_is_quoted_in_the_csv_and_numbers_are_not(tmp_path):
    names = ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "plain"]
    write_results(tmp_path / "r", [record("corr", name, -0.25) for name in names])
    assert main(["leaderboard", str(tmp_path / "r"), "-o", str(tmp_path / "b"), "--no-plots"]) == 0
    rows = list(csv.DictReader(io.StringIO((tmp_path / "b" / "leaderboard.csv").read_text(encoding="utf-8"))))
    assert sorted(r["model"] for r in rows) == sorted(
        ['\'=HYPERLINK("http://x")', "'+1+1", "'-2+3", "'@SUM(A1)", "plain"]
    )
    assert {r["value"] for r in rows} == {"-0.25"}  # a negative number stays a number
