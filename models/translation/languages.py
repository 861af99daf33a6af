"""Language-code conventions of Hugging Face translation tokenizers.

Tasks speak ISO 639-1 codes (``en``, ``fr``). Models want their own tokens:

- mBART-50 (``MBart50Tokenizer``): ``fr_XX``, ``de_DE``, ... set as ``src_lang`` / ``tgt_lang``;
  the tokenizer prepends the code to source and target.
- NLLB (``NllbTokenizer``): ``fra_Latn``, ``deu_Latn``, ... the same way.
- M2M100 (``M2M100Tokenizer``): plain ``fr`` as ``src_lang`` / ``tgt_lang``, token ``__fr__``.
- Multilingual Marian (vocabulary with ``>>fra<<`` tokens): the target code is written at the
  start of the source text; single-pair Marian models have no code at all.
- FSMT (fairseq's pipeline, e.g. a converted Gated Fusion): no codes; its tokenizer applies the
  Moses rules of ``src_lang`` to every text, so targets are tokenized with ``tgt_lang`` swapped in.

Users override the choice with the adapter arguments ``src_code`` / ``tgt_code``.
"""

from __future__ import annotations

from typing import Any

from harness.errors import HarnessError

# ISO 639-1 -> the FLORES-200 codes NLLB uses (the languages of CoMMuTE and Multi30K, and a few more).
NLLB_CODES = {
    "ar": "arb_Arab",
    "cs": "ces_Latn",
    "de": "deu_Latn",
    "en": "eng_Latn",
    "es": "spa_Latn",
    "fr": "fra_Latn",
    "hi": "hin_Deva",
    "it": "ita_Latn",
    "ja": "jpn_Jpan",
    "nl": "nld_Latn",
    "pt": "por_Latn",
    "ru": "rus_Cyrl",
    "tr": "tur_Latn",
    "zh": "zho_Hans",
}
ISO3 = {iso1: code.split("_")[0] for iso1, code in NLLB_CODES.items()}
_NAMED = ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token")


def language_tokens(tokenizer: Any) -> set[str]:
    """The tokens a tokenizer uses as language codes (empty for single-pair models)."""
    marian = getattr(tokenizer, "supported_language_codes", None)
    if marian is not None:
        return set(marian)
    if hasattr(tokenizer, "get_lang_token"):  # M2M100
        return set(getattr(tokenizer, "lang_token_to_id", {}))
    named = {str(getattr(tokenizer, name)) for name in _NAMED if getattr(tokenizer, name, None) is not None}
    return {str(token) for token in tokenizer.all_special_tokens} - named


def find_code(codes: set[str], lang: str) -> str | None:
    """The token among ``codes`` that stands for ``lang`` (an ISO code or already a model code)."""
    iso3 = ISO3.get(lang, lang)
    for candidate in (lang, NLLB_CODES.get(lang), f"__{lang}__", f">>{lang}<<", f">>{iso3}<<"):
        if candidate in codes:
            return candidate
    prefixed = sorted(code for code in codes if code.startswith(f"{lang}_"))  # mBART-50: fr -> fr_XX
    return prefixed[0] if len(prefixed) == 1 else None


class LanguageConvention:
    """Applies a tokenizer's language-code convention to sources and targets."""

    def __init__(self, tokenizer: Any, src_code: str | None = None, tgt_code: str | None = None):
        self.tokenizer = tokenizer
        self.codes = language_tokens(tokenizer)
        self.overrides = {"src": src_code, "tgt": tgt_code}
        self.marian = getattr(tokenizer, "supported_language_codes", None) is not None
        self.m2m = hasattr(tokenizer, "get_lang_token")
        self.fsmt = hasattr(tokenizer, "moses_tokenize")  # FSMT: Moses rules of its src_lang for any text
        self.code_ids = {tokenizer.convert_tokens_to_ids(code) for code in self.codes}

    def code(self, lang: str | None, side: str) -> str | None:
        """The model's code for ``lang`` on ``side`` (src or tgt), or None when the model uses none."""
        if self.overrides[side]:
            return self.overrides[side]
        if not self.codes:
            return None
        if lang is None:
            raise HarnessError(f"this model needs a {side} language (its tokenizer has language codes)")
        found = find_code(self.codes, lang)
        if found is None:
            raise HarnessError(
                f"the tokenizer has no language code for {lang!r}; pass --model-args {side}_code=<token> "
                f"(it knows e.g. {', '.join(sorted(self.codes)[:8])})"
            )
        return found

    def source_ids(self, source: str, src_lang: str | None, tgt_lang: str | None) -> list[int]:
        """Token ids of a source sentence, with the language codes the model expects."""
        if self.marian:
            code = self.code(tgt_lang, "tgt") if self.codes else None
            return self.tokenizer(f"{code} {source}" if code else source).input_ids
        self._set("src_lang", self.code(src_lang, "src"))
        self._set("tgt_lang", self.code(tgt_lang, "tgt"))
        return self.tokenizer(source).input_ids

    def target_ids(self, target: str, src_lang: str | None, tgt_lang: str | None) -> list[int]:
        """Token ids of a target sentence in the tokenizer's target mode (codes included)."""
        if not self.marian:
            self._set("src_lang", self.code(src_lang, "src"))
            self._set("tgt_lang", self.code(tgt_lang, "tgt"))
        if not self.fsmt:
            return self.tokenizer(text_target=target).input_ids
        source_lang = self.tokenizer.src_lang  # tokenize the target with the target language's Moses rules
        self.tokenizer.src_lang = self.tokenizer.tgt_lang
        try:
            return self.tokenizer(text_target=target).input_ids
        finally:
            self.tokenizer.src_lang = source_lang

    def _set(self, attribute: str, code: str | None) -> None:
        if code is None:
            return
        if self.m2m and code.startswith("__") and code.endswith("__"):
            code = code[2:-2]  # M2M100 takes the plain code
        setattr(self.tokenizer, attribute, code)
