"""The retrieval family's role contracts (Fain, Twomey and Bollegala, SIGIR 2021): what an xlr-, backretrieval- or
corr-like task offers, and how meta pairs them. Light on purpose: the family's registration imports it."""

from harness.plugins.contracts import Argument, Pairing, RoleContract, known_arguments

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
    optional=(SAMPLE, TIES, SCORING, CSLS_K),
)
BACKRETRIEVAL = RoleContract(
    "backretrieval",
    arguments=(SOURCE, TARGET, CUT_OFF),
    metrics=("recall@k",),
    description="text retrieval into disjoint targets, then image retrieval back to the source's own image",
    reference="Fain, Twomey and Bollegala, SIGIR 2021, sect. 3 (BackRetrieval)",
    optional=(SAMPLE, TIES, SCORING, CSLS_K),
)
CORR = RoleContract(
    "corr",
    arguments=(SOURCE, TARGET),
    metrics=("spearman",),
    description="Spearman correlation of text and image similarities over source x target pairs (baseline)",
    reference="Fain, Twomey and Bollegala, SIGIR 2021, sect. 4.2 (CORR)",
    optional=(SAMPLE,),
)
META = Pairing(
    "meta",
    roles=("xlr", "backretrieval", "corr"),
    same=tuple(a.meaning for a in (SOURCE, TARGET, SAMPLE, CUT_OFF, TIES, SCORING, CSLS_K)),
)
CONTRACTS = (XLR, BACKRETRIEVAL, CORR)
PAIRINGS = (META,)
KNOWN = known_arguments(CONTRACTS)  # meaning -> argument, for results lines written before meanings were recorded
