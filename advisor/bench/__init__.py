"""Everything that touches llama.cpp: the measuring loop, the child process, synthetic models."""
