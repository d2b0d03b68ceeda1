"""The ctest labels that decide what the command line runs, named once: the
command line selects by them, the check of run's selection
(reports/tools/run_selection.py) reads them, CMakeLists.txt spells them in its
tests' LABELS."""

# The project's tests of itself: `run` leaves them out, `test` runs them; no
# claim's evidence may carry it.
SELFTEST = "selftest"
# The selftests whose outcome cannot depend on the torch install under test:
# `test` with several installs runs them on the first one only.
TORCH_FREE = "torch-free"
# The tests that start services of their own and take minutes (the Slurm
# recipe's one-node cluster): `test` leaves them out; ctest -L slurm runs them.
OWN_RUN = "slurm"

# The tests that judge (reports/tools/claim_tests.py writes them): one per claim,
# labelled CLAIMS and named CLAIM_PREFIX + its id; the model held to PyTorch;
# the report, which writes the page. They fail on a verdict that is not what
# is known; every other test's failure is the tool's own health.
CLAIMS = "claims"
CLAIM_PREFIX = "claim."
MODEL_TEST = "model.conformance"
REPORT_TEST = "report"


def judges(test: str) -> bool:
    """Whether the ctest test `test` is one that judges."""
    return test.startswith(CLAIM_PREFIX) or test in (MODEL_TEST, REPORT_TEST)
