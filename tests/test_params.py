"""Typed parameters and the k=v syntax."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import HarnessError
from harness.params import Param, parse_kv, resolve_params

SPEC = {"k": Param(10, "cut-off"), "alpha": Param(0.5, "weight"), "lang": Param("fr", "language", choices=("fr", "de")),
        "clip": Param(True, "clip"), "path": Param(None, "a path", str)}


def test_defaults_and_conversion():
    assert resolve_params(SPEC, {}, "t") == {"k": 10, "alpha": 0.5, "lang": "fr", "clip": True, "path": None}
    got = resolve_params(SPEC, parse_kv("k=3,alpha=1,lang=de,clip=no,path=/x", "--task-args"), "t")
    assert got == {"k": 3, "alpha": 1.0, "lang": "de", "clip": False, "path": "/x"}


@pytest.mark.parametrize(
    ("given", "message"),
    [({"k": "3.5"}, "k='3.5' is not a valid int"), ({"clip": "maybe"}, "expected true or false"),
     ({"lang": "cs"}, "lang='cs' must be one of: fr, de"), ({"kk": "1"}, "did you mean 'k'")],
)
def test_bad_values(given, message):
    with pytest.raises(HarnessError, match=message):
        resolve_params(SPEC, given, "task 't'")


@pytest.mark.parametrize("text", ["a", "=1", "a=1,,b", "a=1,a=2"])
def test_malformed(text):
    if text == "a=1,,b":
        with pytest.raises(HarnessError, match="malformed --x 'b'"):
            parse_kv(text, "--x")
        return
    with pytest.raises(HarnessError, match="malformed --x"):
        parse_kv(text, "--x")


keys = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
values = st.from_regex(r"[A-Za-z0-9_./+:-]{0,10}", fullmatch=True)


@given(st.dictionaries(keys, values, max_size=6))
def test_kv_round_trip(mapping):
    text = ",".join(f"{k}={v}" for k, v in mapping.items())
    assert parse_kv(text, "--x") == mapping
