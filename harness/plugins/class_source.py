"""What a plugin class assigns in its body, read from its module's source without importing the module.

``harness list`` answers "which family, which role, which capabilities" for every registered task and
model; importing them all would cost torch's import and more. Reading the class body with ``ast``
costs milliseconds. A class is followed through ``from X import Y`` re-exports and through its bases
(``Task[Dataset]`` is read as ``Task``); whatever the source cannot tell is ``UNREAD`` and the caller
imports the class instead.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Collection
from functools import cache
from pathlib import Path

UNREAD = object()  # the source cannot tell (an unreadable module, a base that is not a plain name, a cycle)
_MAX_DEPTH = 40  # re-exports and bases followed at most this deep: a guard against import cycles


@cache
def parsed_module(name: str) -> tuple[ast.Module, str] | None:
    """The parsed source of module ``name`` and its package (None when it is not a readable ``.py`` file)."""
    try:
        spec = importlib.util.find_spec(name)  # imports the parent packages only (their registrations: cheap)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    try:
        return ast.parse(Path(spec.origin).read_text(encoding="utf-8")), spec.parent or ""
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None


def from_imports(module: ast.Module, package: str) -> dict[str, tuple[str, str]]:
    """Local name -> (module, attribute) of the module's top-level ``from X import Y`` statements."""
    names: dict[str, tuple[str, str]] = {}
    for node in module.body:
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                names[alias.asname or alias.name] = (base, alias.name)
    return names


def assigned_in_class(ref: str, key: str, roots: Collection[tuple[str, str]] = (), depth: int = 0) -> object:
    """The expression the class behind ``ref`` ("module:Class") assigns to ``key`` in its body or inherits.

    None when no class up its bases assigns it and every base is readable (bases in ``roots``, as
    ``(module, name)`` of their import, are known to assign nothing); ``UNREAD`` when the source
    cannot tell.
    """
    module_name, _, attr = ref.partition(":")
    found = parsed_module(module_name)
    if found is None or depth > _MAX_DEPTH or not attr or "." in attr:
        return UNREAD
    module, package = found
    imports = from_imports(module, package)
    node = next((n for n in module.body if isinstance(n, ast.ClassDef) and n.name == attr), None)
    if node is None:  # a re-export: follow the import
        source = imports.get(attr)
        return assigned_in_class(f"{source[0]}:{source[1]}", key, roots, depth + 1) if source else UNREAD
    for statement in node.body:
        value = _assigned(statement, key)
        if value is not None:
            return value
    for base in node.bases:
        if isinstance(base, ast.Subscript):  # Task[Dataset], PairTask[Scorer]
            base = base.value
        if not isinstance(base, ast.Name):
            return UNREAD
        where = imports.get(base.id)
        if where in roots:
            continue
        inherited = assigned_in_class(
            f"{where[0]}:{where[1]}" if where else f"{module_name}:{base.id}", key, roots, depth + 1
        )
        if inherited is not None:
            return inherited
    return None


def _assigned(statement: ast.stmt, key: str) -> ast.expr | None:
    if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == key for t in statement.targets):
        return statement.value
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.target.id == key:
        return statement.value
    return None
