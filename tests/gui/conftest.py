"""GUI fixtures live in tests/conftest.py (the reliability suite drives the window too)."""
