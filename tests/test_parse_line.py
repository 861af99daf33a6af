"""``parse_line`` reads most lines with orjson and still refuses what the harness refuses: a repeated key anywhere
(also behind colons in strings or a ``\\u`` escape), NaN; an integer past 64 bits stays an integer."""

from __future__ import annotations

import json
import random

import pytest

import harness.results.jsonl as jsonl
from harness.results.jsonl import LineError, parse_line

REFUSED = {
    b'{"task": "xlr", "task": "corr"}': "repeated key 'task'",
    b'{"model": {"name": "a:b", "args": {"k": 1, "k": 1}}, "t": "12:00"}': "repeated key 'k'",
    b'{"a": "colon \\u003a here", "a": 1}': "repeated key 'a'",  # the escape stands for the lost key's colon
    b'[{"x": 1}, {"x": 2, "x": 2}]': "repeated key 'x'",
    b'{"value": NaN}': "NaN is not a number JSON allows (the harness never writes it)",
    b'{"value": -Infinity}': "-Infinity is not a number JSON allows (the harness never writes it)",
}


@pytest.mark.parametrize("raw", REFUSED)
def test_what_the_harness_refuses_is_refused_with_its_reason(raw):
    with pytest.raises(LineError) as caught:
        parse_line(raw)
    assert str(caught.value) == REFUSED[raw]


def test_invalid_json_says_where():
    with pytest.raises(LineError, match=r"Expecting ',' delimiter: line 1 column 10 \(char 9\)"):
        parse_line(b'{"a": [1 2]}')


@pytest.mark.parametrize(
    "raw",
    [
        b'{"started": "2026-01-01T00:00:00+00:00", "signature": "xlr|k:10|model:m@r|v:1", "extra": {}}\n',
        b'{"seeds": [0, 1, 2], "per_seed": {"r": [0.1, 1e-05, 1e+16]}, "n": null, "ok": true}',
        '{"name": "é ü ∂", "quote": "a \\" b", "escaped": "tab\\there", "slash": "a\\\\u"}'.encode(),
        b'{"huge": 123456789012345678901234567890, "big": 18446744073709551616, "i64": -9223372036854775808}',
        b'{"deep": [[[[[[[[[[1]]]]]]]]]], "empty": {"": 0}}',
        b'{"small": 0.0014565038584660739, "ones": 1.0000000000000000000000001, "e": 1.5e-0000000000000000005}',
        b'{"min": 2.2250738585072011e-308, "half": 0.50000000000000011102230246251565404236316680908203125}',
        b'{"text": "a1234567890123456789", "i": 1234567890123456789.5, "f": -0.1234567890123456789e-7}',
        b'{"f": 0.12345678901234567890123, "then": 12345678901234567890}',  # a long fraction, then a long integer
        b"12345678901234567890",
    ],
)
def test_a_valid_line_reads_as_json_loads_reads_it_types_included(raw):
    parsed = parse_line(raw)
    expected = json.loads(raw)
    assert parsed == expected and json.dumps(parsed) == json.dumps(expected)  # 1 and 1.0 written apart


def test_an_integer_past_64_bits_stays_exact():
    assert parse_line(b'{"n": 123456789012345678901234567890}') == {"n": 123456789012345678901234567890}
    assert type(parse_line(b'{"n": 12345678901234567890}')["n"]) is int
    assert parse_line(b'{"n": -9999999999999999999}') == {"n": -9999999999999999999}  # 19 digits below -2**63


def test_numbers_with_long_fractions_read_as_json_loads_reads_them():
    generator = random.Random(7)
    for _ in range(2000):
        digits = "".join(generator.choice("0123456789") for _ in range(generator.randint(17, 30)))
        raw = f'{{"v": [0.{digits}, -{generator.randint(0, 9)}.{digits}, 0.{digits}e-{generator.randint(1, 300)}]}}'
        assert repr(parse_line(raw.encode())) == repr(json.loads(raw)), raw


def test_only_19_digits_outside_a_fraction_send_a_line_to_json_loads(monkeypatch):
    strict = []
    monkeypatch.setattr(jsonl, "_parse_strictly", lambda raw: strict.append(raw) or json.loads(raw))
    lines = [
        b'{"v": 0.0014565038584660739, "w": [1.1234567890123456789012, 0.5]}',  # fractions: orjson
        b'{"v": 0.5, "n": 12345678901234567890}',
        b'{"v": 1.5e-1234567890123456789}',  # an exponent's digits
        b'{"t": "x1234567890123456789"}',  # text's
        b'{"v": 0.1234567890123456789, "n": -1234567890123456789}',
    ]
    for raw in lines:
        parse_line(raw)
    assert strict == lines[1:]
