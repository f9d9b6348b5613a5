#include "client_engine.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace xios_lite::client {
namespace {

std::int64_t steps_of(const Calendar& cal, const Frequency& f) {
  return cal.fixed_seconds(f) / cal.timestep_seconds();
}

std::size_t points_of(const std::vector<Block>& blocks, int nk) {
  std::size_t n = 0;
  for (const Block& b : blocks) {
    n += static_cast<std::size_t>(nk) * static_cast<std::size_t>(b.ni) *
         static_cast<std::size_t>(b.nj);
  }
  return n;
}

}  // namespace

ClientEngine::ClientEngine(const Config& cfg, std::vector<std::vector<Block>> blocks,
                           std::vector<std::vector<std::vector<std::uint8_t>>> masks,
                           std::vector<std::vector<DataLayout>> layouts, RecordSink& sink)
    : cfg_(cfg),
      sink_(sink),
      blocks_(std::move(blocks)),
      masks_(std::move(masks)),
      layouts_(std::move(layouts)),
      vars_of_field_(cfg.fields.size()),
      computed_of_field_(cfg.fields.size(), -1),
      kept_(cfg.fields.size()) {
  const auto table = netcdf::variable_table(cfg);
  vars_.reserve(table.size());
  for (std::size_t g = 0; g < table.size(); ++g) {
    const FileDef& file = cfg.files[static_cast<std::size_t>(table[g].file)];
    const OutputVariable& ov = file.variables[static_cast<std::size_t>(table[g].pos)];
    const FieldDef& f = cfg.fields[static_cast<std::size_t>(ov.source)];
    const auto domain =
        static_cast<std::size_t>(cfg.grids[static_cast<std::size_t>(f.grid)].domain);
    const int nk = cfg.levels(f.grid);
    std::vector<LocalBlock> lbs;
    std::size_t offset = 0;
    const std::vector<Block>& mine = blocks_.at(domain);
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
    const bool per_sample = ov.shape.reduces();
    Variable v{static_cast<int>(g),
               ov.source,
               per_sample ? Operation::kInstant : ov.operation,
               ov.freq_op.is_calendar_dependent()
                   ? temporal::SamplingSlots(cfg.calendar, ov.freq_op)
                   : temporal::SamplingSlots(steps_of(cfg.calendar, ov.freq_op),
                                             steps_of(cfg.calendar, ov.freq_offset)),
               -1,
               std::move(lbs),
               temporal::Accumulator(per_sample ? Operation::kInstant : ov.operation, offset,
                                     ov.default_value, ov.detect_missing_value, masked),
               temporal::Periods(cfg.calendar, file.output_freq),
               centred};
    v.per_sample = per_sample;
    vars_.push_back(std::move(v));
    vars_of_field_[static_cast<std::size_t>(ov.source)].push_back(static_cast<int>(g));
  }
  // The expressions the variables need, operands first.
  std::vector<int> state(cfg.fields.size(), 0);
  const std::function<void(int)> need = [&](int field) {
    const FieldDef& f = cfg.fields[static_cast<std::size_t>(field)];
    if (f.expr.empty() || state[static_cast<std::size_t>(field)] != 0) {
      return;
    }
    state[static_cast<std::size_t>(field)] = 1;
    Computed c;
    c.field = field;
    std::string error;
    (void)c.expr.compile(f.expr, error,
                         cfg.variables);  // checked when the definitions were completed
    for (const int op : f.expr_operands) {
      int data = op;
      while (cfg.fields[static_cast<std::size_t>(data)].expr.empty() &&
             cfg.fields[static_cast<std::size_t>(data)].source_field >= 0) {
        data = cfg.fields[static_cast<std::size_t>(data)].source_field;
      }
      need(data);
      if (cfg.fields[static_cast<std::size_t>(data)].expr.empty() &&
          !kept_[static_cast<std::size_t>(data)]) {
        kept_[static_cast<std::size_t>(data)] = std::make_unique<Kept>();
      }
      c.operands.push_back(data);
      c.transforms.push_back(operand_transform(cfg, op).value_or(OperandTransform{}));
    }
    c.transformed.resize(c.operands.size());
    const int domain = cfg.grids[static_cast<std::size_t>(f.grid)].domain;
    c.values.resize(points_of(blocks_.at(static_cast<std::size_t>(domain)), cfg.levels(f.grid)));
    if (has_at_windows(cfg, field)) {
      c.window_periods.emplace(cfg.calendar, f.freq_op);
      const auto& masks = masks_.size() > static_cast<std::size_t>(domain)
                              ? masks_[static_cast<std::size_t>(domain)]
                              : std::vector<std::vector<std::uint8_t>>{};
      const bool masked =
          std::any_of(masks.begin(), masks.end(), [](const auto& m) { return !m.empty(); });
      for (std::size_t k = 0; k < f.expr_operands.size(); ++k) {
        // The operand as named ('@a' on a field_ref of a takes the
        // field_ref's operation, sampling, missing values and fill).
        const FieldDef& named = cfg.fields[static_cast<std::size_t>(f.expr_operands[k])];
        const bool at = c.expr.operand_at()[k];
        // A computed operand's missing points (an operand of it missing,
        // or masked on a twin domain) hold its default_value: missing.
        const bool computed = !cfg.fields[static_cast<std::size_t>(c.operands[k])].expr.empty();
        c.windows.emplace_back(named.operation, at ? c.values.size() : 0, named.default_value,
                               named.detect_missing_value || computed, masked);
        c.operand_slots.emplace_back(steps_of(cfg.calendar, named.freq_op),
                                     steps_of(cfg.calendar, named.freq_offset));
      }
    }
    computed_of_field_[static_cast<std::size_t>(field)] = static_cast<int>(computed_.size());
    computed_.push_back(std::move(c));
  };
  for (std::size_t f = 0; f < cfg.fields.size(); ++f) {
    if (!vars_of_field_[f].empty()) {
      need(static_cast<int>(f));
    }
  }
}

bool ClientEngine::takes_sample(const Variable& v, std::int64_t step) const {
  const std::int64_t k = v.slots.of_step(step);
  if (k < 0 || k == v.slot_taken) {
    return false;
  }
  // A reduced variable's record is the slot; any other's is its period,
  // which must hold the slot's end.
  return v.per_sample || v.slots.last_step(k) <= v.periods.last_step(v.period);
}

std::int64_t ClientEngine::last_step(const Variable& v, std::int64_t k) const {
  return v.per_sample ? v.slots.last_step(k) : v.periods.last_step(k);
}

std::int64_t ClientEngine::last_slot_of_period(const Variable& v) const {
  const std::int64_t end = v.periods.last_step(v.period);
  const std::int64_t k = v.slots.of_step(end);
  return v.slots.last_step(k) == end ? k : k - 1;
}

bool ClientEngine::due(const Variable& v, std::int64_t step) const {
  if (v.op == Operation::kOnce) {
    return false;
  }
  const std::int64_t k = v.slots.of_step(step);
  if (k < 0 || v.slots.last_step(k) != step || k == v.slot_taken) {
    return false;
  }
  // An instant writes its period's last sample alone.
  return v.per_sample || v.op != Operation::kInstant || k == last_slot_of_period(v);
}

std::vector<std::span<const double>> ClientEngine::parts_of(
    int field, const std::vector<double>& values) const {
  const FieldDef& f = cfg_.fields[static_cast<std::size_t>(field)];
  const int nk = cfg_.levels(f.grid);
  std::vector<std::span<const double>> parts;
  std::size_t offset = 0;
  for (const Block& b :
       blocks_.at(static_cast<std::size_t>(cfg_.grids[static_cast<std::size_t>(f.grid)].domain))) {
    const std::size_t n = static_cast<std::size_t>(nk) * static_cast<std::size_t>(b.ni) *
                          static_cast<std::size_t>(b.nj);
    parts.emplace_back(values.data() + offset, n);
    offset += n;
  }
  return parts;
}

const DataLayout* ClientEngine::layout_of(std::size_t domain, std::size_t b) const {
  if (domain >= layouts_.size() || b >= layouts_[domain].size() || layouts_[domain][b].is_block()) {
    return nullptr;
  }
  return &layouts_[domain][b];
}

void ClientEngine::send(int field, std::span<const std::span<const double>> parts) {
  if (Kept* kept = kept_[static_cast<std::size_t>(field)].get()) {
    // An expression reads this field at the end of the step: keep its
    // values, the blocks alone (the points the array does not give are
    // missing values).
    const FieldDef& f = cfg_.fields[static_cast<std::size_t>(field)];
    const auto domain =
        static_cast<std::size_t>(cfg_.grids[static_cast<std::size_t>(f.grid)].domain);
    const auto nk = static_cast<std::size_t>(cfg_.levels(f.grid));
    kept->values.clear();
    for (std::size_t b = 0; b < parts.size(); ++b) {
      const DataLayout* layout = layout_of(domain, b);
      if (layout == nullptr) {
        kept->values.insert(kept->values.end(), parts[b].begin(), parts[b].end());
        continue;
      }
      for (std::size_t k = 0; k < nk; ++k) {
        for (const std::int32_t s : layout->source) {
          kept->values.push_back(s >= 0
                                     ? parts[b][k * layout->per_level + static_cast<std::size_t>(s)]
                                     : f.default_value);
        }
      }
    }
    kept->sent = true;
  }
  feed(field, parts, true);
}

void ClientEngine::feed(int field, std::span<const std::span<const double>> parts, bool as_sent) {
  const FieldDef& f = cfg_.fields[static_cast<std::size_t>(field)];
  const auto domain = static_cast<std::size_t>(cfg_.grids[static_cast<std::size_t>(f.grid)].domain);
  // The model's arrays in a layout of rows can go to the sink as they are;
  // an indexed one only through the accumulator, which picks the points.
  bool by_rows = true;
  for (std::size_t b = 0; as_sent && b < parts.size(); ++b) {
    const DataLayout* layout = layout_of(domain, b);
    by_rows = by_rows && (layout == nullptr || layout->rows);
  }
  for (int g : vars_of_field_[static_cast<std::size_t>(field)]) {
    Variable& v = vars_[static_cast<std::size_t>(g)];
    v.sent = true;
    const bool sample = v.op == Operation::kOnce ? !v.once_done : takes_sample(v, step_);
    if (!sample) {
      continue;
    }
    if (v.op == Operation::kOnce) {
      v.acc.reset();
    } else {
      v.slot_taken = v.slots.of_step(step_);
    }
    if (by_rows && completes_record(v)) {
      const records::RecordTime t = record_time(v);
      for (std::size_t b = 0; b < v.blocks.size(); ++b) {
        LocalBlock one = v.blocks[b];
        one.offset = 0;  // parts[b] holds this block alone, or the model's array of it
        if (const DataLayout* layout = as_sent ? layout_of(domain, b) : nullptr) {
          one.offset = layout->first;
          one.row = layout->row;
          one.level = layout->per_level;
        }
        sink_.put(v.gvar, t, std::span<const LocalBlock>(&one, 1), parts[b].data());
      }
      v.handed_over = true;
      if (step_records_out()) {
        sink_.records_complete(step_);
      }
      continue;
    }
    for (std::size_t b = 0; b < v.blocks.size(); ++b) {
      if (const DataLayout* layout = as_sent ? layout_of(domain, b) : nullptr) {
        v.acc.add_gathered(v.blocks[b].offset, parts[b], v.blocks[b].mask, *layout, v.blocks[b].nk);
      } else {
        v.acc.add_part(v.blocks[b].offset, parts[b], v.blocks[b].mask);
      }
    }
    v.acc.end_sample();
  }
}

// The operand (a field the model sends) that keeps expression `field` from
// being computed in this step, -1 when none.
int ClientEngine::missing_operand(int field) const {
  const int c = computed_of_field_[static_cast<std::size_t>(field)];
  if (c < 0) {
    return -1;
  }
  if (const Computed& w = computed_[static_cast<std::size_t>(c)];
      w.window_periods && w.window_missed >= 0) {
    return w.window_missed;
  }
  for (const int op : computed_[static_cast<std::size_t>(c)].operands) {
    if (const Kept* kept = kept_[static_cast<std::size_t>(op)].get(); kept != nullptr) {
      if (!kept->sent) return op;
    } else if (const int inner = missing_operand(op); inner >= 0) {
      return inner;
    }
  }
  return -1;
}

// Evaluates every expression whose operands came in this step, operands
// first, and feeds its variables as a send would.
void ClientEngine::compute_expressions() {
  for (Computed& c : computed_) {
    c.ready = false;
    if (c.window_periods) {
      compute_window(c);
      continue;
    }
    std::vector<std::span<const double>> inputs;
    std::vector<std::vector<std::uint8_t>> missing;
    bool all = true;
    for (std::size_t k = 0; k < c.operands.size(); ++k) {
      const int op = c.operands[k];
      const FieldDef& of = cfg_.fields[static_cast<std::size_t>(op)];
      const std::vector<double>* values = nullptr;
      if (const Kept* kept = kept_[static_cast<std::size_t>(op)].get()) {
        all = all && kept->sent;
        values = &kept->values;
      } else {
        const Computed& inner =
            computed_[static_cast<std::size_t>(computed_of_field_[static_cast<std::size_t>(op)])];
        all = all && inner.ready;
        values = &inner.values;
      }
      if (!all) {
        break;
      }
      std::vector<std::uint8_t> gone;
      if (c.transforms[k].active) {
        inputs.emplace_back(transform_operand(c, k, *values, gone));
        missing.push_back(std::move(gone));
        continue;
      }
      inputs.emplace_back(*values);
      if (of.detect_missing_value) {
        gone.resize(values->size());
        for (std::size_t i = 0; i < values->size(); ++i) {
          const double x = (*values)[i];
          gone[i] = (x == of.default_value || std::isnan(x)) ? 1 : 0;
        }
      }
      mask_twin(c.field, op, gone);
      missing.push_back(std::move(gone));
    }
    if (!all) {
      continue;
    }
    const FieldDef& f = cfg_.fields[static_cast<std::size_t>(c.field)];
    c.expr.evaluate(inputs, missing, f.default_value, c.values);
    c.ready = true;
    const std::vector<std::span<const double>> parts = parts_of(c.field, c.values);
    feed(c.field, parts, false);
  }
}

const std::vector<double>& ClientEngine::transform_operand(Computed& c, std::size_t k,
                                                           const std::vector<double>& data,
                                                           std::vector<std::uint8_t>& gone) const {
  const OperandTransform& t = c.transforms[k];
  const FieldDef& of = cfg_.fields[static_cast<std::size_t>(c.operands[k])];
  const auto domain = static_cast<std::size_t>(cfg_.domain_of_field(c.field));
  const auto own = static_cast<std::size_t>(cfg_.domain_of_field(c.operands[k]));
  const auto nk_in = static_cast<std::size_t>(cfg_.levels(of.grid));
  const std::size_t nk_out = t.reduce != Reduction::kNone ? 1 : t.levels.size();
  std::vector<double>& out = c.transformed[k];
  out.assign(c.values.size(), of.default_value);
  gone.assign(c.values.size(), 0);
  std::size_t in = 0;
  std::size_t at = 0;
  for (std::size_t b = 0; b < blocks_.at(domain).size(); ++b) {
    const std::size_t n = static_cast<std::size_t>(blocks_[domain][b].ni) *
                          static_cast<std::size_t>(blocks_[domain][b].nj);
    const std::vector<std::uint8_t>* mask =
        own < masks_.size() && b < masks_[own].size() && !masks_[own][b].empty() ? &masks_[own][b]
                                                                                 : nullptr;
    for (std::size_t p = 0; p < n; ++p) {
      const bool masked = mask != nullptr && (*mask)[p] == 0;
      // A computed operand's missing points hold its default_value.
      const auto missing = [&](double x) {
        return masked || ((of.detect_missing_value || !of.expr.empty()) &&
                          (x == of.default_value || std::isnan(x)));
      };
      if (t.reduce == Reduction::kNone) {
        for (std::size_t o = 0; o < nk_out; ++o) {
          const double x = data[in + static_cast<std::size_t>(t.levels[o]) * n + p];
          out[at + o * n + p] = x;
          gone[at + o * n + p] = missing(x) ? 1 : 0;
        }
        continue;
      }
      // reduce_axis over the valid levels (those a zoom before it kept), in
      // level order.
      double acc = 0;
      std::size_t valid = 0;
      const std::size_t nk_reduced = t.levels.empty() ? nk_in : t.levels.size();
      for (std::size_t r = 0; r < nk_reduced; ++r) {
        const std::size_t l = t.levels.empty() ? r : static_cast<std::size_t>(t.levels[r]);
        const double x = data[in + l * n + p];
        if (missing(x)) continue;
        if (valid == 0) {
          acc = x;
        } else if (t.reduce == Reduction::kMin) {
          acc = temporal::nan_min(acc, x);
        } else if (t.reduce == Reduction::kMax) {
          acc = temporal::nan_max(acc, x);
        } else {
          acc += x;
        }
        ++valid;
      }
      if (valid > 1 && t.reduce == Reduction::kAverage) acc *= 1.0 / static_cast<double>(valid);
      out[at + p] = valid > 0 ? acc : of.default_value;
      gone[at + p] = valid > 0 ? 0 : 1;
    }
    in += nk_in * n;
    at += nk_out * n;
  }
  return out;
}

void ClientEngine::mask_twin(int field, int operand, std::vector<std::uint8_t>& gone) const {
  const auto domain = static_cast<std::size_t>(cfg_.domain_of_field(field));
  const auto twin = static_cast<std::size_t>(cfg_.domain_of_field(operand));
  if (twin == domain || twin >= masks_.size()) {
    return;  // the field's own mask, applied by its variables
  }
  const int nk = cfg_.levels(cfg_.fields[static_cast<std::size_t>(field)].grid);
  std::size_t offset = 0;
  for (std::size_t b = 0; b < blocks_.at(domain).size(); ++b) {
    const std::size_t n = static_cast<std::size_t>(nk) *
                          static_cast<std::size_t>(blocks_[domain][b].ni) *
                          static_cast<std::size_t>(blocks_[domain][b].nj);
    const std::vector<std::uint8_t>* mask =
        b < masks_[twin].size() && !masks_[twin][b].empty() ? &masks_[twin][b] : nullptr;
    if (mask != nullptr) {
      gone.resize(std::max(gone.size(), offset + n), 0);
      for (std::size_t i = 0; i < n; ++i) {
        if ((*mask)[i % mask->size()] == 0) gone[offset + i] = 1;
      }
    }
    offset += n;
  }
  if (!gone.empty()) gone.resize(offset, 0);
}

const std::vector<double>* ClientEngine::current(int field) const {
  if (const Kept* kept = kept_[static_cast<std::size_t>(field)].get()) {
    return kept->sent ? &kept->values : nullptr;
  }
  const Computed& inner =
      computed_[static_cast<std::size_t>(computed_of_field_[static_cast<std::size_t>(field)])];
  return inner.ready ? &inner.values : nullptr;
}

void ClientEngine::compute_window(Computed& c) {
  const FieldDef& f = cfg_.fields[static_cast<std::size_t>(c.field)];
  const std::vector<bool>& at = c.expr.operand_at();
  const temporal::Periods& periods = *c.window_periods;
  const std::int64_t w = periods.of_step(step_, std::max<std::int64_t>(c.window_index, 0));
  if (w != c.window_index) {
    // A new window (the steps before it may have been skipped).
    for (temporal::Accumulator& a : c.windows) a.reset();
    c.window_index = w;
    c.window_samples = 0;
    c.window_missed = -1;
  }
  // '@' operand k samples at its own freq_op and freq_offset: at the
  // first step of each of its slots (XIOS's sampling dates).
  const auto samples_now = [&](std::size_t k) {
    const temporal::SamplingSlots& slots = c.operand_slots[k];
    const std::int64_t slot = slots.of_step(step_);
    return at[k] && slot >= 0 && step_ == std::max<std::int64_t>(1, slots.first_step(slot));
  };
  bool all = true;
  for (std::size_t k = 0; k < c.operands.size(); ++k) {
    if (samples_now(k) && current(c.operands[k]) == nullptr) {
      all = false;
      if (c.window_missed < 0 && kept_[static_cast<std::size_t>(c.operands[k])]) {
        c.window_missed = c.operands[k];
      }
    }
  }
  if (all) {
    const std::vector<std::span<const double>> parts = parts_of(c.field, c.values);
    for (std::size_t k = 0; k < c.operands.size(); ++k) {
      if (!samples_now(k)) continue;
      // The operand's own mask (its domain may be a twin of the field's).
      const auto domain = static_cast<std::size_t>(cfg_.domain_of_field(c.operands[k]));
      const std::vector<double>& values = *current(c.operands[k]);
      std::size_t offset = 0;
      for (std::size_t b = 0; b < parts.size(); ++b) {
        const std::span<const std::uint8_t> mask =
            domain < masks_.size() && b < masks_[domain].size()
                ? std::span<const std::uint8_t>(masks_[domain][b])
                : std::span<const std::uint8_t>();
        c.windows[k].add_part(offset, {values.data() + offset, parts[b].size()}, mask);
        offset += parts[b].size();
      }
      c.windows[k].end_sample();
    }
    ++c.window_samples;
  }
  const std::int64_t last = periods.last_step(w);
  const std::int64_t first = w == 0 ? 1 : periods.last_step(w - 1) + 1;
  if (step_ != last || c.window_samples != last - first + 1) {
    return;  // not the window's last step, or a step of it came without its '@' operands
  }
  std::vector<std::span<const double>> inputs;
  std::vector<std::vector<std::uint8_t>> missing;
  for (std::size_t k = 0; k < c.operands.size(); ++k) {
    std::vector<std::uint8_t> gone;
    if (at[k]) {
      temporal::Accumulator& a = c.windows[k];
      inputs.push_back(a.result());
      gone.resize(c.values.size());
      for (std::size_t i = 0; i < gone.size(); ++i) gone[i] = a.valid(i) ? 0 : 1;
    } else {
      // Without '@': the value at the window's last step.
      const std::vector<double>* values = current(c.operands[k]);
      if (values == nullptr) {
        return;
      }
      inputs.emplace_back(*values);
      const FieldDef& of = cfg_.fields[static_cast<std::size_t>(c.operands[k])];
      if (of.detect_missing_value) {
        gone.resize(values->size());
        for (std::size_t i = 0; i < values->size(); ++i) {
          const double x = (*values)[i];
          gone[i] = (x == of.default_value || std::isnan(x)) ? 1 : 0;
        }
      }
      mask_twin(c.field, c.operands[k], gone);
    }
    missing.push_back(std::move(gone));
  }
  c.expr.evaluate(inputs, missing, f.default_value, c.values);
  c.ready = true;
  const std::vector<std::span<const double>> parts = parts_of(c.field, c.values);
  feed(c.field, parts, false);
}

bool ClientEngine::completes_record(const Variable& v) const {
  if (!sink_.takes_records_at_send() || v.op == Operation::kOnce || v.spoiled_at > 0 ||
      !v.acc.every_point_valid() || step_ != last_step(v, v.period)) {
    return false;
  }
  // An instant's record is its last sample; the other operations' is this
  // sample alone when no other one came in the period.
  return v.op == Operation::kInstant || v.acc.samples() == 0;
}

bool ClientEngine::step_records_out() const {
  return std::all_of(vars_.begin(), vars_.end(), [this](const Variable& v) {
    if (v.op == Operation::kOnce) {
      return v.once_done;  // its record goes at the end of some step
    }
    return v.handed_over || step_ != last_step(v, v.period);
  });
}

records::RecordTime ClientEngine::record_time(const Variable& v) const {
  records::RecordTime t;
  t.record = static_cast<int>(v.period);
  if (v.per_sample) {
    // A sample: its time (the servers place it in its output period).
    t.time = t.lo = t.hi = static_cast<double>(cfg_.calendar.time_of_step(last_step(v, v.period)));
  } else {
    t.lo = v.periods.lo(v.period);
    t.hi = v.periods.hi(v.period);
    // One time axis per file: the period's middle when the file has time
    // bounds (a non-instant variable), else its end (the instant sampled).
    t.time = v.centred_time ? 0.5 * (t.lo + t.hi) : t.hi;
  }
  return t;
}

void ClientEngine::close_period(Variable& v) {
  const records::RecordTime t = record_time(v);
  if (v.handed_over) {
    // Sent whole at the last step of the period, which nothing can spoil
    // any more (the period ended with it).
  } else if (v.spoiled_at > 0) {
    sink_.put_missing(v.gvar, t, v.blocks);
  } else {
    const std::span<const double> values = v.acc.result();  // fill where nothing was sampled
    sink_.put(v.gvar, t, v.blocks, values.data());
  }
  v.acc.reset();
  v.spoiled_at = 0;
  v.handed_over = false;
  ++v.period;
}

// A once variable has one record (0), stamped with the time of its sample.
void ClientEngine::emit_once(Variable& v, std::int64_t step, bool missing) {
  records::RecordTime t;
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
void note(std::vector<MissedField>& missed, int field, std::int64_t step, int gvar, int operand) {
  const bool known = std::any_of(missed.begin(), missed.end(), [&](const MissedField& m) {
    return m.field == field && m.step == step;
  });
  if (!known) {
    missed.push_back({field, step, gvar, operand});
  }
}
}  // namespace

void ClientEngine::end_step(std::int64_t step, bool began, std::vector<MissedField>& missed) {
  if (began) {
    compute_expressions();
  }
  for (Variable& v : vars_) {
    if (v.op == Operation::kOnce) {
      if (v.once_done) {
        continue;
      }
      if (began && v.sent) {
        emit_once(v, step, false);
      } else if (step >= v.periods.last_step(0)) {
        note(missed, v.field, step, v.gvar, began ? missing_operand(v.field) : -1);
        emit_once(v, step, true);
      }
      continue;
    }
    if (due(v, step)) {
      v.spoiled_at = v.spoiled_at > 0 ? v.spoiled_at : step;
      note(missed, v.field, step, v.gvar, began ? missing_operand(v.field) : -1);
    }
    if (step == last_step(v, v.period)) {
      close_period(v);
    }
  }
  for (auto& kept : kept_) {
    if (kept) kept->sent = false;
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
        note(missed, v.field, at, v.gvar, -1);
        emit_once(v, at, true);
      }
      return;
    }
    const std::int64_t last = last_step(v, v.period);
    const std::int64_t seg_end = std::min(last, to);
    // The first slot ending in [from, seg_end] whose sample it needs and
    // was not taken (an instant needs its period's last slot alone).
    std::int64_t k = std::max<std::int64_t>(0, v.slots.of_step(std::max<std::int64_t>(from, 1)));
    if (k == v.slot_taken) {
      ++k;
    }
    if (v.op == Operation::kInstant && !v.per_sample) {
      k = std::max(k, last_slot_of_period(v));
    }
    const std::int64_t s = v.slots.last_step(k);
    const std::int64_t first_due = k != v.slot_taken && s >= from && s <= seg_end ? s : 0;
    if (first_due > 0) {
      v.spoiled_at = v.spoiled_at > 0 ? v.spoiled_at : first_due;
      note(missed, v.field, first_due, v.gvar, -1);
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
  const FieldDef& f = cfg_.fields[static_cast<std::size_t>(m.field)];
  // A sampling slot of several steps: any of them would have done.
  const Variable& v = vars_[static_cast<std::size_t>(m.gvar)];
  const std::int64_t in_slot = v.op == Operation::kOnce ? -1 : v.slots.of_step(m.step);
  const std::int64_t first =
      in_slot < 0 ? m.step : std::max<std::int64_t>(1, v.slots.first_step(in_slot));
  std::string what = "field '" + f.id + "' was due at step " + std::to_string(m.step);
  if (first < m.step) {
    what = "field '" + f.id + "' was due in steps " + std::to_string(first) + "-" +
           std::to_string(m.step);
  }
  if (!f.expr.empty()) {
    what += m.operand >= 0
                ? " and could not be computed (its expression reads field '" +
                      cfg_.fields[static_cast<std::size_t>(m.operand)].id + "', which was not sent)"
                : " and could not be computed (a field its expression reads was not "
                  "sent)";
  } else {
    what += " and was not sent";
  }
  std::string text = what + " (file '" + file.id + "', variable '" +
                     file.variables[static_cast<std::size_t>(slot.pos)].name +
                     "'): this client's points of that record are written as _FillValue";
  if (missed.size() > 1) {
    text += " (and " + std::to_string(missed.size() - 1) + " more due field(s) not sent)";
  }
  return text;
}

}  // namespace xios_lite::client
