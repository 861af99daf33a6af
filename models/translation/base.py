"""What every translation scorer shares: the ``score_translations`` contract and batching.

``score_translations(requests, temperature=1.0, output="logprobs")`` returns, per request, the
log-probabilities of the scored target tokens (``log_softmax(logits / temperature)`` at each
scored token), or with ``output="token_ids"`` the ids of those same tokens (no forward pass),
which is what prefix removal needs.

``EncoderDecoderScorer`` implements batched teacher forcing: every distinct (source, image) of
a call is encoded once, and all its candidate translations are scored in one decoder batch
against copies of that encoding. Subclasses say how to tokenize, encode and decode.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.adapters.capabilities import Capability, ScoreRequest
from harness.adapters.model import ModelAdapter, ModelIdentity, source_revision
from harness.errors import HarnessError
from harness.params import Param
from harness_models.loading import STRICT_PARAM, KeyMismatch, from_pretrained, identity_args

LOGIT_BUDGET = 1 << 25  # logits (rows x positions x vocabulary) materialised at once: 128 MiB in float32
OUTPUTS = ("logprobs", "token_ids")
DTYPE_PARAM = Param("float32", "weights dtype", choices=("float32", "float16", "bfloat16"))


@dataclass(frozen=True)
class TargetTokens:
    """A target under teacher forcing: decoder inputs, the label at each position, which count."""

    decoder_input: tuple[int, ...]
    labels: tuple[int, ...]
    scored: tuple[bool, ...]

    @property
    def scored_ids(self) -> list[int]:
        """The ids of the scored tokens, in order."""
        return [label for label, keep in zip(self.labels, self.scored) if keep]


def pad_batch(sequences: Sequence[Sequence[int]], pad_id: int) -> tuple[Any, Any]:
    """Right-padded ids (N, max length) and the matching attention mask."""
    import torch

    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, sequence in enumerate(sequences):
        ids[row, : len(sequence)] = torch.tensor(list(sequence), dtype=torch.long)
        mask[row, : len(sequence)] = 1
    return ids, mask


def token_logprobs(logits: Any, labels: Any, temperature: float) -> Any:
    """``log_softmax(logits / temperature)`` at the label ids: shape (rows, positions)."""
    import torch

    scaled = logits.float() if temperature == 1 else logits.float() / temperature  # no copy of the logits at T = 1
    return scaled.gather(-1, labels.unsqueeze(-1)).squeeze(-1) - torch.logsumexp(scaled, dim=-1)


def rows_per_batch(positions: int, vocabulary: int) -> int:
    """How many decoder rows fit the logit budget."""
    return max(1, LOGIT_BUDGET // max(1, positions * vocabulary))


def torch_dtype(name: str) -> Any:
    """The torch dtype called ``name``."""
    import torch

    return getattr(torch, name)


def hub_params(what: str) -> dict[str, Param]:
    """``pretrained``, ``revision`` and ``strict``: where a Hugging Face model comes from, how it loads."""
    return {
        "pretrained": Param(None, f"Hub id or folder of {what}", str),
        "revision": Param(None, "Hub revision (branch, tag or commit)", str),
        "strict": STRICT_PARAM,
    }


def load_pretrained(auto_class: Any, args: dict[str, Any], device: str) -> tuple[Any, Any, KeyMismatch]:
    """Tokenizer and model (``auto_class``) from ``args`` pretrained / revision / dtype / strict, in eval mode,
    and the keys that did not match (empty unless ``strict`` is false)."""
    from transformers import AutoTokenizer

    source, revision = args["pretrained"], args.get("revision")
    tokenizer = AutoTokenizer.from_pretrained(source, revision=revision)
    model, found = from_pretrained(
        auto_class.from_pretrained,
        source,
        str(source),
        args.get("strict", True),
        revision=revision,
        dtype=torch_dtype(args["dtype"]),
    )
    return tokenizer, model.to(device).eval(), found


def combined_revision(parts: Mapping[str, str | None]) -> str:
    """One revision for a model assembled from several sources (folders or Hub ids)."""
    revisions = {name: source_revision(value) for name, value in sorted(parts.items()) if value}
    if len(revisions) == 1:
        return next(iter(revisions.values()))
    return "sha256:" + hashlib.sha256(json.dumps(revisions, sort_keys=True).encode()).hexdigest()[:16]


class ScorerAdapter(ModelAdapter):
    """Base class of the translation scorers."""

    capabilities = frozenset({Capability.TRANSLATION_SCORER})
    key_mismatch: KeyMismatch = KeyMismatch()  # checkpoint keys that did not match (only with strict=false)

    def sources(self) -> Mapping[str, str | None]:
        """The folders or Hub ids the weights come from (for the identity)."""
        return {"pretrained": self.args.get("pretrained")}

    def identity(self) -> ModelIdentity:
        """Name, adapter, sources and their content revision, arguments and dtype (no weights loaded, unless
        ``strict=false``: then the keys that did not match are part of it, see ``identity_args``)."""
        sources = self.sources()
        if not any(sources.values()):
            raise HarnessError(f"model {self.name!r} needs pretrained=<folder or Hub id> (see docs/commute.md)")
        shown = sources.get("pretrained") or ",".join(f"{k}={v}" for k, v in sorted(sources.items()) if v)
        return ModelIdentity(
            self.name,
            self.adapter_name,
            shown,
            combined_revision(sources),
            identity_args(self),
            self.args.get("dtype", "float32"),
        )

    def score_translations(
        self, requests: Sequence[ScoreRequest], temperature: float = 1.0, output: str = "logprobs"
    ) -> list[np.ndarray]:
        """Per request: log-probabilities of the scored target tokens, or their ids (``output="token_ids"``)."""
        if output not in OUTPUTS:
            raise HarnessError(f"output must be one of {', '.join(OUTPUTS)}, got {output!r}")
        temperature = float(temperature)
        if not temperature > 0:
            raise HarnessError(f"temperature must be positive, got {temperature}")
        if not requests:
            return []
        self.ensure_loaded()
        if output == "token_ids":
            return [np.asarray(self.target_tokens(r).scored_ids, dtype=np.int64) for r in requests]
        return self.logprobs(list(requests), temperature)

    def target_tokens(self, request: ScoreRequest) -> TargetTokens:
        """How the request's target is fed and which tokens are scored."""
        raise NotImplementedError

    def logprobs(self, requests: list[ScoreRequest], temperature: float) -> list[np.ndarray]:
        """Scored-token log-probabilities of every request, in order."""
        raise NotImplementedError


class EncoderDecoderScorer(ScorerAdapter):
    """Batched teacher forcing for encoder-decoder models.

    Subclasses implement ``source_ids``, ``target_tokens``, ``encode`` (a dict of tensors whose
    first dimension indexes the distinct encoder inputs of a batch), ``decode`` (logits aligned
    with the decoder inputs) and set ``pad_id`` / ``vocab_size`` when loading.
    """

    pad_id: int = 0
    vocab_size: int = 1

    def source_ids(self, request: ScoreRequest) -> list[int]:
        """Token ids of the request's source."""
        raise NotImplementedError

    def encode(self, ids: Any, mask: Any, images: list[Any]) -> dict[str, Any]:
        """Encode a padded source batch (and its images)."""
        raise NotImplementedError

    def decode(self, context: dict[str, Any], decoder_ids: Any, decoder_mask: Any) -> Any:
        """Logits (rows, positions, vocabulary) for decoder inputs against their encodings."""
        raise NotImplementedError

    def logprobs(self, requests: list[ScoreRequest], temperature: float) -> list[np.ndarray]:
        """Encode each distinct (source, image) once; score all its targets together."""
        import torch

        groups: dict[tuple[Any, ...], int] = {}
        group_requests: list[ScoreRequest] = []
        rows: dict[tuple[int, TargetTokens], int] = {}
        row_of_request: list[int] = []
        tokens_of: dict[tuple[str, str | None, str | None], TargetTokens] = {}
        for request in requests:
            key = (request.source, request.src_lang, request.tgt_lang, request.image_key if self.uses_images else None)
            if key not in groups:
                groups[key] = len(group_requests)
                group_requests.append(request)
            target_key = (request.target, request.src_lang, request.tgt_lang)
            if target_key not in tokens_of:
                tokens_of[target_key] = self.target_tokens(request)
            row_key = (groups[key], tokens_of[target_key])
            row_of_request.append(rows.setdefault(row_key, len(rows)))
        source_ids = [self.source_ids(request) for request in group_requests]
        order = sorted(range(len(group_requests)), key=lambda g: -len(source_ids[g]))
        rows_of_group: dict[int, list[tuple[int, TargetTokens]]] = {}
        for (group, tokens), row in rows.items():
            rows_of_group.setdefault(group, []).append((row, tokens))
        results: list[np.ndarray] = [np.zeros(0)] * len(rows)
        with torch.inference_mode():
            for start in range(0, len(order), max(1, self.batch_size)):
                chunk = order[start : start + max(1, self.batch_size)]
                ids, mask = pad_batch([source_ids[g] for g in chunk], self.pad_id)
                images = [group_requests[g].image for g in chunk]
                context = self.encode(ids.to(self.device), mask.to(self.device), images)
                members = sorted(
                    ((local, row, tokens) for local, g in enumerate(chunk) for row, tokens in rows_of_group[g]),
                    key=lambda item: -len(item[2].labels),
                )
                step = rows_per_batch(len(members[0][2].labels), self.vocab_size)
                for first in range(0, len(members), step):
                    self._score_rows(context, members[first : first + step], temperature, results)
        return [results[row] for row in row_of_request]

    def _score_rows(
        self,
        context: dict[str, Any],
        members: list[tuple[int, int, TargetTokens]],
        temperature: float,
        results: list[np.ndarray],
    ) -> None:
        import torch

        index = torch.tensor([local for local, _, _ in members], device=self.device)
        expanded = {name: value.index_select(0, index) for name, value in context.items()}
        decoder_ids, decoder_mask = pad_batch([t.decoder_input for _, _, t in members], self.pad_id)
        labels, _ = pad_batch([t.labels for _, _, t in members], 0)
        logits = self.decode(expanded, decoder_ids.to(self.device), decoder_mask.to(self.device))
        values = token_logprobs(logits, labels.to(self.device), temperature).cpu().numpy()
        for position, (_, row, tokens) in enumerate(members):
            results[row] = values[position, : len(tokens.labels)][np.asarray(tokens.scored, dtype=bool)]
