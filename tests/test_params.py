"""Typed parameters and the k=v syntax."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import HarnessError
from harness.params import Param, parse_kv, resolve_params

SPEC = {
    "k": Param(10, "cut-off"),
    "alpha": Param(0.5, "weight"),
    "lang": Param("fr", "language", choices=("fr", "de")),
    "clip": Param(True, "clip"),
    "path": Param(None, "a path", str),
}


def test_defaults_and_conversion():
    assert resolve_params(SPEC, {}, "t") == {"k": 10, "alpha": 0.5, "lang": "fr", "clip": True, "path": None}
    got = resolve_params(SPEC, parse_kv("k=3,alpha=1,lang=de,clip=no,path=/x", "--task-args"), "t")
    assert got == {"k": 3, "alpha": 1.0, "lang": "de", "clip": False, "path": "/x"}


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"k": "3.5"}, "k='3.5' is not a valid int"),
        ({"clip": "maybe"}, "expected true or false"),
        ({"lang": "cs"}, "lang='cs' must be one of: fr, de"),
        ({"kk": "1"}, "did you mean 'k'"),
    ],
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


BOUNDED = {
    "k": Param(10, "cut-off", min=1),
    "alpha": Param(0.5, "weight", min=0.0, max=1.0),
    "cap": Param(None, "optional cap", int, min=2, max=5),
    "t": Param(1.0, "temperature", above=0.0),
    "p": Param(0.5, "share", above=0.0, below=1.0),
}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"k": "1"}, {"k": 1}),  # the lower edge is allowed
        ({"alpha": "0"}, {"alpha": 0.0}),
        ({"alpha": 1}, {"alpha": 1.0}),  # the upper edge too; an int becomes a float
        ({"cap": "5", "k": 10**6}, {"k": 10**6, "cap": 5}),  # no max: no upper limit
        ({"cap": None}, {"cap": None}),  # None is never out of bounds
        ({"t": "1e-9"}, {"t": 1e-9}),  # just above an exclusive bound
        ({"p": "0.999"}, {"p": 0.999}),
    ],
)
def test_bounds_accept_values_inside(given, expected):
    defaults = {"k": 10, "alpha": 0.5, "cap": None, "t": 1.0, "p": 0.5}
    assert resolve_params(BOUNDED, given, "task 't'") == {**defaults, **expected}


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"k": "0"}, "task 't': argument k=0 must be at least 1"),
        ({"alpha": "-0.001"}, "task 't': argument alpha=-0.001 must be at least 0.0"),
        ({"alpha": "1.0001"}, "task 't': argument alpha=1.0001 must be at most 1.0"),
        ({"cap": "1"}, "task 't': argument cap=1 must be at least 2"),
        ({"cap": 6}, "task 't': argument cap=6 must be at most 5"),
        ({"t": "0"}, "task 't': argument t=0.0 must be greater than 0.0"),  # exclusive: the edge itself fails
        ({"t": -1}, "task 't': argument t=-1.0 must be greater than 0.0"),
        ({"p": "1"}, "task 't': argument p=1.0 must be less than 1.0"),
        ({"t": "nan"}, "task 't': argument t=nan must be a number"),  # NaN compares false to every bound
        ({"alpha": float("nan")}, "task 't': argument alpha=nan must be a number"),
    ],
)
def test_bounds_reject_outside_values(given, message):
    with pytest.raises(HarnessError) as info:
        resolve_params(BOUNDED, given, "task 't'")
    assert str(info.value) == message


def test_model_arguments_are_bounded_by_their_params():
    """The adapters' bounds live in their Params (the former ``minimums``): one message, before any weights load."""
    from harness_models.packaged.baselines import DegradedEncoder, RandomEncoder
    from harness_models.token_embedders.lexical import LexicalNgramEmbedder

    with pytest.raises(HarnessError, match=r"^model 'r': argument dim=0 must be at least 1$"):
        RandomEncoder("r", {"dim": "0"})
    assert RandomEncoder("r", {"dim": "1"}).args["dim"] == 1
    with pytest.raises(HarnessError, match=r"^model 'c': argument ngram_max=0 must be at least 1$"):
        LexicalNgramEmbedder("c", {"ngram_max": 0})
    with pytest.raises(HarnessError, match=r"^model 'n': argument noise=-0.5 must be at least 0.0$"):
        DegradedEncoder("n", {"noise": "-0.5"})
