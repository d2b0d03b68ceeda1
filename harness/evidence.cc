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
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status(StatusCode::kInternal, "write " + path_.string() + ": " + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status EvidenceWriter::Close() {
  std::lock_guard lock(mu_);
  if (fd_ < 0) return Status::Ok();
  const bool synced = ::fsync(fd_) == 0;
  ::close(fd_);
  fd_ = -1;
  std::filesystem::path final_path = path_;
  final_path.replace_extension();  // drop ".part"
  std::error_code ec;
  std::filesystem::rename(path_, final_path, ec);
  if (ec) return Status(StatusCode::kInternal, "rename " + path_.string() + ": " + ec.message());
  path_ = final_path;
  if (!synced) return Status(StatusCode::kInternal, "fsync " + path_.string() + ": " + std::strerror(errno));
  return Status::Ok();
}

EvidenceWriter& ProcessEvidence() {
  static EvidenceWriter writer;
  return writer;
}

}  // namespace bc
