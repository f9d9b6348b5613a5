// The JSON trace file of one process (schema in docs/ep.md, "Tracing").
#pragma once

#include <string>
#include <vector>

#include "trace/recorder.hpp"

namespace ep::detail {

/// What write() puts in <directory>/trace.<process>.json.
struct TraceFile {
  int process = 0;    // MPI_COMM_WORLD rank
  int processes = 1;  // MPI_COMM_WORLD size
  bool recording = false;
  double wall_seconds = 0.0;                    // since enable (until disable, if disabled)
  std::vector<const EndpointTrace*> endpoints;  // null: an endpoint that recorded nothing
  std::vector<int> threads;                     // creation thread of each entry
};

/// Creates `directory` if missing; throws ep::Error(kArgument) naming it when
/// it cannot be made or is not a directory.
void prepare_trace_directory(const std::string& directory);

/// Writes the file and returns its path; throws ep::Error(kArgument) when the
/// file cannot be written.
std::string write_trace_file(const std::string& directory, const TraceFile& file);

}  // namespace ep::detail
