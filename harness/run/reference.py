"""Model-free tasks: a task that declares ``needs_model = False`` (a reference, an oracle, a lexical baseline) runs
once per configuration without ``--model``, under the stand-in model ``reference``.

Its results lines name the model ``reference`` with ``model.kind == "reference"`` (``REFERENCE_KIND``): the board
shows them as a reference row, not as a model, and a run with any ``--model`` reuses the line already written
for the same configuration (its signature names no real model).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.adapters.model import ModelAdapter, ModelIdentity
from harness.errors import HarnessError

REFERENCE = "reference"
REFERENCE_KIND = "reference"


class ReferenceModel(ModelAdapter):
    """The stand-in model of a model-free task: no capabilities, no weights."""

    def __init__(self) -> None:
        super().__init__(REFERENCE)

    def identity(self) -> ModelIdentity:
        """``reference``, the same for every run."""
        return ModelIdentity(name=REFERENCE, adapter=f"{__name__}:ReferenceModel")

    def load(self) -> None:
        """No weights."""


def is_reference(model: dict[str, Any]) -> bool:
    """Whether a results line's ``model`` is the stand-in of a model-free task (shown as a reference row)."""
    return model.get("kind") == REFERENCE_KIND


def needs_model(cls: Any) -> bool:
    """Whether the task class needs a model (``Task.needs_model``; True for classes that do not say)."""
    return bool(getattr(cls, "needs_model", True))


def split_model_free(classes: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(names of the tasks that need a model, names of the model-free ones), in the given order."""
    return [n for n, c in classes.items() if needs_model(c)], [n for n, c in classes.items() if not needs_model(c)]


def check_model_given(names: Sequence[str], model: Any) -> None:
    """A run without a model is only for model-free tasks: the error names the first task that needs one."""
    if model is None and names:
        raise HarnessError(f"task {names[0]!r} needs a model: give --model (see harness list models)")
