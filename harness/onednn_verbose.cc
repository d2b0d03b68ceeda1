#include "harness/onednn_verbose.h"

#include <cctype>
#include <set>
#include <vector>

namespace bc {
namespace {

bool IsNumber(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && c != '.') return false;
  }
  return true;
}

}  // namespace

std::optional<OnednnExec> ParseOnednnVerboseLine(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  std::vector<std::string_view> f;
  for (size_t start = 0;;) {
    const size_t comma = line.find(',', start);
    f.push_back(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (f.empty() || (f[0] != "onednn_verbose" && f[0] != "dnnl_verbose")) return std::nullopt;
  size_t i = 1;
  // The header between the marker and the operation: a timestamp, the
  // format's version ("v1"), the event's class ("primitive").
  while (i < f.size() && (IsNumber(f[i]) || f[i] == "v1" || f[i] == "primitive")) ++i;
  if (i + 3 >= f.size() || f[i] != "exec") return std::nullopt;
  return OnednnExec{std::string(f[i + 1]), std::string(f[i + 2]), std::string(f[i + 3])};
}

std::string OnednnKernelsIn(std::string_view text) {
  std::set<std::string> kernels;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    if (const auto e = ParseOnednnVerboseLine(text.substr(start, end - start)); e && e->primitive != "reorder") {
      kernels.insert(e->primitive + " " + e->impl);
    }
    start = end + 1;
  }
  std::string out;
  for (const std::string& k : kernels) out += (out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace bc
