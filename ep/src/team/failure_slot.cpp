#include "team/failure_slot.hpp"

#include <utility>

#include "p2p/request_state.hpp"

namespace ep::detail {

void FailureSlot::record(const Error& error) {
  // Keep the detail without the "call: ep rank r: " prefix so the error can be
  // rethrown under another endpoint's name without repeating it; an error of
  // another call (MPI_Pack, say) keeps that call's name.
  std::string what = error.what();
  std::string prefix = error.call();
  if (error.ep_rank() >= 0) prefix += ": ep rank " + std::to_string(error.ep_rank());
  prefix += ": ";
  if (what.starts_with(prefix)) {
    what.erase(0, prefix.size());
    if (error.ep_rank() < 0 || error.call().rfind("ep::", 0) != 0) {
      what = error.call() + ": " + what;
    }
  }
  record(error.kind(), std::move(what), error.ep_rank(), error.mpi_code());
}

void FailureSlot::record(ErrorKind kind, std::string detail, int origin, int mpi_code) {
  std::lock_guard lock(mutex_);
  if (record_) return;  // the first failure is the cause
  record_ = Record{kind, std::move(detail), mpi_code, origin};
  recorded_.store(true, std::memory_order_release);
}

bool FailureSlot::failed() const { return recorded_.load(std::memory_order_acquire); }

std::optional<FailureSlot::Record> FailureSlot::get() const {
  if (!failed()) return std::nullopt;
  std::lock_guard lock(mutex_);
  return record_;
}

std::string FailureSlot::detail_for(const Record& record, int rank) {
  if (record.origin < 0 || record.origin == rank) return record.detail;
  return record.detail + " (seen by ep rank " + std::to_string(record.origin) + ")";
}

std::optional<Error> FailureSlot::error_for(const char* call, int rank) const {
  const std::optional<Record> record = get();
  if (!record) return std::nullopt;
  return Error(record->kind, call, rank, detail_for(*record, rank), record->mpi_code);
}

void FailureSlot::rethrow(const char* call, int rank) const {
  if (!failed()) return;
  if (std::optional<Error> error = error_for(call, rank)) throw *error;
}

bool FailureSlot::report(RequestState& request) const {
  const std::optional<Record> record = get();
  if (!record) return false;
  request.failed = true;
  request.error_kind = record->kind;
  request.error_detail = detail_for(*record, request.owner_rank);
  request.status.error = record->mpi_code;
  return true;
}

}  // namespace ep::detail
