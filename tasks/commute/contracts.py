"""The CoMMuTE family's role contracts (Futeral et al., ACL 2023; Kashani Motlagh et al., WMT 2024): what a TC-,
IC-, GTC-, GIC-, consistency- or oracle-like task offers. Light on purpose: the family's registration imports it."""

from harness.plugins.contracts import Argument, RoleContract

TARGET = Argument("lang.target", "lang", "language of the translations (the source is English)")
TIES = Argument("commute.ties", "ties", "whether a tie in perplexity counts as right or wrong")
PREFIX = Argument("commute.prefix_removal", "prefix_removal", "drop the token prefix both translations share")
TEMPERATURE = Argument("scoring.temperature", "temperature", "divisor of the logits before the log-softmax")
_OPTIONAL = (TIES, PREFIX, TEMPERATURE)
_FUTERAL = "Futeral et al., ACL 2023 (the CoMMuTE benchmark and its evaluation)"
_KASHANI = "Kashani Motlagh et al., WMT 2024"  # GTC, GIC, consistency rates, the image oracle


def _role(role: str, metrics: tuple[str, ...], description: str, reference: str) -> RoleContract:
    return RoleContract(role, (TARGET,), metrics, description, reference, optional=_OPTIONAL)


CONTRACTS = (
    _role("commute_tc", ("tc",), "per image, the correct translation is less perplexing than the incorrect", _FUTERAL),
    _role("commute_ic", ("ic",), "per translation, its own image makes it less perplexing than the other", _FUTERAL),
    _role("commute_gtc", ("gtc",), "both directions of a tuple right under TC", _KASHANI),
    _role("commute_gic", ("gic",), "both directions of a tuple right under IC", _KASHANI),
    _role(
        "commute_consistency",
        ("ipr", "inr", "cpr", "cnr"),
        "TC with the true image against a 50/50 mixed-image baseline",
        _KASHANI,
    ),
    _role(
        "commute_oracle",
        ("max_gic", "max_ic", "min_gic", "min_ic"),
        "IC and GIC at the candidate images that maximise or minimise GIC",
        _KASHANI,
    ),
)
