"""Built-in plugin: the default benchmark ``xling-shapes``, generated scenes of coloured shapes
with captions in five languages (see docs/default-benchmark.md).

Registrations only: nothing is generated or imported until the dataset is loaded.
"""

from harness.plugins.hookspecs import hookimpl


@hookimpl
def register_datasets(register):
    register(
        "xling-shapes",
        "harness_tasks.default_benchmark.loader:XlingShapesLoader",
        "Built-in default benchmark: generated shape scenes, captions in en/de/fr/es/cs, any size, seeded.",
    )


@hookimpl
def register_commands(register):
    register(
        "xling-shapes-commute",
        "harness_tasks.default_benchmark.contrastive:COMMAND",
        "Write xling-shapes' CoMMuTE-format contrastive set (pronoun gender only the image decides) into a folder.",
    )
