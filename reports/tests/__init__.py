"""The report's tests.

Every evidence file they read is checked against the records' contract once
per test session, not once per report built (reports/records.py Validated,
in a directory of this session unless BACKENDCHECK_RECORD_CACHE names one):
the recorded runs are read by most tests, and a file whose records a test
alters has other bytes, so it is checked again.

Their scratch files (the recorded runs unpacked and copied, the reports
written) go to a directory of this session on the machine's memory
filesystem where it has one with room to spare (scratch.py): the tests
create some 10^5 small files, and on a journaled disk creating one costs
about ten times what it costs in memory. Only the report's tests import
this package: a test elsewhere (ci/tests) keeps its own temporary
directory."""

import os

from reports.records import CACHE_ENV
from reports.tests import scratch

scratch.use_memory()
if not os.environ.get(CACHE_ENV):
    os.environ[CACHE_ENV] = scratch.session("record-cache-")
