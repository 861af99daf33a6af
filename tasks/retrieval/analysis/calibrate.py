"""``harness calibrate``: BackRetrieval on the XLR scale, with prediction intervals.

``fit`` reads xlr and backretrieval results of many models on data with parallel data (e.g.
IKEA en-de and en-fr, both directions), one point per (model, direction): x = BkR Recall@k
(mean over seeds), y = XLR Recall@k. It cross-validates both monotone maps of
``calibrate_fit`` leaving one model out and leaving one language pair (both directions) out,
chooses the map whose worse error (RMSE) is smaller, and saves it as JSON with its provenance.
``apply`` reads backretrieval results on data without parallel data and prints the estimated
XLR with an interval. Points are comparable only with one k, one tie rule, one ranking (the
``retrieval`` argument: cosine or CSLS, with its neighbourhood), one task version per task and one
task argument n, and candidate pools (n_used) within ``N_TOLERANCE`` of each other. Arguments are
read by their declared meaning (the family's contracts, ``retrieval.k`` for k), so any task of the
xlr and backretrieval roles is read alike; a task without an argument (no ``n``, no ``ties``) has
none to disagree with.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness.params import parse_kv
from harness.results.records import ResultRecord
from harness.results.signature import identifying_args
from harness_tasks.retrieval.analysis import calibrate_fit, meta
from harness_tasks.retrieval.analysis.meta import argument, direction
from harness_tasks.retrieval.contracts import CSLS_K, CUT_OFF, SAMPLE, SCORING, TIES

FORMAT = 2  # version of the calibration file (2: scope.retrieval)
N_TOLERANCE = (
    0.10  # candidate pools may differ by this share of the smallest (IKEA en-de 183, en-fr 169 BkR candidates)
)
CONFIDENCE = 0.95
SHARED = {"k": CUT_OFF, "ties": TIES, "n": SAMPLE}  # what every point must share (besides ranking, versions)
SCHEMES = {"model": "leave one model out", "pair": "leave one language pair (both directions) out"}


@dataclass(frozen=True)
class Point:
    """One (model, direction): BkR mean, std and seeds, XLR, and the candidate pools of both tasks."""

    model: str
    direction: str
    bkr: float
    bkr_std: float
    seeds: int
    xlr: float
    n_bkr: int
    n_xlr: int

    @property
    def pair(self) -> str:
        """The unordered language pair: en-de and de-en are both ``de-en``."""
        return "-".join(sorted(self.direction.split("-")))

    @property
    def se(self) -> float:
        """The standard error of the mean BkR over seeds."""
        return self.bkr_std / math.sqrt(self.seeds)


def ranking(record: ResultRecord) -> str:
    """How the record's texts were ranked: ``cosine`` (also results from before the ``retrieval`` argument) or
    ``csls (csls_k=K)``."""
    method = str(argument(record, SCORING) or "cosine")
    return f"{method} (csls_k={argument(record, CSLS_K)})" if method == "csls" else method


def _shared(record: ResultRecord) -> dict[str, Any]:
    return {
        **{key: argument(record, which) for key, which in SHARED.items()},
        "retrieval": ranking(record),
        "version": record.task_version,
        "g": record.extra.get("g"),
    }


def _where(record: ResultRecord, origins: Mapping[int, str]) -> str:
    """``model 'a', en-de`` and, when known, ``in <results file>``."""
    found = origins.get(id(record))
    return f"model {record.model.get('name')!r}, {direction(record)}" + (f", in {found}" if found else "")


def check_comparable(
    records: Sequence[ResultRecord], what: str, origins: Mapping[int, str] | None = None
) -> dict[str, dict[str, Any]]:
    """Per task: the arguments and version every record shares; a HarnessError naming the first record that differs
    and the one it differs from (``origins``: results file by ``id`` of a record, when known)."""
    origins = origins or {}
    shared: dict[str, dict[str, Any]] = {}
    first: dict[str, ResultRecord] = {}
    for record in records:
        values = _shared(record)
        role = meta.retrieval_role(record) or record.task
        reference = shared.setdefault(role, values)
        first.setdefault(role, record)
        for key, value in values.items():
            if value != reference[key]:
                raise HarnessError(
                    f"{what}: the {role} results differ in {key}: {reference[key]!r} "
                    f"({_where(first[role], origins)}) vs {value!r} ({_where(record, origins)}); "
                    "calibrate one configuration at a time (choose with --select)"
                )
    return shared


def _pool_range(sizes: Sequence[int], task: str) -> list[int]:
    low, high = min(sizes), max(sizes)
    if high > low * (1 + N_TOLERANCE):
        raise HarnessError(
            f"the {task} candidate pools differ too much to share one map: n_used from {low} to {high} "
            f"(more than {N_TOLERANCE:.0%}); Recall@k depends on n, so calibrate each n separately"
        )
    return [low, high]


def points_from_records(records: Sequence[ResultRecord]) -> list[Point]:
    """One point per model and direction with both results (each direction checked as ``harness meta`` checks it)."""
    by_direction: dict[str, list[ResultRecord]] = {}
    for record in records:
        by_direction.setdefault(direction(record), []).append(record)
    points = []
    for pair, found in sorted(by_direction.items()):
        for row in meta.group_models([r for r in found if meta.retrieval_role(r) in ("xlr", "backretrieval")]):
            if "xlr" not in row.records or "backretrieval" not in row.records:
                continue
            xlr, bkr = row.records["xlr"], row.records["backretrieval"]
            y, x = xlr.metrics.get(xlr.main_metric), bkr.metrics.get(bkr.main_metric)
            if x is None or y is None or not math.isfinite(x) or not math.isfinite(y):
                raise HarnessError(f"{row.label} {pair}: xlr or backretrieval {xlr.main_metric} is undefined")
            n_bkr, n_xlr = bkr.extra.get("n_used"), xlr.extra.get("n_used")
            if not isinstance(n_bkr, int) or not isinstance(n_xlr, int):
                raise HarnessError(
                    f"{row.label} {pair}: the results hold no n_used (extra.n_used): rerun them with this harness"
                )
            defined = [v for v in bkr.per_seed.get(bkr.main_metric, []) if v is not None]
            std = float(bkr.metrics_std.get(bkr.main_metric) or 0.0)
            points.append(Point(row.label, pair, float(x), std, max(1, len(defined)), float(y), n_bkr, n_xlr))
    return points


def _file_hash(path: str) -> str:
    folder = Path(path)
    target = folder / "results.jsonl" if folder.is_dir() else folder
    return "sha256:" + hashlib.sha256(target.read_bytes()).hexdigest()[:16]


def calibrate(
    records: Sequence[ResultRecord],
    *,
    method: str = "auto",
    confidence: float = CONFIDENCE,
    sources: Sequence[str] = (),
    origins: Mapping[int, str] | None = None,
) -> dict[str, Any]:
    """Cross-validate both maps, choose one, fit it on every point; the calibration as a JSON-ready dict.

    ``origins`` (results file by ``id`` of a record) lets a refusal name the file of the records it refuses."""
    records = [r for r in records if meta.retrieval_role(r) in ("xlr", "backretrieval")]
    shared = check_comparable(records, "calibrate", origins)
    if set(shared) != {"xlr", "backretrieval"}:
        raise HarnessError(
            f"calibrate needs xlr and backretrieval results (found: {', '.join(sorted(shared)) or 'none'})"
        )
    for key in ("k", "retrieval"):
        if shared["xlr"][key] != shared["backretrieval"][key]:
            raise HarnessError(
                f"xlr and backretrieval were run with different {key} ({shared['xlr'][key]!r} vs "
                f"{shared['backretrieval'][key]!r}); calibrate results of one {key}"
            )
    points = points_from_records(records)
    if len({p.model for p in points}) < 3:
        raise HarnessError(
            f"calibrate needs xlr and backretrieval for at least 3 models, found {len({p.model for p in points})}"
        )
    x, y, se = (np.array([getattr(p, name) for p in points]) for name in ("bkr", "xlr", "se"))
    groups = {scheme: [getattr(p, scheme) for p in points] for scheme in SCHEMES}
    validation: dict[str, Any] = {}
    for name in calibrate_fit.METHODS:
        validation[name] = {}
        for scheme, labels in groups.items():
            if len(set(labels)) < 2:
                validation[name][scheme] = {"skipped": f"only one {scheme}"}
                continue
            predicted = calibrate_fit.out_of_fold(x, y, labels, name)
            validation[name][scheme] = {
                **calibrate_fit.errors(predicted, y),
                "coverage": calibrate_fit.coverage(x, y, se, labels, name, confidence),
                "residuals": calibrate_fit.logit_residuals(predicted, y).tolist(),
            }
    chosen = _choose(validation) if method == "auto" else method
    if chosen not in calibrate_fit.METHODS:
        raise HarnessError(f"unknown method {method!r}: expected auto, {' or '.join(calibrate_fit.METHODS)}")
    worst = max((s for s in validation[chosen].values() if "rmse" in s), key=lambda s: s["rmse"], default=None)
    if worst is None:
        raise HarnessError("cross-validation needs at least two models and two language pairs")
    return {
        "format": FORMAT,
        "method": chosen,
        "map": calibrate_fit.fit(x, y, chosen).to_dict(),
        "confidence": confidence,
        "residuals": worst["residuals"],
        "validation": validation,
        "scope": {
            # xlr's values, else (an xlr-like task without the argument) backretrieval's, which apply checks
            **{key: _first(shared["xlr"][key], shared["backretrieval"][key]) for key in ("k", "ties", "n")},
            "retrieval": shared["xlr"]["retrieval"],
            "versions": {t: shared[t]["version"] for t in shared},
            "g": shared["backretrieval"]["g"],
            "n_used": {
                "backretrieval": _pool_range([p.n_bkr for p in points], "backretrieval"),
                "xlr": _pool_range([p.n_xlr for p in points], "xlr"),
            },
            "bkr_range": [float(x.min()), float(x.max())],
            "median_bkr_std": float(np.median([p.bkr_std for p in points])),
        },
        "provenance": {
            "results": [{"path": str(s), "hash": _file_hash(s)} for s in sources],
            "signatures": sorted({r.task_signature for r in records}),
            "points": [asdict(p) for p in points],
        },
    }


def _first(*values: Any) -> Any:
    """The first value that is not None (None when all are)."""
    return next((value for value in values if value is not None), None)


def _choose(validation: dict[str, Any]) -> str:
    """The method whose worse cross-validated RMSE (over the schemes) is smaller."""

    def worst(name: str) -> float:
        return max((s["rmse"] for s in validation[name].values() if "rmse" in s), default=math.inf)

    return min(calibrate_fit.METHODS, key=worst)


def load(path: str) -> dict[str, Any]:
    """A calibration file written by ``calibrate fit``, checked field by field."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise HarnessError(f"calibration file {path!r} cannot be read: {exc}") from None
    for field in ("format", "method", "map", "confidence", "residuals", "scope"):
        if not isinstance(data, dict) or field not in data:
            raise HarnessError(f"calibration file {path!r} has no field {field!r}")
    if data["format"] != FORMAT:
        raise HarnessError(
            f"calibration file {path!r} has format {data['format']!r}; this harness reads format {FORMAT} "
            "(format 2 records the ranking, cosine or csls): refit it with 'harness calibrate fit'"
        )
    if data["map"].get("method") not in calibrate_fit.METHODS or not data["residuals"]:
        raise HarnessError(f"calibration file {path!r}: field 'map' names no known method, or 'residuals' is empty")
    problem = _bad_field(data)
    if problem is not None:
        raise HarnessError(f"calibration file {path!r}: field {problem}: refit it with 'harness calibrate fit'")
    return data


def _numbers(value: Any, count: int | None = None) -> bool:
    """A list of finite numbers (of ``count`` of them, if given)."""
    return (
        isinstance(value, list)
        and (count is None or len(value) == count)
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
    )


def _bad_field(data: dict[str, Any]) -> str | None:
    """The first field ``apply`` reads that is missing or not what ``fit`` writes (finite numbers, a known scope)."""
    params = data["map"].get("params")
    if not isinstance(params, dict):
        return "'map.params' is missing"
    if data["map"]["method"] == "isotonic":
        for name in ("x", "y"):
            if not _numbers(params.get(name)) or not params[name]:
                return f"'map.params.{name}' is not a list of finite numbers"
        if len(params["x"]) != len(params["y"]):
            return "'map.params' has knots x and y of different lengths"
    elif not _numbers(params.get("ab"), 2):
        return "'map.params.ab' is not two finite numbers"
    if not _numbers([data["confidence"]]) or not 0 < data["confidence"] < 1:
        return "'confidence' is not a number between 0 and 1"
    if not _numbers(data["residuals"]):
        return "'residuals' is not a list of finite numbers"
    scope = data["scope"]
    if not isinstance(scope, dict):
        return "'scope' is not an object"
    for name in ("k", "ties", "retrieval", "versions", "g", "n_used", "bkr_range", "median_bkr_std"):
        if name not in scope:
            return f"'scope.{name}' is missing"
    if not isinstance(scope["versions"], dict) or not isinstance(scope["versions"].get("backretrieval"), int):
        return "'scope.versions.backretrieval' is not a version number"
    used = scope["n_used"].get("backretrieval") if isinstance(scope["n_used"], dict) else None
    if not isinstance(used, list) or not _numbers(used, 2) or not 0 < used[0] <= used[1]:
        return "'scope.n_used.backretrieval' is not a range of two counts"
    if not _numbers(scope["bkr_range"], 2) or scope["bkr_range"][0] > scope["bkr_range"][1]:
        return "'scope.bkr_range' is not a range of two finite numbers"
    if not _numbers([scope["median_bkr_std"]]) or scope["median_bkr_std"] < 0:
        return "'scope.median_bkr_std' is not a finite number of at least 0"
    return None


def model_label(record: ResultRecord, others: Sequence[ResultRecord] = ()) -> str:
    """The model's name, with the adapter arguments that tell it apart from same-named models among ``others``."""
    name = str(record.model.get("name"))
    args = [identifying_args(r.model) for r in others if r.model.get("name") == name]
    own = identifying_args(record.model)
    differing = sorted(k for k in own if len({json.dumps(a.get(k), default=str) for a in args}) > 1)
    return name + (f"({','.join(f'{k}={own[k]}' for k in differing)})" if differing else "")


def estimate(calibration: dict[str, Any], record: ResultRecord, others: Sequence[ResultRecord] = ()) -> dict[str, Any]:
    """The estimated XLR of one backretrieval result, its interval, and any warnings; refuses another k, tie rule or pool size."""
    scope = calibration["scope"]
    label = f"{model_label(record, others)} {direction(record)}"
    for key, value in (
        ("k", argument(record, CUT_OFF)),
        ("ties", argument(record, TIES)),
        ("retrieval", ranking(record)),
    ):
        if value != scope[key]:
            raise HarnessError(
                f"{label}: backretrieval {key} = {value!r}, but the calibration is for {key} = {scope[key]!r}"
            )
    if record.task_version != scope["versions"]["backretrieval"]:
        raise HarnessError(
            f"{label}: backretrieval version {record.task_version}, but the calibration is for version "
            f"{scope['versions']['backretrieval']}"
        )
    used, (low, high) = record.extra.get("n_used"), scope["n_used"]["backretrieval"]
    if not isinstance(used, int) or not low / (1 + N_TOLERANCE) <= used <= high * (1 + N_TOLERANCE):
        raise HarnessError(
            f"{label}: backretrieval ranked among n_used = {used} images, but the calibration holds for "
            f"{low}-{high} (±{N_TOLERANCE:.0%}); rerun with --task-args n={(low + high) // 2}"
        )
    value = record.metrics.get(record.main_metric)
    if value is None:
        raise HarnessError(f"{label}: backretrieval {record.main_metric} is undefined")
    defined = [v for v in record.per_seed.get(record.main_metric, []) if v is not None]
    std = record.metrics_std.get(record.main_metric) if len(defined) > 1 else scope["median_bkr_std"]
    mapping = calibrate_fit.MonotoneMap(calibration["map"]["method"], calibration["map"]["params"])
    point, low_y, high_y = calibrate_fit.interval(
        mapping,
        float(value),
        float(std or 0.0) / math.sqrt(max(1, len(defined))),
        calibration["residuals"],
        calibration["confidence"],
    )
    warnings = []
    if not scope["bkr_range"][0] <= value <= scope["bkr_range"][1]:
        warnings.append(
            f"BkR {value:.3f} is outside the calibrated range {scope['bkr_range'][0]:.3f}-{scope['bkr_range'][1]:.3f}: "
            "the map is extrapolated (constant for isotonic)"
        )
    if record.extra.get("g") != scope["g"]:
        warnings.append(f"g differs from the calibration's ({record.extra.get('g')} vs {scope['g']})")
    if len(defined) < 2:
        warnings.append("one seed: the calibration's median std over seeds stands in for this result's")
    return {
        "label": label,
        "retrieval": scope["retrieval"],
        "bkr": float(value),
        "seeds": len(defined),
        "xlr": point,
        "low": low_y,
        "high": high_y,
        "warnings": warnings,
    }


def format_estimate(result: dict[str, Any], k: Any, confidence: float) -> str:
    """``<model> <direction>: BkR R@10 0.312 (25 seeds) -> estimated XLR R@10 0.83 [0.76, 0.89] (95%, cosine)``."""
    return (
        f"{result['label']}: BkR R@{k} {result['bkr']:.3f} ({result['seeds']} seeds) -> estimated XLR R@{k} "
        f"{result['xlr']:.2f} [{result['low']:.2f}, {result['high']:.2f}] ({confidence:.0%}, {result['retrieval']})"
    )


def format_validation(calibration: dict[str, Any]) -> str:
    """The cross-validated errors of both methods, and the choice."""
    lines = [f"{'method':<10}{'held out':<10}{'MAE':>8}{'RMSE':>8}{'max':>8}{'coverage':>12}"]
    for method, schemes in calibration["validation"].items():
        for scheme, values in schemes.items():
            if "skipped" in values:
                lines.append(f"{method:<10}{scheme:<10}  {values['skipped']}")
                continue
            cover = values["coverage"]
            shown = f"{cover['inside']}/{cover['points']}" if cover["points"] else "n/a"
            lines.append(
                f"{method:<10}{scheme:<10}{values['mae']:>8.3f}{values['rmse']:>8.3f}{values['max']:>8.3f}{shown:>12}"
            )
    scope = calibration["scope"]
    points = calibration["provenance"]["points"]
    lines.append(
        f"chosen: {calibration['method']} (smaller worst-case RMSE), fitted on {len(points)} points "
        f"({len({p['model'] for p in points})} models), k = {scope['k']}, retrieval {scope['retrieval']}, BkR n_used "
        f"{'-'.join(map(str, scope['n_used']['backretrieval']))}"
    )
    return "\n".join(lines)


def plot(calibration: dict[str, Any], path: Path) -> None:
    """XLR against BkR, one point per model and direction, both maps fitted on all points, and the chosen map's interval."""
    from matplotlib.figure import Figure

    points = [Point(**p) for p in calibration["provenance"]["points"]]
    figure = Figure(figsize=(5.6, 4.0))
    axes = figure.subplots()
    for index, pair in enumerate(sorted({p.direction for p in points})):
        chosen = [p for p in points if p.direction == pair]
        axes.errorbar(
            [p.bkr for p in chosen],
            [p.xlr for p in chosen],
            xerr=[p.bkr_std for p in chosen],
            fmt="osD^v<>"[index % 7],
            markersize=4,
            capsize=2,
            linestyle="none",
            alpha=0.8,
            label=pair,
        )
    low, high = calibration["scope"]["bkr_range"]
    grid = np.linspace(max(0.0, low - 0.02), min(1.0, high + 0.02), 200)
    x, y = np.array([p.bkr for p in points]), np.array([p.xlr for p in points])
    for method, style in zip(calibrate_fit.METHODS, ("--", "-")):
        axes.plot(
            grid,
            calibrate_fit.fit(x, y, method)(grid),
            style,
            color="black",
            linewidth=1.0 if method != calibration["method"] else 1.6,
            label=f"{method}{' (chosen)' if method == calibration['method'] else ''}",
        )
    mapping = calibrate_fit.MonotoneMap(calibration["map"]["method"], calibration["map"]["params"])
    se = float(np.median([p.se for p in points]))
    bands = np.array(
        [
            calibrate_fit.interval(mapping, float(v), se, calibration["residuals"], calibration["confidence"])
            for v in grid
        ]
    )
    axes.fill_between(
        grid, bands[:, 1], bands[:, 2], color="grey", alpha=0.2, label=f"{calibration['confidence']:.0%} interval"
    )
    k = calibration["scope"]["k"]
    axes.set_xlabel(f"BackRetrieval R@{k} (mean ± std over seeds)")
    axes.set_ylabel(f"XLR R@{k}")
    axes.set_ylim(0, 1.02)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=7, loc="lower right")
    axes.set_title(f"BkR to XLR: {len(points)} points, {len({p.model for p in points})} models", fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=200)


class CalibrateCommand:
    """Fit a monotone BackRetrieval-to-XLR map on parallel data, or apply one to BackRetrieval results."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """``fit RESULTS... --output FILE`` and ``apply CALIBRATION RESULTS...``."""
        actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
        fitting = actions.add_parser("fit", help="cross-validate, choose and fit the map; save it as JSON")
        fitting.add_argument("results", nargs="+", help="results.jsonl files (or folders) with xlr and backretrieval")
        fitting.add_argument("--method", default="auto", choices=("auto", *calibrate_fit.METHODS))
        fitting.add_argument("--confidence", type=float, default=CONFIDENCE, help="interval level (default 0.95)")
        fitting.add_argument("--output", default="calibration.json", help="where to save the calibration")
        fitting.add_argument(
            "--plot", default=None, help="also draw the points, both maps and the interval to this PNG"
        )
        applying = actions.add_parser("apply", help="estimate XLR from backretrieval results")
        applying.add_argument("calibration", help="a file written by 'harness calibrate fit'")
        applying.add_argument("results", nargs="+", help="results.jsonl files (or folders) with backretrieval")
        for sub in (fitting, applying):
            sub.add_argument("--select", default=None, help="keep only records whose task arguments match, k=v,...")

    def run(self, args: argparse.Namespace) -> int:
        """Fit or apply."""
        where = parse_kv(args.select, "--select")
        origins: dict[int, str] = {}
        records: list[ResultRecord] = []
        for path in args.results:
            found = meta.select(meta.load_records([path]), where)
            origins.update((id(r), path) for r in found)
            records += found
        if args.action == "fit":
            if not 0 < args.confidence < 1:
                raise HarnessError(f"--confidence must be between 0 and 1, got {args.confidence}")
            calibration = calibrate(
                records, method=args.method, confidence=args.confidence, sources=args.results, origins=origins
            )
            try:
                Path(args.output).write_text(json.dumps(calibration, indent=2) + "\n", encoding="utf-8")
                if args.plot:
                    plot(calibration, Path(args.plot))
            except OSError as exc:
                raise HarnessError(f"cannot write {args.output!r}: {exc.strerror or exc}") from None
            print(format_validation(calibration))
            print(f"written: {args.output}", file=sys.stderr)
            return 0
        calibration = load(args.calibration)
        found = [r for r in records if meta.retrieval_role(r) == "backretrieval"]
        if not found:
            raise HarnessError("apply needs backretrieval results")
        for record in found:
            result = estimate(calibration, record, found)
            print(format_estimate(result, calibration["scope"]["k"], calibration["confidence"]))
            for warning in result["warnings"]:
                print(f"harness: warning: {result['label']}: {warning}", file=sys.stderr)
        return 0


COMMAND = CalibrateCommand()
