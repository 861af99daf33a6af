"""``causal-lm``: a decoder-only language model scoring a translation as a prompt's continuation.

The prompt is ``template`` filled with ``{source}``, ``{src}`` / ``{tgt}`` (language codes) and
``{src_name}`` / ``{tgt_name}`` (English names), tokenized with the tokenizer's special tokens
(a BOS where the model uses one). The continuation is ``target_prefix + target`` tokenized on
its own without special tokens, followed by the EOS token when ``score_eos`` is true. Scored:
exactly the continuation's tokens (and that EOS), each given the prompt and the tokens before it.
Images are accepted and ignored (``uses_images`` is False: one score per source and target).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import numpy as np

from harness.adapters.capabilities import ScoreRequest
from harness.errors import HarnessError
from harness.params import Param
from harness_models.translation.base import (
    DTYPE_PARAM,
    ScorerAdapter,
    TargetTokens,
    hub_params,
    load_pretrained,
    pad_batch,
    rows_per_batch,
    token_logprobs,
)

NAMES = {
    "ar": "Arabic",
    "cs": "Czech",
    "de": "German",
    "en": "English",
    "es": "Spanish",
    "fr": "French",
    "it": "Italian",
    "ja": "Japanese",
    "nl": "Dutch",
    "pt": "Portuguese",
    "ru": "Russian",
    "zh": "Chinese",
}
DEFAULT_TEMPLATE = "Translate from {src_name} to {tgt_name}.\n{src_name}: {source}\n{tgt_name}:"


class CausalLMScorer(ScorerAdapter):
    """Translation log-probabilities from an ``AutoModelForCausalLM``."""

    uses_images = False  # images are accepted and ignored
    params = {
        **hub_params("an AutoModelForCausalLM"),
        "template": Param(DEFAULT_TEMPLATE, "prompt with {source}, {src}, {tgt}, {src_name}, {tgt_name}"),
        "target_prefix": Param(" ", "text put before the target (a space after the prompt's colon)"),
        "score_eos": Param(True, "also score the end-of-sequence token after the target"),
        "dtype": DTYPE_PARAM,
    }

    def load(self) -> None:
        """Tokenizer and model from the folder or Hub id."""
        from transformers import AutoModelForCausalLM

        self.tokenizer, self.model, self.key_mismatch = load_pretrained(AutoModelForCausalLM, self.args, self.device)
        if self.args["score_eos"] and self.tokenizer.eos_token_id is None:
            raise HarnessError(
                f"{self.args['pretrained']}: the tokenizer has no EOS token; pass --model-args score_eos=false"
            )
        config = self.model.config
        self.pad_id = config.pad_token_id if config.pad_token_id is not None else (self.tokenizer.eos_token_id or 0)
        self.keeps_logits = "logits_to_keep" in inspect.signature(self.model.forward).parameters

    def prompt_fields(self, request: ScoreRequest) -> dict[str, str]:
        """The values the template may use (a subclass may add its own)."""
        return {
            "source": request.source,
            "src": request.src_lang or "",
            "tgt": request.tgt_lang or "",
            "src_name": NAMES.get(request.src_lang or "", request.src_lang or ""),
            "tgt_name": NAMES.get(request.tgt_lang or "", request.tgt_lang or ""),
        }

    def prompt_ids(self, request: ScoreRequest) -> list[int]:
        """The filled-in prompt's token ids."""
        try:
            prompt = self.args["template"].format(**self.prompt_fields(request))
        except (KeyError, IndexError, ValueError) as exc:
            raise HarnessError(f"template {self.args['template']!r} cannot be filled: {exc!r}") from None
        return self.tokenizer(prompt).input_ids

    def target_tokens(self, request: ScoreRequest) -> TargetTokens:
        """The continuation's tokens, all scored (the decoder input is the same sequence)."""
        ids = self.tokenizer(self.args["target_prefix"] + request.target, add_special_tokens=False).input_ids
        if self.args["score_eos"]:
            ids = [*ids, self.tokenizer.eos_token_id]
        return TargetTokens(tuple(ids), tuple(ids), (True,) * len(ids))

    def logprobs(self, requests: list[ScoreRequest], temperature: float) -> list[np.ndarray]:
        """Prompt + continuation, right-padded, in batches of similar prompt length; position p predicts token p + 1.

        Logits are computed only over the span of positions that predict a continuation token (through
        ``logits_to_keep`` where the model takes it): for a large vocabulary they dominate the cost.
        """
        import torch

        sequences: list[tuple[list[int], list[int]]] = []
        for request in requests:
            prompt, target = self.prompt_ids(request), list(self.target_tokens(request).labels)
            if not prompt:
                raise HarnessError("the prompt is empty: a causal LM needs at least one token before the target")
            sequences.append((prompt, target))
        results: list[np.ndarray] = [np.zeros(0)] * len(sequences)
        with torch.inference_mode():
            for chunk in self._batches(sequences):
                ids, mask = pad_batch([sequences[i][0] + sequences[i][1] for i in chunk], self.pad_id)
                first, end = _scored_span([sequences[i] for i in chunk])
                logits = self._span_logits(ids.to(self.device), mask.to(self.device), first, end)
                values = token_logprobs(logits, ids[:, first + 1 : end + 1].to(self.device), temperature).cpu().numpy()
                for row, i in enumerate(chunk):
                    prompt, target = sequences[i]
                    offset = len(prompt) - 1 - first
                    results[i] = values[row, offset : offset + len(target)]
        return results

    def _span_logits(self, ids: Any, mask: Any, first: int, end: int) -> Any:
        """Logits at positions first..end-1 (rows, end - first, vocabulary)."""
        import torch

        if self.keeps_logits:
            return self.model(
                input_ids=ids, attention_mask=mask, logits_to_keep=torch.arange(first, end, device=ids.device)
            ).logits
        return self.model(input_ids=ids, attention_mask=mask).logits[:, first:end]

    def _batches(self, sequences: list[tuple[list[int], list[int]]]) -> Iterator[list[int]]:
        """Request indices in batches of at most ``batch_size`` rows whose scored-span logits fit the logit budget."""
        vocabulary = self.model.config.vocab_size
        order = sorted(range(len(sequences)), key=lambda i: (-len(sequences[i][0]), -len(sequences[i][1])))
        batch: list[int] = []
        for index in order:
            first, end = _scored_span([sequences[i] for i in [*batch, index]])
            if batch and (
                len(batch) == max(1, self.batch_size) or rows_per_batch(end - first, vocabulary) <= len(batch)
            ):
                yield batch
                batch = []
            batch.append(index)
        if batch:
            yield batch


def _scored_span(sequences: list[tuple[list[int], list[int]]]) -> tuple[int, int]:
    """The positions whose logits predict a continuation token: [first, end) over the batch."""
    return min(len(prompt) for prompt, _ in sequences) - 1, max(
        len(prompt) + len(target) for prompt, target in sequences
    ) - 1
