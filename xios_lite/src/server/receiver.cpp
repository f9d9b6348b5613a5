#include "receiver.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <optional>
#include <span>
#include <thread>

#include "ep/typed.hpp"
#include "transport/event.hpp"

namespace xios_lite::server {
namespace {

enum class ClientState { kRunning, kFinalised, kLeft, kGone };

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g s", s);
  return text;
}

// Waits (bounded) for sends to clients; those to a client that is gone may
// never complete, and are dropped.
void settle(std::vector<ep::Request>& sends, double limit_s) {
  const double t0 = MPI_Wtime();
  for (;;) {
    bool all = true;
    for (ep::Request& r : sends) {
      all = (r.is_null() || ep::test(r)) && all;
    }
    if (all || MPI_Wtime() - t0 > limit_s) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace

ReceiverOutcome receive_until_finalised(const ep::InterCommunicator& inter,
                                        RecordAssembly& assembly, const WriterThread& writer,
                                        double timeout_s) {
  const int clients = inter.remote_size();
  const auto n = static_cast<std::size_t>(clients);
  ReceiverOutcome out;
  std::vector<ClientState> state(n, ClientState::kRunning);
  const double t_start = MPI_Wtime();
  constexpr double kUnset = -1;
  std::vector<double> last_heard(n, t_start);
  std::vector<double> trouble_since(n, kUnset);  // when the run was seen going on without it
  std::vector<double> last_step(n, 0);
  double latest_any = t_start;  // the last time any client was heard from
  double last_check = t_start;
  int running = clients;
  std::string problem;  // the first one, sent to every client
  std::string written_error;
  std::vector<ep::Request> error_sends;
  std::vector<std::byte> buf;
  double t_idle = t_start;
  auto sleep = std::chrono::microseconds(1);

  const auto note = [&](const std::string& text) {
    if (std::find(out.notes.begin(), out.notes.end(), text) == out.notes.end()) {
      out.notes.push_back(text);
    }
    if (problem.empty()) {
      problem = text;
    }
  };

  while (running > 0 && out.failure.empty()) {
    if (written_error.empty()) {
      written_error = writer.error();
      if (!written_error.empty() && problem.empty()) {
        problem = written_error;
      }
    }
    if (!problem.empty() && error_sends.empty()) {
      // The error channel: every client hears of it at its next call.
      for (int c = 0; c < clients; ++c) {
        error_sends.push_back(
            ep::isend(inter, std::span<const char>(problem), c, transport::kErrorTag));
      }
    }
    std::optional<ep::Message> msg = inter.improbe(ep::kAnySource, transport::kEventsTag);
    const double now = MPI_Wtime();
    if (now - last_check > 0.01 || !msg) {
      // The silence rule (see the header), checked every 10 ms at most.
      last_check = now;
      const bool some_done = running < clients;
      for (std::size_t c = 0; c < n; ++c) {
        if (state[c] != ClientState::kRunning) {
          continue;
        }
        if (trouble_since[c] == kUnset && (some_done || latest_any > last_heard[c])) {
          trouble_since[c] = now;
        }
        if (trouble_since[c] != kUnset && now - trouble_since[c] > timeout_s) {
          state[c] = ClientState::kGone;
          --running;
          out.gone.push_back(static_cast<int>(c));
          note("client " + assembly.ranks_of(static_cast<int>(c)) +
               " is gone: nothing came from it for " + seconds(now - last_heard[c]) + ", " +
               seconds(now - trouble_since[c]) +
               " of them after the others went on or finished (timeout " + seconds(timeout_s) +
               ", its last step " + std::to_string(static_cast<long long>(last_step[c])) + ")");
        }
      }
    }
    if (!msg) {
      std::this_thread::sleep_for(sleep);
      sleep = std::min(sleep * 2, std::chrono::microseconds(50));
      continue;
    }
    const double t0 = MPI_Wtime();
    out.stats.idle_s += t0 - t_idle;
    sleep = std::chrono::microseconds(1);
    const int source = msg->status().source;
    const auto from = static_cast<std::size_t>(source);
    buf.resize(msg->status().bytes);
    ep::mrecv(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, *msg);
    out.stats.bytes_received += static_cast<double>(buf.size());
    last_heard[from] = t0;
    trouble_since[from] = kUnset;
    latest_any = t0;
    std::size_t off = 0;
    while (off + sizeof(transport::EventHeader) <= buf.size()) {
      const transport::EventHeader h = transport::read_header(buf, off);
      const std::size_t end = off + (h.valid() ? h.wire_bytes() : 0);
      if (!h.valid() || end > buf.size()) {
        out.failure = "client " + std::to_string(source) + " sent a corrupt event at byte " +
                      std::to_string(off);
        break;
      }
      const std::byte* payload = buf.data() + off + sizeof h;
      const std::string text(reinterpret_cast<const char*>(payload), h.payload_bytes());
      off = end;
      switch (h.kind()) {
        case transport::EventKind::kData:
        case transport::EventKind::kMissing:
          // After a write error, data is received and dropped: clients never block.
          if (written_error.empty() && !assembly.place(source, inter.rank(), h, payload)) {
            out.failure = "client " + std::to_string(source) + " sent data for variable " +
                          std::to_string(h.var) + " outside this server's rows or variables";
          }
          break;
        case transport::EventKind::kDefinition: {
          std::vector<int> layout(h.payload_bytes() / sizeof(int));
          std::memcpy(layout.data(), payload, layout.size() * sizeof(int));
          if (!assembly.define(source, layout)) {
            out.failure = "client " + std::to_string(source) + " sent a malformed definition";
          }
          break;
        }
        case transport::EventKind::kDefinitionFailed:
          if (out.definition_error.empty()) {
            out.definition_error = text;
          }
          break;
        case transport::EventKind::kClientError:
          note(text);
          break;
        case transport::EventKind::kHeartbeat:
          last_step[from] = h.time;
          break;
        case transport::EventKind::kFinalise:
        case transport::EventKind::kAbandon:
          if (state[from] == ClientState::kRunning) {
            --running;
            if (h.kind() == transport::EventKind::kFinalise) {
              state[from] = ClientState::kFinalised;
              out.finalised.push_back(source);
            } else {
              state[from] = ClientState::kLeft;
              out.left.push_back(source);
              note(text);
            }
          }
          break;
        default:
          out.failure = "client " + std::to_string(source) + " sent an event of unknown kind " +
                        std::to_string(static_cast<int>(h.kind()));
          break;
      }
      if (!out.failure.empty()) {
        break;
      }
    }
    t_idle = MPI_Wtime();
    out.stats.busy_s += t_idle - t0;
  }
  settle(error_sends, std::min(timeout_s, 2.0));
  return out;
}

}  // namespace xios_lite::server
