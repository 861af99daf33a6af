"""`harness suite`: a suite file of models x tasks x arguments, run with resume and shards, then the board."""
