"""What a command holds to the end of a process it owns is never freed: the process ends without tearing it down.

Freeing a merged board of 100,000 results lines takes half a second and tearing the interpreter down with it held
takes seconds; neither writes anything. A command hands such a value to ``hold``; ``harness.cli.main``, in a process
the command line started, then ends it with the exit handlers run (``atexit``) but not the teardown. Called from
Python (a test, a notebook), ``hold`` keeps nothing and the process ends as usual.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

_held: list[object] = []
_owned: list[bool] = []


@contextmanager
def owning(ours: bool) -> Iterator[None]:
    """Inside, what commands ``hold`` is kept when the process is ``ours`` (the command line started it); after, if
    the process goes on (a test that called ``main``), nothing is held or kept any more."""
    if ours:
        _owned.append(True)
    try:
        yield
    finally:
        _owned.clear()
        _held.clear()


def hold(value: object) -> None:
    """Keep ``value`` until the process ends, where the process is the command line's (else nothing)."""
    if _owned:
        _held.append(value)


def holding() -> bool:
    """Whether something is held, so the process should end without freeing it."""
    return bool(_held)
