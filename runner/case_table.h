// One row of a generated case table: what the generator writes and a
// value-parameterised fixture receives. The repro string is the case's whole
// definition (see harness/case.h); name is the gtest parameter name, id the
// stable case id of the manifest; options are what a fixture needs beyond
// the case (Compare: the other configuration; CrossProcess: processes and
// environments).
#pragma once

#include <ostream>

namespace bc {

struct CaseRow {
  const char* name;
  const char* id;
  const char* repro;
  int repeats;
  bool positive_control;  // the check must catch this case as nondeterministic
  const char* options;    // JSON object of fixture-specific options ("{}" when none)
};

inline void PrintTo(const CaseRow& row, std::ostream* os) { *os << row.repro; }

// The case behind a full gtest name ("Prefix/Fixture.Test/name") of this
// binary's generated tables, or nullptr. Defined by the generated file.
const CaseRow* FindGeneratedCase(const char* test_name);

}  // namespace bc
