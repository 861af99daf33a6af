"""Built-in plugin: BERT-style layer-k token embedders."""
