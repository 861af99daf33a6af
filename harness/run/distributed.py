"""Splitting model work across processes: ``torch.distributed`` ranks or independent shards.

Both split only the inputs missing from the cache, by their content keys, so any world size
or shard count can resume what another left in a shared cache.

- ``RankPartition`` (launched by ``torchrun`` or ``accelerate launch``): rank r computes every
  W-th missing key of the union of all ranks' missing keys, then the ranks exchange what they
  computed (``all_gather_object``), so every rank holds every value. Collectives have a timeout,
  and a lost peer becomes a clear error, never a hang.
- ``ShardPartition`` (``--shard i/N``, for clusters without a launcher): computes only the
  missing keys whose hash falls in slice i and caches them; the values of other slices are not
  available, so the run writes no results (a final run without ``--shard`` does).
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from harness.errors import HarnessError

DEFAULT_TIMEOUT = 1800.0
_JOINED = threading.Event()  # set once this process joins a process group (``joined_process_group``)


class PeerLostError(HarnessError):
    """A collective failed: another rank died or stopped answering."""


@dataclass(frozen=True)
class ShardPartition:
    """Slice ``index`` of ``count`` of the missing keys (by key hash)."""

    index: int
    count: int

    def agree(self, keys: list[str], what: str) -> list[str]:
        """A shard decides alone: its own missing keys."""
        return sorted(keys)

    def mine(self, keys: list[str]) -> list[str]:
        """The keys this shard computes."""
        return [key for key in keys if int(key[:12], 16) % self.count == self.index]

    def exchange(self, computed: dict[str, bytes], what: str) -> dict[str, bytes]:
        """Shards share nothing directly; the cache is their meeting point."""
        return computed

    @property
    def complete(self) -> bool:
        """False: a shard never holds every value."""
        return False


def parse_shard(text: str) -> ShardPartition:
    """``"i/N"`` with 0 <= i < N."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match or not 0 <= int(match[1]) < int(match[2]):
        raise HarnessError(f"--shard takes i/N with 0 <= i < N (for example 0/4), got {text!r}")
    return ShardPartition(int(match[1]), int(match[2]))


class RankPartition:
    """The ranks of an initialised ``torch.distributed`` process group."""

    def __init__(self, rank: int, world_size: int):
        self.rank, self.world_size = rank, world_size

    @property
    def complete(self) -> bool:
        """True: after the exchange every rank holds every value."""
        return True

    def _all_gather(self, value: Any, what: str) -> list[Any]:
        import torch.distributed as dist

        gathered: list[Any] = [None] * self.world_size
        try:
            dist.all_gather_object(gathered, value)
        except Exception as exc:  # gloo/nccl raise RuntimeError subclasses when a peer is gone
            raise self._lost(exc, what) from None
        return gathered

    def _lost(self, exc: Exception, what: str) -> PeerLostError:
        return PeerLostError(
            f"rank {self.rank} of {self.world_size} lost contact with the other ranks while {what} "
            f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no detail'}); what was "
            "finished is in the cache: rerun (at any world size) to resume"
        )

    def leave_together(self) -> None:
        """Return only when every rank is done, rank 0's results written included (no rank reports
        success while another may still fail). How a rank then ends: ``joined_process_group``."""
        import torch.distributed as dist

        try:
            dist.barrier()
        except Exception as exc:
            raise self._lost(exc, "waiting for every rank to finish") from None

    def from_main(self, value: Any, what: str) -> Any:
        """Rank 0's ``value``, on every rank."""
        return self._all_gather(value, what)[0]

    def agree(self, keys: list[str], what: str) -> list[str]:
        """The sorted union of every rank's missing keys."""
        return sorted(set().union(*self._all_gather(keys, what)))

    def same_data(self, identities: Sequence[str]) -> None:
        """Stop unless every rank read the same data (one identity per task: loader, revision, size).

        Ranks that read different files would each miss keys the others never compute; the error
        names the first rank whose data differs from rank 0's, and the task.
        """
        gathered = self._all_gather(list(identities), "comparing the data each rank read")
        for rank, theirs in enumerate(gathered):
            for mine, other in zip(gathered[0], theirs):
                if mine != other:
                    raise HarnessError(
                        f"rank {rank} of {self.world_size} read different data than rank 0 ({other} against "
                        f"{mine}); every rank must read the same files: give them the same --data-dir and --images"
                    )

    def mine(self, keys: list[str]) -> list[str]:
        """Every world_size-th key, starting at this rank."""
        return keys[self.rank :: self.world_size]

    def exchange(self, computed: dict[str, bytes], what: str) -> dict[str, bytes]:
        """Every rank's computed values, merged."""
        merged: dict[str, bytes] = {}
        for part in self._all_gather(computed, what):
            merged.update(part)
        return merged


def _launcher_count(name: str, default: int, minimum: int) -> int:
    """A whole number the launcher set in the environment (``WORLD_SIZE``, ``RANK``, ``LOCAL_RANK``)."""
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = minimum - 1
    if value < minimum:
        raise HarnessError(
            f"{name}={text!r} is not a whole number of at least {minimum} (torchrun and accelerate launch set it; "
            "unset it to run in one process)"
        )
    return value


def launched_world_size() -> int:
    """WORLD_SIZE set by torchrun / accelerate, else 1."""
    return _launcher_count("WORLD_SIZE", 1, 1)


def collective_timeout(timeout: float | None) -> float:
    """The timeout of collectives in seconds: ``--dist-timeout``, else ``HARNESS_DIST_TIMEOUT``, else 1800."""
    if timeout is not None:
        given, seconds = f"--dist-timeout {timeout:g}", timeout
    else:
        text = os.environ.get("HARNESS_DIST_TIMEOUT")
        if text is None:
            return DEFAULT_TIMEOUT
        given = f"HARNESS_DIST_TIMEOUT={text!r}"
        try:
            seconds = float(text)
        except ValueError:
            seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise HarnessError(f"{given}: give a positive number of seconds (default {DEFAULT_TIMEOUT:g})")
    return seconds


def init_from_launcher(device: str, timeout: float | None = None) -> tuple[RankPartition, str] | None:
    """Join the process group a launcher prepared; returns the partition and this rank's device.

    ``gloo`` on CPU, ``nccl`` on CUDA (one GPU per local rank). ``timeout`` (seconds, default
    ``HARNESS_DIST_TIMEOUT`` or 1800) bounds every collective; it and the launcher's variables are
    checked whether or not a launcher started the run.
    """
    seconds = collective_timeout(timeout)
    world_size = launched_world_size()
    if world_size <= 1:
        return None
    rank = _launcher_count("RANK", 0, 0)
    if rank >= world_size:
        raise HarnessError(f"RANK={rank} is not below WORLD_SIZE={world_size}")
    import torch
    import torch.distributed as dist

    if device.startswith("cuda"):
        local_rank = _launcher_count("LOCAL_RANK", 0, 0)
        torch.cuda.set_device(local_rank)
        device, backend = f"cuda:{local_rank}", "nccl"
    else:
        backend = "gloo"
    if not dist.is_initialized():
        dist.init_process_group(backend=backend, timeout=timedelta(seconds=seconds))
        _JOINED.set()
    return RankPartition(dist.get_rank(), dist.get_world_size()), device


def joined_process_group() -> bool:
    """Whether this process joined a launcher's process group (and must end without interpreter shutdown).

    gloo's worker threads release a collective's work after the caller has its result; the last release
    (the closing barrier holding the exchange before it, whose tensors Python created) needs the GIL, and
    during interpreter shutdown a thread that asks for it is ended in a way C++ turns into SIGABRT
    ("terminate called without an active exception", about one run in ten on a busy machine, after every
    result was written). ``destroy_process_group`` does not wait for those threads.
    """
    return _JOINED.is_set()


def shutdown() -> None:
    """Leave the process group, if any."""
    import sys

    if "torch.distributed" in sys.modules:
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()
