// The synchronous baseline: no server, the client processes write one
// shared file through parallel NetCDF-4. Writes are collective, so every
// process passes the same number of blocks per write (padding with empty ones).
//
// A write error is its file's alone, as on the servers: OutputFiles stops
// that file on every process together and counts its lost records, the
// other files go on; the error is raised once, at the next update_calendar
// (as a server's would be), and finalise gives it again with the records
// lost.
#include <mpi.h>

#include <algorithm>

#include "record_sink.hpp"

namespace xios_lite::client {
namespace {

class FileSink final : public RecordSink {
 public:
  FileSink(const Config& cfg, MPI_Comm processes, int ep_rank, int blocks_per_call)
      : cfg_(cfg),
        files_(cfg, {full_rows(cfg), true, 0, 1}, processes, ep_rank),
        blocks_per_call_(blocks_per_call) {}

  void put(int gvar, const records::RecordTime& t, std::span<const LocalBlock> blocks,
           const double* values) override {
    const double t0 = MPI_Wtime();
    std::vector<netcdf::BlockView> views(static_cast<std::size_t>(blocks_per_call_));
    std::vector<netcdf::OutputBlock> cuts;
    cuts.reserve(blocks.size());
    const netcdf::VariableSlot slot = table_[static_cast<std::size_t>(gvar)];
    const OutputVariable& v = cfg_.files[static_cast<std::size_t>(slot.file)]
                                  .variables[static_cast<std::size_t>(slot.pos)];
    const bool as_is = netcdf::writes_field_grid(cfg_, v);
    std::size_t n = 0;
    // Blocks still in the model's halo'd array: their rows into one
    // scratch array (the NetCDF writes want the block alone).
    std::vector<LocalBlock> alone;
    if (std::any_of(blocks.begin(), blocks.end(),
                    [](const LocalBlock& lb) { return lb.row != 0 || lb.level != 0; })) {
      rows_.clear();
      for (const LocalBlock& lb : blocks) {
        LocalBlock one = lb;
        one.offset = rows_.size();
        one.row = one.level = 0;
        const auto ni = static_cast<std::size_t>(lb.block.ni);
        const std::size_t row = lb.row > 0 ? lb.row : ni;
        const std::size_t level =
            lb.level > 0 ? lb.level : ni * static_cast<std::size_t>(lb.block.nj);
        for (std::size_t k = 0; k < static_cast<std::size_t>(lb.nk); ++k) {
          for (std::size_t j = 0; j < static_cast<std::size_t>(lb.block.nj); ++j) {
            const double* from = values + lb.offset + k * level + j * row;
            rows_.insert(rows_.end(), from, from + ni);
          }
        }
        alone.push_back(one);
      }
      blocks = alone;
      values = rows_.data();
    }
    for (const LocalBlock& lb : blocks) {
      if (lb.block.ni == 0 || lb.block.nj == 0) {
        continue;
      }
      stats_.bytes_sent += static_cast<double>(lb.nk) * lb.block.nj * lb.block.ni * sizeof(double);
      if (as_is) {
        views[n++] = {{lb.block.jbegin, lb.block.nj, lb.block.ibegin, lb.block.ni, lb.nk},
                      values + lb.offset};
        continue;
      }
      // XIOS's zoom and extract: the block's part of the window and levels.
      cuts.push_back(netcdf::cut_to_output(v.shape, lb.block.jbegin, lb.block.nj, lb.block.ibegin,
                                           lb.block.ni, lb.nk, values + lb.offset));
      const netcdf::OutputBlock& c = cuts.back();
      if (c.nj > 0) {
        views[n++] = {c, c.values.data()};
      }
    }
    try {
      files_.write(gvar, t, views);
    } catch (const std::exception& e) {
      // Kept, not thrown: the engine goes on handing the step's other records.
      error_ = error_.empty() ? e.what() : error_;
    }
    stats_.write_s += MPI_Wtime() - t0;
  }

  // The writes are collective: the blocks still take part, with _FillValue.
  void put_missing(int gvar, const records::RecordTime& t,
                   std::span<const LocalBlock> blocks) override {
    const netcdf::VariableSlot slot = table_[static_cast<std::size_t>(gvar)];
    const OutputVariable& v = cfg_.files[static_cast<std::size_t>(slot.file)]
                                  .variables[static_cast<std::size_t>(slot.pos)];
    std::size_t points = 0;
    for (const LocalBlock& lb : blocks) {
      points = std::max(points, lb.offset + static_cast<std::size_t>(lb.nk) * lb.block.nj *
                                                static_cast<std::size_t>(lb.block.ni));
    }
    const std::vector<double> fill(points, v.default_value);
    put(gvar, t, blocks, fill.data());
  }

  void define(std::span<const int> /*blocks*/) override {}
  void define_context(std::span<const std::byte> /*definitions*/) override {}
  void report_error(const std::string& /*text*/) override {}
  void step_done(std::int64_t /*step*/) override {}
  void progress() override {}
  // The first write error, once.
  std::string take_server_error() override {
    if (error_.empty() || raised_) {
      return "";
    }
    raised_ = true;
    return error_;
  }

  Finish finish(const std::string& /*failure*/) override {
    const double t0 = MPI_Wtime();
    Finish out;
    try {
      files_.close_all();
    } catch (const std::exception& e) {
      error_ = error_.empty() ? e.what() : error_;
    }
    stats_.write_s += MPI_Wtime() - t0;
    out.error = error_;
    if (const std::string lost = files_.lost_report(); !lost.empty()) {
      out.error += (out.error.empty() ? "" : "; ") + lost;
    }
    return out;
  }

  void abandon(const std::string& /*why*/) noexcept override {}

  [[nodiscard]] ClientStats stats() const override { return stats_; }

 private:
  static std::vector<records::RowRange> full_rows(const Config& cfg) {
    std::vector<records::RowRange> rows;
    for (const auto& d : cfg.domains) {
      rows.push_back({0, d.nj_glo});
    }
    return rows;
  }

  const Config& cfg_;
  std::vector<netcdf::VariableSlot> table_ = netcdf::variable_table(cfg_);
  netcdf::OutputFiles files_;
  std::vector<double> rows_;  // put(): blocks taken out of the model's halo'd arrays
  int blocks_per_call_;
  ClientStats stats_;
  std::string error_;  // the first write error
  bool raised_ = false;
};

}  // namespace

std::unique_ptr<RecordSink> make_file_sink(const Config& cfg, MPI_Comm processes, int ep_rank,
                                           int blocks_per_call) {
  return std::make_unique<FileSink>(cfg, processes, ep_rank, blocks_per_call);
}

}  // namespace xios_lite::client
