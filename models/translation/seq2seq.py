"""``seq2seq``: any Hugging Face ``AutoModelForSeq2SeqLM`` as a text-only translation scorer.

Marian, mBART-50, M2M100, NLLB (and Bart/T5-style models) with their own conventions. The
target is tokenized in the tokenizer's target mode (``[lang] y </s>`` for mBART-50 / NLLB /
M2M100, ``y </s>`` for Marian); the decoder inputs are what the model was trained with
(``prepare_decoder_input_ids_from_labels``: ``</s> [lang] y`` for mBART-50 / NLLB / M2M100,
``<pad> y`` for Marian). Scored: every subword of the translation and ``</s>``; a language code
is fed to the decoder but never scored. Images are accepted and ignored.
"""

from __future__ import annotations

from typing import Any

from harness.adapters.capabilities import ScoreRequest
from harness.params import Param
from harness_models.translation.base import DTYPE_PARAM, EncoderDecoderScorer, TargetTokens, hub_params, load_pretrained
from harness_models.translation.languages import LanguageConvention

LANGUAGE_PARAMS = {
    "src_code": Param(None, "the model's token for the source language, if not derived from it", str),
    "tgt_code": Param(None, "the model's token for the target language, if not derived from it", str),
    "dtype": DTYPE_PARAM,
}


class Seq2SeqScorer(EncoderDecoderScorer):
    """Text-only encoder-decoder scorer over a Hugging Face seq2seq model."""

    uses_images = False  # images are accepted and ignored
    params = {**hub_params("an AutoModelForSeq2SeqLM"), **LANGUAGE_PARAMS}

    def load(self) -> None:
        """Tokenizer and model from the folder or Hub id (safetensors preferred, no remote code)."""
        from transformers import AutoModelForSeq2SeqLM

        self.tokenizer, self.model, self.key_mismatch = load_pretrained(AutoModelForSeq2SeqLM, self.args, self.device)
        self.setup_text(self.tokenizer, self.model)

    def setup_text(self, tokenizer: Any, model: Any) -> None:
        """Language conventions, padding id and vocabulary size of a loaded tokenizer and model."""
        self.languages = LanguageConvention(tokenizer, self.args.get("src_code"), self.args.get("tgt_code"))
        self.pad_id = model.config.pad_token_id if model.config.pad_token_id is not None else 0
        self.vocab_size = model.config.vocab_size

    def source_ids(self, request: ScoreRequest) -> list[int]:
        """The source with the model's language codes."""
        return self.languages.source_ids(request.source, request.src_lang, request.tgt_lang)

    def target_tokens(self, request: ScoreRequest) -> TargetTokens:
        """Labels in target mode; decoder inputs as the model was trained; codes not scored."""
        import torch

        labels = self.languages.target_ids(request.target, request.src_lang, request.tgt_lang)
        shift = getattr(self.model, "prepare_decoder_input_ids_from_labels", None)
        if shift is not None:
            decoder_input = shift(labels=torch.tensor([labels]))[0].tolist()
        else:
            decoder_input = [self.model.config.decoder_start_token_id, *labels[:-1]]
        scored = tuple(label not in self.languages.code_ids for label in labels)
        return TargetTokens(tuple(decoder_input), tuple(labels), scored)

    def encode(self, ids: Any, mask: Any, images: list[Any]) -> dict[str, Any]:
        """The encoder's last hidden states (images ignored)."""
        hidden = self.model.get_encoder()(input_ids=ids, attention_mask=mask).last_hidden_state
        return {"hidden": hidden, "mask": mask}

    def decode(self, context: dict[str, Any], decoder_ids: Any, decoder_mask: Any) -> Any:
        """Teacher-forced logits against the given encoder states."""
        from transformers.modeling_outputs import BaseModelOutput

        # FSMT (fairseq's transformer) builds its causal decoder mask only when given input_ids; they
        # are not encoded again, since the encoder outputs are given.
        fsmt = {"input_ids": decoder_ids} if self.model.config.model_type == "fsmt" else {}
        return self.model(
            encoder_outputs=BaseModelOutput(last_hidden_state=context["hidden"]),
            attention_mask=context["mask"],
            decoder_input_ids=decoder_ids,
            decoder_attention_mask=decoder_mask,
            use_cache=False,
            **fsmt,
        ).logits
