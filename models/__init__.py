"""Built-in model adapters of xling-harness (installed as ``harness_models``)."""
