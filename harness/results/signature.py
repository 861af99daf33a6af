"""Signatures as structured data, formatted only when written (as sacrebleu's ``Signature`` does).

A signature says what makes numbers comparable: the task and its version, its arguments, the
dataset's loader, revision and size, the seeds, ``--limit``, the auxiliary models and the model.
The runner builds a ``Signature`` and keeps it; ``str()`` gives the text stored in results files,
for example
``backretrieval|k:10|n:1000|src:en|tgt:de|items:367|seeds:25|data:ikea@3f2a9c1b0d4e|image:efficientnet-lite0@91ac07f2d3e4|model:e5-small@ce27aec866eb|v:1``.
The text is a stored format: the same inputs must always give the same bytes (``--resume`` and
the leaderboard compare them). A ``Signature`` holds exactly what its text says (argument values
as written, short revisions, digests of model arguments and code), so ``Signature.parse`` is the
inverse of ``str()``: readers of results lines parse the stored text once, here, and never split it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

_MODEL_PART = re.compile(
    r"(?P<role>[^:]*):(?P<name>.*)@(?P<revision>[^@]*?)(?:#args:(?P<args>[0-9a-f]{8}))?(?:#code:(?P<code>[0-9a-f]{8}))?",
    re.DOTALL,
)


class SignatureError(ValueError):
    """A text that is not a signature as ``str(Signature)`` writes it; the message says which part."""


def _short(value: Any, length: int = 12) -> str:
    text = str(value)
    if text.startswith("sha256:"):
        text = text[len("sha256:") :]
    return text[:length]


CHOSEN_DTYPES = frozenset({"float16", "bfloat16", "int8"})  # a model's dtype when an argument asks for another


def _digest8(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:8]


def identifying_args(identity: Mapping[str, Any]) -> dict[str, Any]:
    """A model's arguments as results identify it: its ``args``, and its ``dtype`` where an argument chose it
    (``CHOSEN_DTYPES``: float16, bfloat16, int8). Two runs that differ only in that choice differ in their numbers,
    so never in their signature or label. float32, the default, and a format the weights come in (e5-small's
    q4_0, named by the weights' revision) stay out: those lines keep the signatures they had."""
    args = dict(identity.get("args") or {})
    dtype = identity.get("dtype")
    if dtype in CHOSEN_DTYPES:
        args["dtype"] = dtype
    return args


@dataclass(frozen=True)
class ModelPart:
    """One model of a signature: its role (``model``, ``image``), name, short revision, and digests.

    ``args_digest`` identifies the model's arguments and ``code_digest`` its adapter's code
    (distribution, version, source hash); each is None when there is nothing to identify.
    """

    role: str
    name: str
    revision: str = "none"
    args_digest: str | None = None
    code_digest: str | None = None

    @classmethod
    def of(cls, role: str, identity: Mapping[str, Any]) -> ModelPart:
        """The part of a model with this identity (``ModelIdentity.as_dict()``)."""
        args = identifying_args(identity)
        code = [identity.get("distribution"), identity.get("distribution_version"), identity.get("code")]
        return cls(
            role,
            str(identity["name"]),
            _short(identity.get("revision") or "none"),
            _digest8(args) if args else None,
            _digest8(code) if any(code) else None,
        )

    @classmethod
    def parse(cls, text: str) -> ModelPart:
        """The part written as ``role:name@revision[#args:digest][#code:digest]``."""
        match = _MODEL_PART.fullmatch(text)
        if match is None:
            raise SignatureError(f"{text!r} is not a model part (role:name@revision)")
        return cls(match["role"], match["name"], match["revision"], match["args"], match["code"])

    def __str__(self) -> str:
        text = f"{self.role}:{self.name}@{self.revision}"
        if self.args_digest is not None:
            text += f"#args:{self.args_digest}"
        if self.code_digest is not None:
            text += f"#code:{self.code_digest}"
        return text


@dataclass(frozen=True)
class Signature:
    """What makes a task's numbers comparable across models; ``str()`` formats it, ``parse`` reads it back.

    ``args`` are the task's and its loader's arguments as (name, written value) pairs sorted by
    name, ``limit`` among them when given; ``seeds`` is None for a task that uses none;
    ``aux_models`` are the auxiliary models the task declared and the user gave; ``model`` is None
    in a task signature (the part shared by every model) and set in a full one. Build one with
    ``build`` (which writes values and shortens revisions) or ``parse``.
    """

    task: str
    version: int
    args: tuple[tuple[str, str], ...]
    items: int | None
    data_loader: str
    data_revision: str
    seeds: tuple[int, ...] | None = None
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
        written = dict(args) if limit is None else {**args, "limit": limit}
        return cls(
            task,
            version,
            tuple((name, str(written[name])) for name in sorted(written)),
            dataset.get("size"),
            str(dataset.get("loader")),
            _short(dataset.get("revision")),
            None if seeds is None else tuple(seeds),
            tuple(ModelPart.of(role, identity) for role, identity in sorted((aux_models or {}).items())),
        )

    @classmethod
    def parse(cls, text: str) -> Signature:
        """The signature whose ``str()`` is ``text``; raises ``SignatureError`` for any other text."""
        parts = text.split("|")
        if len(parts) < 4 or not parts[-1].startswith("v:"):
            raise SignatureError(f"{text!r} is not a signature (task|arguments|items:…|data:…|…|v:version)")
        at = next((i for i in range(1, len(parts) - 2) if _opens_dataset(parts, i)), None)
        if at is None:
            raise SignatureError(f"{text!r} is not a signature: no 'items:' part followed by the 'data:' part")
        seeds = _parse_seeds(parts[at + 1]) if parts[at + 1].split(":", 1)[0] in ("seeds", "seed_list") else None
        data = at + (2 if seeds is not None else 1)
        loader, _, revision = parts[data][len("data:") :].rpartition("@")
        models = [ModelPart.parse(part) for part in parts[data + 1 : -1]]
        try:
            signature = cls(
                parts[0],
                int(parts[-1][len("v:") :]),
                tuple(_parse_arg(part) for part in parts[1:at]),
                None if parts[at] == "items:None" else int(parts[at][len("items:") :]),
                loader,
                revision,
                seeds,
                tuple(model for model in models if model.role != "model"),
                next((model for model in models if model.role == "model"), None),
            )
        except ValueError as exc:
            raise SignatureError(f"{text!r} is not a signature: {exc}") from None
        names = [name for name, _ in signature.args]
        if names != sorted(set(names)):
            raise SignatureError(f"{text!r} is not a signature: its arguments are not sorted by name")
        if str(signature) != text:  # a model part between the others, a seed list that is a range, ...
            raise SignatureError(f"{text!r} is not a signature as the harness writes it (read back: {signature})")
        return signature

    def with_model(self, identity: Mapping[str, Any]) -> Signature:
        """The full signature: this task signature with the model of this identity."""
        return replace(self, model=ModelPart.of("model", identity))

    def task_part(self) -> Signature:
        """The task signature: this one without the model."""
        return replace(self, model=None)

    def without_args(self, *names: str) -> Signature:
        """This signature without the arguments of these names (a sweep's series is one setting across them)."""
        return replace(self, args=tuple((name, value) for name, value in self.args if name not in names))

    def parts(self) -> list[str]:
        """The formatted parts, in their stored order."""
        parts = [self.task] + [f"{name}:{value}" for name, value in self.args]
        parts.append(f"items:{self.items}")
        if self.seeds is not None:
            parts.append(_seeds_part(list(self.seeds)))
        parts.append(f"data:{self.data_loader}@{self.data_revision}")
        parts += [str(model) for model in self.aux_models]
        if self.model is not None:
            parts.append(str(self.model))
        return [*parts, f"v:{self.version}"]

    def configuration(self) -> str:
        """The formatted parts without the task name and version: what two tasks on the same examples share."""
        return "|".join(self.parts()[1:-1])

    def __str__(self) -> str:
        return "|".join(self.parts())


def _seeds_part(seeds: list[int]) -> str:
    if seeds == list(range(len(seeds))):
        return f"seeds:{len(seeds)}"
    return "seed_list:" + "+".join(map(str, seeds))  # not "seed:", which a loader's own argument may use


def _opens_dataset(parts: list[str], at: int) -> bool:
    """Whether ``items:`` at ``at`` is the dataset's size: the ``data:`` part follows it, after the seeds if any.

    Arguments are sorted by name, so an argument named ``items`` is never followed by one named ``data``.
    """
    if not parts[at].startswith("items:"):
        return False
    following = parts[at + 1]
    if following.startswith(("seeds:", "seed_list:")):
        following = parts[at + 2] if at + 2 < len(parts) - 1 else ""
    return following.startswith("data:") and "@" in following


def _parse_seeds(part: str) -> tuple[int, ...]:
    kind, _, value = part.partition(":")
    try:
        return tuple(range(int(value))) if kind == "seeds" else tuple(int(seed) for seed in value.split("+"))
    except ValueError:
        raise SignatureError(f"{part!r} is not a seeds part (seeds:N or seed_list:a+b+…)") from None


def _parse_arg(part: str) -> tuple[str, str]:
    name, colon, value = part.partition(":")
    if not colon:
        raise SignatureError(f"the argument {part!r} has no 'name:value'")
    return name, value
