"""Models: where a cell's model comes from (sources.py), what is known of it without loading weights (facts.py),
the architectures built with random weights (presets.py), GGUF files split over part packages (parts.py), and
the check of the tokenizer transformers builds from a GGUF file (gguf_tokenizer.py)."""
