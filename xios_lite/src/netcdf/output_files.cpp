// Split periods are found from the record's period start: a record covering
// (lo, hi] belongs to the split period that contains lo, so a daily split of
// 6-hourly records puts records 0..3 in the first file.
#include "output_files.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "ep/error.hpp"

namespace xios_lite::netcdf {

std::vector<VariableSlot> variable_table(const Config& cfg) {
  std::vector<VariableSlot> table;
  for (std::size_t f = 0; f < cfg.files.size(); ++f) {
    for (std::size_t p = 0; p < cfg.files[f].variables.size(); ++p) {
      table.push_back({static_cast<int>(f), static_cast<int>(p)});
    }
  }
  return table;
}

std::string lost_records_line(const std::string& file_id, std::size_t lost, int first, int last) {
  return "file '" + file_id + "': " + std::to_string(lost) +
         " record(s) not written after its write error (records " + std::to_string(first) + " to " +
         std::to_string(last) + ")";
}

std::string server_suffix(int server, int servers, int min_digits) {
  std::string suffix;
  if (servers > 1) {
    std::string number = std::to_string(server);
    if (static_cast<int>(number.size()) < min_digits) {
      number.insert(0, static_cast<std::size_t>(min_digits) - number.size(), '0');
    }
    suffix.append(1, '_').append(number);
  }
  return suffix;
}

OutputFiles::OutputFiles(const Config& cfg, WriterPart part, MPI_Comm comm, int ep_rank)
    : cfg_(cfg),
      part_(std::move(part)),
      comm_(comm),
      ep_rank_(ep_rank),
      table_(variable_table(cfg)),
      files_(cfg.files.size()) {
  if (const char* inject = std::getenv("XIOS_LITE_TEST_WRITE_FAILURE")) {
    inject_ = inject;
  }
  const bool shared = comm != MPI_COMM_NULL;
  for (std::size_t f = 0; f < cfg.files.size(); ++f) {
    for (const auto& v : cfg.files[f].variables) {
      files_[f].timed_vars += v.operation != Operation::kOnce ? 1 : 0;
      const VariableLayout l = layout_of(cfg, v);
      const RowRange held = held_rows(
          l, part_.source_rows.at(static_cast<std::size_t>(l.source_domain)), part_.owner);
      files_[f].rows.push_back(shared ? RowRange{0, l.rows} : held);
      files_[f].held = files_[f].held || files_[f].rows.back().nj > 0;
    }
    files_[f].next_sync = 1;
  }
}

RowRange OutputFiles::held(int gvar) const {
  const VariableSlot slot = table_.at(static_cast<std::size_t>(gvar));
  const OutputVariable& v =
      cfg_.files[static_cast<std::size_t>(slot.file)].variables[static_cast<std::size_t>(slot.pos)];
  const VariableLayout l = layout_of(cfg_, v);
  return held_rows(l, part_.source_rows.at(static_cast<std::size_t>(l.source_domain)), part_.owner);
}

OutputFiles::~OutputFiles() = default;

std::string OutputFiles::file_name(int file, std::int64_t split) const {
  const FileDef& fd = cfg_.files[static_cast<std::size_t>(file)];
  std::string name = fd.name;
  name.append(fd.name_suffix);
  if (split >= 0 && fd.split_freq.is_set()) {
    const Calendar& cal = cfg_.calendar;
    const auto date = [&](std::int64_t k) {
      const Date d = cal.date_at(cal.boundary(fd.split_freq, k));
      return fd.split_freq_format.empty() ? format_date_compact(d)
                                          : format_date_as(d, fd.split_freq_format);
    };
    // Appended piece by piece: GCC 12 warns (-Wrestrict) on "_" + std::string.
    name.append(1, '_');
    name.append(date(split));
    name.append(1, '-');
    name.append(date(split + 1));
  }
  if (fd.type == FileType::kMultipleFile && comm_ == MPI_COMM_NULL) {
    name.append(server_suffix(part_.server, part_.servers, fd.min_digits));
  }
  name.append(".nc");
  return name;
}

void OutputFiles::open(int file, std::int64_t split, int first_record) {
  FileState& st = files_[static_cast<std::size_t>(file)];
  if (st.nc) {
    finish_file(st);
  }
  const std::string path =
      file_name(file, cfg_.files[static_cast<std::size_t>(file)].split_freq.is_set() ? split : -1);
  st.nc = std::make_unique<NcFile>(path, cfg_, file, st.rows, comm_, ep_rank_);
  st.split = split;
  st.first_record = first_record;
  paths_.push_back(path);
  // A once variable belongs in every file of the split, not only the first.
  for (const OnceRecord& once : once_) {
    const VariableSlot slot = table_.at(static_cast<std::size_t>(once.gvar));
    if (slot.file == file) {
      write_blocks(st, slot.pos, 0, once.views);
    }
  }
}

void OutputFiles::write_blocks(FileState& st, int pos, int local_record,
                               std::span<const BlockView> blocks) {
  for (const BlockView& b : blocks) {
    st.nc->write_block(pos, local_record, b.jbegin, b.nj, b.ibegin, b.ni, b.nk, b.data);
  }
}

void OutputFiles::finish_file(FileState& st) {
  std::unique_ptr<NcFile> nc = std::move(st.nc);
  bytes_written_ += nc->bytes_written();
  // Closed even when the sync fails: a file that failed must not keep its
  // handle (nor stop the other files from closing).
  std::exception_ptr failure;
  try {
    nc->sync();
  } catch (...) {
    failure = std::current_exception();
  }
  try {
    nc->close();
  } catch (...) {
    if (!failure) failure = std::current_exception();
  }
  if (failure) std::rethrow_exception(failure);
}

void OutputFiles::write(int gvar, const RecordTime& t, std::span<const BlockView> blocks) {
  const VariableSlot slot = table_.at(static_cast<std::size_t>(gvar));
  FileState& st = files_[static_cast<std::size_t>(slot.file)];
  if (!st.held) {
    return;  // a process holding no row of the file's domains writes no file
  }
  const auto count_lost = [&st](int record) {
    if (record != st.lost_last) {  // records come in order: a new one differs from the last
      st.lost_first = st.lost_first < 0 ? record : st.lost_first;
      st.lost_last = record;
      ++st.lost;
    }
  };
  if (st.failed) {
    count_lost(t.record);
    return;
  }
  std::string failure;
  std::exception_ptr own;
  try {
    write_record(gvar, t, blocks);
    inject_failure(slot.file, t.record);
  } catch (const std::exception& e) {
    failure = e.what();
    own = std::current_exception();
  }
  if (comm_ != MPI_COMM_NULL) {
    failure = agree_on_failure(failure, slot.file);
  }
  if (failure.empty()) {
    return;
  }
  st.failed = true;
  count_lost(t.record);
  if (own) {
    std::rethrow_exception(own);
  }
  throw ep::Error(ep::ErrorKind::kIo, "xios_lite::OutputFiles::write", ep_rank_, failure);
}

std::string OutputFiles::agree_on_failure(const std::string& mine, int file) const {
  int rank = 0;
  ep::check_mpi(MPI_Comm_rank(comm_, &rank), "MPI_Comm_rank", ep_rank_);
  const int failed_at = mine.empty() ? INT_MAX : rank;
  int first = INT_MAX;
  ep::check_mpi(MPI_Allreduce(&failed_at, &first, 1, MPI_INT, MPI_MIN, comm_), "MPI_Allreduce",
                ep_rank_);
  if (first == INT_MAX) {
    return "";
  }
  // The first failing process's text, for the processes whose write went well.
  int length = rank == first ? static_cast<int>(mine.size()) : 0;
  ep::check_mpi(MPI_Bcast(&length, 1, MPI_INT, first, comm_), "MPI_Bcast", ep_rank_);
  std::string text = rank == first ? mine : std::string(static_cast<std::size_t>(length), ' ');
  ep::check_mpi(MPI_Bcast(text.data(), length, MPI_CHAR, first, comm_), "MPI_Bcast", ep_rank_);
  if (!mine.empty()) {
    return mine;
  }
  return "file '" + cfg_.files[static_cast<std::size_t>(file)].id +
         "' failed on its parallel writer " + std::to_string(first) + ": " + text;
}

void OutputFiles::inject_failure(int file, int record) const {
  if (inject_.empty()) {
    return;
  }
  int writer = part_.server;
  if (comm_ != MPI_COMM_NULL) {
    ep::check_mpi(MPI_Comm_rank(comm_, &writer), "MPI_Comm_rank", ep_rank_);
  }
  const FileDef& fd = cfg_.files[static_cast<std::size_t>(file)];
  if (inject_ == fd.id + ":" + std::to_string(writer) + ":" + std::to_string(record)) {
    const FileState& st = files_[static_cast<std::size_t>(file)];
    throw ep::Error(ep::ErrorKind::kIo, "xios_lite::OutputFiles::write", ep_rank_,
                    "file '" + (st.nc ? st.nc->path() : fd.name) + "': " + std::strerror(EIO) +
                        " (XIOS_LITE_TEST_WRITE_FAILURE after record " + std::to_string(record) +
                        ")");
  }
}

std::string OutputFiles::lost_report() const {
  std::string text;
  for (std::size_t f = 0; f < files_.size(); ++f) {
    const FileState& st = files_[f];
    if (st.lost > 0) {
      text += (text.empty() ? "" : "; ") +
              lost_records_line(cfg_.files[f].id, st.lost, st.lost_first, st.lost_last);
    }
  }
  return text;
}

void OutputFiles::write_record(int gvar, const RecordTime& t, std::span<const BlockView> blocks) {
  const VariableSlot slot = table_.at(static_cast<std::size_t>(gvar));
  const FileDef& fd = cfg_.files[static_cast<std::size_t>(slot.file)];
  const OutputVariable& var = fd.variables[static_cast<std::size_t>(slot.pos)];
  FileState& st = files_[static_cast<std::size_t>(slot.file)];
  const bool timed = var.operation != Operation::kOnce;
  if (timed) {
    std::int64_t split = 0;
    if (fd.split_freq.is_set()) {
      // The split period holding lo (the period start), searched from the open one.
      split = std::max<std::int64_t>(st.split, 0);
      const auto lo = static_cast<std::int64_t>(t.lo);
      while (cfg_.calendar.boundary(fd.split_freq, split + 1) <= lo) {
        ++split;
      }
    }
    if (!st.nc || split != st.split) {
      open(slot.file, split, t.record);
    }
    if (t.record != st.time_record) {
      st.nc->write_time(t.record - st.first_record, t.time, t.lo, t.hi);
      st.time_record = t.record;
      st.written_in_record = 0;
    }
  } else {
    if (!st.nc) {
      open(slot.file, 0, 0);
    }
    if (fd.split_freq.is_set()) {
      OnceRecord once{gvar, t, {blocks.begin(), blocks.end()}, {}};
      once.values.reserve(once.views.size());  // the views point into them
      for (BlockView& v : once.views) {
        const std::size_t n = static_cast<std::size_t>(v.nk) * static_cast<std::size_t>(v.nj) *
                              static_cast<std::size_t>(v.ni);
        once.values.emplace_back(v.data, v.data + (v.data != nullptr ? n : 0));
        v.data = once.values.back().data();
      }
      once_.push_back(std::move(once));
    }
  }
  const int local_record = timed ? t.record - st.first_record : 0;
  write_blocks(st, slot.pos, local_record, blocks);
  if (timed && ++st.written_in_record == st.timed_vars && fd.sync_freq.is_set()) {
    // The record is complete: sync once its end passed the next sync boundary.
    const auto hi = static_cast<std::int64_t>(t.hi);
    if (cfg_.calendar.boundary(fd.sync_freq, st.next_sync) <= hi) {
      st.nc->sync();
      while (cfg_.calendar.boundary(fd.sync_freq, st.next_sync) <= hi) {
        ++st.next_sync;
      }
    }
  }
}

void OutputFiles::close_all() {
  // Every file is closed; the first failure is thrown after the last.
  std::exception_ptr failure;
  for (FileState& st : files_) {
    if (st.nc) {
      try {
        finish_file(st);
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace xios_lite::netcdf
