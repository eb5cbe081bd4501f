"""Where the tests find the repository, their data and the shared reference files beside it."""

from pathlib import Path

#: This folder: the support modules and ``data/``.
TESTS = Path(__file__).resolve().parent
#: The repository root.
REPO = TESTS.parent
#: The folder holding the repository, where ``shared/`` (the reference logs) sits when present.
OUTSIDE = REPO.parent
