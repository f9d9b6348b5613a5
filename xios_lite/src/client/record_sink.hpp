// Where a client's finished records go: to the servers (ServerSink, the
// ep and funneled modes) or straight into parallel NetCDF (FileSink, the
// synchronous mode). A ClientEngine hands each record once, in variable
// order at the end of the step that completed it; a sink that takes records
// at send (takes_records_at_send) also gets, inside send_field, the record
// of a period that the sent values complete on their own (see ClientEngine).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ep/comm_management.hpp"
#include "netcdf/output_files.hpp"
#include "xios_lite/client.hpp"
#include "xios_lite/config.hpp"
#include "xios_lite/report.hpp"

namespace xios_lite::client {

/// One block of a client's values: nk x nj x ni at `offset` in the values;
/// `mask`: nj x ni entries (0: masked point), empty when every point is valid.
/// `row` and `level` (0: ni and nj x ni, the block alone) are the strides
/// between rows and levels when the values are the model's halo'd array:
/// point (i, j) of level k is then at offset + k * level + j * row + i.
struct LocalBlock {
  Block block;
  int nk = 1;
  std::size_t offset = 0;
  std::span<const std::uint8_t> mask;
  std::size_t row = 0;
  std::size_t level = 0;
};

/// How the servers ended the output.
struct Finish {
  std::vector<ServerReport> reports;
  std::string error;      ///< the first server's error ("" when none)
  std::vector<int> gone;  ///< clients a server stopped waiting for (EP ranks)
};

struct ClientStats {
  double blocked_s = 0;
  double bytes_sent = 0;
  double write_s = 0;
};

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  /// A finished record of variable `gvar`: `values` holds the blocks.
  virtual void put(int gvar, const records::RecordTime& t, std::span<const LocalBlock> blocks,
                   const double* values) = 0;
  /// The record of variable `gvar` at `t` will not come from these blocks
  /// (a due field was not sent): their points are written as _FillValue.
  virtual void put_missing(int gvar, const records::RecordTime& t,
                           std::span<const LocalBlock> blocks) = 0;
  /// The definition closed: this client's blocks (4 ints per domain).
  virtual void define(std::span<const int> blocks) = 0;
  /// Client 0 only, before define(): the definitions completed with the
  /// model's values (transport kContextDefinition payload).
  virtual void define_context(std::span<const std::byte> definitions) = 0;
  /// An error this client raised, for the servers to pass on to every client.
  virtual void report_error(const std::string& text) = 0;
  /// End of a step (`step` is the one beginning): buffered data may leave now.
  virtual void step_done(std::int64_t step) = 0;
  /// Every record that ends at step `step` went out at send (see
  /// ClientEngine): the buffered data may leave now, while the model goes
  /// on computing, rather than at the next step's update_calendar.
  virtual void records_complete(std::int64_t step) { (void)step; }
  /// Advances pending transfers. Never throws for a server's error (see
  /// below); need not collect one (take_server_error does).
  virtual void progress() = 0;
  /// A server's error that arrived since the last call, once ("" when none).
  virtual std::string take_server_error() = 0;
  /// Ends the output: the servers' reports (none for files) and what the
  /// servers reported (see Finish). Throws only for a timeout or an MPI
  /// failure, after the shutdown completed where it could.
  virtual Finish finish(const std::string& failure) = 0;
  /// This client leaves without finalise (`why`): whatever is buffered is
  /// sent, then the servers are told. Bounded by the timeout; never throws.
  virtual void abandon(const std::string& why) noexcept = 0;
  [[nodiscard]] virtual ClientStats stats() const = 0;
  /// Whether put() may come in the middle of a step, in the order the model
  /// sends its fields (which may differ between clients): a sink that copies
  /// the values before put() returns and has no collective per record.
  [[nodiscard]] virtual bool takes_records_at_send() const { return false; }
  /// recv_field: the block `b` (nk levels) of record `record` of input
  /// variable `input` (Config::find_input numbering) into `out` (nk x nj x
  /// ni, ni fastest), from the servers holding its rows. Waits for them,
  /// bounded by the timeout. Returns "" or what went wrong (a server's
  /// answer names the file, the variable and the record). Only the sink to
  /// the servers reads; the others answer that they cannot.
  virtual std::string fetch(int input, std::int64_t record, const Block& b, int nk,
                            std::span<double> out) {
    (void)input, (void)record, (void)b, (void)nk, (void)out;
    return "this client reads its input itself";
  }
};

/// Sink to the servers over `inter` (this client's intercommunicator handle).
/// `capacity`: bytes per buffer and server; `progress_thread`: keep the
/// process's progress thread running while sends are in flight.
std::unique_ptr<RecordSink> make_server_sink(const Config& cfg, ep::InterCommunicator inter,
                                             std::size_t capacity, double timeout_s,
                                             bool progress_thread);

/// Sink into parallel NetCDF-4 over `processes` (the client processes);
/// `blocks_per_call`: every process passes this many blocks per write.
std::unique_ptr<RecordSink> make_file_sink(const Config& cfg, MPI_Comm processes, int ep_rank,
                                           int blocks_per_call);

}  // namespace xios_lite::client
