"""The desktop app: PySide6 + pyqtgraph panels over the core and bench services."""
