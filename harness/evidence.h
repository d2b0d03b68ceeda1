// EvidenceWriter: the append-only JSON Lines record of what a process saw.
//
// One file per process, "<dir>/<tag>-<pid>.jsonl.part" while it is written,
// renamed to ".jsonl" by Close(). Each record is one line written with a
// single write(2): once write returns, the line is the kernel's, so a crash
// or kill of the process leaves every record written so far readable and at
// most one incomplete last line. The file is fsynced once, at Close(), not
// per record: an fsync per record cost 0.13-0.3 ms (more than a small case's
// whole run, see BENCHMARKS.md) and guards only against the machine itself
// going down, which voids the run anyway. Every record carries "schema"
// (kEvidenceSchema) and "kind"; the first record of a file is the
// "environment" record. Records are nlohmann::json objects; this class only
// frames and persists them.
// A write that fails (a full file system, an I/O error) returns the error
// naming the file, truncates the file back to its last whole line, and is
// remembered: Close() reports the first such failure even when its caller
// could not act on it (a record written after a test ended).
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <mutex>
#include <string>

#include "harness/status.h"

namespace bc {

inline constexpr int kEvidenceSchema = 1;

class EvidenceWriter {
 public:
  EvidenceWriter() = default;
  ~EvidenceWriter();
  EvidenceWriter(const EvidenceWriter&) = delete;
  EvidenceWriter& operator=(const EvidenceWriter&) = delete;

  // Opens a new file in `dir` (created if missing) and writes `environment`
  // as its first record.
  Status Open(const std::filesystem::path& dir, const std::string& tag, nlohmann::json environment);
  // Adds "schema" and writes the record as one line, with one write(2).
  Status Write(nlohmann::json record);
  // fsyncs the file and renames it into place; returns the first failed
  // write, if any, or the close's own failure. Idempotent.
  Status Close();
  // The first failed write since Open (OK when none).
  Status first_failure() const;

  bool is_open() const { return fd_ >= 0; }
  const std::filesystem::path& path() const { return path_; }

 private:
  mutable std::mutex mu_;
  int fd_ = -1;
  Status first_failure_;
  std::filesystem::path path_;  // the ".part" path while open
};

// The process's writer, opened by the test main when an evidence directory is
// configured (BACKENDCHECK_EVIDENCE_DIR). Writes to a closed writer are
// dropped silently: running a test binary by hand needs no evidence dir.
EvidenceWriter& ProcessEvidence();

}  // namespace bc
