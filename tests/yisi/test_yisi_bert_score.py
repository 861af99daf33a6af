"""Cross-check with the bert-score package: where YiSi-2 and BERTScore coincide, and where they differ.

With idf off and alpha = 0.5, both are greedy cosine matching of layer-L token vectors with a
harmonic mean. They differ in three ways, each tested here:

1. special tokens: BERTScore gives [CLS]/[SEP] weight 0 but still lets them be the best match
   of another token; YiSi-2 removes them altogether;
2. clipping: YiSi-2 clips negative cosines to 0; BERTScore does not;
3. idf: BERTScore uses log((M + 1) / (df + 1)) from the references only, for both sides; YiSi-2
   uses log(1 + (M + 1) / (df + 1)) per side, that is softplus of BERTScore's value.
"""

from __future__ import annotations

import math

import bert_score
import numpy as np
import pytest
import torch
from bert_score.utils import get_idf_dict, greedy_cos_idf
from transformers import AutoModel, AutoTokenizer
from yisi.helpers import CAPTIONS

from harness_models.token_embedders.hf import HFTokenEmbedder
from harness_tasks.yisi.metric import idf_table, idf_weight, prepare, yisi

LAYER = 9
CANDIDATES = CAPTIONS["en"] + [CAPTIONS["en"][0], CAPTIONS["de"][1]]
REFERENCES = CAPTIONS["de"] + [CAPTIONS["en"][0], CAPTIONS["de"][1]]  # the last two pairs are identical


def full_layer(folder, texts):
    """Layer-LAYER vectors with the special tokens kept, unit-normalised, from transformers directly."""
    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()
    out = []
    for text in texts:
        with torch.no_grad():
            states = model(**tokenizer(text, return_tensors="pt"), output_hidden_states=True).hidden_states[LAYER][0]
        out.append(torch.nn.functional.normalize(states, dim=-1).numpy().astype(np.float64))
    return out


def test_agrees_with_bert_score_where_the_definitions_coincide(tiny_encoder):
    p_bs, r_bs, f_bs = (
        t.numpy()
        for t in bert_score.score(
            CANDIDATES, REFERENCES, model_type=str(tiny_encoder), num_layers=LAYER, idf=False, batch_size=4
        )
    )
    adapter = HFTokenEmbedder("tiny", {"pretrained": str(tiny_encoder), "layer": LAYER}, batch_size=4)
    cand_emb, ref_emb = adapter.embed_tokens(CANDIDATES), adapter.embed_tokens(REFERENCES)
    ours = [yisi(prepare(c, None), prepare(r, None), 0.5) for c, r in zip(cand_emb, ref_emb)]
    coinciding = 0
    for i, (cand, ref) in enumerate(zip(full_layer(tiny_encoder, CANDIDATES), full_layer(tiny_encoder, REFERENCES))):
        cosines = cand @ ref.T  # rows: candidate units, columns: reference units, specials first and last
        inner = cosines[1:-1, 1:-1]
        # BERTScore: content units only are averaged, but every unit (specials too) may be the best match
        assert p_bs[i] == pytest.approx(cosines[1:-1].max(axis=1).mean(), abs=1e-5)
        assert r_bs[i] == pytest.approx(cosines[:, 1:-1].max(axis=0).mean(), abs=1e-5)
        # YiSi-2: specials removed, negatives clipped
        p, r, f = ours[i]
        assert p == pytest.approx(np.maximum(inner, 0).max(axis=1).mean(), abs=1e-5)
        assert r == pytest.approx(np.maximum(inner, 0).max(axis=0).mean(), abs=1e-5)
        best_p, best_r = cosines[1:-1].argmax(axis=1), cosines[:, 1:-1].argmax(axis=0)
        specials_never_win = bool(
            np.all((best_p >= 1) & (best_p < len(ref) - 1)) and np.all((best_r >= 1) & (best_r < len(cand) - 1))
        )
        nothing_clipped = inner.max(axis=1).min() > 0 and inner.max(axis=0).min() > 0
        if specials_never_win and nothing_clipped:
            coinciding += 1
            assert (p, r, f) == pytest.approx((p_bs[i], r_bs[i], f_bs[i]), abs=1e-5)
    assert coinciding >= 2  # at least the identical pairs, where both give P = R = F = 1
    assert ours[-1] == pytest.approx((1.0, 1.0, 1.0), abs=1e-5) and f_bs[-1] == pytest.approx(1.0, abs=1e-5)


def _scores(hyp: list[list[float]], hyp_weights: list[float], ref: list[list[float]], ref_weights: list[float]):
    """bert_score's greedy matching on hand-made vectors (a batch of one pair)."""

    def side(vectors, weights):
        return (
            torch.tensor([vectors], dtype=torch.float),
            torch.ones(1, len(vectors)),
            torch.tensor([weights], dtype=torch.float),
        )

    p, r, f = greedy_cos_idf(*side(ref, ref_weights), *side(hyp, hyp_weights))
    return float(p[0]), float(r[0]), float(f[0])


def _yisi(hyp: list[list[float]], ref: list[list[float]]):
    from harness.adapters.capabilities import TokenEmbeddings

    def sentence(vectors):
        return prepare(TokenEmbeddings(["u"] * len(vectors), np.array(vectors, dtype=np.float32)), None)

    return yisi(sentence(hyp), sentence(ref))


def test_difference_special_tokens_are_match_candidates_in_bert_score():
    # [CLS] h [SEP] vs [CLS] r [SEP]: h is orthogonal to r but identical to the reference's [CLS]
    cls, sep = [1.0, 0.0], [0.0, -1.0]
    p_bs, _, _ = _scores([cls, [1.0, 0.0], sep], [0, 1, 0], [cls, [0.0, 1.0], sep], [0, 1, 0])
    assert p_bs == pytest.approx(1.0)  # h matched [CLS], which has weight 0 but may still win
    assert _yisi([[1.0, 0.0]], [[0.0, 1.0]])[0] == 0.0  # YiSi-2 never sees the specials


def test_difference_negative_similarities_are_not_clipped_in_bert_score():
    p_bs, r_bs, _ = _scores([[1.0, 0.0]], [1], [[-1.0, 0.2]], [1])
    assert p_bs == pytest.approx(-1 / math.sqrt(1.04)) and r_bs == pytest.approx(p_bs)
    assert _yisi([[1.0, 0.0]], [[-1.0, 0.2]]) == (0.0, 0.0, 0.0)


def test_difference_idf_formula(tiny_encoder):
    tokenizer = AutoTokenizer.from_pretrained(tiny_encoder)
    references = CAPTIONS["en"]
    theirs = get_idf_dict(references, tokenizer, nthreads=0)  # keyed by token id, specials included
    counts, total = idf_table(tokenizer.tokenize(text) for text in references)
    assert total == len(references)
    for unit, df in counts.items():
        bs = theirs[tokenizer.convert_tokens_to_ids(unit)]
        assert bs == pytest.approx(math.log((total + 1) / (df + 1)))
        assert idf_weight(df, total) == pytest.approx(math.log1p(math.exp(bs)))  # softplus of theirs
    # a unit seen in every sentence weighs 0 in BERTScore, log(2) in YiSi-2
    assert theirs[tokenizer.cls_token_id] == pytest.approx(0.0) and idf_weight(total, total) == pytest.approx(
        math.log(2)
    )
