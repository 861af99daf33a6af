"""Converted models (e5-small-hf, gemma-270m) persist between test sessions in one folder."""

from packaged.helpers import converted_models_folder  # noqa: F401 (an autouse fixture)
