"""How good must g be? Degrade the image similarity, measure g's quality, and re-run the meta-evaluation.

BackRetrieval (Fain et al., SIGIR 2021) pivots through an image similarity g; the paper leaves
open how good g must be (its section 6). This module degrades the dataset's image features in
two seeded ways, measures how much of g's neighbourhood structure survives, and reports the
BkR-XLR meta-correlation (``harness meta``'s own ``meta_evaluate``) at each level:

- ``noise``: x_i + ratio * ||x_i|| / sqrt(d) * z_i, z_i ~ N(0, I) from ``default_rng(seed)``, so that
  the noise vector's expected norm is about ``ratio`` times the feature's own norm;
- ``truncate``: the first ``dims`` coordinates of every feature vector.

g's quality is ``neighbour_agreement``: for every image, the share of its k nearest other images
under the undegraded g (cosine) that are still among its k nearest under the degraded g, ties
counted at their expected value (``metrics.hit_probability``), averaged over the images. It is
1 for an unchanged neighbourhood and k / (N - 1) for a random or constant g. k is BackRetrieval's
own cut-off, because BkR's image step asks exactly this: is the source's image within the top k
of the retrieved image's neighbours. ``rank_agreement`` (the mean per-image Spearman's rho of the
two similarity rows, which is what CORR sees) is reported beside it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness_tasks.retrieval.analysis.g_common import TASKS, ModelSpec, cosines, meta_summary
from harness_tasks.retrieval.analysis.g_data import DegradingRegistry, clean_features, cut_off_args, roles_of
from harness_tasks.retrieval.metrics import TIE_TOLERANCE, hit_probability

KINDS = ("noise", "truncate")
NAMES = {"noise": "noise (ratio ×)", "truncate": "truncation (dims d)"}


@dataclass(frozen=True)
class Degradation:
    """One way of degrading g: ``noise`` with a ratio, ``truncate`` with a number of dimensions, or none."""

    kind: str
    level: float

    @property
    def label(self) -> str:
        """A short name, also the folder of the condition's results: ``clean``, ``noise-1``, ``truncate-64``."""
        return "clean" if self.kind == "clean" else f"{self.kind}-{self.level:g}"

    def apply(self, features: np.ndarray, seed: int = 0) -> np.ndarray:
        """The degraded copy of ``features`` (rows = images)."""
        features = np.asarray(features, dtype=np.float64)
        if self.kind == "clean":
            return features.copy()
        if self.kind == "noise":
            if self.level < 0:
                raise HarnessError(f"noise ratio must be at least 0, got {self.level:g}")
            scale = self.level * np.linalg.norm(features, axis=1, keepdims=True) / np.sqrt(features.shape[1])
            return features + scale * np.random.default_rng(seed).standard_normal(features.shape)
        if self.kind == "truncate":
            dims = int(self.level)
            if dims != self.level or not 1 <= dims <= features.shape[1]:
                raise HarnessError(
                    f"truncate needs a whole number of dimensions in 1..{features.shape[1]}, got {self.level:g}"
                )
            return features[:, :dims].copy()
        raise HarnessError(f"unknown degradation {self.kind!r}: expected one of {', '.join(KINDS)}")


def neighbour_agreement(reference: np.ndarray, degraded: np.ndarray, k: int = 10) -> float:
    """Mean over images of the expected share of their k nearest others under ``reference`` kept in the top k under ``degraded``.

    Both are feature matrices with one row per image (columns may differ). The reference
    neighbours are the k largest cosines (stable order); under the degraded cosines each of them
    is in the top k with the probability ``hit_probability`` gives under random tie-breaking
    (cosines within ``TIE_TOLERANCE`` tie).
    """
    before, after = cosines(reference), cosines(degraded)
    size = len(before)
    if not 1 <= k < size - 1:
        raise HarnessError(f"neighbour agreement needs 1 <= k < N - 1, got k = {k} for N = {size} images")
    others = ~np.eye(size, dtype=bool)
    before_others = before[others].reshape(size, size - 1)
    after_others = after[others].reshape(size, size - 1)
    neighbours = np.argsort(-before_others, axis=1, kind="stable")[:, :k]
    chosen = np.take_along_axis(after_others, neighbours, axis=1)[:, :, None]
    rows = after_others[:, None, :]
    better = (rows > chosen + TIE_TOLERANCE).sum(axis=2)
    tied = (np.abs(rows - chosen) <= TIE_TOLERANCE).sum(axis=2) - 1
    return float(hit_probability(better, tied, k).mean())


def rank_agreement(reference: np.ndarray, degraded: np.ndarray) -> float | None:
    """Mean over images of Spearman's rho between their cosines to the other images before and after; None if all rows are constant."""
    from scipy.stats import rankdata

    before, after = cosines(reference), cosines(degraded)
    size = len(before)
    others = ~np.eye(size, dtype=bool)
    ranks = [
        rankdata(m[others].reshape(size, size - 1).round(6), axis=1) for m in (before, after)
    ]  # ~TIE_TOLERANCE ties
    centred = [r - r.mean(axis=1, keepdims=True) for r in ranks]
    denominator = np.sqrt((centred[0] ** 2).sum(axis=1) * (centred[1] ** 2).sum(axis=1))
    defined = denominator > 0
    if not defined.any():
        return None
    return float(((centred[0] * centred[1]).sum(axis=1)[defined] / denominator[defined]).mean())


@dataclass(frozen=True)
class Sweep:
    """What a sweep runs: one task per role (any task of the role), their arguments and data."""

    tasks: tuple[str, ...]
    task_args: dict[str, Any]
    data_dir: str | None
    registry: Any
    backretrieval: str


def run_condition(
    condition: Degradation,
    features: np.ndarray,
    sweep: Sweep,
    output: Path,
    models: Sequence[ModelSpec],
    *,
    seeds: int,
    noise_seed: int,
    k: int,
) -> dict[str, Any]:
    """Run the sweep's tasks for every model on data whose image features are degraded, and meta-evaluate."""
    import harness

    registry = sweep.registry
    if condition.kind != "clean":
        registry = DegradingRegistry(registry, partial(condition.apply, seed=noise_seed), condition.label)
    for model in models:
        harness.evaluate(
            list(sweep.tasks),
            model.name,
            model_args=model.args,
            data_dir=sweep.data_dir,
            seeds=seeds,
            task_args=sweep.task_args,
            output=str(output / condition.label),
            resume=True,
            registry=registry,
        )
    return summarize_level(condition, features, output, noise_seed=noise_seed, k=k)


def summarize_level(
    condition: Degradation, features: np.ndarray, output: Path, *, noise_seed: int, k: int
) -> dict[str, Any]:
    """g's quality at one level and ``harness meta``'s evaluation of the results already in ``output/<level>``."""
    degraded = condition.apply(features, noise_seed)
    return {
        "condition": condition.label,
        "kind": condition.kind,
        "level": condition.level,
        "agreement": neighbour_agreement(features, degraded, k),
        "rank_agreement": rank_agreement(features, degraded),
        "chance_agreement": k / (len(features) - 1),
        **meta_summary(output / condition.label),
    }


CORRELATION_HEADER = (
    f"{'BkR min-max':>14}{'r(BkR,XLR)':>17}{'rho(BkR,XLR)':>17}{'r(CORR,XLR)':>17}{'rho(CORR,XLR)':>17}"
)


def _correlation_cells(row: dict[str, Any]) -> str:
    """The BkR spread, and r / rho of BkR and CORR with XLR (mean ± std over seeds), under ``CORRELATION_HEADER``."""
    cells = [
        _pm(row["correlations"].get(task, {}).get(method))
        for task in ("backretrieval", "corr")
        for method in ("pearson", "spearman")
    ]
    return f"{_spread(row['bkr']):>14}" + "".join(f"{c:>17}" for c in cells)


def format_table(rows: Sequence[dict[str, Any]], k: int) -> str:
    """One line per condition: g's agreement, rank agreement, and r / rho of BkR and CORR with XLR (mean ± std over seeds);
    a legend under the table says what the columns are."""
    lines = [f"{'g':<14}{f'agree@{k}':>9}{'rho_g':>7}" + CORRELATION_HEADER]
    for row in rows:
        rho = "n/a" if row["rank_agreement"] is None else f"{row['rank_agreement']:.3f}"
        lines.append(f"{row['condition']:<14}{row['agreement']:>9.3f}{rho:>7}" + _correlation_cells(row))
    chance = rows[0]["chance_agreement"] if rows else None
    return "\n".join(
        [
            *lines,
            "",
            f"agree@{k}: share of each image's {k} nearest images under the clean g kept among its {k} nearest under "
            f"this g (1 = unchanged{'' if chance is None else f', {chance:.3f} = a random g'})",
            "rho_g: Spearman correlation of each image's cosines to the other images, this g against the clean g "
            "(mean over images)",
            CORRELATION_LEGEND,
        ]
    )


def format_ladder(rows: Sequence[dict[str, Any]], k: int) -> str:
    """One line per image model: g's scene gain, the BkR spread, and r / rho of BkR and CORR with XLR."""
    lines = [f"{'g':<22}{f'gain@{k}':>8}" + CORRELATION_HEADER]
    for row in rows:
        lines.append(f"{row['condition']:<22}{row['scene_gain']:>8.3f}" + _correlation_cells(row))
    legend = f"gain@{k}: how well g orders the scenes by shared content (0 = a random g, 1 = the best possible order)"
    return "\n".join([*lines, "", legend, CORRELATION_LEGEND])


CORRELATION_LEGEND = (
    "BkR min-max: the lowest and highest BkR over the models; r / rho(X,XLR): Pearson / Spearman correlation of X with "
    "XLR across the models (mean ± std over seeds)"
)
FEW_MODELS = 5  # below this, one model moves a correlation across models a long way


def warn_few_models(count: int) -> None:
    """A warning on stderr when the correlations across models rest on fewer than ``FEW_MODELS`` models."""
    if count < FEW_MODELS:
        print(
            f"harness: warning: g-sweep: the correlations with XLR are across only {count} models; one model "
            f"moves them a long way: read them as a sketch, and give {FEW_MODELS} or more --model for a finding",
            file=sys.stderr,
        )


def _spread(bkr: dict[str, float | None]) -> str:
    scores = [v for v in bkr.values() if v is not None]
    return f"{min(scores):.3f}-{max(scores):.3f}" if scores else "n/a"


def _pm(summary: dict[str, Any] | None) -> str:
    return "n/a" if not summary or summary["mean"] is None else f"{summary['mean']:+.3f} ± {summary['std']:.3f}"


def plot(rows: Sequence[dict[str, Any]], path: Path, *, k: int, title: str) -> None:
    """Meta-correlation with XLR against g's neighbour agreement: Pearson and Spearman panels, BkR solid, CORR dashed."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    figure = Figure(figsize=(7.4, 3.4))
    panels = figure.subplots(1, 2, sharey=True)
    styles = {"noise": ("o", "tab:blue"), "truncate": ("s", "tab:orange")}
    for axes, method, symbol in zip(panels, ("pearson", "spearman"), ("Pearson r", "Spearman ρ")):
        for kind, (marker, colour) in styles.items():
            series = sorted([r for r in rows if r["kind"] in (kind, "clean")], key=lambda r: r["agreement"])
            for task, line in (("backretrieval", "-"), ("corr", "--")):
                points = [
                    (r["agreement"], r["correlations"][task][method])
                    for r in series
                    if r["correlations"].get(task, {}).get(method, {}).get("mean") is not None
                ]
                if not points:
                    continue
                axes.errorbar(
                    [x for x, _ in points],
                    [s["mean"] for _, s in points],
                    yerr=[s["std"] for _, s in points],
                    fmt=marker + line,
                    color=colour,
                    markersize=4,
                    capsize=2,
                    linewidth=1.2,
                    alpha=1.0 if task == "backretrieval" else 0.6,
                    label=f"{'BkR' if task == 'backretrieval' else 'CORR'}, {NAMES[kind]}",
                )
            for r in series:
                value = r["correlations"].get("backretrieval", {}).get(method, {}).get("mean")
                if r["kind"] == kind and value is not None:
                    axes.annotate(
                        f"{r['level']:g}" + ("×" if kind == "noise" else "d"),
                        (r["agreement"], value),
                        xytext=(3, 5 if kind == "noise" else -9),
                        textcoords="offset points",
                        fontsize=6,
                        color=colour,
                    )
        chance = rows[0]["chance_agreement"]
        axes.axvline(chance, color="grey", linestyle=":", linewidth=1)
        axes.axhline(0, color="grey", linewidth=0.6)
        axes.set_xscale("log")
        axes.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))  # 0.01, 0.02, 0.05, 0.1, ...: never crowded
        axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axes.xaxis.set_minor_formatter(NullFormatter())
        axes.set_ylim(min(-0.1, axes.get_ylim()[0]), 1.08)
        axes.set_xlabel(f"g quality: neighbour agreement@{k} (log)")
        axes.set_title(f"{symbol} with XLR across models", fontsize=9)
        axes.grid(alpha=0.3, which="both")
    panels[0].set_ylabel("meta-correlation (mean ± std over seeds)")
    panels[0].annotate(
        "random g",
        (chance, panels[0].get_ylim()[0]),
        xytext=(3, 3),
        textcoords="offset points",
        fontsize=7,
        color="grey",
    )
    panels[1].legend(fontsize=7, loc="lower right")
    figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=200)


def data_name(data_dir: Path, pair: Path) -> str:
    """The data set as the user named it: its folder (``ikea``), or ``<folder>/<pair>`` when given a pair folder."""
    given = data_dir.resolve()
    return f"{given.parent.name}/{given.name}" if given == pair.resolve() else given.name


def _floats(text: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise HarnessError(f"expected comma-separated numbers, got {text!r}") from None


def preset_sweep(registry: Any, name: str) -> tuple[list[str], str | None, dict[str, Any]]:
    """``--preset NAME``: the preset in its role and the built-in tasks in the others, on the preset's data with the
    values it sets (its data source, loader, languages, split, columns)."""
    from harness.plugins.membership import task_membership

    membership = task_membership(registry, name)
    if membership.family != "retrieval" or membership.role not in TASKS:
        raise HarnessError(
            f"--preset {name!r} is a {membership.role!r} task of family {membership.family!r}; g-sweep needs an "
            f"xlr-, backretrieval- or corr-like task (family 'retrieval')"
        )
    task = registry.load("task", name)
    source = task.data_source() if hasattr(task, "data_source") else None  # none: its loader's default data
    tasks = [name if role == membership.role else role for role in TASKS]
    return tasks, str(source) if source else None, dict(getattr(task, "preset_values", {}))


class GSweepCommand:
    """How good must g be: degrade the image features, measure g's quality, and meta-evaluate BkR at each level."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The command's arguments."""
        parser.add_argument("--data-dir", help="the IKEA folder (with en.de/, en.fr/) or a pair folder")
        parser.add_argument(
            "--preset",
            default=None,
            help="instead of --data-dir and --task-args: a retrieval preset (an xlr-, backretrieval- or corr-like task) "
            "whose data source, languages and split the sweep uses",
        )
        parser.add_argument(
            "--tasks",
            default=None,
            help="the tasks to run, one per role: an xlr-like and a backretrieval-like task, and a corr-like one "
            "(built-in, a plugin's or a preset; each on its own data unless --data-dir), e.g. my_xlr,backretrieval,corr",
        )
        parser.add_argument(
            "--include-path", default=None, metavar="DIR", help="also know the YAML task presets of DIR"
        )
        parser.add_argument(
            "--image-models",
            default=None,
            help="instead of --data-dir: image encoders as g on the default benchmark xling-shapes, comma-separated "
            "(NAME or NAME:k=v;k=v; 'features' = its pixel statistics), e.g. efficientnet-lite0,efficientnet-lite1",
        )
        parser.add_argument(
            "--model", action="append", required=True, help="a text encoder, NAME or NAME:k=v;k=v (repeat; at least 3)"
        )
        parser.add_argument(
            "--task-args",
            default=None,
            help="task arguments, k=v,... (TASK.k=v for one task); with --data-dir and the built-in tasks the "
            "default is src=en,tgt=de,split=test",
        )
        parser.add_argument(
            "--noise", default="0.25,0.5,1,2,4", help="noise ratios to the feature norm (comma-separated)"
        )
        parser.add_argument(
            "--truncate", default="512,128,32,8,2,1", help="numbers of leading dimensions to keep (down to 1)"
        )
        parser.add_argument("--seeds", type=int, default=25, help="sampling seeds of the tasks (default 25)")
        parser.add_argument("--noise-seed", type=int, default=0, help="seed of the Gaussian noise (default 0)")
        parser.add_argument(
            "--k", type=int, default=10, help="Recall@k cut-off and the k of g's agreement (default 10)"
        )
        parser.add_argument(
            "--output", default="g-sweep", help="folder for the per-level results, sweep.json and g_sweep.png"
        )

    def run(self, args: argparse.Namespace) -> int:
        """Run every level (resumable), print the table, write sweep.json and the plot."""
        from harness.params import parse_kv

        given = parse_kv(args.task_args, "--task-args")
        models = [ModelSpec.parse(m) for m in args.model]
        if len(models) < 3:
            raise HarnessError(f"the meta-correlation needs at least 3 models, got {len(models)}")
        if args.preset is not None and (args.data_dir, args.image_models, args.tasks) != (None, None, None):
            raise HarnessError("--preset names the data itself: give it without --data-dir, --image-models and --tasks")
        if args.image_models is not None and (args.data_dir, args.tasks) != (None, None):
            raise HarnessError(
                "--image-models runs the built-in tasks on xling-shapes: give it without --data-dir, --tasks"
            )
        if (args.data_dir, args.preset, args.image_models, args.tasks) == (None, None, None, None):
            raise HarnessError(
                "give --data-dir or --preset (degrade that data's image features), --tasks (tasks of the roles on "
                "their own data) or --image-models (image encoders as g on xling-shapes), one of them"
            )
        warn_few_models(len(models))
        if args.image_models is not None:
            return self.run_ladder(args, models, {"src": "en", "tgt": "de", **given})
        sweep, title = self.sweep_of(args, given)
        features, _ = clean_features(sweep.registry, sweep.tasks, sweep.backretrieval, sweep.task_args, sweep.data_dir)
        conditions = [
            Degradation("clean", 0),
            *(Degradation("noise", v) for v in _floats(args.noise)),
            *(Degradation("truncate", v) for v in _floats(args.truncate)),
        ]
        output = Path(args.output)
        rows = []
        for condition in conditions:
            print(f"harness: g-sweep: {condition.label}", file=sys.stderr)
            rows.append(
                run_condition(
                    condition, features, sweep, output, models, seeds=args.seeds, noise_seed=args.noise_seed, k=args.k
                )
            )
        summary = {
            "data": title,
            "tasks": list(sweep.tasks),
            "task_args": sweep.task_args,
            "k": args.k,
            "seeds": args.seeds,
            "noise_seed": args.noise_seed,
            "models": [m.name + (f":{m.args}" if m.args else "") for m in models],
            "levels": rows,
        }
        (output / "sweep.json").write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")
        plot(
            rows,
            output / "g_sweep.png",
            k=args.k,
            title=f"BkR and CORR vs XLR as g degrades: {title}, {len(models)} encoders, {args.seeds} seeds",
        )
        print(format_table(rows, args.k))
        print(f"written: {output / 'sweep.json'}, {output / 'g_sweep.png'}", file=sys.stderr)
        return 0

    def sweep_of(self, args: argparse.Namespace, given: dict[str, Any]) -> tuple[Sweep, str]:
        """The tasks, arguments and data of a sweep, and its data as the title names it."""
        from harness.plugins.registry import get_registry
        from harness.run.presets import include_presets

        registry = get_registry()
        if args.include_path is not None:
            include_presets(registry, args.include_path)
        data_dir = args.data_dir
        if args.preset is not None:
            tasks, data_dir, values = preset_sweep(registry, args.preset)
            given = {**values, **given}
        elif args.tasks is not None:
            tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
        else:  # --data-dir with the built-in tasks
            tasks, given = list(TASKS), {"src": "en", "tgt": "de", "split": "test", **given}
        roles = roles_of(registry, tasks)
        task_args = {**given, **cut_off_args(registry, tasks, args.k)}
        sweep = Sweep(tuple(tasks), task_args, data_dir, registry, roles["backretrieval"])
        return sweep, self.title(sweep, given)

    @staticmethod
    def title(sweep: Sweep, given: dict[str, Any]) -> str:
        """``ikea test en-de``: the data as the user named it, its split and direction (what of them is known)."""
        from harness_tasks.retrieval.ikea import pair_folder

        src, tgt, split = given.get("src"), given.get("tgt"), given.get("split")
        if sweep.data_dir is not None and Path(sweep.data_dir).is_dir() and src and tgt:
            try:
                name = data_name(
                    Path(sweep.data_dir), pair_folder(Path(sweep.data_dir), str(src), str(tgt), str(split))
                )
            except HarnessError:
                name = Path(sweep.data_dir).name
        else:
            name = Path(sweep.data_dir).name if sweep.data_dir else ", ".join(sweep.tasks)
        return " ".join(str(part) for part in (name, split, f"{src}-{tgt}" if src and tgt else None) if part)

    def run_ladder(self, args: argparse.Namespace, models: Sequence[ModelSpec], given: dict[str, Any]) -> int:
        """Every image model as g on xling-shapes (resumable): print the table, write ladder.json."""
        from harness_tasks.retrieval.analysis.g_ladder import plot_ladder, run_rung

        src, tgt = str(given.get("src", "en")), str(given.get("tgt", "de"))
        size, seed = int(given.get("size", 1000)), int(given.get("seed", 0))
        rungs = [ModelSpec.parse(m.strip()) for m in args.image_models.split(",") if m.strip()]
        if not rungs:
            raise HarnessError("--image-models names no image model")
        output = Path(args.output)
        rows = []
        for rung in rungs:
            print(f"harness: g-sweep: image model {rung.name}", file=sys.stderr)
            rows.append(
                run_rung(rung, models, output, src=src, tgt=tgt, seeds=args.seeds, k=args.k, size=size, seed=seed)
            )
        summary = {
            "data": f"xling-shapes:size={size},seed={seed}",
            "direction": f"{src}-{tgt}",
            "k": args.k,
            "seeds": args.seeds,
            "models": [m.name + (f":{m.args}" if m.args else "") for m in models],
            "image_models": rows,
        }
        output.mkdir(parents=True, exist_ok=True)
        (output / "ladder.json").write_text(json.dumps(summary, indent=2, default=str) + "\n", encoding="utf-8")
        plot_ladder(
            rows,
            output / "ladder.png",
            k=args.k,
            title=f"BkR and CORR vs XLR by image encoder: xling-shapes {src}-{tgt}, {len(models)} encoders, {args.seeds} seeds",
        )
        print(format_ladder(rows, args.k))
        print(f"written: {output / 'ladder.json'}, {output / 'ladder.png'}", file=sys.stderr)
        return 0


COMMAND = GSweepCommand()
