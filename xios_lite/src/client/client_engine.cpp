#include "client_engine.hpp"

#include <algorithm>

namespace xios_lite::client {

ClientEngine::ClientEngine(const Config& cfg, std::vector<std::vector<Block>> blocks,
                           std::vector<std::vector<std::vector<std::uint8_t>>> masks,
                           RecordSink& sink)
    : cfg_(cfg), sink_(sink), masks_(std::move(masks)), vars_of_field_(cfg.fields.size()) {
  const auto table = netcdf::variable_table(cfg);
  vars_.reserve(table.size());
  for (std::size_t g = 0; g < table.size(); ++g) {
    const FileDef& file = cfg.files[static_cast<std::size_t>(table[g].file)];
    const OutputVariable& ov = file.variables[static_cast<std::size_t>(table[g].pos)];
    const FieldDef& f = cfg.fields[static_cast<std::size_t>(ov.field)];
    const auto domain =
        static_cast<std::size_t>(cfg.grids[static_cast<std::size_t>(f.grid)].domain);
    const int nk = cfg.levels(f.grid);
    std::vector<LocalBlock> lbs;
    std::size_t offset = 0;
    const std::vector<Block>& mine = blocks.at(domain);
    for (std::size_t b = 0; b < mine.size(); ++b) {
      LocalBlock lb{mine[b], nk, offset, {}};
      if (domain < masks_.size() && b < masks_[domain].size()) {
        lb.mask = masks_[domain][b];
      }
      lbs.push_back(lb);
      offset += static_cast<std::size_t>(nk) * static_cast<std::size_t>(mine[b].ni) *
                static_cast<std::size_t>(mine[b].nj);
    }
    const bool masked =
        std::any_of(lbs.begin(), lbs.end(), [](const LocalBlock& lb) { return !lb.mask.empty(); });
    const bool centred =
        std::any_of(file.variables.begin(), file.variables.end(), [](const auto& o) {
          return o.operation != Operation::kInstant && o.operation != Operation::kOnce;
        });
    Variable v{static_cast<int>(g),
               ov.field,
               ov.operation,
               std::max<std::int64_t>(
                   1, cfg.calendar.boundary(ov.freq_op, 1) / cfg.calendar.timestep_seconds()),
               std::move(lbs),
               Accumulator(ov.operation, offset, f.default_value, f.detect_missing_value, masked),
               Periods(cfg.calendar, file.output_freq),
               centred};
    vars_.push_back(std::move(v));
    vars_of_field_[static_cast<std::size_t>(ov.field)].push_back(static_cast<int>(g));
  }
}

bool ClientEngine::due(const Variable& v, std::int64_t step) const {
  if (v.op == Operation::kOnce || step % v.sample_every != 0) {
    return false;
  }
  return v.op != Operation::kInstant || step == v.periods.last_step(v.period);
}

void ClientEngine::send(int field, std::span<const std::span<const double>> parts) {
  for (int g : vars_of_field_[static_cast<std::size_t>(field)]) {
    Variable& v = vars_[static_cast<std::size_t>(g)];
    v.sent = true;
    const bool sample = v.op == Operation::kOnce ? !v.once_done : step_ % v.sample_every == 0;
    if (!sample) {
      continue;
    }
    if (v.op == Operation::kOnce) {
      v.acc.reset();
    }
    for (std::size_t b = 0; b < v.blocks.size(); ++b) {
      v.acc.add_part(v.blocks[b].offset, parts[b], v.blocks[b].mask);
    }
    v.acc.end_sample();
  }
}

void ClientEngine::close_period(Variable& v) {
  netcdf::RecordTime t;
  t.record = static_cast<int>(v.period);
  t.lo = v.periods.lo(v.period);
  t.hi = v.periods.hi(v.period);
  // One time axis per file: the period's middle when the file has time
  // bounds (a non-instant variable), else its end (the instant sampled).
  t.time = v.centred_time ? 0.5 * (t.lo + t.hi) : t.hi;
  if (v.spoiled_at > 0) {
    sink_.put_missing(v.gvar, t, v.blocks);
  } else {
    const std::span<const double> values = v.acc.result();  // fill where nothing was sampled
    sink_.put(v.gvar, t, v.blocks, values.data());
  }
  v.acc.reset();
  v.spoiled_at = 0;
  ++v.period;
}

// A once variable has one record (0), stamped with the time of its sample.
void ClientEngine::emit_once(Variable& v, std::int64_t step, bool missing) {
  netcdf::RecordTime t;
  t.record = 0;
  t.time = t.lo = t.hi = static_cast<double>(cfg_.calendar.time_of_step(step));
  if (missing) {
    sink_.put_missing(v.gvar, t, v.blocks);
  } else {
    sink_.put(v.gvar, t, v.blocks, v.acc.result().data());
  }
  v.once_done = true;
}

namespace {
void note(std::vector<MissedField>& missed, int field, std::int64_t step, int gvar) {
  const bool known = std::any_of(missed.begin(), missed.end(), [&](const MissedField& m) {
    return m.field == field && m.step == step;
  });
  if (!known) {
    missed.push_back({field, step, gvar});
  }
}
}  // namespace

void ClientEngine::end_step(std::int64_t step, bool began, std::vector<MissedField>& missed) {
  for (Variable& v : vars_) {
    if (v.op == Operation::kOnce) {
      if (v.once_done) {
        continue;
      }
      if (began && v.sent) {
        emit_once(v, step, false);
      } else if (step >= v.periods.last_step(0)) {
        note(missed, v.field, step, v.gvar);
        emit_once(v, step, true);
      }
      continue;
    }
    if (due(v, step) && !(began && v.sent)) {
      v.spoiled_at = v.spoiled_at > 0 ? v.spoiled_at : step;
      note(missed, v.field, step, v.gvar);
    }
    if (step == v.periods.last_step(v.period)) {
      close_period(v);
    }
  }
}

// Steps [from, to] were never begun (update_calendar jumped over them):
// period by period, a due step among them spoils its period.
void ClientEngine::skip_steps(Variable& v, std::int64_t from, std::int64_t to,
                              std::vector<MissedField>& missed) {
  while (from <= to) {
    if (v.op == Operation::kOnce) {
      if (!v.once_done && to >= v.periods.last_step(0)) {
        const std::int64_t at = std::max(from, v.periods.last_step(0));
        note(missed, v.field, at, v.gvar);
        emit_once(v, at, true);
      }
      return;
    }
    const std::int64_t last = v.periods.last_step(v.period);
    const std::int64_t seg_end = std::min(last, to);
    std::int64_t first_due = 0;
    if (v.op == Operation::kInstant) {
      first_due = (last <= seg_end && last % v.sample_every == 0) ? last : 0;
    } else {
      const std::int64_t s = (from + v.sample_every - 1) / v.sample_every * v.sample_every;
      first_due = s <= seg_end ? s : 0;
    }
    if (first_due > 0) {
      v.spoiled_at = v.spoiled_at > 0 ? v.spoiled_at : first_due;
      note(missed, v.field, first_due, v.gvar);
    }
    if (seg_end == last) {
      close_period(v);
    }
    from = seg_end + 1;
  }
}

std::vector<MissedField> ClientEngine::begin_step(std::int64_t step) {
  std::vector<MissedField> missed;
  if (step_ > 0) {
    end_step(step_, true, missed);
  }
  for (Variable& v : vars_) {
    skip_steps(v, step_ + 1, step - 1, missed);
    v.sent = false;
  }
  step_ = step;
  sink_.step_done(step);
  return missed;
}

std::vector<MissedField> ClientEngine::finish() {
  std::vector<MissedField> missed;
  if (step_ > 0) {
    end_step(step_, true, missed);
  }
  sink_.step_done(step_ + 1);
  return missed;
}

std::string ClientEngine::describe(const std::vector<MissedField>& missed) const {
  if (missed.empty()) {
    return "";
  }
  const MissedField& m = missed.front();
  const auto slot = netcdf::variable_table(cfg_)[static_cast<std::size_t>(m.gvar)];
  const FileDef& file = cfg_.files[static_cast<std::size_t>(slot.file)];
  std::string text = "field '" + cfg_.fields[static_cast<std::size_t>(m.field)].id +
                     "' was due at step " + std::to_string(m.step) + " and was not sent (file '" +
                     file.id + "', variable '" +
                     file.variables[static_cast<std::size_t>(slot.pos)].name +
                     "'): this client's points of that record are written as _FillValue";
  if (missed.size() > 1) {
    text += " (and " + std::to_string(missed.size() - 1) + " more due field(s) not sent)";
  }
  return text;
}

}  // namespace xios_lite::client
