import os
import signal
import sys

# Tests import the project from the repository root (as the services themselves do).
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

# A CI timeout or `kill` stops the run with SIGTERM. Raised as KeyboardInterrupt, pytest then tears its fixtures
# down, and they stop the meshes and servers they started (by pid) instead of leaving them running.
signal.signal(signal.SIGTERM, signal.default_int_handler)
