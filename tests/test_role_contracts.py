"""Role contracts (issue 35): an argument is identified by its declared meaning, a task that claims a role and
misses part of its contract is warned about once, class-attribute typos warn, and records are read by meaning."""

from __future__ import annotations

import textwrap
from importlib.metadata import EntryPoint

import pytest
from fixtures.registries import project_entry_points

from harness.errors import HarnessError
from harness.params import Param
from harness.plugins.checks import edit_distance
from harness.plugins.contracts import (
    Argument,
    Pairing,
    RoleContract,
    known_arguments,
    missing_parts,
    names_by_meaning,
    unpaired,
    values_by_meaning,
)
from harness.plugins.registry import build_registry
from harness.results.records import ResultRecord
from harness.run.runner import _check_one_meaning

TARGET = Argument("lang.target", "tgt", "target language")


def test_two_arguments_are_one_when_both_declare_the_same_meaning_whatever_their_help():
    xlr = {"tgt": Param("de", "target language code", meaning="lang.target")}
    plugin = {"tgt": Param("fr", "target language", meaning="lang.target")}
    _check_one_meaning("tgt", "de", {"xlr": xlr, "plugin": plugin})  # no error: the same meaning
    other = {"tgt": Param("de", "target language code", meaning="lang.other")}
    with pytest.raises(HarnessError, match="means different things") as caught:
        _check_one_meaning("tgt", "de", {"xlr": xlr, "other": other})
    assert "(meaning 'lang.other')" in str(caught.value) and str(caught.value).endswith("xlr.tgt=de,other.tgt=de")


def test_without_a_meaning_on_either_side_the_definition_decides():
    plain = {"k": Param(10, "cut-off of Recall@k")}
    meant = {"k": Param(5, "cut-off of Recall@k", meaning="retrieval.k")}
    _check_one_meaning("k", "3", {"a": plain, "b": meant})  # one without a meaning: same help text, same argument
    with pytest.raises(HarnessError, match="means different things"):
        _check_one_meaning("k", "3", {"a": plain, "b": {"k": Param(10, "neighbourhood size")}})
    assert Param(1, "x", meaning="m").same_argument(Param(2, "y", meaning="m"))
    assert not Param(1, "x", meaning="m").same_argument(Param(1, "x", meaning="n"))


def test_missing_parts_name_each_missing_meaning_and_metric():
    contract = RoleContract("xlr", (TARGET,), ("recall@k", "mrr"))
    assert missing_parts(contract, ["lang.target"], ["recall@k", "mrr", "extra"]) == []
    assert missing_parts(contract, [None], ["recall@k"]) == [
        "an argument with meaning 'lang.target' (tgt)",
        "metric 'mrr'",
    ]
    assert contract.main_metric == "recall@k" and RoleContract("empty").main_metric is None


def _record(task_args, meanings=None, revision="sha256:a", size=10):
    return ResultRecord(
        task="t",
        task_version=1,
        task_args=task_args,
        main_metric="m",
        metrics={"m": 1.0},
        metrics_std={"m": 0.0},
        per_seed={"m": [1.0]},
        seeds=[0],
        model={"name": "x"},
        dataset={"loader": "files", "revision": revision, "split": "test", "size": size},
        run={},
        signature="t|v:1",
        task_signature="t|v:1",
        harness={},
        environment={},
        hardware={},
        started="2026-01-01T00:00:00+00:00",
        wall_seconds=0.0,
        arg_meanings=meanings or {},
    )


def test_records_are_read_by_meaning_and_older_lines_by_the_conventional_name():
    known = known_arguments([RoleContract("xlr", (TARGET,), optional=(Argument("sample.size", "n", "items"),))])
    assert list(known) == ["lang.target", "sample.size"]
    recorded = _record({"target": "de", "n": 5}, {"target": "lang.target"})
    assert values_by_meaning(recorded, known) == {"lang.target": "de"}  # recorded meanings only: n declares none
    older = _record({"tgt": "fr", "n": 5})
    assert values_by_meaning(older, known) == {"lang.target": "fr", "sample.size": 5}
    assert names_by_meaning(recorded, known) == {"lang.target": "target"}
    assert values_by_meaning(older) == {}  # without known arguments an older line declares nothing


def test_two_records_pair_on_the_same_data_and_equal_shared_meanings():
    pairing = Pairing("meta", ("xlr", "backretrieval"), same=("lang.target", "sample.size"))
    known = known_arguments([RoleContract("xlr", (TARGET,), optional=(Argument("sample.size", "n", "items"),))])
    xlr = _record({"target": "de"}, {"target": "lang.target"})
    assert unpaired(pairing, xlr, _record({"tgt": "de", "n": 9}), known) is None  # n: only one side declares it
    assert unpaired(pairing, xlr, _record({"tgt": "fr"}), known) == "different target / tgt (lang.target: 'de' vs 'fr')"
    assert unpaired(pairing, xlr, _record({"tgt": "de"}, revision="sha256:b"), known).startswith("different data")
    assert unpaired(pairing, xlr, _record({"tgt": "de"}, size=11), known).startswith("different data")
    assert unpaired(Pairing("p", ("a",), same_data=False), xlr, _record({}, revision="sha256:b")) is None


PLUGIN = '''
from harness import Metric, Param, Task, TaskOutput, hookimpl


class Partial(Task):
    """Claims xlr, declares a target language under its own name and meaning, and only Recall@k."""

    family = "retrieval"
    role = "xlr"
    main_metric = "recall@k"
    metrics = (Metric("recall@k"),)
    params = {"target": Param("de", "the language retrieved into", meaning="lang.target")}


class Typos(Task):
    familly = "retrieval"
    rol = "xlr"
    image_metrics = ("x",)  # not close to any attribute a Task reads: no warning
    main_metric = "m"


@hookimpl
def register_tasks(register):
    register("partial_xlr", "contract_plugin:Partial", "")
    register("typos", "contract_plugin:Typos", "")
'''


@pytest.fixture
def contract_registry(tmp_path, monkeypatch):
    (tmp_path / "contract_plugin.py").write_text(textwrap.dedent(PLUGIN))
    monkeypatch.syspath_prepend(str(tmp_path))
    return build_registry([*project_entry_points(), EntryPoint("contract-plugin", "contract_plugin", "harness")])


def test_a_task_missing_part_of_its_role_s_contract_is_warned_about_once(contract_registry, capsys):
    before = list(contract_registry.warnings)
    contract_registry.load("task", "partial_xlr")
    contract_registry.load("task", "partial_xlr")
    new = contract_registry.warnings[len(before) :]
    assert new == [
        "task 'partial_xlr' claims role 'xlr' of family 'retrieval' but misses part of its contract: an argument "
        "with meaning 'lang.source' (src); an argument with meaning 'retrieval.k' (k); metric 'mrr'; metric "
        "'median_rank' (the readers of the role may leave it out; docs/plugins.md, \"Roles are contracts\")"
    ]
    assert capsys.readouterr().err.count("claims role 'xlr'") == 1


def test_class_attribute_typos_warn_with_the_attribute_meant(contract_registry):
    contract_registry.load("task", "typos")
    typos = [w for w in contract_registry.warnings if w.startswith("task 'typos'")]
    assert len(typos) == 2
    assert "class attribute 'familly' is not one a Task reads (did you mean 'family'?); it is ignored" in typos[0]
    assert "class attribute 'rol' is not one a Task reads (did you mean 'role'?)" in typos[1]
    assert edit_distance("familly", "family") == 1 and edit_distance("", "abc") == 3 and edit_distance("ab", "ba") == 2


def test_every_built_in_task_meets_its_role_s_contract_and_has_no_typo():
    registry = build_registry(project_entry_points())
    for name in registry.names("task"):
        registry.load("task", name)
    assert registry.warnings == []
    for family in ("retrieval", "commute", "yisi"):
        spec = registry.get("family", family).spec
        assert {c.role for c in spec.contracts} == set(spec.display_roles), family
