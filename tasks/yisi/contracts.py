"""The YiSi family's role contracts (Lo and Simard, CoNLL 2019): what an STS- or filter-like task offers, and its
layer sweeps. Light on purpose: the family's registration imports it."""

from harness.plugins.contracts import Argument, RoleContract

SOURCE = Argument("lang.source", "src", "language of the first sentence of each pair")
TARGET = Argument("lang.target", "tgt", "language of the second sentence of each pair")
_PAIR = (SOURCE, TARGET)
_STS = "Lo and Simard, CoNLL 2019 (YiSi-2 against gold cross-lingual similarity)"
_FILTER = "Lo and Simard, CoNLL 2019, sect. 5.2 (parallel-data filtering)"

CONTRACTS = (
    RoleContract("yisi2_sts", _PAIR, ("pearson", "spearman"), "YiSi-2 against gold similarity", _STS),
    RoleContract("bert_sum_sts", _PAIR, ("pearson", "spearman"), "summed-vector cosine against gold", _STS),
    RoleContract("yisi2_filter", _PAIR, ("roc_auc", "mean_f1", "mean_f2"), "YiSi-2 separating bad pairs", _FILTER),
    RoleContract(
        "bert_sum_filter",
        _PAIR,
        ("roc_auc", "mean_f1", "mean_f2"),
        "summed-vector cosine separating bad pairs",
        _FILTER,
    ),
    RoleContract("yisi2_sts_layers", _PAIR, ("best_pearson", "best_layer"), "yisi2_sts at every layer", _STS),
    RoleContract("yisi2_filter_layers", _PAIR, ("best_roc_auc", "best_layer"), "yisi2_filter at every layer", _FILTER),
)
