#include "harness/cudnn_log.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace bc {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// An integer at the start of `s` ("38", "-1", "38 (0x26)").
std::optional<int64_t> LeadingInt(std::string_view s) {
  s = Trim(s);
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  return v;
}

// "I! CuDNN (v91200 46) function cudnnBackendExecute() called:" or
// "cuDNN (v90000) function cudnnSetActivationDescriptor() called:".
std::optional<CudnnLogCall> Header(std::string_view line) {
  line = Trim(line);
  if (!StartsWith(line, "cuDNN (v") && !StartsWith(line, "CuDNN (v")) return std::nullopt;
  const size_t close = line.find(')');
  const size_t fn = line.find(" function ");
  const size_t parens = line.find("()", fn == std::string_view::npos ? 0 : fn);
  if (close == std::string_view::npos || fn == std::string_view::npos || parens == std::string_view::npos ||
      line.find("called", parens) == std::string_view::npos) {
    return std::nullopt;
  }
  CudnnLogCall call;
  std::string_view version = line.substr(8, close - 8);
  call.version = std::string(version.substr(0, version.find(' ')));
  const size_t start = fn + std::string_view(" function ").size();
  call.function = std::string(line.substr(start, parens - start));
  return call;
}

// "    name: type=T; val=V;" (after the mark), four spaces a level.
std::optional<CudnnLogField> Field(std::string_view line) {
  size_t spaces = 0;
  while (spaces < line.size() && line[spaces] == ' ') ++spaces;
  if (spaces < 4) return std::nullopt;  // Time:, Process...: the entry's metadata
  line = Trim(line);
  const size_t colon = line.find(": ");
  std::string_view rest;
  std::string_view name;
  if (colon != std::string_view::npos) {
    name = line.substr(0, colon);
    rest = Trim(line.substr(colon + 2));
  } else if (!line.empty() && line.back() == ':') {
    name = line.substr(0, line.size() - 1);
  } else {
    return std::nullopt;
  }
  CudnnLogField f;
  f.depth = static_cast<int>(spaces / 4) - 1;
  f.name = std::string(Trim(name));
  if (StartsWith(rest, "type=")) {
    rest.remove_prefix(5);
    const size_t end = rest.find_first_of(";:");
    f.type = std::string(Trim(rest.substr(0, end)));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }
  if (const size_t val = rest.find("val="); val != std::string_view::npos) {
    std::string_view v = rest.substr(val + 4);
    if (const size_t semi = v.rfind(';'); semi != std::string_view::npos) v = v.substr(0, semi);
    f.value = std::string(Trim(v));
  }
  return f;
}

void AddUnique(std::vector<std::string>& out, std::string v) {
  if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(std::move(v));
}

// Every PREFIX<NAME> token in `s` (an array of enumerators, a field's name).
void Tokens(std::string_view s, std::string_view prefix, std::vector<std::string>& out) {
  for (size_t at = s.find(prefix); at != std::string_view::npos; at = s.find(prefix, at + 1)) {
    size_t end = at + prefix.size();
    while (end < s.size() && (std::isupper(static_cast<unsigned char>(s[end])) ||
                              std::isdigit(static_cast<unsigned char>(s[end])) || s[end] == '_')) {
      ++end;
    }
    if (end > at + prefix.size()) AddUnique(out, std::string(s.substr(at + prefix.size(), end - at - prefix.size())));
  }
}

bool IsEngineIndex(const std::string& name) {
  std::string n;
  for (char c : name) {
    if (c != '_') n.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return n == "engineid" || n == "globalindex" || n == "engineglobalindex" || n == "cudnnattrengineglobalindex";
}

bool Executes(const std::string& fn) {
  return fn == "cudnnBackendExecute" || fn == "cudnnConvolutionForward" || fn == "cudnnConvolutionBackwardData" ||
         fn == "cudnnConvolutionBackwardFilter" || fn == "cudnnConvolutionBiasActivationForward";
}

void SetKnob(std::vector<std::pair<std::string, int64_t>>& knobs, std::string name, int64_t v) {
  for (auto& [n, value] : knobs) {
    if (n == name) {
      value = v;
      return;
    }
  }
  knobs.emplace_back(std::move(name), v);
}

CudnnRan RanBy(const CudnnLogCall& call) {
  constexpr std::string_view kKnob = "CUDNN_KNOB_TYPE_";
  CudnnRan r;
  r.function = call.function;
  const auto& fs = call.fields;
  for (size_t i = 0; i < fs.size(); ++i) {
    const CudnnLogField& f = fs[i];
    if (!r.engine && IsEngineIndex(f.name)) r.engine = LeadingInt(f.value);
    if (StartsWith(f.name, kKnob)) {
      // knobs listed by name: "CUDNN_KNOB_TYPE_SPLIT_K: type=int; val=1;"
      if (const auto v = LeadingInt(f.value)) SetKnob(r.knobs, f.name.substr(kKnob.size()), *v);
    } else if (StartsWith(f.value, kKnob)) {
      // a knob choice: "knobType: ... val=CUDNN_KNOB_TYPE_SPLIT_K (3);" and its value beside it
      const std::string knob = f.value.substr(kKnob.size(), f.value.find(' ') - kKnob.size());
      for (size_t j = i + 1; j < fs.size() && fs[j].depth >= f.depth; ++j) {
        std::string lower = fs[j].name;
        std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
        if (fs[j].depth == f.depth && lower.find("value") != std::string::npos) {
          if (const auto v = LeadingInt(fs[j].value)) SetKnob(r.knobs, knob, *v);
          break;
        }
      }
    }
    for (const auto& [prefix, notes] : {std::pair<std::string_view, std::vector<std::string>*>{
                                            "CUDNN_NUMERICAL_NOTE_", &r.numerical_notes},
                                        {"CUDNN_BEHAVIOR_NOTE_", &r.behavior_notes}}) {
      // a note by name ("CUDNN_NUMERICAL_NOTE_TENSOR_CORE: type=bool; val=true;"),
      // or an array of them ("val=[CUDNN_NUMERICAL_NOTE_TENSOR_CORE (0)]")
      if (StartsWith(f.name, prefix)) {
        if (f.value == "true" || f.value == "1") Tokens(f.name, prefix, *notes);
      } else {
        Tokens(f.value, prefix, *notes);
      }
    }
    if (StartsWith(f.type, "cudnnConvolution") && EndsWith(f.type, "Algo_t") && r.legacy_algo.empty()) {
      // "algo: type=cudnnConvolutionFwdAlgo_t; val=CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM (0);"
      const size_t space = f.value.find(' ');
      r.legacy_algo = f.value.substr(0, space);
      if (const size_t open = f.value.find('('); open != std::string::npos) {
        r.legacy_index = static_cast<int>(LeadingInt(std::string_view(f.value).substr(open + 1)).value_or(-1));
      }
    }
  }
  return r;
}

}  // namespace

std::vector<CudnnLogCall> ParseCudnnLog(std::string_view text) {
  std::vector<CudnnLogCall> calls;
  bool open = false;  // inside a call's entry
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // The severity mark: "I!" opens an entry, "i!" continues it (E!, W! alike).
    if (line.size() >= 2 && line[1] == '!' && std::isalpha(static_cast<unsigned char>(line[0]))) {
      line.remove_prefix(2);
      if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    }
    if (auto call = Header(line)) {
      calls.push_back(std::move(*call));
      open = true;
      continue;
    }
    if (!open) continue;
    if (auto field = Field(line)) {
      calls.back().fields.push_back(std::move(*field));
    } else if (!Trim(line).empty()) {
      open = false;  // Time:, Process...: the entry's metadata ends its fields
    }
  }
  return calls;
}

// cuDNN 9 logs a call twice: its arguments as it is called, then an entry
// of the same function holding its status alone as it returns (seen in
// cuDNN 9.19's log, reports/tests/data/cudnn). The return is not another
// execution.
namespace {
bool IsReturn(const CudnnLogCall& call) {
  return !call.fields.empty() &&
         std::all_of(call.fields.begin(), call.fields.end(),
                     [](const CudnnLogField& f) { return f.depth == 0 && f.name == "status"; });
}
}  // namespace

std::vector<CudnnRan> CudnnRunsIn(std::string_view text) {
  std::vector<CudnnRan> out;
  for (const CudnnLogCall& call : ParseCudnnLog(text)) {
    if (Executes(call.function) && !IsReturn(call)) out.push_back(RanBy(call));
  }
  return out;
}

std::string CudnnRan::Name() const {
  std::string s;
  if (engine) {
    s = "eng" + std::to_string(*engine);
    for (const auto& [knob, v] : knobs) s += " " + knob + "=" + std::to_string(v);
  } else if (!legacy_algo.empty()) {
    s = legacy_algo;
  } else {
    return "";
  }
  if (!numerical_notes.empty()) {
    s += " [";
    for (size_t i = 0; i < numerical_notes.size(); ++i) s += (i ? "," : "") + numerical_notes[i];
    s += "]";
  }
  return s;
}

}  // namespace bc
