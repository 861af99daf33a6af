"""The merge rules, case by case, and their independence from the order of the input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from leaderboard.builders import record, write_results

from harness.errors import HarnessError
from harness.leaderboard.export import to_csv, to_json
from harness.leaderboard.families import Families, Family, registered_families
from harness.leaderboard.markdown import readme
from harness.leaderboard.merge import merge, model_key, model_labels, telling_apart
from harness.leaderboard.tables import family_tables
from harness.results.load import Entry, load_entries
from harness.results.signature import Signature

T1, T2, T3 = "2026-01-01T00:00:00+00:00", "2026-02-01T00:00:00+00:00", "2026-03-01T00:00:00+00:00"
SRC = Path("results.jsonl")


def entries(*records, source: Path = SRC) -> list[Entry]:
    return [Entry(r, source) for r in records]


def main_values(board) -> dict[tuple[str, str], float]:
    """(model label, column label) -> value of every current cell."""
    return {
        (board.labels[key], column.label): result.record.metrics[column.metric]
        for (key, column), result in board.cells.items()
    }


def test_the_newest_entry_wins_and_older_ones_are_kept_as_superseded():
    old, new, newest = (record("xlr", "labse", v, started=t) for v, t in ((0.1, T1), (0.9, T3), (0.5, T2)))
    board = merge(entries(old, new, newest))
    assert main_values(board) == {("labse", "xlr recall@k"): 0.9}
    assert [(r.record.metrics["recall@k"], r.superseded) for r in board.results] == [
        (0.9, False),
        (0.5, True),
        (0.1, True),
    ]
    rows = json.loads(to_json(board))["results"]
    assert [(row["value"], row["superseded"]) for row in rows] == [(0.9, False), (0.5, True), (0.1, True)]
    assert to_csv(board).count("\n") == 2  # header and the current result only


def test_start_times_compare_as_moments_across_time_zones():
    earlier = record("xlr", "labse", 0.1, started="2026-01-01T10:00:00+02:00")  # 08:00 UTC
    later = record("xlr", "labse", 0.2, started="2026-01-01T09:00:00+00:00")
    assert main_values(merge(entries(later, earlier)))[("labse", "xlr recall@k")] == 0.2


def test_a_line_read_twice_counts_once():
    line = record("xlr", "labse", 0.4)
    board = merge(entries(line, source=Path("a/results.jsonl")) + entries(line, source=Path("b/results.jsonl")))
    assert len(board.results) == 1 and not board.results[0].superseded


def test_equal_start_times_are_ordered_by_content_whatever_the_input_order():
    a, b = record("xlr", "labse", 0.3, started=T1), record("xlr", "labse", 0.7, started=T1)
    first, second = merge(entries(a, b)), merge(entries(b, a))
    assert to_json(first) == to_json(second)
    assert sum(not r.superseded for r in first.results) == 1


@pytest.mark.parametrize(
    ("change", "differs_by"),
    [
        ({"args": {"src": "en", "tgt": "de", "dataset": "ikea", "k": 5}}, "k:5"),
        ({"version": 2}, "v:2"),
        ({"data_revision": "sha256:data2"}, "data:ikea@data2"),
        ({"values": [0.2, 0.4, 0.6]}, "seeds:3"),
        ({"size": 50}, "items:50"),
    ],
)
def test_differing_signatures_become_separate_labelled_columns_never_averaged(change, differs_by):
    args = {"src": "en", "tgt": "de", "dataset": "ikea", "k": 10}
    base = record("xlr", "labse", 0.5, args=args)
    other = record("xlr", "mbert", **{"values": 0.9, "args": args, **change})
    base_parts, other_parts = (set(Signature.parse(r.task_signature).parts()) for r in (base, other))
    assert len(base_parts ^ other_parts) <= 2  # one part differs
    board = merge(entries(base, other))
    assert len(board.columns) == 2
    labels = [c.label for c in board.columns]
    assert len(set(labels)) == 2 and any(differs_by in label for label in labels)
    assert sorted(main_values(board).values()) == sorted([0.5, other.metrics["recall@k"]])  # each number as recorded
    table = family_tables(board)[0]
    assert [sum(c is not None for c in row.cells) for row in table.rows] == [1, 1]  # no cell holds both


def test_records_of_different_models_with_equal_task_signatures_share_a_column():
    board = merge(entries(record("xlr", "labse", 0.8), record("xlr", "mbert", 0.6)))
    assert [c.label for c in board.columns] == ["xlr recall@k"]
    assert main_values(board) == {("labse", "xlr recall@k"): 0.8, ("mbert", "xlr recall@k"): 0.6}


def test_models_that_differ_in_revision_or_arguments_are_separate_rows():
    board = merge(
        entries(
            record("xlr", "labse", 0.8, revision="aaa"),
            record("xlr", "labse", 0.7, revision="bbb"),
            record("xlr", "labse", 0.6, revision="aaa", model_args={"pooling": "cls"}),
        )
    )
    assert sorted(board.labels.values()) == [
        "labse(pooling=cls)",
        "labse(pooling=default)@aaa",
        "labse(pooling=default)@bbb",
    ]
    assert len(board.current) == 3


def test_arguments_equal_in_python_but_written_apart_are_separate_models_and_equal_ones_one():
    values = [0, False, 0.0, -0.0, None, "0", 1, True, 1.0, 0, False]  # the last two: the first two, run again
    started = [f"2026-01-{day:02d}T00:00:00+00:00" for day in range(1, len(values) + 1)]
    lines = [record("xlr", "e5", 0.5, model_args={"k": v, "n": 2}, started=t) for v, t in zip(values, started)]
    board = merge(entries(*lines))
    assert sorted(board.labels.values()) == [
        "e5(k=-0.0)",
        "e5(k=0)@rev1#1",  # 0 and "0"
        "e5(k=0)@rev1#2",
        "e5(k=0.0)",
        "e5(k=1)",
        "e5(k=1.0)",
        "e5(k=False)",
        "e5(k=True)",
        "e5(k=default)",
    ]
    assert len(board.current) == 9 and sum(r.superseded for r in board.results) == 2
    assert {r.model_key for r in board.results} == {model_key(r.record.model) for r in board.results}
    built = [record("xlr", "e5", 0.5, model_args={name: "x"}) for name in (1, True)]  # lines built in code, not read
    assert len(merge(entries(*built)).labels) == 2


def test_an_argument_set_to_none_is_labelled_as_the_default():
    board = merge(
        entries(
            record("xlr", "e5", 0.8, model_args={"pooling": None}),
            record("xlr", "e5", 0.7, model_args={"pooling": "cls"}),
        )
    )
    assert sorted(board.labels.values()) == ["e5(pooling=cls)", "e5(pooling=default)"]


def test_labels_shorten_local_folders_only():
    labels = model_labels(
        {
            "a": {"name": "/models/labse"},
            "b": {"name": "sentence-transformers/LaBSE"},
            "c": {"name": "./x/mbert"},
            "d": {"name": "/other/mbert"},
        }
    )
    assert labels == {"a": "labse", "b": "sentence-transformers/LaBSE", "c": "./x/mbert", "d": "/other/mbert"}


def test_a_missing_cell_is_shown_missing():
    board = merge(
        entries(record("xlr", "labse", 0.8), record("backretrieval", "labse", 0.5), record("xlr", "mbert", 0.6))
    )
    text = readme(board, family_tables(board), [], "harness leaderboard results")
    assert "| labse | 0.8000 | 0.5000 |" in text and "| mbert | 0.6000 | — |" in text
    assert "mbert,backretrieval" not in to_csv(board)


def test_an_undefined_metric_is_shown_as_such():
    board = merge(entries(record("xlr", "labse", [None, None])))
    assert "| labse | n/a |" in readme(board, family_tables(board), [], "c")


COMMUTE = {"lang": "fr", "ties": "wrong", "temperature": 1.0}


def commute(model: str, values: dict[str, float], **changes) -> list:
    return [record(task, model, value, args={**COMMUTE, **changes}) for task, value in values.items()]


def test_an_average_is_shown_only_for_models_that_have_every_task():
    complete = commute("vgamt", {"commute_tc": 0.6, "commute_ic": 0.7, "commute_gtc": 0.3, "commute_gic": 0.4})
    partial = commute("marian", {"commute_tc": 0.9, "commute_gtc": 0.8, "commute_gic": 0.7})
    (table,) = family_tables(merge(entries(*complete, *partial)))
    assert table.averaged
    rows = {row.label: row for row in table.rows}
    assert rows["vgamt"].average == pytest.approx(0.5)
    assert rows["marian"].average is None
    assert [row.label for row in table.rows] == ["vgamt", "marian"]  # ranked by the average, missing last


def test_no_average_when_a_task_has_several_columns_or_for_retrieval():
    tables = family_tables(
        merge(
            entries(
                *commute("vgamt", {"commute_tc": 0.6, "commute_ic": 0.7}),
                *commute("vgamt", {"commute_tc": 0.5}, temperature=2.0),
                record("xlr", "labse", 0.8),
                record("backretrieval", "labse", 0.5),
            )
        )
    )
    assert [(t.family.name, t.averaged) for t in tables] == [("commute", False), ("retrieval", False)]


def test_families_with_as_many_models_keep_their_given_order_and_unclaimed_tasks_come_last():
    families = Families((Family("b", "B", ("xlr", "corr")), Family("a", "A", ("commute_gic", "yisi2_sts"))))
    board = merge(
        entries(
            record("bitext_mining", "m", 0.3),
            record("yisi2_sts", "m", 0.2),
            *commute("m", {"commute_gic": 0.1}),
            record("corr", "m", 0.4),
            record("xlr", "m", 0.5),
        ),
        families,
    )
    assert [t.family.name for t in family_tables(board)] == ["b", "a", "a", "other"]  # a: two directions
    assert [c.role for c in board.columns] == ["xlr", "corr", "commute_gic", "yisi2_sts", "bitext_mining"]


def test_the_family_comparing_more_models_comes_first_unless_a_family_declares_its_order():
    families = Families((Family("b", "B", ("xlr",)), Family("a", "A", ("yisi2_sts",))))
    lines = entries(record("xlr", "m", 0.5), record("yisi2_sts", "m", 0.2), record("yisi2_sts", "n", 0.3))
    assert [f.name for f, _ in merge(lines, families).families()] == ["a", "b"]  # a compares two models, b one
    declared = Families((Family("b", "B", ("xlr",), order=1), Family("a", "A", ("yisi2_sts",))))
    assert [f.name for f, _ in merge(lines, declared).families()] == ["b", "a"]


def test_the_installed_plugins_register_the_built_in_families_ordered_by_name():
    found = {f.name: f for f in registered_families().families}
    assert [name for name in found if name in ("commute", "retrieval", "yisi")] == ["commute", "retrieval", "yisi"]
    assert found["retrieval"].tasks == ("xlr", "backretrieval", "corr") and not found["retrieval"].average
    assert found["commute"].average and found["commute"].plugin == "commute"


def test_two_families_claiming_one_task_is_an_error_naming_both():
    with pytest.raises(HarnessError, match=r"'xlr' is claimed by family 'a' .* and family 'b'"):
        Families((Family("a", "A", ("xlr",), plugin="p"), Family("b", "B", ("xlr",), plugin="q")))


def test_corrupt_and_schema_invalid_lines_are_reported_with_file_and_line_and_the_file_is_untouched(tmp_path):
    path = write_results(tmp_path / "a", [record("xlr", "labse", 0.8)])
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("{torn\n")
        handle.write(json.dumps({**record("xlr", "mbert", 0.5).to_dict(), "metrics": {"recall@k": "high"}}) + "\n")
    write_results(tmp_path / "a", [record("xlr", "xlmr", 0.7)])
    before = path.read_bytes()
    found, problems = load_entries([str(tmp_path)])
    assert [r.record.model["name"] for r in found] == ["labse", "xlmr"]
    assert [(p.path, p.line) for p in problems] == [(str(path), 2), (str(path), 3)]
    assert "not valid JSON" in problems[0].reason and "metrics.recall@k" in problems[1].reason
    assert path.read_bytes() == before


def _outputs(items: list[Entry]) -> tuple[str, str, str]:
    board = merge(items)
    return to_json(board), to_csv(board), readme(board, family_tables(board), [], "c")


RECORDS = st.builds(
    lambda task, model, value, month, k, source: Entry(
        record(
            task,
            model,
            value,
            started=f"2026-{month:02d}-01T00:00:00+00:00",
            args={"src": "en", "tgt": "de", "dataset": "ikea", "k": k},
        ),
        Path(f"{source}/results.jsonl"),
    ),
    st.sampled_from(["xlr", "backretrieval", "commute_tc"]),
    st.sampled_from(["labse", "mbert", "/m/labse"]),
    st.sampled_from([0.1, 0.5, 0.9]),
    st.integers(1, 3),
    st.sampled_from([5, 10]),
    st.sampled_from(["a", "b"]),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(RECORDS, min_size=1, max_size=12), st.randoms(use_true_random=False))
def test_the_merge_does_not_depend_on_the_order_of_lines_or_files(items, rng):
    shuffled = list(items)
    rng.shuffle(shuffled)
    assert _outputs(shuffled) == _outputs(items)


def test_a_task_signature_the_harness_never_writes_is_refused_naming_the_file_and_field():
    good = record("xlr", "labse", 0.4)
    odd = record("xlr", "mbert", 0.5)
    odd.task_signature = "xlr|src:en|v:1"  # no items:, no data: part
    with pytest.raises(HarnessError) as raised:
        merge(entries(good) + entries(odd, source=Path("b/results.jsonl")))
    assert str(raised.value).startswith(
        "b/results.jsonl: the xlr result of mbert has a field 'task_signature' this harness does not write"
    )


def test_columns_carry_their_parsed_signature_and_give_back_the_stored_text():
    first, second = record("xlr", "labse", 0.4), record("xlr", "mbert", 0.5, size=50)
    board = merge(entries(first, second))
    assert sorted(c.task_signature for c in board.columns) == sorted([first.task_signature, second.task_signature])
    assert {c.signature.items for c in board.columns} == {50, 100}
    assert [r.signature for r in board.results] == [Signature.parse(r.record.task_signature) for r in board.results]


def test_a_registered_familys_typed_spec_gives_its_roles_title_and_order():
    from harness.plugins.registry import Registration, Registry

    registry = Registry()
    registry.entries["family"]["mine"] = Registration(
        "family", "mine", "pkg.plots:PLOTS", "My family", "pkg", {"roles": ("a_role", "b_role"), "order": 0}
    )
    (family,) = registered_families(registry).families
    assert (family.name, family.title, family.tasks, family.order, family.plots, family.plugin) == (
        "mine",
        "My family",
        ("a_role", "b_role"),
        0,
        "pkg.plots:PLOTS",
        "pkg",
    )


def _bkr(image: dict | None = None, limit: int | None = None) -> Signature:
    data = {"loader": "ikea", "revision": "sha256:" + "d" * 64, "size": 100}
    return Signature.build("backretrieval", 1, {"k": 10}, data, None, image and {"image": image}, limit)


def test_signatures_are_told_apart_by_names_where_names_suffice_and_by_what_one_lacks():
    effnet = {"name": "effnet", "revision": "sha256:" + "a" * 64}
    newer = {"name": "effnet", "revision": "sha256:" + "b" * 64}
    resnet = {"name": "resnet", "revision": "sha256:" + "c" * 64}
    plain, with_effnet, with_resnet = _bkr(), _bkr(effnet), _bkr(resnet)
    assert telling_apart([plain, with_effnet, with_resnet]) == {
        plain: ["no image model"],
        with_effnet: ["image:effnet"],
        with_resnet: ["image:resnet"],
    }
    # one name at two revisions: the shortened parts would be equal, so the whole parts stay
    found = telling_apart([_bkr(effnet), _bkr(newer)])
    assert found[_bkr(effnet)] == ["image:effnet@aaaaaaaaaaaa"] and found[_bkr(newer)] == ["image:effnet@bbbbbbbbbbbb"]
    limited = _bkr(limit=40)
    assert telling_apart([plain, limited]) == {plain: ["without limit"], limited: ["limit:40"]}
    assert telling_apart([plain]) == {plain: []}  # alone: nothing to tell apart
