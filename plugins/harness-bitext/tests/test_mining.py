"""bitext_mining and tfidf-char, by hand and end to end."""

from __future__ import annotations

import numpy as np
import pytest

import harness
from harness_bitext.mining import mine, tie_aware_hits
from harness_bitext.tfidf import CharTfidfEncoder


def test_cosine_and_margin_by_hand():
    src = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])
    tgt = np.array([[1.0, 0.0], [0.0, 1.0], [0.8, 0.6]])
    # cos(src, tgt) = [[1, 0, .8], [.6, .8, .96], [0, 1, .6]]: src1's nearest is tgt2, not tgt1.
    hits = mine(src, tgt, k=1)
    assert hits["cosine"].tolist() == [1.0, 0.0, 0.0]
    # k=1: density of src = [1, .96, 1], of tgt = [1, 1, .96];
    # margin(src1, tgt1) = .8 / ((.96 + 1) / 2) = .816 < margin(src1, tgt2) = .96 / .96 = 1.
    assert hits["margin"].tolist() == [1.0, 0.0, 0.0]


def test_ties_count_their_expected_value():
    scores = np.array([[0.5, 0.5, 0.1], [0.2, 0.9, 0.9], [0.3, 0.3, 0.3]])
    assert tie_aware_hits(scores, np.array([0, 0, 2])).tolist() == [0.5, 0.0, pytest.approx(1 / 3)]


def test_duplicate_texts_tie_instead_of_winning():
    src = np.array([[1.0, 0.0], [1.0, 0.0]])  # two identical sources and targets
    hits = mine(src, src.copy(), k=1)
    assert hits["cosine"].tolist() == [0.5, 0.5]


def test_empty_input():
    hits = mine(np.zeros((0, 3)), np.zeros((0, 3)))
    assert hits["cosine"].size == 0


def test_tfidf_vectors_are_normalised_and_lexical():
    encoder = CharTfidfEncoder("tfidf-char")
    vectors = encoder.encode_texts(["the red house", "the red house", "a blue car", ""])
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0) and not vectors[3].any()
    assert vectors[0] @ vectors[1] == pytest.approx(1.0) and vectors[0] @ vectors[2] < 0.5


def _cosines(a, b):
    return (a / np.linalg.norm(a, axis=1)[:, None]) @ (b / np.linalg.norm(b, axis=1)[:, None]).T


def test_tfidf_default_equals_an_exact_vocabulary_where_few_dimensions_change_the_ranking():
    from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

    src = ["the red house", "a blue car", "green trees"]
    tgt = ["la maison rouge", "une voiture bleue", "arbres verts"]
    # an exact shared vocabulary of the 2-4-grams of both sides, IDF per side as the encoder fits it
    vocabulary = CountVectorizer(analyzer="char_wb", ngram_range=(2, 4)).fit(src + tgt)
    exact = _cosines(
        *(TfidfTransformer(sublinear_tf=True).fit_transform(vocabulary.transform(t)).toarray() for t in (src, tgt))
    )
    assert exact.argmax(axis=1).tolist() == [0, 1, 2]  # each source's translation ranks first
    default = CharTfidfEncoder("tfidf-char")
    assert default.args["features"] == 1 << 15 and default.identity().revision.endswith("+v2")
    hashed = _cosines(default.encode_texts(src), default.encode_texts(tgt))
    np.testing.assert_allclose(hashed, exact, atol=1e-6)  # no two of these n-grams share a dimension
    few = CharTfidfEncoder("tfidf-char", {"features": 64})  # n-grams share dimensions: noise changes the ranking
    assert _cosines(few.encode_texts(src), few.encode_texts(tgt)).argmax(axis=1).tolist() == [0, 1, 0]


def test_tfidf_of_only_empty_texts_is_zero():
    assert not CharTfidfEncoder("tfidf-char", {"features": 16}).encode_texts(["", ""]).any()


def test_end_to_end_on_a_tiny_corpus(tmp_path):
    en = ["the red house", "a blue car", "two green trees", "an old man"]
    fr = ["la maison rouge", "une voiture bleue", "deux arbres verts", "un vieil homme"]
    for lang, lines in (("en", en), ("fr", en)):
        (tmp_path / f"test_2016_flickr.{lang}").write_text("\n".join(lines) + "\n")
    (record,) = harness.evaluate(
        "bitext_mining", "tfidf-char", data_dir=str(tmp_path), task_args="src=en,tgt=fr", output=tmp_path / "out"
    )
    assert record.metrics["accuracy"] == 1.0 and record.metrics["xsim"] == 0.0  # identical sides
    (tmp_path / "test_2016_flickr.fr").write_text("\n".join(fr) + "\n")
    (record,) = harness.evaluate(
        "bitext_mining", "tfidf-char", data_dir=str(tmp_path), task_args="src=en,tgt=fr", output=tmp_path / "out"
    )
    assert 0.0 <= record.metrics["accuracy"] <= 1.0 and record.dataset["size"] == 4


def test_margin_neighbourhood_must_hold_one_neighbour():
    from harness_bitext.mining import BitextMining

    with pytest.raises(harness.HarnessError, match=r"^task 'bitext_mining': argument k=0 must be at least 1$"):
        BitextMining("bitext_mining", {"k": "0"})
    assert BitextMining("bitext_mining", {"k": "1"}).args["k"] == 1
