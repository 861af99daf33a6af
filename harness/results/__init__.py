"""The results layer: records, their signatures and provenance, reading and writing JSONL, intervals."""
