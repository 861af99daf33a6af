"""The suite file: models x tasks x an argument grid, the results it fills and the board made from them.

In the spirit of HELM's run specs and suites (``helm-run`` then ``helm-summarize``)::

    suite: 1                               # the format's version
    variables:                             # ${name} in any string below; `harness suite --set name=VALUE`
      data: ../../shared/data              # relative paths: against the suite file's folder
      work: ../../suite-work               # scratch for prepared inputs (generated data, stand-in images)
    results: results                       # each group writes <results>/<folder>/results.jsonl
    board: .                               # the leaderboard folder (omit it: no board)
    prepare:                               # harness commands run before the grid while `creates` is missing
      - creates: ${work}/stand-in-images
        command: [commute-stand-in-images, --data-dir, "${data}/commute", --output, "${work}/stand-in-images"]
    groups:
      - name: ikea
        tasks: [xlr, backretrieval, corr]
        models:
          - e5-small                       # a registered name, Hub id or folder ...
          - {name: e5-small-hf, args: {pooling: cls}}   # ... with adapter arguments
        data_dir: ${data}/ikea
        task_args:                         # the cells: a list of argument sets, or a mapping of lists (their product)
          - {src: en, tgt: de}
          - {src: de, tgt: en}
        options: {seeds: 25}               # run options: seeds, limit, images, image_model, resamples, batch_size
        logs: compact                      # per-sample logs kept: compact (what compare reads), full, or none
        logs_without: [corr]               # roles whose logs are not kept
        folder: ikea                       # the results subfolder (default: the group's name)

A cell is one (group, model, argument set): every task of the group runs on it. ``harness suite`` skips what the
results already hold (resume), splits the cells for job arrays (``--shard I/N``) and then builds the board.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import HarnessError

FORMAT = 1
RUN_OPTIONS = ("seeds", "limit", "images", "image_model", "resamples", "batch_size", "device")
LOGS = ("compact", "full", "none")
_TOP = ("suite", "variables", "results", "board", "prepare", "groups")
_GROUP = ("name", "tasks", "models", "data_dir", "task_args", "options", "logs", "logs_without", "folder")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class SuiteError(HarnessError):
    """A suite file that cannot be read, naming the file and the key at fault."""

    def __init__(self, path: str | os.PathLike[str], where: str, problem: str):
        super().__init__(f"{os.fspath(path)}: {where}: {problem}" if where else f"{os.fspath(path)}: {problem}")


@dataclass(frozen=True)
class SuiteModel:
    """A model of a group: its name (preset, Hub id or folder) and adapter arguments."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Prepare:
    """A harness command run before the grid while ``creates`` does not exist."""

    command: tuple[str, ...]
    creates: Path


@dataclass(frozen=True)
class Group:
    """Tasks run together on every (model, argument set) of the group."""

    name: str
    tasks: tuple[str, ...]
    models: tuple[SuiteModel, ...]
    cells: tuple[Mapping[str, Any], ...]
    folder: str
    data_dir: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    logs: str = "compact"
    logs_without: tuple[str, ...] = ()


@dataclass(frozen=True)
class Cell:
    """One unit of work: every task of ``group`` with ``model`` on ``task_args``."""

    group: Group
    model: SuiteModel
    task_args: Mapping[str, Any]


@dataclass(frozen=True)
class Suite:
    """A read suite file: where results and the board go, what to prepare, and the groups."""

    path: Path
    results: Path
    board: Path | None
    prepare: tuple[Prepare, ...]
    groups: tuple[Group, ...]

    def cells(self) -> list[Cell]:
        """Every cell, in file order (groups, then models, then argument sets): the order of work and of shards."""
        return [Cell(group, model, args) for group in self.groups for model in group.models for args in group.cells]


def read_suite(path: str | os.PathLike[str], overrides: Mapping[str, str] | None = None) -> Suite:
    """Read and check a suite file; ``overrides`` set variables (``--set data=DIR``)."""
    import yaml

    path = Path(path)
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SuiteError(path, "", f"cannot be read ({exc.strerror or exc})") from None
    except yaml.YAMLError as exc:
        raise SuiteError(path, "", f"not valid YAML: {exc}") from None
    if not isinstance(document, dict):
        raise SuiteError(path, "", "a suite file is a mapping with 'suite', 'results' and 'groups'")
    _only(path, "the file", document, _TOP)
    if document.get("suite") != FORMAT:
        raise SuiteError(path, "suite", f"must be {FORMAT} (the format's version), got {document.get('suite')!r}")
    base = path.resolve().parent
    variables = {str(k): _place(base, str(v)) for k, v in (document.get("variables") or {}).items()}
    variables.update(overrides or {})
    expand = _Expander(path, variables)
    results = _place(base, expand(_required(path, document, "results", str), "results"))
    board = document.get("board")
    prepare = tuple(
        Prepare(
            tuple(
                expand(str(word), f"prepare[{i}].command")
                for word in _required(path, step, "command", list, f"prepare[{i}]")
            ),
            Path(_place(base, expand(_required(path, step, "creates", str, f"prepare[{i}]"), f"prepare[{i}].creates"))),
        )
        for i, step in enumerate(document.get("prepare") or [])
    )
    groups = tuple(
        _group(path, index, raw, expand) for index, raw in enumerate(_required(path, document, "groups", list))
    )
    names = [group.name for group in groups]
    if len(set(names)) != len(names):
        raise SuiteError(path, "groups", f"group names must differ: {names}")
    return Suite(
        path,
        Path(results),
        Path(_place(base, expand(str(board), "board"))) if board is not None else None,
        prepare,
        groups,
    )


def _group(path: Path, index: int, raw: Any, expand: _Expander) -> Group:
    where = f"groups[{index}]"
    if not isinstance(raw, dict):
        raise SuiteError(path, where, "a group is a mapping with 'name', 'tasks' and 'models'")
    _only(path, where, raw, _GROUP)
    name = _required(path, raw, "name", str, where)
    models = tuple(
        _model(path, f"{where}.models[{i}]", m) for i, m in enumerate(_required(path, raw, "models", list, where))
    )
    options = dict(raw.get("options") or {})
    _only(path, f"{where}.options", options, RUN_OPTIONS)
    logs = raw.get("logs", "compact")
    if logs not in LOGS:
        raise SuiteError(path, f"{where}.logs", f"must be one of {', '.join(LOGS)}, got {logs!r}")
    data_dir = raw.get("data_dir")
    return Group(
        name=name,
        tasks=tuple(str(t) for t in _required(path, raw, "tasks", list, where)),
        models=models,
        cells=_cells(path, f"{where}.task_args", raw.get("task_args")),
        folder=str(raw.get("folder", name)),
        data_dir=expand(str(data_dir), f"{where}.data_dir") if data_dir is not None else None,
        options={k: expand(v, f"{where}.options.{k}") if isinstance(v, str) else v for k, v in options.items()},
        logs=logs,
        logs_without=tuple(str(r) for r in raw.get("logs_without") or ()),
    )


def _model(path: Path, where: str, raw: Any) -> SuiteModel:
    if isinstance(raw, str):
        return SuiteModel(raw)
    if isinstance(raw, dict) and isinstance(raw.get("name"), str):
        _only(path, where, raw, ("name", "args"))
        return SuiteModel(raw["name"], dict(raw.get("args") or {}))
    raise SuiteError(path, where, f"a model is a name or {{name: ..., args: {{...}}}}, got {raw!r}")


def _cells(path: Path, where: str, raw: Any) -> tuple[Mapping[str, Any], ...]:
    """A list of argument sets as given, or the product of a mapping of lists; none given: one empty set."""
    if raw is None:
        return ({},)
    if isinstance(raw, list) and all(isinstance(cell, dict) for cell in raw):
        return tuple(dict(cell) for cell in raw)
    if isinstance(raw, dict):
        keys = list(raw)
        values = [v if isinstance(v, list) else [v] for v in raw.values()]
        return tuple(dict(zip(keys, combination)) for combination in itertools.product(*values))
    raise SuiteError(path, where, "a list of argument sets ({src: en, tgt: de}) or a mapping of lists")


def _required(path: Path, raw: dict[str, Any], key: str, kind: type, where: str = "") -> Any:
    value = raw.get(key) if isinstance(raw, dict) else None
    if not isinstance(value, kind) or (kind is list and not value):
        raise SuiteError(
            path,
            f"{where}.{key}" if where else key,
            f"is required ({'a non-empty list' if kind is list else 'a ' + kind.__name__})",
        )
    return value


def _only(path: Path, where: str, raw: dict[str, Any], valid: tuple[str, ...]) -> None:
    import difflib

    for key in raw:
        if key not in valid:
            close = difflib.get_close_matches(str(key), valid, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"valid keys: {', '.join(valid)}"
            raise SuiteError(path, where, f"unknown key {key!r} ({hint})")


def _place(base: Path, value: str) -> str:
    """A path relative to the suite file's folder (absolute paths and ${...} templates are left as they are)."""
    if "${" in value or os.path.isabs(value):
        return value
    return os.path.normpath(base / value)


class _Expander:
    """Replaces ``${name}`` with the suite's variables; an unknown name is an error naming where it stands."""

    def __init__(self, path: Path, variables: Mapping[str, str]):
        self.path, self.variables = path, variables

    def __call__(self, text: str, where: str) -> str:
        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in self.variables:
                known = ", ".join(sorted(self.variables)) or "none"
                raise SuiteError(self.path, where, f"unknown variable ${{{name}}} (defined: {known})")
            return self.variables[name]

        return _VARIABLE.sub(one, text)
