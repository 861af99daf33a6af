"""Data of the YiSi-2 tests: small folders in the real raw layouts (importable as ``yisi.helpers``)."""

from __future__ import annotations

from pathlib import Path

CAPTIONS = {
    "en": [
        "A man rides a bike down the street.",
        "Two dogs play in the snow, near a fence.",
        "A woman reads a book in the park.",
        "A boy in a red shirt jumps into the lake.",
        "Three people sit at a table and eat dinner.",
        "A girl with a hat walks with her dog.",
    ],
    "de": [
        "Ein Mann fährt mit dem Fahrrad die Straße hinunter.",
        "Zwei Hunde spielen im Schnee, nahe einem Zaun.",
        "Eine Frau liest ein Buch im Park.",
        "Ein Junge in einem roten Hemd springt in den See.",
        "Drei Leute sitzen an einem Tisch und essen zu Abend.",
        "Ein Mädchen mit einem Hut geht mit ihrem Hund.",
    ],
    "fr": [
        "Un homme fait du vélo dans la rue.",
        "Deux chiens jouent dans la neige, près d'une clôture.",
        "Une femme lit un livre dans le parc.",
        "Un garçon en chemise rouge saute dans le lac.",
        "Trois personnes sont assises à une table et dînent.",
        "Une fille avec un chapeau marche avec son chien.",
    ],
}


def write_multi30k(folder: Path, split: str = "test_2016_flickr", langs=("en", "de", "fr")) -> Path:
    """A small folder in the raw Multi30K layout (<split>.<lang>, one caption per line)."""
    folder.mkdir(parents=True, exist_ok=True)
    for lang in langs:
        (folder / f"{split}.{lang}").write_text("\n".join(CAPTIONS[lang]) + "\n", encoding="utf-8")
    return folder


# English-Spanish pairs with gold similarity (0-5), lexical overlap growing with the gold score
STS_PAIRS = [
    ("Barack Obama visited Madrid in 2015 with his family.", "Barack Obama visitó Madrid en 2015 con su familia.", 5.0),
    (
        "The European Central Bank raised interest rates on Thursday.",
        "El Banco Central Europeo subió los tipos de interés el jueves.",
        4.6,
    ),
    ("Apple presented the new iPhone in California.", "Apple presentó un nuevo teléfono en California.", 4.0),
    (
        "The football match between Barcelona and Madrid ended in a draw.",
        "Barcelona ganó el partido de fútbol contra el Real Madrid.",
        2.8,
    ),
    (
        "A storm caused floods in the north of the country.",
        "La lluvia fue muy fuerte durante toda la semana pasada.",
        1.2,
    ),
    (
        "The children are playing in the garden with a ball.",
        "El gobierno aprobó una nueva ley sobre los impuestos.",
        0.0,
    ),
]


def write_sts(folder: Path, sets: dict[str, tuple[list[tuple[str, str, float | str]], bool]]) -> Path:
    """A SemEval-2016 STS folder: per set, (rows (en, es, gold), whether Spanish comes first)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, (rows, spanish_first) in sets.items():
        lines = [f"{es}\t{en}" if spanish_first else f"{en}\t{es}" for en, es, _ in rows]
        (folder / f"STS.input.{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (folder / f"STS.gs.{name}.txt").write_text("\n".join(str(g) for _, _, g in rows) + "\n", encoding="utf-8")
    return folder


def tiny_roberta(folder: Path, texts: list[str], *, layers: int = 4, padding_side: str = "left") -> Path:
    """A random RobertaModel with a byte-level BPE tokenizer trained on ``texts`` (<s>, </s> specials)."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaModel, RobertaTokenizerFast

    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    raw = ByteLevelBPETokenizer()
    raw.train_from_iterator(texts, vocab_size=400, min_frequency=1, special_tokens=specials, show_progress=False)
    tokenizer = RobertaTokenizerFast(
        tokenizer_object=raw._tokenizer,
        bos_token="<s>",
        eos_token="</s>",
        sep_token="</s>",
        cls_token="<s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
        model_max_length=128,
        padding_side=padding_side,
    )
    config = RobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=130,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(1)
    RobertaModel(config).eval().save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder
