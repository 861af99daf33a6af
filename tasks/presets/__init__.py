"""Built-in plugin: the shipped YAML task presets (IKEA, Multi30K filtering, CoMMuTE languages, xling-shapes).

Each ``*.yaml`` file here is read when the registry is built (structure only; the task classes
are built when a preset is used). See harness/run/presets.py for the format.
"""

from pathlib import Path

from harness.plugins.hookspecs import hookimpl
from harness.run.presets import register_yaml


@hookimpl
def register_tasks(register):
    register_yaml(register, Path(__file__).parent)
