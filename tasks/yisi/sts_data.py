"""``sts_crosslingual``: cross-lingual STS pairs with gold similarity scores.

Raw layout (SemEval-2016 cross-lingual STS): for each set name S, ``STS.input.S.txt`` holds one
pair per line, two tab-separated texts (further columns are ignored), and ``STS.gs.S.txt`` the
gold score of the same line. The column order differs between files, so it is detected per
file (``language.first_column_is``) rather than trusted. A gold line that is empty marks a pair
without gold (SemEval's evaluation skips those) and the pair is left out; a set with no gold
line left is a data error.

Otherwise ``--data-dir`` is a Hub id or ``save_to_disk`` folder with ``sentence1`` (src),
``sentence2`` (tgt) and ``score`` columns.

Schema: ``id`` (``<set>:<line>`` in the raw layout), ``set``, ``sentence1`` (src),
``sentence2`` (tgt), ``score`` (float).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.errors import DataError, HarnessError
from harness.params import Param
from harness.run.data import DatasetLoader, LoadedData, files_revision, read_aligned, require_folder, uses_hf_dataset
from harness_tasks.yisi import contracts
from harness_tasks.yisi.language import first_column_is
from harness_tasks.yisi.pairs_data import check_score, load_pairs

INPUT, GOLD = "STS.input.{}.txt", "STS.gs.{}.txt"


def find_sets(folder: Path, wanted: str) -> list[str]:
    """The set names to read: all in the folder for ``all``, else the ``+``-separated names."""
    present = sorted(p.name[len("STS.input.") : -len(".txt")] for p in folder.glob(INPUT.format("*")))
    if wanted == "all":
        if not present:
            raise DataError(str(folder), f"no {INPUT.format('<set>')} files (the SemEval-2016 STS layout)")
        return present
    names = [name.strip() for name in wanted.split("+") if name.strip()]
    for name in names:
        if name not in present:
            raise DataError(str(folder / INPUT.format(name)), f"not found (sets here: {', '.join(present) or 'none'})")
    return names


def read_set(folder: Path, name: str, src: str, tgt: str) -> tuple[dict[str, list[Any]], str]:
    """The pairs of one set with gold scores, src first, and the detected column order."""
    input_path, gold_path = folder / INPUT.format(name), folder / GOLD.format(name)
    lines = read_aligned({"input": input_path, "gold": gold_path})
    pairs: list[tuple[str, str]] = []
    for row, line in enumerate(lines["input"], start=1):
        fields = line.split("\t")
        if len(fields) < 2:
            raise DataError(str(input_path), "expected two tab-separated texts", row=row)
        for column, text in enumerate(fields[:2], start=1):
            if not text.strip():
                raise DataError(str(input_path), "empty text", row=row, field=f"column {column}")
        pairs.append((fields[0], fields[1]))
    if not pairs:
        raise DataError(str(input_path), "has no pairs (the file is empty)")
    if not any(gold.strip() for gold in lines["gold"]):
        raise DataError(
            str(gold_path), f"no pair has a gold score: all {len(pairs)} gold lines are empty", field="score"
        )
    src_first = first_column_is(pairs, src, tgt, str(input_path))
    rows: dict[str, list[Any]] = {"id": [], "set": [], "sentence1": [], "sentence2": [], "score": []}
    for row, ((first, second), gold) in enumerate(zip(pairs, lines["gold"]), start=1):
        if not gold.strip():
            continue
        try:
            score = float(gold)
        except ValueError:
            raise DataError(str(gold_path), f"not a number: {gold!r}", row=row, field="score") from None
        if not math.isfinite(score):
            raise DataError(str(gold_path), f"not a finite number: {gold!r}", row=row, field="score")
        s1, s2 = (first, second) if src_first else (second, first)
        for key, value in zip(rows, (f"{name}:{row}", name, s1, s2, score)):
            rows[key].append(value)
    return rows, f"{src}-{tgt}" if src_first else f"{tgt}-{src}"


class StsLoader(DatasetLoader):
    """Cross-lingual STS: the SemEval-2016 layout, or any dataset with sentence1, sentence2, score."""

    params = {
        "src": Param("en", "language of sentence1", meaning=contracts.SOURCE.meaning),
        "tgt": Param("es", "language of sentence2", meaning=contracts.TARGET.meaning),
        "set": Param("all", "raw layout: set names joined by '+', or 'all'"),
        "split": Param("test", "split of a Hub / save_to_disk dataset"),
    }
    layout = "--data-dir DIR with STS.input.<set>.txt (two tab-separated texts per line) and STS.gs.<set>.txt (gold scores), or a Hub id / save_to_disk folder with sentence1, sentence2, score"
    schema = "id: string, set: string (raw layout), sentence1: string, sentence2: string, score: float"

    def load(self, source: str | None, args: Mapping[str, Any], images_dir: str | None = None) -> LoadedData:
        """Read and validate the pairs."""
        if source is None:
            raise HarnessError(
                "dataset 'sts_crosslingual' needs --data-dir: a SemEval-2016 STS folder, a save_to_disk folder or a Hub id"
            )
        src, tgt = args["src"], args["tgt"]
        if src == tgt:
            raise HarnessError(f"src and tgt are both {src!r}: give two different languages")
        if uses_hf_dataset(source):
            return load_pairs(source, args["split"], "score", check_score)
        folder = require_folder(source)
        names = find_sets(folder, args["set"])
        columns: dict[str, list[Any]] = {"id": [], "set": [], "sentence1": [], "sentence2": [], "score": []}
        orders = {}
        for name in names:
            rows, orders[name] = read_set(folder, name, src, tgt)
            for key, values in rows.items():
                columns[key].extend(values)
        import datasets

        files = [folder / pattern.format(name) for name in names for pattern in (INPUT, GOLD)]
        identity = {
            "source": str(folder),
            "revision": files_revision(files),
            "split": "+".join(names),
            "column_order": orders,
        }
        return LoadedData(datasets.Dataset.from_dict(columns), identity)
