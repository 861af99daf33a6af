"""The translation scorers on tiny real architectures: conventions, images, checkpoints, batching."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
from commute import mmt_builders as build
from PIL import Image

from harness.adapters.cached_model import image_content_key
from harness.adapters.capabilities import MixedImage, ScoreRequest
from harness.adapters.resolve import find_adapter
from harness.errors import HarnessError
from harness.plugins.registry import get_registry
from harness_models.translation import vgamt_modules
from harness_models.translation.causal import CausalLMScorer
from harness_models.translation.cliptrans import ClipTransScorer
from harness_models.translation.gated_fusion import GatedFusionScorer, GateFusion, parse_gate
from harness_models.translation.images import ImageSpec
from harness_models.translation.seq2seq import Seq2SeqScorer
from harness_models.translation.vgamt import VgamtScorer

SOURCE = "We'll have to get rid of that mole."
TARGETS = ("Il va falloir enlever ce grain de beauté.", "Il va falloir se débarasser de cette taupe.")


def solid(value: int, size=(40, 30)) -> Image.Image:
    return Image.new("RGB", size, (value, 255 - value, (3 * value) % 256))


def noisy(seed: int) -> Image.Image:
    return Image.fromarray(np.random.default_rng(seed).integers(0, 256, (36, 44, 3), dtype=np.uint8))


IMAGE_A, IMAGE_B = noisy(1), noisy(2)


def request(target=TARGETS[0], image=None, source=SOURCE, tgt="fr", key=None):
    if image is not None and key is None:
        key = "mix" if isinstance(image, MixedImage) else image_content_key(image)
    return ScoreRequest(source, target, image, key, "en", tgt)


def requests_with_images():
    mix = MixedImage((IMAGE_A, IMAGE_B), (0.5, 0.5))
    reqs = [request(t, image) for image in (IMAGE_A, IMAGE_B, mix) for t in TARGETS]
    return [*reqs, request("Il a réussi à aller à la banque.", IMAGE_B, source="He finally made it to the bank.")]


@pytest.fixture(scope="module")
def scorers(vgamt_dir, mbart_dir, marian_dir, nllb_dir, m2m100_dir, gated_dir, cliptrans_dir, gpt2_dir):
    """One loaded scorer per architecture (batch size 3, so that batches mix lengths and images)."""
    built = {
        "mbart50": Seq2SeqScorer("mbart50", {"pretrained": str(mbart_dir)}, batch_size=3),
        "marian": Seq2SeqScorer("marian", {"pretrained": str(marian_dir)}, batch_size=3),
        "nllb": Seq2SeqScorer("nllb", {"pretrained": str(nllb_dir)}, batch_size=3),
        "m2m100": Seq2SeqScorer("m2m100", {"pretrained": str(m2m100_dir)}, batch_size=3),
        "causal": CausalLMScorer("causal", {"pretrained": str(gpt2_dir)}, batch_size=3),
        "vgamt": VgamtScorer("vgamt", {"pretrained": str(vgamt_dir)}, batch_size=3),
        "gated": GatedFusionScorer("gated", {"pretrained": str(gated_dir)}, batch_size=3),
        "gated-0.5": GatedFusionScorer("gated", {"pretrained": str(gated_dir), "gate": "0.5"}, batch_size=3),
        "cliptrans": ClipTransScorer("cliptrans", {"pretrained": str(cliptrans_dir)}, batch_size=3),
    }
    for scorer in built.values():
        scorer.ensure_loaded()
    return built


ALL = ("mbart50", "marian", "nllb", "m2m100", "causal", "vgamt", "gated", "gated-0.5", "cliptrans")
MULTIMODAL = ("vgamt", "gated", "gated-0.5", "cliptrans")
TEXT_ONLY = ("mbart50", "marian", "nllb", "m2m100", "causal")


@pytest.mark.parametrize("name", ALL)
def test_batched_and_one_at_a_time_scoring_agree(scorers, name):
    scorer = scorers[name]
    reqs = requests_with_images()
    batched = scorer.score_translations(reqs)
    single = [scorer.score_translations([r])[0] for r in reqs]
    assert [len(b) for b in batched] == [len(s) for s in single]
    for b, s in zip(batched, single):
        np.testing.assert_allclose(b, s, atol=1e-5, rtol=0)
    assert all(np.all(np.isfinite(b)) and np.all(b <= 0) for b in batched)


@pytest.mark.parametrize("name", MULTIMODAL)
def test_the_image_changes_the_scores(scorers, name):
    scorer = scorers[name]
    with_a, with_b = scorer.score_translations([request(TARGETS[0], IMAGE_A), request(TARGETS[0], IMAGE_B)])
    assert np.abs(with_a - with_b).max() > 1e-4


@pytest.mark.parametrize("name", TEXT_ONLY)
def test_text_only_scorers_ignore_images(scorers, name):
    scorer = scorers[name]
    plain, with_a, mixed = scorer.score_translations(
        [request(), request(image=IMAGE_A), request(image=MixedImage((IMAGE_A, IMAGE_B), (0.5, 0.5)))]
    )
    np.testing.assert_array_equal(plain, with_a)
    np.testing.assert_array_equal(plain, mixed)


@pytest.mark.parametrize("name", MULTIMODAL)
def test_multimodal_scorers_need_an_image(scorers, name):
    with pytest.raises(HarnessError, match="need an image"):
        scorers[name].score_translations([request()])


def test_mbart50_scores_every_subword_and_eos_but_not_the_language_code(scorers, mbart_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(mbart_dir, src_lang="en_XX", tgt_lang="fr_XX")
    labels = tokenizer(text_target=TARGETS[0]).input_ids
    assert tokenizer.convert_ids_to_tokens(labels[:1]) == ["fr_XX"] and labels[-1] == tokenizer.eos_token_id
    tokens = scorers["mbart50"].target_tokens(request())
    assert list(tokens.labels) == labels and tokens.decoder_input == (tokenizer.eos_token_id, *labels[:-1])
    (ids,) = scorers["mbart50"].score_translations([request()], output="token_ids")
    assert ids.tolist() == labels[1:]
    assert scorers["mbart50"].source_ids(request()) == tokenizer(SOURCE).input_ids
    assert tokenizer.convert_ids_to_tokens(scorers["mbart50"].source_ids(request())[:1]) == ["en_XX"]


def test_mbart50_log_probabilities_equal_a_hand_computation(scorers, mbart_dir):
    """The same numbers from a plain Hugging Face forward pass, at T = 1 and T = 2."""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(mbart_dir, src_lang="en_XX", tgt_lang="fr_XX")
    model = AutoModelForSeq2SeqLM.from_pretrained(mbart_dir).eval()
    batch = tokenizer(SOURCE, text_target=TARGETS[1], return_tensors="pt")
    with torch.no_grad():
        logits = model(**batch).logits[0]  # labels -> decoder inputs shifted by the model itself
    labels = batch["labels"][0]
    for temperature in (1.0, 2.0):
        expected = torch.log_softmax(logits / temperature, dim=-1)[torch.arange(len(labels)), labels][1:]
        (got,) = scorers["mbart50"].score_translations([request(TARGETS[1])], temperature=temperature)
        np.testing.assert_allclose(got, expected.numpy(), atol=1e-5)
    plain = scorers["mbart50"].score_translations([request(TARGETS[1])])[0]
    np.testing.assert_array_equal(
        plain, scorers["mbart50"].score_translations([request(TARGETS[1])], temperature=1.0)[0]
    )


def test_vgamt_feeds_the_language_code_first_and_scores_the_rest(scorers, mbart_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(mbart_dir, src_lang="en_XX", tgt_lang="fr_XX")
    full = tokenizer(text_target=TARGETS[0]).input_ids  # [fr_XX] x1..xn </s>
    tokens = scorers["vgamt"].target_tokens(request())
    assert list(tokens.decoder_input) == full[:-1] and list(tokens.labels) == full[1:] and all(tokens.scored)
    assert len(scorers["vgamt"].score_translations([request(image=IMAGE_A)])[0]) == len(full) - 1


def test_marian_has_no_language_code_and_starts_decoding_with_pad(scorers, marian_dir):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(marian_dir)
    labels = tokenizer(text_target=TARGETS[0]).input_ids
    tokens = scorers["marian"].target_tokens(request())
    assert list(tokens.labels) == labels and all(tokens.scored)
    assert tokens.decoder_input[0] == tokenizer.pad_token_id and list(tokens.decoder_input[1:]) == labels[:-1]


def test_nllb_uses_flores_codes_on_both_sides(scorers):
    tokenizer = scorers["nllb"].tokenizer
    source = scorers["nllb"].source_ids(request(tgt="de"))
    tokens = scorers["nllb"].target_tokens(request(tgt="de"))
    assert tokenizer.convert_ids_to_tokens(source[:1]) == ["eng_Latn"]
    assert tokenizer.convert_ids_to_tokens(tokens.labels[:1]) == ["deu_Latn"] and tokens.scored[0] is False
    assert all(tokens.scored[1:]) and tokens.labels[-1] == tokenizer.eos_token_id


def test_m2m100_uses_double_underscore_codes(scorers):
    tokenizer = scorers["m2m100"].tokenizer
    source = scorers["m2m100"].source_ids(request(tgt="de"))
    tokens = scorers["m2m100"].target_tokens(request(tgt="de"))
    assert tokenizer.convert_ids_to_tokens(source[:1]) == ["__en__"] and source[-1] == tokenizer.eos_token_id
    assert tokenizer.convert_ids_to_tokens(list(tokens.labels[:1])) == ["__de__"] and tokens.scored == (False,) + (
        True,
    ) * (len(tokens.labels) - 1)
    assert tokens.decoder_input[:2] == (tokenizer.eos_token_id, tokens.labels[0])


def test_language_codes_can_be_overridden_and_unknown_languages_are_explained(mbart_dir):
    scorer = Seq2SeqScorer("m", {"pretrained": str(mbart_dir), "tgt_code": "de_DE"})
    scorer.ensure_loaded()
    assert scorer.tokenizer.convert_ids_to_tokens(scorer.target_tokens(request()).labels[:1]) == ["de_DE"]
    default = Seq2SeqScorer("m", {"pretrained": str(mbart_dir)})
    with pytest.raises(HarnessError, match=r"no language code for 'xx'.*tgt_code"):
        default.score_translations([request(tgt="xx")])


def test_causal_lm_scores_the_continuation_and_eos(scorers, gpt2_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(gpt2_dir)
    scorer = scorers["causal"]
    prompt = tokenizer("Translate from English to French.\nEnglish: " + SOURCE + "\nFrench:").input_ids
    continuation = [*tokenizer(" " + TARGETS[0], add_special_tokens=False).input_ids, tokenizer.eos_token_id]
    assert scorer.prompt_ids(request()) == prompt
    assert scorer.score_translations([request()], output="token_ids")[0].tolist() == continuation
    model = AutoModelForCausalLM.from_pretrained(gpt2_dir).eval()
    with torch.no_grad():
        logits = model(torch.tensor([prompt + continuation])).logits[0]
    positions = torch.arange(len(prompt) - 1, len(prompt) + len(continuation) - 1)
    expected = torch.log_softmax(logits, -1)[positions, torch.tensor(continuation)]
    np.testing.assert_allclose(scorer.score_translations([request()])[0], expected.numpy(), atol=1e-5)
    assert scorer.keeps_logits  # GPT-2 takes logits_to_keep: only the continuation's span gets logits
    everywhere = CausalLMScorer("causal", {"pretrained": str(gpt2_dir)}, batch_size=3)
    everywhere.ensure_loaded()
    everywhere.keeps_logits = False  # a model without logits_to_keep: full logits, then the span
    for spanned, full in zip(
        scorer.score_translations(requests_with_images()), everywhere.score_translations(requests_with_images())
    ):
        np.testing.assert_allclose(spanned, full, atol=1e-5, rtol=0)
    bad = CausalLMScorer("c", {"pretrained": str(gpt2_dir), "template": "{nope}"})
    with pytest.raises(HarnessError, match="cannot be filled"):
        bad.score_translations([request()])


def test_options_are_checked(scorers):
    with pytest.raises(HarnessError, match="temperature must be positive"):
        scorers["mbart50"].score_translations([request()], temperature=0)
    with pytest.raises(HarnessError, match="output must be one of"):
        scorers["mbart50"].score_translations([request()], output="logits")
    assert scorers["mbart50"].score_translations([]) == []


def test_vgamt_state_dict_keys_are_the_authors(vgamt_dir):
    from transformers import MBartForConditionalGeneration

    model = MBartForConditionalGeneration.from_pretrained(vgamt_dir / "mbart")
    vgamt_modules.install(model, 16, 4)
    keys = set(model.state_dict())
    adapter = "adapters.bottleneck_adapter"
    for key in (
        "model.encoder.proj_full_img.linear.weight",
        "model.encoder.layer_norm_full_img.bias",
        "model.encoder.img_embedding.weight",
        "model.encoder.img_embedding.bias",
        f"model.encoder.layers.0.attention_adapters.{adapter}.adapter_down.0.weight",
        f"model.encoder.layers.1.output_adapters.{adapter}.adapter_up.bias",
        f"model.decoder.layers.1.attention_adapters.{adapter}.adapter_up.weight",
        f"model.decoder.layers.0.output_adapters.{adapter}.adapter_down.0.bias",
        "lm_head.weight",
        "final_logits_bias",
    ):
        assert key in keys


def test_vgamt_adapters_sit_where_adapter_transformers_puts_them(vgamt_dir):
    """h1 = h + A_att(attn(LN1 h)), h2 = h1 + A_out(fc2(gelu(fc1(LN2 h1)))), A(x) = x + up(relu(down x))."""
    from transformers import MBartForConditionalGeneration

    model = MBartForConditionalGeneration.from_pretrained(vgamt_dir / "mbart").eval()
    vgamt_modules.install(model, 16, 4)
    torch.manual_seed(0)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "adapters" in name:
                parameter.normal_(0, 0.5)
    layer = model.model.encoder.layers[0]
    hidden = torch.randn(1, 5, model.config.d_model)

    def adapter(slot, x):
        block = slot.adapters["bottleneck_adapter"]
        return x + block.adapter_up(torch.relu(block.adapter_down[0](x)))

    with torch.no_grad():
        attended, _ = layer.self_attn.__class__.forward(layer.self_attn, layer.self_attn_layer_norm(hidden))
        h1 = hidden + adapter(layer.attention_adapters, attended)
        feed = layer.fc2.__class__.forward(layer.fc2, layer.activation_fn(layer.fc1(layer.final_layer_norm(h1))))
        expected = h1 + adapter(layer.output_adapters, feed)
        got = layer(hidden, None)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)
    assert (got - hidden).abs().max() > 1e-3


def copy_vgamt(vgamt_dir, target, state, checkpoint):
    """The folder layout with a different checkpoint file."""
    target.mkdir()
    for part in ("mbart", "clip"):
        shutil.copytree(vgamt_dir / part, target / part)
    if checkpoint.endswith(".safetensors"):
        from safetensors.torch import save_file

        save_file(state, str(target / checkpoint))
    else:
        torch.save(state, target / checkpoint)
    (target / "config.json").write_text(
        json.dumps({"model_type": "vgamt", "mbart": "mbart", "clip": "clip", "checkpoint": checkpoint})
    )
    return target


def test_vgamt_checkpoints_in_the_documented_layouts_load_to_identical_scores(scorers, vgamt_dir, tmp_path):
    reqs = requests_with_images()
    reference = scorers["vgamt"].score_translations(reqs)
    state = {k: v.clone().contiguous() for k, v in scorers["vgamt"].model.state_dict().items()}
    ddp = {f"module.{k}": v for k, v in state.items()}
    ddp.update({f"module.{k}": v for k, v in build.region_branch(32, trained=False).items()})  # untrained: dropped
    variants = {"safe": (state, "vgamt.safetensors"), "ddp": ({"model": ddp, "epoch": 1}, "best.pth")}
    for name, (saved, file) in variants.items():
        folder = copy_vgamt(vgamt_dir, tmp_path / name, saved, file)
        reloaded = VgamtScorer("v", {"pretrained": str(folder)}, batch_size=3).score_translations(reqs)
        for a, b in zip(reference, reloaded):
            np.testing.assert_array_equal(a, b)
    parts = VgamtScorer(
        "v",
        {
            "mbart": str(vgamt_dir / "mbart"),
            "clip": str(vgamt_dir / "clip"),
            "checkpoint": str(vgamt_dir / "vgamt.pth"),
        },
        batch_size=3,
    )
    for a, b in zip(reference, parts.score_translations(reqs)):
        np.testing.assert_array_equal(a, b)


def test_vgamt_checkpoint_errors_name_the_problem(vgamt_dir, tmp_path):
    state = torch.load(vgamt_dir / "vgamt.pth", weights_only=True)["model"]
    missing = {k: v for k, v in state.items() if "decoder.layers.1" not in k}
    folder = copy_vgamt(vgamt_dir, tmp_path / "missing", missing, "ck.pth")
    with pytest.raises(HarnessError, match=r"missing \d+ \(e\.g\. model\.decoder\.layers\.1"):
        VgamtScorer("v", {"pretrained": str(folder)}).ensure_loaded()
    extra = {**state, "model.encoder.surprise.weight": torch.zeros(1)}
    folder = copy_vgamt(vgamt_dir, tmp_path / "extra", extra, "ck.pth")
    with pytest.raises(HarnessError, match=r"unexpected 1 \(e\.g\. model\.encoder\.surprise\.weight\)"):
        VgamtScorer("v", {"pretrained": str(folder)}).ensure_loaded()
    folder = copy_vgamt(vgamt_dir, tmp_path / "text", {"model.shared.weight": torch.zeros(2)}, "ck.pth")
    with pytest.raises(HarnessError, match="not a VGAMT checkpoint"):
        VgamtScorer("v", {"pretrained": str(folder)}).ensure_loaded()
    with pytest.raises(HarnessError, match="needs checkpoint"):
        VgamtScorer(
            "vgamt", {"mbart": "facebook/mbart-large-50", "clip": "openai/clip-vit-base-patch32"}
        ).ensure_loaded()


def test_vgamt_without_adapters_loads_and_differs(scorers, vgamt_dir, tmp_path):
    state = torch.load(vgamt_dir / "vgamt.pth", weights_only=True)["model"]
    plain = {k: v for k, v in state.items() if "adapters" not in k}
    folder = copy_vgamt(vgamt_dir, tmp_path / "plain", plain, "ck.pth")
    scorer = VgamtScorer("v", {"pretrained": str(folder)})
    without = scorer.score_translations([request(image=IMAGE_A)])[0]
    assert not hasattr(scorer.model.model.encoder.layers[0], "attention_adapters")
    assert np.abs(without - scorers["vgamt"].score_translations([request(image=IMAGE_A)])[0]).max() > 1e-4


def test_precomputed_features_equal_the_image_they_were_computed_from(scorers):
    scorer = scorers["vgamt"]
    feature = scorer.vision_features(scorer.image_spec.batch([IMAGE_A]))[0].detach().numpy()
    from_image, from_feature = scorer.score_translations([request(image=IMAGE_A), request(image=feature, key="f")])
    np.testing.assert_allclose(from_image, from_feature, atol=1e-5)
    with pytest.raises(HarnessError, match="16 finite numbers"):
        scorer.score_translations([request(image=np.zeros(3, dtype=np.float32), key="z")])
    with pytest.raises(HarnessError, match="mixes pixels"):
        scorer.score_translations([request(image=MixedImage((feature, IMAGE_A), (0.5, 0.5)))])


def test_gate_zero_is_the_text_model_alone(gated_dir, marian_dir):
    text_only = Seq2SeqScorer("m", {"pretrained": str(marian_dir)}).score_translations([request()])[0]
    gated = GatedFusionScorer("g", {"pretrained": str(gated_dir), "gate": "0"}).score_translations(
        [request(image=IMAGE_A)]
    )[0]
    np.testing.assert_allclose(gated, text_only, atol=1e-5)


def test_gate_fusion_formula_by_hand():
    fusion = GateFusion(d_model=2, image_dim=1)
    with torch.no_grad():
        fusion.dense.weight.copy_(torch.tensor([[2.0], [-1.0]]))
        fusion.dense.bias.zero_()
        fusion.gate_dense.weight.zero_()
        fusion.gate_dense.bias.copy_(torch.tensor([0.0, 1e9]))  # gates 0.5 and 1
    text = torch.tensor([[[1.0, 1.0]]])
    image = torch.tensor([[3.0]])  # projection (6, -3)
    torch.testing.assert_close(fusion(text, image), torch.tensor([[[1.0 + 0.5 * 6, 1.0 - 3.0]]]))
    torch.testing.assert_close(fusion(text, image, 0.25), torch.tensor([[[1.0 + 1.5, 1.0 - 0.75]]]))
    assert parse_gate("learned") is None and parse_gate("0.75") == 0.75
    for bad in ("1.5", "open"):
        with pytest.raises(HarnessError, match="gate must be"):
            parse_gate(bad)


def test_fixed_gates_give_different_scores(scorers):
    learned = scorers["gated"].score_translations([request(image=IMAGE_A)])[0]
    half = scorers["gated-0.5"].score_translations([request(image=IMAGE_A)])[0]
    assert np.abs(learned - half).max() > 1e-5


def test_gated_fusion_weights_round_trip_through_pth(scorers, gated_dir, tmp_path):
    from safetensors.torch import load_file

    folder = tmp_path / "gated"
    shutil.copytree(gated_dir, folder)
    torch.save({"model": load_file(str(gated_dir / "fusion.safetensors"))}, folder / "fusion.pth")
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "fusion": "fusion.pth"}))
    reqs = requests_with_images()
    for a, b in zip(
        scorers["gated"].score_translations(reqs),
        GatedFusionScorer("g", {"pretrained": str(folder)}, batch_size=3).score_translations(reqs),
    ):
        np.testing.assert_array_equal(a, b)


def test_cliptrans_scores_translation_tokens_only_and_ignores_clip_keys(scorers, cliptrans_dir, tmp_path):
    from safetensors.torch import load_file

    tokens = scorers["cliptrans"].target_tokens(request())
    (values,) = scorers["cliptrans"].score_translations([request(image=IMAGE_A)])
    assert len(values) == sum(tokens.scored) == len(tokens.labels) - 1  # not the language code, not the prefix
    assert scorers["cliptrans"].mapping.prefix_length == 3
    state = load_file(str(cliptrans_dir / "cliptrans.safetensors"))
    state["clip.visual_projection.weight"] = torch.zeros(2, 2)
    folder = tmp_path / "ct"
    folder.mkdir()
    torch.save(state, folder / "ct.pth")
    config = json.loads((cliptrans_dir / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "checkpoint": "ct.pth"}))
    reqs = requests_with_images()
    for a, b in zip(
        scorers["cliptrans"].score_translations(reqs),
        ClipTransScorer("c", {"pretrained": str(folder)}, batch_size=3).score_translations(reqs),
    ):
        np.testing.assert_array_equal(a, b)


def test_mixed_image_is_the_average_of_the_prepared_pixels():
    spec = ImageSpec.from_config({"size": {"shortest_edge": 8}, "crop_size": {"height": 8, "width": 8}})
    a, b = solid(10, (40, 20)), solid(200, (12, 30))
    mixed = spec.mixed_pixels(MixedImage((a, b), (0.5, 0.5)))
    assert mixed.shape == (8, 8, 3)
    np.testing.assert_allclose(mixed, (spec.pixels(a) + spec.pixels(b)) / 2)
    np.testing.assert_allclose(mixed[0, 0], [(10 + 200) / 2, (245 + 55) / 2, (30 + 88) / 2])
    batch = spec.batch([a])
    assert batch.shape == (1, 3, 8, 8)
    np.testing.assert_allclose(
        batch[0, :, 0, 0].numpy(), (np.array([10, 245, 30]) / 255 - spec.mean) / spec.std, rtol=1e-5
    )


def test_image_spec_reads_clip_and_resnet_recipes():
    clip = ImageSpec.from_config({"size": {"shortest_edge": 224}, "crop_size": {"height": 224, "width": 224}})
    assert (clip.resize, clip.crop) == (224, (224, 224))
    resnet = ImageSpec.from_config({"size": {"shortest_edge": 224}, "crop_pct": 0.875, "image_mean": [0.5] * 3})
    assert (resnet.resize, resnet.crop, resnet.mean) == (256, (224, 224), (0.5, 0.5, 0.5))
    vit = ImageSpec.from_config({"size": {"height": 32, "width": 48}, "do_center_crop": False})
    assert (vit.resize, vit.crop) == ((32, 48), None)
    assert vit.pixels(solid(5, (100, 10))).shape == (32, 48, 3)
    assert resnet.pixels(solid(5, (300, 256))).shape == (224, 224, 3)


def test_model_folders_resolve_to_their_adapters(vgamt_dir, gated_dir, cliptrans_dir, mbart_dir, gpt2_dir):
    registry = get_registry()
    from harness.adapters.capabilities import Capability

    needs = [Capability.TRANSLATION_SCORER]
    expected = {
        vgamt_dir: "vgamt",
        gated_dir: "gated-fusion",
        cliptrans_dir: "cliptrans",
        mbart_dir: "seq2seq",
        gpt2_dir: "causal-lm",
    }
    for folder, name in expected.items():
        registration, args = find_adapter(registry, str(folder), {}, needs)
        assert registration.name == name and args == {"pretrained": str(folder)}
    registration, args = find_adapter(registry, "vgamt", {"checkpoint": "x.pth"}, needs)
    assert args == {"mbart": "facebook/mbart-large-50", "clip": "openai/clip-vit-base-patch32", "checkpoint": "x.pth"}


def test_identity_covers_the_folder_and_needs_no_weights(vgamt_dir, tmp_path):
    scorer = VgamtScorer("v", {"pretrained": str(vgamt_dir)})
    identity = scorer.identity()
    assert identity.source == str(vgamt_dir) and identity.revision.startswith("sha256:") and not scorer._loaded
    folder = tmp_path / "v2"
    shutil.copytree(vgamt_dir, folder)
    (folder / "clip" / "preprocessor_config.json").write_text("{}")
    assert VgamtScorer("v", {"pretrained": str(folder)}).identity().revision != identity.revision
    with pytest.raises(HarnessError, match="needs pretrained"):
        Seq2SeqScorer("s", {}).identity()
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.json").write_text('{"model_type": "cliptrans"}')
    with pytest.raises(HarnessError, match="model_type is 'cliptrans', expected 'vgamt'"):
        VgamtScorer("v", {"pretrained": str(other)}).identity()


def test_decoder_rows_are_split_to_bound_the_logits_in_memory(scorers, monkeypatch):
    from harness_models.translation import base

    scorer, reqs = scorers["vgamt"], requests_with_images()
    whole = scorer.score_translations(reqs)
    calls = []
    original = type(scorer).decode
    monkeypatch.setattr(type(scorer), "decode", lambda self, *a: calls.append(a[1].shape[0]) or original(self, *a))
    monkeypatch.setattr(base, "LOGIT_BUDGET", 1)
    split = scorer.score_translations(reqs)
    assert set(calls) == {1} and len(calls) == len(reqs)  # one row per decoder call, every row once
    for a, b in zip(whole, split):
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=0)


def test_a_vision_folder_without_preprocessing_is_a_clear_error(tmp_path):
    with pytest.raises(
        HarnessError, match=r"^cannot read the image preprocessing of '.*': .*preprocessor_config\.json"
    ):
        ImageSpec.from_pretrained(str(tmp_path))
