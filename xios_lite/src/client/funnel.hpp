// The meeting point of a process's threads in the funneled and synchronous
// modes: every thread deposits its part, the master thread (local thread 0)
// does the work for the process, and everybody leaves with the same outcome.
//
// Publication rule: a thread writes only its own slot before the first
// barrier; the master reads all slots and writes `error`/`shared` between
// the two barriers; every thread reads them after the second barrier. The
// std::barrier phases give the happens-before edges, no other locking.
#pragma once

#include <barrier>
#include <span>
#include <string>
#include <vector>

#include "xios_lite/report.hpp"

namespace xios_lite::client {

struct Funnel {
  explicit Funnel(int threads)
      : threads(threads),
        sync(threads),
        parts(static_cast<std::size_t>(threads)),
        ids(static_cast<std::size_t>(threads)),
        errors(static_cast<std::size_t>(threads)) {}

  int threads;
  std::barrier<> sync;
  std::vector<std::span<const double>> parts;  // per thread: its values for this call
  std::vector<std::string> ids;                // per thread: the field id of this call
  std::vector<std::string> errors;             // per thread: its own argument error
  std::string error;                           // master: the outcome of the call
  std::vector<ServerReport> servers;           // master: the reports at finalise
};

}  // namespace xios_lite::client
