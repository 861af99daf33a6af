"""English: "two small red stars are on the left, on a white background"."""

from __future__ import annotations

from harness_tasks.default_benchmark.scenes import Group, Scene

NUMBERS = {1: "a", 2: "two", 3: "three"}
SIZES = {"small": "small", "large": "large"}
COLOURS = {c: c for c in ("red", "orange", "yellow", "green", "blue", "purple", "pink", "brown")}
NOUNS = {  # singular, plural
    "circle": ("circle", "circles"),
    "square": ("square", "squares"),
    "triangle": ("triangle", "triangles"),
    "star": ("star", "stars"),
    "cross": ("cross", "crosses"),
    "diamond": ("diamond", "diamonds"),
    "hexagon": ("hexagon", "hexagons"),
    "ring": ("ring", "rings"),
}
VERBS = {"be": ("is", "are")}
BACKGROUNDS = {"white": "white", "grey": "grey", "black": "black"}
POSITIONS = {
    "left": "on the left",
    "right": "on the right",
    "top": "at the top",
    "bottom": "at the bottom",
    "centre": "in the middle",
}
RELATIONS = {  # first-to-second, second-to-first, place of the first, place of the second
    "left_of": ("to the left of", "to the right of", "on the left", "on the right"),
    "above": ("above", "below", "at the top", "at the bottom"),
}
TEMPLATES = {
    "single": (
        "{a} {be_a} {position}, on a {bg} background.",
        "on a {bg} background, {a} {be_a} {position}.",
        "a {bg} background with {a} {position}.",
    ),
    "pair": (
        "{a} {be_a} {a_to_b} {b}, on a {bg} background.",
        "{b} {be_b} {b_to_a} {a}, on a {bg} background.",
        "on a {bg} background: {a} {place_a} and {b} {place_b}.",
    ),
}


def noun_phrase(group: Group) -> str:
    """ "a small red circle", "three large blue crosses"."""
    noun = NOUNS[group.shape][group.count > 1]
    return f"{NUMBERS[group.count]} {SIZES[group.size]} {COLOURS[group.colour]} {noun}"


def slots(scene: Scene) -> dict[str, str]:
    """The background and the noun phrases."""
    return {"bg": BACKGROUNDS[scene.background], **{key: noun_phrase(group) for key, group in zip("ab", scene.groups)}}
