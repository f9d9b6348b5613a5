// A range of rows: what a server's band, a writer's part of a domain and a
// variable's rows in a file are made of. Shared by the transport (the
// servers' row bands), the NetCDF writer and both ends.
#pragma once

namespace xios_lite::records {

/// Rows [jbegin, jbegin + nj) of a dimension.
struct RowRange {
  int jbegin = 0;
  int nj = 0;
  friend bool operator==(const RowRange&, const RowRange&) = default;
};

}  // namespace xios_lite::records
