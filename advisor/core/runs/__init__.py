"""Benchmark runs: configuration, the events a run yields, results and their statistics, what
each number means physically, the history on disk and exports."""
