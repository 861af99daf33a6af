"""Issue 36, the first hour round 3: output a reader can take in, the Python API's progress, the README's examples
as written (the stop itself: tests/test_stop.py)."""

from __future__ import annotations

import argparse
import io
import re
import shlex
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.cli import build_parser
from harness.cli.summary import print_summary
from harness.plugins.registry import get_registry
from harness.progress import Progress, stage, stages
from harness.run.runner import prepare

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


# --- the run's table: counts and ranks as integers, chance at the metric's precision --------------------------------


def _record(metrics, per_seed, chance, stds=None):
    return SimpleNamespace(
        task="xlr",
        main_metric="recall@k",
        metrics=metrics,
        metrics_std=stds or dict.fromkeys(metrics, 0.0),
        per_seed=per_seed,
        seeds=list(range(len(next(iter(per_seed.values()))))),
        metric_info={name: {"display": name, "chance": value} for name, value in chance.items()},
        intervals={},
        dataset={"size": 1000},
        wall_seconds=1.0,
        warnings=[],
        undefined={},
        model={"name": "m"},
    )


def test_integer_metrics_print_as_integers_and_chance_at_the_metrics_precision(capsys, tmp_path):
    one_seed = _record(
        {"recall@k": 1.0, "mrr": 0.50251, "median_rank": 3.0, "good_pairs": 1000.0, "ties": 1.0, "first": 1.0},
        {
            "recall@k": [1.0],
            "mrr": [0.50251],
            "median_rank": [3.0],
            "good_pairs": [1000.0],
            "ties": [1.0],
            "first": [1.0],
        },
        {"recall@k": 0.01, "mrr": 0.007485, "median_rank": 500.5, "good_pairs": None, "ties": None, "first": 184.0},
    )
    two_seeds = _record(
        {"recall@k": 0.5, "median_rank": 3.0, "mean_rank": 2.5},
        {"recall@k": [0.5, 0.5], "median_rank": [2.0, 4.0], "mean_rank": [2.0, 3.0]},
        {"recall@k": 0.01, "median_rank": 500.5, "mean_rank": 500.5},
        {"recall@k": 0.0, "median_rank": 2**0.5, "mean_rank": 0.5**0.5},
    )
    print_summary([one_seed, two_seeds], tmp_path)  # type: ignore[list-item]
    cells = [line.split("\t")[1:5] for line in capsys.readouterr().out.splitlines()[1:]]
    assert cells == [
        ["recall@k *", "1.0000", "", "0.0100"],  # a rate at 1 stays a rate
        ["mrr", "0.5025", "", "0.0075"],  # not 0.007485
        ["median_rank", "3", "", "500.5"],  # not 3.0000
        ["good_pairs", "1000", "", ""],  # not 1000.0000
        ["ties", "1.0000", "", ""],  # a share that is 1 stays a share
        ["first", "1", "", "184"],  # a median rank of 1 (its chance level says it is a rank)
        ["recall@k *", "0.5000 ± 0.0000", "", "0.0100"],
        ["median_rank", "3 ± 1.4142", "", "500.5"],  # whole in every seed and on average
        ["mean_rank", "2.5000 ± 0.7071", "", "500.5000"],  # a mean of whole ranks is not one
    ]


# --- the Python API shows the command line's progress, unless told not to -------------------------------------------


class Letters:
    def encode(self, texts, **kwargs):
        import numpy as np

        return np.array([[text.count(c) for c in "aeiost"] for text in texts], dtype=float) + 1.0


def test_the_python_api_shows_progress_unless_told_not_to():
    common = {"task_args": "size=24", "output": None, "use_cache": False}
    assert prepare("xlr", Letters(), **common).progress.enabled
    assert not prepare("xlr", Letters(), progress=False, **common).progress.enabled
    mine = Progress(stream=io.StringIO())
    assert prepare("xlr", Letters(), progress=mine, **common).progress is mine


def test_a_conversion_says_each_stage_and_beats_while_one_lasts(monkeypatch):
    clock = [0.0]
    monkeypatch.setattr("harness.progress.time.perf_counter", lambda: clock[0])
    assert not stage("outside any job").enabled  # nothing to report to
    with stages("harness: converting toy") as job:
        job.stream = io.StringIO()
        stage("reading its tokenizer")
        for _ in range(250):  # 25 s in the stage, a beat every 0.1 s (the waiting thread's)
            clock[0] += 0.1
            job.beat()
        stage("writing the weights")
    assert [re.sub(r"\d+s so far", "Ns so far", line) for line in job.stream.getvalue().splitlines()] == [
        "harness: converting toy: reading its tokenizer",
        "harness: converting toy: reading its tokenizer, Ns so far",
        "harness: converting toy: reading its tokenizer, Ns so far",
        "harness: converting toy: writing the weights",
    ]


# --- harness list models: filters and the zoo as one line; describe: size and licence ------------------------------


def _listed(capsys, *argv: str) -> tuple[int, list[str], str]:
    from harness.cli import main

    code = main(["list", "models", *argv])
    out, err = capsys.readouterr()
    return code, [line.split()[0] for line in out.splitlines() if line.strip()], err


def test_list_models_filters_by_kind_and_capability_and_folds_the_zoo(capsys):
    from harness_models.packaged.zoo import zoo_names

    code, names, _ = _listed(capsys)
    members = [name for name in zoo_names() if name.startswith("zoo-")]
    assert code == 0 and "zoo-*" in names and not set(members) & set(names)  # one line for 52 members
    _, every, _ = _listed(capsys, "--all")
    assert set(members) <= set(every) and "zoo-*" not in every
    _, images, _ = _listed(capsys, "--capability", "image-encoder", "--kind", "hub")
    assert images == ["clip-vit-b32", "resnet50"]
    _, offline, _ = _listed(capsys, "--offline", "--capability", "translation_scorer")
    assert offline == ["gemma-270m", "gemma-270m+caption", "xling-shapes-mmt"]
    code, _, err = _listed(capsys, "--capability", "imag-encoder")
    assert code == 2 and "did you mean 'image-encoder'" in err
    code, _, err = _listed(capsys, "--kind", "ofline")
    assert code == 2 and "did you mean 'offline'" in err


def test_describe_a_model_shows_its_size_and_licence(capsys):
    from harness.cli import main

    assert main(["describe", "gemma-270m"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "  parameters: 268,098,176" in lines and "  license: gemma" in lines
    assert main(["describe", "hf-text-encoder"]) == 0
    assert "  parameters: unknown (depends on the model given)" in capsys.readouterr().out.splitlines()


# --- the README: set up once, then every example as written ---------------------------------------------------------


def _block(marker: str) -> str:
    return README.split(marker, 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]


def readme_examples() -> list[list[str]]:
    """The commands of the README's examples block, as argument lists."""
    lines = [line for line in _block("Examples that run here").splitlines() if line and not line.startswith("#")]
    return [shlex.split(line) for line in lines]


def test_the_setup_puts_harness_on_the_path_and_the_examples_need_no_activation():
    setup = README.split("```bash setup\n", 1)[1].split("```", 1)[0].splitlines()
    assert setup[-1] == ". .venv/bin/activate"  # bare `harness` works in the shell that ran the setup
    examples = readme_examples()
    assert len(examples) == 5 and all(argv[0] == ".venv/bin/harness" for argv in examples)
    first = README.split("```bash\n.venv/bin/harness run", 1)
    assert len(first) == 2  # the quick start too


def test_the_readme_examples_parse_and_name_known_tasks_models_and_data():
    registry = get_registry()
    for argv in readme_examples():
        args = build_parser(None).parse_args(argv[1:]) if argv[1] == "run" else None
        if args is None:
            assert argv[1] in registry.entries["command"], argv
            continue
        assert isinstance(args, argparse.Namespace)
        assert args.model in registry.names("model"), argv
        assert all(task in registry.names("task") for task in args.tasks.split(",")), argv
        assert args.data_dir.startswith("../shared/data/"), argv
    assert "--model e5-small " not in README  # the IKEA example runs the fast e5-small-hf (issue 36.1)


@pytest.mark.real
@pytest.mark.slow
def test_the_readme_examples_pass_their_preflight(tmp_path, capsys, monkeypatch):
    """Every example as written, from a folder where ../shared/data is the shared data: the stand-in images are
    made, each run passes its preflight (``--dry-run``: data, images, models, capabilities) without converting."""
    from conftest import shared_data

    from harness.cli import main

    data = shared_data("commute").parent  # skips without the shared data
    (tmp_path / "repository").mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(data)
    monkeypatch.chdir(tmp_path / "repository")
    for argv in readme_examples():
        extra = ["--dry-run", "--output", str(tmp_path / "results")] if argv[1] == "run" else []
        assert main([*argv[1:], *extra]) == 0, argv
        out = capsys.readouterr().out
        if argv[1] == "run":
            assert "model outputs:" in out
