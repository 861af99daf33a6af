"""Which column of a two-column text file holds which language (py3langid, two-way decision)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from harness.errors import DataError, HarnessError


@lru_cache(maxsize=8)
def _identifier(languages: tuple[str, str]) -> Any:
    from py3langid.langid import MODEL_DIR, MODEL_FILE, LanguageIdentifier

    identifier = LanguageIdentifier.from_modelpath(MODEL_DIR / MODEL_FILE)
    try:
        identifier.set_languages(list(languages))
    except ValueError as exc:
        raise HarnessError(f"cannot identify languages {languages}: {exc} (py3langid knows ISO 639-1 codes)") from None
    return identifier


def _lean(identifier: Any, text: str, first: str) -> float:
    """Log-likelihood of ``first`` minus that of the other language."""
    scores = dict(identifier.rank(text))
    other = next(lang for lang in scores if lang != first)
    return scores[first] - scores[other]


def first_column_is(rows: Sequence[tuple[str, str]], lang: str, other: str, source: str) -> bool:
    """True when column 1 of ``rows`` is in ``lang`` and column 2 in ``other``, False when reversed.

    Each row votes for the order under which its two texts are likelier; the majority decides,
    and a tie is an error.
    """
    identifier = _identifier((lang, other))
    votes = 0
    for first, second in rows:
        difference = _lean(identifier, first, lang) - _lean(identifier, second, lang)
        votes += (difference > 0) - (difference < 0)
    if votes == 0:
        raise DataError(
            source, f"cannot tell which column is {lang!r} and which is {other!r} (the rows are split evenly)"
        )
    return votes > 0
