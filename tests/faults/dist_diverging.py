"""Under torchrun, each rank reads its own data folder (DATA with RANK replaced by the rank): ranks that disagree."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fixtures.registries import fixture_registry

from harness.errors import HarnessError
from harness.run.distributed import shutdown
from harness.run.runner import evaluate


def main() -> int:
    data, output = sys.argv[1].replace("RANK", os.environ["RANK"]), sys.argv[2]
    try:
        evaluate(
            "mean_similarity",
            "counting-encoder",
            data_dir=data,
            output=output,
            seeds=3,
            registry=fixture_registry(),
            dist_timeout=60,
        )
    except HarnessError as exc:
        print(f"harness: error: {exc}", file=sys.stderr)
        return 2
    finally:
        shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
