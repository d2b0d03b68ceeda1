#include "suites/test_evidence.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "harness/evidence.h"

namespace bc {

std::string RecordedName(const std::string& gtest_name) {
  const char* as = std::getenv("BACKENDCHECK_RECORD_AS");
  return as != nullptr && *as != '\0' && !gtest_name.empty() ? std::string(as) : gtest_name;
}

std::string CurrentTestName() {
  const testing::TestInfo* info = testing::UnitTest::GetInstance()->current_test_info();
  return info == nullptr ? "" : RecordedName(std::string(info->test_suite_name()) + "." + info->name());
}

void WriteEvidence(CaseRecord record) {
  if (record.test.empty()) record.test = CurrentTestName();
  if (Status s = ProcessEvidence().Write(ToJson(record)); !s.ok()) ADD_FAILURE() << s.message();
}

void RecordFact(const std::string& repro, const std::string& check, bool passed, const std::string& detail,
                const std::string& system) {
  WriteEvidence(FactRecord(repro, Check(check, passed, detail), system));
}

}  // namespace bc
