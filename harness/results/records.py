"""The results schema (validated on write and on read), signatures, and the results file."""

from __future__ import annotations

import functools
import math
import operator
import sys
import types
import typing
from collections.abc import Callable, Collection, Iterable
from dataclasses import MISSING, asdict, dataclass, field, fields
from datetime import datetime, timedelta, timezone
from itertools import repeat
from pathlib import Path
from typing import Any, Union

import orjson

from harness.errors import HarnessError
from harness.results.jsonl import BLANK, NOT_PLAIN, BadLine, append_json_line, json_line, plain_line, read_lines
from harness.results.signature import Signature, SignatureError

SCHEMA_VERSION = 1
RESULTS_FILE = "results.jsonl"
FUTURE_TOLERANCE = timedelta(days=1)
MAX_FLOAT = int(sys.float_info.max)  # an integer past it is no number a metric can be


class SchemaError(ValueError):
    """A results record that does not match the schema; the message names the field."""


@dataclass
class ResultRecord:
    """One line of ``results.jsonl``: one (task, model, configuration)."""

    task: str
    task_version: int
    task_args: dict[str, Any]
    main_metric: str
    metrics: dict[str, float | None]
    metrics_std: dict[str, float | None]
    per_seed: dict[str, list[float | None]]
    seeds: list[int]
    model: dict[str, Any]
    dataset: dict[str, Any]
    run: dict[str, Any]
    signature: str
    task_signature: str
    harness: dict[str, Any]
    environment: dict[str, Any]
    hardware: dict[str, Any]
    started: str
    wall_seconds: float
    samples_file: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # metric -> why it is undefined (its value in ``metrics`` is null), e.g. IC for a text-only scorer
    undefined: dict[str, str] = field(default_factory=dict)
    # metric -> {"display", "higher_is_better", "chance", "statistic", ...}: how to show, rank and resample it
    metric_info: dict[str, dict[str, Any]] = field(default_factory=dict)
    # metric -> {"low", "high", "confidence", "resamples", "seed", "over"}: bootstrap interval over items
    intervals: dict[str, dict[str, Any]] = field(default_factory=dict)
    # conditions that could lead a reader to a wrong conclusion (k >= n, --limit, chance by construction)
    warnings: list[str] = field(default_factory=list)
    # distribution name -> version of every plugin package that served this line (tasks, models, datasets)
    plugins: dict[str, str] = field(default_factory=dict)
    # the family the task belongs to and the role it plays in it ("an xlr-like task"), from the task class;
    # a preset inherits both from its base. Lines written before these fields existed have None.
    family: str | None = None
    role: str | None = None
    # task argument -> its declared meaning (``{"tgt": "lang.target"}``, ``Param.meaning``): how readers find an
    # argument of a role's contract whatever the task calls it. Lines written before it existed have {}.
    arg_meanings: dict[str, str] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        """A validated, JSON-ready dict."""
        data = asdict(self)
        validate(data)
        return data

    @classmethod
    def from_dict(cls, data: Any) -> ResultRecord:
        """Validate and build a record; raises ``SchemaError`` naming the bad field."""
        validate(data)
        return cls(**data)


def role_of(record: ResultRecord) -> str:
    """The role a record's task plays (``xlr`` for any xlr-like task); every command selects records by it."""
    return record.role or record.task


def family_of(record: ResultRecord) -> str | None:
    """The family a record's task belongs to, or None for a task that declares none."""
    return record.family


Checker = Callable[[Any, str], None]
_FIELDS: list[tuple[str, Checker, bool]] | None = None
_NAMES: frozenset[str] = frozenset()


def validate(data: Any) -> None:
    """Check a dict against ``ResultRecord``; raise ``SchemaError`` naming the first bad field."""
    global _FIELDS, _NAMES
    if _FIELDS is None:
        hints = typing.get_type_hints(ResultRecord)
        _FIELDS = [
            (f.name, _checker(hints[f.name]), f.default is MISSING and f.default_factory is MISSING)
            for f in fields(ResultRecord)
        ]
        _NAMES = frozenset(name for name, _, _ in _FIELDS)
    if not isinstance(data, dict):
        raise SchemaError(f"expected a JSON object, got {type(data).__name__}")
    if not _NAMES.issuperset(data):
        raise SchemaError(f"unknown field {sorted(set(data) - _NAMES)[0]!r}")
    for name, check, required in _FIELDS:
        if name in data:
            check(data[name], name)
        elif required:
            raise SchemaError(f"missing field {name!r}")
    if data.get("schema_version", SCHEMA_VERSION) > SCHEMA_VERSION:
        raise SchemaError(f"field 'schema_version': {data['schema_version']} is newer than this harness reads")
    _check_values(data)


def _check_values(data: dict[str, Any]) -> None:
    """What the types alone do not say, for every field a command reads: the model's name and arguments,
    the spread over seeds, the chance levels, the main metric, one value per seed, the data set's size, a start
    time that is one, and a signature that says what the line says (a repeated key could make a line's ``task``
    differ from its signature's)."""
    model = data["model"]
    if not isinstance(model.get("name"), str):
        raise SchemaError(f"field 'model.name': expected a string, got {type(model.get('name')).__name__}")
    if model.get("args") is not None and not isinstance(model["args"], dict):
        raise SchemaError(f"field 'model.args': expected an object, got {type(model['args']).__name__}")
    for name, std in data["metrics_std"].items():
        if std is not None and std < 0:
            raise SchemaError(f"field 'metrics_std.{name}': a standard deviation cannot be negative, got {std!r}")
    for name, info in data.get("metric_info", {}).items():
        if not isinstance(info, dict):
            raise SchemaError(f"field 'metric_info.{name}': expected an object, got {type(info).__name__}")
        _check_optional(info, f"metric_info.{name}", "chance", _check_number)
        _check_optional(info, f"metric_info.{name}", "higher_is_better", _instance_checker(bool))
        for key in ("display", "statistic", "description"):
            _check_optional(info, f"metric_info.{name}", key, _instance_checker(str))
    if data["main_metric"] not in data["metrics"]:
        raise SchemaError(f"field 'main_metric': {data['main_metric']!r} is not among the metrics")
    for name, values in data["per_seed"].items():
        if len(values) != len(data["seeds"]):
            raise SchemaError(
                f"field 'per_seed.{name}': {len(values)} values for {len(data['seeds'])} seeds (one per seed)"
            )
    size = data["dataset"].get("size")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or not 0 <= size < 2**63):
        raise SchemaError(f"field 'dataset.size': expected a count of items, got {str(size)[:40]!r}")
    _check_started(data["started"])
    _check_signature(data)


def started_time(text: str) -> datetime:
    """A line's ``started`` as a time (UTC when the text names no zone); ``ValueError`` when it is none."""
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _check_started(text: str) -> None:
    """``started`` orders a model's runs (the newest is current): a time, and not one in the future (a line
    from the future would supersede every run after it; a day is left for clocks that disagree)."""
    try:
        moment = started_time(text)
    except ValueError:
        raise SchemaError(f"field 'started': {text!r} is not an ISO 8601 time") from None
    if moment > datetime.now(timezone.utc) + FUTURE_TOLERANCE:
        raise SchemaError(f"field 'started': {text} is in the future (a run cannot have started then)")


def _check_optional(info: dict[str, Any], where: str, key: str, check: Checker) -> None:
    if info.get(key) is not None:
        check(info[key], f"{where}.{key}")


@functools.lru_cache(maxsize=4096)
def _parsed(text: str) -> Signature:
    return Signature.parse(text)


def _check_signature(data: dict[str, Any]) -> None:
    """``task`` and ``task_version`` are those of the task signature, and the signature is it with a model part.

    The model part is not parsed: a model name may hold any character, ``|`` included.
    """
    try:
        signature = _parsed(data["task_signature"])
    except SignatureError as exc:
        raise SchemaError(f"field 'task_signature': {exc}") from None
    if signature.task != data["task"]:
        raise SchemaError(f"field 'task': {data['task']!r}, but the signature is of task {signature.task!r}")
    if signature.version != data["task_version"]:
        raise SchemaError(
            f"field 'task_version': {data['task_version']!r}, but the signature says v:{signature.version}"
        )
    shared, version = data["task_signature"].rsplit("|", 1)
    full = data["signature"]
    if not (full.startswith(shared + "|model:") and full.endswith("|" + version)):
        raise SchemaError("field 'signature': it is not the task signature with a model part")


@functools.cache
def _checker(hint: Any) -> Checker:
    """A function checking a value against a type hint, built once per hint (reading results is a hot path)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType):
        return _union_checker(tuple(_checker(option) for option in args), type(None) in args)
    if hint is type(None):
        return _check_null
    if hint is Any:
        return _check_any
    if origin is dict:
        return _dict_checker(_checker(args[1]), _whole_list_check(args[1]))
    if origin is list:
        return _list_checker(_checker(args[0]), _whole_list_check(args[0]))
    if hint is float:
        return _check_number
    if hint is int:
        return _check_integer
    return _instance_checker(hint)


def _union_checker(options: tuple[Checker, ...], nullable: bool) -> Checker:
    if nullable and len(options) == 2:  # ``X | None``, the common case: one call, no error list
        option = options[0] if options[1] is _check_null else options[1]

        def check_optional(value: Any, where: str) -> None:
            if value is not None:
                option(value, where)

        return check_optional

    def check(value: Any, where: str) -> None:
        if value is None and nullable:
            return
        errors = []
        for option in options:
            try:
                return option(value, where)
            except SchemaError as exc:
                errors.append(exc)
        raise errors[0]

    return check


def _dict_checker(item: Checker, whole: Callable[[Collection[Any]], bool] | None) -> Checker:
    """Checks an object's keys and values; like lists, values of ``Any`` or of numbers are tested as a whole first."""
    anything = item is _check_any

    def check(value: Any, where: str) -> None:
        if not isinstance(value, dict):
            raise SchemaError(f"field {where!r}: expected an object, got {type(value).__name__}")
        if set(map(type, value)) <= _TEXT and (anything or (whole is not None and whole(value.values()))):
            return
        for key, element in value.items():
            if not isinstance(key, str):
                raise SchemaError(f"field {where!r}: keys must be strings")
            item(element, f"{where}.{key}")

    return check


def _list_checker(item: Checker, whole: Callable[[Collection[Any]], bool] | None) -> Checker:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, list):
            raise SchemaError(f"field {where!r}: expected a list, got {type(value).__name__}")
        if whole is not None and whole(value):
            return
        for index, element in enumerate(value):
            item(element, f"{where}[{index}]")

    return check


_TEXT = frozenset({str})
_INTEGERS = frozenset({int})
_NUMBERS = frozenset({int, float})
_NUMBERS_OR_NULL = frozenset({int, float, type(None)})


def _whole_list_check(hint: Any) -> Callable[[Collection[Any]], bool] | None:
    """For lists (or an object's values) of numbers (per-seed values, seeds) and of text: a test of the whole list at
    C speed.

    It accepts only lists that are certainly valid; any other list is then checked element by
    element, which names the first bad one.
    """
    if hint is int:
        return lambda values: set(map(type, values)) <= _INTEGERS
    if hint is str:  # warnings, plugins' versions, why a metric is undefined
        return lambda values: set(map(type, values)) <= _TEXT
    if hint is float:
        return lambda values: set(map(type, values)) <= _NUMBERS and _all_finite(values)
    if set(typing.get_args(hint)) == {float, type(None)}:
        return lambda values: set(map(type, values)) <= _NUMBERS_OR_NULL and _all_finite(filter(None, values))
    return None


def _all_finite(values: Iterable[float]) -> bool:
    """Whether every number is finite and within a float's range, as ``finite_number`` says, at C speed: compared
    exactly, so NaN is not and an integer just past the range is not either (``math.isfinite`` rounds it down to the
    largest float); such a list is then checked one by one, which names the number."""
    return all(map(operator.le, map(abs, values), repeat(sys.float_info.max)))


def _instance_checker(hint: type) -> Checker:
    def check(value: Any, where: str) -> None:
        if not isinstance(value, hint):
            raise SchemaError(f"field {where!r}: expected {hint.__name__}, got {type(value).__name__}")

    return check


def _check_null(value: Any, where: str) -> None:
    if value is not None:
        raise SchemaError(f"field {where!r}: expected null, got {type(value).__name__}")


def _check_any(value: Any, where: str) -> None:
    """Anything is accepted."""


def finite_number(value: Any) -> float | None:
    """``value`` as a float when it is a number (not a boolean) that a float holds and that is finite; else None
    (an integer past a float's range is None, where ``math.isfinite`` would raise ``OverflowError``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int) and not -MAX_FLOAT <= value <= MAX_FLOAT:
        return None
    return float(value) if math.isfinite(value) else None


def _check_number(value: Any, where: str) -> None:
    if finite_number(value) is not None:
        return
    if isinstance(value, int) and not isinstance(value, bool):
        raise SchemaError(f"field {where!r}: an integer of {len(str(abs(value)))} digits, past a float's range")
    raise SchemaError(f"field {where!r}: expected a finite number, got {value!r}")


def _check_integer(value: Any, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SchemaError(f"field {where!r}: expected an integer, got {value!r}")


def append_record(folder: str | Path, record: ResultRecord) -> Path:
    """Validate and append a record to ``<folder>/results.jsonl``."""
    path = Path(folder) / RESULTS_FILE
    append_json_line(path, record.to_dict())
    return path


def read_records(path: str | Path) -> tuple[list[ResultRecord], list[BadLine]]:
    """All valid records of a results file, and the bad lines (reported, never rewritten)."""
    records: list[ResultRecord] = []
    problems: list[BadLine] = []
    name = str(path)
    for number, raw in read_result_lines(path):
        outcome = line_outcome(name, number, raw)
        if isinstance(outcome, ResultRecord):
            records.append(outcome)
        elif outcome is not None:
            problems.append(outcome)
    return records, problems


def read_result_lines(path: str | Path) -> list[tuple[int, bytes | None]]:
    """Every line of a results file, read once (``read_lines``); an error reading it is a ``HarnessError``."""
    try:
        return read_lines(path)
    except OSError as exc:
        raise HarnessError(f"cannot read results file {path}: {exc.strerror or exc}") from None


def line_outcome(name: str, number: int, raw: bytes | None, build: bool = True) -> ResultRecord | BadLine | None:
    """What reading makes of line ``number`` of the results file ``name``: its record, a ``BadLine`` saying why it
    is skipped, or None for a blank line (``build`` False: None for a good line too, whose record is not built)."""
    return _outcome(name, number, json_line(name, number, raw), build)


def _outcome(name: str, number: int, data: Any, build: bool) -> ResultRecord | BadLine | None:
    if data is BLANK or isinstance(data, BadLine):
        return None if data is BLANK else data
    try:
        validate(data)
        return ResultRecord(**data) if build else None
    except (SchemaError, TypeError) as exc:
        return BadLine(name, number, f"does not match the results schema: {exc}")


class Unbuilt:
    """What ``unchecked_outcome`` makes of a line it builds no record from."""


UNBUILT = Unbuilt()


def unchecked_outcome(raw: bytes | None) -> ResultRecord | Unbuilt:
    """The record of a line as orjson reads it, without any check, for a line whose ``checked_elsewhere`` verdict
    decides what becomes of it; ``UNBUILT`` when orjson reads no object, or no record can be built from it."""
    try:
        data = orjson.loads(raw)  # type: ignore[arg-type]  # None (a line too long) is refused too
    except orjson.JSONDecodeError:
        return UNBUILT
    if type(data) is not dict:
        return UNBUILT
    try:
        return ResultRecord(**data)
    except TypeError:  # an unknown or a missing field: all a dataclass's __init__ refuses
        return UNBUILT


def checked_elsewhere(name: str, number: int, raw: bytes | None) -> BadLine | bool:
    """For a line whose record ``unchecked_outcome`` builds in another process: its ``BadLine`` when it is bad,
    else whether that record is what ``line_outcome`` gives (False: a blank line, or one ``parse_line`` reads
    otherwise than orjson does, which that process then reads with ``line_outcome``)."""
    data = plain_line(raw) if raw is not None else NOT_PLAIN
    if data is NOT_PLAIN:
        outcome = line_outcome(name, number, raw, build=False)
        return outcome if isinstance(outcome, BadLine) else False
    outcome = _outcome(name, number, data, build=False)
    return outcome if isinstance(outcome, BadLine) else True
