"""Captions: one small grammar per language (data tables and a noun-phrase realiser) and the
shared realiser that fills a sentence template with a scene's phrases.

Each language module has ``TEMPLATES`` (``"single"``: one group at a position; ``"pair"``: two
groups in a relation; ``scenes.TEMPLATES`` sentences each), the tables ``VERBS`` (name ->
singular and plural form), ``POSITIONS`` and ``RELATIONS`` (first-to-second, second-to-first,
place of the first, place of the second), and ``slots(scene)``: its noun phrases, already
inflected for the case each template needs, and its background phrases.
"""

from __future__ import annotations

from types import ModuleType

from harness_tasks.default_benchmark.grammar import cs, de, en, es, fr
from harness_tasks.default_benchmark.scenes import Item, Scene

LANGUAGES: dict[str, ModuleType] = {"en": en, "de": de, "fr": fr, "es": es, "cs": cs}


def caption(scene: Scene, lang: str, template: int) -> str:
    """The caption of ``scene`` in ``lang`` with sentence template number ``template``."""
    grammar = LANGUAGES[lang]
    kind = "single" if len(scene.groups) == 1 else "pair"
    text = grammar.TEMPLATES[kind][template].format(**common_slots(grammar, scene), **grammar.slots(scene))
    return text[0].upper() + text[1:]


def captions_of(items: list[Item]) -> dict[str, list[str]]:
    """Language -> the caption of every item, each with the item's template for that language."""
    return {lang: [caption(item.scene, lang, item.templates[lang]) for item in items] for lang in LANGUAGES}


def common_slots(grammar: ModuleType, scene: Scene) -> dict[str, str]:
    """The verbs agreeing with each group (``be_a``, ``be_b``, ...) and the place phrases."""
    values = {
        f"{verb}_{key}": forms[group.count > 1]
        for key, group in zip("ab", scene.groups)
        for verb, forms in grammar.VERBS.items()
    }
    if len(scene.groups) == 1:
        values["position"] = grammar.POSITIONS[scene.place]
    else:
        values.update(zip(("a_to_b", "b_to_a", "place_a", "place_b"), grammar.RELATIONS[scene.place]))
    return values
