// What a server process reads for recv_field: every variable of the files
// in read mode, this process's rows of every record, read once when the
// definitions are complete (before the writer thread starts, so that only
// one thread of the process is inside NetCDF). A read request of a client
// is answered from memory by the receiving endpoint that got it.
//
// A variable that cannot be read (no file, no such variable, other
// dimensions) keeps its error, and every request for it gets that error;
// so does a request for a record the file does not hold.
//
// Thread safety: immutable after construction; answer() may run on any
// receiving thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "netcdf/input_file.hpp"
#include "netcdf/nc_file.hpp"
#include "transport/event.hpp"
#include "xios_lite/config.hpp"

namespace xios_lite::server {

class InputStore {
 public:
  /// Reads every input variable's rows `rows[domain]` (this process's).
  InputStore(const Config& cfg, const std::vector<records::RowRange>& rows);

  /// The kReadReply message answering request `h`: the values of the
  /// sub-block it names, or an error text.
  [[nodiscard]] std::vector<std::byte> answer(const transport::EventHeader& h) const;

 private:
  struct Variable {
    netcdf::InputVariableShape shape;
    records::RowRange rows;
    std::string error;
    netcdf::InputBlock data;  // every record of the rows, all columns
  };
  std::vector<Variable> vars_;
};

}  // namespace xios_lite::server
