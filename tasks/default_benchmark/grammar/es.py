"""Spanish: colour and size after the noun, agreeing in gender and number ("dos estrellas azules
pequeñas"); "naranja" and "rosa" keep one form in the singular."""

from __future__ import annotations

from harness_tasks.default_benchmark.grammar.romance import inflect
from harness_tasks.default_benchmark.scenes import Group, Scene

ARTICLES = {"m": "un", "f": "una"}
NUMBERS = {2: "dos", 3: "tres"}
SIZES = {  # masculine singular, feminine singular, masculine plural, feminine plural
    "small": ("pequeño", "pequeña", "pequeños", "pequeñas"),
    "large": ("grande", "grande", "grandes", "grandes"),
}
COLOURS = {
    "red": ("rojo", "roja", "rojos", "rojas"),
    "orange": ("naranja", "naranja", "naranjas", "naranjas"),
    "yellow": ("amarillo", "amarilla", "amarillos", "amarillas"),
    "green": ("verde", "verde", "verdes", "verdes"),
    "blue": ("azul", "azul", "azules", "azules"),
    "purple": ("morado", "morada", "morados", "moradas"),
    "pink": ("rosa", "rosa", "rosas", "rosas"),
    "brown": ("marrón", "marrón", "marrones", "marrones"),
}
NOUNS = {  # gender, singular, plural
    "circle": ("m", "círculo", "círculos"),
    "square": ("m", "cuadrado", "cuadrados"),
    "triangle": ("m", "triángulo", "triángulos"),
    "star": ("f", "estrella", "estrellas"),
    "cross": ("f", "cruz", "cruces"),
    "diamond": ("m", "rombo", "rombos"),
    "hexagon": ("m", "hexágono", "hexágonos"),
    "ring": ("m", "anillo", "anillos"),
}
VERBS = {"be": ("está", "están")}
BACKGROUNDS = {"white": "blanco", "grey": "gris", "black": "negro"}  # "fondo" is masculine
POSITIONS = {
    "left": "a la izquierda",
    "right": "a la derecha",
    "top": "arriba",
    "bottom": "abajo",
    "centre": "en el centro",
}
RELATIONS = {  # first-to-second, second-to-first, place of the first, of the second
    "left_of": ("a la izquierda de", "a la derecha de", "a la izquierda", "a la derecha"),
    "above": ("encima de", "debajo de", "arriba", "abajo"),
}
TEMPLATES = {
    "single": (
        "{a} {be_a} {position}, sobre un fondo {bg}.",
        "sobre fondo {bg} hay {a} {position}.",
        "un fondo {bg} con {a} {position}.",
    ),
    "pair": (
        "{a} {be_a} {a_to_b} {b}, sobre un fondo {bg}.",
        "{b} {be_b} {b_to_a} {a}, sobre un fondo {bg}.",
        "sobre fondo {bg}: {a} {place_a} y {b} {place_b}.",
    ),
}


def noun_phrase(group: Group) -> str:
    """ "un círculo rojo pequeño", "tres cruces naranjas grandes"."""
    determiner, noun, form = inflect(group, NOUNS, ARTICLES, NUMBERS)
    return f"{determiner} {noun} {COLOURS[group.colour][form]} {SIZES[group.size][form]}"


def slots(scene: Scene) -> dict[str, str]:
    """The background and the noun phrases."""
    return {"bg": BACKGROUNDS[scene.background], **{key: noun_phrase(group) for key, group in zip("ab", scene.groups)}}
