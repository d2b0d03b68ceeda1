// bc_problem: the C++ problem and case code as a service for everything that
// is not C++ (generators/problem.py), so repro strings have one
// implementation.
// One JSON request per line on stdin, one JSON answer per line on stdout:
//   {"describe": true}
//       {"ops": [{"name", "directions", "layouts", "fields": [{"key", "required",
//        "square_of", "default", "may_be_zero"}]}], "directions", "dtypes", "layouts"}
//   {"shape": "mb2ic8ih14oc8kh3", "direction": "fwd", "dtype": "f32", "layout": "nchw"}
//   {"repro": "conv2d:fwd:f32:mb2ic8ih14oc8kh3"}
//   {"op": "conv2d", "values": {"mb": 2, ...}}  (the fields of a spec's random schedules)
//       {"repro", "op", "shape", "spec" (the shape as a spec writes it), "bytes"}
//       or {"error": "one line"}
//   {"case": "STEPS device=cpu engine=... threads=1 cudnn.benchmark=false ..."}
//       {"repro": the case's canonical repro (harness/case.h), "schedule": its
//        first token, "settings": [[key, value], ...] of the others, in order} or
//       {"error": "one line"}; inputs/repro.py's split is held to the last two
// Exit status 0 at the end of the input; 2 on a line that is not a request.
#include <algorithm>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/buffers.h"
#include "harness/case.h"
#include "harness/problem.h"

namespace bc {
namespace {

using nlohmann::json;

template <typename P>
json Describe() {
  json fields = json::array();
  constexpr auto all = P::Fields();
  for (const Field<P>& f : all) {
    fields.push_back({{"key", f.key},
                      {"required", f.required},
                      {"square_of", f.square_of >= 0 ? json(all[f.square_of].key) : json(nullptr)},
                      {"default", f.required || f.square_of >= 0 ? json(nullptr) : json(f.fallback)},
                      {"may_be_zero", f.may_be_zero}});
  }
  return {{"name", P::kName}, {"directions", P::kDirections}, {"layouts", P::kLayouts}, {"fields", fields}};
}

json DescribeAll() {
  json ops = json::array();
  [&]<size_t... I>(std::index_sequence<I...>) {
    (ops.push_back(Describe<std::variant_alternative_t<I, Problem>>()), ...);
  }(std::make_index_sequence<std::variant_size_v<Problem>>());
  json directions = json::array(), dtypes = json::array(), layouts = json::array();
  for (Direction d : kAllDirections) directions.push_back(DirectionName(d));
  for (DataType t : kAllDataTypes) dtypes.push_back(DataTypeName(t));
  for (Layout l : kAllLayouts) layouts.push_back(LayoutName(l));
  return {{"ops", ops}, {"directions", directions}, {"dtypes", dtypes}, {"layouts", layouts}};
}

json Answer(const Result<Problem>& p) {
  if (!p.ok()) return {{"error", p.status().message()}};
  return {{"repro", FormatProblem(p.value())},
          {"op", OpName(p.value())},
          {"shape", FormatShape(p.value())},
          {"spec", std::string(OpName(p.value())) + ":" + FormatShape(p.value())},
          {"bytes", Buffers::BytesFor(p.value())}};
}

json Handle(const json& request) {
  if (request.contains("describe")) return DescribeAll();
  if (request.contains("case")) {
    const Result<CaseSpec> c = ParseCaseSpec(request.at("case").get<std::string>());
    if (!c.ok()) return {{"error", c.status().message()}};
    const std::string repro = c->Format(), schedule = c->FormatSchedule();
    json settings = json::array();
    for (size_t at = schedule.size(); at < repro.size();) {  // " key=value" tokens after the schedule
      const size_t begin = at + 1, end = std::min(repro.find(' ', begin), repro.size());
      const std::string token = repro.substr(begin, end - begin);
      const size_t eq = token.find('=');
      settings.push_back({token.substr(0, eq), eq == std::string::npos ? "" : token.substr(eq + 1)});
      at = end;
    }
    return {{"repro", repro}, {"schedule", schedule}, {"settings", settings}};
  }
  if (request.contains("repro")) return Answer(ParseProblem(request.at("repro").get<std::string>()));
  if (request.contains("values")) {
    std::string shape = request.at("op").get<std::string>() + ":";
    for (const auto& [key, value] : request.at("values").items()) shape += key + std::to_string(value.get<int64_t>());
    return Answer(ProblemFromShape(shape));
  }
  return Answer(ProblemFromShape(request.at("shape").get<std::string>(), request.value("direction", "fwd"),
                                 request.value("dtype", "f32"), request.value("layout", "nchw")));
}

}  // namespace
}  // namespace bc

int main() {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    try {
      std::cout << bc::Handle(nlohmann::json::parse(line)).dump() << std::endl;
    } catch (const std::exception& e) {
      std::cerr << "bc_problem: not a request: " << e.what() << "\n";
      return 2;
    }
  }
  return 0;
}
