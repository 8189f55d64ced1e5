"""The pages of the main window, one module per page."""
