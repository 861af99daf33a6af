"""``harness xling-shapes-commute``: the default benchmark's CoMMuTE-format contrastive set.

Each tuple is an English pronoun sentence ("It is small and red.", see ``pronouns``) and two
generated one-object scenes whose shapes have nouns of different genders in the target language
(a star and a circle in French: "Elle est petite et rouge." / "Il est petit et rouge."); each
image's correct translation is the other's incorrect one. Only the image tells which is right.
Written in the original CoMMuTE layout, one folder per target language, images beside it:

    <output>/en-<l>/src.en, correct.<l>, incorrect.<l>, img.order     (lines 2j-1, 2j: tuple j)
    <output>/en-<l>/images/<j>-a.png, <j>-b.png                       (--images for every task)
    <output>/en-<l>/images/extended/<j>/a/, b/                        (commute_oracle's candidates:
                                                                       other scenes of the same gender)

Everything comes from PCG64's raw stream (``scenes.Stream``) seeded by (seed, language), so a
(tuples, candidates, seed) triple writes the same texts and pixels on every machine.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from PIL import Image

from harness.errors import HarnessError
from harness_tasks.default_benchmark.pronouns import (
    TARGETS,
    Sentence,
    draw_sentence,
    english,
    gender,
    one_object_scene,
    sentence_in,
)
from harness_tasks.default_benchmark.scenes import GENERATOR_VERSION, SHAPES, Stream

CONTRASTIVE_VERSION = 1
DEFAULT_TUPLES = 60
DEFAULT_CANDIDATES = 2
LANGUAGE_SEED = {"de": 1, "fr": 2, "es": 3, "cs": 4}


def stream_for(seed: int, lang: str) -> Stream:
    """The random stream of one language's tuples."""
    return Stream(seed * 16 + LANGUAGE_SEED[lang] + 7_000_000)


def draw_tuple(stream: Stream, lang: str) -> tuple[Sentence, str, str]:
    """A sentence and two shapes whose translations into ``lang`` differ."""
    while True:
        sentence = draw_sentence(stream)
        shape_a = stream.pick(SHAPES)
        others = tuple(shape for shape in SHAPES if gender(lang, shape) != gender(lang, shape_a))
        shape_b = stream.pick(others)
        if sentence_in(lang, sentence, shape_a) != sentence_in(lang, sentence, shape_b):
            return sentence, shape_a, shape_b


def write_language(folder: Path, lang: str, tuples: int, candidates: int, seed: int) -> None:
    """The ``en-<lang>`` folder: the four text files and the images."""
    stream = stream_for(seed, lang)
    images = folder / "images"
    images.mkdir(parents=True, exist_ok=True)
    lines: dict[str, list[str]] = {"src.en": [], f"correct.{lang}": [], f"incorrect.{lang}": [], "img.order": []}
    for number in range(1, tuples + 1):
        sentence, shape_a, shape_b = draw_tuple(stream, lang)
        target = {"a": sentence_in(lang, sentence, shape_a), "b": sentence_in(lang, sentence, shape_b)}
        for side, other, shape in (("a", "b", shape_a), ("b", "a", shape_b)):
            name = f"{number}-{side}.png"
            _, pixels = one_object_scene(stream, sentence.size, sentence.colour, shape)
            save(pixels, images / name)
            lines["src.en"].append(english(sentence.template, sentence.size, sentence.colour))
            lines[f"correct.{lang}"].append(target[side])
            lines[f"incorrect.{lang}"].append(target[other])
            lines["img.order"].append(name)
        for side, shape in (("a", shape_a), ("b", shape_b)):
            same = tuple(s for s in SHAPES if gender(lang, s) == gender(lang, shape))
            for k in range(1, candidates + 1):
                _, pixels = one_object_scene(stream, sentence.size, sentence.colour, stream.pick(same))
                save(pixels, images / "extended" / str(number) / side / f"candidate{k}.png")
    for name, values in lines.items():
        (folder / name).write_text("".join(value + "\n" for value in values), encoding="utf-8")


def save(pixels: object, path: Path) -> None:
    """A PNG of the pixels (the pixels, not the compressed bytes, are what is reproducible)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path, "PNG", compress_level=1)  # type: ignore[arg-type]


def write_contrastive(
    output: str | Path,
    tuples: int = DEFAULT_TUPLES,
    candidates: int = DEFAULT_CANDIDATES,
    seed: int = 0,
    languages: tuple[str, ...] = TARGETS,
) -> Path:
    """Write the set for ``languages`` under ``output`` (an existing en-<l> folder is replaced)."""
    if tuples < 1 or candidates < 0 or seed < 0:
        raise HarnessError(f"tuples must be >= 1, candidates and seed >= 0 (got {tuples}, {candidates}, {seed})")
    unknown = [lang for lang in languages if lang not in TARGETS]
    if unknown:
        raise HarnessError(f"no contrastive set for {', '.join(unknown)} (languages: {', '.join(TARGETS)})")
    root = Path(output)
    for lang in languages:
        folder = root / f"en-{lang}"
        if folder.exists():
            import shutil

            shutil.rmtree(folder)
        write_language(folder, lang, tuples, candidates, seed)
    (root / "README.txt").write_text(
        f"xling-shapes contrastive set (CoMMuTE layout), contrastive version {CONTRASTIVE_VERSION}, "
        f"generator version {GENERATOR_VERSION}: tuples={tuples} candidates={candidates} seed={seed}.\n"
        "Regenerate: harness xling-shapes-commute --output DIR "
        f"--tuples {tuples} --candidates {candidates} --seed {seed}\n",
        encoding="utf-8",
    )
    return root


class ContrastiveCommand:
    """Write the contrastive set into a folder."""

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """Output folder, size, candidates per translation, seed, languages."""
        parser.add_argument("--output", required=True, help="folder to write en-<lang>/ into")
        parser.add_argument("--tuples", type=int, default=DEFAULT_TUPLES, help="tuples per language")
        parser.add_argument(
            "--candidates", type=int, default=DEFAULT_CANDIDATES, help="extra candidate images per translation"
        )
        parser.add_argument("--seed", type=int, default=0, help="generator seed")
        parser.add_argument("--langs", default=",".join(TARGETS), help="target languages (default: de,fr,es,cs)")

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        """Write the set and say where."""
        langs = tuple(lang.strip() for lang in args.langs.split(",") if lang.strip())
        root = write_contrastive(args.output, args.tuples, args.candidates, args.seed, langs)
        print(
            f"wrote {args.tuples} tuples per language ({', '.join(langs)}) to {root}/en-<lang>/, images in "
            f"en-<lang>/images/; run e.g. harness run --tasks commute_ic --data-dir {root} "
            f"--images {root}/en-{langs[0]}/images --task-args lang={langs[0]} --model xling-shapes-mmt"
        )
        return 0


COMMAND = ContrastiveCommand()
