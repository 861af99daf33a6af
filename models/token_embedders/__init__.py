"""Built-in plugin: token embedders (layer-L vectors of Hugging Face encoders, and a lexical check).

Registrations only; nothing heavy is imported here.
"""

from harness.plugins.hookspecs import hookimpl

HF = "harness_models.token_embedders.hf:HFTokenEmbedder"


@hookimpl
def register_models(register):
    register(
        "hf-token-embedder",
        HF,
        "Any Hugging Face encoder as a token embedder: layer=L vectors (default 9), special tokens removed.",
        default_for=("token_embedder",),
    )
    register(
        "mbert-l9",
        HF,
        "bert-base-multilingual-cased, layer 9 token vectors (YiSi-2's model).",
        preset={"pretrained": "google-bert/bert-base-multilingual-cased", "layer": 9},
    )
    register(
        "xlmr-l9",
        HF,
        "xlm-roberta-base, layer 9 token vectors.",
        preset={"pretrained": "FacebookAI/xlm-roberta-base", "layer": 9},
    )
    register(
        "lexical-ngrams",
        "harness_models.token_embedders.lexical:LexicalNgramEmbedder",
        "Sanity check: hashed character n-gram vectors per word (lexical overlap only).",
    )
