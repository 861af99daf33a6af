"""The tasks ``yisi2_sts``, ``bert_sum_sts``, ``yisi2_filter`` and ``bert_sum_filter``: each a scorer under a protocol.

| task | scorer (``scorers.py``) | protocol (``protocols.py``) |
|---|---|---|
| ``yisi2_sts`` | ``Yisi2Scorer`` | ``StsProtocol`` |
| ``bert_sum_sts`` | ``BertSumScorer`` | ``StsProtocol`` |
| ``yisi2_filter`` | ``Yisi2Scorer`` | ``FilterProtocol`` |
| ``bert_sum_filter`` | ``BertSumScorer`` | ``FilterProtocol`` |

sentence1 is in language ``src`` and sentence2 in ``tgt``; YiSi-2's precision runs over the
units of sentence1 and its recall over those of sentence2 (see ``metric.py``).
"""

from __future__ import annotations

from harness_tasks.yisi.filter_data import Multi30kFilterLoader
from harness_tasks.yisi.protocols import FilterProtocol, StsProtocol, filter_metric_list, sts_metrics
from harness_tasks.yisi.scorers import BertSumScorer, Yisi2Scorer
from harness_tasks.yisi.sts_data import StsLoader


class Yisi2Sts(StsProtocol[Yisi2Scorer]):
    """YiSi-2 on a cross-lingual STS set, correlated with the gold similarity."""

    role = "yisi2_sts"
    version = 1
    scorer_type = Yisi2Scorer
    params = {**StsLoader.params, **Yisi2Scorer.params}
    metrics = sts_metrics(Yisi2Scorer.name)


class BertSumSts(StsProtocol[BertSumScorer]):
    """The bert_sum baseline on a cross-lingual STS set: cosine of summed token vectors."""

    role = "bert_sum_sts"
    version = 1
    scorer_type = BertSumScorer
    params = {**StsLoader.params, **BertSumScorer.params}
    metrics = sts_metrics(BertSumScorer.name)


class Yisi2Filter(FilterProtocol[Yisi2Scorer]):
    """YiSi-2 as a parallel-data filter: rank good translation pairs above bad ones."""

    role = "yisi2_filter"
    version = 2  # 2: mean F1 / F2 of the bad pairs ranked lowest score first (Lo and Simard 2019, section 5.2)
    scorer_type = Yisi2Scorer
    params = {**Multi30kFilterLoader.params, **Yisi2Scorer.params}
    metrics = filter_metric_list(Yisi2Scorer.name)


class BertSumFilter(FilterProtocol[BertSumScorer]):
    """The bert_sum baseline as a parallel-data filter: same data and metrics as ``yisi2_filter``."""

    role = "bert_sum_filter"
    version = 2  # 2: mean F1 / F2 as in yisi2_filter version 2
    scorer_type = BertSumScorer
    params = {**Multi30kFilterLoader.params, **BertSumScorer.params}
    metrics = filter_metric_list(BertSumScorer.name)
