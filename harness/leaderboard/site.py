"""Where each page of the board lives: ``index.html``, ``families/<family>.html``, ``models/<model>.html`` and
``items/<result>.html`` (the items behind one result), and the relative links between them."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from harness.leaderboard.merge import Board, Result

FAMILIES, MODELS, ITEMS = "families", "models", "items"
UP = "../"  # from a page in one of the folders above to the board's root


def slug(text: str) -> str:
    """A file-name-safe form of ``text`` (letters, digits, ``.``, ``-``, ``_``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "page"


def _unique(names: dict[str, str]) -> dict[str, str]:
    """``key -> slug`` made unique (``-2``, ``-3`` on repeats, in key order)."""
    taken: set[str] = set()
    found = {}
    for key in sorted(names):
        name, count = names[key], 1
        while name.lower() in taken:
            count += 1
            name = f"{names[key]}-{count}"
        taken.add(name.lower())
        found[key] = name
    return found


def item_key(result: Result) -> str:
    """A result's item page is named by its full signature (model and configuration)."""
    return result.record.signature


@dataclass(frozen=True)
class Site:
    """Page paths from the board's root: per model label, per family name, per result with an item page."""

    models: dict[str, str]
    families: dict[str, str]
    items: dict[str, str]

    def model(self, label: str, root: str = "") -> str | None:
        """The link to a model's page from a page at ``root`` (``""`` or ``UP``)."""
        found = self.models.get(label)
        return None if found is None else root + found

    def item(self, result: Result | None, root: str = "") -> str | None:
        """The link to the items behind a result, if it has an item page."""
        found = None if result is None else self.items.get(item_key(result))
        return None if found is None else root + found

    def pages(self) -> list[str]:
        """Every page path but the index."""
        return sorted({*self.models.values(), *self.families.values(), *self.items.values()})


def site_of(board: Board, with_items: Iterable[Result]) -> Site:
    """The pages of ``board``: one per model and family present, one per result of ``with_items``."""
    models = _unique({label: slug(label) for label in board.labels.values()})
    families = {family.name: f"{FAMILIES}/{slug(family.name)}.html" for family, _ in board.families()}
    items = {}
    for result in with_items:
        digest = hashlib.sha256(item_key(result).encode("utf-8")).hexdigest()[:12]
        items[item_key(result)] = f"{ITEMS}/{slug(result.record.task)}-{digest}.html"
    return Site({label: f"{MODELS}/{name}.html" for label, name in models.items()}, families, items)
