"""The default benchmark's CoMMuTE-format contrastive set: sentences, determinism, the commute layout, the command."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from harness.cli import main
from harness.errors import HarnessError
from harness_tasks.commute.data import CommuteExtendedLoader, CommuteLoader
from harness_tasks.default_benchmark.contrastive import write_contrastive
from harness_tasks.default_benchmark.pronouns import english, gender, training_examples, translation
from harness_tasks.default_benchmark.scenes import SHAPES


@pytest.mark.parametrize(
    "lang, shape, expected",
    [
        ("de", "circle", ("Er ist klein und rot.", "Er ist rot.", "Er ist klein.")),
        ("de", "diamond", ("Sie ist klein und rot.", "Sie ist rot.", "Sie ist klein.")),
        ("de", "square", ("Es ist klein und rot.", "Es ist rot.", "Es ist klein.")),
        ("fr", "star", ("Elle est petite et rouge.", "Elle est rouge.", "Elle est petite.")),
        ("fr", "circle", ("Il est petit et rouge.", "Il est rouge.", "Il est petit.")),
        ("es", "cross", ("Es pequeña y roja.", "Es roja.", "Es pequeña.")),
        ("es", "ring", ("Es pequeño y rojo.", "Es rojo.", "Es pequeño.")),
        ("cs", "star", ("Je malá a červená.", "Je červená.", "Je malá.")),
        ("cs", "hexagon", ("Je malý a červený.", "Je červený.", "Je malý.")),
    ],
)
def test_the_translation_agrees_with_the_gender_of_the_shape(lang, shape, expected):
    assert tuple(translation(lang, t, "small", "red", shape) for t in range(3)) == expected
    assert [english(t, "small", "red") for t in range(3)] == ["It is small and red.", "It is red.", "It is small."]


def read(folder, lang):
    return {
        name: (folder / f"en-{lang}" / name).read_text(encoding="utf-8").splitlines()
        for name in ("src.en", f"correct.{lang}", f"incorrect.{lang}", "img.order")
    }


def test_generation_is_deterministic_and_in_the_commute_layout(tmp_path):
    first = write_contrastive(tmp_path / "one", tuples=5, candidates=1, seed=3, languages=("fr", "cs"))
    second = write_contrastive(tmp_path / "two", tuples=5, candidates=1, seed=3, languages=("fr", "cs"))
    other = write_contrastive(tmp_path / "three", tuples=5, candidates=1, seed=4, languages=("fr",))
    for lang in ("fr", "cs"):
        assert read(first, lang) == read(second, lang)
        names = sorted(p.relative_to(first).as_posix() for p in (first / f"en-{lang}").rglob("*.png"))
        assert len(names) == 5 * 2 * 2  # two images and one candidate per side
        for name in names:
            assert np.array_equal(np.asarray(Image.open(first / name)), np.asarray(Image.open(second / name)))
    assert read(first, "fr") != read(other, "fr")

    data = CommuteLoader("commute").load(str(first), {"lang": "fr"}, images_dir=str(first / "en-fr" / "images")).data
    assert len(data) == 5 and data["id"] == ["1", "2", "3", "4", "5"]
    for row in data:
        assert row["target_a"] != row["target_b"]
        assert (row["incorrect_a"], row["incorrect_b"]) == (row["target_b"], row["target_a"])
        assert row["image_a"] == f"{row['id']}-a.png" and row["image_a_path"].endswith(row["image_a"])
        assert row["source"].startswith("It is ")
    extended = CommuteExtendedLoader("commute_extended").load(
        str(first), {"lang": "cs"}, images_dir=str(first / "en-cs" / "images")
    )
    assert [len(c) for c in extended.data["candidates_a"]] == [2] * 5


def test_the_two_images_of_a_tuple_show_shapes_of_different_genders(tmp_path):
    # the pronoun and adjective endings in the file follow the gender: every tuple's shapes differ in it
    root = write_contrastive(tmp_path, tuples=30, candidates=0, seed=0, languages=("fr",))
    lines = read(root, "fr")
    pronouns = [line.split()[0] for line in lines["correct.fr"]]
    assert all({a, b} == {"Il", "Elle"} for a, b in zip(pronouns[::2], pronouns[1::2]))
    assert {gender("fr", shape) for shape in SHAPES} == {"m", "f"}


def test_training_examples_are_seeded_and_name_the_shape():
    one, two = training_examples(6, 5), training_examples(6, 5)
    assert [(s, t, k) for _, s, t, k in one] == [(s, t, k) for _, s, t, k in two]
    assert all(np.array_equal(a[0], b[0]) for a, b in zip(one, two))
    for _, source, texts, shape in one:
        assert source.startswith("It is ") and set(texts) == {"de", "fr", "es", "cs"}
        assert texts["cs"].endswith(("á.", "ý.")) and (texts["cs"].endswith("á.") == (SHAPES[shape] == "star"))


def test_the_command_writes_the_set_and_refuses_bad_sizes(tmp_path, capsys):
    assert main(["xling-shapes-commute", "--output", str(tmp_path), "--tuples", "2", "--langs", "de"]) == 0
    assert "wrote 2 tuples per language (de)" in capsys.readouterr().out
    assert len(read(tmp_path, "de")["src.en"]) == 4 and (tmp_path / "en-de" / "images" / "2-b.png").is_file()
    assert main(["xling-shapes-commute", "--output", str(tmp_path), "--tuples", "0"]) == 2
    assert "tuples must be >= 1" in capsys.readouterr().err
    with pytest.raises(HarnessError, match="no contrastive set for ar"):
        write_contrastive(tmp_path, languages=("ar",))


def test_a_set_that_carries_its_images_needs_no_images_flag(tmp_path):
    """Issue 27's done-when command: `harness run --tasks commute_ic --model M --data-dir SET` with no --images."""
    folder = write_contrastive(tmp_path / "set", tuples=3, candidates=1, seed=0, languages=("de",))
    own = CommuteLoader("commute").load(str(folder), {"lang": "de"})
    assert own.identity["images"] == str(folder / "en-de" / "images")
    assert own.data["image_a_path"][0] == str(folder / "en-de" / "images" / "1-a.png")
    explicit = CommuteLoader("commute").load(str(folder), {"lang": "de"}, images_dir=str(folder / "en-de" / "images"))
    assert explicit.identity == own.identity  # the same run, the same signature
