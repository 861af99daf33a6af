"""``harness list models``: filters by availability and capability, and a zoo's members as one line."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from harness.errors import HarnessError, UnknownNameError

KINDS = ("offline", "hub", "source")
CAPABILITIES = ("text encoder", "image encoder", "token embedder", "translation scorer")
ZOO_PREFIX = "zoo-"


def add_model_filters(listing: argparse.ArgumentParser) -> None:
    """The options of ``harness list`` that filter models (``--kind``'s value is ``kind_of``: ``kind`` is the
    positional ``tasks|models|...``)."""
    filters = {  # option: (dest, help)
        "--kind": (
            "kind_of",
            "only offline (weights in a package or none), hub (downloads) or source (a Hub id or folder)",
        ),
        "--capability": ("capability", "only those that serve it (text-encoder, image-encoder, token-embedder, ...)"),
    }
    for option, (dest, help_text) in filters.items():
        listing.add_argument(option, dest=dest, metavar=option[2:].upper(), default=None, help="models: " + help_text)
    listing.add_argument("--offline", action="store_true", help="models: only those that run offline (--kind offline)")
    listing.add_argument("--all", action="store_true", help="models: every member of a zoo (zoo-*), not one per zoo")


def filter_models(rows: Sequence[dict[str, Any]], kind: str | None, capability: str | None) -> list[dict[str, Any]]:
    """The rows of ``model_rows`` of one availability ``kind`` and serving ``capability`` (any spelling:
    ``text-encoder``, ``text_encoder``, ``text encoder``); an unknown value is an error with a suggestion."""
    if kind is not None and kind not in KINDS:
        raise UnknownNameError("model kind", kind, KINDS, listing=f"--kind takes {', '.join(KINDS)}")
    wanted = None
    if capability is not None:
        wanted = capability.replace("-", " ").replace("_", " ").strip().lower()
        if wanted not in CAPABILITIES:
            spelled = [c.replace(" ", "-") for c in CAPABILITIES]
            raise UnknownNameError(
                "capability", capability, spelled, listing=f"--capability takes {', '.join(spelled)}"
            )
    found = [
        row
        for row in rows
        if (kind is None or row["availability"] == kind) and (wanted is None or wanted in row["capabilities"])
    ]
    if not found:
        raise HarnessError(
            "no model is "
            + " and ".join(filter(None, [kind, wanted and f"a {wanted}"]))
            + " (see `harness list models`)"
        )
    return found


def group_zoos(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with the members of the encoder zoo (names ``zoo-*``) folded into one row, in the zoo's place."""
    members = [row for row in rows if row["name"].startswith(ZOO_PREFIX)]
    if len(members) < 2:
        return list(rows)
    kinds = sorted({row["availability"] for row in members})
    capabilities = sorted({c for row in members for c in row["capabilities"]})
    zoo = {
        "name": ZOO_PREFIX + "*",
        "availability": "/".join(kinds),
        "description": f"the encoder zoo: {len(members)} encoders of graded quality for the BackRetrieval "
        "meta-evaluation; `harness list models --all` lists them.",
        "capabilities": capabilities,
    }
    first = rows.index(members[0])
    rest = [row for row in rows if not row["name"].startswith(ZOO_PREFIX)]
    return [*rest[:first], zoo, *rest[first:]]
