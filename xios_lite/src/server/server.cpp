// The server process: its receiving endpoints, the writer thread and the
// end of the run. Each receiving endpoint (one thread each) takes event
// buffers from any client (receiver.hpp); the process reassembles records
// over all of them (record_assembly.hpp) and one writer thread makes every
// NetCDF call (writer_thread.hpp), so writing overlaps receiving. At the end
// every endpoint acknowledges each client's finalise with its statistics and
// the process's error, if any.
#include "xios_lite/server.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <thread>

#include "context_service.hpp"
#include "ep/comm_management.hpp"
#include "ep/error.hpp"
#include "ep/tag_encoding.hpp"
#include "ep/typed.hpp"
#include "process_context.hpp"
#include "receiver.hpp"
#include "server_process.hpp"
#include "transport/config_check.hpp"
#include "transport/event.hpp"
#include "transport/wire_codec.hpp"
#include "writer_thread.hpp"
#include "xios_lite/config.hpp"

namespace xios_lite {
namespace {

constexpr int kIntercommTag = 7407;  // as in client.cpp: the leaders' handshake

double peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux reports KiB
}

// Receiving endpoints per process: ServerOptions, then XIOS_LITE_SERVER_THREADS,
// then 1; agreed over the server processes so that a bad value anywhere
// fails everywhere instead of leaving the others in create_endpoints.
int receiving_endpoints(const char* call, MPI_Comm servers, const ServerOptions& options) {
  int wanted = 1;
  if (options.threads) {
    wanted = *options.threads;
  } else if (const char* env = std::getenv("XIOS_LITE_SERVER_THREADS")) {
    char* end = nullptr;
    const long value = std::strtol(env, &end, 10);
    wanted = (end == env || *end != '\0' || value < 0 || value > ep::kMaxEndpointsPerProcess)
                 ? -1
                 : static_cast<int>(value);
  }
  int lowest = 0;
  int highest = 0;
  ep::check_mpi(MPI_Allreduce(&wanted, &lowest, 1, MPI_INT, MPI_MIN, servers), "MPI_Allreduce", -1);
  ep::check_mpi(MPI_Allreduce(&wanted, &highest, 1, MPI_INT, MPI_MAX, servers), "MPI_Allreduce",
                -1);
  if (lowest < 1 || highest > ep::kMaxEndpointsPerProcess) {
    throw ep::Error(ep::ErrorKind::kArgument, call, -1,
                    "server threads " + std::to_string(lowest < 1 ? lowest : highest) +
                        " out of range [1, " + std::to_string(ep::kMaxEndpointsPerProcess) +
                        "] (ServerOptions::threads or XIOS_LITE_SERVER_THREADS; -1: not a number)");
  }
  return wanted;
}

// The clients' leader starts the connection with a message to the servers'
// leader on the peer communicator (ep::create_intercomm); its arrival is
// probed, not received, so that create_intercomm takes it as usual. The
// first server process decides for the others (a bounded broadcast over the
// context's server processes), so that all of them enter the connection or
// none.
void await_clients(const server::ContextService& service, double timeout_s) {
  int index = 0;
  ep::check_mpi(MPI_Comm_rank(service.servers, &index), "MPI_Comm_rank", -1);
  const double t0 = MPI_Wtime();
  int found = 0;
  if (index == 0) {
    for (;;) {
      ep::check_mpi(
          MPI_Iprobe(service.client_leader, service.tag, service.peer, &found, MPI_STATUS_IGNORE),
          "MPI_Iprobe", -1);
      if (found != 0 || MPI_Wtime() - t0 > timeout_s) break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  MPI_Request request = MPI_REQUEST_NULL;
  ep::check_mpi(MPI_Ibcast(&found, 1, MPI_INT, 0, service.servers, &request), "MPI_Ibcast", -1);
  int done = 0;
  while (done == 0 && MPI_Wtime() - t0 < timeout_s + 5) {
    ep::check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test", -1);
    if (done == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (done == 0 || found == 0) {
    char text[32];
    std::snprintf(text, sizeof text, "%g s", timeout_s);
    throw ep::Error(ep::ErrorKind::kRequest, service.call, -1,
                    done == 0 ? std::string("the first server process did not say whether the "
                                            "clients connect")
                              : "the clients never connected: nothing from the context's first "
                                "client process (world rank " +
                                    std::to_string(service.client_leader) + ") within " + text +
                                    " of the opening (no Client constructed?)");
  }
}

// What one receiving endpoint did, kept until the process reports.
struct EndpointRun {
  server::ReceiverOutcome received;
  std::string error;  // an exception of its own
};

// What the process decides once every endpoint has stopped receiving.
struct ProcessEnd {
  server::WriterStats writer;
  std::size_t peak_record_bytes = 0;
  std::string error;                              // sent to every client with the acknowledgements
  ep::ErrorKind kind = ep::ErrorKind::kArgument;  // of `error`: kIo when the writer failed first
  std::vector<int> gone;                          // clients that left or are gone: not acknowledged
  bool silent_clients = false;  // some endpoint stopped waiting for a client that may be alive
};

// Everything that went wrong, once each, most telling first.
std::string process_error(const std::vector<EndpointRun>& runs, const std::string& writer_error,
                          const std::string& incomplete) {
  for (const EndpointRun& r : runs) {
    if (!r.received.definition_error.empty()) {
      return "the clients' definition failed: " + r.received.definition_error;
    }
  }
  std::vector<std::string> parts;
  const auto add = [&parts](const std::string& part) {
    if (!part.empty() && std::find(parts.begin(), parts.end(), part) == parts.end()) {
      parts.push_back(part);
    }
  };
  add(writer_error);
  for (const EndpointRun& r : runs) {
    add(r.error);
    add(r.received.failure);
    for (const std::string& note : r.received.notes) {
      add(note);
    }
  }
  add(incomplete);
  std::string text;
  for (const std::string& part : parts) {
    text += (text.empty() ? "" : "; ") + part;
  }
  return text;
}

// Acknowledges the clients that finalised (the others are gone, or left):
// the report, the clients the server stopped waiting for, the error.
void send_acknowledgements(const ep::InterCommunicator& inter, const std::vector<int>& finalised,
                           const ServerReport& r, const ProcessEnd& end, double timeout_s) {
  transport::FinaliseAck ack;
  ack.report = r;
  ack.failed = end.error.empty() ? 0 : 1;
  transport::WireWriter w;
  w.put(ack);
  w.put(end.gone);
  w.put(end.error);
  std::vector<std::byte> ack_buf = w.take();  // not const: moved below, storage kept
  std::vector<ep::Request> acks;
  acks.reserve(finalised.size());
  for (int c : finalised) {
    acks.push_back(ep::isend(inter, std::span<const std::byte>(ack_buf), c, transport::kAckTag));
  }
  // A client that gave up waiting never receives its acknowledgement: bounded.
  const double t0 = MPI_Wtime();
  while (!ep::test_all(acks) && MPI_Wtime() - t0 < timeout_s) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  if (!ep::test_all(acks)) {
    // NOLINTNEXTLINE(cppcoreguidelines-owning-memory): MPI may still read it
    (void)new std::vector<std::byte>(std::move(ack_buf));
  }
}

}  // namespace

ServerReport run_server(const World& world, const std::string& config_path,
                        const ServerOptions& options) {
  if (world.open_contexts) {
    // The clients open their contexts and wait in open_context for an
    // answer that only serve_contexts gives.
    throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::run_server", -1,
                    "the clients called initialize(): serve their contexts with serve_contexts");
  }
  server::ContextService service;
  service.call = "xios_lite::run_server";
  service.servers = world.local;
  service.peer = world.world;
  service.client_leader = world.client_leader;
  service.tag = kIntercommTag;
  service.options = options;
  return server::serve_context(parse_config(config_path, world.context), service);
}

namespace server {

ServerReport serve_context(Config cfg, const ContextService& service) {
  const char* call = service.call;
  const ServerOptions& options = service.options;
  const double timeout_s = options.finalise_timeout_s.value_or(cfg.finalise_timeout_s);
  if (service.await_clients) {
    await_clients(service, timeout_s);
  }
  const int threads = receiving_endpoints(call, service.servers, options);
  std::vector<ep::Communicator> eps = ep::create_endpoints(service.servers, threads);

  server::ServerProcess process;
  ep::check_mpi(MPI_Comm_rank(service.servers, &process.index), "MPI_Comm_rank", eps[0].rank());
  ep::check_mpi(MPI_Comm_size(service.servers, &process.processes), "MPI_Comm_size", eps[0].rank());
  process.first_endpoint = eps[0].rank();
  process.endpoints = threads;
  process.all_endpoints = eps[0].size();

  MPI_Comm shared_comm = MPI_COMM_NULL;
  ep::check_mpi(MPI_Comm_dup(service.servers, &shared_comm), "MPI_Comm_dup",
                process.first_endpoint);
  std::atomic<std::size_t> in_flight{0};
  // The definitions as completed by the model, the assembly and the writer:
  // made when client 0's definitions arrive.
  server::ProcessContext context(cfg, process, shared_comm, in_flight);

  // Every endpoint receives until none of its clients runs any more; the
  // last one to stop hands the incomplete records to the writer (written
  // with _FillValue where data is missing), ends it (files closed), and
  // every endpoint acknowledges its finalised clients with the process's
  // verdict.
  std::vector<EndpointRun> runs(static_cast<std::size_t>(threads));
  ProcessEnd end;
  std::barrier stopped(threads, [&]() noexcept {
    server::RecordAssembly* assembly = context.assembly();
    if (assembly != nullptr) {
      (void)assembly->flush_incomplete();
      try {
        end.writer = context.writer()->finish();
      } catch (const std::exception& e) {
        end.error = e.what();
      }
      end.peak_record_bytes = assembly->peak_bytes();
    }
    for (const EndpointRun& r : runs) {
      end.silent_clients = end.silent_clients || !r.received.gone.empty();
      for (const std::vector<int>* list : {&r.received.left, &r.received.gone}) {
        for (int c : *list) {
          if (std::find(end.gone.begin(), end.gone.end(), c) == end.gone.end()) {
            end.gone.push_back(c);
          }
        }
      }
    }
    if (end.error.empty()) {
      const std::string written = assembly != nullptr ? context.writer()->error() : "";
      end.error = process_error(runs, written,
                                assembly != nullptr ? context.writer()->incomplete_report() : "");
      if (!written.empty() && end.error.rfind(written, 0) == 0) {
        end.kind = ep::ErrorKind::kIo;  // the files could not be written
      }
    }
  });

  const auto serve = [&](int t) {
    EndpointRun& run = runs[static_cast<std::size_t>(t)];
    ep::Communicator& me = eps[static_cast<std::size_t>(t)];
    std::optional<ep::InterCommunicator> inter;
    try {
      inter.emplace(ep::create_intercomm(me, 0, service.peer, service.client_leader, service.tag));
      run.error = transport::check_same_definitions(*inter, cfg, true);
      if (run.error.empty()) {
        run.received = server::receive_until_finalised(*inter, context, timeout_s);
      }
    } catch (const std::exception& e) {
      run.error = e.what();
    }
    stopped.arrive_and_wait();
    try {
      if (inter) {
        ServerReport stats = run.received.stats;
        stats.server = me.rank();
        if (t == 0) {  // the process's writer reports through its first endpoint
          stats.write_s = end.writer.write_s;
          stats.bytes_written = end.writer.bytes_written;
          stats.peak_record_bytes = static_cast<double>(end.peak_record_bytes);
          stats.peak_rss_bytes = peak_rss_bytes();
        }
        send_acknowledgements(*inter, run.received.finalised, stats, end, timeout_s);
        // A client this server stopped waiting for may still send to it: the
        // intercommunicator then stays allocated (a freed one's id, reused
        // by a new communicator, would receive those messages).
        if (!end.silent_clients) {
          inter->free();
        }
      }
      me.free();
    } catch (const std::exception& e) {
      run.error = e.what();
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t) {
    helpers.emplace_back(serve, t);
  }
  serve(0);
  for (std::thread& h : helpers) {
    h.join();
  }
  ep::check_mpi(MPI_Comm_free(&shared_comm), "MPI_Comm_free", process.first_endpoint);

  // The process's report: its endpoints' receiving time and bytes summed,
  // the writer's figures once.
  ServerReport report;
  report.server = process.first_endpoint;
  for (const EndpointRun& r : runs) {
    report.busy_s += r.received.stats.busy_s;
    report.idle_s += r.received.stats.idle_s;
    report.bytes_received += r.received.stats.bytes_received;
  }
  report.write_s = end.writer.write_s;
  report.bytes_written = end.writer.bytes_written;
  report.peak_record_bytes = static_cast<double>(end.peak_record_bytes);
  report.peak_rss_bytes = peak_rss_bytes();
  for (const EndpointRun& r : runs) {
    if (!r.error.empty() && end.error.empty()) {
      throw ep::Error(ep::ErrorKind::kRequest, call, process.first_endpoint, r.error);
    }
  }
  if (!end.error.empty()) {
    throw ep::Error(end.kind, call, process.first_endpoint, end.error);
  }
  return report;
}

}  // namespace server
}  // namespace xios_lite
