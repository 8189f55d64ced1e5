"""Pure-Python core: model facts, shapes, catalogue, hardware facts, ceilings, projection.

Nothing here imports Qt, pyqtgraph or llama_cpp (tests/core/test_boundary.py enforces it).
"""
