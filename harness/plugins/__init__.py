"""The plugin layer: hooks, the registry and the typed registration specs."""
