"""Built-in plugin: datasets shared by the task families (Multi30K layout; local table files)."""

from harness.plugins.hookspecs import hookimpl


@hookimpl
def register_datasets(register):
    register(
        "multi30k",
        "harness_tasks.parallel_data.multi30k:Multi30kLoader",
        "Multi30K task 1: line-aligned captions in en/de/fr/cs (<split>.<lang>, <split>.images.txt).",
    )
    register(
        "files",
        "harness.run.files:FilesLoader",
        "A local JSONL, CSV, TSV or Parquet file, columns renamed, image paths read against its folder.",
    )
