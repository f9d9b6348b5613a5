// The temporal operations of the variables the servers reduce (reduce_axis,
// reduce_domain): XIOS applies a grid's transformations before the
// temporal operation, so the clients send such a variable's every sample
// (record k: its k-th sampling step) and the server process folds the
// reduced samples into output periods here, then hands each period's
// record to the writer.
//
// Samples complete in any order (each when its last piece arrives); they
// are folded in step order, so the result does not depend on the arrival
// order. A period's record goes out once its last sampling step is
// folded; a sample with points missing (a client that did not send it, or
// a client gone) spoils its period, whose record is then written as
// _FillValue (and reported by the writer with what its first spoiling sample
// missed, like every incomplete record).
// Periods not over when the run ends are not written (as on the clients).
//
// Thread safety: take() may be called by any receiving thread (one lock
// per variable); the writer's push is thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "netcdf/output_files.hpp"
#include "record_buffer.hpp"
#include "temporal/temporal.hpp"
#include "writer_thread.hpp"

namespace xios_lite::server {

class SampleFolder {
 public:
  /// `bytes_in_flight`: the process's count of record bytes in flight
  /// (samples leave it when folded, output records join it).
  SampleFolder(const Config& cfg, WriterThread& writer, std::atomic<std::size_t>& bytes_in_flight);

  /// Whether variable `gvar` is reduced here (its records are samples).
  [[nodiscard]] bool handles(int gvar) const {
    return static_cast<std::size_t>(gvar) < states_.size() &&
           states_[static_cast<std::size_t>(gvar)] != nullptr;
  }
  /// A complete (or, with `incomplete`, a partial) sample of a reduced variable.
  void take(std::unique_ptr<RecordBuffer> sample, bool incomplete);

 private:
  struct Pending {
    netcdf::OutputBlock block;
    bool missing = false;
    std::string what_missed;  // the sample's RecordBuffer::missing
  };
  struct State {
    std::mutex mutex;
    int gvar = 0;
    const OutputVariable* variable = nullptr;
    const std::vector<double>* area = nullptr;  // the field domain's cell areas, or empty
    temporal::Periods periods;
    bool centred = false;
    temporal::SamplingSlots slots;  // the variable's sampling: sample k is slot k's
    std::int64_t next_sample = 0;   // the next sample to fold
    std::map<std::int64_t, Pending> pending;
    std::int64_t period = 0;  // the period being folded
    std::unique_ptr<temporal::Accumulator> acc;
    netcdf::OutputBlock shape;  // the output block's geometry (values unused)
    bool spoiled = false;
    std::string spoiled_by;  // what the first spoiling sample missed
    State(const Calendar& cal, const Frequency& output, temporal::SamplingSlots sampling)
        : periods(cal, output), slots(sampling) {}
  };
  void fold(State& s, std::int64_t k, Pending& p);
  void emit(State& s);

  WriterThread& writer_;
  std::atomic<std::size_t>& in_flight_;
  std::vector<std::unique_ptr<State>> states_;  // by gvar; null: not reduced
};

}  // namespace xios_lite::server
