// Status and Result: how failures cross layer boundaries without exceptions.
//
// A Status is either OK or carries a code and a one-line message that names
// what failed. Result<T> holds a value or a non-OK Status. Both are
// [[nodiscard]]: ignoring a failure is a compile warning. Engines map their own
// status types (dnnl_status_t, cudaError_t, cudnnStatus_t) into Status in one
// place each, with BC_RETURN_IF_ERROR adding the failing expression and site.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace bc {

enum class StatusCode {
  kOk,
  kInvalidArgument,  // the request itself is malformed
  kUnavailable,      // the engine or device is not usable on this machine
  kUnimplemented,    // the engine has no implementation for this problem
  kNotDeterministic, // use_deterministic_algorithms forbids the only candidates
  kInternal,         // the engine reported a failure
};

const char* StatusCodeName(StatusCode code);

// Where a failure came from, for a caller whose recovery depends on it:
// PyTorch's convolutions move to their next algorithm past a cuDNN error or
// an out-of-memory, and past nothing else (Conv_v7.cpp try_all, Conv_v8.cpp
// try_configs and try_plans catch CuDNNError, cudnn_frontend's exception and
// c10::OutOfMemoryError). A prefix added on the way up keeps it.
enum class FailureSource { kOther, kCudnn, kOutOfMemory };

// UNAVAILABLE (no such device or library here) or UNIMPLEMENTED (nothing
// here implements the problem): what this machine cannot evaluate, never a
// failure.
inline bool NotEvaluatedHere(StatusCode code) {
  return code == StatusCode::kUnavailable || code == StatusCode::kUnimplemented;
}

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message, FailureSource source = FailureSource::kOther)
      : code_(code), message_(std::move(message)), source_(source) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  // The fact, in the user's terms: what failed or is missing, never where
  // in the harness's code (that is trail()).
  const std::string& message() const { return message_; }
  FailureSource source() const { return source_; }
  // The same failure with `prefix` in front of its message (words that add
  // to the fact: "config cfg0: ").
  Status Prefixed(const std::string& prefix) const {
    Status s(code_, prefix + message_, source_);
    s.trail_ = trail_;
    return s;
  }
  // The same failure, having passed through `where` on its way up
  // (BC_RETURN_IF_ERROR's expression and call site): kept for a developer
  // in trail(), out of the message a user reads.
  Status Through(const std::string& where) const {
    Status s = *this;
    s.trail_ = trail_.empty() ? where : where + "; " + trail_;
    return s;
  }
  // The call sites the failure came up through, outermost first ("" when
  // none): for a developer's log, never for a reason.
  const std::string& trail() const { return trail_; }
  // "UNAVAILABLE: cudaGetDeviceCount returned 35 (...)".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  FailureSource source_ = FailureSource::kOther;
  std::string trail_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : data_(std::move(status)) {}  // NOLINT

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(data_);
  }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace bc

#define BC_STRINGIFY_INNER(x) #x
#define BC_STRINGIFY(x) BC_STRINGIFY_INNER(x)

// Declares `lhs` from the value of a Result<T> expression, or returns its
// Status from the enclosing function:
//   BC_ASSIGN_OR_RETURN(std::vector<Algorithm> all, engine.Candidates(p));
#define BC_CONCAT_INNER(a, b) a##b
#define BC_CONCAT(a, b) BC_CONCAT_INNER(a, b)
#define BC_ASSIGN_OR_RETURN(lhs, expr) BC_ASSIGN_OR_RETURN_IMPL(BC_CONCAT(bc_result_, __LINE__), lhs, expr)
#define BC_ASSIGN_OR_RETURN_IMPL(result, lhs, expr) \
  auto result = (expr);                             \
  if (!result.ok()) return result.status();         \
  lhs = std::move(result).value()

// Returns the Status of `expr` from the enclosing function when it is not OK,
// with the expression and its source location added to its trail (not to
// its message: a reason says what failed, not where the harness was).
#define BC_RETURN_IF_ERROR(expr)                                                        \
  do {                                                                                 \
    ::bc::Status bc_status_ = (expr);                                                  \
    if (!bc_status_.ok()) {                                                            \
      return bc_status_.Through(#expr " at " __FILE__ ":" BC_STRINGIFY(__LINE__));       \
    }                                                                                  \
  } while (0)
