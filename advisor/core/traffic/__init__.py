"""Import real traffic (chat exports, server logs) and derive workload statistics from it.

Pure core: standard library and numpy only. Text is counted and dropped; only numbers
survive. Entry points: `detect_format`, `import_traffic`, `workload_numbers`,
`WorkloadStore`.
"""

from advisor.core.traffic.derive import TrafficStats, derive_stats, workload_numbers
from advisor.core.traffic.detect import detect_format
from advisor.core.traffic.errors import Cancelled, TrafficImportError, WorkloadNameError
from advisor.core.traffic.importer import import_traffic
from advisor.core.traffic.records import FORMATS, CountedTurn, Turn
from advisor.core.traffic.store import SavedWorkload, WorkloadStore
from advisor.core.traffic.tokens import EstimatedCounter, TokenCounter, count_turns

__all__ = [
    "FORMATS",
    "Cancelled",
    "CountedTurn",
    "EstimatedCounter",
    "SavedWorkload",
    "TokenCounter",
    "TrafficImportError",
    "TrafficStats",
    "Turn",
    "WorkloadNameError",
    "WorkloadStore",
    "count_turns",
    "derive_stats",
    "detect_format",
    "import_traffic",
    "workload_numbers",
]
