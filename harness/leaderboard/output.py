"""Writing a leaderboard folder: whole or not at all, touching only what a leaderboard owns, following no symlink.

The output folder must be new, empty, or marked by an earlier run: ``.leaderboard-manifest.json``
lists every file that run wrote (another generator, ``harness xling-shapes-commute``, follows the same rule with
its own ``Owner``: its command and manifest). A file the new run would write must be in that list, and only
files in that list are ever dropped (those the new run no longer produces), so a folder holding
anything else (a user's README, their PNGs, the input results) is refused or left alone.

The new board is built in a temporary folder beside the output (the user's own files carried
over as hard links, or copies where links are impossible) and swapped in with one ``rename``: a
reader sees the old board or the new one, never a mix. An interrupted build (Ctrl-C, SIGTERM, a
full disk) removes the temporary folder and leaves the old board as it was. A symlink where the
leaderboard writes or drops a file (the folder itself, a generated name, ``plots``, a manifest
entry or a folder on its way) is refused, naming it: git stores symlinks, so a cloned
``leaderboard/`` may carry one that points anywhere.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from harness.errors import HarnessError

_RENAME_EXCHANGE = 2  # renameat2(2) flag: swap two paths atomically (Linux 3.15+)


@dataclass(frozen=True)
class Owner:
    """A generator of folders: the command that writes them, the manifest it marks them with, what it writes."""

    command: str
    manifest: str
    what: str


LEADERBOARD = Owner("harness leaderboard", ".leaderboard-manifest.json", "leaderboard")


def manifest_text(files: list[str], owner: Owner = LEADERBOARD) -> str:
    """The manifest listing ``files``."""
    return json.dumps({"generator": owner.command, "files": sorted(files)}, indent=1) + "\n"


def _no_symlink(path: Path, owner: Owner) -> None:
    if path.is_symlink():
        raise HarnessError(
            f"{path} is a symbolic link; a {owner.what} never writes or deletes through one "
            "(replace it with a plain file or folder, or choose another output folder)"
        )


def _check_path(folder: Path, name: str, owner: Owner) -> None:
    """No component of ``folder/name`` below ``folder`` is a symlink."""
    current = folder
    for part in PurePosixPath(name).parts:
        current = current / part
        _no_symlink(current, owner)


def previous_files(folder: Path, owner: Owner = LEADERBOARD) -> set[str]:
    """The files an earlier run of ``owner`` wrote into ``folder`` (none for a new or empty folder).

    Raises ``HarnessError`` for a folder that holds anything but is not marked by ``owner``, for a manifest
    that names anything outside the folder, for a symlink on the way to a listed file, and for a folder that
    cannot be read.
    """
    try:
        return _previous_files(folder, owner)
    except OSError as exc:
        raise HarnessError(f"cannot read the {owner.what} folder {str(folder)!r}: {exc.strerror or exc}") from None


def _previous_files(folder: Path, owner: Owner) -> set[str]:
    _no_symlink(folder, owner)
    if not folder.exists():
        return set()
    if not folder.is_dir():
        raise HarnessError(f"the {owner.what} output {str(folder)!r} is a file, not a folder")
    marker = folder / owner.manifest
    _no_symlink(marker, owner)
    if not marker.is_file():
        if any(folder.iterdir()):
            raise HarnessError(
                f"the folder {str(folder)!r} is not empty and no earlier `{owner.command}` run marked it "
                f"(no {owner.manifest}); write the {owner.what} into a new or empty folder"
            )
        return set()
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
        files = data["files"]
        if data.get("generator") != owner.command or not all(isinstance(f, str) for f in files):
            raise ValueError(f"not a {owner.what} manifest")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise HarnessError(
            f"{marker}: unreadable {owner.what} manifest ({exc}); move it away or choose another folder"
        ) from None
    unsafe = [
        f for f in files if PurePosixPath(f).is_absolute() or ".." in PurePosixPath(f).parts or f == owner.manifest
    ]
    if unsafe:
        raise HarnessError(f"{marker}: the manifest lists {unsafe[0]!r}, outside the folder; refusing to touch it")
    for name in files:
        _check_path(folder, name, owner)
    return set(files)


def _check_overwrites(folder: Path, names: list[str], previous: set[str], owner: Owner) -> None:
    for name in names:
        _check_path(folder, name, owner)
    foreign = [name for name in names if name not in previous and os.path.lexists(folder / name)]
    if foreign:
        raise HarnessError(
            f"{folder / foreign[0]} exists and was not written by an earlier {owner.what} run; "
            "move it away or choose another folder"
        )


def write_file(path: Path, data: bytes) -> None:
    """Write a new file (never through a link: the staging folder is new)."""
    with open(path, "xb") as handle:
        handle.write(data)


def _carry_over(folder: Path, stage: Path, previous: set[str], manifest: str) -> None:
    """Hard-link (or copy) everything of ``folder`` that no run of its owner wrote into ``stage``; symlinks stay links."""
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        relative = here.relative_to(folder)
        for name in sorted(files + [d for d in dirs if (here / d).is_symlink()]):
            key = (relative / name).as_posix()
            if key in previous or key == manifest:
                continue
            source, target = here / name, stage / relative / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.is_symlink():
                os.symlink(os.readlink(source), target)
                continue
            try:
                os.link(source, target, follow_symlinks=False)
            except OSError:
                shutil.copy2(source, target, follow_symlinks=False)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one step (``renameat2(RENAME_EXCHANGE)``); False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_cwd = -100
    done = renameat2(at_cwd, os.fsencode(a), at_cwd, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(done == 0)


def _swap_in(stage: Path, folder: Path) -> Path | None:
    """Put ``stage`` where ``folder`` is; returns where the old folder went (to be removed), if there was one."""
    if not folder.exists():
        os.rename(stage, folder)
        return None
    if _exchange(stage, folder):
        return stage
    old = folder.with_name(f".{folder.name}.old-{os.getpid()}")
    os.rename(folder, old)
    try:
        os.rename(stage, folder)
    except BaseException:
        os.rename(old, folder)
        raise
    return old


@contextlib.contextmanager
def _staging(folder: Path) -> Iterator[Path]:
    """A new folder beside ``folder``, removed unless it was swapped in."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{folder.name}.new-", dir=folder.parent))
    try:
        mode = folder.stat().st_mode & 0o7777 if folder.is_dir() else 0o777 & ~_umask()
        os.chmod(stage, mode)
        yield stage
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def publish(
    folder: Path,
    previous: set[str],
    texts: Mapping[str, str | bytes],
    copies: Mapping[str, Path],
    owner: Owner = LEADERBOARD,
) -> list[Path]:
    """Make ``folder`` hold exactly the generated files (``name -> text or bytes``, ``name -> file to copy``), the
    user's own files, and the manifest; swapped in whole. Returns the paths written, manifest last.

    ``previous`` is what ``previous_files(folder)`` returned before the files were generated.
    """
    names = list(texts) + list(copies)
    if previous != previous_files(folder, owner):
        raise HarnessError(
            f"the {owner.what} folder {str(folder)!r} changed while the {owner.what} was built; run again"
        )
    _check_overwrites(folder, names, previous, owner)
    try:
        with _staging(folder) as stage:
            if folder.is_dir():
                _carry_over(folder, stage, previous, owner.manifest)
            for name, text in texts.items():
                (stage / name).parent.mkdir(parents=True, exist_ok=True)
                write_file(stage / name, text if isinstance(text, bytes) else text.encode("utf-8"))
            for name, source in copies.items():
                (stage / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, stage / name)  # in the kernel where it can: no copy held here
            write_file(stage / owner.manifest, manifest_text(names, owner).encode("utf-8"))
            old = _swap_in(stage, folder)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
    except OSError as exc:
        raise HarnessError(f"cannot write the {owner.what} to {str(folder)!r}: {exc.strerror or exc}") from None
    return [folder / name for name in names] + [folder / owner.manifest]
