#include "writer_thread.hpp"

#include <algorithm>
#include <span>

#include "transport/bands.hpp"
#include "transport/wire_codec.hpp"

namespace xios_lite::server {

std::mutex& netcdf_lock() {
  static std::mutex lock;
  return lock;
}

bool RecordBuffer::holds(const transport::EventHeader& h) const noexcept {
  return h.nk == nk && h.ibegin >= 0 && h.ni >= 0 && h.ibegin + h.ni <= ni &&
         h.jbegin >= rows.jbegin && h.nj >= 0 && h.jbegin + h.nj <= rows.jbegin + rows.nj;
}

void RecordBuffer::copy_in(const transport::EventHeader& h, const std::byte* payload) {
  // The event's values, row by row (the reader checked h.payload_bytes()
  // against its buffer).
  transport::WireReader in(std::span(payload, h.payload_bytes()), "xios_lite::server::receive");
  const auto ni_piece = static_cast<std::size_t>(h.ni);
  for (int k = 0; k < h.nk; ++k) {
    for (int j = 0; j < h.nj; ++j) {
      double* dst = data.data() +
                    (static_cast<std::size_t>(k) * rows.nj +
                     static_cast<std::size_t>(h.jbegin + j - rows.jbegin)) *
                        static_cast<std::size_t>(ni) +
                    static_cast<std::size_t>(h.ibegin);
      in.get_raw(std::span<double>(dst, ni_piece));
    }
  }
}

WriterThread::WriterThread(const Config& cfg, const ServerProcess& process, MPI_Comm servers_comm,
                           std::atomic<std::size_t>& bytes_in_flight)
    : cfg_(cfg),
      table_(netcdf::variable_table(cfg)),
      in_flight_(bytes_in_flight),
      local_files_(cfg, process.part(cfg), MPI_COMM_NULL, process.first_endpoint),
      shared_files_(cfg, process.part(cfg), servers_comm, process.first_endpoint),
      order_(cfg.files.size()) {
  thread_ = std::thread([this] { run(); });
}

WriterThread::~WriterThread() {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
}

void WriterThread::push(std::unique_ptr<RecordBuffer> record) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(record));
  }
  wake_.notify_one();
}

std::string WriterThread::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

void WriterThread::set_error(const std::string& e) {
  std::lock_guard lock(mutex_);
  if (error_.empty()) {
    error_ = e;
  }
}

void WriterThread::run() {
  for (;;) {
    std::deque<std::unique_ptr<RecordBuffer>> batch;
    bool done = false;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return done_ || !queue_.empty(); });
      batch.swap(queue_);
      done = done_;
    }
    for (auto& r : batch) {
      accept(std::move(r));
    }
    if (done) {
      break;
    }
  }
  // Whatever is still pending (a record missing in between) is written in order.
  for (std::size_t f = 0; f < order_.size(); ++f) {
    write_ready(static_cast<int>(f), true);
  }
  try {
    const std::lock_guard lock(netcdf_lock());
    const double t0 = MPI_Wtime();
    local_files_.close_all();
    shared_files_.close_all();
    stats_.write_s += MPI_Wtime() - t0;
  } catch (const std::exception& e) {
    set_error(e.what());
  }
}

void WriterThread::accept(std::unique_ptr<RecordBuffer> record) {
  const netcdf::VariableSlot slot = table_[static_cast<std::size_t>(record->gvar)];
  order_[static_cast<std::size_t>(slot.file)].pending.emplace(
      std::pair{record->time.record, slot.pos}, std::move(record));
  write_ready(slot.file, false);
}

// Writes the file's records in canonical order as far as they are complete
// (or all of them when flushing at the end).
void WriterThread::write_ready(int file, bool flush_all) {
  FileOrder& o = order_[static_cast<std::size_t>(file)];
  const auto& vars = cfg_.files[static_cast<std::size_t>(file)].variables;
  auto valid = [&](int record, int pos) {
    return record == 0 || vars[static_cast<std::size_t>(pos)].operation != Operation::kOnce;
  };
  const bool timed = std::any_of(vars.begin(), vars.end(), [](const OutputVariable& v) {
    return v.operation != Operation::kOnce;
  });
  for (;;) {
    if (vars.empty() || (o.next_record > 0 && !timed)) {
      return;
    }
    while (o.next_pos < static_cast<int>(vars.size()) && !valid(o.next_record, o.next_pos)) {
      ++o.next_pos;
    }
    if (o.next_pos >= static_cast<int>(vars.size())) {
      o.next_pos = 0;
      ++o.next_record;
      continue;
    }
    auto it = o.pending.find({o.next_record, o.next_pos});
    if (it == o.pending.end()) {
      if (!flush_all || o.pending.empty()) {
        return;
      }
      it = o.pending.begin();  // a gap at the end: write what there is, in order
      o.next_record = it->first.first;
      o.next_pos = it->first.second;
    }
    std::unique_ptr<RecordBuffer> r = std::move(it->second);
    o.pending.erase(it);
    if (!o.failed) {
      try {
        write(*r);
        if (!r->missing.empty()) {
          if (incomplete_.size() < kKeptLines) incomplete_.push_back(r->missing);
          ++incomplete_count_;
        }
      } catch (const std::exception& e) {
        o.failed = true;
        set_error(e.what());
      }
    }
    if (o.failed && r->time.record != o.lost_last) {
      // Records come in order per file: a record is new when it differs from the last.
      o.lost_first = o.lost_first < 0 ? r->time.record : o.lost_first;
      o.lost_last = r->time.record;
      ++o.lost;
    }
    in_flight_.fetch_sub(r->bytes(), std::memory_order_relaxed);
    ++o.next_pos;
  }
}

void WriterThread::write(const RecordBuffer& r) {
  const netcdf::VariableSlot slot = table_[static_cast<std::size_t>(r.gvar)];
  const FileDef& file = cfg_.files[static_cast<std::size_t>(slot.file)];
  const bool shared = file.type == FileType::kOneFile;
  const OutputVariable& v = file.variables[static_cast<std::size_t>(slot.pos)];
  netcdf::BlockView view{{r.rows.jbegin, r.rows.nj, 0, r.ni, r.nk}, r.data.data()};
  netcdf::OutputBlock cut;
  if (!v.shape.reduces() && !netcdf::writes_field_grid(cfg_, v)) {
    // XIOS's zoom and extract: the variable's window and levels of the record.
    cut = netcdf::cut_to_output(v.shape, r.rows.jbegin, r.rows.nj, 0, r.ni, r.nk, r.data.data());
    view = {cut, cut.values.data()};
  }
  const std::lock_guard lock(netcdf_lock());
  const double t0 = MPI_Wtime();
  (shared ? shared_files_ : local_files_).write(r.gvar, r.time, std::span(&view, 1));
  stats_.write_s += MPI_Wtime() - t0;
  // What the file holds: the values written (a zoom's window, not the
  // record), in the variable's type (prec 4: float).
  stats_.bytes_written += static_cast<double>(view.nk) * view.nj * view.ni * v.prec;
}

std::string WriterThread::incomplete_report(std::size_t limit) const {
  std::string text;
  if (incomplete_count_ > 0) {
    text = std::to_string(incomplete_count_) +
           " record(s) written with _FillValue where data is missing: ";
    for (std::size_t i = 0; i < incomplete_.size() && i < limit; ++i) {
      text += (i > 0 ? "; " : "") + incomplete_[i];
    }
    if (incomplete_count_ > limit) {
      text += "; and " + std::to_string(incomplete_count_ - std::min(limit, incomplete_.size())) +
              " more";
    }
  }
  for (std::size_t f = 0; f < order_.size(); ++f) {
    const FileOrder& o = order_[f];
    if (o.lost > 0) {
      text += (text.empty() ? "" : "; ") +
              netcdf::lost_records_line(cfg_.files[f].id, o.lost, o.lost_first, o.lost_last);
    }
  }
  return text;
}

WriterStats WriterThread::finish() {
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  wake_.notify_one();
  thread_.join();
  return stats_;
}

}  // namespace xios_lite::server
