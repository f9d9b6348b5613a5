// What xios_lite reports at finalise, as XIOS does: per client the time
// blocked waiting for buffer space and its ratio to the total time, per
// server the busy and idle time, bytes received and written, the write
// throughput and the peak memory. Printed as a table and written as JSON.
//
// Plain values: thread-safe to read, no MPI.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace xios_lite {

struct ClientReport {
  int client = 0;      ///< EP rank among the clients
  double total_s = 0;  ///< from construction to finalise
  double in_calls_s =
      0;  ///< inside update_calendar, send_field and finalise (client-visible output time)
  double blocked_s = 0;   ///< waiting for send-buffer space (back-pressure)
  double bytes_sent = 0;  ///< bytes handed to servers (or written, synchronous mode)
  double write_s = 0;     ///< synchronous mode: time inside NetCDF writes
  [[nodiscard]] double blocked_ratio() const { return total_s > 0 ? blocked_s / total_s : 0.0; }
};

struct ServerReport {
  int server = 0;
  double busy_s = 0;   ///< receiving, unpacking and reassembling
  double idle_s = 0;   ///< waiting for messages
  double write_s = 0;  ///< writer thread inside NetCDF calls
  double bytes_received = 0;
  double bytes_written = 0;      ///< variable data written to NetCDF
  double peak_record_bytes = 0;  ///< records in flight (reassembly + write queue), at the peak
  double peak_rss_bytes = 0;     ///< peak resident memory of the server process
  /// Write throughput of the writer thread, 10^6 bytes per second of write time.
  [[nodiscard]] double write_mbps() const {
    return write_s > 0 ? bytes_written / write_s / 1e6 : 0.0;
  }
};

struct Report {
  std::string mode;  ///< "ep", "funneled" or "synchronous"
  std::vector<ClientReport> clients;
  std::vector<ServerReport> servers;

  /// The XIOS-style text report.
  void print(std::FILE* out) const;
  [[nodiscard]] std::string to_json() const;
  /// Throws ep::Error naming the path when the file cannot be written.
  void write_json(const std::string& path) const;
};

}  // namespace xios_lite
