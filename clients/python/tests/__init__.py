"""The client's tests: ``python3 -m unittest discover -s clients/python/tests -t clients/python``
from the repository root, after ``npm run build`` (the end-to-end ones start dist/main.js)."""

import sys
from pathlib import Path

# The package from this checkout, not an installed copy (test_install checks the installed one).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
