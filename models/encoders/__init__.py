"""Built-in plugin: Hugging Face text and image encoders, and their presets.

Registrations only: the adapters are imported when used, so ``harness list`` stays fast.
"""

from harness.plugins.hookspecs import hookimpl

TEXT = "harness_models.encoders.text:HFTextEncoder"
IMAGE = "harness_models.encoders.image:HFImageEncoder"


@hookimpl
def register_models(register):
    register(
        "hf-text-encoder",
        TEXT,
        "Any Hugging Face AutoModel (or sentence-transformers folder) pooled to one vector per text.",
        default_for=("text_encoder",),
    )
    register(
        "labse",
        TEXT,
        "LaBSE (sentence-transformers/LaBSE): CLS, dense, normalised.",
        preset={"pretrained": "sentence-transformers/LaBSE"},
    )
    register(
        "mbert",
        TEXT,
        "Multilingual BERT (google-bert/bert-base-multilingual-cased), mean pooling.",
        preset={"pretrained": "google-bert/bert-base-multilingual-cased", "pooling": "mean"},
    )
    register(
        "xlmr",
        TEXT,
        "XLM-RoBERTa base (FacebookAI/xlm-roberta-base), mean pooling.",
        preset={"pretrained": "FacebookAI/xlm-roberta-base", "pooling": "mean"},
    )
    register(
        "mdistilbert",
        TEXT,
        "Multilingual DistilBERT (distilbert/distilbert-base-multilingual-cased), mean pooling.",
        preset={"pretrained": "distilbert/distilbert-base-multilingual-cased", "pooling": "mean"},
    )
    register(
        "hf-image-encoder",
        IMAGE,
        "Any Hugging Face vision model (ResNet pooled output, CLIP image embedding) as an image encoder.",
        default_for=("image_encoder",),
    )
    register(
        "resnet50",
        IMAGE,
        "ResNet-50 (microsoft/resnet-50): 2048-d global-average-pooled features.",
        preset={"pretrained": "microsoft/resnet-50"},
    )
    register(
        "clip-vit-b32",
        IMAGE,
        "CLIP ViT-B/32 (openai/clip-vit-base-patch32): projected image embedding.",
        preset={"pretrained": "openai/clip-vit-base-patch32"},
    )
