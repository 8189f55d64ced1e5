"""The frozen app's entry point: the same `advisor` command as a source install."""

import sys

from advisor.entry import main

if __name__ == "__main__":
    sys.exit(main())
