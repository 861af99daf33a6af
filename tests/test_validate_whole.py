"""Objects of numbers or of anything are checked as a whole first (issue 24.7, speed); what fails that test is
checked key by key, so the error names the same field as before."""

from __future__ import annotations

import re
import sys

import pytest
from test_results import record_dict

from harness.results.records import MAX_FLOAT, SchemaError, validate


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"model": {"name": "m", 3: "x"}}, "field 'model': keys must be strings"),
        ({"metrics": {"m": 0.5, "a": True}}, "field 'metrics.a': expected a finite number, got True"),
        ({"metrics_std": {"m": None, "a": float("nan")}}, "field 'metrics_std.a': expected a finite number"),
        ({"metrics": {"m": 0.5, 2: 0.1}}, "field 'metrics': keys must be strings"),
        ({"warnings": ["k >= n", 3]}, "field 'warnings[1]': expected str, got int"),
        ({"plugins": {"a": "1.0", "b": None}}, "field 'plugins.b': expected str, got NoneType"),
    ],
)
def test_a_bad_value_or_key_is_named_as_before(overrides, message):
    with pytest.raises(SchemaError, match=re.escape(message)):
        validate(record_dict(**overrides))


def test_numbers_none_and_integers_pass_whole():
    validate(record_dict(metrics={"m": 1, "b": None, "c": 0.25}, metrics_std={"m": None}))
    validate(record_dict(model={"name": "m", "args": {"x": [1, {"y": None}]}}))
    validate(record_dict(warnings=["k >= n", ""], plugins={"a": "1.0"}, undefined={}))


@pytest.mark.parametrize(
    "overrides",
    [
        {"metrics": {"m": MAX_FLOAT + 1}},  # rounds down to the largest float: math.isfinite says it is finite
        {"metrics_std": {"m": -MAX_FLOAT - 1}},
        {"per_seed": {"m": [MAX_FLOAT + 1]}},
        {"metrics": {"m": 10**400}},
    ],
)
def test_an_integer_past_a_floats_range_is_refused_in_a_whole_test_too(overrides):
    field = next(iter(overrides))
    with pytest.raises(
        SchemaError, match=rf"field '{field}\.m(\[0\])?': an integer of \d+ digits, past a float's range"
    ):
        validate(record_dict(**overrides))


def test_the_largest_float_and_integer_are_numbers():
    validate(
        record_dict(metrics={"m": sys.float_info.max, "b": MAX_FLOAT, "c": -MAX_FLOAT}, per_seed={"m": [MAX_FLOAT]})
    )
