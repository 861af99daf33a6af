"""Tiny models with real architectures and real, freshly trained tokenizers, saved to a folder.

They load through exactly the code path a Hub id takes (``from_pretrained`` on a folder), so
the adapters are tested end to end without network. Weights are random (seeded).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

DEFAULT_CORPUS = [
    "a man rides a bike down the street",
    "ein Mann fährt mit dem Fahrrad die Straße hinunter",
    "un homme fait du vélo dans la rue",
    "two dogs play in the snow",
    "zwei Hunde spielen im Schnee",
    "deux chiens jouent dans la neige",
    "a woman reads a book",
    "eine Frau liest ein Buch",
    "une femme lit un livre",
    "muž jede na kole po ulici",
    "dva psi si hrají ve sněhu",
]


def train_wordpiece(texts: Iterable[str], vocab_size: int = 400):
    """A BERT-style fast tokenizer (WordPiece) whose vocabulary is built from ``texts``, the same in every process.

    The special tokens, every character alone and as a continuation (``##c``), then whole words by
    frequency (ties by spelling) up to ``vocab_size``. (The tokenizers library's trainer breaks
    frequency ties by hash order, which differs between processes: every session drew a new model.)
    """
    from collections import Counter

    from tokenizers.pre_tokenizers import BertPreTokenizer
    from transformers import BertTokenizerFast

    words = Counter(word for text in texts for word, _ in BertPreTokenizer().pre_tokenize_str(text))
    characters = sorted({character for word in words for character in word})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *characters, *(f"##{c}" for c in characters)]
    known = set(vocab)
    for word, _ in sorted(words.items(), key=lambda item: (-item[1], item[0])):
        if len(vocab) >= vocab_size:
            break
        if word not in known:
            vocab.append(word)
            known.add(word)
    return BertTokenizerFast(
        vocab={token: i for i, token in enumerate(vocab)}, do_lower_case=False, strip_accents=False
    )


def tiny_bert(
    folder: str | Path, texts: Iterable[str] = DEFAULT_CORPUS, *, layers: int = 12, hidden: int = 32, seed: int = 0
) -> Path:
    """Save a randomly initialised BertModel (``layers`` layers) and its tokenizer to ``folder``."""
    import torch
    from transformers import BertConfig, BertModel

    folder = Path(folder)
    tokenizer = train_wordpiece(texts)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=hidden * 2,
        max_position_embeddings=128,
    )
    torch.manual_seed(seed)
    BertModel(config).eval().save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder
