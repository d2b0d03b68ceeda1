"""The report's tests. Every evidence file they read is checked against the
records' contract once per test session, not once per report built
(reports/records.py Validated, in a directory of this session unless
BACKENDCHECK_RECORD_CACHE names one): the recorded runs are read by most
tests, and a file whose records a test alters has other bytes, so it is
checked again."""

import atexit
import os
import shutil
import tempfile

from reports.records import CACHE_ENV

if not os.environ.get(CACHE_ENV):
    _session = tempfile.mkdtemp(prefix="backendcheck-record-cache-")
    atexit.register(shutil.rmtree, _session, True)
    os.environ[CACHE_ENV] = _session
