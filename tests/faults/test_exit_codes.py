"""Issue 14, point 5: every bad input below exits 2 with one line naming the problem, and loses nothing."""

from __future__ import annotations

import re
from importlib.metadata import EntryPoint
from pathlib import Path

import numpy as np
import pytest
from faults.conftest import run_cli

import harness.plugins.registry
from harness.errors import DataError, HarnessError
from harness.plugins.registry import Registration, build_registry


@pytest.fixture
def finished(data_dir, tmp_path, capsys) -> Path:
    """An output folder holding one finished results line."""
    output = tmp_path / "out"
    code, _, _ = run_cli(
        capsys,
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
    )
    assert code == 0
    return output


def _fails_with(capsys, output: Path, message: str, *argv: str) -> None:
    """``harness ARGV`` exits 2 with exactly one line, containing ``message``, and the results are as they were."""
    before = (output / "results.jsonl").read_bytes()
    code, out, err = run_cli(capsys, *argv, "--output", str(output))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("harness: error: ") and message in err, err
    assert (output / "results.jsonl").read_bytes() == before


def _run_fake(data_dir: str, *extra: str) -> list[str]:
    return ["run", "--tasks", "mean_similarity", "--model", "counting-encoder", "--data-dir", data_dir, *extra]


def test_device_cuda_without_cuda(finished, data_dir, capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    _fails_with(capsys, finished, "--device cuda: this PyTorch", *_run_fake(data_dir, "--device", "cuda"))


def test_device_tpu_is_refused(finished, data_dir, capsys):
    _fails_with(
        capsys, finished, "--device takes cpu, cuda, cuda:N or auto, got 'tpu'", *_run_fake(data_dir, "--device", "tpu")
    )


def test_negative_seed(finished, data_dir, capsys):
    _fails_with(capsys, finished, "--seed must be 0 or more, got -1", *_run_fake(data_dir, "--seed", "-1"))


def test_negative_model_dimension(finished, data_dir, capsys, monkeypatch):
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", None)  # the installed plugins: the real random-encoder
    _fails_with(
        capsys,
        finished,
        "model 'random-encoder': argument dim=-5 must be at least 1",
        "run",
        "--tasks",
        "xlr",
        "--model",
        "random-encoder",
        "--model-args",
        "dim=-5",
        "--data-dir",
        data_dir,
    )


def test_weights_folder_with_only_a_malicious_pickle(finished, data_dir, tmp_path, capsys, monkeypatch):
    import torch
    from tiny_models import tiny_bert

    folder = tiny_bert(tmp_path / "model", layers=1)
    (folder / "model.safetensors").unlink()
    marker = tmp_path / "code-ran"

    class Payload:
        def __reduce__(self):
            import os

            return os.system, (f"touch {marker}",)

    torch.save({"embeddings.word_embeddings.weight": Payload()}, folder / "pytorch_model.bin")
    installed = list(harness.plugins.registry.metadata.entry_points(group="harness"))
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", build_registry([*installed, *_entry_points("fake")]))
    _fails_with(
        capsys,
        finished,
        "refused to load a pickled weights file (Trying to load unsupported GLOBAL",
        "run",
        "--tasks",
        "mean_similarity",
        "--model",
        str(folder),
        "--model-args",
        "adapter=hf-text-encoder",
        "--data-dir",
        data_dir,
        "--seed",
        "0",
    )
    assert not marker.exists()


def _entry_points(*names: str) -> list[EntryPoint]:
    modules = {
        "fake": "fixtures.plugins.fake",
        "exiting": "faults.exiting_plugin",
        "exiting-hook": "faults.exiting_hook_plugin",
        "interrupting": "faults.interrupting_plugin",
    }
    return [EntryPoint(name, modules[name], "harness") for name in names]


def test_a_plugin_that_calls_sys_exit_is_a_broken_plugin(capsys, monkeypatch):
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", None)
    monkeypatch.setattr(
        harness.plugins.registry.metadata,
        "entry_points",
        lambda group: _entry_points("fake", "exiting", "exiting-hook"),
    )
    code, out, err = run_cli(capsys, "list", "tasks")
    assert code == 0 and out.splitlines()[0].startswith("mean_similarity")  # everything else keeps working
    assert "plugin 'exiting' failed to load: SystemExit: this plugin refuses to load" in err
    assert "plugin 'exiting-hook' failed in register_models: SystemExit: 4" in err


def test_ctrl_c_while_loading_a_plugin_still_interrupts():
    with pytest.raises(KeyboardInterrupt):
        build_registry(_entry_points("fake", "interrupting"))


def test_a_task_module_that_calls_sys_exit_when_used_is_a_clear_error():
    registration = Registration("task", "exits", "faults.exiting_plugin:Task", "", "lazy-plugin")
    with pytest.raises(HarnessError, match=r"task 'exits' from plugin 'lazy-plugin' could not be loaded .*SystemExit"):
        registration.load()


def _ikea_folder(root: Path) -> Path:
    pair = root / "en.de"
    pair.mkdir(parents=True)
    (pair / "test.en").write_text("a chair\na table\na lamp\n")
    (pair / "test.de").write_text("ein Stuhl\nein Tisch\neine Lampe\n")
    (pair / "test.images.txt").write_text("1.jpg\n2.jpg\n3.jpg\n")
    return pair


def _load_ikea(root: Path):
    from harness_tasks.retrieval.ikea import IkeaLoader

    return IkeaLoader("ikea").load(str(root), {})


def test_a_features_file_that_is_text(tmp_path, finished, capsys, monkeypatch):
    pair = _ikea_folder(tmp_path / "ikea")
    (pair / "test.image_features.npy").write_text("0.1 0.2\n0.3 0.4\n0.5 0.6\n")
    with pytest.raises(
        DataError,
        match=r"test\.image_features\.npy: cannot be read as a NumPy array: it is not a \.npy file \(it starts with b'0\.1 0\.'",
    ):
        _load_ikea(tmp_path / "ikea")
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", None)
    _fails_with(
        capsys,
        finished,
        "test.image_features.npy: cannot be read as a NumPy array: it is not a .npy file",
        "run",
        "--tasks",
        "backretrieval",
        "--model",
        "random-encoder",
        "--data-dir",
        str(tmp_path / "ikea"),
        "--seed",
        "0",
    )


def test_a_features_file_of_pickled_objects(tmp_path):
    pair = _ikea_folder(tmp_path / "ikea")
    np.save(pair / "test.image_features.npy", np.array([{"a": 1}, None, 3], dtype=object), allow_pickle=True)
    with pytest.raises(
        DataError,
        match=re.escape(
            "test.image_features.npy: cannot be read as a NumPy array: it holds pickled Python objects, which are never loaded"
        ),
    ):
        _load_ikea(tmp_path / "ikea")


def test_a_missing_features_file_is_named(tmp_path, finished, capsys, monkeypatch):
    pair = _ikea_folder(tmp_path / "ikea")
    (pair / "test.image_features.npy").symlink_to(tmp_path / "elsewhere" / "features.npy")  # a link to nothing
    with pytest.raises(
        DataError, match=r"test\.image_features\.npy: cannot be read: No such file or directory \(it links to "
    ):
        _load_ikea(tmp_path / "ikea")
    (pair / "test.image_features.npy").unlink()
    loaded = _load_ikea(
        tmp_path / "ikea"
    )  # absent: a loader that serves xlr (no warning); a task needing g names the file
    assert "image_features" not in loaded.data.column_names and capsys.readouterr().err == ""
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", None)
    _fails_with(
        capsys,
        finished,
        f"task 'backretrieval' needs image vectors for g: {pair / 'test.image_features.npy'} not found; "
        "give --image-model NAME",
        "run",
        "--tasks",
        "backretrieval",
        "--model",
        "random-encoder",
        "--data-dir",
        str(tmp_path / "ikea"),
        "--seed",
        "0",
    )
