"""Throughput and memory of YiSi-2 (this harness) against ``bert_score.score``, CPU.

Both score the same sentence pairs with the same model folder, layer and batch size, idf off
(the setting where the two metrics coincide up to special tokens and clipping), with
``--threads`` PyTorch threads (ONNX Runtime runs that many batches at once). Each
measurement runs in a fresh subprocess, so peak RSS is that implementation's alone and nothing
is shared through caches; the harness's embedding cache is off. Every measurement includes
loading the model (tokenizer, weights or ONNX session), not importing the libraries (transformers'
BERT modelling code for bert_score, onnxruntime and onnx for the harness: imported before the
clock). Wall and CPU seconds (all threads) are measured; for the harness the seconds spent loading
are shown apart. One untimed warm-up per implementation first (file system cache, the
harness's memo of the weights' hash, the ONNX export of the truncated encoder) on 10 pairs, then
``--repeats`` timed runs, alternating.

The model is a BERT-base-shaped encoder (12 layers, hidden 768, mBERT's vocabulary size of
119,547) with random weights and a WordPiece tokenizer trained on the pairs, built once in a
temporary folder, unless ``--model`` names a folder (for example a local copy of
bert-base-multilingual-cased). Pairs are Multi30K test_2016_flickr en-de.

    python benchmarks/yisi_vs_bert_score.py [--pairs 500] [--batch-size 64] [--layer 9] [--repeats 3] [--threads 2]
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data" / "multi30k"


def read_pairs(data: Path, count: int) -> tuple[list[str], list[str]]:
    """The first ``count`` en-de pairs of Multi30K test_2016_flickr."""
    en = (data / "test_2016_flickr.en").read_text(encoding="utf-8").splitlines()[:count]
    de = (data / "test_2016_flickr.de").read_text(encoding="utf-8").splitlines()[:count]
    return en, de


def build_model(folder: Path, texts: list[str]) -> Path:
    """A BERT-base-shaped encoder with random weights and a tokenizer trained on ``texts``."""
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    raw = BertWordPieceTokenizer(lowercase=False, strip_accents=False)
    raw.train_from_iterator(texts, vocab_size=30000, min_frequency=1, show_progress=False)
    tokenizer = BertTokenizerFast(
        tokenizer_object=raw._tokenizer,
        do_lower_case=False,
        model_max_length=512,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
    )
    torch.manual_seed(0)
    BertModel(BertConfig(vocab_size=119547)).eval().save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder


def run_yisi(model: str, en: list[str], de: list[str], layer: int, batch_size: int) -> list[float]:
    """YiSi-2 F of each pair through the harness: adapter, uncached CachedModel, the task's scoring."""
    import datasets

    from harness.adapters.cached_model import CachedModel
    from harness_models.token_embedders.hf import HFTokenEmbedder
    from harness_tasks.yisi.tasks import Yisi2Sts

    adapter = HFTokenEmbedder("bench", {"pretrained": model, "layer": layer}, batch_size=batch_size)
    start = time.perf_counter()
    adapter.ensure_loaded()
    LOADING.append(time.perf_counter() - start)
    data = datasets.Dataset.from_dict({"sentence1": en, "sentence2": de})
    task = Yisi2Sts("yisi2_sts", {"src": "en", "tgt": "de", "idf": "none"})
    return [float(f) for f in task.scorer.score(data, CachedModel(adapter, None)).values]


def run_bert_score(model: str, en: list[str], de: list[str], layer: int, batch_size: int) -> list[float]:
    """BERTScore F of each pair."""
    import bert_score

    _, _, f = bert_score.score(
        en, de, model_type=model, num_layers=layer, idf=False, batch_size=batch_size, device="cpu"
    )
    return f.tolist()


LOADING: list[float] = []  # the harness's seconds spent loading the model, for the table
RUNNERS = {"yisi2 (harness)": run_yisi, "bert_score.score": run_bert_score}
IMPORTS = {  # imported before the clock starts
    "yisi2 (harness)": [
        "datasets",
        "transformers",
        "onnxruntime",
        "onnx",
        "harness_models.token_embedders.hf",
        "harness_tasks.yisi.tasks",
    ],
    "bert_score.score": ["bert_score", "transformers.models.bert.modeling_bert"],
}


def memory_mib(field: str) -> float:
    """VmRSS (now) or VmHWM (peak) of this process; unlike ru_maxrss, not inherited across exec."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def worker(args: argparse.Namespace) -> None:
    """One measurement: print seconds, peak RSS and the mean score as JSON."""
    import torch

    torch.set_num_threads(args.threads)
    for module in IMPORTS[args.worker]:
        importlib.import_module(module)
    en, de = read_pairs(Path(args.data), args.pairs)
    baseline = memory_mib("VmRSS")
    start, cpu = time.perf_counter(), time.process_time()
    scores = RUNNERS[args.worker](args.model, en, de, args.layer, args.batch_size)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = memory_mib("VmHWM")
    print(
        json.dumps(
            {
                "seconds": seconds,
                "cpu": cpu,
                "loading": sum(LOADING),
                "peak_mib": peak,
                "added_mib": peak - baseline,
                "mean_f": sum(scores) / len(scores),
                "threads": torch.get_num_threads(),
            }
        )
    )


def measure(name: str, args: argparse.Namespace, model: str, pairs: int) -> dict:
    """Run one worker subprocess and return what it measured."""
    command = [
        sys.executable,
        __file__,
        "--worker",
        name,
        "--model",
        model,
        "--data",
        str(args.data),
        "--pairs",
        str(pairs),
        "--layer",
        str(args.layer),
        "--batch-size",
        str(args.batch_size),
        "--threads",
        str(args.threads),
    ]
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=os.environ | {"HF_HUB_OFFLINE": "1"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=500)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--layer", type=int, default=9)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--model", default=None, help="a model folder (default: build a BERT-base-shaped one)")
    parser.add_argument("--data", default=str(DATA), help="Multi30K raw folder")
    parser.add_argument("--worker", choices=list(RUNNERS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    with tempfile.TemporaryDirectory() as scratch:
        os.environ["HARNESS_CACHE_DIR"] = str(Path(scratch) / "cache")  # never the user's cache
        en, de = read_pairs(Path(args.data), args.pairs)
        model = args.model or str(build_model(Path(scratch) / "model", en + de))
        runs: dict[str, list[dict]] = {name: [] for name in RUNNERS}
        print(f"load average at start: {os.getloadavg()[0]:.1f} ({os.cpu_count()} cores)", flush=True)
        for name in RUNNERS:
            measure(name, args, model, 10)  # warm-up
        for repeat in range(args.repeats):
            for name in RUNNERS if repeat % 2 == 0 else reversed(RUNNERS):
                runs[name].append(measure(name, args, model, args.pairs))
            seconds = ", ".join(f"{name} {runs[name][-1]['seconds']:.2f} s" for name in RUNNERS)
            print(f"  run {repeat + 1}: {seconds}; load average {os.getloadavg()[0]:.1f}", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}\n")
    print(
        f"{len(en)} Multi30K en-de pairs, layer {args.layer}, batch size {args.batch_size}, "
        f"CPU ({os.cpu_count()} cores, {args.threads} threads each side), median of {args.repeats} runs "
        "(alternating), model loading included, imports excluded\n"
    )
    print(
        "| implementation | seconds (wall) | CPU seconds | of which loading (wall) | pairs/s | peak RSS (MiB) "
        "| RSS added by loading and scoring (MiB) | mean F |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, results in runs.items():
        seconds = statistics.median(r["seconds"] for r in results)
        loading = f"{statistics.median(r['loading'] for r in results):.2f}" if name.startswith("yisi2") else "n/a"
        print(
            f"| {name} | {seconds:.2f} | {statistics.median(r['cpu'] for r in results):.2f} | {loading} "
            f"| {len(en) / seconds:.1f} | {max(r['peak_mib'] for r in results):.0f} "
            f"| {max(r['added_mib'] for r in results):.0f} | {results[0]['mean_f']:.4f} |"
        )
    ours, theirs = runs["yisi2 (harness)"], runs["bert_score.score"]
    for clock in ("seconds", "cpu"):
        ratios = [t[clock] / o[clock] for o, t in zip(ours, theirs)]
        print(
            f"\nratio bert_score / yisi2 {'wall' if clock == 'seconds' else 'CPU'} seconds (median of per-run ratios): "
            f"{statistics.median(ratios):.2f}x (range {min(ratios):.2f}-{max(ratios):.2f})"
        )


if __name__ == "__main__":
    main()
