"""Honest weight loading: a checkpoint whose keys do not match the model is an error.

Every adapter that loads weights takes ``strict`` (default true). With ``strict=true`` a missing
or unexpected state-dict key raises a ``HarnessError`` naming up to five keys and the counts; with
``strict=false`` the model loads anyway, one warning line lists the keys, and they enter the
model's identity (``ModelIdentity.args["key_mismatch"]``), so its signature and cache key differ
from those of a clean load. See docs/checkpoints.md.

For Hugging Face ``from_pretrained`` the keys are transformers' own report
(``output_loading_info=True``), with one rule on top: an unexpected key whose first component is
not a submodule of the loaded model belongs to a head the model class does not have (BERT's
``cls.*`` pre-training head, ResNet's ``classifier.*`` when loaded as ``AutoModel``). Such keys are
discarded on purpose, exactly as loading the base model of a Hub checkpoint always does, and
are not an error.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.errors import HarnessError
from harness.params import Param

SHOWN = 5  # keys named in an error or warning
LISTED = 50  # keys of each kind kept in the model identity (plus their count)

STRICT_PARAM = Param(
    True,
    "fail on missing or unexpected checkpoint keys; false loads anyway, warns and records "
    "the keys in the model identity (see docs/checkpoints.md)",
)


@dataclass(frozen=True)
class KeyMismatch:
    """The state-dict keys a model lacked (``missing``) and the checkpoint keys it did not use (``unexpected``)."""

    missing: tuple[str, ...] = ()
    unexpected: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.missing or self.unexpected)

    def summary(self) -> str:
        """``missing N (e.g. a, b); unexpected M (e.g. c)`` with at most ``SHOWN`` keys of each kind."""
        parts = [
            f"{kind} {len(keys)} (e.g. {', '.join(keys[:SHOWN])})"
            for kind, keys in (("missing", self.missing), ("unexpected", self.unexpected))
            if keys
        ]
        return "; ".join(parts)

    def record(self) -> dict[str, Any]:
        """What the model identity keeps: counts and the first ``LISTED`` keys of each kind."""
        return {
            "missing": len(self.missing),
            "unexpected": len(self.unexpected),
            "missing_keys": list(self.missing[:LISTED]),
            "unexpected_keys": list(self.unexpected[:LISTED]),
        }

    def __add__(self, other: KeyMismatch) -> KeyMismatch:
        return KeyMismatch(self.missing + other.missing, self.unexpected + other.unexpected)


def mismatch(missing: Iterable[str], unexpected: Iterable[str], prefix: str = "") -> KeyMismatch:
    """A sorted ``KeyMismatch``, each key under ``prefix`` (the part of the model it belongs to)."""
    return KeyMismatch(tuple(sorted(prefix + k for k in missing)), tuple(sorted(prefix + k for k in unexpected)))


def enforce(found: KeyMismatch, what: str, strict: bool) -> KeyMismatch:
    """Raise when ``found`` is not empty and ``strict``; otherwise warn about it. Returns ``found``."""
    if not found:
        return found
    if strict:
        raise HarnessError(
            f"{what}: checkpoint does not match the model: {found.summary()} "
            "(pass --model-args strict=false to load it anyway)"
        )
    print(
        f"harness: warning: {what}: loaded with strict=false although the checkpoint does not match the model: "
        f"{found.summary()}",
        file=sys.stderr,
    )
    return found


def load_module(module: Any, state: Mapping[str, Any], what: str, strict: bool = True) -> KeyMismatch:
    """``module.load_state_dict(state)`` checked by ``enforce``; a shape that does not fit is always an error."""
    try:
        missing, unexpected = module.load_state_dict(dict(state), strict=False)
    except RuntimeError as exc:
        raise HarnessError(f"{what}: checkpoint does not match the model: {exc}") from None
    return enforce(mismatch(missing, unexpected), what, strict)


def discarded_head(model: Any, key: str) -> bool:
    """True when ``key`` names no submodule of ``model``: the weights of a head it does not have."""
    return key.split(".", 1)[0] not in dict(model.named_children()) and key not in dict(model.named_parameters())


def from_pretrained(
    load: Callable[..., Any],
    source: str,
    what: str,
    strict: bool = True,
    unused: Callable[[str], bool] = lambda key: False,
    **kwargs: Any,
) -> tuple[Any, KeyMismatch]:
    """``load(source, output_loading_info=True, **kwargs)`` checked by ``enforce``.

    ``load`` is a ``from_pretrained`` method. Unexpected keys of a discarded head are not counted, nor
    missing or unexpected keys for which ``unused`` is true: weights the adapter never uses (layers
    above the one it reads, a pooler it does not pool with).
    """
    model, info = load(source, output_loading_info=True, **kwargs)
    missing = [key for key in info.get("missing_keys", ()) if not unused(key)]
    unexpected = [key for key in info.get("unexpected_keys", ()) if not discarded_head(model, key) and not unused(key)]
    return model, enforce(mismatch(missing, unexpected), what, strict)


def pooler_key(key: str) -> bool:
    """True for the weights of a BERT-style pooler (``pooler.dense.*``), which only ``pooling=pooler`` uses."""
    return key.startswith("pooler.") or ".pooler." in key


def identity_args(adapter: Any) -> dict[str, Any]:
    """The adapter's arguments, plus ``key_mismatch`` when it loads with ``strict=false``.

    The keys are known only once the weights are read, so such a model is loaded here; a strict
    model (the default) still gets its identity without loading anything.
    """
    args = dict(adapter.args)
    if args.get("strict", True):
        return args
    adapter.ensure_loaded()
    found = getattr(adapter, "key_mismatch", KeyMismatch())
    return {**args, "key_mismatch": found.record()} if found else args


def beyond_layer(layer: int) -> Callable[[str], bool]:
    """True for the keys of transformer layers numbered ``layer`` or more (``encoder.layer.12.``,
    ``transformer.layer.7.``), and for the pooler: what reading the output of layer ``layer`` leaves out."""
    pattern = re.compile(r"(?:^|\.)layers?\.(\d+)\.")

    def dropped(key: str) -> bool:
        found = pattern.search(key)
        return pooler_key(key) or (found is not None and int(found.group(1)) >= layer)

    return dropped
