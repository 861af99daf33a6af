"""``harness meta``: the meta-evaluation of BackRetrieval (SIGIR 2021, Tables 1 and 2, Figure 3).

Reads the results of many models on the same data; per direction, for every seed, correlates
(across models) XLR with BackRetrieval and XLR with CORR, by Pearson's r and Spearman's rho
(``correlation``), reports the mean and sample standard deviation over seeds, and tests whether
BkR tracks XLR better than CORR (``significance``). Over several directions of one data set it
also averages BkR over the language pairs and draws a box per model (``aggregations``). It
refuses results that are not comparable: a task whose signature (arguments, data revision,
seeds, version) differs between models, tasks that do not pair under the family's ``META`` pairing
(different data, or an argument of ``META.same`` both declare with different values: read by its
declared meaning, ``harness.plugins.contracts``), different image similarities g, or different seeds
between tasks (except an XLR that scores every item, whose value cannot depend on the seed). Any task
of the roles is read: a built-in, a YAML preset or a plugin's task; lines of other roles are named as
left out.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from harness.adapters.card import without_card
from harness.errors import HarnessError
from harness.leaderboard.figures import LEGEND_MODELS, save
from harness.leaderboard.merge import model_labels
from harness.params import parse_kv
from harness.plugins.contracts import Argument, named_args, names_by_meaning, unpaired, values_by_meaning
from harness.results.records import RESULTS_FILE, ResultRecord, family_of, read_records, role_of
from harness.results.signature import Signature, SignatureError
from harness_tasks.retrieval.analysis import aggregations, significance
from harness_tasks.retrieval.analysis.correlation import MIN_MODELS, meta_correlation
from harness_tasks.retrieval.contracts import CUT_OFF, KNOWN, META, SOURCE, TARGET

FAMILY = "retrieval"
TASKS = META.roles  # the roles meta reads (a preset of xlr plays xlr), the reference first
COMPARED = META.roles[1:]


@dataclass
class ModelRow:
    """One model's records, by the role their task plays (``xlr`` for any xlr-like task)."""

    label: str
    identity: dict[str, Any]
    records: dict[str, ResultRecord]


def load_records(paths: Sequence[str]) -> list[ResultRecord]:
    """All records of the given results files (or folders holding ``results.jsonl``); bad lines are reported."""
    records: list[ResultRecord] = []
    for given in paths:
        path = Path(given)
        path = path / RESULTS_FILE if path.is_dir() else path
        if not path.exists():  # anything else that is not a regular file (a FIFO) is refused by read_records
            raise HarnessError(f"results file {str(path)!r} not found")
        found, problems = read_records(path)
        for problem in problems:
            print(f"harness: warning: {problem.path}, line {problem.line}: {problem.reason}", file=sys.stderr)
        records.extend(found)
    return records


def retrieval_role(record: ResultRecord) -> str | None:
    """The retrieval role a record's task plays (``xlr``, ``backretrieval``, ``corr``), whatever its name; else None.

    A built-in task, a YAML preset of it or a plugin's task declaring ``family = "retrieval"`` and one of these
    roles are read alike; a line written before lines carried a family is read by its role alone.
    """
    role = role_of(record)
    return role if role in TASKS and family_of(record) in (None, FAMILY) else None


def role_signature(record: ResultRecord) -> str:
    """The record's task signature named by its role, so that ``ikea_en_de_xlr`` and ``xlr`` runs compare equal."""
    try:
        return str(replace(Signature.parse(record.task_signature), task=role_of(record)))
    except SignatureError:
        return record.task_signature


def argument(record: ResultRecord, which: Argument) -> Any:
    """The value of a contract's argument in ``record``, whatever the task calls it (None: it has none)."""
    return values_by_meaning(record, KNOWN).get(which.meaning)


def select(records: Sequence[ResultRecord], where: dict[str, Any], *, quiet: bool = False) -> list[ResultRecord]:
    """The retrieval-family records whose task arguments match ``where`` (an argument a task lacks is not checked;
    a contract's argument matches by its conventional name whatever the task calls it). The lines of tasks that
    play none of the roles are left out with a note naming them (unless ``quiet``)."""
    outside = sorted(
        {f"{r.task} ({family_of(r) or 'no family'}, role {role_of(r)})" for r in records if retrieval_role(r) is None}
    )
    if outside and not quiet:
        print(
            f"harness: note: left out the results of {', '.join(outside)}: meta reads the roles "
            f"{', '.join(TASKS)} of family {FAMILY!r}",
            file=sys.stderr,
        )
    return [
        r
        for r in records
        if retrieval_role(r) is not None
        and all(
            str(args[key]) == str(value)
            for args in [named_args(r, KNOWN)]
            for key, value in where.items()
            if key in args
        )
    ]


def _model_key(record: ResultRecord) -> str:
    return json.dumps(without_card(record.model), sort_keys=True, default=str)  # the card describes, it names nothing


def group_models(records: Sequence[ResultRecord]) -> list[ModelRow]:
    """Records by model (the last record of a task wins), after checking that they are comparable."""
    by_task: dict[str, list[ResultRecord]] = {}
    for record in records:
        by_task.setdefault(retrieval_role(record) or record.task, []).append(record)
    if "xlr" not in by_task or "backretrieval" not in by_task:
        found = sorted({record.task for record in records})
        raise HarnessError(
            "meta needs xlr and backretrieval results (of the built-in tasks or of presets of them; "
            f"found tasks: {', '.join(found) or 'none'})"
        )
    for task, task_records in by_task.items():
        signatures = sorted({role_signature(r) for r in task_records})
        if len(signatures) > 1:
            listing = "; ".join(signatures)
            raise HarnessError(
                f"the {task} results are not comparable across models: {len(signatures)} different task "
                f"signatures ({listing}); choose one configuration with --select, e.g. --select src=en,tgt=de"
            )
    _check_shared(by_task)
    rows: dict[str, ModelRow] = {}
    for record in records:
        row = rows.setdefault(_model_key(record), ModelRow("", record.model, {}))
        row.records[retrieval_role(record) or record.task] = record
    _label(list(rows.values()))
    return list(rows.values())


def _label(rows: list[ModelRow]) -> None:
    """Short, unique labels, exactly as the leaderboard labels the same models (one source of truth)."""
    labels = model_labels({str(index): row.identity for index, row in enumerate(rows)})
    for index, row in enumerate(rows):
        row.label = labels[str(index)]


def _check_shared(by_task: dict[str, list[ResultRecord]]) -> None:
    first = {task: records[0] for task, records in by_task.items()}
    reference = first["xlr"]
    for task, record in first.items():
        reason = unpaired(META, reference, record, KNOWN)
        if reason is not None:
            raise HarnessError(
                f"{task} ({record.task}) and xlr ({reference.task}) do not pair: {reason}; "
                "meta compares one dataset and direction"
            )
        seeded = first.get("backretrieval", reference)
        if record.seeds != seeded.seeds and not (task == "xlr" and _seed_independent(record)):
            raise HarnessError(
                f"{task} and {role_of(seeded)} were run with different seeds; run them with the same --seeds"
            )
    g_values = {json.dumps(r.extra.get("g"), sort_keys=True) for task in COMPARED for r in by_task.get(task, [])}
    if len(g_values) > 1:
        raise HarnessError(
            f"backretrieval/corr results use different image similarities g: {', '.join(sorted(g_values))}"
        )


def _seed_independent(record: ResultRecord) -> bool:
    """True when every seed scores all items (n_used >= items), so the value cannot depend on the seed."""
    used, size = record.extra.get("n_used"), record.dataset.get("size")
    return isinstance(used, int) and isinstance(size, int) and used >= size


def _series(record: ResultRecord, seeds: list[int]) -> list[float]:
    """The record's per-seed main metric on ``seeds`` (NaN = undefined); a seed-independent single value is repeated."""
    values = record.per_seed.get(record.main_metric, [])
    if record.seeds != seeds and len(set(values)) == 1 and _seed_independent(record):
        values = values[:1] * len(seeds)
    return [math.nan if v is None else float(v) for v in values]


def _matrix(members: Sequence[ModelRow], task: str, seeds: list[int]) -> np.ndarray:
    return np.array([_series(m.records[task], seeds) for m in members], dtype=float).reshape(len(members), len(seeds))


def _reference_seeds(rows: Sequence[ModelRow]) -> list[int]:
    records = [r.records[t] for r in rows for t in ("backretrieval", "xlr") if t in r.records]
    return next((rec.seeds for rec in records if retrieval_role(rec) == "backretrieval"), records[0].seeds)


def compared(rows: Sequence[ModelRow], seeds: list[int] | None = None) -> tuple[list[ModelRow], list[np.ndarray]]:
    """The models with xlr, backretrieval and corr, in a canonical order (by model identity), and their
    ``(models, seeds)`` arrays of the three, in that order (``seeds``: the reference seeds by default)."""
    seeds = _reference_seeds(rows) if seeds is None else seeds
    # in a canonical order, so that the bootstrap over models draws the same resamples whatever order the
    # results came in (harness meta and the leaderboard read the same lines differently)
    members = sorted(
        (r for r in rows if all(task in r.records for task in TASKS)),
        key=lambda r: json.dumps(without_card(r.identity), sort_keys=True, default=str),
    )
    return members, [_matrix(members, task, seeds) for task in TASKS]


def _significance(rows: Sequence[ModelRow], seeds: list[int], resamples: int, seed: int) -> dict[str, Any]:
    members, (xlr, bkr, corr) = compared(rows, seeds)
    if len(members) < MIN_MODELS:
        return {"skipped": f"needs xlr, backretrieval and corr for at least {MIN_MODELS} models, found {len(members)}"}
    return {
        "models": [m.label for m in members],
        **significance.compare(xlr, bkr, corr, resamples=resamples, seed=seed),
    }


def meta_evaluate(
    rows: Sequence[ModelRow], *, resamples: int = significance.RESAMPLES, bootstrap_seed: int = 0
) -> dict[str, Any]:
    """Per-seed Pearson and Spearman correlations of each compared task with xlr across models, and BkR vs CORR."""
    seeds = _reference_seeds(rows)
    correlations: dict[str, Any] = {}
    for task in COMPARED:
        members = [r for r in rows if "xlr" in r.records and task in r.records]
        if not members:
            continue
        if len(members) < MIN_MODELS:
            raise HarnessError(
                f"correlating {task} with xlr needs at least {MIN_MODELS} models with both results, "
                f"found {len(members)}"
            )
        correlations[task] = {
            "models": [m.label for m in members],
            **meta_correlation(_matrix(members, "xlr", seeds), _matrix(members, task, seeds)),
        }
    reference = rows[0].records["xlr"] if "xlr" in rows[0].records else next(iter(rows[0].records.values()))
    return {
        "signatures": {
            task: next(role_signature(r.records[task]) for r in rows if task in r.records)
            for task in TASKS
            if any(task in r.records for r in rows)
        },
        "dataset": reference.dataset,
        "direction": direction(reference),
        "g": next((r.records[t].extra.get("g") for r in rows for t in COMPARED if t in r.records), None),
        "seeds": seeds,
        "models": [
            {
                "label": r.label,
                "model": r.identity,
                **{
                    task: {
                        "mean": rec.metrics.get(rec.main_metric),
                        "std": rec.metrics_std.get(rec.main_metric),
                        "metric": rec.main_metric,
                        "seeds": len(rec.seeds),
                    }
                    for task, rec in r.records.items()
                },
            }
            for r in rows
        ],
        "k": argument(reference, CUT_OFF),
        "chance": {
            task: _chance([r.records[task] for r in rows if task in r.records])
            for task in ("xlr", "backretrieval")
            if any(task in r.records for r in rows)
        },
        "correlations": correlations,
        "significance": _significance(rows, seeds, resamples, bootstrap_seed),
    }


def direction(record: ResultRecord) -> str:
    """``en-de``: the record's source and target languages, by their declared meanings."""
    return f"{argument(record, SOURCE)}-{argument(record, TARGET)}"


def format_table(result: dict[str, Any]) -> str:
    """The correlation table and the per-model scores as plain text."""
    lines = [
        f"meta-evaluation {result['direction']} on {result['dataset'].get('loader')} {result['dataset'].get('split')}, "
        f"{len(result['models'])} models, {len(result['seeds'])} seeds (mean ± std over seeds)",
        "",
    ]
    lines.append(f"{'with XLR':<16}{'Pearson r':>20}{'Spearman rho':>20}")
    for task, values in result["correlations"].items():
        cells = [_pm(values[kind]["mean"], values[kind]["std"]) for kind in ("pearson", "spearman")]
        lines.append(f"{task:<16}{cells[0]:>20}{cells[1]:>20}")
    width = max([len("model"), *(len(m["label"]) for m in result["models"])]) + 2
    lines += ["", f"{'model':<{width}}" + "".join(f"{task:>20}" for task in TASKS)]
    for model in result["models"]:
        cells = [_pm(model[t]["mean"], model[t]["std"], model[t].get("seeds", 2)) if t in model else "-" for t in TASKS]
        lines.append(f"{model['label']:<{width}}" + "".join(f"{c:>20}" for c in cells))
    if any(model[t].get("seeds", 2) < 2 for model in result["models"] for t in TASKS if t in model):
        lines.append("(one run): every seed would evaluate the same items, so the task ran once: no spread over seeds")
    tested = result.get("significance") or {}
    lines += [
        "",
        *(
            [
                *significance.format_rows({k: tested[k] for k in ("pearson", "spearman")}),
                "",
                reading(result["direction"], len(result["models"]), tested),
            ]
            if "pearson" in tested
            else [f"BkR vs CORR: not tested ({tested.get('skipped', 'no results')})"]
        ),
    ]
    return "\n".join(lines)


def _pm(mean: float | None, std: float | None, seeds: int = 2) -> str:
    """``mean ± std``; a spread that cannot exist (one run, or none recorded) is shown as such, never as ± 0."""
    if mean is None:
        return "undefined"
    return f"{mean:.4f} (one run)" if std is None or seeds < 2 else f"{mean:.4f} ± {std:.4f}"


def _supports(values: dict[str, Any]) -> tuple[bool | None, bool | None]:
    """Whether the seeds taken together (combined p < 0.05) and the bootstrap over models (interval excludes 0)
    show a difference; None where a test could not be computed."""
    combined, boot = values.get("combined_p"), values["bootstrap"]
    seeds = None if combined is None else combined < significance.ALPHA
    models = None if boot["low"] is None else boot["low"] > 0 or boot["high"] < 0
    return seeds, models


def reading(direction: str, models: int, tested: dict[str, Any]) -> str:
    """One plain sentence: what Steiger's test per seed and the bootstrap over models do and do not support."""
    parts = []
    for method, name in (("pearson", "Pearson's r"), ("spearman", "Spearman's rho")):
        values = tested[method]
        seeds, over_models = _supports(values)
        boot = values["bootstrap"]
        share = significance.significant_seeds(values, " of ")
        difference = "n/a" if boot["difference"] is None else f"{boot['difference']:+.3f}"
        supported = (
            "not tested"
            if seeds is None or over_models is None
            else {
                (True, True): "both tests support a difference",
                (False, True): "the bootstrap over models supports a difference but the seeds taken together do not",
                (True, False): "the seeds taken together support a difference but the bootstrap over models does "
                "not (it may not hold for other models)",
                (False, False): "neither test supports a difference",
            }[(seeds, over_models)]
        )
        parts.append(
            f"for {name} {supported} (Steiger p < 0.05 in {share}, combined p {_num(values.get('combined_p'))}; "
            f"difference {difference}, interval {_interval(boot)})"
        )
    return (
        f"Reading ({direction}, {models} models): is BkR closer to XLR than CORR? " + "; ".join(parts) + ". "
        "A combined p below 0.05 would say the difference is there for these models in the seeds taken together; "
        "an interval that excludes 0 says its sign would likely hold for other models like these."
    )


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _interval(boot: dict[str, Any]) -> str:
    return "n/a" if boot["low"] is None else f"[{boot['low']:.3f}, {boot['high']:.3f}]"


def plot(result: dict[str, Any], path: Path) -> None:
    """XLR against BackRetrieval, one point per model (error bars: std over seeds), a numbered legend and chance lines.

    The title gives the meta-correlation and the bootstrap interval of r(BkR, XLR) - r(CORR, XLR).
    """
    from matplotlib.figure import Figure

    models = [
        m
        for m in result["models"]
        if m.get("xlr", {}).get("mean") is not None and m.get("backretrieval", {}).get("mean") is not None
    ]
    models.sort(key=lambda m: (-m["xlr"]["mean"], -m["backretrieval"]["mean"], m["label"]))
    figure = Figure(figsize=(9, 5.2))
    axes = figure.subplots()
    palette = (
        "tab:blue",
        "tab:orange",
        "tab:green",
        "tab:red",
        "tab:purple",
        "tab:brown",
        "tab:pink",
        "tab:grey",
        "tab:olive",
        "tab:cyan",
    )
    for index, m in enumerate(models):
        axes.errorbar(
            m["xlr"]["mean"],
            m["backretrieval"]["mean"],
            xerr=m["xlr"]["std"] or 0,
            yerr=m["backretrieval"]["std"] or 0,
            fmt="osD^v<>ph*"[index // len(palette) % 10],
            color=palette[index % len(palette)],
            capsize=3,
            label=f"{index + 1}. {m['label']}",
        )
        axes.annotate(
            str(index + 1),
            (m["xlr"]["mean"], m["backretrieval"]["mean"]),
            textcoords="offset points",
            xytext=(4, -10 if index % 2 else 4),
            fontsize=7,
        )
    chance = result.get("chance") or {}
    if chance.get("xlr") is not None:
        axes.axvline(
            chance["xlr"], color="grey", linestyle=":", linewidth=1, label=f"XLR chance k/n ({chance['xlr']:.3f})"
        )
    if chance.get("backretrieval") is not None:
        axes.axhline(
            chance["backretrieval"],
            color="grey",
            linestyle="--",
            linewidth=1,
            label=f"BkR chance k/n ({chance['backretrieval']:.3f})",
        )
    stats = result["correlations"].get("backretrieval", {})
    subtitle = ", ".join(
        f"{name} = {_pm(stats[key]['mean'], stats[key]['std'])}"
        for key, name in (("pearson", "r"), ("spearman", "ρ"))
        if key in stats
    )
    boot = (result.get("significance") or {}).get("pearson", {}).get("bootstrap", {})
    if boot.get("low") is not None:
        observed = "n/a" if boot.get("difference") is None else f"{boot['difference']:+.3f}"
        subtitle += f"\nr(BkR, XLR) - r(CORR, XLR) = {observed}, {boot['confidence']:.0%} interval [{boot['low']:.3f}, {boot['high']:.3f}]"
    dataset = result["dataset"]
    axes.set_title(
        f"XLR vs BackRetrieval, {dataset.get('loader')} {dataset.get('split')} {result['direction']}, "
        f"{len(models)} models, {len(result['seeds'])} seeds\n{subtitle}",
        fontsize=9,
    )
    k = result.get("k", "k")
    axes.set_xlabel(f"XLR Recall@{k} (mean ± std over seeds)")
    axes.set_ylabel(f"BackRetrieval Recall@{k} (mean ± std over seeds)")
    axes.grid(alpha=0.3)
    if len(models) <= LEGEND_MODELS:
        axes.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
    else:  # a legend of every model would not fit: only the chance lines; the numbered points are in meta.json's order
        chance_lines = [line for line in axes.lines if str(line.get_label()).startswith(("XLR chance", "BkR chance"))]
        if chance_lines:
            axes.legend(handles=chance_lines, fontsize=7, loc="upper left")
    figure.tight_layout()
    save(figure, path, dpi=150)


def _pair_config(record: ResultRecord) -> str:
    """What must agree between the language pairs of one aggregation: every argument but the direction, version, seeds, g."""
    languages = {names_by_meaning(record, KNOWN).get(which.meaning) for which in (SOURCE, TARGET)}
    args = {k: v for k, v in record.task_args.items() if k not in languages}
    return json.dumps([args, record.task_version, record.seeds, record.extra.get("g")], sort_keys=True, default=str)


def _chance(records: Sequence[ResultRecord]) -> float | None:
    """Recall@k of a random ranking of n candidates, k / n (or the chance level the results line declares)."""
    record = records[0]
    declared = (record.metric_info.get(record.main_metric) or {}).get("chance")
    if declared is not None:
        return float(declared)
    k, used = argument(record, CUT_OFF), record.extra.get("n_used")
    return min(1.0, int(k) / int(used)) if k is not None and used else None


def aggregate_pairs(records: Sequence[ResultRecord], *, test: bool = True) -> dict[str, Any]:
    """BackRetrieval per model over the language pairs of one data set: the table (SIGIR 2021 Table 2) as data,
    with the best model tested against each other (``best_vs_others``) unless ``test`` is False (a plot of the
    scores needs no test)."""
    bkr = [r for r in records if retrieval_role(r) == "backretrieval"]
    if not bkr:
        raise HarnessError("aggregating over language pairs needs backretrieval results")
    configs = sorted({_pair_config(r) for r in bkr})
    if len(configs) > 1:
        raise HarnessError(
            f"the backretrieval results of the language pairs differ in more than the direction "
            f"({len(configs)} configurations); choose one with --select, e.g. --select split=test,k=10"
        )
    rows: dict[str, ModelRow] = {}
    for record in bkr:
        rows.setdefault(_model_key(record), ModelRow("", record.model, {})).records[direction(record)] = record
    _label(list(rows.values()))
    scores = {
        row.label: {pair: rec.metrics.get(rec.main_metric) for pair, rec in row.records.items()}
        for row in rows.values()
    }
    by_pair: dict[str, list[ResultRecord]] = {}
    for record in bkr:
        by_pair.setdefault(direction(record), []).append(record)
    chance = {pair: c for pair, recs in by_pair.items() if (c := _chance(recs)) is not None}
    table = aggregations.pair_table(scores)
    per_seed = {
        row.label: {pair: rec.per_seed.get(rec.main_metric, []) for pair, rec in row.records.items()}
        for row in rows.values()
    }
    found = {
        "metric": f"{bkr[0].main_metric} (mean over seeds)",
        "k": argument(bkr[0], CUT_OFF),
        "table": table.to_dict(),
        "scores": scores,
        "chance": chance,
    }
    return {**found, "best_vs_others": aggregations.best_vs_others(table, per_seed)} if test else found


def meta_by_direction(records: Sequence[ResultRecord], *, resamples: int, bootstrap_seed: int) -> dict[str, Any]:
    """Several directions of one data set: the meta-evaluation of each direction and the aggregation over them."""
    # the data sets of the BackRetrieval lines (aggregated over directions); each direction's xlr and corr pair
    # with them by data identity, whatever loader read the same data for them
    anchors = [r for r in records if retrieval_role(r) == "backretrieval"] or list(records)
    datasets = sorted({(str(r.dataset.get("loader")), str(r.dataset.get("split"))) for r in anchors})
    if len(datasets) > 1:
        raise HarnessError(
            f"the results span {len(datasets)} data sets or splits ({', '.join(' '.join(d) for d in datasets)}); "
            "choose one with --select, e.g. --select dataset=ikea,split=test"
        )
    by_direction: dict[str, list[ResultRecord]] = {}
    for record in records:
        by_direction.setdefault(direction(record), []).append(record)
    directions: dict[str, Any] = {}
    for pair, found in sorted(by_direction.items()):
        try:
            directions[pair] = meta_evaluate(group_models(found), resamples=resamples, bootstrap_seed=bootstrap_seed)
        except HarnessError as exc:
            print(f"harness: warning: {pair}: no meta-evaluation: {exc}", file=sys.stderr)
            directions[pair] = {"skipped": str(exc)}
    try:
        aggregation = aggregate_pairs(records)
    except HarnessError as exc:
        print(f"harness: warning: no aggregation over language pairs: {exc}", file=sys.stderr)
        aggregation = {"skipped": str(exc)}
    return {"dataset": datasets[0][0], "split": datasets[0][1], "directions": directions, "aggregation": aggregation}


def format_aggregation(aggregation: dict[str, Any]) -> str:
    """The per-pair table as text, with the chance level of each pair."""
    if "skipped" in aggregation:
        return f"no aggregation over language pairs: {aggregation['skipped']}"
    table = aggregations.PairTable(
        aggregation["table"]["pairs"],
        [aggregations.PairRow(r["model"], r["scores"], r["average"]) for r in aggregation["table"]["rows"]],
    )
    text = aggregations.format_pair_table(table, f"BackRetrieval {aggregation['metric']}")
    chance = ", ".join(f"{pair} {value:.4f}" for pair, value in sorted(aggregation["chance"].items()))
    text += f"\nchance (k / n): {chance}" if chance else ""
    tested = aggregation.get("best_vs_others")
    return text + ("\n\n" + "\n".join(aggregations.format_best_vs_others(tested)) if tested else "")


def _write(folder: Path, result: dict[str, Any]) -> list[Path]:
    """A scatter plot per direction, over several directions the box plot over pairs, and meta.json (written last)."""
    folder.mkdir(parents=True, exist_ok=True)
    singles = {"": result} if "directions" not in result else {f"_{d}": one for d, one in result["directions"].items()}
    written = []
    for suffix, single in singles.items():
        if "skipped" not in single:
            written.append(folder / f"xlr_vs_backretrieval{suffix}.png")
            plot(single, written[-1])
    aggregation = result.get("aggregation", {"skipped": "one direction"})
    if "skipped" not in aggregation:
        written.append(folder / "bkr_over_pairs.png")
        drawn = aggregations.pair_boxplot(
            aggregation["scores"],
            written[-1],
            chance=aggregation["chance"],
            title=f"BackRetrieval per model over {len(aggregation['table']['pairs'])} language pairs, "
            f"{result['dataset']} {result['split']}",
            ylabel=f"BackRetrieval Recall@{aggregation['k']}",
        )
        aggregation["boxplot"] = {"file": written[-1].name, "models": drawn.models, "medians": drawn.medians}
    (folder / "meta.json").write_text(json.dumps(result, indent=2, default=str) + "\n", encoding="utf-8")
    return [folder / "meta.json", *written]


class MetaCommand:
    """Correlate BackRetrieval and CORR with XLR across models: table, JSON and scatter plot."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The command's arguments."""
        parser.add_argument(
            "results", nargs="+", help="results.jsonl files, or folders holding one, for several models"
        )
        parser.add_argument(
            "--select", default=None, help="keep only records whose task arguments match, k=v,... (e.g. src=en,tgt=de)"
        )
        parser.add_argument("--output", default="meta", help="folder for meta.json and the plots (default ./meta)")
        parser.add_argument(
            "--resamples",
            type=int,
            default=significance.RESAMPLES,
            help=f"bootstrap resamples of the models (default {significance.RESAMPLES})",
        )
        parser.add_argument(
            "--bootstrap-seed", type=int, default=0, help="seed of the bootstrap over models (default 0)"
        )

    def run(self, args: argparse.Namespace) -> int:
        """Read, check, correlate, test, print and write; several directions of one data set are also aggregated."""
        if args.resamples < 1:
            raise HarnessError(f"--resamples must be a positive number, got {args.resamples}")
        records = select(load_records(args.results), parse_kv(args.select, "--select"))
        options = {"resamples": args.resamples, "bootstrap_seed": args.bootstrap_seed}
        if len({direction(r) for r in records}) > 1:
            result = meta_by_direction(records, **options)
            text = "\n\n".join(
                [
                    *(format_table(one) for one in result["directions"].values() if "skipped" not in one),
                    format_aggregation(result["aggregation"]),
                ]
            )
        else:
            result = meta_evaluate(group_models(records), **options)
            text = format_table(result)
        folder = Path(args.output)
        try:
            written = _write(folder, result)
        except OSError as exc:
            raise HarnessError(f"cannot write to {str(folder)!r}: {exc.strerror or exc}") from None
        print(text)
        names = ", ".join(path.name for path in written)
        print(f"written to {folder.resolve()}/ (--output changes it): {names}", file=sys.stderr)
        return 0


COMMAND = MetaCommand()
