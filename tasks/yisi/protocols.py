"""Protocols: what a pair scorer's scores are measured on, whatever the scorer.

- ``StsProtocol``: a cross-lingual STS set (``sts_crosslingual``); Pearson (main) and Spearman
  with the gold similarity, and Pearson per set when there are several.
- ``FilterProtocol``: parallel-data filtering (``multi30k_filter``): good pairs against bad ones;
  ROC AUC (main), error-detection mean F1 and F2 over all cut-offs (Lo and Simard, CoNLL 2019,
  section 5.2), and ROC AUC per kind of bad pair.

A task subclasses a protocol and names its scorer (``scorer_type``), its version, its
parameters (the loader's and the scorer's) and its metrics (``sts_metrics`` /
``filter_metric_list`` of the scorer's name): ``tasks.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from harness.adapters.cached_model import CachedModel
from harness.adapters.capabilities import Capability
from harness.run.context import RunContext
from harness.run.task import Metric, Task, TaskOutput
from harness_tasks.yisi.ranking import error_mean_f_beta, mean_f_beta_chance, pearson, roc_auc, spearman
from harness_tasks.yisi.scorers import PairScorer

if TYPE_CHECKING:
    from datasets import Dataset  # only a type here: importing datasets costs a second

ScorerT = TypeVar("ScorerT", bound=PairScorer)
Metrics = dict[str, float | None]


class PairTask(Task["Dataset"], Generic[ScorerT]):
    """A scorer under a protocol: the scorer scores every pair, the protocol (a subclass) measures the scores."""

    family = "yisi"
    requires = (Capability.TOKEN_EMBEDDER,)
    scorer_type: type[ScorerT]

    def __init__(self, name: str, args: Mapping[str, Any] | None = None):
        super().__init__(name, args)
        self.scorer: ScorerT = self.scorer_type(name, self.args)

    def evaluate(self, data: Dataset, model: CachedModel, ctx: RunContext) -> TaskOutput:
        """Score every pair, then measure; each sample is the pair's protocol fields and its scorer fields."""
        scored = self.scorer.score(data, model)
        samples = [{**head, **fields} for head, fields in zip(self.sample_heads(data), scored.fields)]
        return TaskOutput([self.measure(scored.values, data)], samples, scored.extra)

    def measure(self, values: Sequence[float], data: Dataset) -> Metrics:
        """The metrics of the per-pair scores ``values`` on ``data``."""
        raise NotImplementedError

    def info_values(self, output: TaskOutput) -> dict[str, Any]:
        """What the metrics' display, description and chance are filled from: the arguments and ``output.extra``."""
        return {**self.args, **output.extra}

    def metric_info(self, output: TaskOutput) -> dict[str, dict[str, Any]]:
        """Each declared metric's ``metric_info`` entry, filled from ``info_values``."""
        values = self.info_values(output)
        return {metric.name: metric.info(values) for metric in self.metrics}

    def sample_heads(self, data: Dataset) -> list[dict[str, Any]]:
        """What each pair's sample records before the scorer's fields (its id and gold)."""
        raise NotImplementedError


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


def correlations(predicted: Sequence[float], data: Dataset) -> Metrics:
    """Pearson and Spearman with the gold ``score``, overall and per ``set`` when there are several."""
    gold = list(data["score"])
    metrics: Metrics = {"pearson": pearson(predicted, gold), "spearman": spearman(predicted, gold)}
    metrics["n"] = float(len(gold))
    sets = list(data["set"]) if "set" in data.column_names else []
    for name in sorted(set(sets)) if len(set(sets)) > 1 else []:
        rows = [i for i, s in enumerate(sets) if s == name]
        metrics[f"pearson[{name}]"] = pearson([predicted[i] for i in rows], [gold[i] for i in rows])
    return metrics


class StsProtocol(PairTask[ScorerT]):
    """Cross-lingual STS: the scores correlated with the gold similarity."""

    dataset = "sts_crosslingual"
    main_metric = "pearson"

    def measure(self, values: Sequence[float], data: Dataset) -> Metrics:
        """Pearson, Spearman, n, and Pearson per set."""
        return correlations(values, data)

    def sample_heads(self, data: Dataset) -> list[dict[str, Any]]:
        """Id and gold similarity."""
        return [{"id": i, "gold": g} for i, g in zip(data["id"], data["score"])]


def f_beta_chance(beta: float) -> Callable[[Mapping[str, Any]], float | None]:
    """Mean F-beta of a random ranking, from the counts ``FilterProtocol.info_values`` adds (``pairs``, ``bad_pairs``)."""

    def chance(values: Mapping[str, Any]) -> float | None:
        pairs, bad = values.get("pairs"), values.get("bad_pairs")
        return None if pairs is None or bad is None else mean_f_beta_chance(int(pairs), int(bad), beta)

    return chance


def filter_metric_list(score: str) -> tuple[Metric, ...]:
    """The declared metrics of a filtering task whose per-pair score is the samples' field ``score``.

    Mean F1 / F2's chance is a random ranking's expected value, which depends on the share of bad pairs.
    """
    return (
        Metric(
            "roc_auc", "ROC AUC", True, 0.5, f"auc:{score},label", f"ROC AUC of {score} separating good from bad pairs"
        ),
        Metric(
            "mean_f1",
            "mean F1",
            True,
            f_beta_chance(1.0),
            None,
            "mean F1 of finding the bad pairs over all cut-offs (lowest score first)",
        ),
        Metric(
            "mean_f2",
            "mean F2",
            True,
            f_beta_chance(2.0),
            None,
            "mean F2 of finding the bad pairs over all cut-offs (lowest score first)",
        ),
        Metric("n_good", "good pairs", None, None, None, "number of good pairs"),
        Metric("n_bad", "bad pairs", None, None, None, "number of bad pairs"),
    )


def pair_kinds(data: Dataset) -> list[str]:
    """Each pair's kind: the ``kind`` column, else ``good`` / ``bad`` from the label."""
    if "kind" in data.column_names:
        return list(data["kind"])
    return ["bad" if y == 0 else "good" for y in data["label"]]


def filter_metrics(values: Sequence[float], data: Dataset) -> Metrics:
    """ROC AUC, mean F1 and F2 over all cut-offs, counts, and the ROC AUC per kind of bad pair.

    Mean F1 / F2 follow Lo and Simard (2019, section 5.2): lowest score first, bad pairs as the class to find.
    """
    labels = list(data["label"])
    kinds = pair_kinds(data)
    metrics: Metrics = {
        "roc_auc": roc_auc(values, labels),
        "mean_f1": error_mean_f_beta(values, labels, 1.0),
        "mean_f2": error_mean_f_beta(values, labels, 2.0),
        "n_good": float(sum(labels)),
        "n_bad": float(len(labels) - sum(labels)),
    }
    for kind in sorted(set(kinds) - {"good"}):
        rows = [i for i, k in enumerate(kinds) if k in (kind, "good")]
        metrics[f"roc_auc[{kind}]"] = roc_auc([values[i] for i in rows], [labels[i] for i in rows])
    return metrics


class FilterProtocol(PairTask[ScorerT]):
    """Parallel-data filtering: rank the good pairs above the bad ones."""

    dataset = "multi30k_filter"
    main_metric = "roc_auc"

    def measure(self, values: Sequence[float], data: Dataset) -> Metrics:
        """ROC AUC, mean F1 and F2 (error detection), counts, and ROC AUC per kind of bad pair."""
        return filter_metrics(values, data)

    def info_values(self, output: TaskOutput) -> dict[str, Any]:
        """The arguments, ``output.extra`` and the numbers of pairs and of bad pairs (from the samples' labels)."""
        labels = [sample.get("label") for sample in output.samples]
        return {**super().info_values(output), "pairs": len(labels), "bad_pairs": sum(y == 0 for y in labels)}

    def sample_heads(self, data: Dataset) -> list[dict[str, Any]]:
        """Id, label and kind."""
        return [{"id": i, "label": y, "kind": k} for i, y, k in zip(data["id"], data["label"], pair_kinds(data))]
