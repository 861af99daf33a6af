"""The ONNX Runtime backend of hf-text-encoder and hf-token-embedder equals the PyTorch one within 1e-5 (tiny models)."""

from __future__ import annotations

import numpy as np
import pytest
from tiny_models import tiny_bert

from harness.errors import HarnessError
from harness_models.encoders.text import HFTextEncoder
from harness_models.token_embedders.hf import HFTokenEmbedder

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

TEXTS = [
    "a man rides a bike down the street",
    "zwei Hunde",
    "une femme lit un livre dans la rue avec deux chiens",
    "a",
    "",
    "zwei Hunde",  # a duplicate
]


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return str(tiny_bert(tmp_path_factory.mktemp("bert"), layers=3))


@pytest.fixture(autouse=True)
def models_dir(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("HARNESS_MODELS_DIR", str(tmp_path_factory.getbasetemp() / "onnx-models"))


@pytest.mark.parametrize("pooling", ["cls", "mean", "max"])
def test_text_vectors_equal_the_torch_backend(bert, pooling):
    args = {"pretrained": bert, "pooling": pooling}
    onnx = HFTextEncoder("m", {**args, "backend": "onnxruntime"}, batch_size=2)
    torch_ = HFTextEncoder("m", {**args, "backend": "torch"}, batch_size=2)
    ours, theirs = onnx.encode_texts(TEXTS), torch_.encode_texts(TEXTS)
    assert onnx.hidden_states is not None and torch_.hidden_states is None
    assert ours.shape == theirs.shape == (len(TEXTS), 32)
    np.testing.assert_allclose(ours, theirs, atol=1e-5, rtol=0)
    np.testing.assert_array_equal(ours[1], ours[5])  # the same text in different batches


def test_auto_resolves_to_onnxruntime_and_the_identity_names_it(bert):
    auto = HFTextEncoder("m", {"pretrained": bert})
    assert auto.args["backend"] == "onnxruntime"
    assert auto.identity().args["backend"] == "onnxruntime"
    torch_ = HFTextEncoder("m", {"pretrained": bert, "backend": "torch"})
    assert torch_.identity().digest() != auto.identity().digest()  # another cache key and signature
    # what onnxruntime does not run falls back to torch under auto
    assert HFTextEncoder("m", {"pretrained": bert, "dtype": "bfloat16"}).args["backend"] == "torch"
    assert HFTextEncoder("m", {"pretrained": bert, "pooling": "pooler"}).args["backend"] == "torch"
    assert HFTokenEmbedder("m", {"pretrained": bert, "layer": 2}).args["backend"] == "onnxruntime"


def test_onnxruntime_refuses_what_it_does_not_run(bert):
    with pytest.raises(HarnessError, match="backend=onnxruntime runs float32 on a CPU only"):
        HFTextEncoder("m", {"pretrained": bert, "dtype": "bfloat16", "backend": "onnxruntime"}).identity()
    with pytest.raises(HarnessError, match="does not run the pooler"):
        HFTextEncoder("m", {"pretrained": bert, "pooling": "pooler", "backend": "onnxruntime"}).identity()
    with pytest.raises(HarnessError, match="float32 on a CPU only"):
        HFTokenEmbedder("m", {"pretrained": bert, "dtype": "bfloat16", "backend": "onnxruntime"}).identity()


@pytest.mark.parametrize("layer", [0, 2])
def test_token_vectors_equal_the_torch_backend(bert, layer):
    args = {"pretrained": bert, "layer": layer}
    onnx = HFTokenEmbedder("m", {**args, "backend": "onnxruntime"}, batch_size=4)
    torch_ = HFTokenEmbedder("m", {**args, "backend": "torch"}, batch_size=4)
    ours, theirs = onnx.embed_tokens(TEXTS), torch_.embed_tokens(TEXTS)
    assert [o.tokens for o in ours] == [t.tokens for t in theirs]
    assert ours[4].vectors.shape == (0, 32)  # the empty text: its special tokens are dropped
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.vectors, t.vectors, atol=1e-5, rtol=0)
    # all_layers runs torch's forward: the same arrays as the torch backend's; its top layer is the single layer's
    layered = onnx.embed_tokens(TEXTS[:2], all_layers=True)
    np.testing.assert_array_equal(layered[0].vectors, torch_.embed_tokens(TEXTS[:2], all_layers=True)[0].vectors)
    assert layered[0].vectors.shape == (layer + 1, len(theirs[0].tokens), 32)
    np.testing.assert_allclose(layered[0].vectors[layer], theirs[0].vectors, atol=1e-5, rtol=0)


def test_the_export_is_made_once_and_named_by_source_and_layers(bert, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HARNESS_MODELS_DIR", str(tmp_path))
    for _ in range(2):
        HFTextEncoder("m", {"pretrained": bert, "backend": "onnxruntime"}).encode_texts(TEXTS[:2])
    HFTokenEmbedder("m", {"pretrained": bert, "layer": 2, "backend": "onnxruntime"}).embed_tokens(TEXTS[:2])
    import onnx

    assert capsys.readouterr().err.count("exporting") == 2  # the full encoder, then the 2-layer one
    folders = [p for p in tmp_path.iterdir() if not p.name.startswith(".")]
    assert len(folders) == 2
    for folder in folders:  # the weights beside the graph, where ONNX Runtime maps them
        graph, weights = folder / "encoder.onnx", folder / "encoder.onnx.data"
        assert sorted(p.name for p in folder.iterdir()) == [graph.name, weights.name, "harness-manifest.json"]
        initializers = onnx.load(str(graph), load_external_data=False).graph.initializer
        outside = [t.name for t in initializers if t.data_location == onnx.TensorProto.EXTERNAL]
        assert len(outside) > 10 and all(len(t.raw_data) <= 1024 for t in initializers if t.name not in outside)


@pytest.mark.parametrize("backend", ["onnxruntime", "torch"])
def test_token_vectors_do_not_depend_on_the_batch(bert, backend):
    args = {"pretrained": bert, "layer": 2, "backend": backend}
    one = HFTokenEmbedder("m", args, batch_size=1).embed_tokens(TEXTS)
    many = HFTokenEmbedder("m", args, batch_size=4).embed_tokens(TEXTS)
    for a, b in zip(one, many):  # nothing is padded: bitwise the same
        assert a.tokens == b.tokens
        np.testing.assert_array_equal(a.vectors, b.vectors)


def test_an_exported_model_runs_without_loading_pytorch_weights(bert, tmp_path, monkeypatch):
    import transformers

    monkeypatch.setenv("HARNESS_MODELS_DIR", str(tmp_path))
    loads: list[str] = []
    original = transformers.AutoModel.from_pretrained.__func__
    monkeypatch.setattr(
        transformers.AutoModel,
        "from_pretrained",
        classmethod(lambda cls, *a, **k: loads.append(str(a[0])) or original(cls, *a, **k)),
    )
    tokens, text = {"pretrained": bert, "layer": 2, "backend": "onnxruntime"}, {"pretrained": bert}
    first = HFTokenEmbedder("m", tokens).embed_tokens(TEXTS), HFTextEncoder("m", text).encode_texts(TEXTS)
    assert len(loads) == 2  # each loaded once, to be exported
    again = HFTokenEmbedder("m", tokens)
    second = again.embed_tokens(TEXTS), HFTextEncoder("m", text).encode_texts(TEXTS)
    assert len(loads) == 2  # both read their exports only
    for a, b in zip(first[0], second[0]):
        np.testing.assert_array_equal(a.vectors, b.vectors)
    np.testing.assert_array_equal(first[1], second[1])
    again.embed_tokens(TEXTS[:1], all_layers=True)  # runs PyTorch: loaded on demand
    assert len(loads) == 3
    # strict=false loads the weights (their key mismatches enter the identity) and has its own export
    HFTokenEmbedder("m", {**tokens, "strict": False}).embed_tokens(TEXTS[:1])
    assert len(loads) == 4 and len([p for p in tmp_path.iterdir() if not p.name.startswith(".")]) == 3
