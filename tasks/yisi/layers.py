"""The layer sweeps ``yisi2_filter_layers`` and ``yisi2_sts_layers``: YiSi-2 at every layer in one run.

The token embedder is asked once per side for the vectors of all its layers 0..L (``all_layers``:
one forward pass with every hidden state; L is the model's ``layer`` argument, so
``--model-args layer=12`` sweeps all twelve layers of a 12-layer encoder). Those vectors go
through the cache under their own key (the option ``all_layers`` enters it), all layers at once.
Units and idf weights depend on the tokens only, so every layer shares them; each layer's
YiSi-2 is exactly ``yisi2_filter`` / ``yisi2_sts`` run on that layer. The results line holds the
metrics of every layer (``roc_auc@L9``, ...), the best layer by the main metric (the lowest
index on a tie) and that layer's value. Choosing the layer on the evaluated data makes the
best value an optimistic estimate: it is a diagnostic, not a score to rank models by.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.capabilities import Capability, TokenEmbeddings
from harness.context import RunContext
from harness.errors import HarnessError
from harness.task import Metric, TaskOutput
from harness_tasks.yisi.metric import prepare, yisi
from harness_tasks.yisi.tasks import Yisi2Filter, Yisi2Sts, correlations, filter_metrics


def layer_name(metric: str, layer: int) -> str:
    """The name of ``metric`` at one layer: ``roc_auc@L9``."""
    return f"{metric}@L{layer}"


def embed_all_layers(model: Any, texts: Sequence[str], lang: str) -> list[TokenEmbeddings]:
    """Tokens and the vectors of every layer, shape (L + 1, n_tokens, dim), of each text, in one cached call.

    As in ``embed_side``, texts that tokenize identically share the vectors of the first of them.
    """
    unsupported = HarnessError(
        f"model {model.adapter.name!r} does not return the vectors of all its layers "
        "(embed_tokens(..., all_layers=True)): a layer sweep needs a Hugging Face token embedder"
    )
    try:
        embeddings = model.call(Capability.TOKEN_EMBEDDER, list(texts), {"lang": lang, "all_layers": True})
    except TypeError:
        raise unsupported from None
    first: dict[tuple[str, ...], TokenEmbeddings] = {}
    shared = [first.setdefault(tuple(e.tokens), e) for e in embeddings]
    if any(e.vectors.ndim != 3 for e in shared):
        raise unsupported
    return shared


def at_layer(embeddings: Sequence[TokenEmbeddings], layer: int) -> list[TokenEmbeddings]:
    """The embeddings of one layer."""
    return [TokenEmbeddings(e.tokens, e.vectors[layer]) for e in embeddings]


def best_layer(values: Sequence[float | None]) -> int | None:
    """The index of the largest defined value, the lowest index on a tie; None when none is defined."""
    defined = [(v, -i) for i, v in enumerate(values) if v is not None]
    return -max(defined)[1] if defined else None


class LayerSweep:
    """Shared by the sweeps: per-layer scores, per-layer metrics, the best layer and the metric info."""

    swept: tuple[str, ...] = ()  # the per-layer metrics, the first is the one that picks the best layer
    evaluate_layer: Any

    def sweep(self, data: Any, model: Any) -> tuple[list[list[tuple[float, float, float]]], dict[str, Any]]:
        """(P, R, YiSi-2) of every pair at every layer, and what the results need to reproduce the weights."""
        src, tgt = self.args["src"], self.args["tgt"]
        e_all, f_all = embed_all_layers(model, data["sentence1"], src), embed_all_layers(model, data["sentence2"], tgt)
        layers = min(e.vectors.shape[0] for e in e_all + f_all)
        e_table = self._table(e_all, model, src, self.args["idf_src_file"])
        f_table = self._table(f_all, model, tgt, self.args["idf_tgt_file"])
        per_layer = []
        for layer in range(layers):
            e_side, f_side = at_layer(e_all, layer), at_layer(f_all, layer)
            per_layer.append(
                [yisi(prepare(e, e_table), prepare(f, f_table), self.args["alpha"]) for e, f in zip(e_side, f_side)]
            )
        return per_layer, self.reference_extra()

    def summary(self, per_layer: list[dict[str, float | None]]) -> dict[str, float | None]:
        """Every layer's metrics as ``name@L<layer>``, the best layer and the main metric's value there."""
        main = self.swept[0]
        metrics: dict[str, float | None] = {}
        for layer, values in enumerate(per_layer):
            metrics.update({layer_name(name, layer): values.get(name) for name in self.swept})
        best = best_layer([values.get(main) for values in per_layer])
        metrics["best_layer"] = None if best is None else float(best)
        metrics[f"best_{main}"] = None if best is None else per_layer[best][main]
        metrics["layers"] = float(len(per_layer))
        return metrics

    def metric_info(self, output: TaskOutput) -> dict[str, dict[str, Any]]:
        """The declared metrics' entries, and one per layer for every swept metric."""
        info = super().metric_info(output)  # type: ignore[misc]
        declared = {metric.name: metric for metric in self.base_metrics}
        values = {**self.args, **output.extra}
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

    version = 1
    swept = ("roc_auc", "mean_f1", "mean_f2")
    base_metrics = Yisi2Filter.metrics
    main_metric = "best_roc_auc"
    metrics = sweep_metrics(Yisi2Filter.metrics[0])

    def evaluate(self, data: Any, model: Any, ctx: RunContext) -> TaskOutput:
        """The filtering metrics at every layer; per pair, YiSi-2 at every layer."""
        per_layer, extra = self.sweep(data, model)
        results = [filter_metrics([f for _, _, f in scores], data) for scores in per_layer]
        kinds = results[0][1] if results else []
        samples = [
            {"id": i, "label": y, "kind": k, "yisi2": [scores[n][2] for scores in per_layer]}
            for n, (i, y, k) in enumerate(zip(data["id"], data["label"], kinds))
        ]
        return TaskOutput([self.summary([metrics for metrics, _ in results])], samples, extra)


class Yisi2StsLayers(LayerSweep, Yisi2Sts):
    """``yisi2_sts`` at every layer of the token embedder, in one forward pass."""

    version = 1
    swept = ("pearson", "spearman")
    base_metrics = Yisi2Sts.metrics
    main_metric = "best_pearson"
    metrics = (*sweep_metrics(Yisi2Sts.metrics[0]), Metric("n", "pairs", None, None, None, "number of scored pairs"))

    def evaluate(self, data: Any, model: Any, ctx: RunContext) -> TaskOutput:
        """Pearson and Spearman with the gold similarity at every layer; per pair, YiSi-2 at every layer."""
        per_layer, extra = self.sweep(data, model)
        metrics = self.summary([correlations([f for _, _, f in scores], data) for scores in per_layer])
        metrics["n"] = float(len(data["score"]))
        samples = [
            {"id": i, "gold": g, "yisi2": [scores[n][2] for scores in per_layer]}
            for n, (i, g) in enumerate(zip(data["id"], data["score"]))
        ]
        return TaskOutput([metrics], samples, extra)
