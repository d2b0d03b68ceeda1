#include "harness/environment.h"

#include <omp.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#ifndef BC_BUILD_TYPE
#define BC_BUILD_TYPE "unknown"
#endif
#ifndef BC_CXX_FLAGS
#define BC_CXX_FLAGS ""
#endif

namespace bc {
namespace {

std::string CpuInfoField(const std::string& field) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "";
}

// The vector-ISA flags that decide which kernels oneDNN and compilers pick.
nlohmann::json IsaFlags() {
  std::istringstream flags(CpuInfoField("flags"));
  nlohmann::json out = nlohmann::json::array();
  std::string f;
  while (flags >> f) {
    if (f == "sse4_2" || f == "avx" || f == "avx2" || f == "fma" || f.rfind("avx512", 0) == 0 ||
        f.rfind("amx", 0) == 0 || f == "f16c") {
      out.push_back(f);
    }
  }
  return out;
}

std::string Hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

}  // namespace

// The torch under test, as CMake read it from its interpreter
// (cmake/torch_info.py); empty without one.
#ifndef BC_TORCH_UNDER_TEST
#define BC_TORCH_UNDER_TEST ""
#define BC_TORCH_LOCAL ""
#define BC_TORCH_CUDA ""
#define BC_TORCH_CUDNN ""
#define BC_TORCH_ONEDNN ""
#define BC_TORCH_PYTHON ""
#endif

nlohmann::json ProbeHostEnvironment() {
  nlohmann::json env;
  const char* machine = std::getenv("BACKENDCHECK_MACHINE");
  const bool named = machine != nullptr && *machine != '\0';
  env["machine"] = named ? std::string(machine) : Hostname();
  // A host name may be generated (a Kubernetes pod's, a container's): the
  // report then names the machine by its CPU (reports/evidence.py).
  env["machine_source"] = named ? "BACKENDCHECK_MACHINE" : "host name";
  // The CPU's vendor as the CPU says it (GenuineIntel, AuthenticAMD): the
  // libraries choose their kernels by it (oneMKL runs its own AVX-512 code
  // on Intel's CPUs only), so a finding can be keyed by it.
  env["cpu_vendor"] = CpuInfoField("vendor_id");
  env["cpu_model"] = CpuInfoField("model name");
  env["cpu_isa_flags"] = IsaFlags();
  env["hardware_threads"] = std::thread::hardware_concurrency();
  env["omp_max_threads"] = omp_get_max_threads();
  env["compiler"] = std::string("g++ ") + __VERSION__;
  env["build_type"] = BC_BUILD_TYPE;
  env["cxx_flags"] = BC_CXX_FLAGS;
  env["openmp"] = _OPENMP;
  // The torch install is part of the platform: the same machine with two
  // torch installs is two platforms, whose evidence is never pooled.
  if (const std::string version = BC_TORCH_UNDER_TEST; !version.empty()) {
    const std::string local = BC_TORCH_LOCAL, cuda = BC_TORCH_CUDA;
    env["torch"] = {{"version", local.empty() ? version : version + "+" + local},
                    {"build", cuda.empty() ? "cpu" : "cuda " + cuda},
                    {"cudnn", BC_TORCH_CUDNN},
                    {"onednn", BC_TORCH_ONEDNN},
                    {"python", BC_TORCH_PYTHON}};
  }
  return env;
}

}  // namespace bc
