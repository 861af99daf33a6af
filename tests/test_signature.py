"""Signatures as structured data: formatted only at the end, byte-identical to the stored strings."""

from __future__ import annotations

import json

import pytest
from conftest import REPO
from hypothesis import given
from hypothesis import strategies as st

from harness.plugins.registry import get_registry
from harness.results.signature import ModelPart, Signature, SignatureError

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
    task_text = expected.replace(f"|{signature.model}|", "|")
    assert str(signature.task_part()) == task_text
    assert Signature.parse(expected) == signature
    assert Signature.parse(task_text) == signature.task_part()


def test_every_committed_leaderboard_signature_is_rebuilt_from_its_record():
    """The formatter gives the stored bytes for every committed line (--resume and merging keep working), and
    the parser reads them back into the signature built from the record."""
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
        g = line.get("extra", {}).get("g") or {}  # an image model as g (--image-model) is the line's one aux model
        signature = Signature.build(
            line["task"],
            line["task_version"],
            line["task_args"],
            line["dataset"],
            line["seeds"] if uses_seeds else None,
            {"image": g["model"]} if "model" in g else None,
            limit=line["run"].get("limit"),
        )
        assert str(signature.task_part()) == line["task_signature"]
        assert str(signature.with_model(line["model"])) == line["signature"]
        assert Signature.parse(line["task_signature"]) == signature.task_part()
        assert Signature.parse(line["signature"]) == signature.with_model(line["model"])


def test_limit_and_an_argument_order_do_not_depend_on_the_order_given():
    data = {"loader": "d", "revision": "r", "size": 2}
    one = Signature.build("t", 1, {"b": 1, "a": 2}, data, [0], limit=2)
    two = Signature.build("t", 1, {"a": 2, "b": 1}, data, [0], limit=2)
    assert one == two and str(one) == "t|a:2|b:1|limit:2|items:2|seeds:1|data:d@r|v:1"
    assert Signature.build("t", 1, {"a": 2, "b": 1, "limit": 2}, data, [0]) == one  # limit given as an argument


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


def test_model_parts_hold_what_their_text_says():
    part = ModelPart.of(
        "image",
        {"name": "m", "revision": "sha256:0123456789abcdef", "args": {"size": 224}, "code": "sha256:ab"},
    )
    assert (part.role, part.name, part.revision) == ("image", "m", "0123456789ab")
    assert part.args_digest is not None and part.code_digest is not None and len(part.code_digest) == 8
    assert ModelPart.parse(str(part)) == part
    # a name with '@' and ':' keeps them: the revision is what follows the last '@'
    assert ModelPart.parse("model:org/m@v2:x@abc#code:0123abcd") == ModelPart(
        "model", "org/m@v2:x", "abc", None, "0123abcd"
    )


def test_parse_reads_every_part():
    text = (
        "backretrieval|dataset:xling-shapes|k:10|limit:12|src:en|items:12|seed_list:3+5|data:xling-shapes@gen:01234567"
        "|image:efficientnet-lite0@91ac07f2d3e4#args:455b1127#code:bba88029|model:toy@none#code:bfd1232f|v:3"
    )
    signature = Signature.parse(text)
    assert signature.task == "backretrieval" and signature.version == 3
    assert signature.args == (("dataset", "xling-shapes"), ("k", "10"), ("limit", "12"), ("src", "en"))
    assert signature.items == 12 and signature.seeds == (3, 5)
    assert (signature.data_loader, signature.data_revision) == ("xling-shapes", "gen:01234567")
    assert signature.aux_models == (ModelPart("image", "efficientnet-lite0", "91ac07f2d3e4", "455b1127", "bba88029"),)
    assert signature.model == ModelPart("model", "toy", "none", None, "bfd1232f")
    assert Signature.parse("t|items:None|seeds:3|data:None@None|v:1") == Signature(
        "t", 1, (), None, "None", "None", (0, 1, 2)
    )


def test_an_argument_named_like_a_later_part_is_an_argument():
    # arguments named items and seeds come before the dataset's own items:, seeds and data: parts
    text = "t|items:7|seeds:x|items:2|seeds:1|data:d@r|v:1"
    signature = Signature.parse(text)
    assert signature.args == (("items", "7"), ("seeds", "x")) and signature.items == 2 and signature.seeds == (0,)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "is not a signature"),
        ("t|items:2|data:d@r", "is not a signature"),  # no version
        ("t|k:1|data:d@r|model:m@r|v:1", "no 'items:' part"),
        ("t|items:2|data:d|v:1", "no 'items:' part"),  # data without a revision
        ("t|items:two|data:d@r|v:1", "invalid literal"),
        ("t|items:2|data:d@r|v:one", "invalid literal"),
        ("t|b:1|a:2|items:2|data:d@r|v:1", "not sorted"),
        ("t|k|items:2|data:d@r|v:1", "no 'name:value'"),
        ("t|items:2|seed_list:0+x|data:d@r|v:1", "is not a seeds part"),
        ("t|items:2|data:d@r|no-model-here|v:1", "is not a model part"),
        ("t|items:2|seed_list:0+1|data:d@r|v:1", "as the harness writes it"),  # written as seeds:2
        ("t|items:2|data:d@r|model:a@r|model:b@r|v:1", "as the harness writes it"),  # two models
    ],
)
def test_parse_refuses_what_the_harness_never_writes(text, says):
    with pytest.raises(SignatureError, match=says):
        Signature.parse(text)


_TEXT = st.text(st.characters(blacklist_characters="|", blacklist_categories=("Cs",)), max_size=8)
_KEY = st.text(st.characters(blacklist_characters="|:", blacklist_categories=("Cs",)), max_size=6)
_REVISION = st.none() | st.text(st.characters(blacklist_characters="|@", blacklist_categories=("Cs",)), max_size=20)
_VALUE = st.none() | st.booleans() | st.integers() | st.floats() | _TEXT


@st.composite
def _identities(draw: st.DrawFn) -> dict[str, object]:
    return {
        "name": draw(_TEXT.filter(bool)),
        "revision": draw(_REVISION),
        "args": draw(st.dictionaries(_KEY, _VALUE, max_size=3)),
        "distribution": draw(st.none() | _TEXT),
        "distribution_version": draw(st.none() | _TEXT),
        "code": draw(st.none() | _TEXT),
    }


@st.composite
def _signatures(draw: st.DrawFn) -> Signature:
    signature = Signature.build(
        draw(_TEXT),
        draw(st.integers(-3, 1000)),
        draw(st.dictionaries(_KEY, _VALUE, max_size=5)),
        {
            "loader": draw(st.none() | _TEXT),
            "revision": draw(_REVISION),
            "size": draw(st.none() | st.integers(0, 10**6)),
        },
        draw(st.none() | st.lists(st.integers(-5, 50), max_size=6)),
        draw(st.dictionaries(_KEY.filter(lambda role: role != "model"), _identities(), max_size=2)),
        draw(st.none() | st.integers(1, 10**4)),
    )
    return signature.with_model(draw(_identities())) if draw(st.booleans()) else signature


@given(_signatures())
def test_parse_is_the_inverse_of_str(signature):
    assert Signature.parse(str(signature)) == signature
