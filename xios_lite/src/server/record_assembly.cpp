#include "record_assembly.hpp"

#include <algorithm>

namespace xios_lite::server {

RecordAssembly::RecordAssembly(const Config& cfg, const ServerProcess& process,
                               WriterThread& writer, std::atomic<std::size_t>& bytes_in_flight)
    : cfg_(cfg),
      table_(netcdf::variable_table(cfg)),
      rows_(process.rows(cfg)),
      writer_(writer),
      in_flight_(bytes_in_flight) {}

std::unique_ptr<RecordBuffer> RecordAssembly::make_record(const transport::EventHeader& h) const {
  const netcdf::VariableSlot& v = table_[h.var];
  const OutputVariable& ov =
      cfg_.files[static_cast<std::size_t>(v.file)].variables[static_cast<std::size_t>(v.pos)];
  const FieldDef& f = cfg_.fields[static_cast<std::size_t>(ov.field)];
  const auto domain = static_cast<std::size_t>(cfg_.grids[static_cast<std::size_t>(f.grid)].domain);
  auto record = std::make_unique<RecordBuffer>();
  record->gvar = static_cast<int>(h.var);
  record->time = {static_cast<int>(h.record), h.time, h.bound_lo, h.bound_hi};
  record->nk = h.nk;
  record->rows = rows_[domain];
  record->ni = cfg_.domains[domain].ni_glo;
  record->data.assign(static_cast<std::size_t>(h.nk) * static_cast<std::size_t>(record->rows.nj) *
                          static_cast<std::size_t>(record->ni),
                      f.default_value);
  return record;
}

bool RecordAssembly::place(const transport::EventHeader& h, const std::byte* payload) {
  if (h.var >= table_.size()) {
    return false;
  }
  const Key key{static_cast<int>(h.var), static_cast<int>(h.record)};
  RecordBuffer* record = nullptr;
  {
    const std::lock_guard lock(mutex_);
    std::unique_ptr<RecordBuffer>& slot = records_[key];
    if (!slot) {
      slot = make_record(h);
      const std::size_t now =
          in_flight_.fetch_add(slot->bytes(), std::memory_order_relaxed) + slot->bytes();
      peak_ = std::max(peak_, now);
    }
    record = slot.get();
  }
  if (!record->holds(h)) {
    return false;
  }
  record->copy_in(h, payload);
  std::unique_ptr<RecordBuffer> complete;
  {
    const std::lock_guard lock(mutex_);
    record->filled += h.points();
    if (record->complete()) {
      auto it = records_.find(key);
      complete = std::move(it->second);
      records_.erase(it);
    }
  }
  if (complete) {
    writer_.push(std::move(complete));
  }
  return true;
}

std::size_t RecordAssembly::drop_incomplete() {
  const std::lock_guard lock(mutex_);
  const std::size_t dropped = records_.size();
  for (const auto& [key, record] : records_) {
    in_flight_.fetch_sub(record->bytes(), std::memory_order_relaxed);
  }
  records_.clear();
  return dropped;
}

std::size_t RecordAssembly::peak_bytes() const {
  const std::lock_guard lock(mutex_);
  return peak_;
}

}  // namespace xios_lite::server
