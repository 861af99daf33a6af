"""Built-in plugin: YiSi-2 cross-lingual semantic similarity and its baselines.

Registrations only; nothing heavy is imported here.
"""

from harness.plugins.hookspecs import hookimpl
from harness_tasks.yisi.contracts import CONTRACTS


@hookimpl
def register_tasks(register):
    register(
        "yisi2_sts",
        "harness_tasks.yisi.tasks:Yisi2Sts",
        "YiSi-2 (layer-L token embeddings, idf-weighted) on cross-lingual STS: Pearson/Spearman with gold.",
    )
    register(
        "bert_sum_sts",
        "harness_tasks.yisi.tasks:BertSumSts",
        "Baseline: cosine of summed layer-L token vectors on cross-lingual STS: Pearson/Spearman with gold.",
    )
    register(
        "yisi2_filter",
        "harness_tasks.yisi.tasks:Yisi2Filter",
        "YiSi-2 as a parallel-data filter on good vs corrupted pairs: ROC AUC, mean F1/F2 over cut-offs.",
    )
    register(
        "bert_sum_filter",
        "harness_tasks.yisi.tasks:BertSumFilter",
        "Baseline: cosine of summed layer-L token vectors as a parallel-data filter: ROC AUC, mean F1/F2.",
    )
    register(
        "yisi2_filter_layers",
        "harness_tasks.yisi.layers:Yisi2FilterLayers",
        "yisi2_filter at every layer 0..L of the token embedder in one forward pass: metrics per layer, best layer.",
    )
    register(
        "yisi2_sts_layers",
        "harness_tasks.yisi.layers:Yisi2StsLayers",
        "yisi2_sts at every layer 0..L of the token embedder in one forward pass: Pearson per layer, best layer.",
    )


@hookimpl
def register_datasets(register):
    register(
        "sts_crosslingual",
        "harness_tasks.yisi.sts_data:StsLoader",
        "Cross-lingual STS: SemEval-2016 layout (STS.input/gs.<set>.txt) or sentence1/sentence2/score.",
    )
    register(
        "multi30k_filter",
        "harness_tasks.yisi.filter_data:Multi30kFilterLoader",
        "Good and seeded bad (mismatch, clause drop, word swap) pairs built from Multi30K.",
    )


@hookimpl
def register_families(register):
    register(
        "yisi",
        "harness_tasks.yisi.plots:PLOTS",
        "YiSi-2",
        tasks=(
            "yisi2_sts",
            "bert_sum_sts",
            "yisi2_filter",
            "bert_sum_filter",
            "yisi2_sts_layers",
            "yisi2_filter_layers",
        ),
        contracts=CONTRACTS,
    )
