"""The numbers that docs/ quotes from the committed results, generated from them so that they cannot go stale.

Every such number sits in a marked block of a Markdown file::

    <!-- generated: NAME -->
    ...
    <!-- end: NAME -->

(or inline, on one line). This script computes every block from ``leaderboard/results/`` with the
harness's own functions (``harness meta``'s evaluation, the results lines' metrics) and rewrites the
blocks in place; ``--check`` only compares, prints a diff of each block that differs, and exits 1.
``tests/test_docs_numbers.py`` runs the check, so a doc and the committed results cannot disagree.
After rerunning the models and replacing the committed results::

    python benchmarks/docs_numbers.py            # rewrite the blocks
    python benchmarks/docs_numbers.py --check    # what the test checks

Blocks: in docs/ikea-meta-evaluation.md the correlations (SIGIR 2021 Table 1), the BkR-vs-CORR tests
and a sentence summing them up, BkR over the language pairs (Table 2) with its chance levels and the
test of the best model against the others; in docs/retrieval.md the ``harness meta`` output for
en-de and the cosine row of the CSLS comparison; in docs/real-data.md the correlation rows, the
per-encoder scores, how close e5-small-hf is to e5-small, the CoMMuTE statistics, the YiSi-2 table and
its first 400 rows; in README.md and docs/default-benchmark.md the default benchmark's figures (the
suite's groups ``default`` and ``default-pixels``); in docs/encoder-zoo.md, from the zoo's own committed
results (docs/zoo/results, ``encoder_zoo.evidence``), the test over all encoders, over their families and
over the strong ones, the members left out, Table 2's test, and the subsample table of
docs/zoo/subsamples.json.

A number with three or more decimals written by hand outside the blocks of these docs that a block also
shows is a copy that can go stale: ``--check`` fails on it (``hand_written_twins``) unless
``COINCIDENCES`` names it with the reason it is only equal by chance. ``--results DIR`` reads another
results folder (to prove the blocks on a run not yet committed).
"""

from __future__ import annotations

import argparse
import difflib
import io
import math
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import redirect_stderr
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "leaderboard" / "results"
DOCS = (
    "README.md",
    "docs/ikea-meta-evaluation.md",
    "docs/retrieval.md",
    "docs/real-data.md",
    "docs/encoder-zoo.md",
    "docs/default-benchmark.md",
)
ZOO = ROOT / "docs" / "zoo"  # the encoder zoo's committed results (benchmarks/encoder_zoo.py)
DIRECTIONS = ("en-de", "de-en", "en-fr", "fr-en")
BLOCK = re.compile(r"<!-- generated: (?P<name>[\w-]+) -->(?P<body>.*?)<!-- end: (?P=name) -->", re.S)
MINUS = "\u2212"
NUMBER = re.compile(r"(?<![\w.])\d+\.\d{3,}(?!\w)")  # a value as results are quoted: three or more decimals
# the CSLS row of docs/retrieval.md's comparison: measured by the command there, no committed line (the suite runs
# cosine retrieval only)
CSLS_ROW = "| csls | 0.444 | 0.279 | 17 | 1.49 | 0.033 | 0.187 ± 0.024 | 1.14 ± 0.15 | 0.011 ± 0.008 |"
# a number outside the blocks equal to a generated one by chance, not a copy of it: why
COINCIDENCES: dict[tuple[str, str], str] = {
    ("docs/retrieval.md", "0.212"): "corr version 4 on the crowded synthetic block of its test",
    ("docs/retrieval.md", "0.175"): "word TF-IDF's tie spread, a run with no committed line",
    ("docs/retrieval.md", "0.055"): "word TF-IDF's tie spread, a run with no committed line",
    ("docs/retrieval.md", "1.000"): "Cauchy's combined p, a definition's example",
    ("docs/retrieval.md", "0.026"): "0.05 x 13 / 25, Rüger's threshold",
    ("docs/real-data.md", "0.158"): "the real-data test's configuration (--limit 100), measured there",
    ("docs/real-data.md", "0.167"): "the real-data test's configuration (--limit 100), measured there",
    ("docs/real-data.md", "0.138"): "the real-data test's configuration (--limit 100), measured there",
    ("docs/real-data.md", "0.279"): "the real-data test's configuration (--limit 100), measured there",
    ("docs/encoder-zoo.md", "0.067"): "chance k / n at 150 items per side",
}


def _arrow(direction: str) -> str:
    return direction.replace("-", " \u2192 ")


def _pm(summary: Mapping[str, Any]) -> str:
    return "undefined" if summary.get("mean") is None else f"{summary['mean']:.3f} ± {summary['std'] or 0.0:.3f}"


def _signed(value: float, digits: int = 3) -> str:
    """A value with a typographic minus (and no minus for a value that rounds to zero)."""
    text = f"{value:.{digits}f}"
    return text.replace("-", MINUS) if text.strip("-0.") else text.lstrip("-")


class Numbers:
    """Everything the blocks quote, computed once from the committed results."""

    def __init__(self, results: Path = RESULTS) -> None:
        from harness.results.records import read_records
        from harness_tasks.retrieval.analysis import meta

        self.results = results
        self.ikea, _ = read_records(results / "ikea" / "results.jsonl")
        self.yisi, _ = read_records(results / "yisi" / "results.jsonl")
        self.commute_folder = results / "commute"
        self.commute, _ = read_records(self.commute_folder / "results.jsonl")
        with redirect_stderr(io.StringIO()):  # meta's warnings (none expected) do not belong in the docs
            self.meta = meta.meta_by_direction(
                meta.select(self.ikea, {}), resamples=meta.significance.RESAMPLES, bootstrap_seed=0
            )
        self.directions = {d: self.meta["directions"][d] for d in DIRECTIONS}
        self._zoo: dict[str, Any] | None = None
        self._default_records: list[Any] | None = None

    @property
    def default(self) -> list[Any]:
        """The default benchmark's lines (``leaderboard/results/default`` and ``default-pixels``, read when first
        asked)."""
        from harness.results.records import read_records

        if self._default_records is None:
            self._default_records = [
                record
                for folder in ("default", "default-pixels")
                for record in read_records(self.results / folder / "results.jsonl")[0]
            ]
        return self._default_records

    @property
    def zoo(self) -> dict[str, Any]:
        """``encoder_zoo.evidence`` of each data set of the zoo's committed results (computed when first asked)."""
        if self._zoo is None:
            encoder_zoo = _load("encoder_zoo")
            self._zoo = {folder: encoder_zoo.evidence(ZOO, folder) for folder in ("ikea", "shapes")}
        return self._zoo

    # ---- docs/ikea-meta-evaluation.md -------------------------------------------------------------

    def ikea_correlations(self) -> str:
        lines = [
            "| direction | Pearson (BkR, XLR) | Spearman (BkR, XLR) | Pearson (CORR, XLR) | Spearman (CORR, XLR) |",
            "|---|---|---|---|---|",
        ]
        for direction, result in self.directions.items():
            c = result["correlations"]
            cells = [_pm(c[task][kind]) for task in ("backretrieval", "corr") for kind in ("pearson", "spearman")]
            lines.append(f"| {_arrow(direction)} | " + " | ".join(cells) + " |")
        lines.append("| **paper, IKEA rows** | **0.97 – 0.98** | **0.92 – 0.98** | **0.69 – 0.76** | **0.63 – 0.71** |")
        return "\n".join(lines)

    def ikea_significance(self) -> str:
        from harness_tasks.retrieval.analysis import significance

        lines = [
            "| direction | Pearson: seeds p<0.05 | median p | combined p | Δr [95 % interval] "
            "| Spearman: seeds p<0.05 | median p | combined p | Δρ [95 % interval] |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for direction, result in self.directions.items():
            cells = []
            for method in ("pearson", "spearman"):
                tested = result["significance"][method]
                boot = tested["bootstrap"]
                cells += [
                    significance.significant_seeds(tested),
                    f"{tested['median_p']:.3f}",
                    f"{tested['combined_p']:.2f}",
                    f"{boot['difference']:+.3f} [{boot['low']:.3f}, {boot['high']:.3f}]",
                ]
            lines.append(f"| {_arrow(direction)} | " + " | ".join(cells) + " |")
        lines.append('| **paper** | | | **"significant across all metrics"** | | | | | |')
        return "\n".join(lines)

    def ikea_significance_summary(self) -> str:
        tests = [r["significance"][m] for r in self.directions.values() for m in ("pearson", "spearman")]
        counts = [_significant(t) for t in tests]
        above = {
            m: sum(r["significance"][m]["bootstrap"]["low"] > 0 for r in self.directions.values())
            for m in ("pearson", "spearman")
        }
        combined = min(t["combined_p"] for t in tests)
        return (
            f"for Pearson's r the bootstrap interval over models lies above 0 in {_count(above['pearson'])} "
            f"(for Spearman's rho in {_count(above['spearman'])}). What it does not support "
            f"with these {tests[0]['models']} models: a per-seed significance. Steiger's test reaches p < 0.05 on only "
            f"{min(counts)} to {max(counts)} of the {tests[0]['seeds_tested']} seeds, and "
            + (
                "no combined p valid under dependence is below 0.05"
                if combined >= 0.05
                else f"the smallest combined p valid under dependence is {combined:.2f}"
            )
            + "."
        )

    def ikea_seed_range(self) -> str:
        """How many seeds reach Steiger p < 0.05 with the ten IKEA encoders, fewest to most over directions and
        correlations (as in ``ikea_significance_summary``)."""
        tests = [r["significance"][m] for r in self.directions.values() for m in ("pearson", "spearman")]
        counts = [_significant(t) for t in tests]
        return f"{min(counts)} to {max(counts)} of {tests[0]['seeds_tested']} seeds"

    def bkr_over_pairs(self) -> str:
        aggregation = self.meta["aggregation"]
        pairs = aggregation["table"]["pairs"]
        lines = [
            "| model | " + " | ".join(_arrow(p) for p in pairs) + " | average |",
            "|---" * (len(pairs) + 2) + "|",
        ]
        for row in aggregation["table"]["rows"]:
            cells = ["—" if row["scores"][p] is None else f"{row['scores'][p]:.3f}" for p in pairs]
            average = "n/a" if row["average"] is None else f"{row['average']:.3f}"
            lines.append(f"| {row['model']} | " + " | ".join(cells) + f" | {average} |")
        return "\n".join(lines)

    def bkr_chance(self) -> str:
        chance = self.meta["aggregation"]["chance"]
        used = {d: self._bkr_used(d) for d in DIRECTIONS}
        return (
            f"Chance k / n'' is {chance['en-de']:.3f} (en-de, de-en; n'' = {used['en-de']}) and "
            f"{chance['en-fr']:.3f} (en-fr, fr-en; n'' = {used['en-fr']})."
        )

    def best_vs_others(self) -> str:
        tested = self.meta["aggregation"]["best_vs_others"]
        lines = [
            f"| model | pairs × seeds | {tested['best']} − model | better / worse | p | p (Holm) |",
            "|---|---|---|---|---|---|",
        ]
        for row in tested["others"]:
            lines.append(
                f"| {row['model']} | {row['n']} | {row['mean_difference']:+.4f} | {row['better']} / {row['worse']} "
                f"| {_p(row['p'])} | {_p(row['p_holm'])} |"
            )
        return "\n".join(lines)

    def _bkr_used(self, direction: str) -> int:
        src, tgt = direction.split("-")
        return next(
            int(r.extra["n_used"])
            for r in self.ikea
            if r.task == "backretrieval" and (r.task_args.get("src"), r.task_args.get("tgt")) == (src, tgt)
        )

    # ---- docs/retrieval.md -------------------------------------------------------------------------

    def meta_output(self) -> str:
        from harness_tasks.retrieval.analysis import significance

        tested = self.directions["en-de"]["significance"]
        return "```\n" + "\n".join(significance.format_rows({k: tested[k] for k in ("pearson", "spearman")})) + "\n```"

    def cosine_row(self) -> str:
        """The CSLS comparison: the committed minilm IKEA en-de lines (cosine retrieval), then ``CSLS_ROW``."""

        def line(task: str) -> Any:
            return next(
                r
                for r in self.ikea
                if r.task == task
                and r.model["name"] == "minilm"
                and (r.task_args["src"], r.task_args["tgt"]) == ("en", "de")
            )

        xlr, bkr = line("xlr"), line("backretrieval")
        m, b, sd = xlr.metrics, bkr.metrics, bkr.metrics_std
        return (
            "| retrieval | xlr R@10 | MRR | median rank | N10 skew | anti-hubs | BkR R@10 | BkR N10 skew | BkR anti-hubs |\n"
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n"
            f"| cosine | {m['recall@k']:.3f} | {m['mrr']:.3f} | {m['median_rank']:.0f} | {m['hub_skew']:.2f} "
            f"| {m['antihubs']:.3f} | {b['recall@k']:.3f} ± {sd['recall@k']:.3f} | {b['hub_skew']:.2f} ± "
            f"{sd['hub_skew']:.2f} | {b['antihubs']:.3f} ± {sd['antihubs']:.3f} |\n" + CSLS_ROW
        )

    # ---- docs/real-data.md -------------------------------------------------------------------------

    def real_data_correlations(self) -> str:
        lines = [
            "| | models | BkR–XLR Pearson | BkR–XLR Spearman | CORR–XLR Pearson | CORR–XLR Spearman |",
            "|---|---|---|---|---|---|",
        ]
        for direction, result in self.directions.items():
            c = result["correlations"]
            cells = [_pm(c[task][kind]) for task in ("backretrieval", "corr") for kind in ("pearson", "spearman")]
            lines.append(f"| **this harness**, {direction} | {len(result['models'])} | " + " | ".join(cells) + " |")
        lines.append("| Fain et al. (SIGIR 2021), IKEA | their models | .97–.98 | .92–.98 | .69–.76 | .63–.71 |")
        return "\n".join(lines)

    def real_data_scores(self) -> str:
        columns = [f"{pair} {name}" for pair in ("en-de", "en-fr") for name in ("XLR R@10", "BkR R@10", "CORR ρ")]
        lines = ["| model | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
        cells: dict[str, dict[str, str]] = {}
        order: dict[str, float] = {}
        for direction in ("en-de", "en-fr"):
            for model in self.directions[direction]["models"]:
                row = cells.setdefault(model["label"], {})
                row[f"{direction} XLR R@10"] = f"{model['xlr']['mean']:.3f}"
                for task, name in (("backretrieval", "BkR R@10"), ("corr", "CORR ρ")):
                    value = model[task]
                    row[f"{direction} {name}"] = f"{_signed(value['mean'])} ± {value['std']:.3f}"
                if direction == "en-de":
                    order[model["label"]] = model["xlr"]["mean"]
        for label in sorted(cells, key=lambda m: (-order.get(m, -math.inf), m)):
            lines.append(f"| {label} | " + " | ".join(cells[label].get(c, "—") for c in columns) + " |")
        return "\n".join(lines)

    def real_data_commute(self) -> str:
        """Per pair: TC, GTC, ties (results lines), the reference translations' perplexities and the gap within a
        tuple (the ``commute_tc`` per-sample log)."""
        import json

        import numpy as np

        lines = [
            "| pair | tuples | TC | GTC | ties | lines | ppl median | ppl geometric mean | ppl 5th-95th percentile "
            "| median abs log-ppl gap within a tuple |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for lang in ("fr", "de", "cs"):
            by_task = {r.task: r for r in self.commute if r.task_args.get("lang") == lang}
            tc, gtc = by_task["commute_tc"], by_task["commute_gtc"]
            text = (self.commute_folder / str(tc.samples_file)).read_text(encoding="utf-8")
            samples = [json.loads(line) for line in text.splitlines() if line.strip()]
            # each CoMMuTE line's reference translation under its own image: slots a|a and b|b
            ppl = np.array([s["ppl"][k] for s in samples for k in ("a|a", "b|b") if s["ppl"][k] is not None])
            gaps = [abs(np.log(s["ppl"]["a|a"]) - np.log(s["ppl"]["a|inc_a"])) for s in samples]
            lines.append(
                f"| en-{lang} | {len(samples)} | {tc.metrics['tc']:.4f} | {gtc.metrics['gtc']:.4f} "
                f"| {tc.metrics['ties']:.4f} | {len(ppl)} | {np.median(ppl):.1f} | {np.exp(np.log(ppl).mean()):.1f} "
                f"| {np.percentile(ppl, 5):.1f}-{np.percentile(ppl, 95):.1f} | {np.median(gaps):.3f} |"
            )
        return "\n".join(lines)

    def real_data_yisi(self) -> str:
        from harness_tasks.yisi.ranking import mean_f_beta_chance

        by = {(r.task, r.task_args["tgt"]): r for r in self.yisi}
        lines = [
            "| pair | YiSi-2 ROC AUC | bert_sum ROC AUC | YiSi-2 mean F1 / F2 | bert_sum mean F1 / F2 "
            "| chance F1 / F2 | YiSi-2 AUC by kind: mismatch / clause drop / word swap |",
            "|---|---|---|---|---|---|---|",
        ]
        for tgt in ("de", "fr", "cs"):
            yisi, bert = by["yisi2_filter", tgt].metrics, by["bert_sum_filter", tgt].metrics
            auc = [yisi["roc_auc"], bert["roc_auc"]]
            shown = [f"**{v:.4f}**" if v == max(auc) else f"{v:.4f}" for v in auc]
            pairs, bad = int(yisi["n_good"] + yisi["n_bad"]), int(yisi["n_bad"])
            chance = [mean_f_beta_chance(pairs, bad, beta) for beta in (1.0, 2.0)]
            kinds = " / ".join(f"{yisi[f'roc_auc[{k}]']:.3f}" for k in ("mismatch", "clause_drop", "word_swap"))
            lines.append(
                f"| en-{tgt} | {shown[0]} | {shown[1]} | {yisi['mean_f1']:.4f} / {yisi['mean_f2']:.4f} "
                f"| {bert['mean_f1']:.4f} / {bert['mean_f2']:.4f} | {chance[0]:.3f} / {chance[1]:.3f} | {kinds} |"
            )
        return "\n".join(lines)

    def e5_twin(self) -> str:
        """How far e5-small-hf (mean pooling) scores from e5-small: the largest difference of the mean XLR, BkR or
        CORR over the four directions, and where."""
        found = []
        for direction, result in self.directions.items():
            models = {m["label"]: m for m in result["models"]}
            hf, nano = models["e5-small-hf(pooling=default)"], models["e5-small"]
            for task, name in (("xlr", "XLR"), ("backretrieval", "BkR"), ("corr", "CORR")):
                found.append((abs(hf[task]["mean"] - nano[task]["mean"]), f"{direction} {name}"))
        largest, where = max(found)
        return f"within {largest:.4f} of `e5-small` (the largest difference of a mean, {where})"

    def yisi_subset(self) -> str:
        """ROC AUC of YiSi-2 / bert_sum on the first 400 rows of each committed per-sample log."""
        subset = {tgt: self._yisi_subset_auc(tgt) for tgt in ("de", "fr", "cs")}
        return ", ".join(f"en-{tgt} {yisi:.3f} / {bert:.3f}" for tgt, (yisi, bert) in subset.items())

    def yisi_subset_fr(self) -> str:
        """YiSi-2 minus bert_sum on en-fr: all rows, and the first 400 rows of the logs."""
        by = {(r.task, r.task_args["tgt"]): r.metrics["roc_auc"] for r in self.yisi}
        yisi, bert = self._yisi_subset_auc("fr")
        whole = by["yisi2_filter", "fr"] - by["bert_sum_filter", "fr"]
        return f"{_signed(whole, 4)} on all rows, {_signed(yisi - bert, 3)} on the first 400"

    def _yisi_subset_auc(self, tgt: str, rows: int = 400) -> tuple[float, float]:
        import gzip
        import json

        from harness_tasks.yisi.ranking import roc_auc

        found = []
        for task, score in (("yisi2_filter", "yisi2"), ("bert_sum_filter", "bert_sum")):
            record = next(r for r in self.yisi if r.task == task and r.task_args["tgt"] == tgt)
            path = self.results / "yisi" / str(record.samples_file)
            path = path if path.is_file() else path.with_name(path.name + ".gz")
            lines = gzip.decompress(path.read_bytes()).decode().splitlines()[1 : rows + 1]  # after the header
            samples = [json.loads(line) for line in lines]
            auc = roc_auc([s[score] for s in samples], [s["label"] for s in samples])
            assert auc is not None  # both labels occur in the first rows
            found.append(auc)
        return found[0], found[1]

    # ---- README.md and docs/default-benchmark.md: the built-in default benchmark -------------------------------

    def _default(self, task: str, model: str, tgt: str = "de", g: str = "image_model") -> Any:
        """The default group's line of ``task`` for ``model`` on en-``tgt`` with g from ``g`` (``image_model``:
        efficientnet-lite0, ``image_features``: the data set's pixel statistics; xlr has no g)."""
        return next(
            r
            for r in self.default
            if r.task == task
            and r.model["name"] == model
            and r.task_args.get("tgt") == tgt
            and (task == "xlr" or r.extra.get("g", {}).get("source") == g)
        )

    def default_readme(self) -> str:
        def pair(model: str) -> str:
            xlr, bkr = (self._default(task, model).metrics["recall@k"] for task in ("xlr", "backretrieval"))
            return f"{xlr:.2f} and {bkr:.2f}"

        return (
            f"XLR R@10 {pair('e5-small-hf').replace(' and ', ' and BkR R@10 ')}, the English-only `minilm` "
            f"{pair('minilm')}, a random encoder {pair('random-encoder')}"
        )

    def default_chance(self) -> str:
        xlr, bkr = (self._default(task, "random-encoder").extra["n_used"] for task in ("xlr", "backretrieval"))
        return f"{10 / xlr:.3f} for xlr, {10 / bkr:.3f} for backretrieval"

    def default_table(self) -> str:
        lines = [
            "| text encoder | xlr R@10 | MRR | BkR R@10, g = efficientnet-lite0 | CORR, g = efficientnet-lite0 "
            "| BkR R@10, g = pixel statistics | CORR, g = pixel statistics |",
            "|---|---|---|---|---|---|---|",
        ]
        for model, shown in DEFAULT_MODELS.items():
            xlr = self._default("xlr", model).metrics
            cells = [f"{xlr['recall@k']:.3f}", f"{xlr['mrr']:.3f}"]
            for g in ("image_model", "image_features"):
                cells += [_mean_std(self._default(task, model, g=g)) for task in ("backretrieval", "corr")]
            lines.append(f"| {shown} | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def default_pairs(self) -> str:
        lines = ["| text encoder | en-fr | en-cs |", "|---|---|---|"]
        for model, shown in DEFAULT_MODELS.items():
            cells = [
                f"{self._default('xlr', model, tgt).metrics['recall@k']:.3f} / "
                f"{_mean_std(self._default('backretrieval', model, tgt))}"
                for tgt in ("fr", "cs")
            ]
            lines.append(f"| {shown} | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    # ---- docs/encoder-zoo.md ------------------------------------------------------------------------

    def zoo_evidence(self) -> str:
        lines = [
            "| data | direction | ρ or r | all: encoders (families) | Δ | interval over models | interval over families "
            "| XLR ≥ 0.5: encoders (families) | Δ | seeds p<0.05 | combined p | interval over families |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for where, both in self._zoo_directions():
            for method, symbol in (("pearson", "r"), ("spearman", "ρ")):
                every, strong = both["all"], both["strong"]
                lines.append(
                    f"| {where} | {symbol} "
                    f"| {every['models']} ({every['families']}) | {_num(every[method]['difference'])} "
                    f"| {_interval(every[method]['models'])} | {_interval(every[method]['families'])} "
                    f"| {strong['models']} ({strong['families']}) | {_num(strong[method]['difference'])} "
                    f"| {strong[method]['seeds']} | {_p(strong[method]['combined_p'])} "
                    f"| {_interval(strong[method]['families'])} |"
                )
        return "\n".join(lines)

    def _zoo_directions(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Per data set and direction of the zoo: "data | direction" as the tables show it, and its evidence."""
        for folder, found in self.zoo.items():
            for direction, both in found["directions"].items():
                yield f"{_zoo_data(folder)} | {_arrow(direction)}", both

    def zoo_all(self) -> str:
        lines = [
            "| data | direction | models | Pearson: seeds p<0.05 | median p | combined p | Δr [95 % interval] "
            "| Spearman: seeds p<0.05 | median p | combined p | Δρ [95 % interval] |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for where, both in self._zoo_directions():
            every = both["all"]
            cells = [
                cell
                for method in ("pearson", "spearman")
                for cell in (
                    every[method]["seeds"],
                    _p_zoo(every[method]["median_p"]),
                    _p_zoo(every[method]["combined_p"]),
                    f"{_num(every[method]['difference'])} {_interval(every[method]['models'])}",
                )
            ]
            lines.append(f"| {where} | {every['models']} | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def zoo_correlations(self) -> str:
        def span(folder: str, key: str) -> str:
            values = [both["all"][key] for both in self.zoo[folder]["directions"].values()]
            return f"{min(values):.2f} to {max(values):.2f}"

        return (
            f"Pearson's r(BkR, XLR) is {span('ikea', 'r_backretrieval')} on IKEA ({span('shapes', 'r_backretrieval')} "
            f"on xling-shapes) and r(CORR, XLR) {span('ikea', 'r_corr')} ({span('shapes', 'r_corr')})"
        )

    def zoo_subsamples(self) -> str:
        """Pearson, the median over the seeded draws of each size (``docs/zoo/subsamples.json``, written by
        ``encoder_zoo.py --analyse-only`` from the committed results)."""
        import json

        import numpy as np

        tests = json.loads((ZOO / "subsamples.json").read_text(encoding="utf-8"))["tests"]
        shown = {"ikea": ("en-de", "de-en", "en-fr", "fr-en"), "shapes": ("en-de", "en-fr", "en-cs")}
        lines = [
            "| data | direction | the ten: seeds p<0.05, combined p | 10 drawn | 20 drawn | 30 drawn | 40 drawn | all |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for folder, directions in shown.items():
            for direction in directions:
                found = tests[folder][direction]
                groups: dict[str, list[dict[str, Any]]] = {}
                for label, one in found.items():
                    groups.setdefault("ten" if label == "ten" else str(one["models"]), []).append(one["pearson"])
                cells = [
                    f"{np.median([v['significant_seeds'] for v in values]):.0f}/{values[0]['seeds']}, "
                    f"{_p_zoo(float(np.median([v['combined_p'] for v in values])))}"
                    for values in groups.values()
                ]
                lines.append(f"| {_zoo_data(folder)} | {_arrow(direction)} | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def zoo_table2(self) -> str:
        def row(folder: str, model: str) -> dict[str, Any]:
            return next(r for r in self.zoo[folder]["best_vs_others"]["others"] if r["model"] == model)

        ikea, shapes = row("ikea", "e5-small"), row("shapes", "e5-small")
        best = {self.zoo[f]["best_vs_others"]["best"] for f in ("ikea", "shapes")}
        assert best == {"zoo-e5-l12-mean"}, best  # the sentence names it
        closest = min(self.zoo["ikea"]["best_vs_others"]["others"], key=lambda r: r["mean_difference"])["model"]
        assert closest == "e5-small", closest
        worst_p = max(r["p_holm"] for r in self.zoo["ikea"]["best_vs_others"]["others"])
        return (
            f"beats every other member at Holm-adjusted p ≤ {_p(worst_p)} on IKEA, the closest being `e5-small` "
            f"(the same weights, another runtime: {ikea['mean_difference']:+.4f}, p {_p(ikea['p_holm'])}); on "
            f"xling-shapes `e5-small` is not separable ({shapes['better']} better / {shapes['worse']} worse, "
            f"p {_p(shapes['p_holm'])}) and the CLS twin only at p {_p(row('shapes', 'zoo-e5-l12-cls')['p_holm'])}"
        )

    def zoo_left_out(self) -> str:
        return "; ".join(
            f"{_zoo_data(folder)}: {', '.join(f'`{n}`' for n in found['left_out'])} "
            f"({len(found['left_out'])}, {next(iter(found['directions'].values()))['all']['models']} tested)"
            for folder, found in self.zoo.items()
        )

    def zoo_verdict(self) -> str:
        def above(folder: str, subset: str, method: str) -> int:
            found = self.zoo[folder]["directions"].values()
            return sum(d[subset][method]["families"][0] > 0 for d in found)

        ikea, shapes = (len(self.zoo[f]["directions"]) for f in ("ikea", "shapes"))
        by_direction = {d: both["strong"] for d, both in self.zoo["ikea"]["directions"].items()}
        strong = list(by_direction.values())
        significant = sum(s["pearson"]["combined_p"] < 0.05 for s in strong)
        differences = ", ".join(f"{_num(s['pearson']['difference'], 2)} ({d})" for d, s in by_direction.items())
        return (
            f"Over families, the interval of Δr lies above 0 in {above('ikea', 'all', 'pearson')} of {ikea} IKEA "
            f"directions (of Δρ in {above('ikea', 'all', 'spearman')}) and in {above('shapes', 'all', 'pearson')} "
            f"of {shapes} xling-shapes directions (Δρ: {above('shapes', 'all', 'spearman')}). Among the strong "
            f"encoders (XLR ≥ {_load('encoder_zoo').STRONG_XLR}) of IKEA, {min(s['models'] for s in strong)} to {max(s['models'] for s in strong)} "
            f"of them from {min(s['families'] for s in strong)} to {max(s['families'] for s in strong)} families, "
            f"Δr is {differences}, the combined p is below "
            f"0.05 in {significant} of {ikea} directions and the interval over families lies above 0 in "
            f"{above('ikea', 'strong', 'pearson')} (Δρ: {above('ikea', 'strong', 'spearman')})."
        )


DEFAULT_MODELS = {
    "e5-small-hf": "`e5-small-hf`",
    "minilm": "`minilm` (English-only)",
    "random-encoder": "`random-encoder`",
}


def _mean_std(record: Any) -> str:
    """A line's main metric, mean ± standard deviation over seeds."""
    metric = record.main_metric
    return f"{_signed(record.metrics[metric])} ± {record.metrics_std[metric]:.3f}"


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:+.{digits}f}"


def _p_zoo(value: float | None) -> str:
    """A p-value as the zoo's tables show it (``encoder_zoo._p``)."""
    return "n/a" if value is None else f"{value:.1e}" if value < 0.001 else f"{value:.3f}"


def _zoo_data(folder: str) -> str:
    return {"ikea": "IKEA"}.get(folder, folder)


def _interval(bounds: Sequence[float | None]) -> str:
    return "n/a" if bounds[0] is None or bounds[1] is None else f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"


def _load(name: str) -> Any:
    """A sibling script of ``benchmarks/`` as a module (it is not a package)."""
    import importlib.util

    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


def _significant(tested: Mapping[str, Any]) -> int:
    return round(tested["share_significant"] * tested["seeds_tested"])


def _count(n: int) -> str:
    """How many of the four directions, in words."""
    return "all four directions" if n == 4 else f"{('none', 'one', 'two', 'three')[n]} of the four directions"


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


GENERATORS: dict[str, Callable[[Numbers], str]] = {
    "ikea-correlations": Numbers.ikea_correlations,
    "ikea-significance": Numbers.ikea_significance,
    "ikea-significance-summary": Numbers.ikea_significance_summary,
    "ikea-seed-range": Numbers.ikea_seed_range,
    "bkr-over-pairs": Numbers.bkr_over_pairs,
    "bkr-chance": Numbers.bkr_chance,
    "best-vs-others": Numbers.best_vs_others,
    "meta-output": Numbers.meta_output,
    "csls-table": Numbers.cosine_row,
    "real-data-correlations": Numbers.real_data_correlations,
    "real-data-scores": Numbers.real_data_scores,
    "real-data-commute": Numbers.real_data_commute,
    "real-data-yisi": Numbers.real_data_yisi,
    "default-readme": Numbers.default_readme,
    "default-chance": Numbers.default_chance,
    "default-table": Numbers.default_table,
    "default-pairs": Numbers.default_pairs,
    "e5-twin": Numbers.e5_twin,
    "yisi-subset": Numbers.yisi_subset,
    "yisi-subset-fr": Numbers.yisi_subset_fr,
    "zoo-all": Numbers.zoo_all,
    "zoo-correlations": Numbers.zoo_correlations,
    "zoo-subsamples": Numbers.zoo_subsamples,
    "zoo-evidence": Numbers.zoo_evidence,
    "zoo-table2": Numbers.zoo_table2,
    "zoo-left-out": Numbers.zoo_left_out,
    "zoo-verdict": Numbers.zoo_verdict,
}


def render(text: str, blocks: Mapping[str, str]) -> str:
    """``text`` with every marked block's body replaced by its generated content (a block on one line stays inline)."""

    def replace(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in blocks:
            raise KeyError(f"no generator for the block {name!r}")
        inline = "\n" not in match.group("body")
        body = blocks[name] if inline else f"\n{blocks[name]}\n"
        return f"<!-- generated: {name} -->{body}<!-- end: {name} -->"

    return BLOCK.sub(replace, text)


def hand_written_twins(blocks: Mapping[str, str], docs: Sequence[str] = DOCS, root: Path = ROOT) -> list[str]:
    """``doc:line: number`` for every number (three or more decimals, as results are quoted) written by hand in
    ``docs``, outside their generated blocks, that a generated block also shows: a copy that can go stale. A
    number that only happens to be equal is listed in ``COINCIDENCES`` with the reason."""
    generated = {number for body in blocks.values() for number in NUMBER.findall(body)}
    found = []
    for doc in docs:
        text = BLOCK.sub(lambda match: "\n" * match.group(0).count("\n"), (root / doc).read_text(encoding="utf-8"))
        for line_number, line in enumerate(text.splitlines(), 1):
            for number in NUMBER.findall(line):
                if number in generated and (doc, number) not in COINCIDENCES:
                    found.append(f"{doc}:{line_number}: {number}")
    return found


def block_names(text: str) -> list[str]:
    """The names of the marked blocks in ``text``, in order."""
    return [m.group("name") for m in BLOCK.finditer(text)]


def generate(numbers: Numbers | None = None) -> dict[str, str]:
    """Every block's content."""
    numbers = numbers or Numbers()
    return {name: function(numbers) for name, function in GENERATORS.items()}


def differences(blocks: Mapping[str, str], docs: Sequence[str] = DOCS, root: Path = ROOT) -> dict[str, str]:
    """Per doc whose blocks differ from ``blocks``: a unified diff of its text against the regenerated one."""
    found = {}
    for doc in docs:
        text = (root / doc).read_text(encoding="utf-8")
        wanted = render(text, blocks)
        if wanted != text:
            found[doc] = "".join(
                difflib.unified_diff(text.splitlines(True), wanted.splitlines(True), doc, f"{doc} (regenerated)")
            )
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 when a doc differs")
    parser.add_argument(
        "--results", type=Path, default=RESULTS, help="the results folder (default leaderboard/results)"
    )
    args = parser.parse_args(argv)
    blocks = generate(Numbers(args.results))
    used = {name for doc in DOCS for name in block_names((ROOT / doc).read_text(encoding="utf-8"))}
    if set(blocks) - used:
        print(f"blocks no doc shows: {', '.join(sorted(set(blocks) - used))}", file=sys.stderr)
        return 1
    found = differences(blocks)
    twins = hand_written_twins(blocks)
    if twins:
        print("numbers written by hand that a generated block shows:\n" + "\n".join(twins), file=sys.stderr)
    if args.check:
        for diff in found.values():
            sys.stdout.write(diff)
        print(f"{len(found)} of {len(DOCS)} docs differ from the committed results" if found else "docs up to date")
        return 1 if found or twins else 0
    for doc in found:
        path = ROOT / doc
        path.write_text(render(path.read_text(encoding="utf-8"), blocks), encoding="utf-8")
        print(f"rewrote {doc}")
    if not found:
        print("docs up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
