"""Whether work may be split over forked processes: the CPUs this process may run on, and ``fork``."""

from __future__ import annotations

import multiprocessing
import os


def cpus() -> int:
    """The CPUs this process may run on (its affinity where the system tells it)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def can_fork() -> bool:
    """Whether child processes can be forked (they then inherit what the parent holds: nothing is sent to them)."""
    return "fork" in multiprocessing.get_all_start_methods()
