"""Issue 38.3 and 38.4: a generator never deletes what it did not write, and a model card never costs a result.

``harness xling-shapes-commute --output DIR`` writes each ``en-<l>`` folder as the leaderboard writes its own (the
manifest rule of ``harness.leaderboard.output``): a real CoMMuTE copy, a symlinked ``en-de``, a file as output or a
folder that cannot be written is one line and exit 2, with nothing touched. A model folder whose README front matter
holds ``.nan``, a date or ``no`` is encoded, scored and written, its card kept as written text.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

from faults.test_cache_unwritable import _remount, disk  # noqa: F401  (the fixture)
from tiny_models import tiny_bert

from harness.adapters.card import CARD_FIELDS, card_of, folder_card, json_safe
from harness.adapters.model import ModelIdentity
from harness.cli import main
from harness.results.records import read_records

MANIFEST = ".xling-shapes-commute-manifest.json"


def commute_copy(root: Path) -> dict[Path, bytes]:
    """A folder laid out like the real CoMMuTE (en-de, en-fr), no manifest; its files and their bytes."""
    files = {}
    for lang in ("de", "fr"):
        folder = root / f"en-{lang}"
        (folder / "images").mkdir(parents=True)
        for name, text in (("src.en", "The bank.\n"), (f"correct.{lang}", "Die Bank.\n"), ("img.order", "1.jpg\n")):
            (folder / name).write_text(text)
        (folder / "images" / "1.jpg").write_bytes(b"\xff\xd8 a real photo")
    for path in root.rglob("*"):
        if path.is_file():
            files[path] = path.read_bytes()
    return files


def generate(capsys, output: Path, *extra: str) -> tuple[int, str]:
    code = main(["xling-shapes-commute", "--output", str(output), "--tuples", "2", "--candidates", "1", *extra])
    return code, capsys.readouterr().err


def test_a_real_commute_folder_is_refused_and_left_as_it_was(tmp_path, capsys):
    files = commute_copy(tmp_path / "commute")
    code, err = generate(capsys, tmp_path / "commute", "--langs", "es,de")
    assert code == 2 and err.count("\n") == 1
    assert f"the folder '{tmp_path / 'commute' / 'en-de'}' is not empty and no earlier " in err
    assert f"`harness xling-shapes-commute` run marked it (no {MANIFEST})" in err
    assert {p: p.read_bytes() for p in (tmp_path / "commute").rglob("*") if p.is_file()} == files
    assert not (tmp_path / "commute" / "en-es").exists()  # every folder is checked before any is written


def test_a_rerun_replaces_only_what_the_earlier_run_wrote(tmp_path, capsys):
    out = tmp_path / "set"
    assert generate(capsys, out, "--langs", "de", "--tuples", "3")[0] == 0
    folder = out / "en-de"
    manifest = json.loads((folder / MANIFEST).read_text())
    assert manifest["generator"] == "harness xling-shapes-commute" and "images/3-a.png" in manifest["files"]
    assert "README.txt" in manifest["files"] and "--langs de --tuples 3" in (folder / "README.txt").read_text()
    (folder / "notes.md").write_text("mine")  # the user's own file in the folder
    first = (folder / "images" / "1-a.png").read_bytes()
    assert generate(capsys, out, "--langs", "de")[0] == 0  # two tuples now
    assert (folder / "notes.md").read_text() == "mine" and not (folder / "images" / "3-a.png").exists()
    assert (folder / "images" / "1-a.png").read_bytes() == first and len(
        (folder / "src.en").read_text().split("\n")
    ) == 5
    assert sorted(p.name for p in out.iterdir()) == ["en-de"]  # no temporary left beside it


def test_a_symlinked_language_folder_is_refused(tmp_path, capsys):
    files = commute_copy(tmp_path / "real")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "en-de").symlink_to(tmp_path / "real" / "en-de")
    code, err = generate(capsys, tmp_path / "out", "--langs", "de")
    assert code == 2 and err == (
        f"harness: error: {tmp_path / 'out' / 'en-de'} is a symbolic link; a contrastive set never writes or "
        "deletes through one (replace it with a plain file or folder, or choose another output folder)\n"
    )
    assert {p: p.read_bytes() for p in (tmp_path / "real").rglob("*") if p.is_file()} == files


def test_a_file_as_output_is_refused(tmp_path, capsys):
    (tmp_path / "file").write_text("not a folder")
    code, err = generate(capsys, tmp_path / "file", "--langs", "de")
    assert (code, err) == (2, f"harness: error: the output '{tmp_path / 'file'}' is a file, not a folder\n")
    code, err = generate(capsys, tmp_path / "file" / "below", "--langs", "de")
    assert code == 2 and err.startswith(f"harness: error: cannot write the contrastive set to '{tmp_path}/file/below/")


def test_a_read_only_folder_is_one_line(disk, capsys):  # noqa: F811  (the fixture)
    _remount(disk, "ro")
    code, err = generate(capsys, disk / "set", "--langs", "de")
    assert (code, err) == (
        2,
        f"harness: error: cannot write the contrastive set to '{disk / 'set' / 'en-de'}': Read-only file system\n",
    )


FRONT = """---
language:
- en
- .nan
- no
license: 2024-01-01
date: 2024-01-01
tags: [.inf, ~]
---
# a model card
"""


def test_a_card_keeps_what_its_readme_says_as_text(tmp_path):
    (tmp_path / "README.md").write_text(FRONT)
    card = folder_card(tmp_path)
    assert card["languages"] == ["en", ".nan", "no"] and card["license"] == "2024-01-01"
    nested = {"a": [1, 2**70, float("nan"), datetime.date(2024, 1, 2), "x\ud800\x00y", (True, None)]}
    assert json_safe(nested) == {"a": [1, None, None, "2024-01-02", "x?y", [True, None]]}
    json.dumps(json_safe(nested), allow_nan=False).encode("utf-8")  # what the results write does


def test_an_adapter_card_with_values_json_cannot_hold_is_made_safe():
    class Odd:
        args: dict = {}
        card_facts: dict = {}

        def card(self):
            return {"parameters": float("inf"), "languages": ["en", datetime.date(2020, 1, 1)], "license": "mit"}

    found = card_of(Odd(), ModelIdentity("m", "a", source=None, revision=None))
    assert found == dict.fromkeys(CARD_FIELDS) | {"languages": ["en", "2020-01-01"], "license": "mit"}


def test_a_model_folder_with_a_hostile_card_writes_its_result(tmp_path, capsys):
    folder = tiny_bert(tmp_path / "model", layers=1, hidden=16)
    (folder / "README.md").write_text(FRONT)
    command = ["run", "--tasks", "xlr", "--seeds", "1", "--task-args", "src=en,tgt=fr,n=20", "--model", str(folder)]
    assert main([*command, "--output", str(tmp_path / "out")]) == 0, capsys.readouterr().err
    (record,), problems = read_records(tmp_path / "out" / "results.jsonl")
    assert problems == [] and record.model["card"]["languages"] == ["en", ".nan", "no"]
    assert record.model["card"]["license"] == "2024-01-01" and 0 <= record.metrics["recall@k"] <= 1
