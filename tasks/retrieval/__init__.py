"""Built-in plugin: image-pivoted cross-lingual retrieval (xlr, backretrieval, corr) and its data."""
