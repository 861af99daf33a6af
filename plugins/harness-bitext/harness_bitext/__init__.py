"""harness-bitext: an example third-party plugin package for xling-harness."""
