"""The tasks ``xlr``, ``backretrieval`` and ``corr`` (Fain, Twomey and Bollegala, SIGIR 2021).

Sampling, per seed s: one permutation of the N items, ``numpy.random.default_rng(s).permutation(N)``.
``xlr`` takes its first n_xlr = min(n, N) items (sources with their own targets);
``backretrieval`` and ``corr`` take its first n_bkr = min(n, floor(N / 2)) items as sources and
the next n_bkr as targets, so the two sets are disjoint and no source's own translation is
among the targets. When n exceeds floor(N / 2) the two samples are capped at floor(N / 2) items
each; the size used is recorded as ``n_used`` in the results (``extra``). When n_bkr = n_xlr,
the sources of ``xlr`` and ``backretrieval`` are the same items.

g, the image similarity, is the cosine of image vectors: from ``--image-model`` when given,
otherwise the dataset's ``image_features``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from harness.adapters.cached_model import CachedModel
from harness.adapters.capabilities import Capability
from harness.errors import HarnessError
from harness.params import Param
from harness.run.context import RunContext
from harness.run.data import LazyColumn, Table
from harness.run.task import Metric, Task, TaskOutput, recall_chance
from harness_tasks.retrieval import contracts, metrics
from harness_tasks.retrieval.ikea import missing_features
from harness_tasks.retrieval.schema import image_features

if TYPE_CHECKING:
    from datasets import Dataset

IMAGE_CHUNK = 256  # images decoded at a time
# what a loader of the schema returns (``datasets`` is imported only by the loaders that need it)
Data = Union["Dataset", Table]

COMMON_PARAMS: dict[str, Param] = {
    "dataset": Param("ikea", "dataset loader: ikea, image-text, multi30k, or another loader with the retrieval schema"),
    "src": Param("en", "source language code", meaning=contracts.SOURCE.meaning),
    "tgt": Param("de", "target language code", meaning=contracts.TARGET.meaning),
    "n": Param(
        1000,
        "sample size per seed (capped by the data; see n_used in the results)",
        min=1,
        meaning=contracts.SAMPLE.meaning,
    ),
}
RANKING_PARAMS: dict[str, Param] = {
    "k": Param(10, "cut-off of Recall@k", min=1, meaning=contracts.CUT_OFF.meaning),
    "ties": Param(
        "expected",
        "how ties count: expected (random tie-breaking), optimistic or pessimistic",
        choices=metrics.TIE_RULES,
        meaning=contracts.TIES.meaning,
    ),
    "retrieval": Param(
        "cosine",
        "how the model's texts are ranked: cosine, or csls (Lample et al. 2018, sect. 2.3)",
        choices=metrics.RETRIEVALS,
        meaning=contracts.SCORING.meaning,
    ),
    "csls_k": Param(
        metrics.CSLS_NEIGHBOURS,
        "K of CSLS: the neighbourhood whose mean similarity is subtracted",
        min=1,
        meaning=contracts.CSLS_K.meaning,
    ),
}


def permutations(size: int, seeds: Sequence[int]) -> list[np.ndarray]:
    """The per-seed permutation of the items."""
    return [np.random.default_rng(seed).permutation(size) for seed in seeds]


def disjoint_samples(size: int, n: int, seeds: Sequence[int]) -> tuple[int, list[np.ndarray], list[np.ndarray]]:
    """(n used, sources per seed, targets per seed): two disjoint samples of min(n, size // 2) items."""
    used = min(n, size // 2)
    if used < 1:
        raise HarnessError(
            f"backretrieval and corr need at least 2 items for two disjoint samples, the data has {size}"
        )
    perms = permutations(size, seeds)
    return used, [p[:used] for p in perms], [p[used : 2 * used] for p in perms]


HUBNESS = (
    Metric(
        "hub_skew",
        "N{k} skew",
        None,
        None,
        None,
        "skewness of the k-occurrences N{k} of the {n_used} candidates (Radovanovic et al. 2010): "
        "large and positive when a few hubs are retrieved for many queries",
    ),
    Metric(
        "antihubs", "anti-hubs", None, None, None, "share of the candidates that are among no query's {k} most similar"
    ),
)
RECALL = Metric(
    "recall@k",
    "R@{k}",
    True,
    recall_chance,
    "mean:hit",
    "Recall@{k}: share of sources whose own target is among the {k} most similar of {n_used} candidates",
)


def mrr_chance(values: Mapping[str, Any]) -> float | None:
    """MRR of a random ranking of ``n_used`` candidates: H(n) / n."""
    n = values.get("n_used")
    return sum(1 / r for r in range(1, n + 1)) / n if isinstance(n, int) and n > 0 else None


def median_rank_chance(values: Mapping[str, Any]) -> float | None:
    """The median rank of a random ranking of ``n_used`` candidates: (n + 1) / 2."""
    n = values.get("n_used")
    return (n + 1) / 2 if isinstance(n, int) and n > 0 else None


def trivial_recall(task: str, output: TaskOutput, k: int) -> list[str]:
    """The warning when k is at least the number of candidates: every hit is certain."""
    used = output.extra.get("n_used")
    if isinstance(used, int) and k >= used:
        return [f"k = {k} >= n = {used} candidates: R@{k} is 1 for every model by construction"]
    return []


def filled(values: np.ndarray | None) -> np.ndarray:
    """A per-query array that the metric function fills for the task at hand (``metrics.PerQuery``)."""
    if values is None:
        raise RuntimeError("internal error: the retrieval metrics returned no per-query values for this task")
    return values


def image_vectors(model: CachedModel, data: Data) -> np.ndarray:
    """The image model's vectors of every image of ``data``; an image column that knows its images' content keys
    (``LazyColumn.content_keys``: the generated benchmark's) has its images made only where the cache lacks them."""
    images = data["image"]
    if isinstance(images, LazyColumn):
        return model.encode_images(images, keys=images.content_keys())
    return model.encode_images(list(images))


class _Subset:
    """The items a task needs (the union of its samples) and the samples in positions of that union."""

    def __init__(self, *sample_lists: Sequence[np.ndarray]):
        arrays = [a for samples in sample_lists for a in samples]
        self.items = np.unique(np.concatenate(arrays)) if arrays else np.zeros(0, dtype=np.int64)

    def local(self, samples: Sequence[np.ndarray]) -> list[np.ndarray]:
        return [np.searchsorted(self.items, s) for s in samples]


class RetrievalTask(Task[Data]):
    """What the three tasks share: parameters, dataset choice, encoding of the needed items."""

    family = "retrieval"  # a preset of any of them is a member too, in the same role (harness.plugins.membership)
    requires = (Capability.TEXT_ENCODER,)
    dataset = "ikea"
    main_metric = "recall@k"
    uses_seeds, default_seeds = True, 25
    params = COMMON_PARAMS

    def __init__(self, name: str, args: Mapping[str, Any] | None = None):
        super().__init__(name, args)
        # the loader the user chose (its own arguments, split and columns, reach it through --task-args); the runner
        # reads it from the instance, which Task's ClassVar declaration of a fixed loader does not foresee
        self.dataset = str(self.args["dataset"])

    def texts(self, model: CachedModel, data: Data, items: np.ndarray, lang: str) -> np.ndarray:
        """The text vectors of ``items`` in ``lang``."""
        column = data[f"text_{lang}"][:]  # all values at once (iterating a ``datasets`` column formats each row)
        return model.encode_texts([column[i] for i in items], lang=lang)

    def images(self, data: Data, items: np.ndarray, ctx: RunContext) -> tuple[np.ndarray, dict[str, Any]]:
        """The image vectors of ``items`` (g's inputs; read only: with every item, a table's own column may be
        returned) and a description of where they came from."""
        image_model = ctx.load_model("image", self.name)
        if image_model is not None:
            if "image" not in data.column_names:
                raise HarnessError(
                    f"task {self.name!r}: --image-model needs images, but the dataset has no 'image' column "
                    "(give --images DIR for a dataset that lists image files)"
                )
            with image_model.progress_run(Capability.IMAGE_ENCODER.description({}), len(items)):
                parts = [
                    image_vectors(image_model, data.select(items[i : i + IMAGE_CHUNK]))
                    for i in range(0, len(items), IMAGE_CHUNK)
                ]
            return np.concatenate(parts), {"source": "image_model", "model": image_model.identity.as_dict()}
        if "image_features" not in data.column_names:
            expected = missing_features(data)
            where = f"{expected} not found" if expected else "the dataset has no 'image_features' column"
            raise HarnessError(
                f"task {self.name!r} needs image vectors for g: {where}; "
                "give --image-model NAME (with --images DIR for datasets that list image files)"
            )
        return metrics.rows_of(image_features(f"dataset {self.dataset!r}", data), items), {"source": "image_features"}

    def retrieval(self) -> dict[str, Any]:
        """The ranking arguments of ``metrics.xlr`` and ``metrics.backretrieval``."""
        return {"retrieval": self.args["retrieval"], "neighbours": self.args["csls_k"]}

    @staticmethod
    def ids(data: Data) -> list[str]:
        return [str(i) for i in data["id"][:]]  # all values at once (iterating a ``datasets`` column formats each row)

    def joint_key(self) -> tuple[Any, ...] | None:
        """The three tasks on the same data set and languages evaluate together (``harness.run.joint``): xlr and
        backretrieval with the same ranking arguments share one text pass, and corr its text and image vectors;
        ``n`` may differ, each keeps its own samples."""
        if not isinstance(self, (Xlr, BackRetrieval, Corr)):
            return None
        return ("retrieval", *(repr(self.args[key]) for key in ("dataset", "src", "tgt")))

    @classmethod
    def evaluate_together(
        cls, members: Sequence[tuple[RetrievalTask, RunContext]], data: Data, model: CachedModel
    ) -> list[TaskOutput]:
        """The outputs of ``members`` in their order: one xlr and one backretrieval with the same ranking arguments
        from one text pass (``metrics.xlr_and_backretrieval``, the same numbers as apart), and each corr whose
        items are among theirs and whose image vectors come from the same source from the same vectors; any
        other member alone."""
        outputs: list[TaskOutput | None] = [None] * len(members)
        xlrs = [i for i, (task, _) in enumerate(members) if isinstance(task, Xlr)]
        bkrs = [i for i, (task, _) in enumerate(members) if isinstance(task, BackRetrieval)]
        corrs = [i for i, (task, _) in enumerate(members) if isinstance(task, Corr)]
        if len(xlrs) == 1 and len(bkrs) == 1 and members[xlrs[0]][0].same_ranking(members[bkrs[0]][0]):
            (xlr, xlr_ctx), (bkr, bkr_ctx) = members[xlrs[0]], members[bkrs[0]]
            assert isinstance(xlr, Xlr) and isinstance(bkr, BackRetrieval)  # as selected above
            samples = xlr.samples(len(data), xlr_ctx)
            _, sources, targets = disjoint_samples(len(data), bkr.args["n"], bkr_ctx.seeds)
            subset = _Subset(samples, sources, targets)
            images, g = bkr.images(data, subset.items, bkr_ctx)
            vectors = (
                bkr.texts(model, data, subset.items, bkr.args["src"]),
                bkr.texts(model, data, subset.items, bkr.args["tgt"]),
                images,
            )
            xlr_result, bkr_result = metrics.xlr_and_backretrieval(
                *vectors,
                subset.local(samples),
                subset.local(sources),
                subset.local(targets),
                bkr.args["k"],
                bkr.args["ties"],
                **bkr.retrieval(),
            )
            outputs[xlrs[0]] = xlr.output(data, xlr_ctx, samples, xlr_result)
            outputs[bkrs[0]] = bkr.output(data, bkr_ctx, sources, subset.items, bkr_result, g)
            images_from = bkr_ctx.aux_identities(bkr.name)
            for i in corrs:
                corr, ctx = members[i]
                assert isinstance(corr, Corr)  # as selected above
                used, corr_sources, corr_targets = corr.samples(len(data), ctx)
                inside = np.isin(_Subset(corr_sources, corr_targets).items, subset.items).all()
                if inside and ctx.aux_identities(corr.name) == images_from:
                    outputs[i] = corr.output(data, ctx, used, corr_sources, corr_targets, subset, vectors, dict(g))
        return [
            output if output is not None else task.evaluate(data, model, ctx)
            for output, (task, ctx) in zip(outputs, members)
        ]

    def same_ranking(self, other: RetrievalTask) -> bool:
        """True when both tasks rank with the same arguments (``RANKING_PARAMS``)."""
        return all(repr(self.args.get(key)) == repr(other.args.get(key)) for key in RANKING_PARAMS)


class Xlr(RetrievalTask):
    """Cross-lingual retrieval (ground truth): each source against the targets of the same sample."""

    version = 2  # 2: one seed when n >= the number of items (the seeds could not differ)
    role = "xlr"
    params = {**COMMON_PARAMS, **RANKING_PARAMS}
    metrics = (
        RECALL,
        Metric(
            "mrr",
            "MRR",
            True,
            mrr_chance,
            "mean:rr",
            "mean reciprocal rank of the own target among {n_used} candidates",
        ),
        Metric(
            "median_rank",
            "median rank",
            False,
            median_rank_chance,
            None,
            "median rank of the own target among {n_used} candidates",
        ),
        *HUBNESS,
    )

    def seeds_differ(self, size: int) -> bool:
        """With n >= the number of items every seed takes every item, and the ranking ignores their order."""
        return self.args["n"] < size

    def check(self, output: TaskOutput) -> list[str]:
        """k >= n."""
        return trivial_recall(self.name, output, self.args["k"])

    def evaluate(self, data: Data, model: CachedModel, ctx: RunContext) -> TaskOutput:
        """Recall@k, MRR and median rank per seed."""
        src, tgt = self.args["src"], self.args["tgt"]
        samples = self.samples(len(data), ctx)
        subset = _Subset(samples)
        result = metrics.xlr(
            self.texts(model, data, subset.items, src),
            self.texts(model, data, subset.items, tgt),
            subset.local(samples),
            self.args["k"],
            self.args["ties"],
            **self.retrieval(),
        )
        return self.output(data, ctx, samples, result)

    def samples(self, size: int, ctx: RunContext) -> list[np.ndarray]:
        """The items of each seed: the first min(n, size) of its permutation."""
        used = min(self.args["n"], size)
        if used < 1:
            raise HarnessError(f"task {self.name!r}: the dataset is empty")
        return [p[:used] for p in permutations(size, ctx.seeds)]

    def output(self, data: Data, ctx: RunContext, samples: list[np.ndarray], result: Any) -> TaskOutput:
        """The task's output from the metrics' results on ``samples``."""
        ids = self.ids(data)
        records = [
            {"seed": seed, "id": ids[item], "hit": float(hit), "rank": float(rank), "rr": float(rr)}
            for seed, sample, query in zip(ctx.seeds, samples, result.queries)
            for item, hit, rank, rr in zip(sample, query.hit, filled(query.rank), filled(query.reciprocal))
        ]
        return TaskOutput(result.metrics, records, {"n_used": len(samples[0]), "items": len(data)})


class BackRetrieval(RetrievalTask):
    """BackRetrieval: text retrieval into disjoint targets, then image retrieval back to the source."""

    role = "backretrieval"
    version = 1
    aux_roles = {"image": Capability.IMAGE_ENCODER}  # --image-model computes g from the images
    min_items = 2  # two disjoint samples (sources, targets) of at least one item each
    params = {**COMMON_PARAMS, **RANKING_PARAMS}
    metrics = (RECALL, *HUBNESS)

    def check(self, output: TaskOutput) -> list[str]:
        """k >= n."""
        return trivial_recall(self.name, output, self.args["k"])

    def evaluate(self, data: Data, model: CachedModel, ctx: RunContext) -> TaskOutput:
        """Recall@k per seed."""
        src, tgt = self.args["src"], self.args["tgt"]
        _, sources, targets = disjoint_samples(len(data), self.args["n"], ctx.seeds)
        subset = _Subset(sources, targets)
        images, g = self.images(data, subset.items, ctx)
        result = metrics.backretrieval(
            self.texts(model, data, subset.items, src),
            self.texts(model, data, subset.items, tgt),
            images,
            subset.local(sources),
            subset.local(targets),
            self.args["k"],
            self.args["ties"],
            **self.retrieval(),
        )
        return self.output(data, ctx, sources, subset.items, result, g)

    def output(
        self,
        data: Data,
        ctx: RunContext,
        sources: list[np.ndarray],
        items: np.ndarray,
        result: Any,
        g: dict[str, Any],
    ) -> TaskOutput:
        """The task's output from the metrics' results (``items``: the items behind the local indices)."""
        ids = self.ids(data)
        records = [
            {"seed": seed, "id": ids[item], "retrieved": ids[items[match]], "hit": float(hit)}
            for seed, sample, query in zip(ctx.seeds, sources, result.queries)
            for item, hit, match in zip(sample, query.hit, filled(query.match))
        ]
        return TaskOutput(result.metrics, records, {"n_used": len(sources[0]), "items": len(data), "g": g})


class Corr(RetrievalTask):
    """The CORR baseline: Spearman correlation of text and image distances over source x target pairs."""

    role = "corr"
    # v2: a side constant up to the tie tolerance is undefined, not ranked rounding noise;
    # v3: cosines within the tie tolerance share their mean rank (as retrieval ties them), not ordered by float32 noise;
    # v4: a tie group holds the values within the tolerance of its first value (v3 chained them, spanning far more)
    version = 4
    aux_roles = {"image": Capability.IMAGE_ENCODER}  # --image-model computes g from the images
    min_items = 2  # two disjoint samples (sources, targets) of at least one item each
    main_metric = "spearman"
    params = {
        **COMMON_PARAMS,
        "max_pairs": Param(1_000_000, "largest number of pairs per seed (beyond it: a random square sub-block)", min=1),
    }
    metrics = (
        Metric(
            "spearman",
            "Spearman ρ",
            True,
            0.0,
            "moments:pairs,sx,sy,sxx,syy,sxy",
            "Spearman's rho of text and image similarities over source x target pairs",
        ),
    )

    def evaluate(self, data: Data, model: CachedModel, ctx: RunContext) -> TaskOutput:
        """Spearman's rho per seed, on the same samples as backretrieval."""
        used, sources, targets = self.samples(len(data), ctx)
        subset = _Subset(sources, targets)
        images, g = self.images(data, subset.items, ctx)
        vectors = (
            self.texts(model, data, subset.items, self.args["src"]),
            self.texts(model, data, subset.items, self.args["tgt"]),
            images,
        )
        return self.output(data, ctx, used, sources, targets, subset, vectors, g)

    def samples(self, size: int, ctx: RunContext) -> tuple[int, list[np.ndarray], list[np.ndarray]]:
        """(n used, sources, targets) per seed: backretrieval's samples cut to ``metrics.corr_side`` items each."""
        used, sources, targets = disjoint_samples(size, self.args["n"], ctx.seeds)
        side = metrics.corr_side(used, self.args["max_pairs"])
        return used, [s[:side] for s in sources], [t[:side] for t in targets]

    def output(
        self,
        data: Data,
        ctx: RunContext,
        used: int,
        sources: list[np.ndarray],
        targets: list[np.ndarray],
        subset: _Subset,
        vectors: tuple[np.ndarray, np.ndarray, np.ndarray],
        g: dict[str, Any],
    ) -> TaskOutput:
        """The task's output on ``sources`` x ``targets``, from the source and target text vectors and the image
        vectors (``vectors``) of ``subset.items`` (which holds every item of the samples)."""
        per_seed, moments = metrics.corr_with_moments(
            *vectors, subset.local(sources), subset.local(targets), self.args["max_pairs"]
        )
        ids = self.ids(data)
        names = ("pairs", "sx", "sy", "sxx", "syy", "sxy")
        records = [
            {"seed": seed, "id": ids[item], **dict(zip(names, map(float, row)))}
            for seed, sample, rows in zip(ctx.seeds, sources, moments)
            for item, row in zip(sample, rows)
        ]
        side = metrics.corr_side(used, self.args["max_pairs"])
        return TaskOutput(
            per_seed, records, {"n_used": used, "pairs_per_seed": side * side, "items": len(data), "g": g}
        )
