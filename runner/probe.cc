#include "runner/probe.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "harness/tensor_data.h"
#include "runner/case_run.h"

extern char** environ;

namespace bc {
namespace {

int Probe(const std::string& repro, int repeats) {
  Result<CaseSpec> spec = ParseCaseSpec(repro);
  if (!spec.ok()) {
    std::cerr << spec.status().ToString() << "\n";
    return 1;
  }
  if (const char* omp = std::getenv("OMP_NUM_THREADS"); omp != nullptr && std::atoi(omp) > 0) {
    spec->threads = std::atoi(omp);
  }
  Result<CaseRun> run = RunCase(spec.value(), {.repeats = repeats, .compare_to_reference = false});
  nlohmann::json out;
  if (!run.ok()) {
    out["status"] = run.status().ToString();
    // Where in the harness it failed, for the developer who re-runs a case
    // (./backendcheck run --case); never part of a reason.
    if (!run.status().trail().empty()) out["trail"] = run.status().trail();
    std::cout << out.dump() << std::endl;
    return IsNotEvaluated(run.status()) ? kProbeNotEvaluated : 1;
  }
  out["threads"] = spec->threads;
  out["steps"] = nlohmann::json::array();
  for (const StepRun& s : run->steps) {
    nlohmann::json digests = nlohmann::json::array();
    for (uint64_t d : s.digests) digests.push_back(DigestHex(d));
    out["steps"].push_back({{"chosen", s.engine + ":" + s.algorithm.name},
                            {"determinism", DeterminismName(s.algorithm.determinism)},
                            {"implementation", s.implementation},
                            {"digests", digests},
                            {"cache", s.selection ? s.selection->cache : "none"}});
  }
  std::cout << out.dump() << std::endl;
  return 0;
}

}  // namespace

std::optional<int> MaybeRunProbe(int argc, char** argv) {
  std::string repro;
  int repeats = 1;
  bool probe = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--bc_probe=", 0) == 0) {
      repro = arg.substr(11);
      probe = true;
    } else if (arg.rfind("--bc_repeats=", 0) == 0) {
      repeats = std::max(1, std::atoi(arg.c_str() + 13));
    }
  }
  if (!probe) return std::nullopt;
  return Probe(repro, repeats);
}

Result<ProbeResult> SpawnProbe(const std::string& repro, int repeats, const std::map<std::string, std::string>& env) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name == "BACKENDCHECK_EVIDENCE_DIR" || name == "BACKENDCHECK_DEFAULT_EVIDENCE_DIR" || env.count(name)) continue;
    env_strings.push_back(entry);
  }
  for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
  return SpawnJson({"/proc/self/exe", "--bc_probe=" + repro, "--bc_repeats=" + std::to_string(repeats)}, env_strings);
}

Result<ProbeResult> SpawnJson(std::vector<std::string> args, std::vector<std::string> env_strings) {
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string exe = args.front();

  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    return Status(StatusCode::kInternal, std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, exe.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  if (rc != 0) {
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    return Status(StatusCode::kInternal, std::string("posix_spawn: ") + std::strerror(rc));
  }
  // Drain both pipes until the child closes them.
  std::string out, err;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        (i == 0 ? out : err).append(buf, static_cast<size_t>(n));
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ProbeResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.stderr_text = err;
  // The result is the last line that starts with '{' (a library may print before it).
  std::string line;
  for (size_t start = 0; start < out.size();) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    if (out[start] == '{') line = out.substr(start, end - start);
    start = end + 1;
  }
  if (line.empty()) {
    return Status(StatusCode::kInternal, "probe printed no result (exit " + std::to_string(r.exit_code) + "): " + err);
  }
  r.output = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (r.output.is_discarded()) return Status(StatusCode::kInternal, "probe printed unreadable JSON: " + out);
  return r;
}

}  // namespace bc
