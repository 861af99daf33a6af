"""``--select k=v,...`` of ``harness compare``: which results a selection keeps, and how to name each of several
configurations that remain so that the user can pick one.

A key is a task argument of the result when the result has it (``lang=fr``, ``prefix_removal=False``), or the
conventional name of an argument of its family's contracts that the task declares under another name (``tgt=de``
for a plugin's ``target_lang`` meaning ``lang.target``: ``harness.plugins.contracts.named_args``); otherwise
``dataset`` (or ``data``, for a task with a ``dataset`` argument) names the data set: any folder of its source path or the path's end (``commute``,
``xling-shapes-commute/en-fr``), the whole source, or its revision as the signature shows it (``698bf2945799``,
``commute@698bf2945799``); ``items`` is its size. Two configurations that differ only in their data (the real
CoMMuTE and the generated set, both ``lang=fr``) are told apart that way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.leaderboard.merge import Result
from harness.plugins.contracts import family_arguments, named_args
from harness.plugins.registry import get_registry

DATA_KEYS = ("dataset", "data")


def matches(value: Any, wanted: Any) -> bool:
    """Equality of a value with what ``--select`` asks: as text (case-insensitive), or as numbers (``1`` is ``1.0``)."""
    if str(value).lower() == str(wanted).lower():
        return True
    try:
        return float(value) == float(wanted)
    except (TypeError, ValueError):
        return False


def selected(result: Result, select: Mapping[str, Any]) -> bool:
    """Whether every ``key=value`` of ``select`` holds for ``result`` (see the module's docstring)."""
    return all(_holds(result, key, wanted) for key, wanted in select.items())


def _holds(result: Result, key: str, wanted: Any) -> bool:
    # a task's arguments, and those of its family's contracts under their conventional names (tgt=de also selects a
    # plugin's xlr-like task whose target language is ``target_lang``, declared as meaning lang.target)
    args = named_args(result.record, family_arguments(get_registry()).get(result.record.family or ""))
    if key in args or key not in (*DATA_KEYS, "items"):
        return matches(args.get(key), wanted)
    if key == "items":
        return matches(result.record.dataset.get("size"), wanted)
    return str(wanted) in data_names(result)


def data_names(result: Result) -> set[str]:
    """Every name ``dataset=`` accepts for the result's data set."""
    source = str(result.record.dataset.get("source") or "")
    parts = [part for part in source.replace("\\", "/").split("/") if part]
    signature = result.signature
    names = {source, *parts, *("/".join(parts[i:]) for i in range(len(parts)))}
    names |= {signature.data_revision, f"{signature.data_loader}@{signature.data_revision}"}
    return names - {""}


def choices(results: Sequence[Result], select: Mapping[str, Any]) -> str:
    """Each of several configurations as the ``--select`` that keeps it alone (``select``, the arguments that differ,
    and its data set where the arguments do not tell it apart), with its data set and size:
    ``--select lang=fr,dataset=commute (data /data/commute/en-fr, 154 items)``."""
    shown = []
    for result in results:
        others = [other for other in results if other is not result]
        picks = dict(select)
        for name, value in result.signature.args:
            if any(dict(other.signature.args).get(name) != value for other in others):
                picks[name] = value
        rivals = [other for other in others if selected(other, picks)]  # what the arguments leave beside it
        if any(_data(other) != _data(result) for other in rivals):
            key = next((k for k in DATA_KEYS if k not in result.record.task_args), DATA_KEYS[-1])
            picks[key] = _data_name(result, [other for other in rivals if _data(other) != _data(result)])
        elif any(other.signature.items != result.signature.items for other in rivals):
            picks["items"] = result.signature.items
        what = f"data {result.record.dataset.get('source') or result.signature.data_loader}, {result.signature.items} items"
        if any(selected(other, picks) for other in others):  # nothing --select can name tells them apart
            what += f"; {result.signature.configuration()}"
        shown.append(f"--select {','.join(f'{k}={v}' for k, v in picks.items())} ({what})")
    return "; ".join(shown)


def _data(result: Result) -> tuple[str, str]:
    return result.signature.data_loader, result.signature.data_revision


def _data_name(result: Result, rivals: Sequence[Result]) -> str:
    """A name of the result's data that names none of its rivals' data: a folder of its source, from the end (the
    folder that holds the language folders), else its revision."""
    taken = set().union(*(data_names(rival) for rival in rivals))
    source = str(result.record.dataset.get("source") or "")
    for part in reversed([p for p in source.replace("\\", "/").split("/") if p]):
        if part not in taken:
            return part
    return result.signature.data_revision
