// bc_cudnn_log: the one parser of cuDNN's API log (harness/cudnn_log) as a
// tool for the Python probes of PyTorch (suites/probes/cudnn_choices.py),
// which run PyTorch in a child interpreter with CUDNN_LOGLEVEL_DBG=3 and
// CUDNN_LOGDEST_DBG=FILE and read the file through it. The probes find it
// at $BACKENDCHECK_CUDNN_LOG_TOOL, which the test binary sets.
//
//   bc_cudnn_log FILE
//
// prints one JSON object a line, in the log's order (CudnnEventsIn):
//   {"kind": "execution" | "plan" | "mark", "time_us", "next_call_us", "status",
//    "mark" (a mark's N), "function", "engine" (null for the legacy API),
//    "knobs": {"SPLIT_K": 1, ...}, "numerical_notes": [...], "notes_known",
//    "behavior_notes": [...], "legacy_algo", "legacy_index", "name"}
// and exits 0; a file it cannot read is one line on stderr and exit 1.
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/cudnn_log.h"

namespace bc {
namespace {

nlohmann::json ToJson(const CudnnEvent& e) {
  using nlohmann::json;
  static constexpr const char* kKinds[] = {"execution", "plan", "mark"};
  json j{{"kind", kKinds[static_cast<int>(e.kind)]},
         {"time_us", e.time_us},
         {"next_call_us", e.next_call_us},
         {"status", e.status}};
  if (e.kind == CudnnEvent::Kind::kMark) {
    j["mark"] = e.mark;
    return j;
  }
  const CudnnRan& r = e.ran;
  json knobs = json::object();
  for (const auto& [name, value] : r.knobs) knobs[name] = value;
  j["function"] = r.function;
  j["engine"] = r.engine ? json(*r.engine) : json(nullptr);
  j["knobs"] = knobs;
  j["numerical_notes"] = r.numerical_notes;
  j["notes_known"] = r.notes_known;
  j["behavior_notes"] = r.behavior_notes;
  j["legacy_algo"] = r.legacy_algo;
  j["legacy_index"] = r.legacy_index;
  j["name"] = r.Name();
  return j;
}

}  // namespace
}  // namespace bc

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: bc_cudnn_log FILE (cuDNN's API log, CUDNN_LOGDEST_DBG)\n";
    return 1;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "bc_cudnn_log: cannot read " << argv[1] << "\n";
    return 1;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    std::cerr << "bc_cudnn_log: reading " << argv[1] << " failed\n";
    return 1;
  }
  for (const bc::CudnnEvent& e : bc::CudnnEventsIn(text)) std::cout << bc::ToJson(e).dump() << "\n";
  std::cout.flush();
  return std::cout ? 0 : 1;
}
