"""German: gender (m, f, n) and case (nominative, dative) of article, adjectives and noun.

Singular noun phrases take the indefinite article and mixed adjective endings ("ein kleiner
roter Kreis", "einem kleinen roten Kreis"); plural ones a numeral and strong endings ("zwei
kleine rote Sterne", "zwei kleinen roten Sternen", with the dative plural -n of the noun).
"orange" and "rosa" do not inflect in German, so the declinable "orangefarben" and "rosafarben" stand in.
"""

from __future__ import annotations

from harness_tasks.default_benchmark.scenes import Group, Scene

ARTICLES = {"nom": {"m": "ein", "f": "eine", "n": "ein"}, "dat": {"m": "einem", "f": "einer", "n": "einem"}}
SINGULAR_ENDINGS = {"nom": {"m": "er", "f": "e", "n": "es"}, "dat": {"m": "en", "f": "en", "n": "en"}}
PLURAL_ENDINGS = {"nom": "e", "dat": "en"}
NUMBERS = {2: "zwei", 3: "drei"}
SIZES = {"small": "klein", "large": "groß"}  # adjective stems
COLOURS = {
    "red": "rot",
    "orange": "orangefarben",
    "yellow": "gelb",
    "green": "grün",
    "blue": "blau",
    "purple": "violett",
    "pink": "rosafarben",
    "brown": "braun",
}
NOUNS = {  # gender, singular (nominative = dative), plural nominative, plural dative
    "circle": ("m", "Kreis", "Kreise", "Kreisen"),
    "square": ("n", "Quadrat", "Quadrate", "Quadraten"),
    "triangle": ("n", "Dreieck", "Dreiecke", "Dreiecken"),
    "star": ("m", "Stern", "Sterne", "Sternen"),
    "cross": ("n", "Kreuz", "Kreuze", "Kreuzen"),
    "diamond": ("f", "Raute", "Rauten", "Rauten"),
    "hexagon": ("n", "Sechseck", "Sechsecke", "Sechsecken"),
    "ring": ("m", "Ring", "Ringe", "Ringen"),
}
VERBS = {"be": ("ist", "sind"), "lies": ("befindet sich", "befinden sich")}
BACKGROUNDS = {"white": "weiß", "grey": "grau", "black": "schwarz"}  # stems; "Hintergrund" is masculine
POSITIONS = {"left": "links", "right": "rechts", "top": "oben", "bottom": "unten", "centre": "in der Mitte"}
RELATIONS = {  # first-to-second and second-to-first (both + dative), place of the first, of the second
    "left_of": ("links von", "rechts von", "links", "rechts"),
    "above": ("über", "unter", "oben", "unten"),
}
TEMPLATES = {
    "single": (
        "{a_nom} {be_a} {position} auf {bg_dat} Hintergrund.",
        "auf {bg_dat} Hintergrund {lies_a} {position} {a_nom}.",
        "ein {bg_nom} Hintergrund mit {a_dat} {position}.",
    ),
    "pair": (
        "{a_nom} {be_a} {a_to_b} {b_dat}, auf {bg_dat} Hintergrund.",
        "{b_nom} {be_b} {b_to_a} {a_dat}, auf {bg_dat} Hintergrund.",
        "auf {bg_dat} Hintergrund: {place_a} {a_nom}, {place_b} {b_nom}.",
    ),
}


def noun_phrase(group: Group, case: str) -> str:
    """ "ein kleiner roter Kreis" (nom), "zwei großen blauen Rauten" (dat)."""
    gender, singular, plural_nom, plural_dat = NOUNS[group.shape]
    if group.count == 1:
        determiner, ending, noun = ARTICLES[case][gender], SINGULAR_ENDINGS[case][gender], singular
    else:
        determiner, ending = NUMBERS[group.count], PLURAL_ENDINGS[case]
        noun = plural_nom if case == "nom" else plural_dat
    return f"{determiner} {SIZES[group.size]}{ending} {COLOURS[group.colour]}{ending} {noun}"


def slots(scene: Scene) -> dict[str, str]:
    """The background and the noun phrases in nominative and dative."""
    stem = BACKGROUNDS[scene.background]
    values = {"bg_dat": stem + "em", "bg_nom": stem + "er"}
    for key, group in zip("ab", scene.groups):
        values.update({f"{key}_{case}": noun_phrase(group, case) for case in ("nom", "dat")})
    return values
