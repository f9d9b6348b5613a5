// Records to the servers: each block is cut along the servers' row bands
// and every piece becomes one data event in that server's channel.
#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

#include "ep/error.hpp"
#include "record_sink.hpp"
#include "server_channel.hpp"
#include "transport/bands.hpp"
#include "transport/event.hpp"

namespace xios_lite::client {
namespace {

class ServerSink final : public RecordSink {
 public:
  ServerSink(const Config& cfg, ep::InterCommunicator inter, std::size_t capacity, double timeout_s,
             bool progress_thread)
      : cfg_(cfg),
        inter_(std::move(inter)),
        table_(netcdf::variable_table(cfg)),
        timeout_s_(timeout_s) {
    const int servers = inter_.remote_size();
    std::shared_ptr<ProgressThread> progress =
        progress_thread ? ProgressThread::acquire() : nullptr;
    channels_.reserve(static_cast<std::size_t>(servers));
    for (int s = 0; s < servers; ++s) {
      channels_.push_back(std::make_unique<ServerChannel>(
          inter_, s, capacity, timeout_s, [this] { drain_error_messages(); }, progress));
    }
  }

  void put(int gvar, const netcdf::RecordTime& t, std::span<const LocalBlock> blocks,
           const double* values) override {
    const VariableSlot slot = table_[static_cast<std::size_t>(gvar)];
    const OutputVariable& v = cfg_.files[static_cast<std::size_t>(slot.file)]
                                  .variables[static_cast<std::size_t>(slot.pos)];
    const int domain =
        cfg_.grids[static_cast<std::size_t>(cfg_.fields[static_cast<std::size_t>(v.field)].grid)]
            .domain;
    const int nj_glo = cfg_.domains[static_cast<std::size_t>(domain)].nj_glo;
    const int servers = static_cast<int>(channels_.size());
    for (const LocalBlock& lb : blocks) {
      const Block& b = lb.block;
      if (b.ni == 0 || b.nj == 0) {
        continue;
      }
      for (int s = 0; s < servers; ++s) {
        const netcdf::RowRange band = transport::band_of(nj_glo, s, servers);
        const int j0 = std::max(b.jbegin, band.jbegin);
        const int j1 = std::min(b.jbegin + b.nj, band.jbegin + band.nj);
        if (j0 >= j1) {
          continue;
        }
        transport::EventHeader h;
        h.magic_kind = transport::make_magic_kind(transport::EventKind::kData);
        h.var = static_cast<std::uint16_t>(gvar);
        h.record = static_cast<std::uint32_t>(t.record);
        h.nk = lb.nk;
        h.ibegin = b.ibegin;
        h.ni = b.ni;
        h.jbegin = j0;
        h.nj = j1 - j0;
        h.time = t.time;
        h.bound_lo = t.lo;
        h.bound_hi = t.hi;
        std::byte* out =
            channels_[static_cast<std::size_t>(s)]->reserve(h.wire_bytes(), stats_.blocked_s);
        std::memcpy(out, &h, sizeof h);
        out += sizeof h;
        const std::size_t row_bytes = static_cast<std::size_t>(b.ni) * sizeof(double);
        for (int k = 0; k < lb.nk; ++k) {
          for (int j = j0; j < j1; ++j) {
            const double* src =
                values + lb.offset +
                (static_cast<std::size_t>(k) * b.nj + static_cast<std::size_t>(j - b.jbegin)) *
                    static_cast<std::size_t>(b.ni);
            std::memcpy(out, src, row_bytes);
            out += row_bytes;
          }
        }
      }
    }
  }

  void step_done() override {
    for (auto& c : channels_) {
      c->flush(stats_.blocked_s);
    }
  }

  void progress() override {
    poll_errors();
    for (auto& c : channels_) {
      c->progress();
    }
  }

  std::vector<ServerReport> finish(const std::string& failure) override {
    // Tell every server we are done (with the definition failure, if any),
    // then wait for each acknowledgement, bounded by the timeout.
    for (std::size_t s = 0; s < channels_.size(); ++s) {
      if (!failure.empty()) {
        append_control(*channels_[s], transport::EventKind::kDefinition, failure);
      }
      append_control(*channels_[s], transport::EventKind::kFinalise, "");
    }
    reporting_ = false;  // errors are collected from the acknowledgements now
    for (auto& c : channels_) {
      c->drain(stats_.blocked_s);
    }
    std::vector<ServerReport> reports(channels_.size());
    std::vector<bool> acked(channels_.size(), false);
    std::string errors;
    const double t0 = MPI_Wtime();
    std::size_t missing = channels_.size();
    auto sleep = std::chrono::microseconds(1);
    while (missing > 0) {
      drain_error_messages();
      if (std::optional<ep::Message> m = inter_.improbe(ep::kAnySource, transport::kAckTag)) {
        const int s = m->status().source;
        std::vector<std::byte> buf(m->status().bytes);
        ep::mrecv(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, *m);
        transport::FinaliseAck ack;
        std::memcpy(&ack, buf.data(), sizeof ack);
        ServerReport& r = reports[static_cast<std::size_t>(s)];
        r = transport::report_of(ack);
        r.server = s;  // the server's rank as this client numbers it
        if (ack.failed != 0 && errors.empty()) {
          errors = "server " + std::to_string(s) + " reported: " +
                   std::string(reinterpret_cast<const char*>(buf.data() + sizeof ack),
                               buf.size() - sizeof ack);
        }
        acked[static_cast<std::size_t>(s)] = true;
        --missing;
        continue;
      }
      if (MPI_Wtime() - t0 > timeout_s_) {
        std::string which;
        for (std::size_t s = 0; s < acked.size(); ++s) {
          if (!acked[s]) {
            which += (which.empty() ? "" : ", ") + std::to_string(s);
          }
        }
        throw ep::Error(ep::ErrorKind::kRequest, "xios_lite::Client::finalise", inter_.rank(),
                        "timed out after " + std::to_string(timeout_s_) +
                            " s waiting for servers [" + which + "] to acknowledge (" +
                            std::to_string(missing) + " of " + std::to_string(acked.size()) +
                            " servers)");
      }
      std::this_thread::sleep_for(sleep);
      sleep = std::min(sleep * 2, std::chrono::microseconds(1000));
    }
    drain_error_messages();
    inter_.free();
    if (!errors.empty() && failure.empty()) {
      throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::Client::finalise", rank_for_errors(),
                      errors);
    }
    return reports;
  }

  [[nodiscard]] ClientStats stats() const override {
    ClientStats s = stats_;
    for (const auto& c : channels_) {
      s.bytes_sent += c->bytes_sent();
    }
    return s;
  }

 private:
  [[nodiscard]] int rank_for_errors() const { return inter_.rank(); }

  void append_control(ServerChannel& c, transport::EventKind kind, const std::string& text) {
    transport::EventHeader h;
    h.magic_kind = transport::make_magic_kind(kind);
    h.record = static_cast<std::uint32_t>(text.size());
    std::byte* out = c.reserve(sizeof h + text.size(), stats_.blocked_s);
    std::memcpy(out, &h, sizeof h);
    std::memcpy(out + sizeof h, text.data(), text.size());
  }

  // Receives pending error texts; the first one is kept.
  void drain_error_messages() {
    while (std::optional<ep::Message> m = inter_.improbe(ep::kAnySource, transport::kErrorTag)) {
      const int s = m->status().source;
      std::string text(m->status().bytes, '\0');
      ep::mrecv(text.data(), static_cast<int>(text.size()), MPI_CHAR, *m);
      if (server_error_.empty()) {
        server_error_ = "server " + std::to_string(s) + " reported: " + text;
      }
    }
  }

  // The error channel: a server error becomes an exception at the next call.
  void poll_errors() {
    drain_error_messages();
    if (reporting_ && !server_error_.empty()) {
      throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::Client", rank_for_errors(),
                      server_error_);
    }
  }

  using VariableSlot = netcdf::VariableSlot;
  const Config& cfg_;
  ep::InterCommunicator inter_;
  std::vector<VariableSlot> table_;
  double timeout_s_;
  std::vector<std::unique_ptr<ServerChannel>> channels_;
  ClientStats stats_;
  std::string server_error_;
  bool reporting_ = true;
};

}  // namespace

std::unique_ptr<RecordSink> make_server_sink(const Config& cfg, ep::InterCommunicator inter,
                                             std::size_t capacity, double timeout_s,
                                             bool progress_thread) {
  return std::make_unique<ServerSink>(cfg, std::move(inter), capacity, timeout_s, progress_thread);
}

}  // namespace xios_lite::client
