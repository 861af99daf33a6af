"""What a command holds to the end of a process it owns is never freed: the process ends without tearing it down.

Freeing a merged board of 100,000 results lines takes half a second and tearing the interpreter down with it held
takes seconds; neither writes anything. A command hands such a value to ``hold``; ``harness.cli.main``, in a process
the command line started, then ends it with the exit handlers run (``atexit``) but not the teardown. Called from
Python (a test, a notebook), ``hold`` keeps nothing and the process ends as usual.
"""

from __future__ import annotations

_held: list[object] = []
_owned: list[bool] = []


def own_process() -> None:
    """The command line started this process: what commands ``hold`` is kept to its end."""
    _owned.append(True)


def hold(value: object) -> None:
    """Keep ``value`` until the process ends, where the process is the command line's (else nothing)."""
    if _owned:
        _held.append(value)


def holding() -> bool:
    """Whether something is held, so the process should end without freeing it."""
    return bool(_held)
