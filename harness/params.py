"""Typed parameters of tasks and model adapters, and the ``k=v,k2=v2`` syntax of the CLI."""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from harness.errors import HarnessError, UnknownNameError

_TRUE, _FALSE = {"true", "1", "yes", "on"}, {"false", "0", "no", "off"}


@dataclass(frozen=True)
class Param:
    """One parameter: its default, a one-line help, and optionally its type, allowed values and bounds.

    The type is taken from the default when not given; ``None`` defaults need ``type``.
    ``min`` and ``max`` are inclusive bounds of a numeric value, ``above`` and ``below`` exclusive
    ones (``None``, a value left unset, is never out of bounds). ``meaning`` says what the argument is across
    tasks (``"lang.target"``, a key of a role contract: ``harness.plugins.contracts``): two tasks' arguments with
    the same meaning are one argument, whatever their names and help texts.
    """

    default: Any
    help: str
    type: builtins.type | None = None
    choices: tuple[Any, ...] | None = None
    min: float | None = None
    max: float | None = None
    above: float | None = None
    below: float | None = None
    meaning: str | None = None

    def same_argument(self, other: Param) -> bool:
        """Whether two tasks' parameters are one argument: by their declared meanings when both declare one, else
        (a parameter with no meaning) by everything but the default: the same help text, type, choices and bounds."""
        if self.meaning is not None and other.meaning is not None:
            return self.meaning == other.meaning
        mine = replace(self, default=None, type=self.value_type, meaning=None)
        return mine == replace(other, default=None, type=other.value_type, meaning=None)

    @property
    def value_type(self) -> builtins.type:
        """The type values are converted to."""
        return self.type or (type(self.default) if self.default is not None else str)

    def convert(self, name: str, value: Any, owner: str) -> Any:
        """Convert a CLI string (or a Python value) to this parameter's type, or fail clearly."""
        kind = self.value_type
        try:
            if value is None or (isinstance(value, kind) and not (kind is int and isinstance(value, bool))):
                result = value
            elif kind is bool:
                text = str(value).strip().lower()
                if text not in _TRUE | _FALSE:
                    raise ValueError(f"expected true or false, got {value!r}")
                result = text in _TRUE
            else:
                result = kind(value)
        except (TypeError, ValueError) as exc:
            raise HarnessError(f"{owner}: argument {name}={value!r} is not a valid {kind.__name__}: {exc}") from None
        if self.choices is not None and result not in self.choices:
            allowed = ", ".join(map(str, self.choices))
            raise HarnessError(f"{owner}: argument {name}={result!r} must be one of: {allowed}")
        if result is not None:
            self._check_bounds(f"{owner}: argument {name}={result!r}", result)
        return result

    def _check_bounds(self, what: str, value: Any) -> None:
        """Fail with ``what`` and the bound a value breaks (NaN breaks every bound: it compares false to all)."""
        bounds = (self.min, self.max, self.above, self.below)
        if value != value and any(bound is not None for bound in bounds):
            raise HarnessError(f"{what} must be a number")
        if self.min is not None and value < self.min:
            raise HarnessError(f"{what} must be at least {self.min}")
        if self.max is not None and value > self.max:
            raise HarnessError(f"{what} must be at most {self.max}")
        if self.above is not None and value <= self.above:
            raise HarnessError(f"{what} must be greater than {self.above}")
        if self.below is not None and value >= self.below:
            raise HarnessError(f"{what} must be less than {self.below}")


def parse_kv(text: str | Mapping[str, Any] | None, what: str) -> dict[str, Any]:
    """Parse ``"a=1,b=x"`` into ``{"a": "1", "b": "x"}``; a mapping passes through unchanged."""
    if text is None:
        return {}
    if isinstance(text, Mapping):
        return dict(text)
    result: dict[str, Any] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise HarnessError(f"malformed {what} {item!r}: expected key=value pairs separated by commas")
        if key in result:
            raise HarnessError(f"malformed {what}: {key!r} is given twice")
        result[key] = value.strip()
    return result


def resolve_params(spec: Mapping[str, Param], given: Mapping[str, Any], owner: str) -> dict[str, Any]:
    """Defaults overlaid with the given values, each converted; unknown names get a suggestion."""
    for name in given:
        if name not in spec:
            known = ", ".join(sorted(spec)) or "none"
            raise UnknownNameError(f"argument for {owner}", name, spec, listing=f"it takes: {known}")
    return {name: param.convert(name, given.get(name, param.default), owner) for name, param in spec.items()}
