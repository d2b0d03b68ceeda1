// The evidence of the GoogleTest test that is running: its name, and writing
// its records so that a test never passes without them.
#pragma once

#include <string>

#include "runner/records.h"

namespace bc {

// "Suite.Test" of the running test ("Prefix/Fixture.Test/Param"); empty
// outside a test.
std::string CurrentTestName();
// The name a test's records carry: BACKENDCHECK_RECORD_AS where the ctest
// test that runs this process sets it (one gtest TEST serving several ctest
// tests, a team's workload each: Workload.<id>), else the gtest name.
std::string RecordedName(const std::string& gtest_name);
// Writes the record to the process's evidence, as the running test's when
// it names no test. A write that fails fails the running test (ADD_FAILURE)
// with the file and the error.
void WriteEvidence(CaseRecord record);
// A test that is a single fact: its repro and one check, shown by `system`
// (empty: the system the repro's engine field names).
void RecordFact(const std::string& repro, const std::string& check, bool passed, const std::string& detail,
                const std::string& system = "");

}  // namespace bc
