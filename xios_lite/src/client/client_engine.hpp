// The client's core: temporal operations for every output variable over
// the client's blocks, and the hand-off of finished records to a sink.
//
// In ep mode each thread has its own engine over its one block; in funneled
// and synchronous modes the master thread's engine holds the blocks of all
// threads of its process. Thread safety: one thread per engine.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "record_sink.hpp"
#include "temporal.hpp"

namespace xios_lite::client {

class ClientEngine {
 public:
  /// `blocks[d]`: this engine's blocks of domain d (possibly empty ones).
  ClientEngine(const Config& cfg, std::vector<std::vector<Block>> blocks, RecordSink& sink);

  /// Values of this engine's blocks of `field`'s domain, one part per block
  /// (nk x nj x ni each), at `step`.
  void send(int field, std::int64_t step, std::span<const std::span<const double>> parts);
  /// Hands the records finished during the step to the sink, in variable order.
  void end_step();

 private:
  struct Variable {
    int gvar = 0;
    std::vector<LocalBlock> blocks;
    Accumulator acc;
    Schedule schedule;
    bool ready = false;
    netcdf::RecordTime time;
    bool centred_time = false;
  };

  const Config& cfg_;
  RecordSink& sink_;
  std::vector<Variable> vars_;
  std::vector<std::vector<int>> vars_of_field_;
};

}  // namespace xios_lite::client
