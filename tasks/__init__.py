"""Built-in task plugins of xling-harness (installed as ``harness_tasks``)."""
