"""What a point does: throughput sweeps, scenario packs, speculative-decoding acceptance, the prompts they
build and the metrics they summarise."""
