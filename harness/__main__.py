"""``python -m harness`` (also under ``torchrun`` and ``accelerate launch``)."""

import sys

from harness.cli import main

sys.exit(main())
