// The one way a failure crosses a team of local endpoints.
//
// A collective (or a communicator constructor) is one protocol over all the
// local endpoints: a thread that throws out of it early leaves the others
// waiting for it in the next team barrier. So whatever goes wrong in a shared
// step, whether in the leader's MPI work, one endpoint's copy or a
// nonblocking instance's completion, is recorded here, in a slot every local
// endpoint can read, and each endpoint throws it after the last shared step,
// under its own name:
//
//   FailureSlot slot;                        // shared: published by its owner
//   slot.guard(call.name, call.rank, work);  // records instead of throwing
//   ... team barrier ...
//   slot.rethrow(call.name, call.rank);      // each endpoint, after the protocol
//
// Used by the block exchanges (blocking and nonblocking), every nonblocking
// instance, the constructors' on_leader (team/on_leader.hpp) and topology
// creation. Thread-safe: record, guard and the readers may run concurrently.
#pragma once

#include <mpi.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <string>

#include "checks.hpp"
#include "ep/error.hpp"

namespace ep::detail {

struct RequestState;

class FailureSlot {
 public:
  /// Keeps the first error recorded; later ones are dropped.
  void record(const Error& error);
  /// The same from its parts: `detail` is the message without a call or rank
  /// prefix, `origin` the EP rank it concerns (-1: none in particular).
  void record(ErrorKind kind, std::string detail, int origin, int mpi_code = MPI_SUCCESS);
  /// Runs `step`, recording instead of throwing whatever it throws (an
  /// exception that is not an ep::Error keeps its what() and, where
  /// kind_of() knows it, its kind).
  template <class Step>
  void guard(const char* call, int rank, Step&& step) {
    try {
      step();
    } catch (const Error& e) {
      record(e);
    } catch (const std::exception& e) {
      record(Error(kind_of(e, ErrorKind::kArgument), call, rank, e.what()));
    } catch (...) {
      record(Error(ErrorKind::kArgument, call, rank, kForeignException));
    }
  }
  [[nodiscard]] bool failed() const;
  /// The recorded error as an error of `call` at `rank` (naming the endpoint
  /// it concerns when that is another one); nothing when none was recorded.
  /// For an endpoint that must leave the team before it throws.
  [[nodiscard]] std::optional<Error> error_for(const char* call, int rank) const;
  /// Throws error_for(call, rank), if any.
  void rethrow(const char* call, int rank) const;
  /// Copies the recorded error, if any, into a request's failure fields
  /// (the request then throws it from wait/test). False when none.
  bool report(RequestState& request) const;

 private:
  struct Record {
    ErrorKind kind;
    std::string detail;  // what() without the "call: ep rank r: " prefix of our call
    int mpi_code;
    int origin;  // EP rank it concerns
  };
  [[nodiscard]] std::optional<Record> get() const;
  [[nodiscard]] static std::string detail_for(const Record& record, int rank);

  mutable std::mutex mutex_;
  std::optional<Record> record_;
  // Set (release) once record_ holds a failure, never cleared: the readers'
  // path when nothing failed (every call that succeeds) is one load, no lock.
  std::atomic<bool> recorded_{false};
};

}  // namespace ep::detail
