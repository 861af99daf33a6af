"""What a task class declares, checked once when the registry first loads it: class-attribute typos and the
contract of the role it claims.

Registration is lazy (a hook names ``"module:Class"``; nothing is imported), so a task class is checked when it
is first loaded, once per process: each problem is one warning naming the task (and, for a contract, its role
and what is missing), like an unknown registration keyword.
"""

from __future__ import annotations

from typing import Any

from harness.plugins.contracts import contract_of, missing_parts

_TYPO_DISTANCE = 2
_ROOT = ("harness.run.task", "Task")  # found in the class's bases: this layer imports no task module


def task_class_problems(registry: Any, name: str, cls: Any) -> list[str]:
    """The warnings about task class ``cls`` registered as ``name`` (in ``registry``, a ``Registry``): attribute
    typos, then its role's contract."""
    root = next((k for k in getattr(cls, "__mro__", ()) if (k.__module__, k.__qualname__) == _ROOT), None)
    if root is None:
        return []
    return [*_typos(name, cls, root), *_contract_gaps(registry, name, cls)]


def _typos(name: str, cls: type, root: type) -> list[str]:
    """Public class attributes, of ``cls`` or a base below ``root``, within edit distance 2 of one ``root``
    declares (``familly`` for ``family``): the task would silently keep the default of the one it meant."""
    known = _declared_attributes(root)
    found = []
    seen: set[str] = set()
    for klass in cls.__mro__:
        if klass is root or not issubclass(klass, root):
            continue
        for attribute, value in vars(klass).items():
            if attribute.startswith("_") or attribute in known or attribute in seen or callable(value):
                continue
            seen.add(attribute)
            close = sorted((edit_distance(attribute, k), k) for k in known)
            if close and close[0][0] <= _TYPO_DISTANCE:
                found.append(
                    f"task {name!r} ({cls.__module__}.{cls.__qualname__}): class attribute {attribute!r} is not one "
                    f"a Task reads (did you mean {close[0][1]!r}?); it is ignored"
                )
    return found


def _declared_attributes(root: type) -> set[str]:
    """The public class attributes ``root`` declares (annotated or assigned, not methods)."""
    annotated = set(getattr(root, "__annotations__", {}))
    assigned = {k for k, v in vars(root).items() if not callable(v) and not isinstance(v, (property, classmethod))}
    return {k for k in annotated | assigned if not k.startswith("_")}


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance: insertions, deletions and substitutions that turn ``a`` into ``b``."""
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other)))
        previous = current
    return previous[-1]


def _contract_gaps(registry: Any, name: str, cls: Any) -> list[str]:
    """One warning when the task claims a role whose contract it does not meet (a required meaning, a metric)."""
    family, role = getattr(cls, "family", None), getattr(cls, "role", None) or name
    registration = registry.entries["family"].get(family) if isinstance(family, str) else None
    if registration is None:
        return []
    contract = contract_of(registration.info.get("contracts", ()), role)
    if contract is None:
        return []
    meanings = [param.meaning for param in getattr(cls, "params", {}).values()]
    metrics = [metric.name for metric in getattr(cls, "metrics", ())] + [getattr(cls, "main_metric", "")]
    missing = missing_parts(contract, meanings, metrics)
    if not missing:
        return []
    return [
        f"task {name!r} claims role {role!r} of family {family!r} but misses part of its contract: "
        f'{"; ".join(missing)} (the readers of the role may leave it out; docs/plugins.md, "Roles are contracts")'
    ]
