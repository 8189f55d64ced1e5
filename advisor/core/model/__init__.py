"""The model: the GGUF header reader, model facts, quantisation types, built-in shapes, and the
memory a run of the model needs."""
