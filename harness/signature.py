"""Signatures as structured data, formatted only when written (as sacrebleu's ``Signature`` does).

A signature says what makes numbers comparable: the task and its version, its arguments, the
dataset's loader, revision and size, the seeds, ``--limit``, the auxiliary models and the model.
The runner builds a ``Signature`` and keeps it; ``str()`` gives the text stored in results files,
for example
``backretrieval|k:10|n:1000|src:en|tgt:de|items:367|seeds:25|data:ikea@3f2a9c1b0d4e|image:efficientnet-lite0@91ac07f2d3e4|model:e5-small@ce27aec866eb|v:1``.
The text is a stored format: the same inputs must always give the same bytes (``--resume`` and
the leaderboard compare them).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any


def _short(value: Any, length: int = 12) -> str:
    text = str(value)
    if text.startswith("sha256:"):
        text = text[len("sha256:") :]
    return text[:length]


def _digest8(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:8]


@dataclass(frozen=True)
class ModelPart:
    """One model of a signature: its role (``model``, ``image``), name and revision, and what else identifies it.

    ``args`` are the model's arguments and ``code`` its adapter's (distribution, version, source hash);
    each enters the text as a digest (``#args:…``, ``#code:…``) when present.
    """

    role: str
    name: str
    revision: str | None = None
    args: Mapping[str, Any] = field(default_factory=dict)
    code: tuple[Any, Any, Any] = (None, None, None)

    @classmethod
    def of(cls, role: str, identity: Mapping[str, Any]) -> ModelPart:
        """The part of a model with this identity (``ModelIdentity.as_dict()``)."""
        return cls(
            role,
            identity["name"],
            identity.get("revision"),
            dict(identity.get("args") or {}),
            (identity.get("distribution"), identity.get("distribution_version"), identity.get("code")),
        )

    def __str__(self) -> str:
        text = f"{self.role}:{self.name}@{_short(self.revision or 'none')}"
        if self.args:
            text += f"#args:{_digest8(self.args)}"
        if any(self.code):
            text += f"#code:{_digest8(list(self.code))}"
        return text


@dataclass(frozen=True)
class Signature:
    """What makes a task's numbers comparable across models; ``str()`` formats it.

    ``args`` are the task's and its loader's arguments (formatted sorted by name, ``limit``
    among them when given); ``seeds`` is None for a task that uses none; ``aux_models`` are the
    auxiliary models the task declared and the user gave; ``model`` is None in a task signature
    (the part shared by every model) and set in a full one.
    """

    task: str
    version: int
    args: Mapping[str, Any]
    items: int | None
    data_loader: str | None
    data_revision: Any
    seeds: tuple[int, ...] | None = None
    limit: int | None = None
    aux_models: tuple[ModelPart, ...] = ()
    model: ModelPart | None = None

    @classmethod
    def build(
        cls,
        task: str,
        version: int,
        args: Mapping[str, Any],
        dataset: Mapping[str, Any],
        seeds: list[int] | None,
        aux_models: Mapping[str, Mapping[str, Any]] | None = None,
        limit: int | None = None,
    ) -> Signature:
        """A task signature from a dataset identity (``loader``, ``revision``, ``size``) and model identities."""
        return cls(
            task,
            version,
            dict(args),
            dataset.get("size"),
            dataset.get("loader"),
            dataset.get("revision"),
            None if seeds is None else tuple(seeds),
            limit,
            tuple(ModelPart.of(role, identity) for role, identity in sorted((aux_models or {}).items())),
        )

    def with_model(self, identity: Mapping[str, Any]) -> Signature:
        """The full signature: this task signature with the model of this identity."""
        return replace(self, model=ModelPart.of("model", identity))

    def task_part(self) -> Signature:
        """The task signature: this one without the model."""
        return replace(self, model=None)

    def parts(self) -> list[str]:
        """The formatted parts, in their stored order."""
        args = dict(self.args) if self.limit is None else {**self.args, "limit": self.limit}
        parts = [self.task] + [f"{k}:{args[k]}" for k in sorted(args)]
        parts.append(f"items:{self.items}")
        if self.seeds is not None:
            parts.append(_seeds_part(list(self.seeds)))
        parts.append(f"data:{self.data_loader}@{_short(self.data_revision)}")
        parts += [str(model) for model in self.aux_models]
        if self.model is not None:
            parts.append(str(self.model))
        return [*parts, f"v:{self.version}"]

    def __str__(self) -> str:
        return "|".join(self.parts())


def _seeds_part(seeds: list[int]) -> str:
    if seeds == list(range(len(seeds))):
        return f"seeds:{len(seeds)}"
    return "seed_list:" + "+".join(map(str, seeds))  # not "seed:", which a loader's own argument may use
