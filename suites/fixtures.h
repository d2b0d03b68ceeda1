// The value-parameterised fixtures that generated case tables instantiate
// (see generators/fixtures.py for which binary holds which).
#pragma once

#include <gtest/gtest.h>

#include "runner/case_table.h"

namespace bc::suite {

// Repeats a case in one process and compares output digests.
class Determinism : public testing::TestWithParam<CaseRow> {};

// A CPU case under some cuDNN flags gives the same bits, through the same
// engine, as under PyTorch's default cuDNN flags.
class CpuNoop : public testing::TestWithParam<CaseRow> {};

// A case run on the model (engine auto: the harness's dispatch over oneDNN
// and the reference) and on PyTorch itself: kernel class, algorithm, bits
// and alert, side by side; every disagreement is recorded for the report.
class Conformance : public testing::TestWithParam<CaseRow> {};

}  // namespace bc::suite

namespace bc::suite {

// Runs a schedule in one process and checks the selector's facts per step:
// searches (one per distinct problem with benchmark on, none with it off),
// the fastest timed candidate chosen, and only deterministic candidates
// timed or chosen under deterministic.
class Schedule : public testing::TestWithParam<CaseRow> {};

// Runs two configurations of one case side by side, interleaved, `reps`
// times, and records their timings and peak memory: evidence for the
// performance claims, which the report judges (no timing is asserted here).
class Compare : public testing::TestWithParam<CaseRow> {};

// Runs a case in fresh processes, under each environment of its options, and
// records the choices and digests of every process.
class CrossProcess : public testing::TestWithParam<CaseRow> {};

}  // namespace bc::suite
