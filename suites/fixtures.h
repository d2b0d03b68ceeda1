// The value-parameterised fixtures that generated case tables instantiate
// (see generators/fixtures.py for which binary holds which).
#pragma once

#include <gtest/gtest.h>

#include "suites/case_table.h"

namespace bc::suite {

// Repeats a case in one process and compares output digests.
class Determinism : public testing::TestWithParam<CaseRow> {};

// A CPU case under some cuDNN flags gives the same bits, through the same
// engine, as under PyTorch's default cuDNN flags.
class CpuNoop : public testing::TestWithParam<CaseRow> {};

}  // namespace bc::suite
