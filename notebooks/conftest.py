"""Running notebooks on their own (``pytest notebooks/01_workload.ipynb``) sets what the suite sets:
their stored outputs were made at the learners' scale, by the learner ``pytest``, with fresh progress."""

import os
import tempfile

os.environ.setdefault("WORKBOOK_LEARNER", "pytest")  # database names (and so reply bytes) depend on it
os.environ["WORKBOOK_SCALE"] = "small"
os.environ.setdefault("WORKBOOK_PROGRESS_DIR", tempfile.mkdtemp(prefix="workbook-progress-"))  # never ~/.workbook
