"""The model layer: capabilities, the adapter protocol, resolving names to adapters, the cache."""
