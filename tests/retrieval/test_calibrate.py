"""``harness calibrate``: the maps, their cross-validation and intervals by hand, the refusals, and the JSON round trip."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from retrieval.test_retrieval_meta import record as meta_record
from scipy.special import expit

from harness.cli import main
from harness.errors import HarnessError
from harness.results.records import RESULTS_FILE
from harness_tasks.retrieval.analysis import calibrate, calibrate_fit


def test_isotonic_pools_adjacent_violators_by_hand():
    # y = .2 .6 .4 .8: .6 > .4 violates, both pooled to .5 -> .2 .5 .5 .8; linear between knots, constant outside
    mapping = calibrate_fit.fit([0.1, 0.2, 0.3, 0.4], [0.2, 0.6, 0.4, 0.8], "isotonic")
    assert mapping.params["y"] == pytest.approx([0.2, 0.5, 0.5, 0.8])
    assert mapping([0.05, 0.1, 0.15, 0.25, 0.35, 0.4, 0.9]) == pytest.approx([0.2, 0.2, 0.35, 0.5, 0.65, 0.8, 0.8])


def test_isotonic_averages_duplicate_inputs():
    mapping = calibrate_fit.fit([0.1, 0.1, 0.2], [0.2, 0.4, 0.9], "isotonic")
    assert mapping([0.1, 0.15]) == pytest.approx([0.3, 0.6])


def test_logistic_recovers_an_exact_curve_and_stays_monotone():
    z = np.array([-2.0, -1.0, 0.0, 1.0])
    mapping = calibrate_fit.fit(expit(z), expit(1 + 2 * z), "logistic")
    assert mapping.params["ab"] == pytest.approx([1.0, 2.0], abs=1e-4)
    # decreasing data: the slope is held at 0, and a = logit(mean y) = logit(.5) = 0
    flat = calibrate_fit.fit(expit(np.array([-1.0, 1.0])), expit(np.array([1.0, -1.0])), "logistic")
    assert flat.params["ab"] == pytest.approx([0.0, 0.0], abs=1e-5)


def test_out_of_fold_predictions_and_errors_by_hand():
    # group A = (.1, .1), (.2, .3); group B = (.3, .5), (.4, .7); isotonic is constant outside its range
    predicted = calibrate_fit.out_of_fold([0.1, 0.2, 0.3, 0.4], [0.1, 0.3, 0.5, 0.7], ["A", "A", "B", "B"], "isotonic")
    assert predicted == pytest.approx([0.5, 0.5, 0.3, 0.3])
    errors = calibrate_fit.errors(predicted, [0.1, 0.3, 0.5, 0.7])
    assert errors == {
        "mae": pytest.approx(0.3),
        "rmse": pytest.approx(math.sqrt(0.1)),
        "max": pytest.approx(0.4),
        "points": 4,
    }


def test_interval_adds_residuals_on_the_logit_scale():
    identity = calibrate_fit.MonotoneMap("logistic", {"ab": [0.0, 1.0]})  # sigmoid(logit(x)) = x
    estimate, low, high = calibrate_fit.interval(identity, 0.5, 0.0, [-1.0, 0.0, 1.0], confidence=0.5)
    # quartiles of (-1, 0, 1), linear: -0.5 and 0.5
    assert (estimate, low, high) == pytest.approx((0.5, expit(-0.5), expit(0.5)))
    _, wider_low, wider_high = calibrate_fit.interval(identity, 0.5, 0.1, [-1.0, 0.0, 1.0], confidence=0.5)
    assert wider_low < low and wider_high > high


def records(
    models: dict[str, tuple[float, float]],
    *,
    pairs=(("en", "de"), ("de", "en"), ("en", "fr")),
    k: int = 10,
    n_used: int = 180,
) -> list:
    """xlr and backretrieval records: per model (xlr, bkr), shifted by 0.01 per direction; bkr over two seeds +- 0.01."""
    found = []
    for index, (src, tgt) in enumerate(pairs):
        args = {"src": src, "tgt": tgt, "k": k}
        for model, (xlr, bkr) in models.items():
            shift = 0.01 * index
            x = meta_record("xlr", model, [xlr + shift], args=args, revision=f"{src}{tgt}")
            b = meta_record(
                "backretrieval",
                model,
                [bkr + shift - 0.01, bkr + shift + 0.01],
                args=args,
                revision=f"{src}{tgt}",
                seeds=[0, 1],
            )
            found += [
                dataclasses.replace(
                    x, seeds=[0, 1], per_seed={"recall@k": 2 * x.per_seed["recall@k"]}, extra={"n_used": 2 * n_used}
                ),
                dataclasses.replace(
                    b, metrics_std={"recall@k": 0.01 * math.sqrt(2)}, extra={**b.extra, "n_used": n_used}
                ),
            ]
    return found


MODELS = {"a": (0.1, 0.05), "b": (0.4, 0.1), "c": (0.7, 0.2), "d": (0.9, 0.3)}


def test_points_groups_and_validation():
    result = calibrate.calibrate(records(MODELS))
    points = result["provenance"]["points"]
    assert len(points) == 12 and {p["direction"] for p in points} == {"en-de", "de-en", "en-fr"}
    first = calibrate.Point(**points[0])
    assert first.pair == "de-en" and first.se == pytest.approx(0.01)  # std .01 sqrt 2 over 2 seeds
    assert set(result["validation"]["isotonic"]) == {"model", "pair"}
    # leave-one-pair-out: de-en (both directions) and en-fr are the two groups
    assert result["validation"]["isotonic"]["pair"]["points"] == 12
    assert result["scope"] == {**result["scope"], "k": 10, "n_used": {"backretrieval": [180, 180], "xlr": [360, 360]}}
    chosen = result["method"]
    worst = max(result["validation"][m][s]["rmse"] for m in (chosen,) for s in ("model", "pair"))
    other = "logistic" if chosen == "isotonic" else "isotonic"
    assert worst <= max(result["validation"][other][s]["rmse"] for s in ("model", "pair"))


def test_refuses_different_k_or_candidate_pools():
    mixed = records(MODELS) + records({"e": (0.5, 0.15)}, pairs=(("fr", "en"),), k=5)
    with pytest.raises(HarnessError, match="differ in k"):
        calibrate.calibrate(mixed)
    with pytest.raises(HarnessError, match="n_used from 100 to 180"):
        calibrate.calibrate(records(MODELS) + records({"e": (0.5, 0.15)}, pairs=(("fr", "en"),), n_used=100))
    no_pool = [dataclasses.replace(r, extra={}) if r.task == "xlr" else r for r in records(MODELS)]
    with pytest.raises(HarnessError, match="a de-en: the results hold no n_used"):
        calibrate.calibrate(no_pool)
    with pytest.raises(HarnessError, match="at least 3 models"):
        calibrate.calibrate(records({"a": (0.1, 0.05), "b": (0.4, 0.1)}))


def ranked(found: list, retrieval: str, tasks=("xlr", "backretrieval"), csls_k: int = 10) -> list:
    """The records of ``tasks`` with their texts ranked by ``retrieval`` (the task arguments retrieval and csls_k)."""
    return [
        dataclasses.replace(r, task_args={**r.task_args, "retrieval": retrieval, "csls_k": csls_k})
        if r.task in tasks
        else r
        for r in found
    ]


def test_refuses_a_mix_of_cosine_and_csls_results_naming_the_model_and_both_values():
    # de-en and en-fr ranked by cosine (the default, also when a record predates the argument), fr-en by CSLS
    mixed = records(MODELS) + ranked(records({"e": (0.5, 0.15)}, pairs=(("fr", "en"),)), "csls")
    with pytest.raises(
        HarnessError,
        match=r"differ in retrieval: 'cosine' \(model 'a', en-de\) vs 'csls \(csls_k=10\)' \(model 'e', fr-en\)",
    ):
        calibrate.calibrate(mixed)
    # CSLS with two neighbourhoods is two rankings too
    neighbourhoods = ranked(records(MODELS), "csls") + ranked(
        records({"e": (0.5, 0.15)}, pairs=(("fr", "en"),)), "csls", csls_k=5
    )
    with pytest.raises(HarnessError, match=r"'csls \(csls_k=10\)' .* vs 'csls \(csls_k=5\)'"):
        calibrate.calibrate(neighbourhoods)
    # every xlr by CSLS, every backretrieval by cosine: each task is consistent, the points are not
    with pytest.raises(HarnessError, match=r"different retrieval \('csls \(csls_k=10\)' vs 'cosine'\)"):
        calibrate.calibrate(ranked(records(MODELS), "csls", tasks=("xlr",)))


def test_the_ranking_is_saved_printed_and_enforced_by_apply(tmp_path, capsys):
    cosine = calibrate.calibrate(records(MODELS))
    csls = calibrate.calibrate(ranked(records(MODELS), "csls"))
    assert cosine["scope"]["retrieval"] == "cosine" and csls["scope"]["retrieval"] == "csls (csls_k=10)"
    assert "k = 10, retrieval csls (csls_k=10), BkR n_used 180-180" in calibrate.format_validation(csls)
    new = next(r for r in records({"z": (0.0, 0.2)}, pairs=(("en", "ja"),)) if r.task == "backretrieval")
    with pytest.raises(
        HarnessError,
        match=r"z en-ja: backretrieval retrieval = 'csls \(csls_k=10\)', but the calibration is for retrieval = 'cosine'",
    ):
        calibrate.estimate(cosine, ranked([new], "csls")[0])
    with pytest.raises(HarnessError, match="retrieval = 'cosine', but the calibration is for retrieval = 'csls"):
        calibrate.estimate(csls, new)
    assert calibrate.format_estimate(calibrate.estimate(csls, ranked([new], "csls")[0]), 10, 0.95).endswith(
        "(95%, csls (csls_k=10))"
    )
    # through the CLI: two files, one of each ranking; the refusal names the file of each record
    cosine_file = write(tmp_path / "cosine", records(MODELS))
    csls_file = write(tmp_path / "csls", ranked(records({"e": (0.5, 0.15)}, pairs=(("fr", "en"),)), "csls"))
    assert main(["calibrate", "fit", cosine_file, csls_file, "--output", str(tmp_path / "c.json")]) == 2
    error = capsys.readouterr().err
    assert (
        f"'cosine' (model 'a', en-de, in {cosine_file}) vs 'csls (csls_k=10)' (model 'e', fr-en, in {csls_file})"
        in error
    )
    assert not (tmp_path / "c.json").exists()
    old = tmp_path / "old.json"
    old.write_text(json.dumps({**cosine, "format": 1}), encoding="utf-8")
    with pytest.raises(HarnessError, match=r"format 1; .* records the ranking, cosine or csls"):
        calibrate.load(str(old))


def write(folder, found) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RESULTS_FILE).write_text("".join(json.dumps(r.to_dict()) + "\n" for r in found), encoding="utf-8")
    return str(folder)


def test_fit_saves_and_apply_estimates_through_the_cli(tmp_path, capsys):
    saved = tmp_path / "calibration.json"
    assert (
        main(
            [
                "calibrate",
                "fit",
                write(tmp_path / "parallel", records(MODELS)),
                "--method",
                "isotonic",
                "--output",
                str(saved),
                "--plot",
                str(tmp_path / "map.png"),
            ]
        )
        == 0
    )
    assert "chosen: isotonic" in capsys.readouterr().out and (tmp_path / "map.png").stat().st_size > 0
    stored = calibrate.load(str(saved))
    assert stored["provenance"]["results"][0]["hash"].startswith("sha256:")
    # a new model, bkr 0.2 + 0.01 on two seeds: its mean .21 lies between the de-en knots; the estimate is the map's value
    new = [r for r in records({"z": (0.0, 0.2)}, pairs=(("en", "ja"),)) if r.task == "backretrieval"]
    mapping = calibrate_fit.MonotoneMap("isotonic", stored["map"]["params"])
    assert main(["calibrate", "apply", str(saved), write(tmp_path / "other", new)]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"z en-ja: BkR R@10 0.200 (2 seeds) -> estimated XLR R@10 {float(mapping(0.2)):.2f} [")
    assert line.endswith("(95%, cosine)")


def test_apply_refuses_another_k_or_pool_and_a_broken_file(tmp_path):
    calibration = calibrate.calibrate(records(MODELS))
    other_k = next(r for r in records({"z": (0.0, 0.2)}, k=5) if r.task == "backretrieval")
    with pytest.raises(HarnessError, match="k = 5, but the calibration is for k = 10"):
        calibrate.estimate(calibration, other_k)
    big_pool = next(r for r in records({"z": (0.0, 0.2)}, n_used=1000) if r.task == "backretrieval")
    with pytest.raises(HarnessError, match="n_used = 1000"):
        calibrate.estimate(calibration, big_pool)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"format": 1, "method": "isotonic"}), encoding="utf-8")
    with pytest.raises(HarnessError, match="has no field 'map'"):
        calibrate.load(str(broken))


def test_one_seed_borrows_the_calibrations_spread_and_warns():
    calibration = calibrate.calibrate(records(MODELS), method="logistic")
    single = next(r for r in records({"z": (0.0, 0.25)}) if r.task == "backretrieval")
    single = dataclasses.replace(single, per_seed={"recall@k": [0.25]}, seeds=[0], metrics={"recall@k": 0.25})
    result = calibrate.estimate(calibration, single)
    assert calibration["scope"]["median_bkr_std"] == pytest.approx(0.01 * math.sqrt(2))
    mapping = calibrate_fit.MonotoneMap("logistic", calibration["map"]["params"])
    expected = calibrate_fit.interval(mapping, 0.25, 0.01 * math.sqrt(2), calibration["residuals"])
    assert (result["xlr"], result["low"], result["high"]) == pytest.approx(expected)
    assert result["warnings"] == ["one seed: the calibration's median std over seeds stands in for this result's"]
    outside = calibrate.estimate(calibration, dataclasses.replace(single, metrics={"recall@k": 0.9}))
    assert "outside the calibrated range 0.050-0.320" in outside["warnings"][0]


def test_three_clean_models_on_one_direction_fit_with_coverage_not_checkable(tmp_path, capsys):
    # issue 38.7: an IndexError in np.quantile on the empty residuals of a two-model rest
    three = {"a": (0.1, 0.05), "b": (0.4, 0.1), "c": (0.7, 0.2)}
    saved = tmp_path / "c.json"
    assert (
        main(["calibrate", "fit", write(tmp_path / "r", records(three, pairs=(("en", "de"),))), "--output", str(saved)])
        == 0
    )
    out = capsys.readouterr().out
    assert "fitted on 3 points (3 models)" in out and "pair        only one pair" in out
    stored = json.loads(saved.read_text(), parse_constant=lambda name: pytest.fail(f"{name} in the calibration"))
    for scheme in stored["validation"].values():
        # each model held out leaves two, whose own out-of-fold predictions need a third: no interval to check
        assert scheme["model"]["coverage"] == {"inside": 0, "points": 0, "share": None}
    assert [line.split()[-1] for line in out.splitlines() if " model " in line] == ["n/a", "n/a"]
