"""Captions whose translation only the image decides: "It is small and red." about one object.

English "it" says nothing of the object's shape, but German, French, Spanish and Czech make the
pronoun or the adjectives agree with the gender of the shape's noun in their grammar (the
``NOUNS`` tables of ``grammar``): a red star is "Sie ist klein und rot." / "Elle est petite et
rouge." / "Es pequeña y roja." / "Je malá a červená.", a red circle "Er ist klein und rot." /
"Il est petit et rouge." / "Es pequeño y rojo." / "Je malý a červený." Only the scene shows
which shape "it" is. Used by the contrastive set (``contrastive``) and, with other scenes, to
train the ``xling-shapes-mmt`` model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness_tasks.default_benchmark.grammar import cs, de, es, fr
from harness_tasks.default_benchmark.render import render
from harness_tasks.default_benchmark.scenes import (
    BACKGROUNDS,
    COLOURS,
    POSITIONS,
    SHAPES,
    SIZES,
    Group,
    Scene,
    Stream,
    layout,
)

TARGETS = ("de", "fr", "es", "cs")
TRAINING_SHAPES = (*SHAPES, "star", "star", "diamond")  # more of the rarer genders (cs f, de f)
ENGLISH = ("It is {size} and {colour}.", "It is {colour}.", "It is {size}.")
DE_PRONOUNS = {"m": "Er", "f": "Sie", "n": "Es"}
FR_PRONOUNS = {"m": "Il", "f": "Elle"}


def gender(lang: str, shape: str) -> str:
    """The grammatical gender of the shape's noun in ``lang`` (m, f or n)."""
    return {"de": de, "fr": fr, "es": es, "cs": cs}[lang].NOUNS[shape][0]


def english(template: int, size: str, colour: str) -> str:
    """The English sentence: the same for every shape."""
    return ENGLISH[template].format(size=size, colour=colour)


def translation(lang: str, template: int, size: str, colour: str, shape: str) -> str:
    """The translation of ``english(template, size, colour)`` said of a ``shape``."""
    g = gender(lang, shape)
    if lang == "de":
        words = [de.SIZES[size], de.COLOURS[colour]]
        return _join(f"{DE_PRONOUNS[g]} ist", words, "und", template)
    if lang in ("fr", "es"):
        grammar = fr if lang == "fr" else es
        form = int(g == "f")
        words = [grammar.SIZES[size][form], grammar.COLOURS[colour][form]]
        return _join(f"{FR_PRONOUNS[g]} est" if lang == "fr" else "Es", words, "et" if lang == "fr" else "y", template)
    ending = cs.ADJECTIVE_ENDINGS[(g, False)]["nom"]
    return _join("Je", [cs.SIZES[size] + ending, cs.COLOURS[colour] + ending], "a", template)


def _join(head: str, words: list[str], conjunction: str, template: int) -> str:
    """``head size and colour.`` / ``head colour.`` / ``head size.`` as the English template says."""
    size, colour = words
    return (f"{head} {size} {conjunction} {colour}.", f"{head} {colour}.", f"{head} {size}.")[template]


@dataclass(frozen=True)
class Sentence:
    """What a pronoun sentence is about: template number, size and colour (the shape comes with the scene)."""

    template: int
    size: str
    colour: str


def one_object_scene(stream: Stream, size: str, colour: str, shape: str) -> tuple[Scene, np.ndarray]:
    """A scene of one object on a drawn background at a drawn position, and its pixels."""
    scene = Scene(stream.pick(BACKGROUNDS), (Group(1, size, colour, shape),), stream.pick(POSITIONS))
    return scene, render(scene.background, layout(scene, stream))


def draw_sentence(stream: Stream) -> Sentence:
    """A template, a size and a colour."""
    return Sentence(stream.below(len(ENGLISH)), stream.pick(SIZES), stream.pick(COLOURS))


def training_examples(count: int, seed: int) -> list[tuple[np.ndarray, str, dict[str, str], int]]:
    """``count`` one-object scenes with their pronoun sentence: (pixels, English, translation per target,
    the shape's index in ``SHAPES``)."""
    stream = Stream(seed)
    examples = []
    for _ in range(count):
        sentence, shape = draw_sentence(stream), stream.pick(TRAINING_SHAPES)
        _, pixels = one_object_scene(stream, sentence.size, sentence.colour, shape)
        texts = {lang: sentence_in(lang, sentence, shape) for lang in TARGETS}
        examples.append(
            (pixels, english(sentence.template, sentence.size, sentence.colour), texts, SHAPES.index(shape))
        )
    return examples


def sentence_in(lang: str, sentence: Sentence, shape: str) -> str:
    """The translation of ``sentence`` into ``lang`` about a ``shape``."""
    return translation(lang, sentence.template, sentence.size, sentence.colour, shape)
