"""Registrations only: no heavy imports here, so `harness list` stays fast."""

from harness import hookimpl


@hookimpl
def register_tasks(register):
    register(
        "bitext_mining",
        "harness_bitext.mining:BitextMining",
        "Nearest-neighbour translation retrieval accuracy, cosine and margin-based (xsim).",
    )


@hookimpl
def register_models(register):
    register(
        "tfidf-char",
        "harness_bitext.tfidf:CharTfidfEncoder",
        "Character n-gram TF-IDF text encoder (scikit-learn), IDF fitted per language side.",
    )


@hookimpl
def register_families(register):
    register("bitext", "harness_bitext.plots:PLOTS", "Bitext mining", tasks=("bitext_mining",))
