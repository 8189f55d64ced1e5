"""What a model placed over a card and system RAM reaches of the host's figures: the share of
the RAM's bandwidth llama.cpp's CPU backend streams the weights kept there at, beside a card
(a measured read bandwidth, the app's probe's, or a rated one, the modules' speed x
channels), and the share of the host link's rated rate a prompt's copy of those weights to the
card reaches.

The shipped figures are the fit on the published hybrid results (projecting/hybrid_fit.py; the
rows and how each is read: resources/data/llamacpp_hybrid_added.csv and
llamacpp_hybrid_reading.csv; errors: benchmarks/hybrid_check.py).
"""

from __future__ import annotations

from dataclasses import dataclass

# fitted on the published hybrid decode rows whose RAM was measured (projecting/hybrid_fit.py)
MEASURED_RAM_SHARE = 0.82
# fitted on the published hybrid decode rows whose RAM is rated or assumed
RATED_RAM_SHARE = 0.54
# fitted on the published hybrid prefill rows (the share of the link's rated one-way rate)
LINK_SHARE = 0.84


@dataclass(frozen=True)
class HybridShares:
    measured_ram: float = MEASURED_RAM_SHARE
    rated_ram: float = RATED_RAM_SHARE
    link: float = LINK_SHARE
