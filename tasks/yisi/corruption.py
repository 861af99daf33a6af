"""Seeded corruptions of one caption: a trailing clause or phrase dropped, a content word swapped.

Sentences are split on whitespace; punctuation stays attached to its word, and a final ``.``,
``!`` or ``?`` is kept. Per language (en, de, fr, cs; any other language has only the comma
rule and no function words):

- a *cut point* is a word position p with at least 3 words before it and at least 2 from it
  on, where the previous word ends with a comma or the word (lowercased, punctuation stripped)
  opens a clause or phrase (a conjunction, relative pronoun or preposition of ``OPENERS``);
  dropping keeps words 0..p-1 (a trailing comma removed) and the final punctuation;
- a *content word* is a word at position >= 1 whose letters (punctuation stripped) are
  alphabetic, at least 3 long, and neither an opener nor in ``FUNCTION_WORDS``; swapping
  replaces it by another content word of the same side of the corpus with the same
  capitalisation (initial capital or not), keeping its punctuation.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

OPENERS: dict[str, frozenset[str]] = {
    "en": frozenset(
        [
            "and",
            "or",
            "but",
            "while",
            "as",
            "who",
            "which",
            "that",
            "where",
            "when",
            "because",
            "with",
            "without",
            "in",
            "on",
            "at",
            "near",
            "by",
            "for",
            "from",
            "of",
            "into",
            "onto",
            "through",
            "under",
            "over",
            "behind",
            "beside",
            "next",
            "along",
            "across",
            "around",
            "against",
            "during",
            "toward",
            "towards",
        ]
    ),
    "de": frozenset(
        [
            "und",
            "oder",
            "aber",
            "während",
            "als",
            "wobei",
            "weil",
            "wenn",
            "deren",
            "dessen",
            "welche",
            "welcher",
            "mit",
            "ohne",
            "in",
            "im",
            "am",
            "an",
            "auf",
            "bei",
            "beim",
            "neben",
            "vor",
            "hinter",
            "unter",
            "über",
            "zwischen",
            "für",
            "von",
            "vom",
            "aus",
            "nach",
            "durch",
            "entlang",
            "gegen",
        ]
    ),
    "fr": frozenset(
        [
            "et",
            "ou",
            "mais",
            "pendant",
            "tandis",
            "qui",
            "que",
            "dont",
            "où",
            "quand",
            "avec",
            "sans",
            "dans",
            "sur",
            "sous",
            "devant",
            "derrière",
            "près",
            "à",
            "au",
            "aux",
            "pour",
            "par",
            "de",
            "du",
            "des",
            "vers",
            "entre",
            "contre",
        ]
    ),
    "cs": frozenset(
        [
            "a",
            "i",
            "nebo",
            "ale",
            "zatímco",
            "když",
            "protože",
            "který",
            "která",
            "které",
            "kteří",
            "jenž",
            "jež",
            "kde",
            "s",
            "se",
            "bez",
            "v",
            "ve",
            "na",
            "pod",
            "nad",
            "před",
            "za",
            "u",
            "při",
            "k",
            "ke",
            "od",
            "do",
            "z",
            "ze",
            "po",
            "mezi",
            "přes",
            "kolem",
            "podél",
            "proti",
        ]
    ),
}

FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        [
            "the",
            "a",
            "an",
            "this",
            "that",
            "these",
            "those",
            "his",
            "her",
            "its",
            "their",
            "some",
            "one",
            "two",
            "three",
            "is",
            "are",
            "was",
            "were",
            "be",
            "being",
            "been",
            "has",
            "have",
            "had",
            "there",
            "here",
            "it",
            "he",
            "she",
            "they",
            "them",
            "him",
            "not",
            "very",
            "also",
        ]
    ),
    "de": frozenset(
        [
            "der",
            "die",
            "das",
            "dem",
            "den",
            "des",
            "ein",
            "eine",
            "einen",
            "einem",
            "einer",
            "eines",
            "sein",
            "seine",
            "ihr",
            "ihre",
            "ist",
            "sind",
            "war",
            "waren",
            "wird",
            "werden",
            "hat",
            "haben",
            "es",
            "er",
            "sie",
            "sich",
            "man",
            "zwei",
            "drei",
            "nicht",
            "sehr",
            "auch",
            "etwas",
            "einige",
            "viele",
        ]
    ),
    "fr": frozenset(
        [
            "le",
            "la",
            "les",
            "un",
            "une",
            "son",
            "sa",
            "ses",
            "leur",
            "leurs",
            "est",
            "sont",
            "était",
            "être",
            "a",
            "ont",
            "il",
            "elle",
            "ils",
            "elles",
            "se",
            "en",
            "y",
            "ne",
            "pas",
            "deux",
            "trois",
            "très",
            "aussi",
            "quelque",
            "quelques",
        ]
    ),
    "cs": frozenset(
        [
            "je",
            "jsou",
            "byl",
            "byla",
            "bylo",
            "jsou",
            "jeho",
            "její",
            "jejich",
            "svůj",
            "své",
            "svou",
            "si",
            "to",
            "ten",
            "ta",
            "tento",
            "tato",
            "toto",
            "dva",
            "dvě",
            "tři",
            "jeden",
            "jedna",
            "jedno",
            "velmi",
            "také",
            "něco",
        ]
    ),
}

_FINAL = ".!?"
_STRIP = ".,;:!?\"'()"


def _core(word: str) -> str:
    return word.strip(_STRIP)


def _split(sentence: str) -> tuple[list[str], str]:
    words = sentence.split()
    final = ""
    if words and words[-1][-1] in _FINAL:
        final = words[-1][-1]
        words[-1] = words[-1][:-1]
        if not words[-1]:
            words.pop()
    return words, final


def cut_points(sentence: str, lang: str) -> list[int]:
    """Word positions where a trailing clause or phrase may be dropped."""
    words, _ = _split(sentence)
    openers = OPENERS.get(lang, frozenset())
    return [p for p in range(3, len(words) - 1) if words[p - 1].endswith(",") or _core(words[p]).lower() in openers]


def drop_clause(sentence: str, lang: str, rng: np.random.Generator) -> str | None:
    """The sentence without a trailing clause or phrase chosen at random, or None if it has none."""
    points = cut_points(sentence, lang)
    if not points:
        return None
    words, final = _split(sentence)
    kept = words[: points[int(rng.integers(len(points)))]]
    return " ".join(kept).rstrip(",;:") + final


def is_content_word(word: str, lang: str) -> bool:
    """True for a word that carries content (see the module docstring)."""
    core = _core(word)
    lower = core.lower()
    return (
        len(core) >= 3
        and core.isalpha()
        and lower not in OPENERS.get(lang, frozenset())
        and lower not in FUNCTION_WORDS.get(lang, frozenset())
    )


def content_vocabulary(sentences: Iterable[str], lang: str) -> dict[bool, list[str]]:
    """Sorted content words of a corpus side, by capitalisation (True: initial capital)."""
    found: dict[bool, set[str]] = {True: set(), False: set()}
    for sentence in sentences:
        for word in sentence.split()[1:]:
            if is_content_word(word, lang):
                core = _core(word)
                found[core[0].isupper()].add(core)
    return {case: sorted(words) for case, words in found.items()}


def swap_word(sentence: str, lang: str, vocabulary: dict[bool, list[str]], rng: np.random.Generator) -> str | None:
    """The sentence with one content word replaced by another of ``vocabulary``, or None if impossible."""
    words = sentence.split()
    candidates = []
    for position in range(1, len(words)):
        if is_content_word(words[position], lang):
            core = _core(words[position])
            options = [w for w in vocabulary[core[0].isupper()] if w.lower() != core.lower()]
            if options:
                candidates.append((position, core, options))
    if not candidates:
        return None
    position, core, options = candidates[int(rng.integers(len(candidates)))]
    words[position] = words[position].replace(core, options[int(rng.integers(len(options)))], 1)
    return " ".join(words)
