"""Captions: one small grammar per language (data tables and a noun-phrase realiser) and the
shared realiser that fills a sentence template with a scene's phrases.

Each language module has ``TEMPLATES`` (``"single"``: one group at a position; ``"pair"``: two
groups in a relation; ``TEMPLATES`` sentences each, see ``scenes.TEMPLATES``) and ``slots(scene)``,
the phrases its templates name (noun phrases already inflected for the case the template needs).
"""

from __future__ import annotations

from types import ModuleType

from harness_tasks.default_benchmark.grammar import cs, de, en, es, fr
from harness_tasks.default_benchmark.scenes import Scene

LANGUAGES: dict[str, ModuleType] = {"en": en, "de": de, "fr": fr, "es": es, "cs": cs}


def caption(scene: Scene, lang: str, template: int) -> str:
    """The caption of ``scene`` in ``lang`` with sentence template number ``template``."""
    grammar = LANGUAGES[lang]
    kind = "single" if len(scene.groups) == 1 else "pair"
    text = grammar.TEMPLATES[kind][template].format(**grammar.slots(scene))
    return text[0].upper() + text[1:]
