#include "sample_folder.hpp"

#include <algorithm>

#include "reduction.hpp"

namespace xios_lite::server {

SampleFolder::SampleFolder(const Config& cfg, WriterThread& writer,
                           std::atomic<std::size_t>& bytes_in_flight)
    : writer_(writer), in_flight_(bytes_in_flight) {
  const std::vector<netcdf::VariableSlot> table = netcdf::variable_table(cfg);
  states_.resize(table.size());
  for (std::size_t g = 0; g < table.size(); ++g) {
    const FileDef& file = cfg.files[static_cast<std::size_t>(table[g].file)];
    const OutputVariable& v = file.variables[static_cast<std::size_t>(table[g].pos)];
    if (!v.shape.reduces()) {
      continue;
    }
    const std::int64_t dt = cfg.calendar.timestep_seconds();
    auto s = std::make_unique<State>(
        cfg.calendar, file.output_freq,
        temporal::SamplingSlots(
            std::max<std::int64_t>(1, cfg.calendar.fixed_seconds(v.freq_op) / dt),
            cfg.calendar.fixed_seconds(v.freq_offset) / dt));
    s->gvar = static_cast<int>(g);
    s->variable = &v;
    s->area = &cfg.domains[static_cast<std::size_t>(cfg.domain_of_field(v.source))].area;
    s->centred = std::any_of(file.variables.begin(), file.variables.end(), [](const auto& o) {
      return o.operation != Operation::kInstant && o.operation != Operation::kOnce;
    });
    states_[g] = std::move(s);
  }
}

void SampleFolder::take(std::unique_ptr<RecordBuffer> sample, bool incomplete) {
  State& s = *states_[static_cast<std::size_t>(sample->gvar)];
  const OutputVariable& v = *s.variable;
  Pending p;
  p.block = reduce_sample(v.shape, sample->rows, sample->ni, sample->nk, sample->data.data(),
                          v.default_value, v.detect_missing_value, *s.area);
  p.missing = incomplete || !sample->missing_from.empty();
  p.what_missed = std::move(sample->missing);
  const std::int64_t k = sample->time.record;
  in_flight_.fetch_sub(sample->bytes(), std::memory_order_relaxed);
  sample.reset();
  const std::lock_guard lock(s.mutex);
  s.pending[k] = std::move(p);
  for (auto it = s.pending.find(s.next_sample); it != s.pending.end();
       it = s.pending.find(s.next_sample)) {
    fold(s, it->first, it->second);
    s.pending.erase(it);
    ++s.next_sample;
  }
}

// Under s.mutex: folds sample k into its period, emitting the periods it ends.
void SampleFolder::fold(State& s, std::int64_t k, Pending& p) {
  const std::int64_t step = s.slots.last_step(k);  // the clients' record k: slot k
  const std::int64_t period = s.periods.of_step(step, s.period);
  if (!s.acc) {
    s.shape = p.block;
    s.shape.values.clear();
    const std::size_t points = static_cast<std::size_t>(p.block.nk) *
                               static_cast<std::size_t>(p.block.nj) *
                               static_cast<std::size_t>(p.block.ni);
    // Reduced values equal to the fill value are missing (no valid input);
    // NaN only when the variable detects missing values, else it propagates.
    s.acc = std::make_unique<temporal::Accumulator>(s.variable->operation, points,
                                                    s.variable->default_value, true, false,
                                                    s.variable->detect_missing_value);
  }
  while (s.period < period) {
    emit(s);  // a period without a sample of its own here
  }
  if (p.missing) {
    if (!s.spoiled) {
      s.spoiled_by = std::move(p.what_missed);
    }
    s.spoiled = true;
  } else {
    s.acc->add_part(0, p.block.values, {});
    s.acc->end_sample();
  }
  if (s.slots.last_step(k + 1) > s.periods.last_step(s.period)) {
    emit(s);  // the period's last sample
  }
}

// Under s.mutex: the current period's record goes to the writer.
void SampleFolder::emit(State& s) {
  auto record = std::make_unique<RecordBuffer>();
  record->gvar = s.gvar;
  record->time.record = static_cast<int>(s.period);
  record->time.lo = s.periods.lo(s.period);
  record->time.hi = s.periods.hi(s.period);
  record->time.time = s.centred ? 0.5 * (record->time.lo + record->time.hi) : record->time.hi;
  record->nk = s.shape.nk;
  record->rows = {s.shape.jbegin, s.shape.nj};
  record->ni = s.shape.ni;
  const std::span<const double> values = s.acc->result();
  if (s.spoiled) {
    record->data.assign(values.size(), s.variable->default_value);
    record->missing = s.spoiled_by.empty() ? "a sample of the period is missing" : s.spoiled_by;
  } else {
    record->data.assign(values.begin(), values.end());
  }
  record->filled = record->data.size();
  s.acc->reset();
  s.spoiled = false;
  s.spoiled_by.clear();
  ++s.period;
  in_flight_.fetch_add(record->bytes(), std::memory_order_relaxed);
  writer_.push(std::move(record));
}

}  // namespace xios_lite::server
