// bc_cudnn_log: the one parser of cuDNN's API log (harness/cudnn_log) as a
// tool for the Python probes of PyTorch (probes/cudnn_choices.py),
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
//    "behavior_notes": [...], "legacy_algo", "legacy_index", "name",
//    "convolution" (what the engine was made for, as the log describes it;
//    null where it does not), "notes_from", "notes_unknown", "notes_error"}
// and exits 0; a file it cannot read is one line on stderr and exit 1.
//
// An engine's notes come from the log where it gives them ("notes_from":
// "the log"). Where it does not (cuDNN 9.19 prints "numericalNotes:
// val=NULL_PTR" for the engine of a plan it executes), the tool asks cuDNN
// for them, by the engine's global index and knob choices on the graph the
// log describes (AskCudnnEngineNotes; "notes_from": "cuDNN 9.19.0"), once
// per engine, knobs and graph. Where cuDNN cannot be asked, the notes stay
// unknown: "notes_unknown" says why, and "notes_error" is true where asking
// failed with an error rather than for want of a device, of cuDNN or of the
// log's cuDNN version (not evaluated).
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/cudnn/cudnn.h"
#include "harness/cudnn_log.h"

namespace bc {
namespace {

nlohmann::json ToJson(const CudnnLogTensor& t) {
  return {{"data_type", t.data_type}, {"dims", t.dims}, {"strides", t.strides}, {"uid", t.uid},
          {"alignment", t.alignment}};
}

nlohmann::json ToJson(const CudnnLogConvolution& c) {
  return {{"operation", c.operation},
          {"x", ToJson(c.x)},
          {"w", ToJson(c.w)},
          {"y", ToJson(c.y)},
          {"compute_type", c.compute_type},
          {"mode", c.mode},
          {"pre_paddings", c.pre_paddings},
          {"post_paddings", c.post_paddings},
          {"strides", c.strides},
          {"dilations", c.dilations},
          {"alpha", c.alpha},
          {"beta", c.beta},
          {"described", c.Describe()}};
}

// `asked`: what cuDNN answered so far, by graph, knobs, engine and version.
nlohmann::json ToJson(const CudnnEvent& e, std::map<std::string, Result<EngineNotes>>& asked) {
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
  CudnnRan r = e.ran;
  std::string from = r.notes_known ? "the log" : "", unknown;
  bool error = false;
  if (!r.notes_known && r.engine) {
    json knobs = json::object();
    for (const auto& [name, value] : r.knobs) knobs[name] = value;
    const std::string key = (r.convolution ? ToJson(*r.convolution).dump() : "") + knobs.dump() + " " +
                            std::to_string(*r.engine) + " " + r.version;
    auto it = asked.find(key);
    if (it == asked.end()) it = asked.emplace(key, AskCudnnEngineNotes(r)).first;
    if (it->second.ok()) {
      r.numerical_notes = it->second->numerical;
      r.behavior_notes = it->second->behavior;
      r.notes_known = true;
      from = "cuDNN " + it->second->cudnn_version;
    } else {
      const Status& s = it->second.status();
      unknown = "cuDNN's log gives no notes for engine " + std::to_string(*r.engine) +
                ", and cuDNN could not be asked: " + s.message();
      error = s.code() == StatusCode::kInternal;
    }
  }
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
  j["convolution"] = r.convolution ? ToJson(*r.convolution) : json(nullptr);
  j["notes_from"] = from;
  j["notes_unknown"] = unknown;
  j["notes_error"] = error;
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
  std::map<std::string, bc::Result<bc::EngineNotes>> asked;
  for (const bc::CudnnEvent& e : bc::CudnnEventsIn(text)) std::cout << bc::ToJson(e, asked).dump() << "\n";
  std::cout.flush();
  return std::cout ? 0 : 1;
}
