#include "receiver.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <optional>
#include <span>
#include <thread>

#include "ep/backoff.hpp"
#include "ep/typed.hpp"
#include "transport/event.hpp"
#include "transport/event_reader.hpp"
#include "transport/wire_codec.hpp"

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

ReceiverOutcome receive_until_finalised(const ep::InterCommunicator& inter, ProcessContext& context,
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
  // Answers to read requests, each buffer kept until its send completes.
  struct Answer {
    ep::Request request;
    std::vector<std::byte> bytes;
  };
  std::vector<Answer> answers;
  transport::EventReader reader(inter);
  double t_idle = t_start;
  // Idle polls wait by the process's wait policy (ep/backoff.hpp): a server
  // with a core of its own spins and sees the next event at once; on shared
  // cores it parks between polls and leaves the core to the clients.
  ep::Backoff idle;

  // Events that need the definitions, kept in arrival order until they come.
  struct Waiting {
    int source = 0;
    transport::EventHeader header;
    std::vector<std::byte> payload;
  };
  std::vector<Waiting> waiting;
  const auto ranks_of = [&](int c) {
    const RecordAssembly* a = context.assembly();
    return a != nullptr ? a->ranks_of(c) : std::to_string(c);
  };

  const auto note = [&](const std::string& text) {
    if (std::find(out.notes.begin(), out.notes.end(), text) == out.notes.end()) {
      out.notes.push_back(text);
    }
    if (problem.empty()) {
      problem = text;
    }
  };

  // One event of client `source`.
  const std::function<void(int, const transport::EventHeader&, const std::byte*)> handle =
      [&](int source, const transport::EventHeader& h, const std::byte* payload) {
        const auto from = static_cast<std::size_t>(source);
        const std::string text(reinterpret_cast<const char*>(payload), h.payload_bytes());
        RecordAssembly* assembly = context.assembly();
        const bool needs_definitions = h.kind() == transport::EventKind::kData ||
                                       h.kind() == transport::EventKind::kMissing ||
                                       h.kind() == transport::EventKind::kDefinition ||
                                       h.kind() == transport::EventKind::kReadRequest;
        if (needs_definitions && assembly == nullptr) {
          waiting.push_back(
              {source, h, std::vector<std::byte>(payload, payload + h.payload_bytes())});
          return;
        }
        switch (h.kind()) {
          case transport::EventKind::kData:
          case transport::EventKind::kMissing:
            // Placed even after a write error: the error is its file's alone
            // (the writer drops that file's records, counting them), and
            // every other file's records are written whole.
            if (!assembly->place(source, inter.rank(), h, payload)) {
              out.failure = "client " + std::to_string(source) + " sent data for variable " +
                            std::to_string(h.var) + " outside this server's rows or variables";
            }
            break;
          case transport::EventKind::kDefinition: {
            // The client's i32 entries, put_raw's form (server_sink.cpp).
            transport::WireReader in(std::span(payload, h.payload_bytes()),
                                     "xios_lite::server::receive", inter.rank());
            std::vector<int> layout(in.remaining() / sizeof(int));
            in.get_raw(std::span<int>(layout));
            if (!in.done() || !assembly->define(source, layout)) {
              out.failure = "client " + std::to_string(source) + " sent a malformed definition";
            }
            break;
          }
          case transport::EventKind::kContextDefinition: {
            const std::string error = context.define(std::span(payload, h.payload_bytes()));
            if (!error.empty()) {
              out.failure = error;
              break;
            }
            // The events kept aside, in the order they came.
            std::vector<Waiting> kept = std::move(waiting);
            waiting.clear();
            for (const Waiting& w : kept) {
              if (out.failure.empty()) {
                handle(w.source, w.header, w.payload.data());
              }
            }
            break;
          }
          case transport::EventKind::kReadRequest: {
            Answer a{ep::Request{}, context.inputs().answer(h)};
            a.request = inter.isend(a.bytes.data(), static_cast<int>(a.bytes.size()), MPI_BYTE,
                                    source, transport::kReadTag);
            answers.push_back(std::move(a));
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
      };

  while (running > 0 && out.failure.empty()) {
    if (written_error.empty() && context.writer() != nullptr) {
      written_error = context.writer()->error();
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
    std::erase_if(answers, [](Answer& a) { return a.request.is_null() || ep::test(a.request); });
    const bool arrived = reader.poll();
    const double now = MPI_Wtime();
    if (now - last_check > 0.01 || !arrived) {
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
          note("client " + ranks_of(static_cast<int>(c)) + " is gone: nothing came from it for " +
               seconds(now - last_heard[c]) + ", " + seconds(now - trouble_since[c]) +
               " of them after the others went on or finished (timeout " + seconds(timeout_s) +
               ", its last step " + std::to_string(static_cast<long long>(last_step[c])) + ")");
        }
      }
    }
    if (!arrived) {
      idle.pause();
      continue;
    }
    const double t0 = MPI_Wtime();
    out.stats.idle_s += t0 - t_idle;
    idle.reset();
    const int source = reader.take();
    const auto from = static_cast<std::size_t>(source);
    out.stats.bytes_received += static_cast<double>(reader.size());
    last_heard[from] = t0;
    trouble_since[from] = kUnset;
    latest_any = t0;
    transport::EventHeader h;
    const std::byte* payload = nullptr;
    while (out.failure.empty() && reader.next(h, payload)) {
      handle(source, h, payload);
    }
    if (const std::optional<std::size_t> at = reader.corrupt_at(); at && out.failure.empty()) {
      out.failure = "client " + std::to_string(source) + " sent a corrupt event at byte " +
                    std::to_string(*at) + " (" + reader.corrupt_why() + ")";
    }
    t_idle = MPI_Wtime();
    out.stats.busy_s += t_idle - t0;
  }
  if (!waiting.empty() && out.definition_error.empty()) {
    note(std::to_string(waiting.size()) +
         " event(s) of the clients waited for client 0's definitions, which never came");
  }
  settle(error_sends, std::min(timeout_s, 2.0));
  std::vector<ep::Request> answer_sends;
  answer_sends.reserve(answers.size());
  for (Answer& a : answers) answer_sends.push_back(std::move(a.request));
  settle(answer_sends, std::min(timeout_s, 2.0));
  for (std::size_t i = 0; i < answers.size(); ++i) {
    if (!answer_sends[i].is_null() && !ep::test(answer_sends[i])) {
      // NOLINTNEXTLINE(cppcoreguidelines-owning-memory): MPI may still read it
      (void)new std::vector<std::byte>(std::move(answers[i].bytes));
    }
  }
  return out;
}

}  // namespace xios_lite::server
