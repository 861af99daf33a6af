"""A broken plugin: its registration hook calls sys.exit()."""

import sys

from harness.plugins.hookspecs import hookimpl


@hookimpl
def register_models(register):
    sys.exit(4)
