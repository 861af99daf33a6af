"""The model table: what each model on the board is (its card: size, output dimension, input length, languages,
licence, where its weights come from, their digest) and the families it has results in.

The card is ``record.model["card"]`` (see ``harness.adapters.card``), taken from the model's newest current
line that has one; a line written before cards existed has none, and its fields show as unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harness.leaderboard.families import Family
from harness.leaderboard.merge import Board, Result, started_at
from harness.results.records import ResultRecord

HEADERS = ("model", "parameters", "dimension", "max input", "languages", "licence", "weights", "results in")
UNKNOWN = "—"


@dataclass(frozen=True)
class ModelRow:
    """One model: its label, its card's fields as text (``UNKNOWN`` when unknown), the families it appears in."""

    label: str
    fields: tuple[str, ...]
    families: tuple[Family, ...]


def _count(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return UNKNOWN
    for size, unit in ((10**9, "B"), (10**6, "M"), (10**3, "k")):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return str(value)


def _plain(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return UNKNOWN
    return str(value)


def _languages(value: Any) -> str:
    if not isinstance(value, list) or not value:
        return UNKNOWN
    shown = [str(v) for v in value[:8]]
    return ", ".join(shown) + (f" and {len(value) - 8} more" if len(value) > 8 else "")


def _weights(card: dict[str, Any], record: ResultRecord) -> str:
    source = card.get("source")
    where = {"packaged": "packaged offline", "hub": "Hub", "folder": "local folder", "in-memory": "in memory"}.get(
        str(source), UNKNOWN
    )
    named = record.model.get("source")
    digest = card.get("weights_digest")
    parts = [where] + ([str(named)] if named and source in ("hub", "packaged") else [])
    return " ".join(parts) + (f" ({str(digest)[:19]})" if isinstance(digest, str) and digest else "")


def card_of(record: ResultRecord) -> dict[str, Any]:
    """A line's model card ({} without one)."""
    card = record.model.get("card")
    return card if isinstance(card, dict) else {}


def controls(board: Board) -> dict[str, str]:
    """Model key -> why it is a control, from its results lines' cards (``control``); worked out once per board."""
    return dict(board.once("controls", _controls))


def _controls(board: Board) -> dict[str, str]:
    found: dict[str, str] = {}
    for (key, _), result in board.cells.items():
        reason = card_of(result.record).get("control")
        if isinstance(reason, str) and reason:
            found.setdefault(key, reason)
    return found


def preferred(record: ResultRecord) -> tuple[bool, Any]:
    """Lines with a card first, then the newest."""
    return bool(card_of(record)), started_at(record.started)


def newest(board: Board) -> dict[str, Result]:
    """Model key -> the current result whose card and identity the board shows (``preferred``); worked out once per
    board."""
    return dict(board.once("newest", _newest))


def _newest(board: Board) -> dict[str, Result]:
    found: dict[str, Result] = {}
    for result in board.current:
        held = found.get(result.model_key)
        if held is None or preferred(result.record) > preferred(held.record):
            found[result.model_key] = result
    return found


def model_rows(board: Board) -> list[ModelRow]:
    """One row per model of the board, in its label order."""
    shown = newest(board)
    families: dict[str, dict[str, Family]] = {}
    for key, column in board.cells:
        families.setdefault(key, {})[column.family.name] = column.family
    order = [family for family, _ in board.families()]
    rows = []
    for key, label in board.labels.items():
        if key not in shown:
            continue
        record = shown[key].record
        card = card_of(record)
        fields = (
            _count(card.get("parameters")),
            _plain(card.get("dimension")),
            _plain(card.get("max_length")),
            _languages(card.get("languages")),
            str(card["license"]) if isinstance(card.get("license"), str) and card["license"] else UNKNOWN,
            _weights(card, record) if card else str(record.model.get("source") or UNKNOWN),
        )
        present = families.get(key, {})
        rows.append(ModelRow(label, fields, tuple(f for f in order if f.name in present)))
    return rows
