"""Built-in plugin: translation scorers (text-only seq2seq, causal LM, VGAMT, Gated Fusion, CLIP-Trans)."""
