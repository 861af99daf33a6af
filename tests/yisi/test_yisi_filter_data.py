"""The Multi30K filtering set: corruptions, the seeded builder, and the dataset loader."""

from __future__ import annotations

from collections import Counter

import datasets
import numpy as np
import pytest
from conftest import shared_data
from hypothesis import given, settings
from hypothesis import strategies as st
from yisi.helpers import CAPTIONS

from harness.errors import DataError, HarnessError
from harness_tasks.yisi.corruption import content_vocabulary, cut_points, drop_clause, is_content_word, swap_word
from harness_tasks.yisi.filter_data import KINDS, Multi30kFilterLoader, build_pairs


def test_cut_points_and_clause_drop_by_hand():
    rng = np.random.default_rng(0)
    # words 3..7 may start the dropped part; only "at" opens a phrase
    assert cut_points("A man in an orange hat starring at something.", "en") == [7]
    assert drop_clause("A man in an orange hat starring at something.", "en", rng) == "A man in an orange hat starring."
    # German relative clause: the word after a comma
    assert (
        drop_clause("Ein Mann mit einem orangefarbenen Hut, der etwas anstarrt.", "de", rng)
        == "Ein Mann mit einem orangefarbenen Hut."
    )
    assert drop_clause("Lidé opravují střechu domu.", "cs", rng) is None
    # a language without word lists has only the comma rule
    assert cut_points("Un deux trois, quatre cinq.", "xx") == [3]


def test_content_words():
    assert is_content_word("dog,", "en") and is_content_word("Schnee.", "de")
    assert not is_content_word("the", "en") and not is_content_word("with", "en") and not is_content_word("im", "de")
    assert not is_content_word("saftig-grünes", "de") and not is_content_word("2015", "en")


def test_swap_word_keeps_punctuation_and_capitalisation():
    vocabulary = {False: ["cat", "dog"], True: ["Paris"]}
    for seed in range(20):
        result = swap_word("A dog runs in Berlin.", "en", vocabulary, np.random.default_rng(seed))
        before, after = ["A", "dog", "runs", "in", "Berlin."], result.split()
        changed = [(b, a) for b, a in zip(before, after) if b != a]
        assert len(after) == len(before) and len(changed) == 1
        old, new = changed[0]
        if old == "Berlin.":
            assert new == "Paris."
        else:
            assert new.rstrip(".") in ("cat", "dog") and new != old
    assert swap_word("A the.", "en", vocabulary, np.random.default_rng(0)) is None


def test_content_vocabulary_skips_first_words_and_splits_by_case():
    vocabulary = content_vocabulary(["Dogs run in Berlin.", "A cat sleeps."], "en")
    assert vocabulary == {True: ["Berlin"], False: ["cat", "run", "sleeps"]}


def _check_invariants(rows, src_texts, tgt_texts):
    n = len(src_texts)
    assert len(rows["id"]) == 2 * n
    assert rows["label"] == [1, 0] * n
    assert rows["sentence1"][0::2] == src_texts and rows["sentence2"][0::2] == tgt_texts
    for i in range(n):
        kind, side = rows["kind"][2 * i + 1], rows["corrupted_side"][2 * i + 1]
        assert kind in KINDS and rows["id"][2 * i + 1] == f"{i + 1}:{kind}"
        texts = src_texts if side == "src" else tgt_texts
        bad = rows["sentence1" if side == "src" else "sentence2"][2 * i + 1]
        other = rows["sentence2" if side == "src" else "sentence1"][2 * i + 1]
        assert other == (tgt_texts if side == "src" else src_texts)[i]  # the other side is untouched
        assert bad != texts[i]
        if kind == "mismatch":
            assert bad in texts
        elif kind == "clause_drop":
            kept = bad.rstrip(".!?").split()
            assert 3 <= len(kept) <= len(texts[i].split()) - 2
            assert texts[i].split()[: len(kept) - 1] == kept[:-1]
        else:
            assert len(bad.split()) == len(texts[i].split())
            assert sum(a != b for a, b in zip(bad.split(), texts[i].split())) == 1


def test_builder_on_small_corpus_is_deterministic_and_well_formed():
    rows = build_pairs(CAPTIONS["en"], CAPTIONS["de"], "en", "de", seed=3)
    _check_invariants(rows, CAPTIONS["en"], CAPTIONS["de"])
    assert rows == build_pairs(CAPTIONS["en"], CAPTIONS["de"], "en", "de", seed=3)
    assert rows != build_pairs(CAPTIONS["en"], CAPTIONS["de"], "en", "de", seed=4)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([("en", "de"), ("de", "fr"), ("fr", "en")]))
def test_builder_invariants_for_any_seed_and_pair(seed, pair):
    src, tgt = pair
    _check_invariants(build_pairs(CAPTIONS[src], CAPTIONS[tgt], src, tgt, seed), CAPTIONS[src], CAPTIONS[tgt])


def test_builder_rejects_corpora_where_no_bad_pair_can_be_made():
    with pytest.raises(DataError, match="at least 2"):
        build_pairs(["one"], ["eins"], "en", "de", 0)
    with pytest.raises(DataError, match="identical"):
        build_pairs(["x"] * 3, ["y"] * 3, "en", "de", 0)


def test_loader_builds_from_the_raw_layout(multi30k_dir):
    loaded = Multi30kFilterLoader("multi30k_filter").load(
        str(multi30k_dir), {"src": "de", "tgt": "fr", "split": "test_2016_flickr", "corruption_seed": 0}
    )
    assert loaded.data.column_names == ["id", "sentence1", "sentence2", "label", "kind", "corrupted_side"]
    assert loaded.data["sentence1"][0] == CAPTIONS["de"][0] and loaded.data["sentence2"][0] == CAPTIONS["fr"][0]
    assert loaded.identity["revision"].startswith("sha256:") and loaded.identity["builder"] == "multi30k_filter.v1"


def test_loader_errors_name_the_problem(multi30k_dir, tmp_path):
    loader = Multi30kFilterLoader("multi30k_filter")
    args = {"src": "en", "tgt": "cs", "split": "test_2016_flickr", "corruption_seed": 0}
    with pytest.raises(DataError, match=r"test_2016_flickr\.cs.*not found.*de, en, fr"):
        loader.load(str(multi30k_dir), args)
    with pytest.raises(HarnessError, match="needs --data-dir"):
        loader.load(None, args)


def test_loader_reads_a_saved_dataset_and_checks_labels(tmp_path):
    loader = Multi30kFilterLoader("multi30k_filter")
    args = {"src": "en", "tgt": "de", "split": "test", "corruption_seed": 0}
    good = tmp_path / "good"
    datasets.Dataset.from_dict({"sentence1": ["a", "b"], "sentence2": ["x", "y"], "label": [1, 0]}).save_to_disk(good)
    loaded = loader.load(str(good), args)
    assert loaded.data["id"] == ["1", "2"] and loaded.data["label"] == [1, 0]
    bad = tmp_path / "bad"
    datasets.Dataset.from_dict({"sentence1": ["a", "b"], "sentence2": ["x", "y"], "label": [1, 2]}).save_to_disk(bad)
    with pytest.raises(DataError, match=r"row 2, field 'label': label must be 0 or 1, got 2"):
        loader.load(str(bad), args)
    missing = tmp_path / "missing"
    datasets.Dataset.from_dict({"sentence1": ["a"], "sentence2": ["x"]}).save_to_disk(missing)
    with pytest.raises(DataError, match=r"missing column.*label"):
        loader.load(str(missing), args)


@pytest.mark.real
@pytest.mark.parametrize("pair", [("en", "de"), ("de", "fr"), ("en", "cs")])
def test_real_multi30k_pairs(pair):
    folder = shared_data("multi30k")
    src, tgt = pair
    data = (
        Multi30kFilterLoader("multi30k_filter")
        .load(str(folder), {"src": src, "tgt": tgt, "split": "test_2016_flickr", "corruption_seed": 0})
        .data
    )
    kinds = Counter(data["kind"])
    assert kinds["good"] == 1000 and sum(kinds.values()) == 2000
    assert all(250 <= kinds[k] <= 420 for k in KINDS)  # about a third each, after fallbacks
    _check_invariants(data.to_dict(), data["sentence1"][0::2], data["sentence2"][0::2])
