"""The CoMMuTE tasks: TC, IC, GTC, GIC, the consistency rates and the image oracle.

All take ``lang``, ``ties``, ``prefix_removal`` and ``temperature``; see ``metrics`` for the
definitions and ``scoring`` for how perplexities are obtained. Per-sample records (one per
tuple) hold the perplexities by ``image|target`` and the decisions, for ``--log-samples`` and
the ``commute-iou`` command.

For a scorer whose scores cannot depend on the image (``uses_images = False``), every metric
that compares images (a task's ``image_metrics``) is undefined (Kashani Motlagh et al., WMT
2024, section 5.4): it is None with ``IMAGE_BLIND`` as the reason, and --images is not needed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from harness.adapters.cached_model import CachedModel
from harness.adapters.capabilities import Capability
from harness.errors import HarnessError
from harness.params import Param
from harness.run.context import RunContext
from harness.run.task import Metric, Task, TaskOutput
from harness_tasks.commute import contracts
from harness_tasks.commute.data import LANG_PARAM, target_language
from harness_tasks.commute.metrics import (
    TIES,
    OracleChoice,
    Pair,
    consistency_rates,
    ic_pair,
    is_tie,
    joint_rate,
    mean_rate,
    oracle_choices,
    replacement_rate,
    tc_pair,
)
from harness_tasks.commute.scoring import ImageRef, ScoringSettings, Slot, TupleJob, score_tables

if TYPE_CHECKING:
    from datasets import Dataset  # only a type here: importing datasets costs a second

TC_SLOTS: tuple[Slot, ...] = (("a", "a"), ("a", "inc_a"), ("b", "b"), ("b", "inc_b"))
IC_SLOTS: tuple[Slot, ...] = (("a", "a"), ("b", "a"), ("b", "b"), ("a", "b"))
MIX_SLOTS: tuple[Slot, ...] = (("mix", "a"), ("mix", "inc_a"), ("mix", "b"), ("mix", "inc_b"))
Table = dict[Slot, float]
IMAGE_BLIND = (
    "the scorer's scores cannot depend on the image (its adapter sets uses_images = False), so every "
    "comparison of two images is a tie by construction (Kashani Motlagh et al., WMT 2024, section 5.4)"
)


def tc_of(table: Table, ties: str, image_a: str = "a", image_b: str = "b") -> Pair:
    """TC decisions of a tuple with the given image labels."""
    return tc_pair(table[image_a, "a"], table[image_a, "inc_a"], table[image_b, "b"], table[image_b, "inc_b"], ties)


def ic_of(table: Table, ties: str) -> Pair:
    """IC decisions of a tuple with its two images."""
    return ic_pair(table["a", "a"], table["b", "a"], table["b", "b"], table["a", "b"], ties)


TIES_METRIC = Metric("ties", "ties", None, None, None, "share of the comparisons that are ties (they count as {ties})")


def rate(
    name: str, display: str, chance: float | None, fields: str, description: str, higher: bool | None = True
) -> Metric:
    """A CoMMuTE rate: the mean of per-tuple decisions ``fields`` of the samples."""
    return Metric(name, display, higher, chance, f"mean:{fields}", description)


def consistency_of(true: Pair, mixed: Pair) -> dict[str, float]:
    """A tuple's share of its two directions in IPR, INR, CPR and CNR (their mean over tuples is each rate)."""
    return consistency_rates([true], [mixed])


def tie_rate(tables: Sequence[Table], comparisons: Sequence[tuple[Slot, Slot]]) -> float:
    """The fraction of the comparisons (pairs of slots) that are ties."""
    total = len(tables) * len(comparisons)
    tied = sum(is_tie(table[x], table[y]) for table in tables for x, y in comparisons)
    return tied / total if total else float("nan")


class CommuteTask(Task["Dataset"]):
    """Shared parameters, data access and scoring of the CoMMuTE tasks."""

    family = "commute"
    version = 1
    requires = (Capability.TRANSLATION_SCORER,)
    dataset = "commute"
    params = {
        "lang": LANG_PARAM,
        "ties": Param(
            "wrong",
            "a tie counts as wrong (CoMMuTE's evaluate.py) or right (VGAMT's scorer)",
            choices=TIES,
            meaning=contracts.TIES.meaning,
        ),
        "prefix_removal": Param(
            False,
            "drop the longest token prefix the tuple's translations share before scoring",
            meaning=contracts.PREFIX.meaning,
        ),
        "temperature": Param(
            1.0,
            "divide the logits by this (positive) before the log-softmax",
            above=0.0,
            meaning=contracts.TEMPERATURE.meaning,
        ),
    }
    needs_images: ClassVar[bool] = False
    image_metrics: ClassVar[tuple[str, ...]] = ()  # undefined when the scores cannot depend on the image
    scorer_uses_images = False  # the evaluated scorer's ``uses_images`` (set by ``undefined``, which every run calls)

    def check(self, output: TaskOutput) -> list[str]:
        """Every comparison a tie: the values are set by the ``ties`` rule, not by the model (unless they are undefined)."""
        if output.per_seed and output.per_seed[0].get("ties") == 1.0 and not output.undefined:
            return [
                f"every comparison is a tie: the values are fixed by ties={self.args['ties']} (by construction), not by the model"
            ]
        directions = [(s.get("tc_ab"), s.get("tc_ba")) for s in output.samples]
        if not directions or not all(ab is not None and ba is not None and ab + ba == 1 for ab, ba in directions):
            return []
        if self.scorer_uses_images:
            return [
                "every tuple is right under TC in exactly one direction: TC = 0.5 and GTC = 0, as for a scorer that "
                "ignores the image: the images never changed which translation this model prefers (images that "
                "show nothing, as stand-ins, do that)"
            ]
        return [
            "every tuple is right under TC in exactly one direction: TC = 0.5 and GTC = 0, the values a scorer "
            "that ignores the image gets by construction (each image's incorrect translation is the other's correct one)"
        ]

    @property
    def settings(self) -> ScoringSettings:
        """The scoring settings of this task's arguments."""
        return ScoringSettings(
            target_language(self.args["lang"]), self.args["temperature"], self.args["prefix_removal"]
        )

    def undefined(self, model: CachedModel) -> dict[str, str]:
        """The metrics that ``model`` leaves undefined, with the reason: those comparing images, for an image-blind scorer
        (its adapter declares ``uses_images = False``; ``ModelAdapter`` declares the default, True)."""
        self.scorer_uses_images = bool(model.adapter.uses_images)  # ``check`` words its warning by it
        return {} if model.adapter.uses_images else dict.fromkeys(self.image_metrics, IMAGE_BLIND)

    def rows(self, data: Dataset, undefined: dict[str, str]) -> list[dict[str, Any]]:
        """The tuples as dicts; fails early when images are needed (for a metric ``undefined`` leaves defined) but were not given."""
        rows: list[dict[str, Any]] = data.to_list()
        if self.needs_images and not undefined and rows and not rows[0].get("image_a_path"):
            raise HarnessError(f"task {self.name!r} compares images: pass --images DIR (files named as in img.order)")
        return rows

    @staticmethod
    def output(metrics: dict[str, float], samples: list[dict[str, Any]], undefined: dict[str, str]) -> TaskOutput:
        """The task's output, with every undefined metric set to None."""
        return TaskOutput(
            [{name: None if name in undefined else value for name, value in metrics.items()}],
            samples,
            undefined=undefined,
        )

    @staticmethod
    def job(row: dict[str, Any], slots: Sequence[Slot], images: dict[str, ImageRef] | None = None) -> TupleJob:
        """A tuple's scoring job; by default images a, b and their mix from the row's paths."""
        a, b = row.get("image_a_path"), row.get("image_b_path")
        if images is None:
            images = {"a": a, "b": b, "mix": (a, b) if a and b else None}
        targets = {
            role: row[f"{'incorrect' if role.startswith('inc') else 'target'}_{role[-1]}"]
            for role in ("a", "b", "inc_a", "inc_b")
        }
        return TupleJob(row["source"], targets, images, tuple(slots))

    @staticmethod
    def sample(row: dict[str, Any], table: Table, **decisions: Any) -> dict[str, Any]:
        """A per-tuple record: identity, images, perplexities by ``image|target``, decisions."""
        return {
            "id": row["id"],
            "lines": [row.get("line_a"), row.get("line_b")],
            "source": row["source"],
            "image_a": row["image_a"],
            "image_b": row["image_b"],
            "ppl": {
                f"{image}|{role}": value if math.isfinite(value) else None for (image, role), value in table.items()
            },
            **decisions,
        }

    def score(self, rows: list[dict[str, Any]], model: CachedModel, slots: Sequence[Slot]) -> list[Table]:
        """Perplexity tables of all tuples."""
        return score_tables(model, [self.job(row, slots) for row in rows], self.settings)


class ContrastTask(CommuteTask):
    """TC, IC, GTC or GIC: a decision per direction, aggregated per direction or per tuple."""

    kind: ClassVar[str] = ""  # tc or ic: the name of the per-direction decisions in the samples
    slots: ClassVar[tuple[Slot, ...]] = ()
    comparisons: ClassVar[tuple[tuple[Slot, Slot], ...]] = ()
    decide: Callable[[Table, str], Pair]
    aggregate: Callable[[Sequence[Pair]], float]

    def evaluate(self, data: Dataset, model: CachedModel, ctx: RunContext) -> TaskOutput:
        """Score the needed slots, decide each direction, aggregate (decisions are None where undefined)."""
        undefined = self.undefined(model)
        rows = self.rows(data, undefined)
        tables = self.score(rows, model, self.slots)
        pairs = [self.decide(table, self.args["ties"]) for table in tables]
        kind = self.kind

        def decisions(p: Pair) -> dict[str, int | None]:
            values = (p.ab, p.ba, p.ab * p.ba) if not undefined else (None, None, None)
            return dict(zip((f"{kind}_ab", f"{kind}_ba", f"g{kind}"), values))

        samples = [self.sample(row, table, **decisions(p)) for row, table, p in zip(rows, tables, pairs)]
        metrics = {self.main_metric: self.aggregate(pairs), "ties": tie_rate(tables, self.comparisons)}
        return self.output(metrics, samples, undefined)


TC_COMPARISONS = ((("a", "a"), ("a", "inc_a")), (("b", "b"), ("b", "inc_b")))
IC_COMPARISONS = ((("a", "a"), ("b", "a")), (("b", "b"), ("a", "b")))


class CommuteTC(ContrastTask):
    """TC: is each image's correct translation less perplexing than the incorrect one?"""

    role = "commute_tc"
    main_metric = "tc"
    metrics = (
        rate(
            "tc",
            "TC",
            0.5,
            "tc_ab,tc_ba",
            "share of directions whose correct translation is less perplexing than the incorrect one",
        ),
        TIES_METRIC,
    )
    kind, slots, comparisons = "tc", TC_SLOTS, TC_COMPARISONS
    decide, aggregate = staticmethod(tc_of), staticmethod(mean_rate)


class CommuteGTC(ContrastTask):
    """GTC: both directions of a tuple right under TC."""

    role = "commute_gtc"
    main_metric = "gtc"
    metrics = (rate("gtc", "GTC", 0.25, "gtc", "share of tuples right under TC in both directions"), TIES_METRIC)
    kind, slots, comparisons = "tc", TC_SLOTS, TC_COMPARISONS
    decide, aggregate = staticmethod(tc_of), staticmethod(joint_rate)


class CommuteIC(ContrastTask):
    """IC: is each translation less perplexing with its own image than with the other one?"""

    role = "commute_ic"
    version = 2  # 2: undefined (None) for a scorer that ignores the image, instead of 0 or 1 by the tie rule
    main_metric = "ic"
    metrics = (
        rate(
            "ic",
            "IC",
            0.5,
            "ic_ab,ic_ba",
            "share of directions whose translation is less perplexing with its own image than with the other",
        ),
        TIES_METRIC,
    )
    needs_images = True
    image_metrics = ("ic",)
    kind, slots, comparisons = "ic", IC_SLOTS, IC_COMPARISONS
    decide, aggregate = staticmethod(ic_of), staticmethod(mean_rate)


class CommuteGIC(ContrastTask):
    """GIC: both directions of a tuple right under IC."""

    role = "commute_gic"
    version = 2  # 2: undefined (None) for a scorer that ignores the image, instead of 0 or 1 by the tie rule
    main_metric = "gic"
    metrics = (rate("gic", "GIC", 0.25, "gic", "share of tuples right under IC in both directions"), TIES_METRIC)
    needs_images = True
    image_metrics = ("gic",)
    kind, slots, comparisons = "ic", IC_SLOTS, IC_COMPARISONS
    decide, aggregate = staticmethod(ic_of), staticmethod(joint_rate)


class CommuteConsistency(CommuteTask):
    """IPR, INR, CPR, CNR: TC decisions with the true image against the 50/50 mixed-image baseline."""

    role = "commute_consistency"
    version = 2  # 2: the four rates are undefined (None) for a scorer that ignores the image
    main_metric = "ipr"
    metrics = (
        rate("ipr", "IPR", None, "ipr", "share of directions right with the image and wrong with the mixed image"),
        rate(
            "inr", "INR", None, "inr", "share of directions wrong with the image and right with the mixed image", False
        ),
        rate("cpr", "CPR", None, "cpr", "share of directions right with both the image and the mixed image", None),
        rate("cnr", "CNR", None, "cnr", "share of directions wrong with both the image and the mixed image", None),
        rate("tc", "TC", 0.5, "tc_ab,tc_ba", "TC with the true images"),
        rate("tc_mix", "TC (mixed image)", 0.5, "tc_mix_ab,tc_mix_ba", "TC with the 50/50 mix of the tuple's images"),
    )
    needs_images = True
    image_metrics = ("ipr", "inr", "cpr", "cnr")

    def evaluate(self, data: Dataset, model: CachedModel, ctx: RunContext) -> TaskOutput:
        """Score TC with the true images and with the mix of the tuple's two images."""
        undefined = self.undefined(model)
        rows = self.rows(data, undefined)
        tables = self.score(rows, model, TC_SLOTS + MIX_SLOTS)
        ties = self.args["ties"]
        image = [tc_of(table, ties) for table in tables]
        mixed = [tc_of(table, ties, "mix", "mix") for table in tables]
        metrics = {**consistency_rates(image, mixed), "tc": mean_rate(image), "tc_mix": mean_rate(mixed)}
        samples = [
            self.sample(
                row,
                table,
                tc_ab=i.ab,
                tc_ba=i.ba,
                tc_mix_ab=m.ab,
                tc_mix_ba=m.ba,
                **(dict.fromkeys(self.image_metrics) if undefined else consistency_of(i, m)),
            )
            for row, table, i, m in zip(rows, tables, image, mixed)
        ]
        return self.output(metrics, samples, undefined)


class CommuteOracle(CommuteTask):
    """Max / Min IC and GIC over k candidate images per translation, the replacement rate, TC and GTC there."""

    role = "commute_oracle"
    version = 2  # 2: IC, GIC and replacement rates undefined (None) for a scorer that ignores the image
    dataset = "commute_extended"
    main_metric = "max_gic"
    metrics = tuple(
        metric
        for name, word in (("max", "GIC-maximising"), ("min", "GIC-minimising"))
        for metric in (
            rate(
                f"{name}_gic",
                f"{name.capitalize()} GIC",
                None,
                f"{name}_gic",
                f"GIC at each tuple's {word} candidate images",
            ),
            rate(
                f"{name}_ic",
                f"{name.capitalize()} IC",
                None,
                f"{name}_ic",
                f"IC at each tuple's {word} candidate images",
            ),
            Metric(f"rr_{name}", f"RR {name}", None, None, None, f"share of the images the {word} oracle replaced"),
            Metric(
                f"{name}_tc", f"{name.capitalize()} TC", True, 0.5, None, f"TC at each tuple's {word} candidate images"
            ),
            Metric(
                f"{name}_gtc",
                f"{name.capitalize()} GTC",
                True,
                0.25,
                None,
                f"GTC at each tuple's {word} candidate images",
            ),
        )
    )
    needs_images = True
    image_metrics = ("max_ic", "max_gic", "rr_max", "min_ic", "min_gic", "rr_min")

    def evaluate(self, data: Dataset, model: CachedModel, ctx: RunContext) -> TaskOutput:
        """Score every candidate against both translations, choose, then score TC at the choices."""
        undefined = self.undefined(model)
        rows = self.rows(data, undefined)
        ties = self.args["ties"]
        jobs = [self.candidate_job(row) for row in rows]
        tables = score_tables(model, jobs, self.settings)
        choices = [self.choose(row, table, ties) for row, table in zip(rows, tables)]
        tc_jobs = [
            self.job(row, [slot for c in pair for slot in self.tc_slots(c)], job.images)
            for row, pair, job in zip(rows, choices, jobs)
        ]
        tc_tables = score_tables(model, tc_jobs, self.settings)
        metrics: dict[str, float] = {}
        samples = [
            self.sample(row, {**table, **extra}, chosen={}) for row, table, extra in zip(rows, tables, tc_tables)
        ]
        for index, name in enumerate(("max", "min")):
            chosen = [pair[index] for pair in choices]
            tc = [tc_of(table, ties, f"a{c.a}", f"b{c.b}") for table, c in zip(tc_tables, chosen)]
            ic = [c.ic for c in chosen]
            metrics.update(
                {
                    f"{name}_ic": mean_rate(ic),
                    f"{name}_gic": joint_rate(ic),
                    f"rr_{name}": replacement_rate(chosen),
                    f"{name}_tc": mean_rate(tc),
                    f"{name}_gtc": joint_rate(tc),
                }
            )
            for sample, row, c in zip(samples, rows, chosen):
                ic_ab, ic_ba = (None, None) if undefined else (c.ic.ab, c.ic.ba)
                sample[f"{name}_ic"] = None if undefined else (c.ic.ab + c.ic.ba) / 2
                sample[f"{name}_gic"] = None if undefined else c.ic.ab * c.ic.ba
                sample["chosen"][name] = {
                    "image_a": row["candidates_a"][c.a],
                    "image_b": row["candidates_b"][c.b],
                    "ic_ab": ic_ab,
                    "ic_ba": ic_ba,
                    "margin": c.margin,
                }
        return self.output(metrics, samples, undefined)

    def candidate_job(self, row: dict[str, Any]) -> TupleJob:
        """Every candidate image (``a<i>``, ``b<j>``) against both correct translations."""
        images = {
            **{f"a{i}": path for i, path in enumerate(row["candidates_a"])},
            **{f"b{j}": path for j, path in enumerate(row["candidates_b"])},
        }
        return self.job(row, [(label, role) for label in images for role in ("a", "b")], images)

    @staticmethod
    def tc_slots(choice: OracleChoice) -> list[Slot]:
        """The slots TC needs at a chosen image pair."""
        a, b = f"a{choice.a}", f"b{choice.b}"
        return [(a, "a"), (a, "inc_a"), (b, "b"), (b, "inc_b")]

    @staticmethod
    def choose(row: dict[str, Any], table: Table, ties: str) -> tuple[OracleChoice, OracleChoice]:
        """The tuple's GIC-maximising and GIC-minimising image pairs."""
        a_labels = [f"a{i}" for i in range(len(row["candidates_a"]))]
        b_labels = [f"b{j}" for j in range(len(row["candidates_b"]))]
        return oracle_choices(
            [table[x, "a"] for x in a_labels],
            [table[y, "a"] for y in b_labels],
            [table[y, "b"] for y in b_labels],
            [table[x, "b"] for x in a_labels],
            ties,
        )
