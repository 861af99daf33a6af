"""`harness meta` reports a corrupt results line with its number and reads the rest."""

from __future__ import annotations

from harness_tasks.retrieval.analysis.meta import load_records


def test_bad_line_is_a_warning(tmp_path, capsys):
    path = tmp_path / "results.jsonl"
    path.write_text("{not json\n")
    assert load_records([str(path)]) == []
    assert f"{path}, line 1: not valid JSON" in capsys.readouterr().err
