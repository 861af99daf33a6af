"""The encoder zoo's meta-evaluation (issue 27.2): is BackRetrieval significantly closer to XLR than CORR is?

One command runs xlr, backretrieval and corr (25 seeds) for every member of the zoo
(``harness_models.packaged.zoo.zoo_names()``) on IKEA test (en-de, de-en, en-fr, fr-en; g = the
dataset's image features) and on the default benchmark xling-shapes (en to and from de, fr, es, cs;
g = efficientnet-lite0), then ``harness meta`` on each data set, then the same test on deterministic
subsamples of the zoo (10, 20, 30, 40 models, 20 draws each, and the ten encoders of
docs/ikea-meta-evaluation.md), and writes under ``--output`` (default docs/zoo):

- ``results/<ikea|shapes>.jsonl.gz``: the results lines, compressed (no per-sample logs, no item intervals;
  the runs write them uncompressed under ``--work``, default ../zoo-runs);
- ``meta-<ikea|shapes>/``: ``harness meta``'s meta.json, its printed tables (meta.txt) and figures;
- ``subsamples.json``, ``figures/power_vs_models.png`` and ``summary.md``: the tables of docs/encoder-zoo.md.

Runs already in the results are skipped (``resume``); encodings come from the harness cache.

    python benchmarks/encoder_zoo.py [--data ../shared/data] [--output docs/zoo] [--shapes-size 300]
    python benchmarks/encoder_zoo.py --analyse-only        # meta and subsamples from the committed results
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
HARNESS = str(Path(sys.executable).with_name("harness"))
TASKS = ["xlr", "backretrieval", "corr"]
IKEA_DIRECTIONS = [("en", "de"), ("de", "en"), ("en", "fr"), ("fr", "en")]
SHAPES_DIRECTIONS = [(a, b) for lang in ("de", "fr", "es", "cs") for a, b in (("en", lang), (lang, "en"))]
SIZES = (10, 20, 30, 40)
DRAWS = 20
DRAW_RESAMPLES = 500  # bootstrap resamples of the models for each seeded draw (all and the ten: --resamples)
# the ten encoders of docs/ikea-meta-evaluation.md, by their zoo names (tfidf-char: the same recipe, zoo-tfidf-char24)
TEN = (
    "e5-small",
    "e5-small-trunc48",
    "e5-small-trunc12",
    "e5-small-noise0.04",
    "e5-small-noise0.08",
    "zoo-tfidf-char24",
    "random-encoder",
    "zoo-minilm-l6-mean",
    "zoo-e5-l12-cls",
    "zoo-e5-l12-mean",
)


def run_all(
    names: list[str],
    data: Path,
    work: Path,
    size: int,
    seeds: int,
    limit: int | None,
    datasets: list[str],
    reverse: bool,
) -> None:
    """xlr, backretrieval and corr for every model and direction of the data sets (done ones skipped)."""
    import harness

    warnings.simplefilter("ignore", harness.HarnessWarning)
    plans = [
        ("ikea", IKEA_DIRECTIONS, {"data_dir": str(data / "ikea")}, ""),
        ("shapes", SHAPES_DIRECTIONS, {"image_model": "efficientnet-lite0"}, f",size={size}"),
    ]
    # a seeded order, so that the models done first, if a run is cut short, are a random subset of the zoo
    order = [names[i] for i in np.random.default_rng(0).permutation(len(names))]
    order = order[::-1] if reverse else order  # a second process, from the other end: they meet in the middle
    for folder, directions, options, extra in (plan for plan in plans if plan[0] in datasets):
        for model in order:
            start = time.perf_counter()
            for src, tgt in directions:
                harness.evaluate(
                    TASKS,
                    model,
                    task_args=f"src={src},tgt={tgt}{extra}",
                    seeds=seeds,
                    output=str(work / folder),
                    resume=True,
                    resamples=0,
                    limit=limit,
                    **options,
                )
            print(f"{folder} {model}: {time.perf_counter() - start:.1f} s", flush=True)


def pack(work: Path, out: Path, folder: str) -> None:
    """The run's results lines, gzip-compressed (no timestamp in the header), into ``out/results``; of a task run
    twice on one model (two processes, ``--reverse``, meet in the middle), the last line."""
    last: dict[str, str] = {}
    for line in (work / folder / "results.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        last.pop(key := json.dumps([record["model"], record["task_signature"]], sort_keys=True), None)
        last[key] = line
    data = ("\n".join(last.values()) + "\n").encode()
    (out / "results").mkdir(parents=True, exist_ok=True)
    (out / "results" / f"{folder}.jsonl.gz").write_bytes(gzip.compress(data, mtime=0))


def unpack(out: Path, folder: str, into: Path) -> tuple[Path, list[str]]:
    """The committed results of one data set as ``into/<folder>/results.jsonl`` (what ``harness meta`` reads),
    without the models whose xlr, backretrieval or corr is undefined on some seed (a CLS vector of a low layer
    is nearly the same for every text, so corr's text side is constant within the tie tolerance on some
    seeds; a correlation across models is undefined on a seed where one model is): those models are returned."""
    lines = gzip.decompress((out / "results" / f"{folder}.jsonl.gz").read_bytes()).decode().splitlines()
    records = [json.loads(line) for line in lines]
    undefined = sorted(
        {r["model"]["name"] for r in records if any(v is None for v in r["per_seed"].get(r["main_metric"], []))}
    )
    (into / folder).mkdir(parents=True, exist_ok=True)
    kept = [line for line, r in zip(lines, records) if r["model"]["name"] not in undefined]
    (into / folder / "results.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    return into / folder, undefined


def meta(results: Path, out: Path, folder: str) -> None:
    """``harness meta`` over every direction of one data set; its printed tables kept in meta.txt."""
    target = out / f"meta-{folder}"
    command = [HARNESS, "meta", str(results), "--output", str(target)]
    print("$", " ".join(command), flush=True)
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    (target / "meta.txt").write_text(done.stdout, encoding="utf-8")


STRONG_XLR = 0.5  # the strong encoders: mean XLR R@10 at least this


def family(name: str) -> str:
    """The model family of a zoo member: each packaged network's layers per pooling, e5-small with its truncations
    and noise, the TF-IDF variants, the hashed baselines and the random encoders (docs/encoder-zoo.md)."""
    for prefix, pooled in (("zoo-e5-l", "e5-small-hf layers"), ("zoo-minilm-l", "minilm layers")):
        if name.startswith(prefix):
            return f"{pooled}, {'mean' if name.endswith('-mean') else 'CLS'}"
    if name.startswith(("e5-small", "zoo-e5-trunc", "zoo-e5-noise")):
        return "e5-small, truncated, noised"
    if name.startswith("zoo-tfidf-"):
        return "TF-IDF"
    if name == "zoo-lexical-ngrams" or name.startswith("zoo-toy-bow"):
        return "hashed n-grams and words"
    if name in ("random-encoder", "zoo-random-seed1"):
        return "random"
    raise ValueError(f"no family for the zoo member {name!r}")


def evidence(out: Path, folder: str, resamples: int = 2000) -> dict[str, Any]:
    """What the committed results of one data set (``out/results/<folder>.jsonl.gz``) support, per direction: the
    test over every encoder tested (Steiger's n = encoders), the two-stage bootstrap over their families, and both
    on the strong encoders (mean XLR >= ``STRONG_XLR``); with the encoders left out (``unpack``)."""
    from harness_tasks.retrieval.analysis.meta import aggregate_pairs, compared, group_models, load_records, select

    with tempfile.TemporaryDirectory() as scratch:
        results, left_out = unpack(out, folder, Path(scratch))
        records = select(load_records([str(results)]), {})
    by_direction: dict[str, list[Any]] = {}
    for record in records:
        by_direction.setdefault(f"{record.task_args['src']}-{record.task_args['tgt']}", []).append(record)
    found = {}
    for direction, direction_records in by_direction.items():
        members, (xlr, bkr, corr) = compared(group_models(direction_records))
        families = [family(m.identity["name"]) for m in members]
        strong = np.nanmean(xlr, axis=1) >= STRONG_XLR
        found[direction] = {
            "all": _evidence(xlr, bkr, corr, families, resamples),
            "strong": _evidence(xlr[strong], bkr[strong], corr[strong], np.array(families)[strong].tolist(), resamples),
        }
    best = aggregate_pairs(records)["best_vs_others"]  # SIGIR 2021 Table 2's claim, over the tested encoders
    return {"left_out": left_out, "directions": found, "best_vs_others": best}


def _evidence(xlr: np.ndarray, bkr: np.ndarray, corr: np.ndarray, families: Sequence[str], resamples: int) -> dict:
    """Steiger per seed, the bootstrap over models and the two-stage bootstrap over families, for these models."""
    from harness_tasks.retrieval.analysis import significance
    from harness_tasks.retrieval.analysis.correlation import per_seed

    found: dict[str, Any] = {"models": len(xlr), "families": len(set(families))}
    for task, values in (("backretrieval", bkr), ("corr", corr)):  # the mean over seeds of Pearson's r with XLR
        found[f"r_{task}"] = float(np.nanmean(per_seed(xlr, values))) if len(xlr) >= 3 else None
    for method in ("pearson", "spearman"):
        tested = significance.dependent_test(xlr, bkr, corr, method)
        models = significance.bootstrap_difference(xlr, bkr, corr, method, resamples=resamples)
        grouped = significance.family_bootstrap_difference(xlr, bkr, corr, families, method, resamples=resamples)
        found[method] = {
            "seeds": significance.significant_seeds(tested),
            "median_p": tested["median_p"],
            "combined_p": tested["combined_p"],
            "difference": models["difference"],
            "models": [models["low"], models["high"]],
            "families": [grouped["low"], grouped["high"]],
        }
    return found


def test_subset(rows: list[Any], resamples: int) -> dict[str, Any]:
    """Steiger per seed, its combination and the bootstrap over models, for these models."""
    from harness_tasks.retrieval.analysis.meta import meta_evaluate

    tested = meta_evaluate(rows, resamples=resamples)["significance"]
    return {
        method: {
            "significant_seeds": round(tested[method]["share_significant"] * tested[method]["seeds_tested"]),
            "seeds": tested[method]["seeds_tested"],
            "median_p": tested[method]["median_p"],
            "combined_p": tested[method]["combined_p"],
            "difference": tested[method]["bootstrap"]["difference"],
            "low": tested[method]["bootstrap"]["low"],
            "high": tested[method]["bootstrap"]["high"],
        }
        for method in ("pearson", "spearman")
    }


def subsets(names: list[str]) -> list[tuple[str, list[str]]]:
    """The ten encoders of the earlier study, DRAWS seeded draws of each size in SIZES below the zoo's, and all."""
    chosen = [("ten", [n for n in names if n in TEN])] if all(n in names for n in TEN) else []
    for size in (s for s in SIZES if s < len(names)):
        rng = np.random.default_rng(size)
        chosen += [(f"{size}#{d}", sorted(rng.choice(names, size, replace=False).tolist())) for d in range(DRAWS)]
    return [*chosen, ("all", names)]


def subsample(results: Path, folder: str, names: list[str], resamples: int) -> dict[str, Any]:
    """Per direction, the test on every subset of the zoo."""
    from harness_tasks.retrieval.analysis.meta import group_models, load_records, select

    records = select(load_records([str(results)]), {})
    by_direction: dict[str, list[Any]] = {}
    for record in records:
        by_direction.setdefault(f"{record.task_args['src']}-{record.task_args['tgt']}", []).append(record)
    found: dict[str, Any] = {}
    for direction, found_records in sorted(by_direction.items()):
        rows = {row.identity["name"]: row for row in group_models(found_records)}
        present = [n for n in names if n in rows]
        found[direction] = {
            label: {
                "models": len(members),
                **test_subset([rows[n] for n in members], resamples if "#" not in label else DRAW_RESAMPLES),
            }
            for label, members in subsets(present)
        }
        print(f"subsamples {folder} {direction}: {len(found[direction])} subsets", flush=True)
    return found


def summary(tested: dict[str, dict[str, Any]]) -> str:
    """The Markdown tables: the whole zoo per direction, then by number of models (median over the draws)."""
    lines = [
        "## All encoders, per direction",
        "",
        "| data | direction | models | Pearson: seeds p<0.05 | median p | combined p | Δr [95 % interval] "
        "| Spearman: seeds p<0.05 | median p | combined p | Δρ [95 % interval] |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for folder, directions in tested.items():
        for direction, found in directions.items():
            one = found["all"]
            lines.append(f"| {folder} | {direction} | {one['models']} | " + " | ".join(_cells(one)) + " |")
    lines += [
        "",
        "## By number of encoders (the ten of the earlier study; seeded draws of the zoo: median over 20 draws)",
        "",
        "| data | direction | models | Pearson: seeds p<0.05 | combined p | draws with combined p<0.05 "
        "| Δr | draws with interval > 0 | Spearman: seeds p<0.05 | combined p | draws with combined p<0.05 | Δρ "
        "| draws with interval > 0 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for folder, directions in tested.items():
        for direction, found in directions.items():
            groups: dict[str, list[dict[str, Any]]] = {}
            for label, one in found.items():
                groups.setdefault("ten" if label == "ten" else str(one["models"]), []).append(one)
            for group, ones in groups.items():
                cells = [f"| {folder} | {direction} | {group} "]
                for method in ("pearson", "spearman"):
                    values = [o[method] for o in ones]
                    cells.append(
                        f"| {np.median([v['significant_seeds'] for v in values]):.0f}/{values[0]['seeds']} "
                        f"| {_p(float(np.median([v['combined_p'] for v in values])))} "
                        f"| {sum(v['combined_p'] < 0.05 for v in values)}/{len(values)} "
                        f"| {np.median([v['difference'] for v in values]):+.3f} "
                        f"| {sum(v['low'] > 0 for v in values)}/{len(values)} "
                    )
                lines.append("".join(cells) + "|")
    return "\n".join(lines) + "\n"


def _cells(one: dict[str, Any]) -> list[str]:
    cells = []
    for method in ("pearson", "spearman"):
        v = one[method]
        cells += [
            f"{v['significant_seeds']}/{v['seeds']}",
            _p(v["median_p"]),
            _p(v["combined_p"]),
            f"{v['difference']:+.3f} [{v['low']:.3f}, {v['high']:.3f}]",
        ]
    return cells


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1e}" if value < 0.001 else f"{value:.3f}"


def power_plot(tested: dict[str, dict[str, Any]], path: Path) -> None:
    """Seeds with Steiger p < 0.05 and the combined p against the number of encoders, per data set and direction."""
    from matplotlib.figure import Figure

    from harness.leaderboard.figures import save

    figure = Figure(figsize=(11, 4.4))
    share_axes, p_axes = figure.subplots(1, 2)
    for folder, directions in tested.items():
        for direction, found in directions.items():
            sizes = sorted({o["models"] for label, o in found.items() if label != "ten"})
            style = "-" if folder == "ikea" else "--"
            share = [
                np.median(
                    [o["pearson"]["significant_seeds"] for lb, o in found.items() if lb != "ten" and o["models"] == s]
                )
                for s in sizes
            ]
            combined = [
                np.median([o["pearson"]["combined_p"] for lb, o in found.items() if lb != "ten" and o["models"] == s])
                for s in sizes
            ]
            (line,) = share_axes.plot(sizes, share, style, marker="o", label=f"{folder} {direction}")
            p_axes.plot(sizes, combined, style, marker="o", color=line.get_color())
    share_axes.set_xlabel("encoders (median over 20 seeded draws; last point: the whole zoo)")
    share_axes.set_ylabel("seeds of 25 with Steiger p < 0.05 (Pearson)")
    p_axes.set_xlabel("encoders")
    p_axes.set_ylabel("combined p (Rüger), Pearson")
    p_axes.set_yscale("log")
    p_axes.axhline(0.05, color="grey", linestyle=":", linewidth=1)
    share_axes.grid(alpha=0.3)
    p_axes.grid(alpha=0.3)
    share_axes.legend(fontsize=7, ncol=2)
    figure.suptitle("Is r(BkR, XLR) > r(CORR, XLR)? Power against the number of encoders", fontsize=10)
    figure.tight_layout()
    save(figure, path, dpi=130)


def main() -> int:
    from threadpoolctl import threadpool_limits

    for variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(variable, "1")  # one BLAS thread, for harness meta too: corr's products thrash
    threadpool_limits(1)  # a loaded 2-core machine; set here, not on import (docs_numbers imports this module)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--output", type=Path, default=REPO / "docs" / "zoo")
    parser.add_argument("--work", type=Path, default=REPO.parent / "zoo-runs", help="where the runs write results")
    parser.add_argument("--shapes-size", type=int, default=300, help="items of xling-shapes (default 300)")
    parser.add_argument("--seeds", type=int, default=25)
    parser.add_argument("--models", default=None, help="comma-separated subset of the zoo (default: all of it)")
    parser.add_argument("--limit", type=int, default=None, help="first N items only (a timing check)")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples of the models")
    parser.add_argument("--datasets", default="ikea,shapes", help="which data sets to run (default both)")
    parser.add_argument("--reverse", action="store_true", help="run the models in the reverse order")
    parser.add_argument("--pack-only", action="store_true", help="no runs: pack the results under --work, analyse")
    parser.add_argument("--analyse-only", action="store_true", help="no runs: meta and subsamples of the results")
    args = parser.parse_args()
    from harness_models.packaged.zoo import zoo_names

    names = args.models.split(",") if args.models else zoo_names()
    if args.pack_only:
        for folder in args.datasets.split(","):
            pack(args.work, args.output, folder)
    elif not args.analyse_only:
        datasets = args.datasets.split(",")
        run_all(names, args.data, args.work, args.shapes_size, args.seeds, args.limit, datasets, args.reverse)
        for folder in datasets:
            pack(args.work, args.output, folder)
    tested: dict[str, dict[str, Any]] = {}
    excluded: dict[str, list[str]] = {}
    drawn: dict[str, dict[str, list[str]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for folder in ("ikea", "shapes"):
            if (args.output / "results" / f"{folder}.jsonl.gz").is_file():
                results, excluded[folder] = unpack(args.output, folder, Path(scratch))
                print(f"{folder}: left out (a metric undefined on some seed): {', '.join(excluded[folder])}")
                meta(results, args.output, folder)
                members = [n for n in names if n not in excluded[folder]]
                tested[folder] = subsample(results, folder, members, args.resamples)
                drawn[folder] = dict(subsets(members))
    document = {"excluded": excluded, "subsets": drawn, "tests": tested}
    (args.output / "subsamples.json").write_text(json.dumps(document) + "\n", encoding="utf-8")
    (args.output / "figures").mkdir(parents=True, exist_ok=True)
    power_plot(tested, args.output / "figures" / "power_vs_models.png")
    text = summary(tested) + "".join(
        f"\n{folder}: left out, a metric undefined on some seed: {', '.join(found) or 'none'}\n"
        for folder, found in excluded.items()
    )
    (args.output / "summary.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
