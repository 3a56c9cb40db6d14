"""Run by every Python process started with this directory on PYTHONPATH (tests.tenancy_child):
the tenancy guard on each database connection it opens."""

import os
import sys

if os.environ.get("TENANCY_GUARD_DIR"):
    _root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.path.insert(0, _root)
    try:
        from tests.tenancy_child import install
    finally:
        sys.path.remove(_root)
    install()
