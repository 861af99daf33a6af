"""The grammar of task names (light: ``harness list`` reads presets without importing numpy)."""

from __future__ import annotations

import re

TASK_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")
"""The grammar of a task name: letters, digits, ``_`` and ``-`` (no ``/``, ``|``, ``.``, ``,`` or spaces: a name
goes into file names, signatures, ``--tasks`` lists and ``--task-args TASK.key=value``)."""


def task_name_problem(name: str) -> str | None:
    """Why ``name`` is not a valid task name, or None."""
    if TASK_NAME.fullmatch(name):
        return None
    return (
        f"{name!r} is not a valid task name: use letters, digits, '_' and '-' (at most 100 characters, "
        "starting with a letter or digit)"
    )
