// Where a server process stands among the servers. Every server process
// runs one or more receiving endpoints; the endpoints of all server
// processes, numbered process by process, split each domain into row bands
// (transport::band_of), so a process holds the adjacent bands of its own
// endpoints and writes them as one block.
#pragma once

#include <vector>

#include "netcdf/output_files.hpp"
#include "transport/bands.hpp"
#include "xios_lite/config.hpp"

namespace xios_lite::server {

struct ServerProcess {
  int index = 0;           ///< rank among the server processes
  int processes = 1;       ///< server processes
  int first_endpoint = 0;  ///< EP rank (among the servers) of this process's first endpoint
  int endpoints = 1;       ///< receiving endpoints of this process
  int all_endpoints = 1;   ///< receiving endpoints of every server process

  /// This process's rows of every domain, in configuration order.
  [[nodiscard]] std::vector<records::RowRange> rows(const Config& cfg) const {
    std::vector<records::RowRange> out;
    out.reserve(cfg.domains.size());
    for (const auto& d : cfg.domains) {
      out.push_back(transport::bands_of(d.nj_glo, first_endpoint, endpoints, all_endpoints));
    }
    return out;
  }

  /// What this process writes: its rows, the whole-domain variables on the
  /// first process, its index in multiple_file names.
  [[nodiscard]] netcdf::WriterPart part(const Config& cfg) const {
    return {rows(cfg), index == 0, index, processes};
  }
};

}  // namespace xios_lite::server
