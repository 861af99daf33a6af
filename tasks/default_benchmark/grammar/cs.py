"""Czech: numeral, adjectives and noun declined together in nominative, genitive (after "od")
and instrumental (after "nad", "pod", "s"), by table for the words used: hard adjectives
("malý", "červený") and masculine inanimate or feminine nouns. With 2 and 3 the noun phrase
is plural ("dva malé červené kruhy"); "s" becomes "se" before "dvěma" and "třemi"."""

from __future__ import annotations

from harness_tasks.default_benchmark.scenes import Group, Scene

NUMERALS = {  # count -> gender -> case
    1: {
        "m": {"nom": "jeden", "gen": "jednoho", "ins": "jedním"},
        "f": {"nom": "jedna", "gen": "jedné", "ins": "jednou"},
    },
    2: {"m": {"nom": "dva", "gen": "dvou", "ins": "dvěma"}, "f": {"nom": "dvě", "gen": "dvou", "ins": "dvěma"}},
    3: {"m": {"nom": "tři", "gen": "tří", "ins": "třemi"}, "f": {"nom": "tři", "gen": "tří", "ins": "třemi"}},
}
WITH = {1: "s", 2: "se", 3: "se"}
ADJECTIVE_ENDINGS = {  # (gender, plural) -> case; plural endings are shared by inanimate masculines and feminines
    ("m", False): {"nom": "ý", "gen": "ého", "ins": "ým"},
    ("f", False): {"nom": "á", "gen": "é", "ins": "ou"},
    ("m", True): {"nom": "é", "gen": "ých", "ins": "ými"},
    ("f", True): {"nom": "é", "gen": "ých", "ins": "ými"},
}
SIZES = {"small": "mal", "large": "velk"}  # hard adjective stems
COLOURS = {
    "red": "červen",
    "orange": "oranžov",
    "yellow": "žlut",
    "green": "zelen",
    "blue": "modr",
    "purple": "fialov",
    "pink": "růžov",
    "brown": "hněd",
}
NOUNS = {  # gender, then (nominative, genitive, instrumental) singular and plural
    "circle": ("m", ("kruh", "kruhu", "kruhem"), ("kruhy", "kruhů", "kruhy")),
    "square": ("m", ("čtverec", "čtverce", "čtvercem"), ("čtverce", "čtverců", "čtverci")),
    "triangle": (
        "m",
        ("trojúhelník", "trojúhelníku", "trojúhelníkem"),
        ("trojúhelníky", "trojúhelníků", "trojúhelníky"),
    ),
    "star": ("f", ("hvězda", "hvězdy", "hvězdou"), ("hvězdy", "hvězd", "hvězdami")),
    "cross": ("m", ("kříž", "kříže", "křížem"), ("kříže", "křížů", "kříži")),
    "diamond": ("m", ("kosočtverec", "kosočtverce", "kosočtvercem"), ("kosočtverce", "kosočtverců", "kosočtverci")),
    "hexagon": (
        "m",
        ("šestiúhelník", "šestiúhelníku", "šestiúhelníkem"),
        ("šestiúhelníky", "šestiúhelníků", "šestiúhelníky"),
    ),
    "ring": ("m", ("prstenec", "prstence", "prstencem"), ("prstence", "prstenců", "prstenci")),
}
CASES = ("nom", "gen", "ins")
BACKGROUNDS = {"white": "bíl", "grey": "šed", "black": "čern"}  # hard stems; "pozadí" is neuter
POSITIONS = {"left": "vlevo", "right": "vpravo", "top": "nahoře", "bottom": "dole", "centre": "uprostřed"}
RELATIONS = {  # first-to-second, second-to-first, place of the first, of the second
    "left_of": ("vlevo od", "vpravo od", "vlevo", "vpravo"),
    "above": ("nad", "pod", "nahoře", "dole"),
}
RELATION_CASES = {"left_of": "gen", "above": "ins"}  # "od" takes the genitive, "nad" and "pod" the instrumental
VERBS = {"be": ("je", "jsou")}
TEMPLATES = {
    "single": (
        "{a_nom} {be_a} {position} na {bg_loc} pozadí.",
        "na {bg_loc} pozadí {be_a} {position} {a_nom}.",
        "{bg_nom} pozadí {with_a} {position}.",
    ),
    "pair": (
        "{a_nom} {be_a} {a_to_b} {b_rel}, na {bg_loc} pozadí.",
        "{b_nom} {be_b} {b_to_a} {a_rel}, na {bg_loc} pozadí.",
        "na {bg_loc} pozadí: {place_a} {a_nom}, {place_b} {b_nom}.",
    ),
}


def noun_phrase(group: Group, case: str) -> str:
    """ "dva malé červené kruhy" (nom), "jedné velké modré hvězdy" (gen), "třemi malými žlutými kříži" (ins)."""
    gender, singular, plural = NOUNS[group.shape]
    many = group.count > 1
    ending = ADJECTIVE_ENDINGS[(gender, many)][case]
    noun = (plural if many else singular)[CASES.index(case)]
    return f"{NUMERALS[group.count][gender][case]} {SIZES[group.size]}{ending} {COLOURS[group.colour]}{ending} {noun}"


def slots(scene: Scene) -> dict[str, str]:
    """The background (nominative, locative) and the noun phrases: nominative, after "s", and after the relation."""
    stem = BACKGROUNDS[scene.background]
    values = {"bg_loc": stem + "ém", "bg_nom": stem + "é"}
    for key, group in zip("ab", scene.groups):
        values.update(
            {f"{key}_nom": noun_phrase(group, "nom"), f"with_{key}": f"{WITH[group.count]} {noun_phrase(group, 'ins')}"}
        )
        if len(scene.groups) == 2:
            values[f"{key}_rel"] = noun_phrase(group, RELATION_CASES[scene.place])
    return values
