// Records to the servers: each block is cut along the servers' row bands
// and every piece becomes one data (or missing) event in that server's
// channel. Control events (the definition, a client error, finalise or
// abandon, heartbeats) travel in the same channels, so a server sees each
// client's events in the order they were made.
#include <algorithm>
#include <chrono>
#include <optional>
#include <thread>

#include "ep/error.hpp"
#include "record_sink.hpp"
#include "transport/bands.hpp"
#include "transport/event.hpp"
#include "transport/event_packer.hpp"
#include "transport/server_channel.hpp"
#include "transport/wire_codec.hpp"

namespace xios_lite::client {
namespace {

class ServerSink final : public RecordSink {
 public:
  ServerSink(const Config& cfg, ep::InterCommunicator inter, std::size_t capacity, double timeout_s,
             bool progress_thread)
      : cfg_(cfg),
        inter_(std::move(inter)),
        table_(netcdf::variable_table(cfg)),
        timeout_s_(timeout_s),
        // A server hears from a live client at least this often while the
        // client calls the library (see the receiver's silence rule).
        heartbeat_s_(std::min(1.0, timeout_s / 8)) {
    const int servers = inter_.remote_size();
    std::shared_ptr<transport::ProgressThread> progress =
        progress_thread ? transport::ProgressThread::acquire() : nullptr;
    channels_.reserve(static_cast<std::size_t>(servers));
    for (int s = 0; s < servers; ++s) {
      channels_.push_back(std::make_unique<transport::ServerChannel>(
          inter_, s, capacity, timeout_s, [this] { drain_error_messages(); }, progress));
    }
  }

  void put(int gvar, const records::RecordTime& t, std::span<const LocalBlock> blocks,
           const double* values) override {
    pieces(transport::EventKind::kData, gvar, t, blocks, values);
  }

  void put_missing(int gvar, const records::RecordTime& t,
                   std::span<const LocalBlock> blocks) override {
    pieces(transport::EventKind::kMissing, gvar, t, blocks, nullptr);
  }

  void define(std::span<const int> blocks) override {
    // The i32 entries themselves, put_raw's form (their count: the payload's length).
    for (auto& c : channels_) {
      transport::append_control(*c, transport::EventKind::kDefinition, std::as_bytes(blocks),
                                stats_.blocked_s);
    }
  }

  void define_context(std::span<const std::byte> definitions) override {
    for (auto& c : channels_) {
      transport::append_control(*c, transport::EventKind::kContextDefinition, definitions,
                                stats_.blocked_s);
    }
  }

  void report_error(const std::string& text) override {
    for (auto& c : channels_) {
      transport::append_control(*c, transport::EventKind::kClientError, text, stats_.blocked_s);
    }
  }

  void step_done(std::int64_t step) override {
    const double now = MPI_Wtime();
    for (auto& c : channels_) {
      // A heartbeat rides along with data, or goes alone when the channel was idle.
      if (c->buffered() > 0 || now - c->last_send_time() > heartbeat_s_) {
        transport::append_heartbeat(*c, step, stats_.blocked_s);
      }
      c->flush();
    }
  }

  void records_complete(std::int64_t step) override {
    for (auto& c : channels_) {
      if (c->buffered() > 0) {
        transport::append_heartbeat(*c, step, stats_.blocked_s);
        c->flush();
      }
    }
  }

  // Only the sends: the error channel is read by take_server_error, the
  // one place its text is raised (each update_calendar), and by every wait.
  // send_field, called once per field, then pays no probe for it.
  void progress() override {
    for (auto& c : channels_) {
      c->progress();
    }
  }

  std::string take_server_error() override {
    drain_error_messages();
    if (server_error_.empty() || raised_) {
      return "";
    }
    raised_ = true;
    return server_error_;
  }

  Finish finish(const std::string& failure) override {
    // Tell every server we are done (with the definition failure, if any),
    // then wait for each acknowledgement, bounded by the timeout.
    for (auto& c : channels_) {
      if (!failure.empty()) {
        transport::append_control(*c, transport::EventKind::kDefinitionFailed, failure,
                                  stats_.blocked_s);
      }
      transport::append_control(*c, transport::EventKind::kFinalise, "", stats_.blocked_s);
    }
    for (auto& c : channels_) {
      c->drain(stats_.blocked_s);
    }
    // A server gives up on a silent client `timeout` after that client's
    // last message: waiting longer here lets its verdict, which names the
    // client, arrive instead of a bare timeout.
    const double ack_timeout_s = 1.5 * timeout_s_ + 1.0;
    Finish out;
    out.reports.resize(channels_.size());
    std::vector<bool> acked(channels_.size(), false);
    const double t0 = MPI_Wtime();
    std::size_t missing = channels_.size();
    auto sleep = std::chrono::microseconds(1);
    while (missing > 0) {
      drain_error_messages();
      if (std::optional<ep::Message> m = inter_.improbe(ep::kAnySource, transport::kAckTag)) {
        const int s = m->status().source;
        std::vector<std::byte> buf(m->status().bytes);
        ep::mrecv(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, *m);
        ServerReport& r = out.reports[static_cast<std::size_t>(s)];
        transport::WireReader in(buf, "xios_lite::Client::finalise", inter_rank_);
        try {
          const auto ack = in.get<transport::FinaliseAck>();
          const auto gone = in.get_vector<std::int32_t>();
          const std::string error = in.get_string();
          in.expect_done();
          r = ack.report;
          out.gone.insert(out.gone.end(), gone.begin(), gone.end());
          if (ack.failed != 0 && out.error.empty()) {
            out.error = "server " + std::to_string(s) + " reported: " + error;
          }
        } catch (const common::Error& e) {
          if (out.error.empty()) {
            out.error = "server " + std::to_string(s) + " sent a malformed acknowledgement (" +
                        e.what() + ")";
          }
        }
        r.server = s;  // the server's rank as this client numbers it
        acked[static_cast<std::size_t>(s)] = true;
        --missing;
        continue;
      }
      if (MPI_Wtime() - t0 > ack_timeout_s) {
        std::string which;
        for (std::size_t s = 0; s < acked.size(); ++s) {
          if (!acked[s]) {
            which += (which.empty() ? "" : ", ") + std::to_string(s);
          }
        }
        // The intercommunicator stays allocated (see abandon()).
        throw ep::Error(ep::ErrorKind::kRequest, "xios_lite::Client::finalise", inter_rank_,
                        "timed out after " + seconds(ack_timeout_s) + " waiting for servers [" +
                            which + "] to acknowledge (" + std::to_string(missing) + " of " +
                            std::to_string(acked.size()) + " servers)");
      }
      std::this_thread::sleep_for(sleep);
      sleep = std::min(sleep * 2, std::chrono::microseconds(1000));
    }
    drain_error_messages();
    if (out.error.empty() && !server_error_.empty()) {
      out.error = server_error_;
    }
    // Every server acknowledged: nothing more comes on it (the error
    // channel's messages were sent before the acknowledgements, in order).
    inter_.free();
    return out;
  }

  void abandon(const std::string& why) noexcept override {
    try {
      for (auto& c : channels_) {
        transport::append_control(*c, transport::EventKind::kAbandon, why, stats_.blocked_s);
      }
      for (auto& c : channels_) {
        c->drain(stats_.blocked_s);
      }
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): a server gone as well
    }
    // The intercommunicator stays allocated: the servers may still send to
    // this client (their error channel), and a freed communicator's id,
    // reused by a new one, would receive those messages.
  }

  std::string fetch(int input, std::int64_t record, const Block& b, int nk,
                    std::span<double> out) override {
    const int domain = cfg_.domain_of_field(cfg_.input_variable(input).field);
    const int nj_glo = cfg_.domains[static_cast<std::size_t>(domain)].nj_glo;
    const int servers = static_cast<int>(channels_.size());
    // One request per server band the block crosses, then every answer.
    // The answers carry the request's number (in `time`): an answer to an
    // earlier request that was given up on is dropped, never taken for this one.
    const double number = static_cast<double>(++fetches_);
    std::vector<bool> asked(channels_.size(), false);
    std::size_t waiting = 0;
    for (int s = 0; s < servers && b.ni > 0; ++s) {
      const records::RowRange band = transport::band_of(nj_glo, s, servers);
      const int j0 = std::max(b.jbegin, band.jbegin);
      const int j1 = std::min(b.jbegin + b.nj, band.jbegin + band.nj);
      if (j0 >= j1) {
        continue;
      }
      transport::ServerChannel& c = *channels_[static_cast<std::size_t>(s)];
      transport::append_read_request(c, input, record, {nk, {b.ibegin, b.ni, j0, j1 - j0}}, number,
                                     stats_.blocked_s);
      c.flush();
      asked[static_cast<std::size_t>(s)] = true;
      ++waiting;
    }
    std::string error;
    const double t0 = MPI_Wtime();
    auto sleep = std::chrono::microseconds(1);
    while (waiting > 0) {
      for (auto& c : channels_) {
        c->progress();
      }
      std::optional<ep::Message> m = inter_.improbe(ep::kAnySource, transport::kReadTag);
      if (!m) {
        drain_error_messages();
        if (!server_error_.empty()) {
          return "waiting for the servers' answer: " + server_error_;
        }
        if (MPI_Wtime() - t0 > timeout_s_) {
          std::string which;
          for (std::size_t s = 0; s < asked.size(); ++s) {
            if (asked[s]) which += (which.empty() ? "" : ", ") + std::to_string(s);
          }
          return "no answer from servers [" + which + "] within the timeout (" +
                 seconds(timeout_s_) + ")";
        }
        std::this_thread::sleep_for(sleep);
        sleep = std::min(sleep * 2, std::chrono::microseconds(200));
        continue;
      }
      const auto s = static_cast<std::size_t>(m->status().source);
      std::vector<std::byte> buf(m->status().bytes);
      ep::mrecv(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, *m);
      transport::WireReader in(buf, "xios_lite::Client::recv_field", inter_rank_);
      transport::EventHeader h;
      if (in.remaining() >= sizeof h) {
        h = in.get<transport::EventHeader>();
      }
      if (h.valid() && h.kind() == transport::EventKind::kReadReply && h.time < number) {
        continue;
      }
      if (s >= asked.size() || !asked[s] || !h.valid() ||
          h.kind() != transport::EventKind::kReadReply) {
        return "server " + std::to_string(s) + " sent an answer nobody asked for";
      }
      asked[s] = false;
      --waiting;
      if (h.flags != 0) {
        if (error.empty()) {
          try {
            error = "server " + std::to_string(s) + ": " + in.get_string();
          } catch (const common::Error& e) {
            error = "server " + std::to_string(s) + " sent a malformed answer (" + e.what() + ")";
          }
        }
        continue;
      }
      if (in.remaining() != h.points() * sizeof(double)) {
        return "server " + std::to_string(s) + " sent a malformed answer (" +
               std::to_string(in.remaining()) + " bytes of values for " +
               std::to_string(h.points()) + " points)";
      }
      const auto ni = static_cast<std::size_t>(b.ni);
      for (int k = 0; k < nk; ++k) {
        for (int j = h.jbegin; j < h.jbegin + h.nj; ++j) {
          double* to =
              out.data() +
              (static_cast<std::size_t>(k) * b.nj + static_cast<std::size_t>(j - b.jbegin)) * ni;
          in.get_raw(std::span<double>(to, ni));
        }
      }
    }
    return error;
  }

  // put() packs the values into the channels before it returns, and the
  // servers place every piece by its variable and record, in any order.
  [[nodiscard]] bool takes_records_at_send() const override { return true; }

  [[nodiscard]] ClientStats stats() const override {
    ClientStats s = stats_;
    for (const auto& c : channels_) {
      s.bytes_sent += c->bytes_sent();
    }
    return s;
  }

 private:
  static std::string seconds(double s) {
    char text[32];
    std::snprintf(text, sizeof text, "%g s", s);
    return text;
  }

  // One event per (block, server band) piece of a record: data with its
  // values, or missing without. A server endpoint whose band is empty (a
  // domain with fewer rows than server endpoints, or every endpoint but the
  // first for a variable that needs the whole domain) gets an empty data
  // event for every record from the client holding the domain's first
  // point, so that a server process without rows still takes part in the
  // collective writes of a one_file file.
  void pieces(transport::EventKind kind, int gvar, const records::RecordTime& t,
              std::span<const LocalBlock> blocks, const double* values) {
    const VariableSlot slot = table_[static_cast<std::size_t>(gvar)];
    const OutputVariable& v = cfg_.files[static_cast<std::size_t>(slot.file)]
                                  .variables[static_cast<std::size_t>(slot.pos)];
    const int domain = cfg_.domain_of_field(v.source);
    const int nj_glo = cfg_.domains[static_cast<std::size_t>(domain)].nj_glo;
    const int servers = static_cast<int>(channels_.size());
    // A global or along-j reduction needs the whole domain in one place:
    // all of it goes to server endpoint 0, the others get markers.
    const bool whole = v.shape.needs_whole_domain();
    for (const LocalBlock& lb : blocks) {
      const Block& b = lb.block;
      if (b.ni == 0 || b.nj == 0) {
        continue;
      }
      for (int s = 0; s < servers; ++s) {
        const records::RowRange band =
            whole ? (s == 0 ? records::RowRange{0, nj_glo} : records::RowRange{nj_glo, 0})
                  : transport::band_of(nj_glo, s, servers);
        const bool marker = band.nj == 0 && b.ibegin == 0 && b.jbegin == 0;
        const int j0 = marker ? band.jbegin : std::max(b.jbegin, band.jbegin);
        const int j1 = marker ? band.jbegin : std::min(b.jbegin + b.nj, band.jbegin + band.nj);
        if (j0 >= j1 && !marker) {
          continue;
        }
        const transport::EventKind piece_kind = marker ? transport::EventKind::kData : kind;
        transport::append_piece(
            *channels_[static_cast<std::size_t>(s)], piece_kind, gvar, t,
            {lb.nk, {b.ibegin, marker ? 0 : b.ni, j0, j1 - j0}},
            {values == nullptr ? nullptr : values + lb.offset, b.jbegin, b.nj, lb.row, lb.level},
            stats_.blocked_s);
      }
    }
  }

  // Receives pending error texts; the first one is kept. Never throws (it
  // runs inside the channels' waits).
  void drain_error_messages() noexcept {
    try {
      while (std::optional<ep::Message> m = inter_.improbe(ep::kAnySource, transport::kErrorTag)) {
        const int s = m->status().source;
        std::string text(m->status().bytes, '\0');
        ep::mrecv(text.data(), static_cast<int>(text.size()), MPI_CHAR, *m);
        if (server_error_.empty()) {
          server_error_ = "server " + std::to_string(s) + " reported: " + text;
        }
      }
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): the wait's timeout reports
    }
  }

  using VariableSlot = netcdf::VariableSlot;
  const Config& cfg_;
  ep::InterCommunicator inter_;
  int inter_rank_ = inter_.rank();
  std::vector<VariableSlot> table_;
  double timeout_s_;
  double heartbeat_s_;
  std::vector<std::unique_ptr<transport::ServerChannel>> channels_;
  ClientStats stats_;
  std::string server_error_;
  bool raised_ = false;
  std::int64_t fetches_ = 0;  // read requests made (numbers their answers)
};

}  // namespace

std::unique_ptr<RecordSink> make_server_sink(const Config& cfg, ep::InterCommunicator inter,
                                             std::size_t capacity, double timeout_s,
                                             bool progress_thread) {
  return std::make_unique<ServerSink>(cfg, std::move(inter), capacity, timeout_s, progress_thread);
}

}  // namespace xios_lite::client
