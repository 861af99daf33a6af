"""Issue 14, point 3: a changed model (weights or adapter code) never serves stale cached outputs."""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
import time
from importlib import metadata
from pathlib import Path

from faults.conftest import results_lines, run_cli
from faults.fault_plugin import WeightsFileEncoder

import harness.adapters.model
from harness.adapters.cache import Cache
from harness.adapters.cached_model import CachedModel
from harness.adapters.model import ModelAdapter, local_revision
from harness.results.provenance import code_identity
from harness.results.records import read_records
from harness.results.signature import Signature
from harness.run.runner import evaluate


def _past_ctime_tick(path: Path) -> None:
    """Wait until the clock is 50 ms past the file's ctime, so that a later change gets a later ctime."""
    while time.time_ns() < path.stat().st_ctime_ns + 50_000_000:
        time.sleep(0.01)


def _rewrite_keeping_size_and_mtime(path: Path, content: bytes) -> None:
    before = path.stat()
    assert len(content) == before.st_size
    path.write_bytes(content)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_weights_replaced_with_same_size_and_mtime_never_serve_old_outputs(data_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(harness.adapters.model, "RACY_SECONDS", 0.0)  # memoise even a file written just now
    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"A" * 64)
    _past_ctime_tick(weights)
    args = [
        "run",
        "--tasks",
        "mean_similarity",
        "--model",
        "weights-file-encoder",
        "--model-args",
        f"weights={weights}",
        "--data-dir",
        data_dir,
        "--seed",
        "0",
    ]
    code, _, _ = run_cli(capsys, *args, "--output", str(tmp_path / "out"))
    assert code == 0
    _rewrite_keeping_size_and_mtime(weights, b"B" * 64)
    code, _, _ = run_cli(capsys, *args, "--output", str(tmp_path / "out"))
    assert code == 0
    first, second = results_lines(tmp_path / "out")  # the first line is kept
    assert first["model"]["revision"] != second["model"]["revision"]
    assert second["model"]["revision"] == local_revision(weights)
    assert sum(WeightsFileEncoder.calls) == 16  # the second run computed everything again
    code, _, _ = run_cli(capsys, *args, "--output", str(tmp_path / "fresh"), "--no-cache")
    (fresh,) = results_lines(tmp_path / "fresh")
    assert second["metrics"] == fresh["metrics"] != first["metrics"]


def test_the_weight_hash_memo_sees_every_change(tmp_path, monkeypatch):
    monkeypatch.setattr(harness.adapters.model, "RACY_SECONDS", 0.0)
    hashed: list[str] = []
    real = harness.adapters.model.file_sha256
    monkeypatch.setattr(
        harness.adapters.model, "file_sha256", lambda path: hashed.append(Path(path).name) or real(path)
    )
    weights = tmp_path / "w.bin"
    weights.write_bytes(b"1" * 32)
    _past_ctime_tick(weights)
    first = local_revision(weights)
    assert local_revision(weights) == first and hashed == ["w.bin"]  # unchanged: served by the memo
    _rewrite_keeping_size_and_mtime(weights, b"2" * 32)  # in place: same inode, size, mtime; new ctime
    _past_ctime_tick(weights)
    second = local_revision(weights)
    assert second != first and len(hashed) == 2
    replacement = tmp_path / "new.bin"
    replacement.write_bytes(b"3" * 32)
    os.utime(replacement, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns))
    os.replace(replacement, weights)  # another inode under the same name, same size and mtime
    third = local_revision(weights)
    assert third not in (first, second) and len(hashed) == 3
    expected = hashlib.sha256(f"w.bin\0{hashlib.sha256(b'3' * 32).hexdigest()}\n".encode()).hexdigest()[:16]
    assert third == "sha256:" + expected


def test_a_file_changed_within_the_racy_window_is_never_memoised(tmp_path, monkeypatch):
    hashed: list[str] = []
    real = harness.adapters.model.file_sha256
    monkeypatch.setattr(harness.adapters.model, "file_sha256", lambda path: hashed.append(str(path)) or real(path))
    weights = tmp_path / "w.bin"
    weights.write_bytes(b"x" * 8)  # written just now: its ctime tick may not be over
    local_revision(weights)
    local_revision(weights)
    assert len(hashed) == 2


def _write_adapter_package(root: Path, helper_body: str) -> None:
    package = root / "tmp_adapters"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text(helper_body)
    (package / "adapter.py").write_text(
        "import numpy as np\n"
        "from harness.adapters.capabilities import Capability\n"
        "from harness.adapters.model import ModelAdapter\n"
        "from .helper import scale\n\n"
        "class Scaled(ModelAdapter):\n"
        "    capabilities = frozenset({Capability.TEXT_ENCODER})\n"
        "    calls = []\n"
        "    def encode_texts(self, texts, lang=None):\n"
        "        Scaled.calls.append(len(texts))\n"
        "        return np.array([[len(t) * scale(), 1.0] for t in texts], dtype=np.float32)\n"
    )


def test_a_change_in_adapter_code_changes_identity_cache_key_and_signature(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    _write_adapter_package(tmp_path, "def scale():\n    return 1.0\n")
    module = importlib.import_module("tmp_adapters.adapter")
    try:
        cache = Cache(tmp_path / "cache")
        before = CachedModel(module.Scaled("scaled"), cache)
        assert before.identity.distribution is None and before.identity.code.startswith("sha256:")
        before.encode_texts(["ab", "abc"])
        CachedModel(module.Scaled("scaled"), cache).encode_texts(["ab", "abc"])
        assert module.Scaled.calls == [2]  # same code: served by the cache
        (tmp_path / "tmp_adapters" / "helper.py").write_text(
            "def scale():\n    return 2.0\n"
        )  # only a helper it imports
        after = CachedModel(module.Scaled("scaled"), cache)
        assert after.identity.code != before.identity.code
        assert after.identity.digest() != before.identity.digest()
        after.encode_texts(["ab", "abc"])
        assert module.Scaled.calls == [2, 2]  # new code: computed again
        signature = Signature.build("t", 1, {}, {"loader": "d", "revision": "r", "size": 2}, None)
        old_sig, new_sig = (str(signature.with_model(m.identity.as_dict())) for m in (before, after))
        assert old_sig.startswith("t|items:2|data:d@r|model:scaled@none#code:") and old_sig != new_sig
    finally:
        for name in [n for n in sys.modules if n.startswith("tmp_adapters")]:
            del sys.modules[name]


def test_code_identity_follows_how_the_adapter_is_installed():
    editable = code_identity("harness_bitext.tfidf:CharTfidf")
    assert editable.distribution == "harness-bitext" and editable.version == metadata.version("harness-bitext")
    assert editable.source_hash is not None and editable.source_hash.startswith(
        "sha256:"
    )  # pip install -e: code may change
    pinned = code_identity("numpy.linalg:norm")
    assert (pinned.distribution, pinned.version, pinned.source_hash) == ("numpy", metadata.version("numpy"), None)
    assert code_identity("not a class path") == code_identity("") == type(pinned)(None, None, None)


def test_results_line_names_the_plugin_packages_and_adapter_code(data_dir, tmp_path):
    dist_info = tmp_path / "site" / "fault_plugins-1.2.3.dist-info"
    dist_info.mkdir(parents=True)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: fault-plugins\nVersion: 1.2.3\n")
    (dist_info / "entry_points.txt").write_text("[harness]\nfake = fixtures.plugins.fake\n")
    (dist,) = metadata.distributions(path=[str(tmp_path / "site")])
    from harness.plugins.registry import build_registry

    registry = build_registry(dist.entry_points)
    (record,) = evaluate(
        "mean_similarity", "counting-encoder", data_dir=data_dir, output=tmp_path / "out", registry=registry, seeds=1
    )
    assert record.plugins == {"fault-plugins": "1.2.3"}  # task, dataset loader and model adapter all come from it
    (saved,), _ = read_records(tmp_path / "out" / "results.jsonl")
    assert saved.plugins == {"fault-plugins": "1.2.3"}
    assert saved.model["code"].startswith("sha256:") and "#code:" in saved.signature


def test_an_adapter_in_no_distribution_is_identified_by_its_source():
    class Plain(ModelAdapter):
        pass

    identity = Plain("p").identity()
    assert identity.adapter.endswith(":test_an_adapter_in_no_distribution_is_identified_by_its_source.<locals>.Plain")
    assert identity.code is not None  # this test module is in no distribution: its source is hashed
