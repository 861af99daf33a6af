"""The tasks ``yisi2_sts``, ``bert_sum_sts`` and ``yisi2_filter``.

sentence1 is in language ``src`` and sentence2 in ``tgt``; YiSi-2's precision runs over the
units of sentence1 and its recall over those of sentence2 (see ``metric.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from harness.capabilities import Capability, TokenEmbeddings
from harness.context import RunContext
from harness.data import files_revision, read_lines
from harness.errors import HarnessError
from harness.params import Param
from harness.task import Metric, Task, TaskOutput
from harness_tasks.yisi.filter_data import Multi30kFilterLoader
from harness_tasks.yisi.metric import bert_sum, idf_table, prepare, yisi
from harness_tasks.yisi.ranking import error_mean_f_beta, pearson, roc_auc, spearman
from harness_tasks.yisi.sts_data import StsLoader

YISI_PARAMS = {
    "alpha": Param(0.5, "YiSi-2 = PR / (alpha P + (1 - alpha) R); 0.5 is the harmonic mean", min=0.0, max=1.0),
    "idf": Param(
        "corpus",
        "unit weights: idf from each side of the evaluated corpus, from reference files, or none",
        choices=("corpus", "reference", "none"),
    ),
    "idf_src_file": Param(None, "with idf=reference: text file, one src sentence per line", str),
    "idf_tgt_file": Param(None, "with idf=reference: text file, one tgt sentence per line", str),
}


def embed_side(model: Any, texts: Sequence[str], lang: str) -> list[TokenEmbeddings]:
    """Token embeddings of one side, in one cached call.

    Texts that tokenize identically (say, two words that both become [UNK]) share the vectors
    of the first of them: their vectors are equal in exact arithmetic, and sharing them keeps
    batching's rounding noise (which depends on ``--batch-size`` and on distributed shards)
    from splitting a tie between two pairs, which would change a ranking metric.
    """
    first: dict[tuple[str, ...], TokenEmbeddings] = {}
    return [first.setdefault(tuple(e.tokens), e) for e in model.embed_tokens(list(texts), lang=lang)]


def embed_pairs(data: Any, model: Any, src: str, tgt: str) -> tuple[list[TokenEmbeddings], list[TokenEmbeddings]]:
    """Token embeddings of sentence1 (in ``src``) and sentence2 (in ``tgt``)."""
    return embed_side(model, data["sentence1"], src), embed_side(model, data["sentence2"], tgt)


def bert_sum_scores(data: Any, model: Any, src: str, tgt: str) -> list[float]:
    """bert_sum of every pair: the cosine of the summed token vectors of its two sides."""
    e_side, f_side = embed_pairs(data, model, src, tgt)
    return [bert_sum(e, f) for e, f in zip(e_side, f_side)]


class YisiScoring(Task):
    """Shared by the YiSi-2 tasks: argument checks, idf tables and per-pair scores."""

    requires = (Capability.TOKEN_EMBEDDER,)

    def __init__(self, name: str, args: dict[str, Any] | None = None):
        super().__init__(name, args)
        files = (self.args["idf_src_file"], self.args["idf_tgt_file"])
        if self.args["idf"] == "reference" and None in files:
            raise HarnessError(f"task {name!r}: idf=reference needs idf_src_file and idf_tgt_file")
        if self.args["idf"] != "reference" and files != (None, None):
            raise HarnessError(f"task {name!r}: idf_src_file / idf_tgt_file are used only with idf=reference")

    def _table(
        self, side: Sequence[TokenEmbeddings], model: Any, lang: str, file: str | None
    ) -> tuple[Counter[str], int] | None:
        if self.args["idf"] == "none":
            return None
        if self.args["idf"] == "corpus":
            return idf_table(e.tokens for e in side)
        lines = [line for line in read_lines(file) if line.strip()]
        return idf_table(e.tokens for e in model.embed_tokens(lines, lang=lang))

    def score_pairs(self, data: Any, model: Any) -> tuple[list[tuple[float, float, float]], dict[str, Any]]:
        """(P, R, YiSi-2) of every pair, and what the results need to reproduce the weights."""
        src, tgt = self.args["src"], self.args["tgt"]
        e_side, f_side = embed_pairs(data, model, src, tgt)
        e_table = self._table(e_side, model, src, self.args["idf_src_file"])
        f_table = self._table(f_side, model, tgt, self.args["idf_tgt_file"])
        scores = [yisi(prepare(e, e_table), prepare(f, f_table), self.args["alpha"]) for e, f in zip(e_side, f_side)]
        return scores, self.reference_extra()

    def reference_extra(self) -> dict[str, Any]:
        """With idf=reference, the revision of the reference files (for the results line)."""
        if self.args["idf"] != "reference":
            return {}
        return {"idf_reference": files_revision([self.args["idf_src_file"], self.args["idf_tgt_file"]])}


def sts_metrics(score: str) -> tuple[Metric, ...]:
    """The declared metrics of an STS task whose per-pair score is the samples' field ``score``."""
    return (
        Metric(
            "pearson",
            "Pearson r",
            True,
            0.0,
            f"pearson:{score},gold",
            f"Pearson's r of {score} with the gold similarity",
        ),
        Metric(
            "spearman",
            "Spearman ρ",
            True,
            0.0,
            f"spearman:{score},gold",
            f"Spearman's rho of {score} with the gold similarity",
        ),
        Metric("n", "pairs", None, None, None, "number of scored pairs"),
    )


def filter_metric_list(score: str) -> tuple[Metric, ...]:
    """The declared metrics of a filtering task whose per-pair score is the samples' field ``score``."""
    return (
        Metric(
            "roc_auc", "ROC AUC", True, 0.5, f"auc:{score},label", f"ROC AUC of {score} separating good from bad pairs"
        ),
        Metric(
            "mean_f1",
            "mean F1",
            True,
            None,
            None,
            "mean F1 of finding the bad pairs over all cut-offs (lowest score first)",
        ),
        Metric(
            "mean_f2",
            "mean F2",
            True,
            None,
            None,
            "mean F2 of finding the bad pairs over all cut-offs (lowest score first)",
        ),
        Metric("n_good", "good pairs", None, None, None, "number of good pairs"),
        Metric("n_bad", "bad pairs", None, None, None, "number of bad pairs"),
    )


def correlations(predicted: Sequence[float], data: Any) -> dict[str, float | None]:
    """Pearson and Spearman with the gold ``score``, overall and per ``set`` when there are several."""
    gold = list(data["score"])
    metrics = {"pearson": pearson(predicted, gold), "spearman": spearman(predicted, gold), "n": float(len(gold))}
    sets = list(data["set"]) if "set" in data.column_names else []
    for name in sorted(set(sets)) if len(set(sets)) > 1 else []:
        rows = [i for i, s in enumerate(sets) if s == name]
        metrics[f"pearson[{name}]"] = pearson([predicted[i] for i in rows], [gold[i] for i in rows])
    return metrics


class Yisi2Sts(YisiScoring):
    """YiSi-2 on a cross-lingual STS set, correlated with the gold similarity."""

    version = 1
    dataset = "sts_crosslingual"
    main_metric = "pearson"
    metrics = sts_metrics("yisi2")
    params = {**StsLoader.params, **YISI_PARAMS}

    def evaluate(self, data: Any, model: Any, ctx: RunContext) -> TaskOutput:
        """Score every pair, then correlate with gold."""
        scores, extra = self.score_pairs(data, model)
        samples = [
            {"id": i, "gold": g, "yisi2": f, "precision": p, "recall": r}
            for i, g, (p, r, f) in zip(data["id"], data["score"], scores)
        ]
        return TaskOutput([correlations([f for _, _, f in scores], data)], samples, extra)


class BertSumSts(Task):
    """The bert_sum baseline on a cross-lingual STS set: cosine of summed token vectors."""

    version = 1
    requires = (Capability.TOKEN_EMBEDDER,)
    dataset = "sts_crosslingual"
    main_metric = "pearson"
    metrics = sts_metrics("bert_sum")
    params = dict(StsLoader.params)

    def evaluate(self, data: Any, model: Any, ctx: RunContext) -> TaskOutput:
        """Score every pair, then correlate with gold."""
        scores = bert_sum_scores(data, model, self.args["src"], self.args["tgt"])
        samples = [{"id": i, "gold": g, "bert_sum": s} for i, g, s in zip(data["id"], data["score"], scores)]
        return TaskOutput([correlations(scores, data)], samples)


def filter_metrics(values: Sequence[float], data: Any) -> tuple[dict[str, float | None], list[str]]:
    """ROC AUC, mean F1 and F2 over all cut-offs, counts, and the ROC AUC per kind of bad pair; and each pair's kind.

    Mean F1 / F2 follow Lo and Simard (2019, section 5.2): lowest score first, bad pairs as the class to find.
    """
    labels = list(data["label"])
    kinds = list(data["kind"]) if "kind" in data.column_names else ["bad" if y == 0 else "good" for y in labels]
    metrics = {
        "roc_auc": roc_auc(values, labels),
        "mean_f1": error_mean_f_beta(values, labels, 1.0),
        "mean_f2": error_mean_f_beta(values, labels, 2.0),
        "n_good": float(sum(labels)),
        "n_bad": float(len(labels) - sum(labels)),
    }
    for kind in sorted(set(kinds) - {"good"}):
        rows = [i for i, k in enumerate(kinds) if k in (kind, "good")]
        metrics[f"roc_auc[{kind}]"] = roc_auc([values[i] for i in rows], [labels[i] for i in rows])
    return metrics, kinds


class Yisi2Filter(YisiScoring):
    """YiSi-2 as a parallel-data filter: rank good translation pairs above bad ones."""

    version = 2  # 2: mean F1 / F2 of the bad pairs ranked lowest score first (Lo and Simard 2019, section 5.2)
    dataset = "multi30k_filter"
    main_metric = "roc_auc"
    metrics = filter_metric_list("yisi2")
    params = {**Multi30kFilterLoader.params, **YISI_PARAMS}

    def evaluate(self, data: Any, model: Any, ctx: RunContext) -> TaskOutput:
        """ROC AUC, mean F1 and mean F2 (error detection) over all cut-offs; AUC per kind of bad pair."""
        scores, extra = self.score_pairs(data, model)
        metrics, kinds = filter_metrics([f for _, _, f in scores], data)
        samples = [
            {"id": i, "label": y, "kind": k, "yisi2": f, "precision": p, "recall": r}
            for i, y, k, (p, r, f) in zip(data["id"], data["label"], kinds, scores)
        ]
        return TaskOutput([metrics], samples, extra)


class BertSumFilter(Task):
    """The bert_sum baseline as a parallel-data filter: same data and metrics as ``yisi2_filter``."""

    version = 2  # 2: mean F1 / F2 as in yisi2_filter version 2
    requires = (Capability.TOKEN_EMBEDDER,)
    dataset = "multi30k_filter"
    main_metric = "roc_auc"
    metrics = filter_metric_list("bert_sum")
    params = dict(Multi30kFilterLoader.params)

    def evaluate(self, data: Any, model: Any, ctx: RunContext) -> TaskOutput:
        """Cosine of the summed token vectors per pair, then the filtering metrics."""
        scores = bert_sum_scores(data, model, self.args["src"], self.args["tgt"])
        metrics, kinds = filter_metrics(scores, data)
        samples = [
            {"id": i, "label": y, "kind": k, "bert_sum": v}
            for i, y, k, v in zip(data["id"], data["label"], kinds, scores)
        ]
        return TaskOutput([metrics], samples)
