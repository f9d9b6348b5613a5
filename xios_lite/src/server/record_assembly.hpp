// The records a server process is reassembling. Each of the process's
// receiving endpoints places the pieces its clients send for its rows; a
// record spans the rows of the whole process (the union of its endpoints'
// bands), so the writer writes it with one call, and it goes to the writer
// once every point has arrived, whichever endpoint placed the last piece.
//
// Thread safety: every member may be called by any receiving thread at once.
// The pieces of one record cover disjoint points, so they are copied outside
// the lock; the count of points filled is kept under it. The thread whose
// count completes a record hands it on: every other piece's copy happened
// before its own count was added under the same lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "netcdf/output_files.hpp"
#include "record_buffer.hpp"
#include "server_process.hpp"
#include "writer_thread.hpp"

namespace xios_lite::server {

class RecordAssembly {
 public:
  RecordAssembly(const Config& cfg, const ServerProcess& process, WriterThread& writer,
                 std::atomic<std::size_t>& bytes_in_flight);

  /// Copies the data event `h` (values `payload`) into its record, made on
  /// first use and filled with the field's default_value; hands the record
  /// to the writer once complete. Returns false, and places nothing, when
  /// the event names no variable of the configuration or points outside
  /// this process's rows (a corrupt or misrouted event).
  [[nodiscard]] bool place(const transport::EventHeader& h, const std::byte* payload);

  /// Drops the records still incomplete (their clients finalised without
  /// sending every piece) and returns how many there were.
  std::size_t drop_incomplete();

  /// Bytes of records in flight (reassembly and write queue) at the peak.
  [[nodiscard]] std::size_t peak_bytes() const;

 private:
  using Key = std::pair<int, int>;  // (variable, record)

  [[nodiscard]] std::unique_ptr<RecordBuffer> make_record(const transport::EventHeader& h) const;

  const Config& cfg_;
  std::vector<netcdf::VariableSlot> table_;
  std::vector<netcdf::RowRange> rows_;  // per domain
  WriterThread& writer_;
  std::atomic<std::size_t>& in_flight_;

  mutable std::mutex mutex_;
  std::map<Key, std::unique_ptr<RecordBuffer>> records_;
  std::size_t peak_ = 0;
};

}  // namespace xios_lite::server
