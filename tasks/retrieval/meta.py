"""``harness meta``: the meta-evaluation of BackRetrieval (the paper's Table 1).

Reads the results of many models on the same data and direction; for every seed, correlates
(across models) XLR with BackRetrieval and XLR with CORR, by Pearson's r and Spearman's rho;
reports the mean and sample standard deviation over seeds. It refuses results that are not
comparable: a task whose signature (arguments, data revision, seeds, version) differs between
models, tasks run on different data or directions, different image similarities g, or
different seeds between tasks.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.params import parse_kv
from harness.results import RESULTS_FILE, ResultRecord, read_records

TASKS = ("xlr", "backretrieval", "corr")
COMPARED = ("backretrieval", "corr")
SHARED_ARGS = ("dataset", "src", "tgt", "split", "n", "columns")
MIN_MODELS = 3


@dataclass
class ModelRow:
    """One model's records, by task."""

    label: str
    identity: dict[str, Any]
    records: dict[str, ResultRecord]


def load_records(paths: Sequence[str]) -> list[ResultRecord]:
    """All records of the given results files (or folders holding ``results.jsonl``); bad lines are reported."""
    records: list[ResultRecord] = []
    for given in paths:
        path = Path(given)
        path = path / RESULTS_FILE if path.is_dir() else path
        if not path.is_file():
            raise HarnessError(f"results file {str(path)!r} not found")
        found, problems = read_records(path)
        for problem in problems:
            print(f"harness: warning: {problem.path}, line {problem.line}: {problem.reason}", file=sys.stderr)
        records.extend(found)
    return records


def select(records: Sequence[ResultRecord], where: dict[str, Any]) -> list[ResultRecord]:
    """The retrieval-family records whose task arguments match ``where`` (an argument a task lacks is not checked)."""
    return [
        r for r in records
        if r.task in TASKS and all(str(r.task_args[key]) == str(value) for key, value in where.items() if key in r.task_args)
    ]


def _model_key(record: ResultRecord) -> str:
    return json.dumps(record.model, sort_keys=True, default=str)


def group_models(records: Sequence[ResultRecord]) -> list[ModelRow]:
    """Records by model (the last record of a task wins), after checking that they are comparable."""
    by_task: dict[str, list[ResultRecord]] = {}
    for record in records:
        by_task.setdefault(record.task, []).append(record)
    if "xlr" not in by_task or "backretrieval" not in by_task:
        raise HarnessError("meta needs xlr and backretrieval results (found tasks: "
                           f"{', '.join(sorted(by_task)) or 'none'})")
    for task, task_records in by_task.items():
        signatures = sorted({r.task_signature for r in task_records})
        if len(signatures) > 1:
            listing = "; ".join(signatures)
            raise HarnessError(f"the {task} results are not comparable across models: {len(signatures)} different task "
                               f"signatures ({listing}); choose one configuration with --select, e.g. --select src=en,tgt=de")
    _check_shared(by_task)
    rows: dict[str, ModelRow] = {}
    for record in records:
        row = rows.setdefault(_model_key(record), ModelRow("", record.model, {}))
        row.records[record.task] = record
    _label(list(rows.values()))
    return list(rows.values())


def _label(rows: list[ModelRow]) -> None:
    """Short labels: the model name (a folder's last part), plus the arguments that tell same-named models apart."""
    by_name: dict[str, list[ModelRow]] = {}
    for row in rows:
        by_name.setdefault(str(row.identity.get("name")), []).append(row)
    for name, group in by_name.items():
        base = Path(name).name if "/" in name and Path(name).name else name
        args = [row.identity.get("args") or {} for row in group]
        differing = sorted({key for a in args for key in a if len({json.dumps(b.get(key), default=str) for b in args}) > 1})
        for row, a in zip(group, args):
            row.label = base + (f"({','.join(f'{k}={a.get(k)}' for k in differing)})" if differing else "")
        labels = [row.label for row in group]
        for row in group:
            if labels.count(row.label) > 1:
                row.label += f"@{str(row.identity.get('revision'))[-6:]}"


def _check_shared(by_task: dict[str, list[ResultRecord]]) -> None:
    first = {task: records[0] for task, records in by_task.items()}
    reference = first["xlr"]
    for task, record in first.items():
        for name in SHARED_ARGS:
            if record.task_args.get(name) != reference.task_args.get(name):
                raise HarnessError(f"{task} and xlr were run with different {name} ({record.task_args.get(name)!r} "
                                   f"vs {reference.task_args.get(name)!r}); meta compares one dataset and direction")
        if record.dataset.get("revision") != reference.dataset.get("revision"):
            raise HarnessError(f"{task} and xlr were run on different data ({record.dataset.get('revision')} vs "
                               f"{reference.dataset.get('revision')})")
        if record.seeds != reference.seeds:
            raise HarnessError(f"{task} and xlr were run with different seeds; run them with the same --seeds")
    g_values = {json.dumps(r.extra.get("g"), sort_keys=True) for task in COMPARED for r in by_task.get(task, [])}
    if len(g_values) > 1:
        raise HarnessError(f"backretrieval/corr results use different image similarities g: {', '.join(sorted(g_values))}")


def _correlations(x: list[float], y: list[float]) -> tuple[float | None, float | None]:
    from scipy import stats

    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return None, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pearson, spearman = stats.pearsonr(x, y).statistic, stats.spearmanr(x, y).statistic
    return tuple(float(v) if math.isfinite(v) else None for v in (pearson, spearman))  # type: ignore[return-value]


def _summary(values: list[float | None]) -> dict[str, Any]:
    defined = [v for v in values if v is not None]
    mean = sum(defined) / len(defined) if defined else None
    std = (math.sqrt(sum((v - mean) ** 2 for v in defined) / (len(defined) - 1)) if len(defined) > 1 else 0.0) if defined else None
    return {"mean": mean, "std": std, "seeds_defined": len(defined), "per_seed": values}


def meta_evaluate(rows: Sequence[ModelRow]) -> dict[str, Any]:
    """Per-seed Pearson and Spearman correlations of each compared task with xlr across models."""
    seeds = next(r.records["xlr"].seeds for r in rows if "xlr" in r.records)
    correlations: dict[str, Any] = {}
    for task in COMPARED:
        members = [r for r in rows if "xlr" in r.records and task in r.records]
        if not members:
            continue
        if len(members) < MIN_MODELS:
            raise HarnessError(f"correlating {task} with xlr needs at least {MIN_MODELS} models with both results, "
                               f"found {len(members)}")
        pearson, spearman = [], []
        for index in range(len(seeds)):
            pairs = [(m.records["xlr"].per_seed[m.records["xlr"].main_metric][index],
                      m.records[task].per_seed[m.records[task].main_metric][index]) for m in members]
            usable = [(a, b) for a, b in pairs if a is not None and b is not None]
            p, s = _correlations([a for a, _ in usable], [b for _, b in usable]) if len(usable) == len(pairs) else (None, None)
            pearson.append(p)
            spearman.append(s)
        correlations[task] = {"models": [m.label for m in members], "pearson": _summary(pearson), "spearman": _summary(spearman)}
    reference = rows[0].records["xlr"] if "xlr" in rows[0].records else next(iter(rows[0].records.values()))
    return {
        "signatures": {task: next(r.records[task].task_signature for r in rows if task in r.records)
                       for task in TASKS if any(task in r.records for r in rows)},
        "dataset": reference.dataset,
        "direction": f"{reference.task_args.get('src')}-{reference.task_args.get('tgt')}",
        "g": next((r.records[t].extra.get("g") for r in rows for t in COMPARED if t in r.records), None),
        "seeds": seeds,
        "models": [
            {"label": r.label, "model": r.identity,
             **{task: {"mean": rec.metrics.get(rec.main_metric), "std": rec.metrics_std.get(rec.main_metric),
                       "metric": rec.main_metric} for task, rec in r.records.items()}}
            for r in rows
        ],
        "correlations": correlations,
    }


def format_table(result: dict[str, Any]) -> str:
    """The correlation table and the per-model scores as plain text."""
    lines = [f"meta-evaluation {result['direction']} on {result['dataset'].get('loader')} {result['dataset'].get('split')}, "
             f"{len(result['models'])} models, {len(result['seeds'])} seeds (mean ± std over seeds)", ""]
    lines.append(f"{'with XLR':<16}{'Pearson r':>20}{'Spearman rho':>20}")
    for task, values in result["correlations"].items():
        cells = [_pm(values[kind]["mean"], values[kind]["std"]) for kind in ("pearson", "spearman")]
        lines.append(f"{task:<16}{cells[0]:>20}{cells[1]:>20}")
    width = max([len("model"), *(len(m["label"]) for m in result["models"])]) + 2
    lines += ["", f"{'model':<{width}}" + "".join(f"{task:>20}" for task in TASKS)]
    for model in result["models"]:
        cells = [_pm(model[t]["mean"], model[t]["std"]) if t in model else "-" for t in TASKS]
        lines.append(f"{model['label']:<{width}}" + "".join(f"{c:>20}" for c in cells))
    return "\n".join(lines)


def _pm(mean: float | None, std: float | None) -> str:
    return "undefined" if mean is None else f"{mean:.4f} ± {std or 0.0:.4f}"


def plot(result: dict[str, Any], path: Path) -> None:
    """Scatter plot of XLR against BackRetrieval, one labelled point per model (error bars: std over seeds)."""
    from matplotlib.figure import Figure

    models = [m for m in result["models"] if "xlr" in m and "backretrieval" in m]
    figure = Figure(figsize=(6.5, 5))
    axes = figure.subplots()
    for m in models:
        x, y = m["xlr"]["mean"], m["backretrieval"]["mean"]
        if x is None or y is None:
            continue
        axes.errorbar(x, y, xerr=m["xlr"]["std"] or 0, yerr=m["backretrieval"]["std"] or 0, fmt="o", capsize=3)
        axes.annotate(m["label"], (x, y), textcoords="offset points", xytext=(5, 5), fontsize=8)
    stats = result["correlations"].get("backretrieval", {})
    subtitle = ", ".join(f"{name} {_pm(stats[key]['mean'], stats[key]['std'])}" for key, name in (("pearson", "r"), ("spearman", "rho")) if key in stats)
    axes.set_title(f"XLR vs BackRetrieval ({result['direction']})\n{subtitle}", fontsize=10)
    axes.set_xlabel("XLR Recall@k")
    axes.set_ylabel("BackRetrieval Recall@k")
    axes.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=150)


class MetaCommand:
    """Correlate BackRetrieval and CORR with XLR across models: table, JSON and scatter plot."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The command's arguments."""
        parser.add_argument("results", nargs="+", help="results.jsonl files, or folders holding one, for several models")
        parser.add_argument("--select", default=None, help="keep only records whose task arguments match, k=v,... (e.g. src=en,tgt=de)")
        parser.add_argument("--output", default="meta", help="folder for meta.json and xlr_vs_backretrieval.png (default ./meta)")

    def run(self, args: argparse.Namespace) -> int:
        """Read, check, correlate, print and write."""
        records = select(load_records(args.results), parse_kv(args.select, "--select"))
        result = meta_evaluate(group_models(records))
        folder = Path(args.output)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "meta.json").write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
            plot(result, folder / "xlr_vs_backretrieval.png")
        except OSError as exc:
            raise HarnessError(f"cannot write to {str(folder)!r}: {exc.strerror or exc}") from None
        print(format_table(result))
        print(f"written: {folder / 'meta.json'}, {folder / 'xlr_vs_backretrieval.png'}", file=sys.stderr)
        return 0


COMMAND = MetaCommand()
