"""`harness meta` reports a corrupt results line with its number and reads the rest."""

from __future__ import annotations

import os
import re
import signal

import pytest

from harness.errors import HarnessError
from harness_tasks.retrieval.analysis.meta import load_records


def test_bad_line_is_a_warning(tmp_path, capsys):
    path = tmp_path / "results.jsonl"
    path.write_text("{not json\n")
    assert load_records([str(path)]) == []
    assert f"{path}, line 1: not valid JSON" in capsys.readouterr().err


def test_a_fifo_is_refused_as_not_a_regular_file_and_an_absent_file_is_not_found(tmp_path):
    """A FIFO exists: it is named as what it is (and never waited on); only a missing path is 'not found'."""
    fifo = tmp_path / "results.jsonl"
    os.mkfifo(fifo)
    signal.alarm(20)  # a blocking open would hang: fail instead
    try:
        for given in (tmp_path, fifo):
            with pytest.raises(HarnessError, match=re.escape(f"{fifo} is not a regular file")):
                load_records([str(given)])
    finally:
        signal.alarm(0)
    with pytest.raises(HarnessError, match=r"absent\.jsonl' not found"):
        load_records([str(tmp_path / "absent.jsonl")])
