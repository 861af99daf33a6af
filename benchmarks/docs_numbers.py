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
en-de; in docs/real-data.md the correlation rows, the per-encoder scores, the CoMMuTE statistics and
the YiSi-2 table.
"""

from __future__ import annotations

import argparse
import difflib
import io
import math
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import redirect_stderr
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "leaderboard" / "results"
DOCS = ("docs/ikea-meta-evaluation.md", "docs/retrieval.md", "docs/real-data.md", "docs/encoder-zoo.md")
ZOO = ROOT / "docs" / "zoo"  # the encoder zoo's committed results (benchmarks/encoder_zoo.py)
DIRECTIONS = ("en-de", "de-en", "en-fr", "fr-en")
BLOCK = re.compile(r"<!-- generated: (?P<name>[\w-]+) -->(?P<body>.*?)<!-- end: (?P=name) -->", re.S)
MINUS = "\u2212"


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

    # ---- docs/encoder-zoo.md ------------------------------------------------------------------------

    def zoo_evidence(self) -> str:
        lines = [
            "| data | direction | ρ or r | all: encoders (families) | Δ | interval over models | interval over families "
            "| XLR ≥ 0.5: encoders (families) | Δ | seeds p<0.05 | combined p | interval over families |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for folder, found in self.zoo.items():
            for direction, both in found["directions"].items():
                for method, symbol in (("pearson", "r"), ("spearman", "ρ")):
                    every, strong = both["all"], both["strong"]
                    lines.append(
                        f"| {_zoo_data(folder)} | {_arrow(direction)} | {symbol} "
                        f"| {every['models']} ({every['families']}) | {_num(every[method]['difference'])} "
                        f"| {_interval(every[method]['models'])} | {_interval(every[method]['families'])} "
                        f"| {strong['models']} ({strong['families']}) | {_num(strong[method]['difference'])} "
                        f"| {strong[method]['seeds']} | {_p(strong[method]['combined_p'])} "
                        f"| {_interval(strong[method]['families'])} |"
                    )
        return "\n".join(lines)

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


def _num(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:+.{digits}f}"


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
    "bkr-over-pairs": Numbers.bkr_over_pairs,
    "bkr-chance": Numbers.bkr_chance,
    "best-vs-others": Numbers.best_vs_others,
    "meta-output": Numbers.meta_output,
    "real-data-correlations": Numbers.real_data_correlations,
    "real-data-scores": Numbers.real_data_scores,
    "real-data-commute": Numbers.real_data_commute,
    "real-data-yisi": Numbers.real_data_yisi,
    "zoo-evidence": Numbers.zoo_evidence,
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
    args = parser.parse_args(argv)
    blocks = generate()
    used = {name for doc in DOCS for name in block_names((ROOT / doc).read_text(encoding="utf-8"))}
    if set(blocks) - used:
        print(f"blocks no doc shows: {', '.join(sorted(set(blocks) - used))}", file=sys.stderr)
        return 1
    found = differences(blocks)
    if args.check:
        for diff in found.values():
            sys.stdout.write(diff)
        print(f"{len(found)} of {len(DOCS)} docs differ from the committed results" if found else "docs up to date")
        return 1 if found else 0
    for doc in found:
        path = ROOT / doc
        path.write_text(render(path.read_text(encoding="utf-8"), blocks), encoding="utf-8")
        print(f"rewrote {doc}")
    if not found:
        print("docs up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
