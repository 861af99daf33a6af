"""Built-in plugin: Hugging Face text and image encoders."""
