"""Built-in plugin: image-pivoted cross-lingual retrieval (xlr, backretrieval, corr), its data and ``harness meta``.

Registrations only: the modules they name are imported when used, so ``harness list`` stays fast.
"""

from harness.plugins.hookspecs import hookimpl
from harness_tasks.retrieval.contracts import CONTRACTS, PAIRINGS


@hookimpl
def register_tasks(register):
    register(
        "xlr",
        "harness_tasks.retrieval.tasks:Xlr",
        "Cross-lingual retrieval Recall@k (also MRR, median rank) of source texts among their sample's targets.",
    )
    register(
        "backretrieval",
        "harness_tasks.retrieval.tasks:BackRetrieval",
        "BackRetrieval Recall@k: text retrieval into disjoint targets, image retrieval back (no parallel data).",
    )
    register(
        "corr",
        "harness_tasks.retrieval.tasks:Corr",
        "Spearman correlation of text and image cosine distances over source x target pairs (baseline).",
    )


@hookimpl
def register_datasets(register):
    register(
        "ikea",
        "harness_tasks.retrieval.ikea:IkeaLoader",
        "IKEA product descriptions (en-de, en-fr; test, val, test+val) with 2048-d image features.",
    )
    register(
        "image-text",
        "harness_tasks.retrieval.hf_dataset:ImageTextLoader",
        "Any Hub, save_to_disk or local JSONL/CSV/TSV/Parquet bilingual image-text data set, in the retrieval schema.",
    )


@hookimpl
def register_commands(register):
    register(
        "meta",
        "harness_tasks.retrieval.analysis.meta:COMMAND",
        "Meta-evaluation: correlate BackRetrieval and CORR with XLR across models (table, JSON, scatter plot).",
    )
    register(
        "calibrate",
        "harness_tasks.retrieval.analysis.calibrate:COMMAND",
        "Fit a monotone BackRetrieval-to-XLR map on parallel data (cross-validated), or apply one with intervals.",
    )
    register(
        "g-sweep",
        "harness_tasks.retrieval.analysis.g_quality:COMMAND",
        "How good must g be: degrade the image features, measure g's quality, meta-evaluate BkR at each level.",
    )


@hookimpl
def register_families(register):
    register(
        "retrieval",
        "harness_tasks.retrieval.plots:PLOTS",
        "Image-pivoted retrieval",
        tasks=("xlr", "backretrieval", "corr"),
        ranking="xlr",
        contracts=CONTRACTS,
        pairings=PAIRINGS,
        sections="harness_tasks.retrieval.plots:sections",
    )
