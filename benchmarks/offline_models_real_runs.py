"""The real-data runs of issue 6 with the packaged models, each a ``harness run`` in its own process.

Writes ``<output>/<family>/results.jsonl`` (with ``--log-samples``), a ``runs.jsonl`` there with
every command's wall time and peak memory (the child's maximum resident set size; runs already
in the results are skipped, ``--resume``), and, for
IKEA, ``harness meta`` per direction into ``<output>/ikea/meta-<src>-<tgt>/``.

- ikea: xlr, backretrieval and corr on IKEA test (en-de and en-fr, both directions), ten text
  encoders, the dataset's image features as g, ``--seeds`` seeds (default 25); then meta.
- commute: commute_tc, commute_gtc, commute_ic and commute_gic with gemma-270m on en-fr, en-de and en-cs (IC and GIC
  are undefined for this image-blind scorer: the lines say why), with
  stand-in images (one solid colour per image name, written to ``<output>/commute/stand-in-images``);
  then the per-language perplexity statistics in ``<output>/commute/perplexity-statistics.md``.
- yisi: yisi2_filter and its baseline bert_sum_filter with e5-small-hf (layer 9) on Multi30K test_2016_flickr,
  en-de, en-fr, en-cs.

Then each family's results go into the committed leaderboard's folder (``--leaderboard``, default
``leaderboard/results/<family>/``; ``--leaderboard ''`` leaves it alone): ``results.jsonl`` and, for every line's
per-sample log, its compact compressed form ``<samples_file>.gz`` (only ``id``, ``seed`` and the fields the line's
statistics read: what ``harness compare --results leaderboard/results`` needs), except CoMMuTE, whose full logs are
kept because ``harness commute-perplexity`` reads every slot's perplexity from them, and CORR, whose logs are not
kept (``--leaderboard-without``: they would be most of the size). Logs of earlier runs that no line names any more
are removed there.

    python benchmarks/offline_models_real_runs.py [--data ../shared/data] [--output ../real-results] [--families ikea,commute,yisi]
        [--leaderboard leaderboard/results]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HARNESS = str(Path(sys.executable).with_name("harness"))
IKEA_MODELS = [
    ("e5-small", None),
    ("e5-small-trunc48", None),
    ("e5-small-trunc12", None),
    ("e5-small-noise0.04", None),
    ("e5-small-noise0.08", None),
    ("tfidf-char", None),
    ("random-encoder", None),
    ("minilm", None),
    ("e5-small-hf", "pooling=cls"),
    ("e5-small-hf", None),
]
IKEA_DIRECTIONS = [("en", "de"), ("de", "en"), ("en", "fr"), ("fr", "en")]
COMMUTE_LANGS = ("fr", "de", "cs")
FULL_LOGS = ("commute",)  # families whose committed logs stay whole (their analyses read more than the statistics)
# CORR's compact log holds six full-precision moments per item and seed: about 200 kB compressed per IKEA line,
# 8 MB for the 40 lines (xlr and backretrieval together: under 1 MB), so it is not kept unless asked
WITHOUT_LOGS = "corr"
YISI_TARGETS = ("de", "fr", "cs")


def run(command: list[str], log: Path) -> dict:
    """Run one command; its wall time, peak RSS (MiB) and exit status, appended to ``log``."""
    print("$", " ".join(command), flush=True)
    start = time.perf_counter()
    process = subprocess.Popen(command)
    _, status, usage = os.wait4(process.pid, 0)
    record = {
        "command": " ".join(command),
        "wall_s": round(time.perf_counter() - start, 1),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 1),
        "exit": os.waitstatus_to_exitcode(status),
    }
    with log.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    if record["exit"] != 0:
        raise SystemExit(f"failed: {record}")
    return record


def ikea(data: Path, out: Path, seeds: int) -> None:
    """Ten encoders, four directions, then meta per direction."""
    folder = out / "ikea"
    for model, args in IKEA_MODELS:
        for src, tgt in IKEA_DIRECTIONS:
            command = [
                HARNESS,
                "run",
                "--tasks",
                "xlr,backretrieval,corr",
                "--model",
                model,
                "--data-dir",
                str(data / "ikea"),
                "--task-args",
                f"src={src},tgt={tgt}",
                "--seeds",
                str(seeds),
                "--output",
                str(folder),
                "--log-samples",
                "--resume",
            ]
            run(command + (["--model-args", args] if args else []), folder / "runs.jsonl")
    for src, tgt in IKEA_DIRECTIONS:
        run(
            [
                HARNESS,
                "meta",
                str(folder),
                "--select",
                f"src={src},tgt={tgt}",
                "--output",
                str(folder / f"meta-{src}-{tgt}"),
            ],
            folder / "runs.jsonl",
        )


def stand_in_images(data: Path, folder: Path) -> Path:
    """One solid-colour PNG per image name of the CoMMuTE pairs (the real images are not distributed with the text)."""
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    for lang in COMMUTE_LANGS:
        for name in (data / "commute" / f"en-{lang}" / "img.order").read_text(encoding="utf-8").split():
            colour = tuple(hashlib.sha256(name.encode()).digest()[:3])
            Image.new("RGB", (64, 64), colour).save(folder / name, format="PNG")
    return folder


def commute(data: Path, out: Path) -> None:
    """gemma-270m, text-only, three languages."""
    folder = out / "commute"
    images = stand_in_images(data, folder / "stand-in-images")
    for lang in COMMUTE_LANGS:
        run(
            [
                HARNESS,
                "run",
                "--tasks",
                "commute_tc,commute_gtc,commute_ic,commute_gic",
                "--model",
                "gemma-270m",
                "--data-dir",
                str(data / "commute"),
                "--images",
                str(images),
                "--task-args",
                f"lang={lang}",
                "--output",
                str(folder),
                "--log-samples",
                "--resume",
            ],
            folder / "runs.jsonl",
        )
    table = commute_statistics(folder)
    (folder / "perplexity-statistics.md").write_text(table, encoding="utf-8")
    print(table)


def commute_statistics(folder: Path) -> str:
    """Per language: TC, GTC, ties, the perplexity of each line's reference translation and the gap within a tuple."""
    import numpy as np

    rows = [
        "| pair | tuples | TC | GTC | ties | lines | ppl median | ppl geometric mean | ppl 5th-95th percentile "
        "| median abs log-ppl gap within a tuple | wall (s) | peak RSS (MiB) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    records = [
        json.loads(line) for line in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    runs = [
        json.loads(line) for line in (folder / "runs.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    for lang in COMMUTE_LANGS:
        by_task = {r["task"]: r for r in records if r["task_args"].get("lang") == lang}
        tc, gtc = by_task["commute_tc"], by_task["commute_gtc"]
        samples = [json.loads(line) for line in (folder / tc["samples_file"]).read_text(encoding="utf-8").splitlines()]
        # each CoMMuTE line's reference translation under its own image: slots a|a and b|b
        ppl = np.array([s["ppl"][slot] for s in samples for slot in ("a|a", "b|b") if s["ppl"][slot] is not None])
        gaps = [abs(np.log(s["ppl"]["a|a"]) - np.log(s["ppl"]["a|inc_a"])) for s in samples]
        run = next(r for r in reversed(runs) if f"lang={lang}" in r["command"])
        rows.append(
            f"| en-{lang} | {len(samples)} | {tc['metrics']['tc']:.4f} | {gtc['metrics']['gtc']:.4f} | {tc['metrics']['ties']:.4f} "
            f"| {len(ppl)} | {np.median(ppl):.1f} | {np.exp(np.log(ppl).mean()):.1f} "
            f"| {np.percentile(ppl, 5):.1f}-{np.percentile(ppl, 95):.1f} | {np.median(gaps):.3f} "
            f"| {run['wall_s']:.0f} | {run['peak_rss_mib']:.0f} |"
        )
    return "\n".join(rows) + "\n"


def yisi(data: Path, out: Path) -> None:
    """YiSi-2 filtering with e5-small-hf layer 9, three pairs."""
    folder = out / "yisi"
    for tgt in YISI_TARGETS:
        run(
            [
                HARNESS,
                "run",
                "--tasks",
                "yisi2_filter,bert_sum_filter",
                "--model",
                "e5-small-hf",
                "--model-args",
                "layer=9",
                "--data-dir",
                str(data / "multi30k"),
                "--task-args",
                f"src=en,tgt={tgt}",
                "--output",
                str(folder),
                "--log-samples",
                "--resume",
            ],
            folder / "runs.jsonl",
        )


def keep(source: Path, destination: Path, compact: bool, without: list[str]) -> None:
    """The family's results and per-sample logs (compact and compressed, or whole) in the leaderboard's folder."""
    from harness.results.samples import compact_folder

    written = compact_folder(source, destination, compact=compact, without=without)
    size = sum(path.stat().st_size for path in written)
    print(f"kept {len(written)} per-sample logs ({size / 1e6:.2f} MB) and results.jsonl in {destination}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--output", default=str(REPO.parent / "real-results"))
    parser.add_argument("--families", default="ikea,commute,yisi")
    parser.add_argument("--seeds", type=int, default=25)
    parser.add_argument("--fresh", action="store_true", help="delete the families' output folders first")
    parser.add_argument(
        "--leaderboard",
        default=str(REPO / "leaderboard" / "results"),
        help="where each family's results and compact per-sample logs go (empty: nowhere)",
    )
    parser.add_argument(
        "--leaderboard-without",
        default=WITHOUT_LOGS,
        help=f"roles whose per-sample logs the leaderboard does not keep (default {WITHOUT_LOGS}; empty: keep all)",
    )
    args = parser.parse_args()
    data, out = Path(args.data), Path(args.output)
    for family in args.families.split(","):
        if args.fresh:
            shutil.rmtree(out / family, ignore_errors=True)
        (out / family).mkdir(parents=True, exist_ok=True)
        {
            "ikea": lambda: ikea(data, out, args.seeds),
            "commute": lambda: commute(data, out),
            "yisi": lambda: yisi(data, out),
        }[family]()
        if args.leaderboard:
            without = [role for role in args.leaderboard_without.split(",") if role]
            keep(out / family, Path(args.leaderboard) / family, family not in FULL_LOGS, without)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
