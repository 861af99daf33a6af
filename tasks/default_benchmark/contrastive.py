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
    <output>/en-<l>/README.txt, .xling-shapes-commute-manifest.json   (how to regenerate; what was written)

An ``en-<l>`` folder is written as the leaderboard writes its folder (``harness.leaderboard.output``): whole, swapped
in at once, and only over a folder that is new, empty or marked by an earlier run; only the files that run wrote are
replaced, anything else in it is kept, and an unmarked folder (a real CoMMuTE copy), a symlink or a file is refused
before anything is written.

Everything comes from PCG64's raw stream (``scenes.Stream``) seeded by (seed, language), so a
(tuples, candidates, seed) triple writes the same texts and pixels on every machine.
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path

from PIL import Image

from harness.errors import HarnessError
from harness.leaderboard.output import Owner, previous_files, publish
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
OWNER = Owner("harness xling-shapes-commute", ".xling-shapes-commute-manifest.json", "contrastive set")


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


def language_files(lang: str, tuples: int, candidates: int, seed: int) -> dict[str, bytes]:
    """The ``en-<lang>`` folder's files by relative name: the four text files, the images and README.txt."""
    stream = stream_for(seed, lang)
    files: dict[str, bytes] = {}
    lines: dict[str, list[str]] = {"src.en": [], f"correct.{lang}": [], f"incorrect.{lang}": [], "img.order": []}
    for number in range(1, tuples + 1):
        sentence, shape_a, shape_b = draw_tuple(stream, lang)
        target = {"a": sentence_in(lang, sentence, shape_a), "b": sentence_in(lang, sentence, shape_b)}
        for side, other, shape in (("a", "b", shape_a), ("b", "a", shape_b)):
            name = f"{number}-{side}.png"
            _, pixels = one_object_scene(stream, sentence.size, sentence.colour, shape)
            files[f"images/{name}"] = png(pixels)
            lines["src.en"].append(english(sentence.template, sentence.size, sentence.colour))
            lines[f"correct.{lang}"].append(target[side])
            lines[f"incorrect.{lang}"].append(target[other])
            lines["img.order"].append(name)
        for side, shape in (("a", shape_a), ("b", shape_b)):
            same = tuple(s for s in SHAPES if gender(lang, s) == gender(lang, shape))
            for k in range(1, candidates + 1):
                _, pixels = one_object_scene(stream, sentence.size, sentence.colour, stream.pick(same))
                files[f"images/extended/{number}/{side}/candidate{k}.png"] = png(pixels)
    for name, values in lines.items():
        files[name] = "".join(value + "\n" for value in values).encode()
    files["README.txt"] = (
        f"xling-shapes contrastive set (CoMMuTE layout), contrastive version {CONTRASTIVE_VERSION}, "
        f"generator version {GENERATOR_VERSION}: lang={lang} tuples={tuples} candidates={candidates} seed={seed}.\n"
        "Regenerate: harness xling-shapes-commute --output DIR "
        f"--langs {lang} --tuples {tuples} --candidates {candidates} --seed {seed}\n"
    ).encode()
    return files


def png(pixels: object) -> bytes:
    """A PNG of the pixels (the pixels, not the compressed bytes, are what is reproducible)."""
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG", compress_level=1)  # type: ignore[arg-type]
    return buffer.getvalue()


def write_contrastive(
    output: str | Path,
    tuples: int = DEFAULT_TUPLES,
    candidates: int = DEFAULT_CANDIDATES,
    seed: int = 0,
    languages: tuple[str, ...] = TARGETS,
) -> Path:
    """Write the set for ``languages`` under ``output``, one ``en-<l>`` folder each, replacing only what an earlier
    run wrote there; every folder is checked before any is written (``HarnessError`` naming the first refused)."""
    if tuples < 1 or candidates < 0 or seed < 0:
        raise HarnessError(f"tuples must be >= 1, candidates and seed >= 0 (got {tuples}, {candidates}, {seed})")
    unknown = [lang for lang in languages if lang not in TARGETS]
    if unknown:
        raise HarnessError(f"no contrastive set for {', '.join(unknown)} (languages: {', '.join(TARGETS)})")
    root = Path(output)
    if root.exists() and not root.is_dir():
        raise HarnessError(f"the output {str(root)!r} is a file, not a folder")
    previous = {lang: previous_files(root / f"en-{lang}", OWNER) for lang in languages}
    for lang in languages:
        publish(root / f"en-{lang}", previous[lang], language_files(lang, tuples, candidates, seed), {}, OWNER)
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
