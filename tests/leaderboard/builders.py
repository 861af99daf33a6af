"""Results records and per-sample logs for the leaderboard tests, built with the engine's own signatures."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.results.jsonl import write_json_lines_atomic
from harness.results.records import ResultRecord, append_record
from harness.results.signature import Signature
from harness.run.runner import aggregate

MAIN = {
    "xlr": "recall@k",
    "backretrieval": "recall@k",
    "corr": "spearman",
    "commute_tc": "tc",
    "commute_ic": "ic",
    "commute_gtc": "gtc",
    "commute_gic": "gic",
    "yisi2_sts": "pearson",
    "yisi2_filter": "roc_auc",
}


def record(
    task: str = "xlr",
    model: str = "labse",
    values: float | Sequence[float | None] = 0.5,
    *,
    revision: str = "rev1",
    model_args: dict[str, Any] | None = None,
    args: dict[str, Any] | None = None,
    started: str = "2026-01-01T00:00:00+00:00",
    version: int = 1,
    data_revision: str = "sha256:data1",
    size: int = 100,
    extra_metrics: dict[str, float] | None = None,
    samples_file: str | None = None,
    seeds: Sequence[int] | None = None,
    extra: dict[str, Any] | None = None,
    limit: int | None = None,
    aux_models: dict[str, dict[str, Any]] | None = None,
) -> ResultRecord:
    """A valid record; ``values`` is one value per seed (a float: one seed); ``limit``: run with ``--limit``;
    ``aux_models``: the identities of its auxiliary models by role (``image``)."""
    per_seed_values = [values] if isinstance(values, (int, float)) else list(values)
    seeds = list(seeds) if seeds is not None else list(range(len(per_seed_values)))
    metric = MAIN.get(task, "score")
    per_seed = [{metric: v, **(extra_metrics or {})} for v in per_seed_values]
    means, stds, series = aggregate(per_seed)
    args = dict(args if args is not None else {"src": "en", "tgt": "de", "dataset": "ikea"})
    dataset = {"loader": "ikea", "source": "/data/ikea", "revision": data_revision, "split": "test", "size": size}
    identity = {
        "name": model,
        "adapter": "hf-text",
        "source": model,
        "revision": revision,
        "args": model_args or {},
        "dtype": "float32",
    }
    task_sig = Signature.build(task, version, args, dataset, seeds if len(seeds) > 1 else None, aux_models, limit)
    return ResultRecord(
        task=task,
        task_version=version,
        task_args=args,
        main_metric=metric,
        metrics=means,
        metrics_std=stds,
        per_seed=series,
        seeds=seeds,
        model=identity,
        dataset=dataset,
        run={"device": "cpu"},
        signature=str(task_sig.with_model(identity)),
        task_signature=str(task_sig),
        harness={"version": "0.1.0", "git": None},
        environment={"python": "3.11"},
        hardware={"device": "cpu"},
        started=started,
        wall_seconds=1.0,
        samples_file=samples_file,
        extra=extra or {},
    )


def write_results(folder: Path, records: Sequence[ResultRecord]) -> Path:
    """Append the records to ``folder/results.jsonl``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "results.jsonl"
    for item in records:
        append_record(folder, item)
    return path


def with_samples(folder: Path, item: ResultRecord, rows: Sequence[dict[str, Any]], name: str) -> ResultRecord:
    """Write a per-sample log for ``item`` (rows get its signature) and point the record at it."""
    folder.mkdir(parents=True, exist_ok=True)
    write_json_lines_atomic(folder / name, [{"signature": item.signature, **row} for row in rows])
    item.samples_file = name
    return item


def read_json(path: Path) -> Any:
    """A JSON file's content."""
    return json.loads(path.read_text(encoding="utf-8"))


def family_pages(board: Any, tables: Any, sections: dict[str, Any] | None = None) -> str:
    """The family pages of ``board`` (no plots, no item pages), one after the other."""
    from harness.leaderboard.page import family_page
    from harness.leaderboard.site import site_of

    site = site_of(board, [])
    return "\n".join(
        family_page(board, family, tables, [], (sections or {}).get(family.name, []), site)
        for family, _ in board.families()
    )
