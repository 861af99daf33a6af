"""A preset's results are full members of their family (issue 22): selected by role, in the same table and
column as the identical built-in run, with the family's meta-evaluation and plots, titled by the data set."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from leaderboard.builders import record

from harness.leaderboard.families import Families, Family
from harness.leaderboard.merge import merge
from harness.leaderboard.plots import write_plots
from harness.leaderboard.sections import family_sections
from harness.leaderboard.tables import dataset_of, family_tables
from harness.results.load import Entry
from harness.results.signature import Signature

ES = {"src": "en", "tgt": "es", "dataset": "ikea"}


def as_preset(item, name: str, source: str | None = None):
    """``item`` as written by a preset called ``name`` of its task: own task name and signature, the base's role."""
    task_sig = replace(Signature.parse(item.task_signature), task=name)
    item.task, item.role, item.family = name, item.task, "retrieval"
    item.task_signature, item.signature = str(task_sig), str(task_sig.with_model(item.model))
    if source is not None:
        item.dataset = {**item.dataset, "source": source}
    return item


def retrieval(model: str, xlr: list[float], bkr: list[float], args=None, preset: bool = False, source=None):
    lines = [record("xlr", model, xlr, args=args), record("backretrieval", model, bkr, args=args)]
    for line in lines:
        line.dataset = {**line.dataset, "source": source or line.dataset["source"]}
    if preset:
        lines = [as_preset(line, f"my_en_es_{line.task}") for line in lines]
    return lines


def board_of(*records, families=None):
    return merge([Entry(r, Path("results.jsonl")) for r in records], families)


def test_a_presets_results_share_the_built_in_tables_columns_meta_evaluation_and_plots(tmp_path):
    source = "/home/me/data/ikea-es/en.es"
    built_in = [
        *retrieval("a", [0.9, 0.8], [0.7, 0.6], ES, source=source),
        *retrieval("b", [0.5, 0.4], [0.5, 0.3], ES, source=source),
    ]
    preset = retrieval("c", [0.2, 0.3], [0.1, 0.2], ES, preset=True, source=source)
    board = board_of(*built_in, *preset)
    assert [(c.role, c.tasks) for c in board.columns] == [
        ("xlr", ("my_en_es_xlr", "xlr")),
        ("backretrieval", ("backretrieval", "my_en_es_backretrieval")),
    ]
    (table,) = family_tables(board)
    assert table.family.name == "retrieval" and table.title == "ikea-es test en→es"  # the data set, not the loader
    assert [row.label for row in table.rows] == ["a", "b", "c"]
    sections = family_sections(board)["retrieval"]
    meta = next(s for s in sections if s.title.startswith("Meta-evaluation"))
    assert "across 3 models" in meta.note  # the preset's model counts in the family's meta-evaluation
    plots = write_plots(board, tmp_path)
    assert [p.file for p in plots][:1] == ["bkr_vs_xlr_ikea_en-es.png"]


def test_the_same_run_as_a_preset_and_as_the_built_in_task_is_one_cell_newest_first():
    old = record("xlr", "a", 0.5, started="2026-01-01T00:00:00+00:00")
    new = as_preset(record("xlr", "a", 0.6, started="2026-02-01T00:00:00+00:00"), "ikea_en_de_xlr")
    board = board_of(old, new)
    (column,) = board.columns
    assert column.recorded == (new.task_signature,) and column.tasks == ("ikea_en_de_xlr",)
    assert column.task_signature == old.task_signature  # named by the role
    assert board.cells[next(iter(board.labels)), column].record.metrics["recall@k"] == 0.6
    assert [r.superseded for r in board.results] == [False, True]


def test_old_lines_without_a_family_are_placed_by_their_task_name_and_a_named_family_wins():
    families = Families((Family("retrieval", "Image-pivoted retrieval", ("xlr", "backretrieval", "corr")),))
    plain = record("xlr", "a", 0.5)
    assert plain.family is None and plain.role is None
    own = record("bitext_mining", "a", 0.5)
    own.family, own.role = "bitext", "bitext_mining"
    board = board_of(plain, own, families=families)
    assert [(c.role, c.family.name) for c in board.columns] == [("xlr", "retrieval"), ("bitext_mining", "bitext")]


def test_a_data_set_is_named_by_its_source_without_the_language_pair_folder():
    item = record("xlr", "a", 0.5)
    for source, name in (
        ("../shared/data/ikea/en.de", "ikea test"),
        ("/data/commute/en-cs/", "commute test"),
        ("org/my-dataset", "my-dataset test"),
        (None, "ikea test"),  # generated data: the loader
    ):
        item.dataset = {**item.dataset, "source": source}
        assert dataset_of(item) == name
