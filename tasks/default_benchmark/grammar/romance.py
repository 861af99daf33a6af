"""What French and Spanish noun phrases share: a determiner, a noun in number, adjectives in gender and number."""

from __future__ import annotations

from collections.abc import Mapping

from harness_tasks.default_benchmark.scenes import Group


def inflect(
    group: Group, nouns: Mapping[str, tuple[str, str, str]], articles: Mapping[str, str], numbers: Mapping[int, str]
) -> tuple[str, str, int]:
    """(determiner, noun, adjective form) where the adjective tables list m sg, f sg, m pl, f pl."""
    gender, singular, plural = nouns[group.shape]
    form = 2 * (group.count > 1) + (gender == "f")
    if group.count == 1:
        return articles[gender], singular, form
    return numbers[group.count], plural, form
