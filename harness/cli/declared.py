"""What a model adapter class declares, read from its source without importing it (``harness list`` stays fast).

An adapter declares ``capabilities = frozenset({Capability.TEXT_ENCODER, ...})`` in its class body
or inherits it. Reading that with ``ast`` costs milliseconds where importing the adapter costs
torch's import; a class whose declaration cannot be read this way gives None (the caller may load it).
"""

from __future__ import annotations

import ast
import importlib.util
from functools import cache
from pathlib import Path


@cache
def _module(name: str) -> ast.Module | None:
    try:
        spec = importlib.util.find_spec(name)  # imports the parent packages only (registrations, cheap)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    try:
        return ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None


def _imports(module: ast.Module, module_name: str) -> dict[str, tuple[str, str]]:
    """Local name -> (module, attribute) for the ``from X import Y`` statements of a module."""
    names: dict[str, tuple[str, str]] = {}
    package = module_name.rpartition(".")[0]
    for node in module.body:
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            for alias in node.names:
                names[alias.asname or alias.name] = (base, alias.name)
    return names


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


def declared_capabilities(ref: str, depth: int = 0) -> tuple[str, ...] | None:
    """The capability names the class behind ``ref`` ("module:Class") declares or inherits; None if unreadable."""
    module_name, _, attr = ref.partition(":")
    module = _module(module_name)
    if module is None or depth > 40 or not attr or "." in attr:  # depth: a guard against import cycles
        return None
    classes = {node.name: node for node in module.body if isinstance(node, ast.ClassDef)}
    node = classes.get(attr)
    if node is None:
        imported = _imports(module, module_name).get(attr)
        return declared_capabilities(f"{imported[0]}:{imported[1]}", depth + 1) if imported else None
    for statement in node.body:
        targets = (
            statement.targets
            if isinstance(statement, ast.Assign)
            else [statement.target]
            if isinstance(statement, ast.AnnAssign) and statement.value is not None
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "capabilities" for t in targets):
            assert isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None
            return _literal_capabilities(statement.value)
    for base in node.bases:
        if isinstance(base, ast.Name):
            found = declared_capabilities(f"{module_name}:{base.id}", depth + 1)
            if found is not None:
                return found
    return None
