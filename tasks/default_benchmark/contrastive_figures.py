"""Figures and a table of CoMMuTE runs on the xling-shapes contrastive set (docs/commute.md).

``python -m harness_tasks.default_benchmark.contrastive_figures OUTPUT_DIR SET_DIR RESULTS.jsonl...``
writes ``commute_xling_metrics.png`` (TC, IC, GTC, GIC per language and model, 95 % intervals
over tuples; an undefined metric is marked, not drawn as 0), ``commute_xling_analyses.png``
(consistency rates, image oracle, prefix removal; means over the four languages),
``commute_xling_examples.png`` (one tuple per language) and prints the Markdown table.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from harness.results.records import ResultRecord, read_records

LANGS = ("de", "fr", "es", "cs")
MAIN = (
    ("commute_tc", "tc", "TC"),
    ("commute_ic", "ic", "IC"),
    ("commute_gtc", "gtc", "GTC"),
    ("commute_gic", "gic", "GIC"),
)


def label(record: ResultRecord) -> str:
    """The model as shown: its name, and ``(blank images)`` for the blanked variant."""
    return record.model["name"] + (" (blank images)" if record.model["args"].get("blank_images") else "")


def collect(files: list[str]) -> dict[tuple[str, str, str, bool], ResultRecord]:
    """The last record per (model label, task, language, prefix removal)."""
    found: dict[tuple[str, str, str, bool], ResultRecord] = {}
    for file in files:
        records, _ = read_records(file)
        for record in records:
            key = (label(record), record.task, record.task_args["lang"], bool(record.task_args["prefix_removal"]))
            found[key] = record
    return found


def value(found: dict[Any, ResultRecord], model: str, task: str, lang: str, metric: str, prefix: bool = False) -> Any:
    """(value, low, high) of a metric, or None when missing; value None when undefined."""
    record = found.get((model, task, lang, prefix))
    if record is None:
        return None
    interval = record.intervals.get(metric) or {}
    return record.metrics.get(metric), interval.get("low"), interval.get("high")


def table(found: dict[Any, ResultRecord], models: list[str]) -> str:
    """Markdown: per model and language, TC / IC / GTC / GIC with their intervals."""
    lines = ["| model | lang | TC | IC | GTC | GIC |", "|---|---|---|---|---|---|"]
    for model in models:
        for lang in LANGS:
            cells = []
            for task, metric, _ in MAIN:
                got = value(found, model, task, lang, metric)
                if got is None:
                    cells.append("-")
                elif got[0] is None:
                    cells.append("undefined")
                else:
                    cells.append(f"{got[0]:.3f} [{got[1]:.2f}, {got[2]:.2f}]")
            lines.append(f"| {model} | {lang} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def legend_handles(models: list[str]) -> list[Any]:
    """One colour patch per model (a model whose metrics are all undefined draws no bar to label)."""
    from matplotlib.patches import Patch

    return [Patch(color=f"C{m}", label=model) for m, model in enumerate(models)]


def metrics_figure(found: dict[Any, ResultRecord], models: list[str], path: Path) -> None:
    """Four panels, bars per language and model with 95 % intervals."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 4, figsize=(16, 4.2), sharey=True)
    width = 0.8 / len(models)
    for ax, (task, metric, name) in zip(axes, MAIN):
        for m, model in enumerate(models):
            for i, lang in enumerate(LANGS):
                x = i + (m - (len(models) - 1) / 2) * width
                got = value(found, model, task, lang, metric)
                if got is None:
                    continue
                if got[0] is None:
                    ax.text(x, 0.02, "undef.", rotation=90, ha="center", va="bottom", fontsize=7, color=f"C{m}")
                    continue
                error = [[got[0] - got[1]], [got[2] - got[0]]] if got[1] is not None else None
                ax.bar(x, got[0], width, color=f"C{m}", yerr=error, capsize=2)
        chance = 0.5 if name in ("TC", "IC") else (0.0 if name == "GTC" else 0.25)
        ax.axhline(chance, color="grey", linestyle="--", linewidth=0.8)
        ax.set_xticks(range(len(LANGS)), [f"en-{lang}" for lang in LANGS])
        ax.set_title(f"{name} (dashed: {'chance' if name != 'GTC' else 'image-blind'} {chance})")
        ax.set_ylim(0, 1.05)
    figure.legend(handles=legend_handles(models), loc="upper center", ncol=len(models), fontsize=8)
    figure.tight_layout(rect=(0, 0, 1, 0.9))
    figure.savefig(path, dpi=110)
    plt.close(figure)


def mean_over_langs(found: dict[Any, ResultRecord], model: str, task: str, metric: str, prefix: bool = False) -> Any:
    """The mean of a metric over the languages that have it; None if undefined anywhere, NaN if missing."""
    values = [value(found, model, task, lang, metric, prefix) for lang in LANGS]
    present = [v for v in values if v is not None]
    if not present:
        return float("nan")
    if any(v[0] is None for v in present):
        return None
    return sum(v[0] for v in present) / len(present)


def analyses_figure(found: dict[Any, ResultRecord], models: list[str], path: Path) -> None:
    """Consistency rates, the image oracle and prefix removal: means over the languages."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [
        ("consistency vs the mixed image", "commute_consistency", ["ipr", "inr", "cpr", "cnr"], False),
        ("image oracle (extended candidates)", "commute_oracle", ["max_ic", "min_ic", "max_gic", "min_gic"], False),
        ("prefix removal: TC, IC", None, ["tc", "tc+prefix", "ic", "ic+prefix"], True),
    ]
    figure, axes = plt.subplots(1, 3, figsize=(16, 4.2), sharey=True)
    width = 0.8 / len(models)
    for ax, (title, task, metrics, prefix_panel) in zip(axes, panels):
        for m, model in enumerate(models):
            for i, metric in enumerate(metrics):
                if prefix_panel:
                    base = metric.split("+")[0]
                    got = mean_over_langs(found, model, f"commute_{base}", base, prefix="+" in metric)
                else:
                    got = mean_over_langs(found, model, str(task), metric)
                x = i + (m - (len(models) - 1) / 2) * width
                if got is None:
                    ax.text(x, 0.02, "undef.", rotation=90, ha="center", va="bottom", fontsize=7, color=f"C{m}")
                elif got == got:  # not NaN
                    ax.bar(x, got, width, color=f"C{m}")
        ax.set_xticks(range(len(metrics)), [metric.upper().replace("_", " ") for metric in metrics])
        ax.set_title(title + " (mean of 4 languages)", fontsize=9)
        ax.set_ylim(0, 1.05)
    figure.legend(handles=legend_handles(models), loc="upper center", ncol=len(models), fontsize=8)
    figure.tight_layout(rect=(0, 0, 1, 0.9))
    figure.savefig(path, dpi=110)
    plt.close(figure)


def examples_figure(root: Path, path: Path) -> None:
    """The first tuple of each language in ``root``: its two images and their correct translations."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from PIL import Image

    langs = [lang for lang in LANGS if (root / f"en-{lang}" / "src.en").is_file()]
    figure, axes = plt.subplots(1, 2 * len(langs), figsize=(4 * len(langs), 2.6), squeeze=False)
    axes = axes[0]
    for i, lang in enumerate(langs):
        folder = root / f"en-{lang}"
        source = (folder / "src.en").read_text(encoding="utf-8").splitlines()[0]
        correct = (folder / f"correct.{lang}").read_text(encoding="utf-8").splitlines()[:2]
        names = (folder / "img.order").read_text(encoding="utf-8").splitlines()[:2]
        for j in range(2):
            ax = axes[2 * i + j]
            ax.imshow(Image.open(folder / "images" / names[j]))
            ax.set_title(f"{source}\n{lang}: {correct[j]}", fontsize=7)
            ax.set_xticks([])
            ax.set_yticks([])  # keep the frame: a white background stays visible
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: list[str]) -> int:
    """OUTPUT_DIR SET_DIR RESULTS.jsonl..."""
    output, root, files = Path(argv[0]), Path(argv[1]), argv[2:]
    output.mkdir(parents=True, exist_ok=True)
    found = collect(files)
    models = sorted({key[0] for key in found}, key=lambda name: (not name.startswith("xling"), name))
    groups: dict[str, int] = defaultdict(int)
    for key in found:
        groups[key[0]] += 1
    metrics_figure(found, models, output / "commute_xling_metrics.png")
    analyses_figure(found, models, output / "commute_xling_analyses.png")
    examples_figure(root, output / "commute_xling_examples.png")
    print(table(found, models))
    for model in models:
        means = {m: mean_over_langs(found, model, task, m) for task, m, _ in MAIN}
        oracle = {
            m: mean_over_langs(found, model, "commute_oracle", m) for m in ("max_ic", "min_ic", "rr_max", "rr_min")
        }
        consistency = {m: mean_over_langs(found, model, "commute_consistency", m) for m in ("ipr", "inr", "cpr", "cnr")}
        prefix = {m: mean_over_langs(found, model, f"commute_{m}", m, True) for m in ("tc", "ic", "gtc", "gic")}
        print(model, groups[model], "means", means, "oracle", oracle, "consistency", consistency, "prefix", prefix)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
