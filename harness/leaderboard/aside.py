"""Work done aside: a function run in a forked process while the caller goes on, its result sent back.

The leaderboard writes leaderboard.csv and leaderboard.json this way, beside the plot workers, once the board is
merged: the child inherits the board, so nothing is sent to it. Where the system cannot fork, or on a single CPU,
the function runs in the caller when its result is asked for. Fork before any thread starts (a child inherits the
locks other threads hold), so asides are started before the plot workers' receiving thread.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, Generic, TypeVar, cast

from harness.forking import can_fork, cpus

T = TypeVar("T")


def _run(function: Callable[[], Any], sender: Connection) -> None:
    """In the child: the result, or the exception that ended it; Ctrl-C is the caller's to handle."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        outcome: tuple[bool, Any] = (True, function())
    except Exception as exc:  # raised again in the caller
        outcome = (False, exc)
    try:
        sender.send(outcome)
    except Exception as exc:  # what was returned or raised cannot be sent
        sender.send((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
    sender.close()


class Aside(Generic[T]):
    """``function()`` computed in a forked process (``result()`` waits for it, ``close()`` stops it), or in the
    caller where forking is not possible or pays nothing (one CPU, or ``worth`` False: little work)."""

    def __init__(self, function: Callable[[], T], name: str, worth: bool = True) -> None:
        self.function, self.name = function, name
        self.outcome: tuple[bool, Any] | None = None
        self.process: Any = None
        self.receiver: Connection | None = None
        if not worth or cpus() < 2 or not can_fork():
            return
        context = multiprocessing.get_context("fork")
        self.receiver, sender = context.Pipe(duplex=False)
        self.process = context.Process(target=_run, args=(function, sender), name=name, daemon=True)
        try:
            self.process.start()
        except OSError:  # no fork (memory, process limit): computed here when asked for
            self.process = None
            self.receiver.close()
            self.receiver = None
        finally:
            sender.close()

    def result(self) -> T:
        """What the function returned (its exception raised here); computed here if its process ended without
        sending it (a warning says so)."""
        if self.outcome is None:
            self.outcome = self._receive() if self.receiver is not None else (True, self.function())
        done, value = self.outcome
        if not done:
            raise cast(Exception, value)
        return cast(T, value)

    def _receive(self) -> tuple[bool, Any]:
        try:
            outcome: tuple[bool, Any] = self.receiver.recv()  # type: ignore[union-attr]
        except (EOFError, OSError):
            code = self.close()
            print(
                f"harness: warning: the process computing {self.name} ended (exit code {code}); computing it here",
                file=sys.stderr,
            )
            return True, self.function()
        self.process.join()  # it sent its last message: it is ending
        self.close()
        return outcome

    def close(self) -> int | None:
        """Stop the process if it still runs (after an error or an interruption of the caller); its exit code."""
        code = None
        if self.process is not None:
            if self.process.is_alive():
                self.process.terminate()
            self.process.join()
            code = self.process.exitcode
            self.process = None
        if self.receiver is not None:
            self.receiver.close()
            self.receiver = None
        return code
