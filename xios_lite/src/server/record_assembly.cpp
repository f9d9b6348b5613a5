#include "record_assembly.hpp"

#include <algorithm>
#include <set>

namespace xios_lite::server {

RecordAssembly::RecordAssembly(const Config& cfg, const ServerProcess& process,
                               WriterThread& writer, std::atomic<std::size_t>& bytes_in_flight)
    : cfg_(cfg),
      table_(netcdf::variable_table(cfg)),
      rows_(process.rows(cfg)),
      first_endpoint_(process.first_endpoint),
      writer_(writer),
      in_flight_(bytes_in_flight),
      owner_(process.index == 0),
      folder_(cfg, writer, bytes_in_flight) {}

records::RowRange RecordAssembly::rows_of(int gvar) const {
  const netcdf::VariableSlot& slot = table_[static_cast<std::size_t>(gvar)];
  const OutputVariable& v =
      cfg_.files[static_cast<std::size_t>(slot.file)].variables[static_cast<std::size_t>(slot.pos)];
  const auto domain = static_cast<std::size_t>(domain_of(gvar));
  if (v.shape.needs_whole_domain()) {
    const int nj = cfg_.domains[domain].nj_glo;
    return owner_ ? records::RowRange{0, nj} : records::RowRange{nj, 0};
  }
  return rows_[domain];
}

void RecordAssembly::hand_on(std::unique_ptr<RecordBuffer> record, bool incomplete) {
  if (folder_.handles(record->gvar)) {
    folder_.take(std::move(record), incomplete);
  } else {
    writer_.push(std::move(record));
  }
}

int RecordAssembly::domain_of(int gvar) const {
  const netcdf::VariableSlot& v = table_[static_cast<std::size_t>(gvar)];
  const OutputVariable& ov =
      cfg_.files[static_cast<std::size_t>(v.file)].variables[static_cast<std::size_t>(v.pos)];
  return cfg_.domain_of_field(ov.source);
}

std::unique_ptr<RecordBuffer> RecordAssembly::make_record(const transport::EventHeader& h) const {
  const netcdf::VariableSlot& v = table_[h.var];
  const OutputVariable& ov =
      cfg_.files[static_cast<std::size_t>(v.file)].variables[static_cast<std::size_t>(v.pos)];
  const auto domain = static_cast<std::size_t>(domain_of(h.var));
  auto record = std::make_unique<RecordBuffer>();
  record->gvar = static_cast<int>(h.var);
  record->time = {static_cast<int>(h.record), h.time, h.bound_lo, h.bound_hi};
  record->nk = h.nk;
  record->rows = rows_of(static_cast<int>(h.var));
  record->ni = cfg_.domains[domain].ni_glo;
  record->data.assign(static_cast<std::size_t>(h.nk) * static_cast<std::size_t>(record->rows.nj) *
                          static_cast<std::size_t>(record->ni),
                      ov.default_value);
  return record;
}

bool RecordAssembly::define(int client, std::span<const int> layout) {
  std::vector<std::size_t> points(cfg_.domains.size(), 0);
  if (layout.empty() || layout[0] < 0 || static_cast<std::size_t>(layout[0]) >= layout.size()) {
    return false;
  }
  std::string ranks;
  for (int r = 1; r <= layout[0]; ++r) {
    ranks += (ranks.empty() ? "" : ", ") + std::to_string(layout[static_cast<std::size_t>(r)]);
  }
  std::size_t at = static_cast<std::size_t>(layout[0]) + 1;
  for (std::size_t d = 0; d < cfg_.domains.size(); ++d) {
    if (at >= layout.size() || layout[at] < 0) {
      return false;
    }
    const auto blocks = static_cast<std::size_t>(layout[at++]);
    if (at + 4 * blocks > layout.size()) {
      return false;
    }
    const records::RowRange rows = rows_[d];
    for (std::size_t b = 0; b < blocks; ++b, at += 4) {
      const int ni = layout[at + 1];
      const int j0 = std::max(layout[at + 2], rows.jbegin);
      const int j1 = std::min(layout[at + 2] + layout[at + 3], rows.jbegin + rows.nj);
      if (j1 > j0 && ni > 0) {
        points[d] += static_cast<std::size_t>(ni) * static_cast<std::size_t>(j1 - j0);
      }
    }
  }
  const std::lock_guard lock(mutex_);
  expected_[client] = std::move(points);
  ranks_[client] = ranks;
  return true;
}

std::string RecordAssembly::ranks_of(int client) const {
  const std::lock_guard lock(mutex_);
  const auto it = ranks_.find(client);
  return it != ranks_.end() ? it->second : std::to_string(client);
}

bool RecordAssembly::place(int client, int endpoint, const transport::EventHeader& h,
                           const std::byte* payload) {
  if (h.var >= table_.size()) {
    return false;
  }
  if (h.points() == 0 && (rows_of(static_cast<int>(h.var)).nj > 0 || endpoint != first_endpoint_)) {
    return true;  // a marker for a process that holds rows (or taken by its first endpoint)
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
  const bool data = h.kind() == transport::EventKind::kData;
  if (data) {
    record->copy_in(h, payload);
  }
  std::unique_ptr<RecordBuffer> complete;
  {
    const std::lock_guard lock(mutex_);
    record->filled += h.points();
    if (data) {
      record->given.emplace_back(client, h.points());
    } else if (std::find(record->missing_from.begin(), record->missing_from.end(), client) ==
               record->missing_from.end()) {
      record->missing_from.push_back(client);
    }
    if (record->complete()) {
      auto it = records_.find(key);
      complete = std::move(it->second);
      records_.erase(it);
      if (!complete->missing_from.empty()) {
        note_incomplete(*complete);
      }
    }
  }
  if (complete) {
    hand_on(std::move(complete), false);
  }
  return true;
}

std::string RecordAssembly::describe_missing(const RecordBuffer& r) const {
  std::set<int> missing(r.missing_from.begin(), r.missing_from.end());
  const auto domain = static_cast<std::size_t>(domain_of(r.gvar));
  std::map<int, std::size_t> given;
  for (const auto& [client, points] : r.given) {
    given[client] += points;
  }
  for (const auto& [client, points] : expected_) {
    const std::size_t want = points[domain] * static_cast<std::size_t>(r.nk);
    if (want > 0 && given[client] < want) {
      missing.insert(client);
    }
  }
  const netcdf::VariableSlot& slot = table_[static_cast<std::size_t>(r.gvar)];
  const FileDef& file = cfg_.files[static_cast<std::size_t>(slot.file)];
  std::string clients;
  for (int c : missing) {
    const auto it = ranks_.find(c);
    clients +=
        (clients.empty() ? "" : ", ") + (it != ranks_.end() ? it->second : std::to_string(c));
  }
  const auto seconds = static_cast<std::int64_t>(r.time.time);
  return "file '" + file.id + "', variable '" +
         file.variables[static_cast<std::size_t>(slot.pos)].name + "', record " +
         std::to_string(r.time.record) + " (time " + format_date(cfg_.calendar.date_at(seconds)) +
         "): no data from clients [" + (clients.empty() ? "?" : clients) + "]";
}

void RecordAssembly::note_incomplete(RecordBuffer& r) const { r.missing = describe_missing(r); }

std::size_t RecordAssembly::flush_incomplete() {
  std::vector<std::unique_ptr<RecordBuffer>> left;
  {
    const std::lock_guard lock(mutex_);
    for (auto& [key, record] : records_) {
      note_incomplete(*record);
      left.push_back(std::move(record));
    }
    records_.clear();
  }
  const std::size_t n = left.size();
  for (auto& r : left) {
    hand_on(std::move(r), true);
  }
  return n;
}

std::size_t RecordAssembly::peak_bytes() const {
  const std::lock_guard lock(mutex_);
  return peak_;
}

}  // namespace xios_lite::server
