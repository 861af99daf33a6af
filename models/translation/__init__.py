"""Built-in plugin: translation scorers (text-only seq2seq, causal LM, VGAMT, Gated Fusion, CLIP-Trans).

Registrations only: nothing heavy is imported until a scorer is used.
"""

from harness.plugins.hookspecs import hookimpl

CAUSAL_MODEL_TYPES = (
    "gpt2",
    "gptj",
    "gpt_neox",
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen3",
    "gemma",
    "gemma2",
    "phi",
    "phi3",
    "opt",
    "bloom",
    "falcon",
    "olmo",
)


@hookimpl
def register_models(register):
    register(
        "seq2seq",
        "harness_models.translation.seq2seq:Seq2SeqScorer",
        "Text-only translation scorer for any Hugging Face seq2seq model (Marian, mBART-50, M2M100, NLLB).",
        default_for=("translation_scorer",),
    )
    register(
        "causal-lm",
        "harness_models.translation.causal:CausalLMScorer",
        "Decoder-only LM scoring the translation as the continuation of a prompt built from the source.",
        config_model_types=CAUSAL_MODEL_TYPES,
    )
    register(
        "vgamt",
        "harness_models.translation.vgamt:VgamtScorer",
        "VGAMT (Futeral et al. 2023): mBART-50 + CLIP ViT-B/32 image token + adapters; needs checkpoint=PATH.",
        config_model_types=("vgamt",),
        preset={"mbart": "facebook/mbart-large-50", "clip": "openai/clip-vit-base-patch32"},
    )
    register(
        "gated-fusion",
        "harness_models.translation.gated_fusion:GatedFusionScorer",
        "Gated Fusion MMT (Wu et al. 2021): transformer + gated ResNet-50 pooled features; gate=learned|0.25|0.5|0.75.",
        config_model_types=("gated_fusion",),
        preset={"image_model": "microsoft/resnet-50"},
    )
    register(
        "cliptrans",
        "harness_models.translation.cliptrans:ClipTransScorer",
        "CLIP-Trans (Gupta et al. 2023): mBART-50 with a CLIP visual prefix from a mapping network.",
        config_model_types=("cliptrans",),
        preset={"mbart": "facebook/mbart-large-50", "clip": "openai/clip-vit-base-patch32"},
    )


@hookimpl
def register_commands(register):
    register(
        "convert",
        "harness_models.translation.convert_command:COMMAND",
        "Convert an original checkpoint to a harness model folder (gated-fusion: the authors' fairseq .pt).",
    )
