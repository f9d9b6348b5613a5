// Reading a variable of a file in read mode (XIOS's mode="read"): the
// records recv_field hands to the model, for forcing and restart input.
//
// A variable is read as its field's grid: dimensions ([time,] [levels,]
// nj_glo, ni_glo), ni fastest. With a time dimension it holds one record
// per index of it; without one it holds a single record, given for every
// record asked for (a restart or a constant field). Values are read as
// doubles whatever the variable's type.
//
// Thread safety: NetCDF-C is not thread-safe; read_input() serialises its
// calls with a process-wide mutex, so threads of one process may call it
// together. It must not run while another thread of the process is inside
// other NetCDF calls (the servers read their input before their writer
// thread starts; the clients of the synchronous mode write only inside the
// calls every thread of the process meets in).
#pragma once

#include <string>
#include <vector>

#include "xios_lite/config.hpp"

namespace xios_lite::netcdf {

/// One variable of a file in read mode, as the configuration expects it.
struct InputVariableShape {
  std::string path;      ///< the file
  std::string variable;  ///< the variable's name in it
  int nk = 1;            ///< levels of its grid (1: a 2-D field)
  int nj_glo = 0;
  int ni_glo = 0;
};

/// The path of a file in read mode: its name and name_suffix, ".nc".
[[nodiscard]] inline std::string input_path(const FileDef& f) {
  return f.name + f.name_suffix + ".nc";
}

/// What read_input() read.
struct InputBlock {
  int records = 0;  ///< records the file holds (1 without a time dimension)
  bool timeless = false;
  std::vector<double> values;  ///< count x nk x nj x ni, ni fastest
};

/// Reads records [first, first + count) (count -1: from first to the
/// last) of the block rows [jbegin, jbegin + nj) x columns [ibegin, ibegin
/// + ni) of `shape`. Returns "" or why it cannot: the file cannot be
/// opened, has no such variable, the variable's dimensions differ from the
/// grid's, or a record asked for does not exist (the message names the
/// path, the variable, the dimensions and the record).
[[nodiscard]] std::string read_input(const InputVariableShape& shape, int first, int count,
                                     int jbegin, int nj, int ibegin, int ni, InputBlock& out);

}  // namespace xios_lite::netcdf
