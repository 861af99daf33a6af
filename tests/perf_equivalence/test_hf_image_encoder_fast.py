"""hf-image-encoder on CPU: batch norms folded into the convolutions and channels-last give transformers' own
vectors; dtype is checked against the device and recorded in the identity."""

from __future__ import annotations

import numpy as np
import pytest

from harness.errors import HarnessError
from harness_models.encoders.folding import fold_batch_norm
from harness_models.encoders.image import HFImageEncoder


@pytest.fixture(scope="module")
def resnet(tmp_path_factory):
    """A small bottleneck ResNet whose batch norms carry non-trivial statistics, as trained ones do."""
    import torch
    from transformers import ConvNextImageProcessorPil, ResNetConfig, ResNetModel

    torch.manual_seed(0)
    model = ResNetModel(
        ResNetConfig(embedding_size=8, hidden_sizes=[16, 32], depths=[1, 2], layer_type="bottleneck")
    ).eval()
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, torch.nn.BatchNorm2d):
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.2, 2.0)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.3, 0.3)
    folder = tmp_path_factory.mktemp("resnet")
    model.save_pretrained(folder)
    ConvNextImageProcessorPil(size={"shortest_edge": 40}).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def photos():
    from PIL import Image

    rng = np.random.default_rng(0)
    return [Image.fromarray(rng.integers(0, 256, (48 + 7 * i, 64 - 5 * i, 3), dtype=np.uint8)) for i in range(5)]


def expected_vectors(folder, photos) -> np.ndarray:
    import torch
    from transformers import AutoImageProcessor, AutoModel

    processor = AutoImageProcessor.from_pretrained(folder, backend="pil")
    with torch.inference_mode():
        pixels = processor(images=photos, return_tensors="pt")["pixel_values"]
        return AutoModel.from_pretrained(folder).eval()(pixel_values=pixels).pooler_output.flatten(1).numpy()


def test_folded_channels_last_resnet_gives_transformers_vectors(resnet, photos):
    import torch

    encoder = HFImageEncoder("resnet", {"pretrained": str(resnet)}, batch_size=2)
    vectors = encoder.encode_images(photos)
    np.testing.assert_allclose(vectors, expected_vectors(resnet, photos), atol=1e-5, rtol=1e-5)
    modules = list(encoder.model.modules())
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in modules)
    # embedder 1 + stage 1 (1 bottleneck: shortcut + 3) + stage 2 (2 bottlenecks: shortcut + 3 + 3)
    assert sum(isinstance(m, torch.nn.Conv2d) and m.bias is not None for m in modules) == 1 + 4 + 7
    assert encoder.convolutional
    assert all(
        m.weight.is_contiguous(memory_format=torch.channels_last)
        for m in modules
        if isinstance(m, torch.nn.Conv2d) and m.kernel_size != (1, 1)
    )


def test_fold_batch_norm_by_hand():
    """A 1x1 convolution with weight 2 and bias 1, then a batch norm (mean 3, var 4 - eps, gamma 5, beta 6):
    y = 5 * (2x + 1 - 3) / 2 + 6 = 5x + 1."""
    import torch

    conv = torch.nn.Conv2d(1, 1, 1, bias=True)
    norm = torch.nn.BatchNorm2d(1).eval()
    with torch.no_grad():
        conv.weight.fill_(2.0)
        conv.bias.fill_(1.0)
        norm.running_mean.fill_(3.0)
        norm.running_var.fill_(4.0 - norm.eps)
        norm.weight.fill_(5.0)
        norm.bias.fill_(6.0)
    folded = fold_batch_norm(conv, norm)
    assert folded.weight.item() == pytest.approx(5.0) and folded.bias.item() == pytest.approx(1.0)
    x = torch.tensor([-1.0, 0.0, 2.0]).reshape(3, 1, 1, 1)
    with torch.no_grad():
        np.testing.assert_allclose(folded(x).flatten().numpy(), [-4.0, 1.0, 11.0], rtol=1e-6)
        np.testing.assert_allclose(norm(conv(x)).flatten().numpy(), [-4.0, 1.0, 11.0], rtol=1e-6)


def test_dtype_float16_needs_a_gpu_and_bfloat16_is_recorded(resnet, photos):
    with pytest.raises(HarnessError, match="model 'resnet': dtype=float16 needs a GPU"):
        HFImageEncoder("resnet", {"pretrained": str(resnet), "dtype": "float16"}).identity()
    plain = HFImageEncoder("resnet", {"pretrained": str(resnet)})
    half = HFImageEncoder("resnet", {"pretrained": str(resnet), "dtype": "bfloat16"}, batch_size=2)
    assert plain.identity().dtype == "float32" and half.identity().dtype == "bfloat16"
    assert plain.identity().digest() != half.identity().digest()
    vectors, reference = half.encode_images(photos), expected_vectors(resnet, photos)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, reference, atol=0.1 * np.abs(reference).max())
    assert np.abs(vectors - reference).max() > 1e-5  # it really ran in bfloat16
