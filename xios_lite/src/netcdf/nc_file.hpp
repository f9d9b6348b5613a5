// The NetCDF-4 writer: one output file of the configuration, CF-1.8.
//
// Used by the server's writer thread (multiple_file: serial NetCDF-4 of the
// server's rows; one_file: parallel NetCDF-4 over the servers) and by the
// clients of the synchronous mode (parallel NetCDF-4 over the client
// processes). Every nc_* return code is checked: a failure throws ep::Error
// naming the NetCDF call, the file and the variable.
//
// Thread safety: NetCDF-C is not thread-safe, so a process may have at most
// one thread inside any NcFile call at a time (the writer thread on servers,
// the master thread in synchronous mode). With a parallel file every call
// below is collective over the communicator given to create().
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "xios_lite/config.hpp"

namespace xios_lite::netcdf {

/// Rows of a domain held by a file: [jbegin, jbegin + nj).
struct RowRange {
  int jbegin = 0;
  int nj = 0;
};

class NcFile {
 public:
  /// Creates `path` and defines every variable of `cfg.files[file]`. `rows`
  /// gives, per domain of cfg.domains, the rows stored in this file (the whole
  /// domain for a shared file). `comm` != MPI_COMM_NULL: parallel create,
  /// collective over comm. `ep_rank` only labels errors.
  NcFile(const std::string& path, const Config& cfg, int file, std::vector<RowRange> rows,
         MPI_Comm comm, int ep_rank);
  ~NcFile();
  NcFile(const NcFile&) = delete;
  NcFile& operator=(const NcFile&) = delete;

  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  /// Writes time[record] (and time_bounds[record] when the file has them).
  void write_time(int record, double time, double lo, double hi);
  /// Writes a block of variable `var` (position in the file's variable list)
  /// at `record` (ignored for `once` variables): levels [0, nk), global rows
  /// [jbegin, jbegin+nj) (inside this file's rows), columns [ibegin, ibegin+ni).
  /// `data` is nk x nj x ni, ni fastest. nj == 0 writes nothing (still collective).
  void write_block(int var, int record, int jbegin, int nj, int ibegin, int ni, int nk,
                   const double* data);
  /// Bytes of variable data written so far.
  [[nodiscard]] double bytes_written() const noexcept { return bytes_written_; }
  void sync();
  /// Closes the file (also done by the destructor, which swallows errors).
  void close();

 private:
  void check(int rc, const char* call, const std::string& var) const;

  std::string path_;
  const Config* cfg_;
  int file_;
  std::vector<RowRange> rows_;
  bool parallel_;
  int ep_rank_;
  int ncid_ = -1;
  int time_var_ = -1;
  int bounds_var_ = -1;
  std::vector<int> var_ids_;
  double bytes_written_ = 0;
};

}  // namespace xios_lite::netcdf
