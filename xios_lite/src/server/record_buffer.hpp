// One record of one variable being reassembled on a server: the server's
// rows of the global field, filled piece by piece from the clients' blocks.
// Complete when every point of those rows has arrived (close_definition
// proved that the clients' blocks cover each point exactly once).
#pragma once

#include <cstddef>
#include <vector>

#include "netcdf/output_files.hpp"
#include "transport/event.hpp"

namespace xios_lite::server {

struct RecordBuffer {
  int gvar = 0;
  netcdf::RecordTime time;
  int nk = 1;
  netcdf::RowRange rows;     ///< this server's rows, global indices
  int ni = 0;                ///< the whole row (ni_glo)
  std::vector<double> data;  ///< nk x rows.nj x ni
  std::size_t filled = 0;

  [[nodiscard]] bool complete() const noexcept { return filled == data.size(); }
  [[nodiscard]] std::size_t bytes() const noexcept { return data.size() * sizeof(double); }

  /// Copies the payload of a data event (header `h`, values `payload`).
  void place(const transport::EventHeader& h, const std::byte* payload);
};

}  // namespace xios_lite::server
