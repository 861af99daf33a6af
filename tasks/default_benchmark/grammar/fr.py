"""French: the size adjective before the noun, the colour after it, both agreeing in gender and
number ("deux petites étoiles bleues"); "orange" and "marron" are invariable; "de" elides before
"un"/"une" ("à gauche d'une étoile")."""

from __future__ import annotations

from harness_tasks.default_benchmark.grammar.romance import inflect
from harness_tasks.default_benchmark.scenes import Group, Scene

ARTICLES = {"m": "un", "f": "une"}
NUMBERS = {2: "deux", 3: "trois"}
SIZES = {  # masculine singular, feminine singular, masculine plural, feminine plural
    "small": ("petit", "petite", "petits", "petites"),
    "large": ("grand", "grande", "grands", "grandes"),
}
COLOURS = {
    "red": ("rouge", "rouge", "rouges", "rouges"),
    "orange": ("orange", "orange", "orange", "orange"),
    "yellow": ("jaune", "jaune", "jaunes", "jaunes"),
    "green": ("vert", "verte", "verts", "vertes"),
    "blue": ("bleu", "bleue", "bleus", "bleues"),
    "purple": ("violet", "violette", "violets", "violettes"),
    "pink": ("rose", "rose", "roses", "roses"),
    "brown": ("marron", "marron", "marron", "marron"),
}
NOUNS = {  # gender, singular, plural
    "circle": ("m", "cercle", "cercles"),
    "square": ("m", "carré", "carrés"),
    "triangle": ("m", "triangle", "triangles"),
    "star": ("f", "étoile", "étoiles"),
    "cross": ("f", "croix", "croix"),
    "diamond": ("m", "losange", "losanges"),
    "hexagon": ("m", "hexagone", "hexagones"),
    "ring": ("m", "anneau", "anneaux"),
}
VERBS = {"be": ("est", "sont")}
BACKGROUNDS = {"white": "blanc", "grey": "gris", "black": "noir"}  # "fond" is masculine
POSITIONS = {"left": "à gauche", "right": "à droite", "top": "en haut", "bottom": "en bas", "centre": "au centre"}
RELATIONS = {  # first-to-second and second-to-first (both + de), place of the first, of the second
    "left_of": ("à gauche", "à droite", "à gauche", "à droite"),
    "above": ("au-dessus", "en dessous", "en haut", "en bas"),
}
TEMPLATES = {
    "single": (
        "{a} {be_a} {position}, sur un fond {bg}.",
        "sur fond {bg}, on voit {a} {position}.",
        "un fond {bg} avec {a} {position}.",
    ),
    "pair": (
        "{a} {be_a} {a_to_b} {of_b}, sur un fond {bg}.",
        "{b} {be_b} {b_to_a} {of_a}, sur un fond {bg}.",
        "sur fond {bg} : {a} {place_a} et {b} {place_b}.",
    ),
}


def noun_phrase(group: Group) -> str:
    """ "un petit cercle rouge", "trois grandes croix orange"."""
    determiner, noun, form = inflect(group, NOUNS, ARTICLES, NUMBERS)
    return f"{determiner} {SIZES[group.size][form]} {noun} {COLOURS[group.colour][form]}"


def of(phrase: str) -> str:
    """ "de" before a noun phrase, elided before "un"/"une"."""
    return "d'" + phrase if phrase.startswith("un") else "de " + phrase


def slots(scene: Scene) -> dict[str, str]:
    """The background and the noun phrases (also after "de")."""
    values = {"bg": BACKGROUNDS[scene.background]}
    for key, group in zip("ab", scene.groups):
        phrase = noun_phrase(group)
        values.update({key: phrase, f"of_{key}": of(phrase)})
    return values
