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

#include "variable_layout.hpp"
#include "xios_lite/config.hpp"

namespace xios_lite::netcdf {

class NcFile {
 public:
  /// Creates `path` and defines every variable of `cfg.files[file]`. `rows`
  /// gives, per variable of the file, the rows of its row dimension stored
  /// in this file (all of them for a shared file; nj 0: the variable is
  /// not in this file). `comm` != MPI_COMM_NULL: parallel create,
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
  /// at `record` (ignored for `once` variables): output levels [0, nk),
  /// rows [jbegin, jbegin+nj) of its row dimension (inside this file's
  /// rows), columns [ibegin, ibegin+ni) (a variable without columns: 0, 1).
  /// `data` is nk x nj x ni, ni fastest. nj == 0 writes nothing (still collective).
  void write_block(int var, int record, int jbegin, int nj, int ibegin, int ni, int nk,
                   const double* data);
  /// Bytes of variable data written so far.
  [[nodiscard]] double bytes_written() const noexcept { return bytes_written_; }
  void sync();
  /// Closes the file (also done by the destructor, which swallows errors).
  void close();

 private:
  struct Dimensions;

  // The steps of the constructor, in order.
  void create(MPI_Comm comm);
  void put_global_attributes(const FileDef& fd);
  void define_time(const FileDef& fd, Dimensions& dims);
  void define_coordinates(Dimensions& dims);
  void define_domain(int d, RowRange r, bool suffixed, Dimensions& dims);
  int define_bounds(const std::string& coord, int coord_var, const std::vector<int>& bounds_dims);
  std::string define_cell_area(const DomainDef& dom, RowRange r, const std::string& name, int j_dim,
                               int i_dim);
  int define_reduced_axis(int axis, RowRange r);
  int define_vertical_axis(int axis, Dimensions& dims);
  int vertex_dim(Dimensions& dims, int n);
  int define_variable(const FileDef& fd, std::size_t p, const Dimensions& dims);
  void put_variable_attributes(int id, int type, const OutputVariable& v, const VariableLayout& l,
                               const Dimensions& dims);
  void end_definitions();

  void check(int rc, const char* call, const std::string& var) const;
  void put_text(int varid, const char* name, const std::string& value, const std::string& var);
  void put_attributes(int varid, const std::vector<Attribute>& attributes, const std::string& var);
  void put_coordinate(int varid, const std::vector<std::size_t>& count, const double* values,
                      const std::string& var);

  std::string path_;
  const Config* cfg_;
  int file_;
  std::vector<RowRange> rows_;  // per variable of the file
  std::vector<VariableLayout> layouts_;
  bool parallel_;
  int ep_rank_;
  int ncid_ = -1;
  int time_var_ = -1;
  int bounds_var_ = -1;
  std::vector<int> var_ids_;
  double bytes_written_ = 0;
  double time_offset_ = 0;  // seconds from the time origin to the start date
};

}  // namespace xios_lite::netcdf
