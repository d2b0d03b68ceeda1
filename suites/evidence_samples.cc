// Prints one record of every kind and every outcome, each made by the real
// serialiser from a real run, one JSON line each; with --names, the C++ side
// of the contract: kEvidenceSchema and every outcome enum's names. The
// `evidence.contract` test (reports/tests/evidence_contract.py) checks both
// against harness/evidence.schema.json, so a writer and the schema cannot
// drift apart unnoticed.
#include <cstdio>
#include <cstring>
#include <iostream>

#include "harness/evidence.h"
#include "backends/registry.h"
#include "runner/records.h"

namespace bc {
namespace {

int Names() {
  nlohmann::json systems = nlohmann::json::array({"model"});
  for (const EngineEntry& e : EngineEntries()) systems.push_back(e.system);
  nlohmann::json j{{"schema", kEvidenceSchema},
                   {"systems", systems},
                   {"check_outcome", CheckOutcomeNames()},
                   {"result_outcome", ResultOutcomeNames()}};
  std::cout << j.dump() << "\n";
  return 0;
}

void Print(nlohmann::json record) {
  record["schema"] = kEvidenceSchema;  // as EvidenceWriter::Write adds it
  std::cout << record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

int Samples() {
  Print(ToJson(ProbeEnvironment("*")));
  const CaseRow row{"Sample", "0123456789abcdef",
                    "conv2d:fwd:f32:mb1ic4ih8oc4kh3ph1 device=cpu engine=select:reference threads=2 cudnn.benchmark=true",
                    2, false, "{}"};
  Result<CaseRun> run = RunCase(ParseCaseSpec(row.repro).value(), {.repeats = 2, .compare_to_reference = true});
  if (!run.ok()) {
    std::cerr << "evidence_samples: " << run.status().ToString() << "\n";
    return 1;
  }
  CaseRun two_steps = run.value();
  two_steps.steps.push_back(two_steps.steps.front());

  CaseRecord record = RunRecord(row, two_steps);
  record.test = "Sample/Determinism.Bitwise/Sample";
  for (size_t i = 0; i < CheckOutcomeNames().size(); ++i) {
    record.checks.push_back({.name = "bitwise",
                             .outcome = static_cast<CheckOutcome>(i),
                             .detail = "every outcome",
                             .expected = "deterministic",
                             .positive_control = false,
                             .runs_to_distinct = 0});
  }
  record.baseline_digest = "00000000000000000000000000000000";
  Print(ToJson(record));

  CaseRecord compare = RunRecord(row, run.value());
  compare.test = "Sample/Compare.SideBySide/Sample";
  compare.compare = CompareRecord{.repro_a = row.repro, .repro_b = row.repro, .a = {Measure(run.value())},
                                  .b = {Measure(run.value())}, .versus_flags = {{"cudnn.benchmark", false}}, .reps = 1};
  Print(ToJson(compare));

  CaseRecord cross = SkippedRecord(row, "");
  cross.test = "Sample/CrossProcess.Probe/Sample";
  cross.cross_process = CrossProcessRecord{
      .processes = {{.env = "(inherited)", .chosen = "reference:direct", .digest = "d", .implementation = "i", .threads = 2}},
      .choice_distribution = {{"reference:direct", 1}},
      .digest_distribution = {{"d", 1}}};
  Print(ToJson(cross));

  // A PyTorch probe's comparison and fresh processes, as RunTorchProbe
  // records them from the probe's JSON (suites/pytorch_python_test.cc).
  CaseRecord probe = FactRecord("torch_backends.py cudnn_bench_fixed", Check("cudnn_bench_fixed", true, "measured"),
                                "pytorch");
  probe.test = "TorchPython.Sample";
  Result<CompareRecord> probe_compare = CompareFromJson(
      {{"repro_a", "torch_backends.py cudnn_bench_fixed defaults"},
       {"repro_b", "torch_backends.py cudnn_bench_fixed cudnn.benchmark=True"},
       {"a", {{{"steady_ns", 1.5e6}, {"total_ns", 30000000}}}},
       {"b", {{{"steady_ns", 1.0e6}, {"workspace_bytes", 4096}}}},
       {"versus_flags", {{"benchmark", true}}}});
  Result<CrossProcessRecord> probe_processes =
      CrossProcessFromJson({{"processes", {{{"env", "cudnn.benchmark=True"}, {"chosen", "bits d"}, {"digest", "d"},
                                            {"implementation", "cuDNN 91900"}, {"threads", 16}}}}});
  if (!probe_compare.ok() || !probe_processes.ok()) {
    std::cerr << "evidence_samples: a probe's records do not read\n";
    return 1;
  }
  probe.compare = std::move(probe_compare).value();
  probe.compare->others_cpu = 0.01;
  probe.cross_process = std::move(probe_processes).value();
  Print(ToJson(probe));

  CaseRecord skipped = SkippedRecord(row, "not evaluated: no such device here");
  skipped.test = "Sample/Determinism.Bitwise/Skipped";
  Print(ToJson(skipped));
  CaseRecord fact = FactRecord(row.repro, Check("alert_raised", true, "a fact"));
  fact.test = "Sample.Fact";
  Print(ToJson(fact));
  for (size_t i = 0; i < ResultOutcomeNames().size(); ++i) {
    Print(ToJson(ResultRecord{.test = "Sample.Result", .outcome = static_cast<ResultOutcome>(i), .message = "m",
                              .elapsed_ms = 1}));
  }
  return 0;
}

}  // namespace
}  // namespace bc

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--names") == 0) return bc::Names();
  return bc::Samples();
}
