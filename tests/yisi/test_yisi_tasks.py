"""The YiSi tasks on a hand-made token model: per-side idf, reference idf, metrics and samples."""

from __future__ import annotations

import math
import re
from fractions import Fraction

import datasets
import numpy as np
import pytest

from harness.adapters.capabilities import TokenEmbeddings
from harness.errors import HarnessError
from harness.run.context import RunContext
from harness_tasks.yisi.tasks import BertSumFilter, BertSumSts, Yisi2Filter, Yisi2Sts

VECTORS = {"x": (1.0, 0.0), "y": (0.0, 1.0), "z": (0.6, 0.8), "n": (-1.0, 0.0)}


class WordModel:
    """Each whitespace word is a unit with a fixed vector (no context); records what it embeds."""

    def __init__(self):
        self.calls: list[tuple[list[str], str | None]] = []

    def embed_tokens(self, texts, lang=None):
        self.calls.append((list(texts), lang))
        return [
            TokenEmbeddings(t.split(), np.array([VECTORS[w] for w in t.split()], dtype=np.float32).reshape(-1, 2))
            for t in texts
        ]


def sts_data(s1, s2, score):
    return datasets.Dataset.from_dict(
        {"id": [str(i) for i in range(len(s1))], "sentence1": s1, "sentence2": s2, "score": score}
    )


CTX = RunContext(seeds=[0])


def test_idf_is_computed_per_side():
    # src side: "x y", "x" -> df(x)=2, df(y)=1 of 2; tgt side: "x z", "z" -> df(x)=1, df(z)=2 of 2
    data = sts_data(["x y", "x"], ["x z", "z"], [4.0, 1.0])
    model = WordModel()
    out = Yisi2Sts("yisi2_sts", {"src": "en", "tgt": "es"}).evaluate(data, model, CTX)
    w = lambda df: math.log(1 + 3 / (df + 1))  # noqa: E731  (YiSi idf with |E| = 2)
    first = out.samples[0]
    # precision: x -> x 1.0 (w = w(2)), y -> z 0.8 (w = w(1)); recall: x -> x 1.0 (tgt w(1)), z -> y 0.8 (tgt w(2))
    assert first["precision"] == pytest.approx((w(2) * 1.0 + w(1) * 0.8) / (w(2) + w(1)))
    assert first["recall"] == pytest.approx((w(1) * 1.0 + w(2) * 0.8) / (w(1) + w(2)))
    assert model.calls == [(["x y", "x"], "en"), (["x z", "z"], "es")]
    # second pair: x vs z -> 0.6 both ways
    assert out.samples[1]["yisi2"] == pytest.approx(0.6)
    assert out.per_seed[0]["n"] == 2.0


def test_idf_none_and_alpha():
    data = sts_data(["x y", "x"], ["x z", "z"], [4.0, 1.0])
    out = Yisi2Sts("yisi2_sts", {"idf": "none", "alpha": 0.25}).evaluate(data, WordModel(), CTX)
    p, r = 0.9, 0.9  # x->x 1, y->z 0.8; x<-x 1, z<-y 0.8
    assert out.samples[0]["yisi2"] == pytest.approx(p * r / (0.25 * p + 0.75 * r))


def test_reference_idf_equals_corpus_idf_on_the_same_sentences(tmp_path):
    data = sts_data(["x y", "x", "y n"], ["x z", "z", "n"], [4.0, 1.0, 0.5])
    (tmp_path / "src.txt").write_text("x y\nx\n\ny n\n")  # a blank line is skipped
    (tmp_path / "tgt.txt").write_text("x z\nz\nn\n")
    corpus = Yisi2Sts("yisi2_sts", {}).evaluate(data, WordModel(), CTX)
    reference = Yisi2Sts(
        "yisi2_sts",
        {"idf": "reference", "idf_src_file": str(tmp_path / "src.txt"), "idf_tgt_file": str(tmp_path / "tgt.txt")},
    ).evaluate(data, WordModel(), CTX)
    assert [s["yisi2"] for s in reference.samples] == pytest.approx([s["yisi2"] for s in corpus.samples])
    assert reference.extra["idf_reference"].startswith("sha256:")
    (tmp_path / "src.txt").write_text("x\nx\nx\ny\n")  # x frequent, y rare: the weights change
    other = Yisi2Sts(
        "yisi2_sts",
        {"idf": "reference", "idf_src_file": str(tmp_path / "src.txt"), "idf_tgt_file": str(tmp_path / "tgt.txt")},
    ).evaluate(data, WordModel(), CTX)
    assert other.samples[0]["precision"] != pytest.approx(corpus.samples[0]["precision"])


def test_argument_checks():
    with pytest.raises(HarnessError, match=re.escape("argument alpha=1.5 must be at most 1.0")):
        Yisi2Filter("yisi2_filter", {"alpha": 1.5})
    with pytest.raises(HarnessError, match="needs idf_src_file and idf_tgt_file"):
        Yisi2Sts("yisi2_sts", {"idf": "reference", "idf_src_file": "a.txt"})
    with pytest.raises(HarnessError, match="used only with idf=reference"):
        Yisi2Sts("yisi2_sts", {"idf_tgt_file": "a.txt"})
    with pytest.raises(HarnessError, match="must be one of: corpus, reference, none"):
        Yisi2Sts("yisi2_sts", {"idf": "log"})


def test_sts_metrics_per_set_and_bert_sum():
    data = datasets.Dataset.from_dict(
        {
            "id": ["a:1", "a:2", "a:3", "b:1", "b:2"],
            "set": ["a", "a", "a", "b", "b"],
            "sentence1": ["x", "x", "x", "y", "y"],
            "sentence2": ["x", "z", "n", "z", "x"],
            "score": [5.0, 3.0, 0.0, 4.0, 1.0],
        }
    )
    out = Yisi2Sts("yisi2_sts", {"idf": "none"}).evaluate(data, WordModel(), CTX)
    assert [s["yisi2"] for s in out.samples] == pytest.approx([1.0, 0.6, 0.0, 0.8, 0.0])
    metrics = out.per_seed[0]
    assert metrics["pearson[a]"] == pytest.approx(np.corrcoef([1.0, 0.6, 0.0], [5, 3, 0])[0, 1])
    assert metrics["pearson[b]"] == pytest.approx(1.0)
    # ranks: yisi 5, 3, 1.5, 4, 1.5 (a tie at 0) against gold 5, 3, 1, 4, 2 -> 9.5 / sqrt(9.5 * 10)
    assert metrics["spearman"] == pytest.approx(9.5 / math.sqrt(9.5 * 10))
    base = BertSumSts("bert_sum_sts", {}).evaluate(data, WordModel(), CTX)
    assert [s["bert_sum"] for s in base.samples] == pytest.approx([1.0, 0.6, -1.0, 0.8, 0.0])  # unclipped cosine


def test_filter_metrics_and_per_kind_auc():
    data = datasets.Dataset.from_dict(
        {
            "id": ["1:good", "1:mismatch", "2:good", "2:word_swap"],
            "sentence1": ["x", "x", "y", "y"],
            "sentence2": ["x", "n", "z", "y"],
            "label": [1, 0, 1, 0],
            "kind": ["good", "mismatch", "good", "word_swap"],
        }
    )
    out = Yisi2Filter("yisi2_filter", {"idf": "none"}).evaluate(data, WordModel(), CTX)
    scores = [s["yisi2"] for s in out.samples]
    assert scores == pytest.approx([1.0, 0.0, 0.8, 1.0])
    metrics = out.per_seed[0]
    # good {1.0, 0.8} vs bad {0.0, 1.0}: 1.0 vs 1.0 ties (1/2), 1.0 > 0.0, 0.8 > 0.0, 0.8 < 1.0 -> 2.5 / 4
    assert metrics["roc_auc"] == pytest.approx(2.5 / 4)
    assert metrics["roc_auc[mismatch]"] == pytest.approx(1.0) and metrics["roc_auc[word_swap]"] == pytest.approx(0.25)
    # Lo and Simard's ranking, lowest first, bad pairs found (E = 2): bad 0.0, good 0.8, then a tie of
    # {good, bad} at 1.0: expected bad pairs among the first k 1, 1, 3/2, 2
    # F1 = 2 TP / (2 + k): 2/3, 1/2, 3/5, 2/3 -> 73/120; F2 = 5 TP / (8 + k): 5/9, 1/2, 15/22, 5/6
    assert metrics["mean_f1"] == pytest.approx(float(Fraction(73, 120)), abs=1e-12)
    f2 = (Fraction(5, 9) + Fraction(1, 2) + Fraction(15, 22) + Fraction(5, 6)) / 4
    assert metrics["mean_f2"] == pytest.approx(float(f2), abs=1e-12)
    assert metrics["n_good"] == 2.0 and metrics["n_bad"] == 2.0
    # chance: a random ranking of N = 4 pairs with E = 2 bad: E[TP_k] = k / 2;
    # F1 = k / (2 + k): 1/3, 1/2, 3/5, 2/3 -> 21/40; F2 = 5 (k/2) / (8 + k): 5/18, 1/2, 15/22, 5/6
    info = Yisi2Filter("yisi2_filter", {"idf": "none"}).metric_info(out)
    assert info["mean_f1"]["chance"] == pytest.approx(21 / 40, abs=1e-12)
    chance_f2 = (Fraction(5, 18) + Fraction(1, 2) + Fraction(15, 22) + Fraction(5, 6)) / 4
    assert info["mean_f2"]["chance"] == pytest.approx(float(chance_f2), abs=1e-12)
    assert info["roc_auc"]["chance"] == 0.5
    assert out.samples[1] == {
        "id": "1:mismatch",
        "label": 0,
        "kind": "mismatch",
        "yisi2": 0.0,
        "precision": 0.0,
        "recall": 0.0,
    }


def test_bert_sum_filter_scores_the_cosine_of_summed_vectors():
    data = datasets.Dataset.from_dict(
        {
            "id": ["1:good", "1:mismatch", "2:good", "2:word_swap", "3:good"],
            "sentence1": ["x", "x", "y", "y", "x y"],
            "sentence2": ["x", "n", "z", "y", "z z"],
            "label": [1, 0, 1, 0, 1],
            "kind": ["good", "mismatch", "good", "word_swap", "good"],
        }
    )
    out = BertSumFilter("bert_sum_filter", {}).evaluate(data, WordModel(), CTX)
    # sums: "x y" = (1, 1), "z z" = (1.2, 1.6): cosine (1.2 + 1.6) / (sqrt(2) * 2) = 0.98995
    assert [s["bert_sum"] for s in out.samples] == pytest.approx([1.0, -1.0, 0.8, 1.0, 2.8 / (2 * math.sqrt(2))])
    metrics = out.per_seed[0]
    # good {1.0, 0.8, 0.98995} vs bad {-1.0, 1.0}: above -1.0 all 3; against 1.0: one tie (1/2), two below -> 3.5 / 6
    assert metrics["roc_auc"] == pytest.approx(3.5 / 6)
    assert metrics["roc_auc[mismatch]"] == pytest.approx(1.0) and metrics["roc_auc[word_swap]"] == pytest.approx(
        0.5 / 3
    )
    assert metrics["n_good"] == 3.0 and metrics["n_bad"] == 2.0
    # lowest first: bad -1.0, good 0.8, good 0.98995, tie {good, bad} at 1.0; bad found 1, 1, 1, 3/2, 2 of E = 2
    # F1 = 2 TP / (2 + k): 2/3, 1/2, 2/5, 1/2, 4/7 -> 277/525
    assert metrics["mean_f1"] == pytest.approx(float(Fraction(277, 525)), abs=1e-12)
    assert out.samples[1] == {"id": "1:mismatch", "label": 0, "kind": "mismatch", "bert_sum": -1.0}


class NoisyModel(WordModel):
    """Like WordModel, plus a tiny text-dependent perturbation, as batching's rounding would add."""

    def embed_tokens(self, texts, lang=None):
        out = super().embed_tokens(texts, lang)
        return [TokenEmbeddings(e.tokens, e.vectors + 1e-7 * (len(t) % 7 + 1)) for e, t in zip(out, texts)]


def test_texts_that_tokenize_alike_score_alike_whatever_the_rounding_noise():
    # "x  y" and "x y" are different texts with the same units: their pairs must tie exactly
    data = datasets.Dataset.from_dict(
        {
            "sentence1": ["x z", "x z", "y"],
            "sentence2": ["x y", "x  y", "x"],
            "label": [1, 0, 0],
            "kind": ["good", "word_swap", "mismatch"],
            "id": ["1", "2", "3"],
        }
    )
    out = Yisi2Filter("yisi2_filter", {}).evaluate(data, NoisyModel(), CTX)
    assert out.samples[0]["yisi2"] == out.samples[1]["yisi2"]
    assert out.per_seed[0]["roc_auc[word_swap]"] == 0.5
