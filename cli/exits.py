"""The exit statuses of ./backendcheck, declared once: --help prints them
from here, and ci/tests/test_docs.py holds README's table to them."""

from __future__ import annotations

OK = 0
TOOL = 1
USAGE = 2
REFUTED = 3
UNEXPECTED = 4
MODEL = 5
CHANGED = 6
INTERRUPTED = 130

MEANINGS = {
    OK: "the tests ran, and every verdict is what is known for its platform",
    TOOL: "a test failed (the tool's own health: a selftest, a probe or harness that crashed, a missed positive "
          "control), a torch install failed, bad input (one line FILE:LINE: message), a claim's verdict is an error "
          "(the harness could not decide it; the ERROR lines say which), or the report failed its browser check "
          "(test)",
    USAGE: "the command line was wrong (an unknown command or option, a missing or bad value, a missing file, "
           "report with no build): one line, and nothing ran",
    REFUTED: "a guarantee or a team's workload refuted with no known finding (--strict: any refuted guarantee)",
    UNEXPECTED: "another unexpected verdict: a folklore verdict that moved, a known finding no longer seen",
    MODEL: "the model and PyTorch disagree without a known reason",
    CHANGED: "--fail-on-change: a verdict moved on a platform since --baseline, or a platform is missing",
    INTERRUPTED: "interrupted (Ctrl-C): the evidence written so far is kept, no report is written",
}

# What the command says on standard error when the report exits with one of them.
REPORT_SAYS = {
    REFUTED: "a guarantee or a team's workload is refuted with no known finding (catalog/known_findings.toml, "
             "BACKENDCHECK_KNOWN, --known), or --strict",
    UNEXPECTED: "a verdict is not what is known for its platform (the UNEXPECTED lines above)",
    MODEL: "the model and PyTorch disagree without a known reason",
    CHANGED: "a verdict moved since the baseline, or a platform is missing (the CHANGED and MISSING lines above)",
}


def table() -> str:
    """The statuses as --help prints them."""
    return "\n".join(f"  {code:<3} {meaning}" for code, meaning in MEANINGS.items())
