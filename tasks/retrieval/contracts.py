"""The retrieval family's role contracts (Fain, Twomey and Bollegala, SIGIR 2021): what an xlr-, backretrieval- or
corr-like task offers, and how meta pairs them. Light on purpose: the family's registration imports it."""

from harness.plugins.contracts import Argument, Pairing, RoleContract

SOURCE = Argument("lang.source", "src", "language of the source (query) texts")
TARGET = Argument("lang.target", "tgt", "language of the target (candidate) texts")
SAMPLE = Argument("sample.size", "n", "items drawn per seed")
CUT_OFF = Argument("retrieval.k", "k", "cut-off of Recall@k")
TIES = Argument("retrieval.ties", "ties", "how tied similarities count in a rank")
SCORING = Argument("retrieval.scoring", "retrieval", "how texts are ranked: cosine or CSLS")
CSLS_K = Argument("retrieval.csls_k", "csls_k", "the neighbourhood of CSLS")

XLR = RoleContract(
    "xlr",
    arguments=(SOURCE, TARGET, CUT_OFF),
    metrics=("recall@k", "mrr", "median_rank"),
    description="cross-lingual retrieval of each source's own target among parallel targets (the ground truth)",
    reference="Fain, Twomey and Bollegala, SIGIR 2021, sect. 3 (XLR)",
)
BACKRETRIEVAL = RoleContract(
    "backretrieval",
    arguments=(SOURCE, TARGET, CUT_OFF),
    metrics=("recall@k",),
    description="text retrieval into disjoint targets, then image retrieval back to the source's own image",
    reference="Fain, Twomey and Bollegala, SIGIR 2021, sect. 3 (BackRetrieval)",
)
CORR = RoleContract(
    "corr",
    arguments=(SOURCE, TARGET),
    metrics=("spearman",),
    description="Spearman correlation of text and image similarities over source x target pairs (baseline)",
    reference="Fain, Twomey and Bollegala, SIGIR 2021, sect. 4.2 (CORR)",
)
META = Pairing(
    "meta",
    roles=("xlr", "backretrieval", "corr"),
    same=(SOURCE.meaning, TARGET.meaning, SAMPLE.meaning, CUT_OFF.meaning, TIES.meaning),
)
CONTRACTS = (XLR, BACKRETRIEVAL, CORR)
PAIRINGS = (META,)
