"""Built-in plugin: the CoMMuTE contrastive metrics for multimodal MT (TC, IC, GTC, GIC) and their analyses.

Registrations only: nothing heavy is imported until a task, loader or command is used.
"""

from harness.plugins.hookspecs import hookimpl
from harness_tasks.commute.contracts import CONTRACTS

TASKS = "harness_tasks.commute.tasks"


@hookimpl
def register_tasks(register):
    register(
        "commute_tc",
        f"{TASKS}:CommuteTC",
        "CoMMuTE TC: per image, correct translation less perplexing than the incorrect one (Futeral et al. 2023).",
    )
    register(
        "commute_ic",
        f"{TASKS}:CommuteIC",
        "CoMMuTE IC: per translation, its own image makes it less perplexing than the other image.",
    )
    register("commute_gtc", f"{TASKS}:CommuteGTC", "CoMMuTE GTC: both directions of a tuple right under TC.")
    register("commute_gic", f"{TASKS}:CommuteGIC", "CoMMuTE GIC: both directions of a tuple right under IC.")
    register(
        "commute_consistency",
        f"{TASKS}:CommuteConsistency",
        "CoMMuTE consistency rates IPR/INR/CPR/CNR against a 50/50 mixed-image pseudo text-only baseline.",
    )
    register(
        "commute_oracle",
        f"{TASKS}:CommuteOracle",
        "Extended CoMMuTE image oracle: Max/Min IC and GIC over candidate images, replacement rate, TC/GTC.",
    )


@hookimpl
def register_datasets(register):
    register(
        "commute",
        "harness_tasks.commute.data:CommuteLoader",
        "CoMMuTE tuples (src.en, correct.<l>, incorrect.<l>, img.order) with images from --images.",
    )
    register(
        "commute_extended",
        "harness_tasks.commute.data:CommuteExtendedLoader",
        "CoMMuTE with candidate images per translation in <images>/extended/<id>/{a,b}/.",
    )


@hookimpl
def register_commands(register):
    register(
        "commute-iou",
        "harness_tasks.commute.iou:COMMAND",
        "Failure IoU (TC and IC) of two CoMMuTE runs from their per-sample logs.",
    )
    register(
        "commute-temperature",
        "harness_tasks.commute.sweep:COMMAND",
        "CoMMuTE metrics over a range of softmax temperatures: a table and a plot.",
    )
    register(
        "commute-perplexity",
        "harness_tasks.commute.perplexity:COMMAND",
        "Per-tuple perplexities under each image (correct vs incorrect, own vs other image) from per-sample logs.",
    )
    register(
        "commute-stand-in-images",
        "harness_tasks.commute.stand_in_images:COMMAND",
        "Write labelled stand-in images named as in a CoMMuTE folder's img.order (to check a setup, not to report).",
    )


@hookimpl
def register_families(register):
    register(
        "commute",
        "harness_tasks.commute.plots:PLOTS",
        "CoMMuTE",
        average=True,
        tasks=("commute_tc", "commute_ic", "commute_gtc", "commute_gic", "commute_consistency", "commute_oracle"),
        contracts=CONTRACTS,
    )
