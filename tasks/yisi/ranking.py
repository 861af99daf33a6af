"""Ranking and correlation metrics: ROC AUC, mean F-beta over all cut-offs, Pearson, Spearman.

Label 1 marks a good pair, label 0 a bad one (a pair with a translation error).

- ROC AUC: the probability that a random good pair scores above a random bad one, ties
  counting 1/2 (the Mann-Whitney U statistic divided by n_good * n_bad).
- Mean F-beta (``mean_f_beta``): the items are ranked by score, highest first, and the items
  labelled 1 are the class to find. For every cut-off k = 1..N the top k items are retrieved;
  with TP_k the positives among them and G the number of positives,
  F_beta(k) = (1 + b^2) TP_k / (b^2 G + k) (precision TP_k / k, recall TP_k / G). The metric is
  the mean of F_beta(k) over the N cut-offs. Within a run of tied scores the order is undefined,
  so TP_k is its expectation under a random order of the run; as F_beta(k) is linear in TP_k,
  the result is exactly the expected mean F-beta under random tie-breaking: ties never favour
  the model.
- Error-detection mean F-beta (``error_mean_f_beta``), Lo and Simard (CoNLL 2019, section 5.2,
  Table 6): the pairs are ranked by *increasing* score, so that those most likely to contain a
  translation error come first, and the bad pairs are the class to find: ``mean_f_beta`` of the
  negated scores for the bad pairs.
- Its chance level (``mean_f_beta_chance``): under a random ranking of N pairs with E bad ones,
  E[TP_k] = k E / N, and F_beta(k) is linear in TP_k, so the expected mean F-beta is
  mean over k = 1..N of (1 + b^2)(k E / N) / (b^2 E + k). It depends on the error rate E / N:
  0.451 / 0.473 (F1 / F2) with half the pairs bad (N = 2000), 0.079 / 0.151 at 4.6 % bad.

Undefined values (no good or no bad pair for AUC, no pair of the class to find for F, fewer
than two pairs or a constant input for correlations) are None.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def roc_auc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """ROC AUC of ``scores`` for ``labels`` (1 = good), ties counting 1/2."""
    values, classes = np.asarray(scores, dtype=np.float64), np.asarray(labels)
    good, bad = values[classes == 1], values[classes == 0]
    if len(good) == 0 or len(bad) == 0:
        return None
    from scipy import stats  # here: importing scipy.stats costs most of a second

    u = stats.mannwhitneyu(good, bad, alternative="two-sided", method="asymptotic").statistic
    return float(u / (len(good) * len(bad)))


def mean_f_beta(scores: Sequence[float], labels: Sequence[int], beta: float) -> float | None:
    """Mean F-beta of the items labelled 1 over all cut-offs of the list ranked highest score first.

    Expected under random tie-breaking; None without input or without an item labelled 1.
    """
    values, classes = np.asarray(scores, dtype=np.float64), np.asarray(labels, dtype=np.float64)
    n, positives = len(values), classes.sum()
    if n == 0 or positives == 0:
        return None
    order = np.argsort(-values, kind="stable")
    ranked_scores, ranked_labels = values[order], classes[order]
    starts = np.flatnonzero(np.r_[True, ranked_scores[1:] != ranked_scores[:-1]])
    ends = np.r_[starts[1:], n]
    group_good = np.add.reduceat(ranked_labels, starts)
    good_before = np.r_[0.0, np.cumsum(group_good)[:-1]]
    group = np.repeat(np.arange(len(starts)), ends - starts)
    k = np.arange(1, n + 1, dtype=np.float64)
    true_positives = good_before[group] + (k - starts[group]) * group_good[group] / (ends - starts)[group]
    b2 = beta * beta
    return float(np.mean((1 + b2) * true_positives / (b2 * positives + k)))


def mean_f_beta_chance(pairs: int, positives: int, beta: float) -> float | None:
    """Expected mean F-beta of a random ranking of ``pairs`` items of which ``positives`` are the class to find.

    None without items or without a positive (as ``mean_f_beta``).
    """
    if pairs <= 0 or positives <= 0:
        return None
    k = np.arange(1, pairs + 1, dtype=np.float64)
    b2 = beta * beta
    return float(np.mean((1 + b2) * (k * positives / pairs) / (b2 * positives + k)))


def error_mean_f_beta(scores: Sequence[float], labels: Sequence[int], beta: float) -> float | None:
    """Lo and Simard's mean F-beta of the bad pairs (label 0), ranked by increasing score; ties as in ``mean_f_beta``."""
    return mean_f_beta([-float(s) for s in scores], [1 - int(y) for y in labels], beta)


def _varies(values: np.ndarray) -> bool:
    return len(values) >= 2 and bool(np.ptp(values) > 0)


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson's r, or None when undefined."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    from scipy import stats  # here: importing scipy.stats costs most of a second

    return float(stats.pearsonr(a, b).statistic) if _varies(a) and _varies(b) else None


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho (ties get average ranks), or None when undefined."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    from scipy import stats  # here: importing scipy.stats costs most of a second

    return float(stats.spearmanr(a, b).statistic) if _varies(a) and _varies(b) else None
