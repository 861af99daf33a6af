"""The merge rules.

- Records are grouped by (model, role, task signature); the newest (by ``started``) is current,
  the older ones are kept as superseded. A line read twice (the same file given twice, or copied
  between machines) counts once.
- A column is (role, main metric, task signature): records of different models share a column
  only when their task signatures are equal. A task is known by the role it plays (``role_of``):
  a preset of ``xlr`` signs its lines with its own name, and its signature is compared with the
  task name replaced by the role, so the same configuration run as ``ikea_en_de_xlr`` or as
  ``xlr`` is one column. Differing signatures become separate, labelled columns; nothing is ever
  averaged across signatures.
- A model is its (name, revision, arguments), as in the full signature; models whose short names
  collide get labels that tell them apart.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar, cast

from harness.errors import HarnessError
from harness.leaderboard.families import OTHER, Families, Family, registered_families
from harness.results.load import Entry
from harness.results.records import ResultRecord, role_of, started_time
from harness.results.signature import Signature, SignatureError, identifying_args

T = TypeVar("T")
_OLDEST = datetime.min.replace(tzinfo=timezone.utc)
_LOCAL = ("/", "./", "../", "~")
BY_CONSTRUCTION = "by construction"  # the phrase of a warning that a value is fixed whatever the model does  # a model given as a local folder is labelled by the folder's name


@dataclass(frozen=True)
class Column:
    """One cell per model: a role's main metric under one task signature.

    ``signature`` names the role (``xlr|...``); ``recorded`` are the task signatures as the lines
    wrote them (a preset's carries its own name), ``tasks`` the task names that ran it.
    """

    role: str
    metric: str
    signature: Signature
    label: str
    family: Family = OTHER
    recorded: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()

    @property
    def task_signature(self) -> str:
        """The task signature, named by the role."""
        return str(self.signature)


@dataclass(slots=True)
class Result:
    """A merged record: its model's key and label, its task signature, and whether a newer record replaced it."""

    entry: Entry
    model_key: str
    model_label: str
    superseded: bool
    signature: Signature

    @property
    def record(self) -> ResultRecord:
        """The record."""
        return self.entry.record

    @property
    def fixed(self) -> bool:
        """Whether its main value says nothing about the model: undefined, or so by construction (its line says)."""
        record = self.entry.record
        return record.metrics.get(record.main_metric) is None or any(BY_CONSTRUCTION in w for w in record.warnings)


@dataclass
class Board:
    """Everything the outputs are written from.

    ``results``: all, current and superseded, in output order; ``columns``: in table order;
    ``cells``: the current result of (model key, column); ``labels``: model key -> label, in
    label order; ``examples``: one current result per column; ``index``: the families.
    """

    results: list[Result]
    columns: list[Column]
    cells: dict[tuple[str, Column], Result]
    labels: dict[str, str]
    examples: dict[Column, Result]
    index: Families

    @property
    def current(self) -> list[Result]:
        """The results not superseded, in output order."""
        return list(self.once("current", lambda board: [r for r in board.results if not r.superseded]))

    def families(self) -> list[tuple[Family, list[Column]]]:
        """The families present, each with its columns, informative first: those that declare an ``order`` (by
        it), then those with a result that is not fixed (see ``Result.fixed``) before those without, then by how
        many models each compares (most first), then in registration order; ``Other tasks`` last (worked out once:
        a board does not change once merged)."""
        return list(self.once("families", Board._families))

    def _families(self) -> list[tuple[Family, list[Column]]]:
        grouped: dict[Family, list[Column]] = {}
        for column in self.columns:
            grouped.setdefault(column.family, []).append(column)
        registered = self.index.families

        def informative(item: tuple[Family, list[Column]]) -> tuple[int, int, int, int, int, int, str]:
            family, columns = item
            results = [self.cells[key, c] for c in columns for key in self.labels if (key, c) in self.cells]
            models = len({r.model_key for r in results})
            fixed = all(r.fixed for r in results)
            place = registered.index(family) if family in registered else len(registered)
            return (family is OTHER, family.order is None, family.order or 0, fixed, -models, place, family.name)

        return sorted(grouped.items(), key=informative)

    def once(self, name: str, work: Callable[[Board], T]) -> T:
        """``work(self)``, worked out once per board (a board does not change once merged): what several pages and
        plots read. Keep what is returned as it is (copy it to change it)."""
        memo = self.__dict__.setdefault("_once", {})
        if name not in memo:
            memo[name] = work(self)
        return cast(T, memo[name])

    def key_of(self, label: str) -> str:
        """The model key a label stands for ("" for none)."""
        keys = self.once("keys", lambda board: {shown: key for key, shown in board.labels.items()})
        return str(keys.get(label, ""))

    def example(self, column: Column) -> ResultRecord:
        """A record of the column (all share the task signature, so any one tells its arguments)."""
        return self.examples[column].record


def model_key(model: dict[str, Any]) -> str:
    """A model's identity as in its full signature: name, revision, arguments (``identifying_args``: with the dtype)."""
    return json.dumps([model.get("name"), model.get("revision"), identifying_args(model)], sort_keys=True, default=str)


_PLAIN = frozenset({str, int, bool, type(None)})  # values equal only when written alike (not so 0.0 and -0.0)


def _model_key(model: dict[str, Any], known: dict[tuple[Any, ...], str]) -> str:
    """``model_key``, worked out once per distinct name, revision and arguments when all of them (the arguments'
    names too) are plain values (text, integers, booleans, null: ``known`` holds them with their types)."""
    args = model.get("args") or {}
    if type(args) is not dict:
        return model_key(model)
    values = (model.get("name"), model.get("revision"), model.get("dtype"), *args, *args.values())
    kinds = tuple(map(type, values))
    if not set(kinds) <= _PLAIN:
        return model_key(model)
    memo = (*values, *kinds)
    found = known.get(memo)
    if found is None:
        found = known[memo] = model_key(model)
    return found


def started_at(text: str) -> datetime:
    """A record's start time (UTC when the text gives no zone); the reader refuses lines without one, so the
    oldest possible time only orders records built in code."""
    try:
        return started_time(text)
    except ValueError:
        return _OLDEST


def _canonical(entry: Entry) -> str:
    return json.dumps(asdict(entry.record), sort_keys=True, ensure_ascii=False)


def _newest_first(group: list[Entry]) -> list[Entry]:
    """The group without repeated lines, newest first; equal start times are ordered by content,
    so the order of the input never matters (content is serialised only for such ties)."""
    if len(group) == 1:
        return group
    by_time: dict[datetime, list[Entry]] = {}
    for entry in group:
        by_time.setdefault(started_at(entry.record.started), []).append(entry)
    ordered = []
    for moment in sorted(by_time, reverse=True):
        same = by_time[moment]
        if len(same) > 1:
            unique = {_canonical(e): e for e in sorted(same, key=lambda e: str(e.source))}
            same = [unique[text] for text in sorted(unique, reverse=True)]
        ordered += same
    return ordered


def _refine(labels: dict[str, str], detail: Callable[[list[str]], dict[str, str]]) -> None:
    """Replace the labels that collide with what ``detail`` gives for each colliding group."""
    groups: dict[str, list[str]] = {}
    for key, label in labels.items():
        groups.setdefault(label, []).append(key)
    for keys in groups.values():
        if len(keys) > 1:
            labels.update(detail(sorted(keys)))


def model_labels(identities: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Short, unique labels: the model name (a local folder's name), then more only where labels collide."""
    names = {key: str(identity.get("name")) for key, identity in identities.items()}
    labels = {key: (Path(name).name or name) if name.startswith(_LOCAL) else name for key, name in names.items()}
    _refine(labels, lambda keys: {k: names[k] for k in keys} if len({names[k] for k in keys}) > 1 else {})

    def by_args(keys: list[str]) -> dict[str, str]:
        args = {k: _label_args(identities[k]) for k in keys}
        differing = sorted(
            {
                name
                for a in args.values()
                for name in a
                if len({json.dumps(b.get(name), sort_keys=True, default=str) for b in args.values()}) > 1
            }
        )
        if not differing:
            return {}
        return {
            k: labels[k] + "(" + ",".join(f"{name}={_shown(args[k].get(name))}" for name in differing) + ")"
            for k in keys
        }

    _refine(labels, by_args)
    _refine(labels, lambda keys: {k: f"{labels[k]}@{str(identities[k].get('revision'))[:12]}" for k in keys})
    _refine(labels, lambda keys: {k: f"{labels[k]}#{index + 1}" for index, k in enumerate(keys)})
    return labels


def _label_args(identity: dict[str, Any]) -> dict[str, Any]:
    """The arguments a label may name: ``identifying_args``, with the dtype named even where it is float32."""
    args = identifying_args(identity)
    if "dtype" in args or identity.get("dtype") is None:
        return args
    return {**args, "dtype": identity["dtype"]}


def _shown(value: Any) -> str:
    """An adapter argument in a label; unset (absent or None) is the adapter's default."""
    return "default" if value is None else str(value)


def differing_parts(signatures: Iterable[Signature]) -> dict[Signature, list[str]]:
    """Per signature, its formatted parts (after the task name) that not all the others share."""
    parts = {signature: signature.parts()[1:] for signature in signatures}
    shared = set.intersection(*(set(p) for p in parts.values())) if parts else set()
    return {signature: [part for part in own if part not in shared] for signature, own in parts.items()}


def telling_apart(signatures: Iterable[Signature]) -> dict[Signature, list[str]]:
    """Per signature, the parts that tell it from the others as a reader wants them: ``differing_parts``, a part
    with a revision shortened to what precedes its ``@`` (``image:efficientnet-lite0``) where that still tells
    them apart, and for one with no part of its own what the others have and it lacks (``no image model``,
    ``without limit``)."""
    found = differing_parts(signatures)
    short = {signature: [part.split("@", 1)[0] for part in parts] for signature, parts in found.items()}
    if len({tuple(parts) for parts in short.values()}) == len(short):
        found = short
    models = {part.role for signature in found for part in signature.aux_models}
    names = sorted({part.split(":", 1)[0] for parts in found.values() for part in parts})
    lacking = [f"no {name} model" if name in models else f"without {name}" for name in names]
    return {signature: parts or lacking for signature, parts in found.items()}


def column_labels(keys: Iterable[tuple[str, str, Signature]]) -> dict[tuple[str, str, Signature], str]:
    """``task metric``, plus the signature parts that differ when a task has several signatures."""
    by_task: dict[tuple[str, str], list[Signature]] = {}
    for task, metric, signature in keys:
        by_task.setdefault((task, metric), []).append(signature)
    labels = {}
    for (task, metric), signatures in by_task.items():
        for signature, differing in differing_parts(signatures).items():
            labels[task, metric, signature] = f"{task} {metric}" + (f" ({', '.join(differing)})" if differing else "")
    return labels


def _parsed(entry: Entry, known: dict[tuple[str, str], Signature]) -> Signature:
    """The task signature of an entry's record named by its role, parsed once per distinct text."""
    text, role = entry.record.task_signature, role_of(entry.record)
    if (text, role) not in known:
        try:
            known[text, role] = replace(Signature.parse(text), task=role)
        except SignatureError as exc:
            raise HarnessError(
                f"{entry.source}: the {entry.record.task} result of {entry.record.model.get('name')} has a "
                f"field 'task_signature' this harness does not write ({exc})"
            ) from None
    return known[text, role]


def merge(entries: Sequence[Entry], families: Families | None = None) -> Board:
    """Apply the merge rules; the result does not depend on the order of ``entries``.

    ``families`` default to those the installed plugins register.
    """
    index = registered_families() if families is None else families
    groups: dict[tuple[str, str, Signature], list[Entry]] = {}
    identities: dict[str, dict[str, Any]] = {}
    signatures: dict[tuple[str, str], Signature] = {}
    family_of_role: dict[str, Family] = {}
    known: dict[tuple[Any, ...], str] = {}
    by_text: dict[tuple[str, str, str], list[Entry]] = {}  # grouped by the signature's text first (cheap to hash)
    for entry in entries:
        record = entry.record
        key = _model_key(record.model, known)
        identities.setdefault(key, record.model)
        role = record.role or record.task  # role_of
        if role not in family_of_role:
            family_of_role[role] = index.of_record(record)
        by_text.setdefault((key, role, record.task_signature), []).append(entry)
    for (key, role, _), group in by_text.items():  # texts that parse alike are one group
        groups.setdefault((key, role, _parsed(group[0], signatures)), []).extend(group)

    def role_order(role: str) -> tuple[int, int, str, str]:
        return index.order(family_of_role[role], role)

    labels = model_labels(identities)
    ranked: list[tuple[tuple[Any, ...], Result]] = []
    for (key, role, signature), group in groups.items():
        place = (role_order(role), str(signature), labels[key])  # once per group: a signature's text is built
        for rank, entry in enumerate(_newest_first(group)):
            ranked.append(((*place, rank), Result(entry, key, labels[key], rank > 0, signature)))
    ranked.sort(key=lambda item: item[0])
    results = [result for _, result in ranked]
    current = [r for r in results if not r.superseded]
    keys = sorted(
        {(role_of(r.record), r.record.main_metric, r.signature) for r in current},
        key=lambda k: (role_order(k[0]), k[1], str(k[2])),
    )
    names = column_labels(keys)
    recorded: dict[tuple[str, str, Signature], set[tuple[str, str]]] = {}
    for r in current:
        recorded.setdefault((role_of(r.record), r.record.main_metric, r.signature), set()).add(
            (r.record.task_signature, r.record.task)
        )
    columns = [
        Column(
            role,
            metric,
            signature,
            names[role, metric, signature],
            family_of_role[role],
            tuple(sorted({text for text, _ in recorded[role, metric, signature]})),
            tuple(sorted({task for _, task in recorded[role, metric, signature]})),
        )
        for role, metric, signature in keys
    ]
    by_key = {(c.role, c.metric, c.signature): c for c in columns}
    cells = {(r.model_key, by_key[role_of(r.record), r.record.main_metric, r.signature]): r for r in current}
    examples: dict[Column, Result] = {}
    for (_, column), result in cells.items():
        examples.setdefault(column, result)
    return Board(
        results,
        columns,
        cells,
        {key: labels[key] for key in sorted(labels, key=lambda key: labels[key])},
        examples,
        index,
    )
