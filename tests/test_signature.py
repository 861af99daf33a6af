"""Signatures as structured data: formatted only at the end, byte-identical to the stored strings."""

from __future__ import annotations

import json

import pytest
from conftest import REPO

from harness.registry import get_registry
from harness.results import full_signature, task_signature
from harness.signature import ModelPart, Signature

GEMMA = {
    "name": "gemma-270m",
    "revision": "sha256:a5fd3b62230aa5ec+hf1",
    "args": {
        "template": "Translate from {src_name} to {tgt_name}.\n{src_name}: {source}\n{tgt_name}:",
        "target_prefix": " ",
        "score_eos": False,
        "dtype": "float32",
    },
    "distribution": None,
    "distribution_version": None,
    "code": None,
}
E5 = {
    "name": "e5-small",
    "revision": "sha256:ce27aec866eb32b9",
    "args": {"prefix": "query"},
    "distribution": None,
    "distribution_version": None,
    "code": None,
}
IKEA_ARGS = {
    "src": "en",
    "tgt": "de",
    "columns": "",
    "split": "test",
    "dataset": "ikea",
    "n": 1000,
    "k": 10,
    "ties": "expected",
}


@pytest.mark.parametrize(
    ("signature", "expected"),
    [
        # lines of the committed leaderboard (leaderboard/results/*/results.jsonl)
        (
            Signature.build(
                "commute_tc",
                1,
                {"lang": "fr", "ties": "wrong", "prefix_removal": False, "temperature": 1.0},
                {"loader": "commute", "revision": "sha256:698bf2945799a0aa", "size": 154},
                None,
            ).with_model(GEMMA),
            "commute_tc|lang:fr|prefix_removal:False|temperature:1.0|ties:wrong|items:154|data:commute@698bf2945799"
            "|model:gemma-270m@a5fd3b62230a#args:89537865|v:1",
        ),
        (
            Signature.build(
                "xlr",
                1,
                IKEA_ARGS,
                {"loader": "ikea", "revision": "sha256:c287ea99107a588e", "size": 367},
                list(range(25)),
            ).with_model(E5),
            "xlr|columns:|dataset:ikea|k:10|n:1000|split:test|src:en|tgt:de|ties:expected|items:367|seeds:25"
            "|data:ikea@c287ea99107a|model:e5-small@ce27aec866eb#args:b69cfdd2|v:1",
        ),
        # every part at once, as the formatter before Signature wrote it: limit among the arguments,
        # a seed list, an auxiliary model with arguments and code, a model with code and no revision
        (
            Signature.build(
                "backretrieval",
                3,
                {"k": 10, "src": "en", "dataset": "xling-shapes"},
                {"loader": "xling-shapes", "revision": "gen:0123456789abcdef", "size": 12},
                [3, 5],
                {
                    "image": {
                        "name": "efficientnet-lite0",
                        "revision": "sha256:91ac07f2d3e4aa",
                        "args": {"size": 224},
                        "distribution": "gt-efficientnet",
                        "distribution_version": "1.0",
                        "code": None,
                    }
                },
                limit=12,
            ).with_model({"name": "toy", "revision": None, "args": {}, "code": "sha256:abc"}),
            "backretrieval|dataset:xling-shapes|k:10|limit:12|src:en|items:12|seed_list:3+5|data:xling-shapes@gen:01234567"
            "|image:efficientnet-lite0@91ac07f2d3e4#args:455b1127#code:bba88029|model:toy@none#code:bfd1232f|v:3",
        ),
    ],
)
def test_pinned_signature_strings(signature, expected):
    assert str(signature) == expected
    head, _, version = expected.rsplit("|", 2)
    assert str(signature.task_part()) == f"{head}|{version}"
    assert (
        full_signature(
            signature.task_part(),
            {
                "name": signature.model.name,
                "revision": signature.model.revision,
                "args": dict(signature.model.args),
                "distribution": signature.model.code[0],
                "distribution_version": signature.model.code[1],
                "code": signature.model.code[2],
            },
        )
        == expected
    )


def test_every_committed_leaderboard_signature_is_rebuilt_from_its_record():
    """The formatter gives the stored bytes for every committed line: --resume and merging keep working."""
    registry = get_registry()
    lines = [
        json.loads(line)
        for path in sorted((REPO / "leaderboard" / "results").glob("*/results.jsonl"))
        for line in path.read_text().splitlines()
        if line.strip()
    ]
    assert len(lines) > 100
    for line in lines:
        uses_seeds = registry.load("task", line["task"]).uses_seeds
        signature = Signature.build(
            line["task"],
            line["task_version"],
            line["task_args"],
            line["dataset"],
            line["seeds"] if uses_seeds else None,
            limit=line["run"].get("limit"),
        )
        assert str(signature.task_part()) == line["task_signature"]
        assert str(signature.with_model(line["model"])) == line["signature"]


def test_limit_and_an_argument_order_do_not_depend_on_the_order_given():
    data = {"loader": "d", "revision": "r", "size": 2}
    one = Signature.build("t", 1, {"b": 1, "a": 2}, data, [0], limit=2)
    two = Signature.build("t", 1, {"a": 2, "b": 1}, data, [0], limit=2)
    assert one == two and str(one) == "t|a:2|b:1|limit:2|items:2|seeds:1|data:d@r|v:1"
    assert task_signature("t", 1, {"a": 2, "b": 1, "limit": 2}, data, [0]) == str(one)  # the former spelling


def test_model_parts():
    assert str(ModelPart.of("model", {"name": "m"})) == "model:m@none"
    assert (
        str(ModelPart.of("image", {"name": "m", "revision": "sha256:0123456789abcdef", "args": {}}))
        == "image:m@0123456789ab"
    )
    with_args = ModelPart.of("model", {"name": "m", "args": {"pooling": "cls"}})
    assert str(with_args).startswith("model:m@none#args:") and str(with_args) != str(
        ModelPart.of("model", {"name": "m", "args": {"pooling": "mean"}})
    )
