"""Built-in plugin: YiSi-2 cross-lingual semantic similarity and its baselines."""
