"""Built-in plugin: the CoMMuTE contrastive metrics for multimodal MT (TC, IC, GTC, GIC)."""
