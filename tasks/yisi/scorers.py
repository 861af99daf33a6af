"""Pair scorers: how a sentence pair gets its score (YiSi-2, bert_sum), apart from what the score is measured on.

A scorer reads the token embeddings of sentence1 (in ``src``) and sentence2 (in ``tgt``) and
gives every pair the score a protocol (``protocols.py``) measures, plus the fields each pair's
sample records. A task is one scorer under one protocol (``tasks.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from harness.adapters.cached_model import CachedModel
from harness.adapters.capabilities import TokenEmbeddings
from harness.errors import HarnessError
from harness.params import Param
from harness.run.data import files_revision, read_lines
from harness_tasks.yisi.metric import bert_sum, idf_table, prepare, yisi

if TYPE_CHECKING:
    from datasets import Dataset  # only a type here: importing datasets costs a second

IdfTable = tuple[Counter[str], int]


@dataclass(frozen=True)
class PairScores:
    """Every pair's measured score (``values``), its sample fields, and what the results line needs."""

    values: list[float]
    fields: list[dict[str, float]]
    extra: dict[str, Any] = field(default_factory=dict)


def embed_side(model: CachedModel, texts: Sequence[str], lang: str) -> list[TokenEmbeddings]:
    """Token embeddings of one side, in one cached call.

    Texts that tokenize identically (say, two words that both become [UNK]) share the vectors
    of the first of them: their vectors are equal in exact arithmetic, and sharing them keeps
    batching's rounding noise (which depends on ``--batch-size`` and on distributed shards)
    from splitting a tie between two pairs, which would change a ranking metric.
    """
    return share_alike(model.embed_tokens(list(texts), lang=lang))


def share_alike(embeddings: Sequence[TokenEmbeddings]) -> list[TokenEmbeddings]:
    """Each embedding, replaced by the first one with the same tokens."""
    first: dict[tuple[str, ...], TokenEmbeddings] = {}
    return [first.setdefault(tuple(e.tokens), e) for e in embeddings]


class PairScorer:
    """Scores sentence pairs from their token embeddings.

    ``name`` is the samples' field holding the measured score (and the score named in the
    metrics' formulas); ``params`` are the task arguments the scorer reads, beside the loader's
    ``src`` and ``tgt``. Argument checks belong in ``__init__`` (they fail when the task is built).
    """

    name: ClassVar[str] = ""
    params: ClassVar[Mapping[str, Param]] = {}

    def __init__(self, task: str, args: Mapping[str, Any]) -> None:
        self.task = task
        self.args = args

    def score(self, data: Dataset, model: CachedModel) -> PairScores:
        """Embed both sides (sentence1 first) and score every pair."""
        src, tgt = self.args["src"], self.args["tgt"]
        e_side = embed_side(model, data["sentence1"], src)
        f_side = embed_side(model, data["sentence2"], tgt)
        return self.score_sides(e_side, f_side, model)

    def score_sides(
        self, e_side: Sequence[TokenEmbeddings], f_side: Sequence[TokenEmbeddings], model: CachedModel
    ) -> PairScores:
        """Score the pairs (e_side[i], f_side[i]); ``model`` embeds anything else the scorer needs."""
        raise NotImplementedError


YISI2_PARAMS = {
    "alpha": Param(0.5, "YiSi-2 = PR / (alpha P + (1 - alpha) R); 0.5 is the harmonic mean", min=0.0, max=1.0),
    "idf": Param(
        "corpus",
        "unit weights: idf from each side of the evaluated corpus, from reference files, or none",
        choices=("corpus", "reference", "none"),
    ),
    "idf_src_file": Param(None, "with idf=reference: text file, one src sentence per line", str),
    "idf_tgt_file": Param(None, "with idf=reference: text file, one tgt sentence per line", str),
}


class Yisi2Scorer(PairScorer):
    """YiSi-2 (``metric.yisi``): precision over sentence1's units, recall over sentence2's; samples add P and R."""

    name = "yisi2"
    params = YISI2_PARAMS

    def __init__(self, task: str, args: Mapping[str, Any]) -> None:
        super().__init__(task, args)
        files = (args["idf_src_file"], args["idf_tgt_file"])
        if args["idf"] == "reference" and None in files:
            raise HarnessError(f"task {task!r}: idf=reference needs idf_src_file and idf_tgt_file")
        if args["idf"] != "reference" and files != (None, None):
            raise HarnessError(f"task {task!r}: idf_src_file / idf_tgt_file are used only with idf=reference")

    def score_sides(
        self, e_side: Sequence[TokenEmbeddings], f_side: Sequence[TokenEmbeddings], model: CachedModel
    ) -> PairScores:
        """YiSi-2 of every pair, with the idf weights of ``tables``."""
        return self.score_weighted(e_side, f_side, self.tables(e_side, f_side, model))

    def tables(
        self, e_side: Sequence[TokenEmbeddings], f_side: Sequence[TokenEmbeddings], model: CachedModel
    ) -> tuple[IdfTable | None, IdfTable | None]:
        """The idf tables of the two sides (None: every unit weighs 1); they depend on the tokens only."""
        return (
            self._table(e_side, model, self.args["src"], self.args["idf_src_file"]),
            self._table(f_side, model, self.args["tgt"], self.args["idf_tgt_file"]),
        )

    def _table(
        self, side: Sequence[TokenEmbeddings], model: CachedModel, lang: str, file: str | None
    ) -> IdfTable | None:
        if self.args["idf"] == "none":
            return None
        if self.args["idf"] == "corpus" or file is None:  # with idf=reference, __init__ checked both files
            return idf_table(e.tokens for e in side)
        lines = [line for line in read_lines(file) if line.strip()]
        return idf_table(e.tokens for e in model.embed_tokens(lines, lang=lang))

    def score_weighted(
        self,
        e_side: Sequence[TokenEmbeddings],
        f_side: Sequence[TokenEmbeddings],
        tables: tuple[IdfTable | None, IdfTable | None],
    ) -> PairScores:
        """YiSi-2 of every pair given the two sides' idf tables."""
        e_table, f_table = tables
        scores = [yisi(prepare(e, e_table), prepare(f, f_table), self.args["alpha"]) for e, f in zip(e_side, f_side)]
        return PairScores(
            [f for _, _, f in scores],
            [{"yisi2": f, "precision": p, "recall": r} for p, r, f in scores],
            self.reference_extra(),
        )

    def reference_extra(self) -> dict[str, Any]:
        """With idf=reference, the revision of the reference files (for the results line)."""
        if self.args["idf"] != "reference":
            return {}
        return {"idf_reference": files_revision([self.args["idf_src_file"], self.args["idf_tgt_file"]])}


class BertSumScorer(PairScorer):
    """The paper's baseline (``metric.bert_sum``): the cosine of the summed token vectors of the two sides."""

    name = "bert_sum"

    def score_sides(
        self, e_side: Sequence[TokenEmbeddings], f_side: Sequence[TokenEmbeddings], model: CachedModel
    ) -> PairScores:
        """bert_sum of every pair."""
        values = [bert_sum(e, f) for e, f in zip(e_side, f_side)]
        return PairScores(values, [{"bert_sum": v} for v in values])
