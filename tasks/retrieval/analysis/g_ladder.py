"""The image-encoder ladder of ``harness g-sweep --image-models``: g from several image encoders on xling-shapes.

On the default benchmark every image is drawn from known scene attributes, so g's quality is
measured against the truth rather than against another encoder. ``scene_gain``: for every image,
the expected relevance of its k nearest other images under g (ties broken at random,
``metrics.hit_probability``), where the relevance of two scenes is the Jaccard overlap of their
attribute sets (``scene_tokens``); averaged over the images and scaled so that 0 is a random g
(the mean relevance of all other images) and 1 is the best possible order (the k most relevant
images first). BkR's image step needs exactly this: an image of a similar scene (the retrieved
target's) must have the source's image among its k nearest.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness.params import parse_kv
from harness_tasks.default_benchmark.scenes import Item
from harness_tasks.retrieval.analysis.g_common import TASKS, ModelSpec, cosines, meta_summary
from harness_tasks.retrieval.metrics import TIE_TOLERANCE, hit_probability

FEATURES = "features"  # the rung whose g is the dataset's own image_features (no --image-model)


def scene_tokens(item: Item) -> frozenset[str]:
    """The scene's attributes: background, place, and count, size, colour and shape of the first and second group."""
    scene = item.scene
    tokens = {f"background={scene.background}", f"place={scene.place}"}
    for index, group in enumerate(scene.groups):
        tokens |= {f"{index}.{name}={getattr(group, name)}" for name in ("count", "size", "colour", "shape")}
    return frozenset(tokens)


def relevance(token_sets: Sequence[frozenset[str]]) -> np.ndarray:
    """rel[i, j]: the Jaccard overlap |T_i & T_j| / |T_i | T_j| of the scenes' attribute sets."""
    vocabulary = {token: index for index, token in enumerate(sorted(set().union(*token_sets)))}
    incidence = np.zeros((len(token_sets), len(vocabulary)))
    for row, tokens in enumerate(token_sets):
        incidence[row, [vocabulary[t] for t in tokens]] = 1.0
    shared = incidence @ incidence.T
    sizes = incidence.sum(axis=1)
    return np.asarray(shared / (sizes[:, None] + sizes[None, :] - shared), dtype=np.float64)


def scene_gain(features: np.ndarray, rel: np.ndarray, k: int) -> float:
    """(got - random) / (ideal - random), each the mean over images of the mean relevance of k other images:
    g's k nearest (expected under random tie-breaking), any k, or the k most relevant."""
    sims = cosines(features)
    size = len(sims)
    others = ~np.eye(size, dtype=bool)
    sims, rel = sims[others].reshape(size, size - 1), rel[others].reshape(size, size - 1)
    ordered = np.sort(sims, axis=1)
    above = np.array([np.searchsorted(o, s + TIE_TOLERANCE, side="right") for o, s in zip(ordered, sims)])
    below = np.array([np.searchsorted(o, s - TIE_TOLERANCE, side="left") for o, s in zip(ordered, sims)])
    chosen = hit_probability(size - 1 - above, above - below - 1, k)
    got = float((chosen * rel).sum(axis=1).mean() / k)
    random = float(rel.mean())
    ideal = float(np.sort(rel, axis=1)[:, -k:].mean())
    return (got - random) / (ideal - random)


def image_vectors(image_model: ModelSpec, data: Any) -> np.ndarray:
    """The vectors of every image of ``data``: the dataset's features for ``FEATURES``, else the model's (cached)."""
    from harness.adapters.cache import default_cache
    from harness.run.context import RunContext

    if image_model.name == FEATURES:
        return np.asarray(data["image_features"], dtype=np.float64)
    given = parse_kv(image_model.args, "--image-models")
    context = RunContext([0], cache=default_cache(), aux_models={"image": (image_model.name, given)}, roles=("image",))
    model = context.load_model("image", "g-sweep")
    if model is None:  # cannot happen: the role is given above
        raise HarnessError(f"image model {image_model.name!r} could not be loaded")
    return np.asarray(model.encode_images(list(data["image"])), dtype=np.float64)


def run_rung(
    image_model: ModelSpec,
    models: Sequence[ModelSpec],
    output: Path,
    *,
    src: str,
    tgt: str,
    seeds: int,
    k: int,
    size: int,
    seed: int,
) -> dict[str, Any]:
    """xlr, backretrieval and corr for every text model with g from ``image_model`` on xling-shapes; g's scene gain
    and ``harness meta``'s evaluation of the rung (its results in ``output/<image model>``)."""
    import harness
    from harness_tasks.default_benchmark.benchmark import dataset, generate

    label = image_model.name + (f":{image_model.args}" if image_model.args else "")
    folder = output / label.replace(":", "_").replace("/", "_").replace(",", "_")
    for model in models:
        harness.evaluate(
            list(TASKS),
            model.name,
            model_args=model.args or {},
            image_model=None if image_model.name == FEATURES else image_model.name,
            image_model_args=image_model.args or {},
            seeds=seeds,
            task_args={"dataset": "xling-shapes", "src": src, "tgt": tgt, "k": k, "size": size, "seed": seed},
            output=str(folder),
            resume=True,
        )
    rel = relevance([scene_tokens(item) for item in generate(size, seed).items])
    vectors = image_vectors(image_model, dataset(size, seed))
    return {
        "condition": label,
        "kind": "image_model",
        "level": 0,
        "scene_gain": scene_gain(vectors, rel, k),
        **meta_summary(folder),
    }


def plot_ladder(
    rows: Sequence[dict[str, Any]], path: Path, *, k: int, title: str
) -> dict[str, list[tuple[str, float]]]:
    """Meta-correlation with XLR against each image model's scene gain: Pearson and Spearman panels,
    BkR filled, CORR hollow, each point named. Returns the (image model, scene gain) points drawn per
    "task/method" (a rung whose correlation is undefined, e.g. a constant g, has no point)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.4, 3.4))
    panels = figure.subplots(1, 2, sharey=True)
    drawn: dict[str, list[tuple[str, float]]] = {}
    for axes, method, symbol in zip(panels, ("pearson", "spearman"), ("Pearson r", "Spearman ρ")):
        for task, face in (("backretrieval", "tab:blue"), ("corr", "none")):
            points = [
                (str(row["condition"]), float(row["scene_gain"]), row["correlations"][task][method])
                for row in rows
                if row["correlations"].get(task, {}).get(method, {}).get("mean") is not None
            ]
            drawn[f"{task}/{method}"] = [(name, x) for name, x, _ in points]
            if not points:
                continue
            axes.errorbar(
                [x for _, x, _ in points],
                [s["mean"] for _, _, s in points],
                yerr=[s["std"] for _, _, s in points],
                fmt="o",
                color="tab:blue",
                markerfacecolor=face,
                markersize=5,
                capsize=2,
                linestyle="none",
                label="BkR" if task == "backretrieval" else "CORR",
            )
            if task == "backretrieval":
                for name, x, summary in points:
                    short = name.removeprefix("efficientnet-")
                    axes.annotate(
                        short, (x, summary["mean"]), xytext=(0, 7), textcoords="offset points", fontsize=6, ha="center"
                    )
        axes.axhline(0, color="grey", linewidth=0.6)
        axes.set_ylim(min(-0.1, axes.get_ylim()[0]), 1.12)
        axes.set_xlabel(f"g quality: scene gain@{k}")
        axes.set_title(f"{symbol} with XLR across models", fontsize=9)
        axes.grid(alpha=0.3)
    panels[0].set_ylabel("meta-correlation (mean ± std over seeds)")
    panels[1].legend(fontsize=7, loc="lower right")
    figure.suptitle(f"{title}\nscene gain: 0 = a random g, 1 = the best possible order", fontsize=9)
    figure.tight_layout()
    figure.savefig(path, dpi=200)
    return drawn
