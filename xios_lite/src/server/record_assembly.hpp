// The records a server process is reassembling. Each of the process's
// receiving endpoints places the pieces its clients send for its rows; a
// record spans the rows of the whole process (the union of its endpoints'
// bands), so the writer writes it with one call, and it goes to the writer
// once every point has been accounted for, whichever endpoint placed the
// last piece.
//
// Records are keyed by (variable, output period): pieces of different
// periods never meet in one record. A piece is data (values) or missing
// (the client did not send the field when it was due); a record with
// missing points is written with _FillValue there and reported by the
// writer (once written), naming the file, the variable, the time and the
// clients. Records still incomplete
// when the clients are done (a client gone, or finalised earlier than the
// others) are written the same way by flush_incomplete().
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
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "netcdf/output_files.hpp"
#include "record_buffer.hpp"
#include "sample_folder.hpp"
#include "server_process.hpp"
#include "writer_thread.hpp"

namespace xios_lite::server {

class RecordAssembly {
 public:
  RecordAssembly(const Config& cfg, const ServerProcess& process, WriterThread& writer,
                 std::atomic<std::size_t>& bytes_in_flight);

  /// Client `client`'s definition (its kDefinition payload: the count of EP
  /// ranks it speaks for and the ranks, then per domain a count of blocks
  /// and ibegin ni jbegin nj per block). Returns false for a malformed one.
  [[nodiscard]] bool define(int client, std::span<const int> layout);

  /// The EP ranks client `client` speaks for, "2, 3" (itself before its definition).
  [[nodiscard]] std::string ranks_of(int client) const;

  /// Places the data or missing event `h` of `client` (values `payload`)
  /// in its record, made on first use and filled with the field's
  /// default_value; hands the record to the writer once complete. Returns
  /// false, and places nothing, when the event names no variable of the
  /// configuration or points outside this process's rows (a corrupt or
  /// misrouted event).
  /// `endpoint`: the receiving endpoint (EP rank among the servers). An
  /// empty data event (a domain with fewer rows than server endpoints) makes
  /// an empty record on a process without rows of the domain, once (at its
  /// first endpoint), and is ignored elsewhere.
  [[nodiscard]] bool place(int client, int endpoint, const transport::EventHeader& h,
                           const std::byte* payload);

  /// Hands the records still incomplete to the writer (their missing points
  /// stay _FillValue) and returns how many there were.
  std::size_t flush_incomplete();

  /// Bytes of records in flight (reassembly and write queue) at the peak.
  [[nodiscard]] std::size_t peak_bytes() const;

 private:
  using Key = std::pair<int, int>;  // (variable, record)

  [[nodiscard]] std::unique_ptr<RecordBuffer> make_record(const transport::EventHeader& h) const;
  // Under mutex_: the line naming what `r` misses, and who.
  [[nodiscard]] std::string describe_missing(const RecordBuffer& r) const;
  [[nodiscard]] int domain_of(int gvar) const;
  /// The rows of variable `gvar`'s field domain this process holds: its
  /// bands, or for a variable that needs the whole domain every row on the
  /// first process and none elsewhere.
  [[nodiscard]] records::RowRange rows_of(int gvar) const;
  // Hands a finished record on: samples of reduced variables to the folder, the rest to the writer.
  void hand_on(std::unique_ptr<RecordBuffer> record, bool incomplete);
  void note_incomplete(RecordBuffer& r) const;  // under mutex_

  const Config& cfg_;
  std::vector<netcdf::VariableSlot> table_;
  std::vector<records::RowRange> rows_;  // per domain
  int first_endpoint_;
  WriterThread& writer_;
  std::atomic<std::size_t>& in_flight_;
  bool owner_;  // the first server process: holds the whole-domain variables
  SampleFolder folder_;

  mutable std::mutex mutex_;
  std::map<Key, std::unique_ptr<RecordBuffer>> records_;
  // Per client, per domain: the points of this process's rows it holds.
  std::map<int, std::vector<std::size_t>> expected_;
  std::map<int, std::string> ranks_;  // per client: the EP ranks it speaks for
  std::size_t peak_ = 0;
};

}  // namespace xios_lite::server
