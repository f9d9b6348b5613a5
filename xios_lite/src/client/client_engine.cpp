#include "client_engine.hpp"

namespace xios_lite::client {

ClientEngine::ClientEngine(const Config& cfg, std::vector<std::vector<Block>> blocks,
                           RecordSink& sink)
    : cfg_(cfg), sink_(sink), vars_of_field_(cfg.fields.size()) {
  const auto table = netcdf::variable_table(cfg);
  vars_.reserve(table.size());
  for (std::size_t g = 0; g < table.size(); ++g) {
    const FileDef& file = cfg.files[static_cast<std::size_t>(table[g].file)];
    const OutputVariable& ov = file.variables[static_cast<std::size_t>(table[g].pos)];
    const FieldDef& f = cfg.fields[static_cast<std::size_t>(ov.field)];
    const int domain = cfg.grids[static_cast<std::size_t>(f.grid)].domain;
    const int nk = cfg.levels(f.grid);
    std::vector<LocalBlock> lbs;
    std::size_t offset = 0;
    for (const Block& b : blocks.at(static_cast<std::size_t>(domain))) {
      lbs.push_back({b, nk, offset});
      offset += static_cast<std::size_t>(nk) * static_cast<std::size_t>(b.ni) *
                static_cast<std::size_t>(b.nj);
    }
    bool centred = false;
    for (const auto& other : file.variables) {
      centred = centred ||
                (other.operation != Operation::kInstant && other.operation != Operation::kOnce);
    }
    vars_.push_back(Variable{static_cast<int>(g),
                             std::move(lbs),
                             Accumulator(ov.operation, offset),
                             Schedule(cfg.calendar, ov, file),
                             false,
                             {},
                             centred});
    vars_of_field_[static_cast<std::size_t>(ov.field)].push_back(static_cast<int>(g));
  }
}

void ClientEngine::send(int field, std::int64_t step,
                        std::span<const std::span<const double>> parts) {
  const std::int64_t t = cfg_.calendar.time_of_step(step);
  for (int g : vars_of_field_[static_cast<std::size_t>(field)]) {
    Variable& v = vars_[static_cast<std::size_t>(g)];
    const Schedule::Decision d = v.schedule.at(step, t);
    if (d.restart) {
      v.acc.reset();
    }
    if (d.sample) {
      for (std::size_t b = 0; b < v.blocks.size(); ++b) {
        v.acc.add_part(v.blocks[b].offset, parts[b]);
      }
      v.acc.end_sample();
    }
    if (d.period_end && v.acc.samples() > 0) {
      v.ready = true;
      v.time.record = v.schedule.take_record();
      v.time.lo = d.lo;
      v.time.hi = d.hi;
      // One time axis per file: the period's middle when the file has
      // time bounds (a non-instant variable), else its end (the instant sampled).
      v.time.time = v.centred_time ? 0.5 * (d.lo + d.hi) : d.hi;
    }
  }
}

void ClientEngine::end_step() {
  for (Variable& v : vars_) {
    if (!v.ready) {
      continue;
    }
    const std::span<const double> values = v.acc.result();
    sink_.put(v.gvar, v.time, v.blocks, values.data());
    v.acc.reset();
    v.ready = false;
  }
  sink_.step_done();
}

}  // namespace xios_lite::client
