"""Issue 23, also: a UTF-8 byte-order mark at the start of any line (files joined with cat keep theirs) is stripped."""

from __future__ import annotations

from faults.conftest import A, B, results_lines, run_cli
from fixtures.plugins.fake import CountingEncoder, fake_data

from harness.run.data import read_lines

BOM = b"\xef\xbb\xbf"


def test_a_byte_order_mark_at_the_start_of_any_line_is_not_text(tmp_path):
    path = tmp_path / "joined.txt"
    path.write_bytes(BOM + b"one\r\n" + BOM + b"two\n" + b"th" + BOM + b"ree\n")
    assert read_lines(path) == ["one", "two", "th\ufeffree"]  # inside a line it is text, as written


def test_joined_files_with_marks_give_the_same_numbers(tmp_path, capsys):
    plain = fake_data(tmp_path / "plain", A, B)
    joined = fake_data(tmp_path / "joined", A, B)
    for name in ("a.txt", "b.txt"):
        lines = (joined / name).read_bytes().splitlines(keepends=True)
        (joined / name).write_bytes(b"".join(BOM + line for line in lines))  # every line starts with a mark
    args = ["run", "--tasks", "mean_similarity", "--model", "counting-encoder", "--seed", "0"]
    assert run_cli(capsys, *args, "--data-dir", str(plain), "--output", str(tmp_path / "out"))[0] == 0
    CountingEncoder.calls.clear()
    assert run_cli(capsys, *args, "--data-dir", str(joined), "--output", str(tmp_path / "out"))[0] == 0
    assert CountingEncoder.calls == []  # the same texts: every vector came from the cache
    first, second = results_lines(tmp_path / "out")
    assert first["metrics"] == second["metrics"]
