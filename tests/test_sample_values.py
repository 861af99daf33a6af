"""``sample_values`` reads a column at a time and falls back to a row-by-row check: both give the same values,
and a bad row is named exactly as the row-by-row reader names it (property test over mixed good and bad rows)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import HarnessError
from harness.results.samples import _sample_values_checked, sample_values

GOOD = st.one_of(st.integers(-(2**60), 2**60), st.floats(allow_nan=False, allow_infinity=False))
ANY = st.one_of(
    GOOD, st.booleans(), st.none(), st.text(max_size=3), st.just(float("nan")), st.just(float("inf")), st.just(10**400)
)
ROW = st.fixed_dictionaries(
    {"id": st.sampled_from("abcdef"), "seed": st.sampled_from([0, 1, None])}, optional={"x": ANY, "y": GOOD}
)


def outcome(read, rows, fields):
    try:
        return read(list(enumerate(rows)), fields, "sample", "")
    except HarnessError as exc:
        return str(exc)


@given(st.lists(ROW, max_size=8), st.sampled_from([("x",), ("x", "y"), ()]))
def test_the_column_reader_agrees_with_the_row_reader(rows, fields):
    expected = outcome(_sample_values_checked, rows, fields)
    found = outcome(sample_values, rows, fields)
    assert found == expected
    if isinstance(found, dict):
        assert all(type(v) is float for values in found.values() for v in values)


@pytest.mark.parametrize(
    ("rows", "error"),
    [
        ([{"id": "a", "hit": 1}, {"id": "a", "hit": 0.5}], "sample 1: sample 'a' appears twice"),
        (
            [{"id": "a", "hit": 1}, {"id": "b", "hit": True}],
            "sample 1: field 'hit': expected a finite number, got True",
        ),
        ([{"id": "a", "hit": 1}, {"id": "b"}], "sample 1: no field 'hit'"),
        (
            [{"id": "a", "hit": 10**400}],
            "sample 0: field 'hit': expected a finite number, got " + "1" + "0" * 36 + "...",
        ),
        ([{"hit": 1.0}], "sample 0: a sample without an 'id'"),
    ],
)
def test_a_bad_row_is_named(rows, error):
    with pytest.raises(HarnessError) as caught:
        sample_values(enumerate(rows), ("hit",), "sample")
    assert str(caught.value) == error


def test_values_are_floats_by_seed_and_id():
    rows = [{"seed": 0, "id": 7, "hit": 1}, {"seed": 1, "id": 7, "hit": 0.25}, {"id": "b", "hit": -0.0}]
    assert sample_values(enumerate(rows), ("hit",), "sample") == {
        (0, "7"): (1.0,),
        (1, "7"): (0.25,),
        (None, "b"): (-0.0,),
    }
    assert sample_values(enumerate([]), ("hit",), "sample") == {}


def test_a_bad_row_before_a_line_the_reader_refuses_is_named_first():
    """The rows are read whole before the columns are checked; a row without an id that comes before a line the
    reader refuses is still the error, as when the rows were checked one by one while reading."""

    def rows():
        yield 0, {"id": "a", "hit": 1.0}
        yield 1, {"hit": 0.0}
        raise HarnessError("sample 2: not JSON")

    with pytest.raises(HarnessError, match="sample 1: a sample without an 'id'"):
        sample_values(rows(), ("hit",), "sample")

    def later():
        yield 0, {"id": "a", "hit": 1.0}
        raise HarnessError("sample 1: not JSON")

    with pytest.raises(HarnessError, match="sample 1: not JSON"):
        sample_values(later(), ("hit",), "sample")
