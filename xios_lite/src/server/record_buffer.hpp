// One record of one variable being reassembled on a server process: the
// process's rows of the global field, filled piece by piece from the
// clients' blocks. Complete when every point of those rows has been
// accounted for, as data or as missing (close_definition proved that the
// clients' blocks cover each point exactly once). Points that never come
// keep the field's default_value (_FillValue). RecordAssembly counts the
// points and who gave them.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "netcdf/output_files.hpp"
#include "transport/event.hpp"

namespace xios_lite::server {

struct RecordBuffer {
  int gvar = 0;
  records::RecordTime time;
  int nk = 1;
  records::RowRange rows;                          ///< this server process's rows, global indices
  int ni = 0;                                      ///< the whole row (ni_glo)
  std::vector<double> data;                        ///< nk x rows.nj x ni
  std::size_t filled = 0;                          ///< points accounted for (data or missing)
  std::vector<std::pair<int, std::size_t>> given;  ///< (client, data points) as they came
  std::vector<int> missing_from;                   ///< clients that said their points will not come
  /// What the record misses and from whom ("" : nothing), set when it
  /// leaves the assembly incomplete; the writer reports it once the record
  /// is truly written (a record of a file that failed is reported as lost).
  std::string missing;

  [[nodiscard]] bool complete() const noexcept { return filled == data.size(); }
  [[nodiscard]] std::size_t bytes() const noexcept { return data.size() * sizeof(double); }

  /// True when the data event `h` lies inside this record (a corrupt or
  /// misrouted event does not).
  [[nodiscard]] bool holds(const transport::EventHeader& h) const noexcept;
  /// Copies the payload of a data event (header `h`, values `payload`); `h`
  /// must be held. Does not count the points (see RecordAssembly).
  void copy_in(const transport::EventHeader& h, const std::byte* payload);
};

}  // namespace xios_lite::server
