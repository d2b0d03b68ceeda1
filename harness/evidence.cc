#include "harness/evidence.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace bc {

EvidenceWriter::~EvidenceWriter() { (void)Close(); }

Status EvidenceWriter::Open(const std::filesystem::path& dir, const std::string& tag,
                            nlohmann::json environment) {
  {
    std::lock_guard lock(mu_);
    if (fd_ >= 0) return Status(StatusCode::kInvalidArgument, "evidence file already open: " + path_.string());
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status(StatusCode::kInternal, "cannot create " + dir.string() + ": " + ec.message());
    path_ = dir / (tag + "-" + std::to_string(::getpid()) + ".jsonl.part");
    first_failure_ = Status::Ok();
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0) return Status(StatusCode::kInternal, "cannot open " + path_.string() + ": " + std::strerror(errno));
  }
  environment["kind"] = "environment";
  return Write(std::move(environment));
}

Status EvidenceWriter::Write(nlohmann::json record) {
  record["schema"] = kEvidenceSchema;
  // Invalid UTF-8 in a message must not make a record unwritable.
  std::string line = record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line.push_back('\n');
  std::lock_guard lock(mu_);
  if (fd_ < 0) return Status::Ok();
  const off_t start = ::lseek(fd_, 0, SEEK_END);
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : ENOSPC;
      // Leave no torn line: what was written of this record is taken back.
      const bool torn = done > 0 && (start < 0 || ::ftruncate(fd_, start) != 0);
      Status failed(StatusCode::kInternal, "evidence record not written to " + path_.string() + ": " +
                                               std::strerror(err) + " (" + std::to_string(done) + " of " +
                                               std::to_string(line.size()) + " bytes" +
                                               (torn ? "; the torn line could not be removed)" : ")"));
      if (first_failure_.ok()) first_failure_ = failed;
      return failed;
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status EvidenceWriter::first_failure() const {
  std::lock_guard lock(mu_);
  return first_failure_;
}

Status EvidenceWriter::Close() {
  std::lock_guard lock(mu_);
  if (fd_ < 0) return Status::Ok();
  const bool synced = ::fsync(fd_) == 0;
  const int sync_errno = errno;
  ::close(fd_);
  fd_ = -1;
  std::filesystem::path final_path = path_;
  final_path.replace_extension();  // drop ".part"
  std::error_code ec;
  std::filesystem::rename(path_, final_path, ec);
  if (ec) return Status(StatusCode::kInternal, "rename " + path_.string() + ": " + ec.message());
  path_ = final_path;
  if (!first_failure_.ok()) return first_failure_;
  if (!synced) return Status(StatusCode::kInternal, "fsync " + path_.string() + ": " + std::strerror(sync_errno));
  return Status::Ok();
}

EvidenceWriter& ProcessEvidence() {
  static EvidenceWriter writer;
  return writer;
}

}  // namespace bc
