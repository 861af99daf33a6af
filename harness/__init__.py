"""xling-harness: plugin-based evaluation of cross-lingual text encoders and multimodal MT.

The public API is imported lazily so that ``import harness`` stays light (no torch).
"""

from __future__ import annotations

from typing import Any

__all__ = ["evaluate", "Task", "TaskOutput", "ModelAdapter", "Capability", "Param", "hookimpl"]


def __getattr__(name: str) -> Any:
    if name == "evaluate":
        from harness.runner import evaluate

        return evaluate
    if name in ("Task", "TaskOutput"):
        from harness import task

        return getattr(task, name)
    if name == "ModelAdapter":
        from harness.model import ModelAdapter

        return ModelAdapter
    if name == "Capability":
        from harness.capabilities import Capability

        return Capability
    if name == "Param":
        from harness.params import Param

        return Param
    if name == "hookimpl":
        from harness.hookspecs import hookimpl

        return hookimpl
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
