"""``samples.to_units``: per-unit arrays built from arrays, bit for bit what summing the sorted samples gives."""

from __future__ import annotations

import random
from collections import defaultdict

import numpy as np
import pytest

from harness.errors import HarnessError
from harness.results.samples import to_units
from harness.results.statistic import Statistic

MOMENTS = "moments:pairs,sx,sy,sxx,syy,sxy"


def reference(values, statistic):
    """The units as the sorted samples give them, summed in Python (the code before the array version)."""
    units = defaultdict(list)
    for key in sorted(values, key=lambda k: (k[1], str(k[0]))):
        units[key[1]].append(key)
    ids = sorted(units)
    if statistic.kind == "mean":
        sums = np.array([sum(sum(values[k]) for k in units[i]) for i in ids])
        return sums, np.array([len(units[i]) * len(statistic.fields) for i in ids], dtype=float)
    if statistic.kind == "moments":
        seeds = sorted({str(k[0]) for k in values})
        moments = np.zeros((len(ids), len(seeds), len(statistic.fields)))
        for row, i in enumerate(ids):
            for key in units[i]:
                moments[row, seeds.index(str(key[0]))] += values[key]
        return moments, np.zeros(len(ids))
    keys = [units[i][0] for i in ids]
    return np.array([values[k][0] for k in keys]), np.array([values[k][1] for k in keys])


def test_a_mean_unit_adds_its_samples_in_the_order_of_their_seeds_as_text():
    # seeds as text: "0" < "10" < "2": (-1e16 + 1.0) + 1e16 = 0.0; in numeric order it would be 1.0
    values = {(2, "b"): (1e16,), (10, "b"): (1.0,), (0, "b"): (-1e16,), (0, "a"): (0.5,), (2, "a"): (0.25,)}
    units = to_units(values, Statistic.parse("mean:hit"))
    assert units.values.tolist() == [0.75, 0.0] and units.reference.tolist() == [2.0, 3.0]


def test_a_mean_of_two_fields_adds_each_sample_left_to_right():
    values = {(0, "x"): (1e16, 1.0), (1, "x"): (-1e16, 0.0), (0, "y"): (2.0, 3.0)}
    units = to_units(values, Statistic.parse("mean:a,b"))
    assert units.values.tolist() == [0.0, 5.0] and units.reference.tolist() == [4.0, 2.0]


def test_moments_put_each_sample_in_its_seeds_column():
    values = {(1, "q"): (1.0, 2.0, 3.0, 4.0, 5.0, 6.0), (0, "p"): (1.0, -0.0, 0.5, 0.25, 0.0, 1.0)}
    units = to_units(values, Statistic.parse(MOMENTS))
    expected = np.zeros((2, 2, 6))
    expected[0, 0] = (1.0, 0.0, 0.5, 0.25, 0.0, 1.0)  # -0.0 stored as 0.0 + -0.0 = 0.0
    expected[1, 1] = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    assert units.values.tobytes() == expected.tobytes()


def test_per_id_statistics_need_one_sample_per_id():
    units = to_units({(None, "b"): (0.3, 1.0), (None, "a"): (0.7, 0.0)}, Statistic.parse("auc:score,label"))
    assert units.values.tolist() == [0.7, 0.3] and units.reference.tolist() == [0.0, 1.0]
    with pytest.raises(HarnessError, match="needs one sample per id"):
        to_units({(0, "a"): (1.0, 2.0), (1, "a"): (1.0, 2.0), (0, "b"): (0.0, 1.0)}, Statistic.parse("pearson:x,y"))
    with pytest.raises(HarnessError, match="needs 0/1 labels in 'label'"):
        to_units({(None, "a"): (1.0, 0.5), (None, "b"): (0.0, 1.0)}, Statistic.parse("auc:score,label"))


@pytest.mark.parametrize("text", ["mean:hit", "mean:a,b", MOMENTS, "spearman:a,b"])
def test_no_samples_no_units(text):
    assert len(to_units({}, Statistic.parse(text))) == 0


@pytest.mark.parametrize("text", ["mean:hit", "mean:a,b,c", MOMENTS, "pearson:a,b"])
def test_same_bits_as_the_sorted_python_sums(text):
    statistic = Statistic.parse(text)
    rng = random.Random(text)
    for _ in range(40):
        seeds = [None] if statistic.kind == "pearson" else rng.sample([None, 0, 1, 2, 9, 10, 11, 25], rng.randint(1, 6))
        values = {}
        for seed in seeds:
            for item in rng.sample(range(25), rng.randint(1, 25)):
                pool = (0.0, -0.0, 1.0, 0.1, 1e-17, 1e16, rng.random(), -rng.random() * 1e10)
                values[(seed, f"id{item}")] = tuple(rng.choice(pool) for _ in statistic.fields)
        shuffled = dict(rng.sample(list(values.items()), len(values)))
        units = to_units(shuffled, statistic)
        expected_values, expected_reference = reference(shuffled, statistic)
        assert units.values.tobytes() == expected_values.tobytes() and units.values.shape == expected_values.shape
        assert units.reference.tobytes() == expected_reference.tobytes()
