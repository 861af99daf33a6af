"""What a rebuild of a board folder keeps from its previous build: pages whose inputs are unchanged, and the paired
tests and twin checks of results whose logs are unchanged (the plots are kept by ``plots``, keyed the same way).

A key is a digest of everything a page or a fact is made of: the code that makes it (every module of
``harness.leaderboard`` and ``harness.results``), and the inputs as text (``inputs_text``: each result's content
but when and where it ran, and its per-sample log's SHA-256; labels, paths, ranks). A page is kept when the
previous build of the same folder made it from the same key and its file there is unchanged (its SHA-256): a rebuild
after a rerun that reproduces a result renders nothing again, and equals a build from nothing.

The keys live in the user's cache folder (``HARNESS_CACHE_DIR``, else ``~/.cache/xling-harness``), under
``leaderboard/``, one file per board folder; never in the board, so that a committed board does not change when
only the code that wrote it does. A missing or unreadable file keeps nothing.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import inspect
import json
import math
import os
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import harness
from harness.adapters.cache import default_cache_dir
from harness.leaderboard.figures import inputs_in, inputs_of
from harness.leaderboard.merge import Result

STORE_VERSION = 1
_CODE: list[str] = []


def code_digest() -> str:
    """A digest of the sources of ``harness.leaderboard`` and ``harness.results``."""
    if not _CODE:
        digest = hashlib.sha256()
        root = Path(harness.__file__).parent
        for path in sorted([*root.glob("leaderboard/*.py"), *root.glob("results/*.py")]):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
        _CODE.append(digest.hexdigest())
    return _CODE[0]


_SOURCES: dict[str, str] = {}


def source_digest(*objects: Any) -> str:
    """The SHA-256 of the source files the ``objects`` (functions, classes) are defined in, each file read once: a
    key's share of a plugin's code."""
    files = [inspect.getsourcefile(target) or "" for target in objects]
    for name in files:
        if name not in _SOURCES:
            try:
                _SOURCES[name] = hashlib.sha256(Path(name).read_bytes()).hexdigest()
            except OSError:
                _SOURCES[name] = name
    return "".join(_SOURCES[name] for name in files)


def inputs_text(value: Any, content: Callable[[Result], str] = inputs_of) -> str:
    """``value`` as canonical text for a key: a result by its label and ``content`` (default ``inputs_of``: what it
    holds but when and where it ran, and its log's SHA-256), a dataclass by its fields, containers element by
    element, floats exactly."""
    if isinstance(value, Result):
        return f"R({value.model_label!r} {content(value)})"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = (f"{f.name}={inputs_text(getattr(value, f.name), content)}" for f in dataclasses.fields(value))
        return f"{type(value).__name__}({', '.join(fields)})"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(inputs_text(v, content) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{inputs_text(k, content)}: {inputs_text(v, content)}" for k, v in value.items()) + "}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"float({value!r})"
    return repr(value) if isinstance(value, (str, int, float, bool, type(None))) else f"{type(value).__name__}:{value}"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class Kept:
    """The previous build's page keys and facts for one board folder, and what this build made or kept."""

    def __init__(
        self,
        folder: Path | None,
        pages: dict[str, dict[str, str]],
        facts: dict[str, Any],
        contents: dict[int, str] | None = None,
    ) -> None:
        self.folder = folder
        self._pages, self._facts = pages, facts
        self.made_pages: dict[str, dict[str, str]] = {}
        self.made_facts: dict[str, Any] = {}
        self.texts: dict[str, str] = {}  # the pages this build made
        self.files: dict[str, Path] = {}  # the pages it kept: the previous build's files
        self.contents = {} if contents is None else contents  # each result's content by its id (``inputs_in``)

    def key(self, kind: str, *parts: Any) -> str:
        """The key of a page or fact of ``kind`` made by this code from ``parts`` (``inputs_text``)."""
        text = "\0".join([code_digest(), kind, *(inputs_text(p, self._content) for p in parts)])
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]

    def _content(self, result: Result) -> str:
        return inputs_in(self.contents, [result])

    @classmethod
    def load(cls, folder: Path | None, contents: dict[int, str] | None = None) -> Kept:
        """What the previous build of ``folder`` left (nothing for None, a new folder or an unreadable store);
        ``contents``: the results' contents worked out so far (``figures.contents_of``), shared."""
        if folder is None:
            return cls(None, {}, {}, contents)
        try:
            data = json.loads(_store(folder).read_text(encoding="utf-8"))
            if data.get("version") != STORE_VERSION:
                raise ValueError("another store version")
            pages = {str(k): {str(p): str(d) for p, d in v.items()} for k, v in data["pages"].items()}
            facts = dict(data["facts"])
            if not all(_fact(value) for value in facts.values()):
                raise ValueError("a fact that no build writes")
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RuntimeError):  # RuntimeError: no home
            return cls(folder, {}, {}, contents)
        return cls(folder, pages, facts, contents)

    def pages(self, key: str, allowed: set[str], make: Callable[[], dict[str, str]]) -> bool:
        """The pages made from inputs ``key``: the previous build's files where it made them (same key, every file
        there unchanged, every path ``allowed``), else ``make()`` (path -> text); False when there are none. Made
        pages gather in ``texts``, kept ones in ``files``."""
        held = self._pages.get(key)
        if held is not None and held.keys() <= allowed and (found := self._unchanged(held)) is not None:
            self.files.update(found)
            self.made_pages[key] = held
            return True
        texts = make()
        if texts:
            self.texts.update(texts)
            self.made_pages[key] = {page: _sha(text.encode("utf-8")) for page, text in texts.items()}
        return bool(texts)

    def _unchanged(self, held: dict[str, str]) -> dict[str, Path] | None:
        """The files of ``held`` (path -> SHA-256) in the folder, if each is there as it was written."""
        if self.folder is None or not held:
            return None
        found = {}
        for page, digest in held.items():
            path = self.folder / page
            try:
                if path.is_symlink() or _sha(path.read_bytes()) != digest:
                    return None
            except OSError:
                return None
            found[page] = path
        return found

    def fact(self, key: str) -> tuple[bool, Any]:
        """(True, the fact) when the previous build worked it out from ``key``, else (False, None)."""
        if key in self._facts:
            self.made_facts[key] = self._facts[key]
            return True, self._facts[key]
        return False, None

    def remember(self, key: str, value: Any) -> None:
        """Record a fact (JSON: numbers, text, lists, None) this build worked out from ``key``."""
        self.made_facts[key] = value

    def save(self) -> None:
        """Keep what this build made or kept for the next build of the folder (best effort: a cache)."""
        if self.folder is None:
            return
        try:
            store = _store(self.folder)
        except RuntimeError:  # no home folder to keep a cache in
            return
        text = json.dumps({"version": STORE_VERSION, "pages": self.made_pages, "facts": self.made_facts})
        temporary: Path | None = None
        try:
            store.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile("w", dir=store.parent, delete=False, encoding="utf-8") as handle:
                temporary = Path(handle.name)
                handle.write(text)
            os.replace(temporary, store)
        except OSError:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    temporary.unlink()


def _fact(value: Any) -> bool:
    """Whether ``value`` is what a build remembers: None, a truth value, a list of numbers, or a family's sections
    (``[title, [header], [[cell]], note]`` each, all text)."""
    if value is None or isinstance(value, bool):
        return True
    if not isinstance(value, list):
        return False
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value) or all(map(_section, value))


def _section(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 4
        and isinstance(value[0], str)
        and isinstance(value[3], str)
        and _texts(value[1])
        and isinstance(value[2], list)
        and all(map(_texts, value[2]))
    )


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _store(folder: Path) -> Path:
    """Where the keys of the board in ``folder`` are kept."""
    name = hashlib.sha256(str(folder.resolve()).encode("utf-8")).hexdigest()[:24]
    return default_cache_dir() / "leaderboard" / f"{name}.json"
