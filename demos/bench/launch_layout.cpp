#include "launch_layout.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#include "common/enum_names.hpp"

namespace bench {

namespace {
constexpr auto kLaunchKindNames =
    common::enum_names<LaunchLayout::Kind>({{LaunchLayout::Kind::kThreaded, "threaded"},
                                            {LaunchLayout::Kind::kFlat, "flat"},
                                            {LaunchLayout::Kind::kMixed, "mixed"}});
}  // namespace

const char* launch_kind_name(LaunchLayout::Kind kind) {
  return common::enum_name(kLaunchKindNames, kind, "?");
}

LaunchLayout LaunchLayout::of(int world_size, int threads, bool threaded_modes, bool flat_modes) {
  if (world_size < 1 || threads < 1) {
    throw std::invalid_argument("launch of " + std::to_string(world_size) + " processes x " +
                                std::to_string(threads) + " threads: both must be at least 1");
  }
  if (!threaded_modes && !flat_modes) threaded_modes = flat_modes = true;
  LaunchLayout layout;
  layout.world_size = world_size;
  layout.threads = threads;
  if (threaded_modes && !flat_modes) {
    layout.kind = Kind::kThreaded;
    layout.threaded_processes = world_size;
    layout.grid_ranks = world_size * threads;
  } else if (flat_modes && !threaded_modes) {
    layout.kind = Kind::kFlat;
    layout.threaded_processes = 0;
    layout.grid_ranks = world_size;
  } else {
    if (world_size % threads != 0) {
      throw std::invalid_argument("a launch with threaded and flat modes needs a process count (" +
                                  std::to_string(world_size) +
                                  ") that is a multiple of --threads (" + std::to_string(threads) +
                                  "); or select only threaded or only flat modes");
    }
    layout.kind = Kind::kMixed;
    layout.threaded_processes = world_size / threads;
    layout.grid_ranks = world_size;
  }
  return layout;
}

int LaunchLayout::busy_cores() const {
  const int threaded = threaded_processes * threads;
  switch (kind) {
    case Kind::kThreaded:
      return threaded;
    case Kind::kFlat:
      return world_size;
    case Kind::kMixed:
      return std::max(threaded, world_size);
  }
  return world_size;
}

bool LaunchLayout::judged(int cpus) const { return kind != Kind::kMixed && busy_cores() <= cpus; }

std::string LaunchLayout::describe(int cpus) const {
  std::string line = std::string(launch_kind_name(kind)) + " launch: ";
  switch (kind) {
    case Kind::kThreaded:
      line += std::to_string(threaded_processes) + " process(es) x " + std::to_string(threads) +
              " threads";
      break;
    case Kind::kFlat:
      line += std::to_string(world_size) + " process(es) x 1 thread";
      break;
    case Kind::kMixed:
      line += std::to_string(threaded_processes) + " x " + std::to_string(threads) +
              " threads (threaded modes) and " + std::to_string(world_size) +
              " x 1 (flat modes) in one job";
      break;
  }
  line += "; " + std::to_string(busy_cores()) + " busy on " + std::to_string(cpus) + " CPUs: ";
  if (judged(cpus)) {
    line += "fits the cores, judged";
  } else if (busy_cores() > cpus) {
    line += "oversubscribed, not judged";
  } else {
    line += "one job for both sides, not judged";
  }
  return line;
}

}  // namespace bench
