"""The caption grammars on hand-picked scenes (exact strings, every template), and that captions
determine their scene (no two scenes share a caption, whatever the templates)."""

from __future__ import annotations

import pytest

from harness_tasks.default_benchmark.grammar import LANGUAGES, caption
from harness_tasks.default_benchmark.scenes import TEMPLATES, Group, Scene, sample_items

TWO_RED_STARS_LEFT = Scene("white", (Group(2, "small", "red", "star"),), "left")
DIAMOND_ABOVE_CROSSES = Scene(
    "black", (Group(1, "large", "blue", "diamond"), Group(3, "small", "orange", "cross")), "above"
)
SQUARE_LEFT_OF_RINGS = Scene(
    "grey", (Group(1, "small", "green", "square"), Group(2, "large", "pink", "ring")), "left_of"
)

EXPECTED = {
    TWO_RED_STARS_LEFT: {
        "en": (
            "Two small red stars are on the left, on a white background.",
            "On a white background, two small red stars are on the left.",
            "A white background with two small red stars on the left.",
        ),
        "de": (
            "Zwei kleine rote Sterne sind links auf weißem Hintergrund.",
            "Auf weißem Hintergrund befinden sich links zwei kleine rote Sterne.",
            "Ein weißer Hintergrund mit zwei kleinen roten Sternen links.",
        ),
        "fr": (
            "Deux petites étoiles rouges sont à gauche, sur un fond blanc.",
            "Sur fond blanc, on voit deux petites étoiles rouges à gauche.",
            "Un fond blanc avec deux petites étoiles rouges à gauche.",
        ),
        "es": (
            "Dos estrellas rojas pequeñas están a la izquierda, sobre un fondo blanco.",
            "Sobre fondo blanco hay dos estrellas rojas pequeñas a la izquierda.",
            "Un fondo blanco con dos estrellas rojas pequeñas a la izquierda.",
        ),
        "cs": (
            "Dvě malé červené hvězdy jsou vlevo na bílém pozadí.",
            "Na bílém pozadí jsou vlevo dvě malé červené hvězdy.",
            "Bílé pozadí se dvěma malými červenými hvězdami vlevo.",
        ),
    },
    DIAMOND_ABOVE_CROSSES: {
        "en": (
            "A large blue diamond is above three small orange crosses, on a black background.",
            "Three small orange crosses are below a large blue diamond, on a black background.",
            "On a black background: a large blue diamond at the top and three small orange crosses at the bottom.",
        ),
        "de": (
            "Eine große blaue Raute ist über drei kleinen orangefarbenen Kreuzen, auf schwarzem Hintergrund.",
            "Drei kleine orangefarbene Kreuze sind unter einer großen blauen Raute, auf schwarzem Hintergrund.",
            "Auf schwarzem Hintergrund: oben eine große blaue Raute, unten drei kleine orangefarbene Kreuze.",
        ),
        "fr": (
            "Un grand losange bleu est au-dessus de trois petites croix orange, sur un fond noir.",
            "Trois petites croix orange sont en dessous d'un grand losange bleu, sur un fond noir.",
            "Sur fond noir : un grand losange bleu en haut et trois petites croix orange en bas.",
        ),
        "es": (
            "Un rombo azul grande está encima de tres cruces naranjas pequeñas, sobre un fondo negro.",
            "Tres cruces naranjas pequeñas están debajo de un rombo azul grande, sobre un fondo negro.",
            "Sobre fondo negro: un rombo azul grande arriba y tres cruces naranjas pequeñas abajo.",
        ),
        "cs": (
            "Jeden velký modrý kosočtverec je nad třemi malými oranžovými kříži, na černém pozadí.",
            "Tři malé oranžové kříže jsou pod jedním velkým modrým kosočtvercem, na černém pozadí.",
            "Na černém pozadí: nahoře jeden velký modrý kosočtverec, dole tři malé oranžové kříže.",
        ),
    },
    SQUARE_LEFT_OF_RINGS: {
        "en": (
            "A small green square is to the left of two large pink rings, on a grey background.",
            "Two large pink rings are to the right of a small green square, on a grey background.",
            "On a grey background: a small green square on the left and two large pink rings on the right.",
        ),
        "de": (
            "Ein kleines grünes Quadrat ist links von zwei großen rosafarbenen Ringen, auf grauem Hintergrund.",
            "Zwei große rosafarbene Ringe sind rechts von einem kleinen grünen Quadrat, auf grauem Hintergrund.",
            "Auf grauem Hintergrund: links ein kleines grünes Quadrat, rechts zwei große rosafarbene Ringe.",
        ),
        "fr": (
            "Un petit carré vert est à gauche de deux grands anneaux roses, sur un fond gris.",
            "Deux grands anneaux roses sont à droite d'un petit carré vert, sur un fond gris.",
            "Sur fond gris : un petit carré vert à gauche et deux grands anneaux roses à droite.",
        ),
        "es": (
            "Un cuadrado verde pequeño está a la izquierda de dos anillos rosas grandes, sobre un fondo gris.",
            "Dos anillos rosas grandes están a la derecha de un cuadrado verde pequeño, sobre un fondo gris.",
            "Sobre fondo gris: un cuadrado verde pequeño a la izquierda y dos anillos rosas grandes a la derecha.",
        ),
        "cs": (
            "Jeden malý zelený čtverec je vlevo od dvou velkých růžových prstenců, na šedém pozadí.",
            "Dva velké růžové prstence jsou vpravo od jednoho malého zeleného čtverce, na šedém pozadí.",
            "Na šedém pozadí: vlevo jeden malý zelený čtverec, vpravo dva velké růžové prstence.",
        ),
    },
}


@pytest.mark.parametrize("scene", list(EXPECTED), ids=["single-plural", "pair-above", "pair-left-of"])
@pytest.mark.parametrize("lang", list(LANGUAGES))
def test_every_template_gives_the_expected_sentence(scene, lang):
    assert tuple(caption(scene, lang, t) for t in range(TEMPLATES)) == EXPECTED[scene][lang]


@pytest.mark.parametrize(
    ("scene", "template", "expected"),
    [
        # singular agreement: German neuter and masculine, French and Spanish masculine, Czech feminine
        (
            Scene("black", (Group(1, "large", "yellow", "triangle"),), "centre"),
            0,
            {
                "en": "A large yellow triangle is in the middle, on a black background.",
                "de": "Ein großes gelbes Dreieck ist in der Mitte auf schwarzem Hintergrund.",
                "fr": "Un grand triangle jaune est au centre, sur un fond noir.",
                "es": "Un triángulo amarillo grande está en el centro, sobre un fondo negro.",
                "cs": "Jeden velký žlutý trojúhelník je uprostřed na černém pozadí.",
            },
        ),
        (
            Scene("black", (Group(1, "large", "yellow", "triangle"),), "centre"),
            2,
            {
                "en": "A black background with a large yellow triangle in the middle.",
                "de": "Ein schwarzer Hintergrund mit einem großen gelben Dreieck in der Mitte.",
                "fr": "Un fond noir avec un grand triangle jaune au centre.",
                "es": "Un fondo negro con un triángulo amarillo grande en el centro.",
                "cs": "Černé pozadí s jedním velkým žlutým trojúhelníkem uprostřed.",
            },
        ),
        (
            Scene("white", (Group(1, "small", "brown", "star"),), "bottom"),
            0,
            {
                "en": "A small brown star is at the bottom, on a white background.",
                "de": "Ein kleiner brauner Stern ist unten auf weißem Hintergrund.",
                "fr": "Une petite étoile marron est en bas, sur un fond blanc.",
                "es": "Una estrella marrón pequeña está abajo, sobre un fondo blanco.",
                "cs": "Jedna malá hnědá hvězda je dole na bílém pozadí.",
            },
        ),
        (
            Scene("grey", (Group(3, "large", "purple", "hexagon"),), "top"),
            1,
            {
                "en": "On a grey background, three large purple hexagons are at the top.",
                "de": "Auf grauem Hintergrund befinden sich oben drei große violette Sechsecke.",
                "fr": "Sur fond gris, on voit trois grands hexagones violets en haut.",
                "es": "Sobre fondo gris hay tres hexágonos morados grandes arriba.",
                "cs": "Na šedém pozadí jsou nahoře tři velké fialové šestiúhelníky.",
            },
        ),
    ],
)
def test_agreement_in_single_groups(scene, template, expected):
    assert {lang: caption(scene, lang, template) for lang in LANGUAGES} == expected


def test_a_caption_determines_its_scene_in_every_language_and_template():
    items = sample_items(4000, 11, tuple(LANGUAGES))
    for lang in LANGUAGES:
        scene_of: dict[str, Scene] = {}
        for item in items:
            for template in range(TEMPLATES):
                text = caption(item.scene, lang, template)
                assert scene_of.setdefault(text, item.scene) == item.scene, f"{lang}: {text!r} describes two scenes"


def test_languages_pick_their_templates_independently():
    items = sample_items(600, 0, tuple(LANGUAGES))
    differs = sum(item.templates["en"] != item.templates["de"] for item in items) / len(items)
    assert 0.55 < differs < 0.78  # 2/3 expected: word positions do not line up across languages
