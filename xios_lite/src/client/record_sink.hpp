// Where a client's finished records go: to the servers (ServerSink, the
// ep and funneled modes) or straight into parallel NetCDF (FileSink, the
// synchronous mode). A ClientEngine hands each record once, in variable
// order at the end of the step that completed it.
#pragma once

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

/// One block of a client's values: nk x nj x ni at `offset` in the values.
struct LocalBlock {
  Block block;
  int nk = 1;
  std::size_t offset = 0;
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
  virtual void put(int gvar, const netcdf::RecordTime& t, std::span<const LocalBlock> blocks,
                   const double* values) = 0;
  /// End of a step: buffered data may leave now.
  virtual void step_done() = 0;
  /// Advances pending transfers; throws when a server reported an error.
  virtual void progress() = 0;
  /// Ends the output: the servers' reports (none for files). Throws on any
  /// error seen, after the shutdown completed where it could.
  virtual std::vector<ServerReport> finish(const std::string& failure) = 0;
  [[nodiscard]] virtual ClientStats stats() const = 0;
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
