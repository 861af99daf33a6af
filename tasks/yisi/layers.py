"""The layer sweeps ``yisi2_filter_layers`` and ``yisi2_sts_layers``: YiSi-2 at every layer in one run.

The token embedder is asked once per side for the vectors of all its layers 0..L (``all_layers``:
one forward pass with every hidden state; L is the model's ``layer`` argument, so
``--model-args layer=12`` sweeps all twelve layers of a 12-layer encoder). Those vectors go
through the cache under their own key (the option ``all_layers`` enters it), all layers at once.
Units and idf weights depend on the tokens only, so every layer shares them; each layer's
YiSi-2 is exactly ``yisi2_filter`` / ``yisi2_sts`` run on that layer (the same scorer and
protocol, ``LayerSweep`` only runs them per layer). The results line holds the metrics of every
layer (``roc_auc@L9``, ...), the best layer by the main metric (the lowest index on a tie) and
that layer's value. Choosing the layer on the evaluated data makes the best value an optimistic
estimate: it is a diagnostic, not a score to rank models by.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from harness.adapters.cached_model import CachedModel
from harness.adapters.capabilities import Capability, TokenEmbeddings
from harness.errors import HarnessError
from harness.run.context import RunContext
from harness.run.task import Metric, TaskOutput
from harness_tasks.yisi.protocols import Metrics, PairTask
from harness_tasks.yisi.scorers import PairScores, Yisi2Scorer, share_alike
from harness_tasks.yisi.tasks import Yisi2Filter, Yisi2Sts

if TYPE_CHECKING:
    from datasets import Dataset  # only a type here: importing datasets costs a second


def layer_name(metric: str, layer: int) -> str:
    """The name of ``metric`` at one layer: ``roc_auc@L9``."""
    return f"{metric}@L{layer}"


def embed_all_layers(model: CachedModel, texts: Sequence[str], lang: str) -> list[TokenEmbeddings]:
    """Tokens and the vectors of every layer, shape (L + 1, n_tokens, dim), of each text, in one cached call.

    As in ``embed_side``, texts that tokenize identically share the vectors of the first of them.
    A text without tokens may come with vectors of any shape: under ``--shard`` a value another
    shard computes is a token-less stand-in (``Codec.blank``), which has no vectors at any layer.
    """
    unsupported = HarnessError(
        f"model {model.adapter.name!r} does not return the vectors of all its layers "
        "(embed_tokens(..., all_layers=True)): a layer sweep needs a Hugging Face token embedder"
    )
    try:
        embeddings = model.call(Capability.TOKEN_EMBEDDER, list(texts), {"lang": lang, "all_layers": True})
    except TypeError:
        raise unsupported from None
    shared = share_alike(embeddings)
    if any(e.tokens and e.vectors.ndim != 3 for e in shared):
        raise unsupported
    return shared


def layer_count(embeddings: Sequence[TokenEmbeddings]) -> int:
    """The number of layers every embedding with per-layer vectors has (0 when none has any)."""
    return min((e.vectors.shape[0] for e in embeddings if e.vectors.ndim == 3), default=0)


def at_layer(embeddings: Sequence[TokenEmbeddings], layer: int) -> list[TokenEmbeddings]:
    """The embeddings of one layer (a token-less stand-in without per-layer vectors is kept as it is)."""
    return [TokenEmbeddings(e.tokens, e.vectors[layer] if e.vectors.ndim == 3 else e.vectors) for e in embeddings]


def best_layer(values: Sequence[float | None]) -> int | None:
    """The index of the largest defined value, the lowest index on a tie; None when none is defined."""
    defined = [(v, -i) for i, v in enumerate(values) if v is not None]
    return -max(defined)[1] if defined else None


class LayerSweep(PairTask[Yisi2Scorer]):
    """A YiSi-2 task's protocol at every layer: per-layer metrics, the best layer and the metric info.

    Subclass it before the single-layer task (``class Sweep(LayerSweep, Yisi2Filter)``): that
    task gives the protocol (``measure``, ``sample_heads``) and the scorer's arguments.
    """

    swept: ClassVar[tuple[str, ...]] = ()  # the per-layer metrics, the first is the one that picks the best layer
    kept: ClassVar[tuple[str, ...]] = ()  # metrics equal at every layer, reported once
    base_metrics: ClassVar[tuple[Metric, ...]] = ()  # the single-layer task's metrics

    def evaluate(self, data: Dataset, model: CachedModel, ctx: RunContext) -> TaskOutput:
        """The protocol's metrics at every layer; per pair, YiSi-2 at every layer."""
        per_layer = self.sweep(data, model)
        metrics = self.summary([self.measure(scored.values, data) for scored in per_layer])
        name = self.scorer.name
        samples = [
            {**head, name: [scored.values[n] for scored in per_layer]} for n, head in enumerate(self.sample_heads(data))
        ]
        return TaskOutput([metrics], samples, self.scorer.reference_extra())

    def sweep(self, data: Dataset, model: CachedModel) -> list[PairScores]:
        """YiSi-2 of every pair at every layer, with idf tables shared by all layers."""
        e_all = embed_all_layers(model, data["sentence1"], self.args["src"])
        f_all = embed_all_layers(model, data["sentence2"], self.args["tgt"])
        tables = self.scorer.tables(e_all, f_all, model)
        return [
            self.scorer.score_weighted(at_layer(e_all, layer), at_layer(f_all, layer), tables)
            for layer in range(layer_count(e_all + f_all))
        ]

    def summary(self, per_layer: list[Metrics]) -> Metrics:
        """Every layer's metrics as ``name@L<layer>``, the best layer, the main metric's value there, and ``kept``."""
        main = self.swept[0]
        metrics: Metrics = {}
        for layer, values in enumerate(per_layer):
            metrics.update({layer_name(name, layer): values.get(name) for name in self.swept})
        best = best_layer([values.get(main) for values in per_layer])
        metrics["best_layer"] = None if best is None else float(best)
        metrics[f"best_{main}"] = None if best is None else per_layer[best][main]
        metrics["layers"] = float(len(per_layer))
        metrics.update({name: per_layer[0][name] for name in self.kept if per_layer})
        return metrics

    def metric_info(self, output: TaskOutput) -> dict[str, dict[str, Any]]:
        """The declared metrics' entries, and one per layer for every swept metric."""
        info = super().metric_info(output)
        declared = {metric.name: metric for metric in self.base_metrics}
        values = self.info_values(output)
        layers = int(output.per_seed[0].get("layers") or 0) if output.per_seed else 0
        for layer in range(layers):
            for name in self.swept:
                base = declared[name]
                metric = Metric(
                    layer_name(name, layer),
                    f"{base.display} L{layer}",
                    base.higher_is_better,
                    base.chance,
                    None,
                    f"{base.description}, at layer {layer}",
                )
                info[metric.name] = metric.info(values)
        return info


def sweep_metrics(main: Metric) -> tuple[Metric, ...]:
    """The declared metrics of a sweep whose best layer is chosen by ``main``."""
    return (
        Metric(
            f"best_{main.name}",
            f"{main.display} (best layer)",
            main.higher_is_better,
            main.chance,
            None,
            f"{main.description}, at the layer where it is highest (chosen on the evaluated data: optimistic)",
        ),
        Metric("best_layer", "best layer", None, None, None, f"hidden_states index with the highest {main.display}"),
        Metric("layers", "layers", None, None, None, "number of layers swept (0 is the embedding output)"),
    )


class Yisi2FilterLayers(LayerSweep, Yisi2Filter):
    """``yisi2_filter`` at every layer of the token embedder, in one forward pass."""

    role = "yisi2_filter_layers"
    version = 1
    swept = ("roc_auc", "mean_f1", "mean_f2")
    base_metrics = Yisi2Filter.metrics
    main_metric = "best_roc_auc"
    metrics = sweep_metrics(Yisi2Filter.metrics[0])


class Yisi2StsLayers(LayerSweep, Yisi2Sts):
    """``yisi2_sts`` at every layer of the token embedder, in one forward pass."""

    role = "yisi2_sts_layers"
    version = 1
    swept = ("pearson", "spearman")
    kept = ("n",)
    base_metrics = Yisi2Sts.metrics
    main_metric = "best_pearson"
    metrics = (*sweep_metrics(Yisi2Sts.metrics[0]), Metric("n", "pairs", None, None, None, "number of scored pairs"))
