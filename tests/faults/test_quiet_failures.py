"""Issue 14, point 7: failures that used to pass silently are now said, once and quickly."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from faults.conftest import A, B, results_lines, run_cli
from fixtures.plugins.fake import CountingEncoder, fake_data

import harness.adapters.model
import harness.plugins.registry
from harness.errors import HarnessError
from harness.run.data import load_hf_dataset, read_lines


def _fake_run(data_dir: str, output: Path, *extra: str) -> list[str]:
    return [
        "run",
        "--tasks",
        "mean_similarity",
        "--model",
        "counting-encoder",
        "--data-dir",
        data_dir,
        "--seed",
        "0",
        "--output",
        str(output),
        *extra,
    ]


def test_resume_names_the_lines_it_cannot_read(data_dir, tmp_path, capsys):
    output = tmp_path / "out"
    assert run_cli(capsys, *_fake_run(data_dir, output))[0] == 0
    with open(output / "results.jsonl", "a") as handle:
        handle.write('{"task": "mean_similarity", "metrics": \n')  # a damaged line, e.g. edited by hand
        handle.write('{"task": "x"}\n')  # valid JSON, not a results line
    code, _, err = run_cli(capsys, *_fake_run(data_dir, output, "--resume"))
    assert code == 0 and "skipped mean_similarity: already in the results" in err  # the good line still counts
    warnings = [line for line in err.splitlines() if line.startswith("harness: warning:")]
    assert warnings == [
        f"harness: warning: {output / 'results.jsonl'}, line 2: not valid JSON: Expecting value: line 2 column 1 (char 40); "
        "--resume cannot count that line, so its task runs again",
        f"harness: warning: {output / 'results.jsonl'}, line 3: does not match the results schema: missing field 'task_version'; "
        "--resume cannot count that line, so its task runs again",
    ]
    assert len(results_lines_raw(output)) == 3  # nothing rewritten


def results_lines_raw(output: Path) -> list[str]:
    return (output / "results.jsonl").read_text().splitlines()


def test_a_byte_order_mark_is_not_part_of_the_first_text(tmp_path, capsys):
    plain = fake_data(tmp_path / "plain", A, B)
    marked = fake_data(tmp_path / "marked", A, B)
    for name in ("a.txt", "b.txt"):
        (marked / name).write_bytes(b"\xef\xbb\xbf" + (marked / name).read_bytes())
    assert read_lines(marked / "a.txt") == A
    assert run_cli(capsys, *_fake_run(str(plain), tmp_path / "out"))[0] == 0
    CountingEncoder.calls.clear()
    assert run_cli(capsys, *_fake_run(str(marked), tmp_path / "out"))[0] == 0
    assert CountingEncoder.calls == []  # the same texts: every vector came from the cache
    first, second = results_lines(tmp_path / "out")
    assert first["metrics"] == second["metrics"]


@pytest.fixture
def unreachable_hub(monkeypatch) -> str:
    """The Hub endpoint points at a local port nothing listens on, and HF_HUB_OFFLINE is not set."""
    import huggingface_hub.constants as constants

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again when the block ends: connections are refused at once
    endpoint = f"http://127.0.0.1:{port}"
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    harness.adapters.model.hub_unreachable.cache_clear()
    yield endpoint
    harness.adapters.model.hub_unreachable.cache_clear()


def test_an_unreachable_hub_is_one_clear_error_for_a_model(data_dir, tmp_path, capsys, monkeypatch, unreachable_hub):
    monkeypatch.setattr(
        harness.plugins.registry, "_REGISTRY", None
    )  # the installed plugins: hf-text-encoder serves a Hub id
    output = tmp_path / "out"
    code, out, err = run_cli(
        capsys,
        "run",
        "--tasks",
        "xlr",
        "--model",
        "some-org/some-model",
        "--data-dir",
        data_dir,
        "--output",
        str(output),
    )
    assert code == 2 and out == ""
    assert err == (
        f"harness: error: model 'some-org/some-model': the Hugging Face Hub ({unreachable_hub}) is unreachable "
        "(ConnectionRefusedError: Connection refused); set HF_HUB_OFFLINE=1 to use models already in the local "
        "Hub cache, or give a local folder as --model\n"
    )


def test_an_unreachable_hub_is_one_clear_error_for_a_dataset(unreachable_hub):
    with pytest.raises(
        HarnessError, match=r"dataset 'some-org/some-data': the Hugging Face Hub .* is unreachable .*--data-dir"
    ):
        load_hf_dataset("some-org/some-data", "test")


def test_the_hub_is_asked_once_per_process(unreachable_hub, monkeypatch):
    attempts = []
    real = socket.create_connection
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: attempts.append(a) or real(*a, **k))
    for _ in range(3):
        with pytest.raises(HarnessError, match="unreachable"):
            harness.adapters.model.hub_revision("some-org/some-model")
    assert len(attempts) == 1
