#include "harness/cudnn_log.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <map>

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

// Days since 1970-01-01 of a civil date (proleptic Gregorian).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// "Time: 2026-11-26T17:39:37.042334 (0d+0h+0m+2s since start)" in
// microseconds; -1 where it does not read as that.
int64_t TimeOf(std::string_view line) {
  line = Trim(line);
  if (!StartsWith(line, "Time: ")) return -1;
  line.remove_prefix(6);
  int64_t part[6] = {};
  const char* at = line.data();
  const char* end = line.data() + line.size();
  for (int i = 0; i < 6; ++i) {
    const auto [next, ec] = std::from_chars(at, end, part[i]);
    if (ec != std::errc() || next == end || *next != "--T::."[i]) return -1;
    at = next + 1;
  }
  // The fraction, in microseconds whatever its digits.
  int64_t us = 0;
  int digits = 0;
  for (; at != end && std::isdigit(static_cast<unsigned char>(*at)); ++at, ++digits) {
    if (digits < 6) us = us * 10 + (*at - '0');
  }
  if (digits == 0) return -1;
  for (; digits < 6; ++digits) us *= 10;
  const int64_t seconds = DaysFromCivil(part[0], part[1], part[2]) * 86400 + part[3] * 3600 + part[4] * 60 + part[5];
  return seconds * 1000000 + us;
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

// A field's name in lower case without underscores: "engine_id" -> "engineid".
std::string Normalized(const std::string& name) {
  std::string n;
  for (char c : name) {
    if (c != '_') n.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return n;
}

bool IsEngineIndex(const std::string& name) {
  const std::string n = Normalized(name);
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

// "[2,8,14,14]" or "2": the integers of a value; empty where one is not.
std::vector<int64_t> Ints(std::string_view v) {
  v = Trim(v);
  if (StartsWith(v, "[") && EndsWith(v, "]")) v = v.substr(1, v.size() - 2);
  std::vector<int64_t> out;
  while (!v.empty()) {
    const size_t comma = v.find(',');
    const std::optional<int64_t> n = LeadingInt(v.substr(0, comma));
    if (!n) return {};
    out.push_back(*n);
    v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
  }
  return out;
}

// "CUDNN_DATA_HALF (2)" -> "CUDNN_DATA_HALF".
std::string Enumerator(const std::string& value) { return value.substr(0, value.find(' ')); }

// The indexes of the fields one level below fs[i].
std::vector<size_t> Children(const std::vector<CudnnLogField>& fs, size_t i) {
  std::vector<size_t> out;
  for (size_t j = i + 1; j < fs.size() && fs[j].depth > fs[i].depth; ++j) {
    if (fs[j].depth == fs[i].depth + 1) out.push_back(j);
  }
  return out;
}

// A convolution's tensor by its name: "xDesc", "dxDesc" -> x; w and dw -> w;
// y and dy -> y; nullptr for any other.
CudnnLogTensor* TensorByRole(CudnnLogConvolution& c, const std::string& name) {
  std::string n = Normalized(name);
  if (EndsWith(n, "desc")) n.resize(n.size() - 4);
  if (n.size() == 2 && n[0] == 'd') n.erase(0, 1);
  return n == "x" ? &c.x : n == "w" ? &c.w : n == "y" ? &c.y : nullptr;
}

bool Whole(const CudnnLogTensor& t) {
  return !t.data_type.empty() && !t.dims.empty() && t.dims.size() == t.strides.size() && t.alignment > 0;
}

// The operation descriptor at fs[i] (type CUDNN_BACKEND_OPERATION_CONVOLUTION_*),
// read with its tensors and convolution; absent unless the entry shows all
// of them.
std::optional<CudnnLogConvolution> ConvolutionAt(const std::vector<CudnnLogField>& fs, size_t i) {
  CudnnLogConvolution c;
  c.operation = fs[i].type;
  for (size_t j : Children(fs, i)) {
    const CudnnLogField& g = fs[j];
    const std::string name = Normalized(g.name);
    if (g.type == "CUDNN_BACKEND_TENSOR_DESCRIPTOR") {
      CudnnLogTensor* t = TensorByRole(c, g.name);
      if (t == nullptr) continue;
      for (size_t k : Children(fs, j)) {
        const CudnnLogField& h = fs[k];
        const std::string field = Normalized(h.name);
        if (field == "type" || field == "datatype") t->data_type = Enumerator(h.value);
        if (field == "dima" || field == "dimensions") t->dims = Ints(h.value);
        if (field == "stridea" || field == "strides") t->strides = Ints(h.value);
        if (field == "uid" || field == "uniqueid") t->uid = LeadingInt(h.value).value_or(0);
        if (field == "alignmentinbytes" || field == "bytealignment") t->alignment = LeadingInt(h.value).value_or(0);
      }
    } else if (g.type == "CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR") {
      for (size_t k : Children(fs, j)) {
        const CudnnLogField& h = fs[k];
        const std::string field = Normalized(h.name);
        if (field == "computetype" || field == "comptype") c.compute_type = Enumerator(h.value);
        if (field == "mode" || field == "convmode") c.mode = Enumerator(h.value);
        if (field == "lowerpada" || field == "prepaddings") c.pre_paddings = Ints(h.value);
        if (field == "upperpada" || field == "postpaddings") c.post_paddings = Ints(h.value);
        if (field == "stridea" || field == "filterstrides") c.strides = Ints(h.value);
        if (field == "dilationa" || field == "dilations") c.dilations = Ints(h.value);
      }
    } else if (name == "alpha" || name == "beta") {
      (name == "alpha" ? c.alpha : c.beta) = std::strtod(g.value.c_str(), nullptr);
    }
  }
  const size_t spatial = c.strides.size();
  const bool whole = Whole(c.x) && Whole(c.w) && Whole(c.y) && !c.compute_type.empty() && !c.mode.empty() &&
                     spatial > 0 && c.dilations.size() == spatial && c.pre_paddings.size() == spatial &&
                     c.post_paddings.size() == spatial;
  return whole ? std::optional<CudnnLogConvolution>(std::move(c)) : std::nullopt;
}

CudnnRan RanBy(const CudnnLogCall& call) {
  constexpr std::string_view kKnob = "CUDNN_KNOB_TYPE_";
  constexpr std::string_view kConvolution = "CUDNN_BACKEND_OPERATION_CONVOLUTION_";
  CudnnRan r;
  r.function = call.function;
  r.version = call.version;
  const auto& fs = call.fields;
  for (size_t i = 0; i < fs.size(); ++i) {
    const CudnnLogField& f = fs[i];
    if (!r.convolution && StartsWith(f.type, kConvolution)) r.convolution = ConvolutionAt(fs, i);
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
    // The notes field itself: "numericalNotes: ...; val=NULL_PTR;" names
    // none; an array of them, or a descriptor listing them, shows them.
    if (Normalized(f.name) == "numericalnotes" && f.value != "NULL_PTR") r.notes_known = true;
    if (StartsWith(f.name, "CUDNN_NUMERICAL_NOTE_")) r.notes_known = true;
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
    if (!r.numerical_notes.empty()) r.notes_known = true;
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
    // The entry's time closes its fields.
    if (const int64_t t = TimeOf(line); t >= 0 && !calls.empty() && calls.back().time_us < 0) {
      calls.back().time_us = t;
      open = false;
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

// A call of the application's, as opposed to a return or cuDNN's own
// *Internal entry logged inside a call (cudnnBackendExecuteInternal).
bool IsApplicationCall(const CudnnLogCall& call) { return !IsReturn(call) && !EndsWith(call.function, "Internal"); }

const CudnnLogField* ParameterNamed(const CudnnLogCall& call, std::string_view name) {
  for (const CudnnLogField& f : call.fields) {
    if (f.depth == 0 && f.name == name) return &f;
  }
  return nullptr;
}

// Mark N: a 5-D descriptor set to {1, 1, 1, 1, kCudnnMarkBase + N}.
std::optional<int64_t> MarkOf(const CudnnLogCall& call) {
  if (call.function != "cudnnSetTensorNdDescriptor") return std::nullopt;
  const CudnnLogField* dims = ParameterNamed(call, "dimA");
  if (dims == nullptr) return std::nullopt;
  std::string_view v = Trim(dims->value);
  constexpr std::string_view kOnes = "[1,1,1,1,";
  if (!StartsWith(v, kOnes) || !EndsWith(v, "]")) return std::nullopt;
  v = v.substr(kOnes.size(), v.size() - kOnes.size() - 1);
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || n < kCudnnMarkBase) return std::nullopt;
  return n - kCudnnMarkBase;
}

bool BuildsPlan(const CudnnLogCall& call) {
  const CudnnLogField* d = ParameterNamed(call, "descriptor");
  return call.function == "cudnnBackendFinalize" && d != nullptr &&
         d->type == "CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR";
}

// An event of an engine whose entry does not describe the convolution
// takes the one the nearest event between the same marks describes (the
// nearest earlier, else the nearest later): between two marks a child runs
// one convolution.
void ShareConvolutions(std::vector<CudnnEvent>& events) {
  size_t start = 0;
  for (size_t end = 0; end <= events.size(); ++end) {
    if (end < events.size() && events[end].kind != CudnnEvent::Kind::kMark) continue;
    const CudnnLogConvolution* last = nullptr;
    std::vector<size_t> waiting;  // events before the first that describes one
    for (size_t i = start; i < end; ++i) {
      CudnnRan& r = events[i].ran;
      if (r.convolution) {
        last = &*r.convolution;
        for (size_t j : waiting) events[j].ran.convolution = *last;
        waiting.clear();
      } else if (r.engine && last != nullptr) {
        r.convolution = *last;
      } else if (r.engine) {
        waiting.push_back(i);
      }
    }
    start = end + 1;
  }
}

size_t EngineIndexFields(const CudnnLogCall& call) {
  return static_cast<size_t>(std::count_if(call.fields.begin(), call.fields.end(),
                                           [](const CudnnLogField& f) { return IsEngineIndex(f.name); }));
}
}  // namespace

std::vector<CudnnEvent> CudnnEventsIn(std::string_view text) {
  const std::vector<CudnnLogCall> calls = ParseCudnnLog(text);
  // The time of the next application call after each call.
  std::vector<int64_t> next_call(calls.size(), -1);
  for (size_t i = calls.size(); i-- > 1;) {
    next_call[i - 1] = IsApplicationCall(calls[i]) && calls[i].time_us >= 0 ? calls[i].time_us : next_call[i];
  }
  std::vector<CudnnEvent> out;
  std::map<int64_t, std::vector<std::string>> notes;  // by engine index, since the last mark
  std::map<std::string, size_t> awaiting;              // function -> its event awaiting a status
  for (size_t i = 0; i < calls.size(); ++i) {
    const CudnnLogCall& call = calls[i];
    if (IsReturn(call)) {
      if (const auto it = awaiting.find(call.function); it != awaiting.end()) {
        out[it->second].status = call.fields.front().value;
        awaiting.erase(it);
      }
      continue;
    }
    awaiting.erase(call.function);  // a call of this function that is no event: its return is not an event's
    CudnnEvent e{.time_us = call.time_us, .next_call_us = next_call[i]};
    if (const auto mark = MarkOf(call)) {
      e.kind = CudnnEvent::Kind::kMark;
      e.mark = *mark;
      notes.clear();
      out.push_back(std::move(e));
      continue;
    }
    const bool executes = Executes(call.function), builds = BuildsPlan(call);
    CudnnRan ran = RanBy(call);
    if (ran.engine && ran.notes_known && EngineIndexFields(call) == 1) notes[*ran.engine] = ran.numerical_notes;
    if (!executes && !builds) continue;
    if (!ran.notes_known && ran.engine) {
      if (const auto it = notes.find(*ran.engine); it != notes.end()) {
        ran.numerical_notes = it->second;
        ran.notes_known = true;
      }
    }
    e.kind = executes ? CudnnEvent::Kind::kExecution : CudnnEvent::Kind::kPlanBuilt;
    e.ran = std::move(ran);
    awaiting[call.function] = out.size();
    out.push_back(std::move(e));
  }
  ShareConvolutions(out);
  return out;
}

std::vector<CudnnRan> CudnnRunsIn(std::string_view text) {
  std::vector<CudnnRan> out;
  for (CudnnEvent& e : CudnnEventsIn(text)) {
    if (e.kind == CudnnEvent::Kind::kExecution) out.push_back(std::move(e.ran));
  }
  return out;
}

std::string CudnnLogConvolution::Describe() const {
  const auto list = [](const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
  };
  constexpr std::string_view kOperation = "CUDNN_BACKEND_OPERATION_", kData = "CUDNN_DATA_";
  std::string op = operation.substr(StartsWith(operation, kOperation) ? kOperation.size() : 0);
  if (EndsWith(op, "_DESCRIPTOR")) op.resize(op.size() - std::string_view("_DESCRIPTOR").size());
  return op + " " + x.data_type.substr(StartsWith(x.data_type, kData) ? kData.size() : 0) + " x" + list(x.dims) +
         " w" + list(w.dims) + " y" + list(y.dims) + " padding " + list(pre_paddings) + " stride " + list(strides) +
         " dilation " + list(dilations);
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
