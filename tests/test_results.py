"""The results schema, atomic appends, and reading files with bad lines."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from harness.results.jsonl import append_json_line
from harness.results.records import ResultRecord, SchemaError, read_records, validate
from harness.results.signature import Signature


def record_dict(**overrides):
    data = {
        "task": "t",
        "task_version": 1,
        "task_args": {"k": 10},
        "main_metric": "m",
        "metrics": {"m": 0.5},
        "metrics_std": {"m": 0.0},
        "per_seed": {"m": [0.5]},
        "seeds": [0],
        "model": {"name": "x"},
        "dataset": {"size": 3},
        "run": {},
        "harness": {},
        "environment": {},
        "hardware": {},
        "started": "2026-01-01T00:00:00+00:00",
        "wall_seconds": 1.5,
    }
    data.update(overrides)
    task_signature = f"{data['task']}|k:10|items:3|data:d@r|v:{data['task_version']}"  # what the line says
    data.setdefault("task_signature", task_signature)
    data.setdefault("signature", task_signature.replace("|v:", "|model:x@none|v:"))
    return data


def test_valid_record_round_trips():
    record = ResultRecord.from_dict(record_dict())
    assert record.to_dict()["metrics"] == {"m": 0.5} and record.schema_version == 1


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"metrics": {"m": "high"}}, "field 'metrics.m': expected a finite number"),
        ({"metrics": {"m": float("inf")}}, "field 'metrics.m': expected a finite number"),
        ({"seeds": [0, "1"]}, "field 'seeds[1]': expected an integer"),
        ({"task_version": True}, "field 'task_version': expected an integer"),
        ({"bogus": 1}, "unknown field 'bogus'"),
        ({"schema_version": 99}, "newer than this harness reads"),
    ],
)
def test_schema_errors_name_the_field(overrides, message):
    with pytest.raises(SchemaError, match=message.replace("[", r"\[").replace("]", r"\]")):
        validate(record_dict(**overrides))


def test_missing_field_and_undefined_metric():
    data = record_dict()
    del data["task"]
    with pytest.raises(SchemaError, match="missing field 'task'"):
        validate(data)
    validate(record_dict(metrics={"m": None}))  # undefined metrics are null, allowed


def test_corrupt_lines_are_reported_and_the_rest_read(tmp_path):
    path = tmp_path / "results.jsonl"
    good = json.dumps(record_dict())
    path.write_text(f"{good}\n{{not json\n{json.dumps(record_dict(metrics={'m': 'x'}))}\n\n{good}\n")
    before = path.read_bytes()
    records, problems = read_records(path)
    assert len(records) == 2
    assert [(p.line, p.reason.split(":")[0]) for p in problems] == [
        (2, "not valid JSON"),
        (3, "does not match the results schema"),
    ]
    assert str(problems[0]).startswith(f"{path}, line 2: ")
    assert path.read_bytes() == before  # nothing rewritten


def test_append_after_a_torn_line_moves_it_aside_and_keeps_the_new_line_whole(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(record_dict()) + "\n" + '{"task": "tor')
    assert "torn last line" in read_records(path)[1][0].reason
    append_json_line(path, record_dict(task="after"))
    records, problems = read_records(path)
    assert [r.task for r in records] == ["t", "after"] and problems == []
    assert (tmp_path / "r.jsonl.torn").read_text() == '{"task": "tor\n'


def test_append_after_a_complete_line_without_newline_keeps_it(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(record_dict()))
    append_json_line(path, record_dict(task="after"))
    assert [r.task for r in read_records(path)[0]] == ["t", "after"] and not (tmp_path / "r.jsonl.torn").exists()


def test_kill_minus_nine_tears_at_most_the_last_line_and_the_next_append_repairs_it(tmp_path):
    path = tmp_path / "r.jsonl"
    (tmp_path / "big.json").write_text(json.dumps(record_dict(extra={"blob": "x" * 200_000})))
    code = (
        "import json, sys; from harness.results.jsonl import append_json_line\n"
        f"obj = json.load(open({str(tmp_path / 'big.json')!r}))\n"
        f"append_json_line({str(path)!r}, obj)\n"
        "print('ready', flush=True)\n"  # one whole line is written, however slow the machine
        f"while True: append_json_line({str(path)!r}, obj)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert process.stdout.readline().strip() == b"ready"
    time.sleep(0.2)  # the kill lands in a later append
    process.send_signal(signal.SIGKILL)
    process.wait()
    records, problems = read_records(path)
    assert len(records) > 0 and all(p.line == len(records) + 1 and "torn last line" in p.reason for p in problems)
    append_json_line(path, record_dict(task="after"))
    records_after, problems_after = read_records(path)
    assert problems_after == [] and records_after[-1].task == "after" and len(records_after) == len(records) + 1
    assert path.read_bytes().endswith(b"\n")


def task_signature(*parts):
    return str(Signature.build(*parts))


def full_signature(text, model):
    return str(Signature.parse(text).with_model(model))


def test_signatures():
    sig = task_signature(
        "xlr",
        2,
        {"k": 10, "src": "en"},
        {"loader": "ikea", "size": 1000, "revision": "sha256:abcdef0123456789"},
        list(range(25)),
    )
    assert sig == "xlr|k:10|src:en|items:1000|seeds:25|data:ikea@abcdef012345|v:2"
    assert (
        task_signature("t", 1, {}, {"loader": "d", "size": 5, "revision": "r"}, [3, 4])
        == "t|items:5|seed_list:3+4|data:d@r|v:1"
    )
    assert task_signature("t", 1, {}, {"loader": "d", "size": 5, "revision": "r"}, None) == "t|items:5|data:d@r|v:1"
    full = full_signature(sig, {"name": "labse", "revision": "0123456789abcdef0", "args": {}})
    assert full == "xlr|k:10|src:en|items:1000|seeds:25|data:ikea@abcdef012345|model:labse@0123456789ab|v:2"
    with_args = full_signature(sig, {"name": "labse", "revision": "r", "args": {"pooling": "cls"}})
    other_args = full_signature(sig, {"name": "labse", "revision": "r", "args": {"pooling": "mean"}})
    assert "#args:" in with_args and with_args != other_args


def test_auxiliary_models_enter_the_task_signature():
    data = {"loader": "d", "size": 5, "revision": "r"}
    image = {"name": "resnet", "revision": "sha256:0123456789abcdef"}
    sig = task_signature("bkr", 1, {}, data, [0], {"image": image})
    assert sig == "bkr|items:5|seeds:1|data:d@r|image:resnet@0123456789ab|v:1"
    assert task_signature("bkr", 1, {}, data, [0], {"image": {**image, "args": {"pooling": "cls"}}}) != sig
    assert task_signature("bkr", 1, {}, data, [0], {}) == "bkr|items:5|seeds:1|data:d@r|v:1"


def test_the_adapter_code_enters_the_model_part_of_signatures():
    sig = "xlr|items:5|data:d@r|v:1"
    model = {"name": "labse", "revision": "r", "args": {}}
    code = {"distribution": "xling-harness", "distribution_version": "0.1.0", "code": "sha256:00112233"}
    with_code = full_signature(sig, {**model, **code})
    assert with_code.startswith("xlr|items:5|data:d@r|model:labse@r#code:") and with_code.endswith("|v:1")
    assert len(with_code.split("#code:")[1].split("|")[0]) == 8
    assert full_signature(sig, {**model, **code, "code": "sha256:44556677"}) != with_code  # edited source
    assert full_signature(sig, {**model, **code, "distribution_version": "0.2.0"}) != with_code  # new release
    assert (
        full_signature(sig, {**model, "distribution": None, "distribution_version": None, "code": None})
        == "xlr|items:5|data:d@r|model:labse@r|v:1"
    )  # lines written before the code was recorded keep their signature
