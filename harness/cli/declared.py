"""What a model adapter class declares, read from its source without importing it (``harness list`` stays fast).

An adapter declares ``capabilities = frozenset({Capability.TEXT_ENCODER, ...})`` in its class body
or inherits it. Reading that with ``ast`` costs milliseconds where importing the adapter costs
torch's import; a class whose declaration cannot be read this way gives None (the caller may load it).
"""

from __future__ import annotations

import ast

from harness.plugins.class_source import assigned_in_class


def _literal_capabilities(value: ast.expr) -> tuple[str, ...] | None:
    """``frozenset({Capability.TEXT_ENCODER, ...})`` (or a set/tuple of them) -> ("text_encoder", ...)."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in ("frozenset", "set"):
        if len(value.args) != 1:
            return () if not value.args else None
        value = value.args[0]
    if not isinstance(value, (ast.Set, ast.Tuple, ast.List)):
        return None
    found = []
    for element in value.elts:
        if not (isinstance(element, ast.Attribute) and isinstance(element.value, ast.Name)):
            return None  # a capability the plugin created itself: only importing can tell its name
        if element.value.id != "Capability":
            return None
        found.append(element.attr.lower())
    return tuple(sorted(found))


def declared_capabilities(ref: str) -> tuple[str, ...] | None:
    """The capability names the class behind ``ref`` ("module:Class") declares or inherits; None if unreadable."""
    value = assigned_in_class(ref, "capabilities")
    return _literal_capabilities(value) if isinstance(value, ast.expr) else None
