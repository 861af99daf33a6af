"""The ``Statistic`` language: what is recomputed from per-sample records (``KIND:FIELD,...``).

Light on purpose (no numpy): tasks declare statistics at import time; the numbers are computed by
``harness.results.bootstrap``. See ``docs/results.md`` for the kinds.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.errors import HarnessError

# kind -> number of fields (None: one or more)
ARITY: dict[str, int | None] = {"mean": None, "pearson": 2, "spearman": 2, "auc": 2, "moments": 6}
KINDS = tuple(ARITY)


@dataclass(frozen=True)
class Statistic:
    """``mean`` of fields; ``pearson``/``spearman``/``auc`` of (score, reference); ``moments`` (count, Σx, Σy, Σx², Σy², Σxy)."""

    kind: str
    fields: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.kind not in ARITY:
            raise HarnessError(f"unknown statistic {self.kind!r}: use {', '.join(KINDS)}")
        arity = ARITY[self.kind]
        if not self.fields or (arity is not None and len(self.fields) != arity):
            wanted = (
                "one or more fields"
                if arity is None
                else ("two fields: score,reference" if arity == 2 else "six fields: count,sx,sy,sxx,syy,sxy")
            )
            raise HarnessError(f"statistic {self.kind!r} takes {wanted}")

    @classmethod
    def parse(cls, text: str) -> Statistic:
        """``mean:hit``, ``mean:tc_ab,tc_ba``, ``pearson:yisi2,gold``, ``auc:yisi2,label``, ..."""
        kind, _, fields = text.partition(":")
        return cls(kind.strip(), tuple(f.strip() for f in fields.split(",") if f.strip()))

    @property
    def paired_per_id(self) -> bool:
        """Whether the statistic needs exactly one sample per id (pearson, spearman, auc)."""
        return self.kind in ("pearson", "spearman", "auc")

    def __str__(self) -> str:
        return f"{self.kind}:{','.join(self.fields)}"
