"""Infrastructure every layer uses: paths, settings, logging, units, atomic writes, errors,
serialisation of dataclasses, and the "did you mean" lookup."""
