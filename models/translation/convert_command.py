"""``harness convert``: turn a model's original checkpoint into the folder layout an adapter loads.

``harness convert gated-fusion FAIRSEQ.pt OUT_DIR --dictionaries DATA_BIN --bpe-codes CODES`` converts
the authors' fairseq Gated Fusion checkpoint (see ``fairseq_gated`` and docs/checkpoints.md).
"""

from __future__ import annotations

import argparse


class ConvertCommand:
    """Convert an original checkpoint into a harness model folder."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """One sub-command per kind of checkpoint."""
        kinds = parser.add_subparsers(dest="kind", metavar="KIND", required=True)
        gated = kinds.add_parser("gated-fusion", help="the fairseq checkpoint of Gated Fusion (Wu et al., 2021)")
        gated.add_argument("checkpoint", help="the fairseq .pt file (e.g. checkpoint_best.pt)")
        gated.add_argument("out_dir", help="the Gated Fusion folder to write (must not exist or be empty)")
        gated.add_argument(
            "--dictionaries", required=True, help="the fairseq data folder holding dict.<src>.txt and dict.<tgt>.txt"
        )
        gated.add_argument(
            "--bpe-codes", required=True, help="the subword-nmt BPE codes the training data was split with"
        )
        gated.add_argument(
            "--image-model",
            default="microsoft/resnet-50",
            help="Hub id or folder of the vision model giving the pooled image feature (default ResNet-50)",
        )
        gated.add_argument("--lowercase", action="store_true", help="the training text was lowercased")

    def run(self, args: argparse.Namespace) -> int:
        """Convert, then print the folder written."""
        from harness_models.translation.fairseq_gated import convert

        out = convert(
            args.checkpoint, args.out_dir, args.dictionaries, args.bpe_codes, args.image_model, args.lowercase
        )
        print(f"wrote {out}: load it with --model {out}")
        return 0


COMMAND = ConvertCommand()
