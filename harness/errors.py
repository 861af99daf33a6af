"""User-facing errors: one clear sentence, shown by the CLI without a traceback."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class HarnessError(Exception):
    """An error caused by the user's input or environment, not by a bug in the harness."""


class HarnessWarning(UserWarning):
    """Something a reader of the numbers should know (an undefined metric, a spread that cannot exist): ``evaluate``
    issues each warning of its results lines as one of these (``warnings.simplefilter("error", HarnessWarning)``)."""


class UnknownNameError(HarnessError):
    """A task, model or dataset name that no plugin registered."""

    def __init__(self, kind: str, name: str, known: Iterable[str], listing: str | None = None):
        known = sorted(known)
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        if listing is None:
            listing = f"run `harness list {kind}s` to see all {len(known)}"
        super().__init__(f"unknown {kind} {name!r}{hint} ({listing})")
        self.kind, self.name, self.suggestions = kind, name, close


class DataError(HarnessError):
    """Bad input data; the message names the file (or dataset), the row and the field."""

    def __init__(self, source: str, problem: str, row: int | None = None, field: str | None = None):
        where = source
        if row is not None:
            where += f", row {row}"
        if field is not None:
            where += f", field {field!r}"
        super().__init__(f"{where}: {problem}")
        self.source, self.row, self.field = source, row, field


class CapabilityError(HarnessError):
    """A model that does not provide a capability a task needs."""
