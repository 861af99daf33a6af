"""``multi30k_filter``: a parallel-data filtering set built from Multi30K, good and bad pairs.

From the N line-aligned captions of one split and a language pair (src, tgt), the seeded
procedure (``corruption_seed``, numpy's PCG64) is:

1. A random permutation of the N lines assigns bad kinds in turn: ``mismatch``,
   ``clause_drop``, ``word_swap``, ``mismatch``, ... (about a third each).
2. For each line i in order, one random draw picks the side to corrupt (src or tgt), then:
   ``clause_drop`` drops a trailing clause or phrase of that side's sentence and ``word_swap``
   replaces one of its content words by another content word of the same side of the split
   (see ``corruption.py``); when a sentence has no cut point, ``clause_drop`` falls back to
   ``word_swap``, and one with no content word falls back to ``mismatch``, which replaces the
   sentence by that side's sentence of another random line whose text differs.
3. Line i yields two rows, in this order: the good pair (label 1, kind ``good``) and the bad
   pair (label 0). So ``--limit 2n`` keeps n lines with both their pairs.

Schema: ``id`` (``<line>:<kind>``), ``sentence1`` (src), ``sentence2`` (tgt), ``label``
(1 good, 0 bad), ``kind``, ``corrupted_side`` ("src", "tgt" or "" for good pairs). A Hub id or
``save_to_disk`` folder with ``sentence1``, ``sentence2`` and ``label`` (0/1) is loaded as it is
(``id`` added when absent).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.errors import DataError, HarnessError
from harness.params import Param
from harness.run.data import DatasetLoader, LoadedData, uses_hf_dataset
from harness_tasks.yisi import contracts
from harness_tasks.yisi.corruption import content_vocabulary, drop_clause, swap_word
from harness_tasks.yisi.pairs_data import check_label, load_pairs

KINDS = ("mismatch", "clause_drop", "word_swap")
BUILDER_VERSION = 1  # bump whenever the procedure could produce different pairs


def _mismatch(texts: list[str], i: int, rng: np.random.Generator) -> str:
    n = len(texts)
    start = int(rng.integers(n - 1))
    start += start >= i
    for offset in range(n - 1):
        j = (start + offset) % n
        if j != i and texts[j] != texts[i]:
            return texts[j]
    raise DataError("multi30k_filter", "every sentence of a side is identical: no mismatched pair can be made")


def build_pairs(src_texts: list[str], tgt_texts: list[str], src: str, tgt: str, seed: int) -> dict[str, list[Any]]:
    """The filtering set's columns for aligned ``src_texts`` and ``tgt_texts`` (see the module docstring)."""
    n = len(src_texts)
    if n < 2:
        raise DataError("multi30k_filter", f"needs at least 2 aligned lines, got {n}")
    rng = np.random.default_rng(seed)
    kinds = [""] * n
    for rank, line in enumerate(rng.permutation(n)):
        kinds[line] = KINDS[rank % len(KINDS)]
    sides = {"src": (src_texts, src), "tgt": (tgt_texts, tgt)}
    vocabularies = {side: content_vocabulary(texts, lang) for side, (texts, lang) in sides.items()}
    rows: dict[str, list[Any]] = {k: [] for k in ("id", "sentence1", "sentence2", "label", "kind", "corrupted_side")}

    def add(row_id: str, s1: str, s2: str, label: int, kind: str, side: str) -> None:
        for key, value in zip(rows, (row_id, s1, s2, label, kind, side)):
            rows[key].append(value)

    for i in range(n):
        side = "src" if rng.integers(2) == 0 else "tgt"
        texts, lang = sides[side]
        kind, corrupted = kinds[i], None
        if kind == "clause_drop":
            corrupted = drop_clause(texts[i], lang, rng)
            kind = kind if corrupted is not None else "word_swap"
        if kind == "word_swap":
            corrupted = swap_word(texts[i], lang, vocabularies[side], rng)
            kind = kind if corrupted is not None else "mismatch"
        if corrupted is None:  # a mismatch, asked for or fallen back to
            corrupted = _mismatch(texts, i, rng)
        bad = (corrupted, tgt_texts[i]) if side == "src" else (src_texts[i], corrupted)
        add(f"{i + 1}:good", src_texts[i], tgt_texts[i], 1, "good", "")
        add(f"{i + 1}:{kind}", bad[0], bad[1], 0, kind, side)
    return rows


class Multi30kFilterLoader(DatasetLoader):
    """Good and corrupted translation pairs from a Multi30K folder (any two of its languages)."""

    params = {
        "src": Param("en", "language of sentence1", meaning=contracts.SOURCE.meaning),
        "tgt": Param("de", "language of sentence2", meaning=contracts.TARGET.meaning),
        "split": Param("test_2016_flickr", "Multi30K split file prefix (or the split of a Hub dataset)"),
        "corruption_seed": Param(0, "seed of the procedure that builds the bad pairs"),
    }
    layout = "--data-dir DIR in the Multi30K layout (<split>.<lang>, one caption per line), or a Hub id / save_to_disk folder with sentence1, sentence2, label"
    schema = "id: string, sentence1: string, sentence2: string, label: int (1 good, 0 bad), kind: string, corrupted_side: string"

    def load(self, source: str | None, args: Mapping[str, Any], images_dir: str | None = None) -> LoadedData:
        """Build the set from the raw Multi30K layout, or load a ready-made one."""
        if source is None:
            raise HarnessError(
                "dataset 'multi30k_filter' needs --data-dir: a Multi30K folder (<split>.<lang>), a save_to_disk folder or a Hub id"
            )
        if uses_hf_dataset(source):
            return load_pairs(source, args["split"], "label", check_label)
        from harness_tasks.parallel_data.multi30k import Multi30kLoader

        parallel = Multi30kLoader("multi30k").load(source, {k: args[k] for k in ("src", "tgt", "split")})
        texts = parallel.data
        src, tgt = args["src"], args["tgt"]
        rows = build_pairs(texts[f"text_{src}"], texts[f"text_{tgt}"], src, tgt, args["corruption_seed"])
        import datasets

        identity = {**parallel.identity, "builder": f"multi30k_filter.v{BUILDER_VERSION}", "lines": len(texts)}
        return LoadedData(datasets.Dataset.from_dict(rows), identity)
