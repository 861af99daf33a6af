"""Issue 23, point 8 (calibration files): a file missing a field ``apply`` reads, or holding NaN
parameters, is refused with exit 2 naming the file and the field (was KeyError, or `nan [nan, nan]`, exit 0)."""

from __future__ import annotations

import json

import pytest
from retrieval.test_calibrate import MODELS, records, write

import harness.plugins.registry
from harness.cli import main
from harness_tasks.retrieval.analysis import calibrate


@pytest.fixture
def fitted(tmp_path, monkeypatch) -> dict:
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", None)  # the installed plugins: calibrate, retrieval
    return calibrate.calibrate(records(MODELS), method="isotonic")


def _without(data: dict, path: str) -> dict:
    copy = json.loads(json.dumps(data))
    *parents, last = path.split(".")
    target = copy
    for name in parents:
        target = target[name]
    del target[last]
    return copy


def _with(data: dict, path: str, value) -> dict:
    copy = json.loads(json.dumps(data))
    *parents, last = path.split(".")
    target = copy
    for name in parents:
        target = target[name]
    target[last] = value
    return copy


BROKEN = {
    "scope.k missing": (lambda c: _without(c, "scope.k"), "'scope.k'"),
    "scope.n_used missing": (lambda c: _without(c, "scope.n_used"), "'scope.n_used'"),
    "NaN knots": (lambda c: _with(c, "map.params.y", [float("nan")] * len(c["map"]["params"]["y"])), "'map.params.y'"),
    "knots of two lengths": (lambda c: _with(c, "map.params.x", [0.1]), "'map.params'"),
    "NaN confidence": (lambda c: _with(c, "confidence", float("nan")), "'confidence'"),
    "string residual": (lambda c: _with(c, "residuals", ["0.1"]), "'residuals'"),
    "bkr_range reversed": (lambda c: _with(c, "scope.bkr_range", [0.5, 0.1]), "'scope.bkr_range'"),
}


@pytest.mark.parametrize("kind", BROKEN)
def test_a_broken_calibration_file_is_refused_naming_the_field(kind, fitted, tmp_path, capsys):
    change, field = BROKEN[kind]
    saved = tmp_path / "calibration.json"
    saved.write_text(json.dumps(change(fitted)), encoding="utf-8")  # json.dumps writes NaN as it is
    new = [r for r in records({"z": (0.0, 0.2)}, pairs=(("en", "ja"),)) if r.task == "backretrieval"]
    capsys.readouterr()
    code = main(["calibrate", "apply", str(saved), write(tmp_path / "other", new)])
    out, err = capsys.readouterr()
    assert code == 2 and f"calibration file {str(saved)!r}" in err and field in err, err
    assert "nan" not in out
