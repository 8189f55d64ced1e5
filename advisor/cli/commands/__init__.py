"""One module per command: each takes the parsed options and returns an Output."""
