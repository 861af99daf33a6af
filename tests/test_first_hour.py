"""Issue 25, the first hour: what a newcomer meets from the shell and from a notebook."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest
from fixtures.foreground import foreground

from harness.cli.describe import model_capabilities
from harness.plugins.registry import build_registry

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _harness(*argv: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "harness", *argv], cwd=ROOT, stderr=subprocess.PIPE, text=True, **kwargs
    )


@pytest.mark.parametrize("argv", [("plugins",), ("list", "--json"), ("list", "models"), ("describe", "xlr")])
def test_output_into_a_closed_pipe_ends_quietly(argv):
    """`harness plugins | head -1`: the reader has gone before we write; exit 0 and nothing on stderr."""
    proc = _harness(*argv, stdout=subprocess.PIPE)
    proc.stdout.close()  # no reader is left: every write is EPIPE
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "BrokenPipe" not in err and "internal error" not in err and "Exception ignored" not in err


_SLOW_COMMAND = (
    "import sys, time\n"
    "import harness.cli as cli\n"
    "def slow(args):\n"
    "    print('ready', flush=True)\n"
    "    time.sleep(60)\n"
    "cli._command_plugins = slow\n"
    "sys.exit(cli.main(['plugins']))\n"
)


@pytest.mark.parametrize(
    ("signum", "code", "line"),
    [
        (signal.SIGTERM, 143, "harness: interrupted by SIGTERM; finished results and cache entries are kept"),
        (signal.SIGINT, 130, "harness: interrupted; finished results and cache entries are kept"),
    ],
)
def test_sigterm_and_sigint_print_one_line(signum, code, line):
    """Issue 23: SIGTERM (a scheduler's kill) ends with the same one line as Ctrl-C, not a silent exit 143."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_COMMAND],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=foreground,
    )
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code
    assert err.strip() == line


# --- harness list and describe, from the shell, with the project's own plugins ------------------------------------

PROJECT_PLUGINS = "parallel-data,retrieval,commute,yisi,default-benchmark,presets,encoders,translation,token-embedders,packaged-models"


def _run(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HARNESS_LOAD_PLUGINS": PROJECT_PLUGINS}
    return subprocess.run(
        [sys.executable, "-m", "harness", *argv], cwd=ROOT, capture_output=True, text=True, env=env, timeout=300
    )


def test_unknown_family_is_exit_2_with_a_suggestion():
    result = _run("list", "tasks", "--family", "retrival")
    assert result.returncode == 2 and result.stdout == ""
    assert "unknown family 'retrival'; did you mean 'retrieval'?" in result.stderr
    assert "families: commute, retrieval, yisi" in result.stderr


def test_unknown_language_is_exit_2_naming_the_known_ones():
    result = _run("list", "tasks", "--lang", "xx")
    assert result.returncode == 2 and result.stdout == ""
    assert "unknown language 'xx'" in result.stderr
    assert "languages tasks declare: ar, cs, de, en, fr, ru, zh" in result.stderr
    assert "tasks that take any language as an argument: backretrieval" in result.stderr


def test_lang_includes_the_tasks_that_take_any_language():
    names = [line.split()[0] for line in _run("list", "tasks", "--lang", "fr").stdout.splitlines()]
    assert {"xlr", "backretrieval", "corr", "commute_tc", "yisi2_sts", "ikea_en_fr_xlr", "commute_en_fr_tc"} <= set(
        names
    )
    assert "ikea_en_de_xlr" not in names and "commute_en_de_tc" not in names  # presets of other languages


def test_list_models_says_what_each_model_can_do():
    rows = {row["name"]: row for row in json.loads(_run("list", "models", "--json").stdout)}
    assert rows["e5-small-hf"]["capabilities"] == ["text encoder", "token embedder"]
    assert rows["efficientnet-lite0"]["capabilities"] == ["image encoder"]
    assert rows["mbert-l9"]["capabilities"] == ["token embedder"]
    assert rows["gemma-270m"]["capabilities"] == ["translation scorer"]
    text = _run("list", "models").stdout
    assert any(line.startswith("labse ") and line.endswith("(text encoder)") for line in text.splitlines())


def test_declared_capabilities_match_the_loaded_adapters():
    """The static reading (no import, so `harness list` stays fast) agrees with every adapter class."""
    wanted = PROJECT_PLUGINS.split(",")
    registry = build_registry([ep for ep in metadata.entry_points(group="harness") if ep.name in wanted])
    for name, registration in registry.entries["model"].items():
        loaded = sorted(c.value.replace("_", " ") for c in registry.load("model", name).capabilities)
        assert model_capabilities(registration) == loaded, name


def test_list_models_imports_no_heavy_library():
    code = (
        "import sys; from harness.cli import main; main(['list', 'models']);"
        "print(sorted(m for m in ('torch', 'numpy', 'transformers') if m in sys.modules), file=sys.stderr)"
    )
    env = {**os.environ, "HARNESS_LOAD_PLUGINS": PROJECT_PLUGINS}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, env=env)
    assert result.stderr.strip().splitlines()[-1] == "[]"


def test_list_tasks_json_has_requirements_and_metrics():
    rows = {row["name"]: row for row in json.loads(_run("list", "tasks", "--json").stdout)}
    ic = rows["commute_ic"]
    assert ic["requires"]["capabilities"] == ["translation_scorer"]
    assert ic["requires"]["images"] is True
    assert ic["requires"]["data"]["data_dir"] == "required" and "img.order" in ic["requires"]["data"]["layout"]
    assert ic["metrics"][0]["display"] == "IC" and ic["main_metric"] == "ic"
    xlr = rows["xlr"]
    assert xlr["any_language"] is True and xlr["requires"]["data"]["data_dir"] == "optional"
    assert xlr["requires"]["optional_models"] == []
    assert rows["backretrieval"]["requires"]["optional_models"] == ["--image-model"]
    assert xlr["metrics"][0] == {"name": "recall@k", "display": "R@10", "higher_is_better": True}
    assert rows["ikea_en_de_xlr"]["requires"]["data"]["data_dir"] == "preset"


def test_describe_says_what_data_a_task_needs_and_how_to_run_it():
    out = _run("describe", "commute_tc").stdout
    assert "data: needs --data-dir the CoMMuTE folder (holding en-<lang>/)" in out
    assert "example: harness run --tasks commute_tc --model gemma-270m --data-dir DATA_DIR" in out
    out = _run("describe", "commute_ic").stdout
    assert "example: harness run --tasks commute_ic --model gemma-270m --data-dir DATA_DIR --images IMAGES_DIR" in out
    out = _run("describe", "xlr").stdout
    assert "example: harness run --tasks xlr --model e5-small-hf\n" in out  # the generated benchmark needs no data


def test_every_task_has_data_needs_and_an_example():
    from harness.cli.describe import describe

    wanted = PROJECT_PLUGINS.split(",")
    registry = build_registry([ep for ep in metadata.entry_points(group="harness") if ep.name in wanted])
    for name in registry.names("task"):
        info = describe(registry, name)
        assert info["data"] and info["example"].split(" --model ")[0].endswith(f"harness run --tasks {name}"), name
        assert "MODEL" not in info["example"].split(), name  # an offline model that serves it is named
        if info["data"].startswith("needs"):
            assert "--data-dir DATA_DIR" in info["example"], name


def test_describe_a_preset_shows_the_values_it_sets():
    """Issue 22.5: the loader's arguments show the preset's values (tgt 'fr'), not the loader's default 'de'."""
    info = json.loads(_run("describe", "ikea_en_fr_xlr", "--json").stdout)
    loader = {p["name"]: p["default"] for p in info["dataset"]["params"]}
    task = {p["name"]: p["default"] for p in info["params"]}
    assert loader["tgt"] == task["tgt"] == "fr" and loader["split"] == "test"
    assert info["preset"]["sets"] == {"split": "test", "src": "en", "tgt": "fr"}
    assert info["example"] == "HARNESS_DATA_DIR=DATA_ROOT harness run --tasks ikea_en_fr_xlr --model e5-small-hf"


# --- the Python API keeps what the command line shows --------------------------------------------------------------


def _committed_line(family: str, index: int) -> dict:
    with open(os.path.join(ROOT, "leaderboard", "results", family, "results.jsonl"), encoding="utf-8") as file:
        return json.loads(file.readlines()[index])


def test_to_dataframe_keeps_intervals_chance_undefined_and_warnings():
    import pandas as pd

    import harness

    xlr, ic = _committed_line("ikea", 0), _committed_line("commute", 2)  # e5-small on IKEA en-de; gemma-270m IC
    frame = harness.to_dataframe([xlr, ic])
    row = frame.iloc[0]
    assert (row["task"], row["model"], row["dataset"], row["pair"]) == ("xlr", "e5-small", "ikea", "en-de")
    assert row["recall@k"] == pytest.approx(0.9673024523160763)
    assert math.isnan(row["recall@k_std"])  # one seed: the spread is undefined, not 0.0 as the line stores it
    assert (row["recall@k_low"], row["recall@k_high"]) == (0.9482288828337875, 0.9836512261580381)
    assert row["recall@k_chance"] == pytest.approx(10 / 367)
    assert pd.isna(row["recall@k_undefined"])
    assert row["warnings"] == [
        "xlr: every seed would evaluate the same 367 items, so it ran once (seed 0); the spread over seeds is "
        "undefined; the interval over items is shown instead."
    ]
    row = frame.iloc[1]
    assert (row["task"], row["pair"], row["dataset"]) == ("commute_ic", "en-fr", "commute")
    assert math.isnan(row["ic"]) and math.isnan(row["ic_std"]) and row["ic_chance"] == 0.5
    assert row["ic_undefined"].startswith("the scorer's scores cannot depend on the image")
    assert row["ties"] == 1.0


def test_evaluate_issues_its_warnings_as_harness_warnings(tmp_path, fresh_cache):
    from fixtures.plugins.fake import fake_data
    from fixtures.registries import fixture_registry

    import harness
    from harness.errors import HarnessWarning

    data = fake_data(tmp_path / "data", ["a b", "c d", "e f"], ["x y", "z w", "u v"])
    with pytest.warns(HarnessWarning, match=r"^mean_similarity: --limit 2: 2 items evaluated") as caught:
        records = harness.evaluate(
            "mean_similarity",
            "counting-encoder",
            data_dir=str(data),
            output=None,
            limit=2,
            registry=fixture_registry("fake"),
        )
    assert [str(w.message) for w in caught] == records[0].warnings
    assert caught[0].filename == __file__  # points at the caller's line, not the harness


# --- offline: a model missing from the local Hub cache fails the preflight; no empty results file -------------------


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_hub_model_missing_offline_fails_the_preflight_and_writes_nothing(tmp_path, dry_run):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path / "empty-hub-cache")}
    env["HARNESS_LOAD_PLUGINS"] = PROJECT_PLUGINS
    argv = ["run", "--tasks", "xlr", "--model", "labse", "--limit", "5", "--output", str(tmp_path / "out")]
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "harness", *argv, *(["--dry-run"] if dry_run else [])],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        "harness: error: model 'labse' is not available offline: HF_HUB_OFFLINE=1 and 'sentence-transformers/LaBSE' "
        f"is not in the local Hugging Face cache ({tmp_path / 'empty-hub-cache'}); run once with network to download "
        "it, or give a local folder as --model"
    )
    assert time.monotonic() - started < 60  # before any data is generated or weights are looked for
    assert not (tmp_path / "out" / "results.jsonl").exists()


def test_the_results_file_is_created_with_its_first_line(tmp_path):
    from harness.run.runner import check_output_folder, finished_signatures

    folder = check_output_folder(tmp_path / "new" / "out")
    assert folder.is_dir() and list(folder.iterdir()) == []  # checked writable, nothing left behind
    assert finished_signatures(folder / "results.jsonl") == set()  # --resume on a new folder


# --- harness meta: where it wrote, no "± 0.0000", and a plain reading of the two tests ------------------------------


def test_meta_says_where_it_wrote_shows_an_undefined_spread_and_reads_the_two_tests(tmp_path):
    results = os.path.join(ROOT, "leaderboard", "results", "ikea", "results.jsonl")
    env = {**os.environ, "HARNESS_LOAD_PLUGINS": PROJECT_PLUGINS}
    result = subprocess.run(
        [sys.executable, "-m", "harness", "meta", results, "--select", "src=en,tgt=de", "--resamples", "200"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "± 0.0000" not in out
    e5 = next(line for line in out.splitlines() if line.startswith("e5-small "))
    assert "0.9673 (one run)" in e5  # xlr ran once: no spread
    assert "(one run): every seed would evaluate the same items" in out
    reading = next(line for line in out.splitlines() if line.startswith("Reading (en-de, 10 models)"))
    assert (
        "for Pearson's r the bootstrap over models supports a difference but the seeds taken together do not "
        "(Steiger p < 0.05 in 7 of 25 seeds, combined p 0.332; difference +0.054, interval [0.018, 0.109])"
    ) in reading
    assert "for Spearman's rho neither test supports a difference" in reading
    assert (
        f"written to {tmp_path / 'meta'}/ (--output changes it): meta.json, xlr_vs_backretrieval.png" in result.stderr
    )


# --- g-sweep: the data set in the title, readable log ticks, a warning for few models, the columns explained --------


def test_g_sweep_names_its_data_warns_about_few_models_and_explains_its_columns(tmp_path, capsys, monkeypatch):
    import numpy as np
    from retrieval.builders import write_ikea

    from harness.cli import main
    from harness_tasks.retrieval.analysis import g_quality

    features = np.array(
        [[1, 0, 0, 0], [1, 0.2, 0, 0], [0, 1, 0, 0], [0, 1, 0.2, 0], [0, 0, 1, 0], [0, 0, 1, 0.2]], dtype=np.float32
    )
    data = write_ikea(tmp_path / "shapes-pairs", features=features)  # a data set that is not IKEA
    titles = []
    real_plot = g_quality.plot
    monkeypatch.setattr(
        g_quality, "plot", lambda rows, path, **kw: titles.append(kw["title"]) or real_plot(rows, path, **kw)
    )
    models = ["random-encoder", "tfidf-char", "random-encoder:seed=1"]
    argv = ["g-sweep", "--data-dir", str(data), *[a for m in models for a in ("--model", m)], "--noise", "1"]
    argv += ["--truncate", "1", "--seeds", "2", "--k", "1", "--output", str(tmp_path / "sweep")]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert titles == ["BkR and CORR vs XLR as g degrades: shapes-pairs test en-de, 3 encoders, 2 seeds"]
    assert "warning: g-sweep: the correlations with XLR are across only 3 models" in err
    assert "agree@1: share of each image's 1 nearest images under the clean g kept among its 1 nearest" in out
    assert "rho_g: Spearman correlation of each image's cosines to the other images" in out
    assert "r / rho(X,XLR): Pearson / Spearman correlation of X with XLR across the models" in out
    assert g_quality.data_name(data / "en.de", data / "en.de") == "shapes-pairs/en.de"  # a pair folder given


def test_calibrate_says_worst_case(tmp_path, capsys):
    from retrieval.test_calibrate import MODELS, records, write

    from harness.cli import main

    folder = write(tmp_path / "parallel", records(MODELS))
    assert main(["calibrate", "fit", folder, "--output", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    assert "(smaller worst-case RMSE)" in out and "worse-case" not in out


# --- a model's one-time conversion: one line saying what is done and where it is kept; no third-party bar ----------


def test_a_conversion_announces_itself_once(tmp_path, capsys):
    from harness.artefacts import ensure_built

    built = []

    def build(folder):
        built.append(folder)
        (folder / "weights").write_text("w")

    target = tmp_path / "models" / "toy-sha256-0123+hf1"
    assert ensure_built(target, build, "converting toy from its GGUF file") == target
    assert capsys.readouterr().err == f"harness: converting toy from its GGUF file, once; kept in {target}\n"
    assert ensure_built(target, build) == target and len(built) == 1  # kept: nothing done, nothing printed
    assert capsys.readouterr().err == ""
    other = tmp_path / "models" / "other-sha256-4567+hf1"
    ensure_built(other, build)  # without a description, the folder's name says what is converted
    assert capsys.readouterr().err == f"harness: converting other-sha256-4567+hf1, once; kept in {other}\n"


def test_the_gguf_conversion_bar_is_ours_and_restored():
    """transformers' tqdm bar over the GGUF tensors is replaced by the harness's progress, then restored."""
    import io

    from transformers import modeling_gguf_pytorch_utils as gguf_utils

    from harness.progress import Progress
    from harness_models.packaged.gemma import gguf_bar

    bar = gguf_utils.tqdm
    stream = io.StringIO()
    with gguf_bar(Progress(stream=stream, quiet=0.0)):
        assert gguf_utils.tqdm is not bar
        assert list(gguf_utils.tqdm([1, 2], desc="Converting and de-quantizing GGUF tensors...")) == [1, 2]
    assert gguf_utils.tqdm is bar
    assert stream.getvalue().splitlines()[-1].startswith("dequantising tensors: 2/2 (")
    with gguf_bar(Progress(enabled=False)):
        assert list(gguf_utils.tqdm(iter([3]))) == [3]


# --- the README's CoMMuTE example: text-only gemma-270m beside gemma-270m+caption on stand-in images --------------


@pytest.mark.real
@pytest.mark.slow
def test_the_readme_commute_comparison(tmp_path):
    """The README's commands (with --limit 3): the caption model's IC is measured, the text-only one's is n/a; the
    one-time conversion is one harness line, with no third-party progress bar."""
    from conftest import shared_data

    commute = shared_data("commute")
    # a fresh cache and models folder (the packaged tests' session fixture may have set HARNESS_MODELS_DIR)
    inherited = {key: value for key, value in os.environ.items() if key != "HARNESS_MODELS_DIR"}
    env = {**inherited, "HARNESS_LOAD_PLUGINS": PROJECT_PLUGINS, "HARNESS_CACHE_DIR": str(tmp_path / "cache")}

    def harness_run(*argv):
        return subprocess.run(
            [sys.executable, "-m", "harness", *argv],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
            timeout=1800,
        )

    made = harness_run(
        "commute-stand-in-images", "--data-dir", str(commute), "--lang", "fr", "--output", "stand-in-images/"
    )
    assert made.returncode == 0, made.stderr
    tasks = "commute_tc,commute_ic,commute_gtc,commute_gic"
    common = ["--data-dir", str(commute), "--task-args", "lang=fr", "--images", "stand-in-images/", "--limit", "3"]
    text = harness_run("run", "--tasks", tasks, "--model", "gemma-270m", *common)
    assert text.returncode == 0, text.stderr
    lines = text.stderr.splitlines()
    conversions = [line for line in lines if "converting Gemma 3 270M" in line and "once; kept in" in line]
    assert len(conversions) == 1 and f"kept in {tmp_path / 'cache' / 'models'}" in conversions[0]
    assert any("converting Gemma 3 270M: " in line for line in lines)  # then its stages, while it runs
    assert "de-quantizing" not in text.stderr and "Loading weights" not in text.stderr
    ic = next(line.split("\t") for line in text.stdout.splitlines() if line.startswith("commute_ic\tIC"))
    assert ic[2] == "n/a"  # a scorer that ignores the image cannot compare two images
    caption = harness_run("run", "--tasks", tasks, "--model", "gemma-270m+caption", *common)
    assert caption.returncode == 0, caption.stderr
    assert "converting Gemma" not in caption.stderr  # converted once, kept
    ic = next(line.split("\t") for line in caption.stdout.splitlines() if line.startswith("commute_ic\tIC"))
    assert ic[2] != "n/a" and 0.0 <= float(ic[2]) <= 1.0


def test_the_readme_examples_are_the_ones_measured():
    """benchmarks/quick-start.md times every example of the README's examples block, as written."""
    readme = (Path(ROOT) / "README.md").read_text(encoding="utf-8")
    block = readme.split("Examples that run here", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.startswith(".venv/bin/harness ")]
    measured = (Path(ROOT) / "benchmarks" / "quick-start.md").read_text(encoding="utf-8")
    assert len(commands) == 5
    for command in commands:
        assert command in measured, command


def test_a_hub_image_model_missing_offline_fails_the_preflight_and_names_its_option(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(tmp_path / "empty-hub-cache")}
    env["HARNESS_LOAD_PLUGINS"] = PROJECT_PLUGINS
    argv = ["run", "--tasks", "backretrieval", "--model", "minilm", "--image-model", "resnet50", "--dry-run"]
    result = subprocess.run(
        [sys.executable, "-m", "harness", *argv], cwd=ROOT, capture_output=True, text=True, env=env, timeout=300
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (
        "harness: error: model 'resnet50' is not available offline: HF_HUB_OFFLINE=1 and 'microsoft/resnet-50' "
        f"is not in the local Hugging Face cache ({tmp_path / 'empty-hub-cache'}); run once with network to download "
        "it, or give a local folder as --image-model"
    )
