// The server process: World set-up and the receiving loop. The receiving
// thread (this process's one endpoint) takes event buffers from any client,
// reassembles records and hands complete ones to the writer thread; it also
// carries the error channel (a write error is sent to every client at once)
// and the finalise acknowledgements with the statistics.
#include "xios_lite/server.hpp"

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>

#include "ep/comm_management.hpp"
#include "ep/error.hpp"
#include "netcdf/output_files.hpp"
#include "record_buffer.hpp"
#include "transport/bands.hpp"
#include "transport/event.hpp"
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

}  // namespace

Role role_of_last_ranks(MPI_Comm world, int n_servers) {
  int rank = 0;
  int size = 0;
  ep::check_mpi(MPI_Comm_rank(world, &rank), "MPI_Comm_rank", -1);
  ep::check_mpi(MPI_Comm_size(world, &size), "MPI_Comm_size", -1);
  if (n_servers < 0 || n_servers >= size) {
    throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::role_of_last_ranks", -1,
                    std::to_string(n_servers) + " servers out of range [0, " +
                        std::to_string(size - 1) + "] for " + std::to_string(size) +
                        " processes (at least one client)");
  }
  return rank >= size - n_servers ? Role::kServer : Role::kClient;
}

World split_world(MPI_Comm world, Role role) {
  int rank = 0;
  int size = 0;
  ep::check_mpi(MPI_Comm_rank(world, &rank), "MPI_Comm_rank", -1);
  ep::check_mpi(MPI_Comm_size(world, &size), "MPI_Comm_size", -1);
  const int mine = role == Role::kServer ? 1 : 0;
  std::vector<int> roles(static_cast<std::size_t>(size));
  ep::check_mpi(MPI_Allgather(&mine, 1, MPI_INT, roles.data(), 1, MPI_INT, world), "MPI_Allgather",
                -1);
  World w;
  w.role = role;
  w.world = world;
  for (int r = 0; r < size; ++r) {
    if (roles[static_cast<std::size_t>(r)] == 1) {
      if (w.server_leader < 0) {
        w.server_leader = r;
      }
      ++w.server_processes;
    } else {
      if (w.server_processes > 0) {
        throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::split_world", -1,
                        "world rank " + std::to_string(r) +
                            " is a client after a server: servers must be the last ranks");
      }
      ++w.client_processes;
    }
  }
  if (w.client_processes == 0) {
    throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::split_world", -1, "no client process");
  }
  ep::check_mpi(MPI_Comm_split(world, mine, rank, &w.local), "MPI_Comm_split", -1);
  return w;
}

void free_world(World& world) {
  if (world.local != MPI_COMM_NULL) {
    ep::check_mpi(MPI_Comm_free(&world.local), "MPI_Comm_free", -1);
  }
}

ServerReport run_server(const World& world, const std::string& config_path,
                        const ServerOptions& options) {
  constexpr const char* kCall = "xios_lite::run_server";
  const Config cfg = parse_config(config_path);
  const double timeout_s = options.finalise_timeout_s.value_or(cfg.finalise_timeout_s);
  std::vector<ep::Communicator> eps = ep::create_endpoints(world.local, 1);
  ep::Communicator& me = eps[0];
  ep::InterCommunicator inter =
      ep::create_intercomm(me, 0, world.world, world.client_leader, kIntercommTag);
  const int server = me.rank();
  const int servers = me.size();
  const int clients = inter.remote_size();

  MPI_Comm shared_comm = MPI_COMM_NULL;
  ep::check_mpi(MPI_Comm_dup(world.local, &shared_comm), "MPI_Comm_dup", server);
  std::atomic<std::size_t> in_flight{0};
  std::size_t peak = 0;
  server::WriterThread writer(cfg, server, servers, shared_comm, in_flight);
  const auto table = netcdf::variable_table(cfg);

  ServerReport report;
  report.server = server;
  std::map<std::pair<int, int>, std::unique_ptr<server::RecordBuffer>> records;  // (gvar, record)
  std::vector<bool> finished(static_cast<std::size_t>(clients), false);
  int finished_count = 0;
  std::string definition_error;
  std::string sent_error;
  std::vector<ep::Request> error_sends;
  std::vector<std::byte> buf;
  double first_finalise = -1;
  double t_idle = MPI_Wtime();
  auto sleep = std::chrono::microseconds(1);
  std::string failure;

  while (finished_count < clients) {
    const std::string werr = writer.error();
    if (!werr.empty() && sent_error.empty()) {
      // The error channel: every client hears of it at its next call.
      sent_error = werr;
      for (int c = 0; c < clients; ++c) {
        error_sends.push_back(inter.isend(sent_error.data(), static_cast<int>(sent_error.size()),
                                          MPI_CHAR, c, transport::kErrorTag));
      }
    }
    std::optional<ep::Message> msg = inter.improbe(ep::kAnySource, transport::kEventsTag);
    if (!msg) {
      if (first_finalise >= 0 && MPI_Wtime() - first_finalise > timeout_s) {
        std::string which;
        for (int c = 0; c < clients; ++c) {
          if (!finished[static_cast<std::size_t>(c)]) {
            which += (which.empty() ? "" : ", ") + std::to_string(c);
          }
        }
        failure = "timed out after " + std::to_string(timeout_s) + " s waiting for clients [" +
                  which + "] to finalise (" + std::to_string(clients - finished_count) + " of " +
                  std::to_string(clients) + ")";
        break;
      }
      std::this_thread::sleep_for(sleep);
      sleep = std::min(sleep * 2, std::chrono::microseconds(50));
      continue;
    }
    const double t0 = MPI_Wtime();
    report.idle_s += t0 - t_idle;
    sleep = std::chrono::microseconds(1);
    const int source = msg->status().source;
    buf.resize(msg->status().bytes);
    ep::mrecv(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, *msg);
    report.bytes_received += static_cast<double>(buf.size());
    std::size_t off = 0;
    while (off + sizeof(transport::EventHeader) <= buf.size()) {
      const transport::EventHeader h = transport::read_header(buf, off);
      if (!h.valid()) {
        failure = "client " + std::to_string(source) + " sent a corrupt event at byte " +
                  std::to_string(off);
        break;
      }
      const std::byte* payload = buf.data() + off + sizeof h;
      if (h.kind() == transport::EventKind::kData) {
        off += h.wire_bytes();
        if (!sent_error.empty() || h.var >= table.size()) {
          continue;  // after a write error, data is received and dropped (clients never block)
        }
        auto& slot = records[{h.var, static_cast<int>(h.record)}];
        if (!slot) {
          const auto& v = table[h.var];
          const OutputVariable& ov = cfg.files[static_cast<std::size_t>(v.file)]
                                         .variables[static_cast<std::size_t>(v.pos)];
          const FieldDef& f = cfg.fields[static_cast<std::size_t>(ov.field)];
          const DomainDef& d = cfg.domains[static_cast<std::size_t>(
              cfg.grids[static_cast<std::size_t>(f.grid)].domain)];
          slot = std::make_unique<server::RecordBuffer>();
          slot->gvar = h.var;
          slot->time = {static_cast<int>(h.record), h.time, h.bound_lo, h.bound_hi};
          slot->nk = h.nk;
          slot->rows = transport::band_of(d.nj_glo, server, servers);
          slot->ni = d.ni_glo;
          slot->data.assign(static_cast<std::size_t>(h.nk) * slot->rows.nj * slot->ni,
                            f.default_value);
          peak = std::max(
              peak, in_flight.fetch_add(slot->bytes(), std::memory_order_relaxed) + slot->bytes());
        }
        slot->place(h, payload);
        if (slot->complete()) {
          std::unique_ptr<server::RecordBuffer> done = std::move(slot);
          records.erase({h.var, static_cast<int>(h.record)});
          writer.push(std::move(done));
        }
      } else {
        off += sizeof h + h.record;  // control events carry a text of `record` bytes
        if (h.kind() == transport::EventKind::kDefinition && definition_error.empty()) {
          definition_error = std::string(reinterpret_cast<const char*>(payload), h.record);
        } else if (h.kind() == transport::EventKind::kFinalise &&
                   !finished[static_cast<std::size_t>(source)]) {
          finished[static_cast<std::size_t>(source)] = true;
          ++finished_count;
          if (first_finalise < 0) {
            first_finalise = MPI_Wtime();
          }
        }
      }
    }
    if (!failure.empty()) {
      break;
    }
    t_idle = MPI_Wtime();
    report.busy_s += t_idle - t0;
  }

  // Records still incomplete cannot be written (a client finalised without
  // sending them); they are dropped and reported.
  if (!records.empty() && failure.empty() && definition_error.empty()) {
    failure = std::to_string(records.size()) +
              " records were incomplete at finalise (not every client sent them)";
  }
  for (auto& [key, r] : records) {
    in_flight.fetch_sub(r->bytes(), std::memory_order_relaxed);
  }
  records.clear();
  const server::WriterStats ws = writer.finish();
  report.write_s = ws.write_s;
  report.bytes_written = ws.bytes_written;
  report.peak_record_bytes = static_cast<double>(peak);
  report.peak_rss_bytes = peak_rss_bytes();
  std::string error = writer.error();
  if (!definition_error.empty()) {
    error = "the clients' definition failed: " + definition_error;
  } else if (error.empty()) {
    error = failure;
  }
  ep::wait_all(error_sends);
  if (finished_count < clients) {
    // Some clients never finalised: no acknowledgement can be exchanged with them.
    ep::check_mpi(MPI_Comm_free(&shared_comm), "MPI_Comm_free", server);
    throw ep::Error(ep::ErrorKind::kRequest, kCall, server, error);
  }

  transport::FinaliseAck ack;
  ack.busy_s = report.busy_s;
  ack.idle_s = report.idle_s;
  ack.write_s = report.write_s;
  ack.bytes_received = report.bytes_received;
  ack.bytes_written = report.bytes_written;
  ack.peak_record_bytes = report.peak_record_bytes;
  ack.peak_rss_bytes = report.peak_rss_bytes;
  ack.server = server;
  ack.failed = error.empty() ? 0 : 1;
  std::vector<std::byte> ack_buf(sizeof ack + error.size());
  std::memcpy(ack_buf.data(), &ack, sizeof ack);
  std::memcpy(ack_buf.data() + sizeof ack, error.data(), error.size());
  std::vector<ep::Request> acks;
  for (int c = 0; c < clients; ++c) {
    acks.push_back(inter.isend(ack_buf.data(), static_cast<int>(ack_buf.size()), MPI_BYTE, c,
                               transport::kAckTag));
  }
  ep::wait_all(acks);
  inter.free();
  me.free();
  ep::check_mpi(MPI_Comm_free(&shared_comm), "MPI_Comm_free", server);
  if (!error.empty()) {
    throw ep::Error(ep::ErrorKind::kArgument, kCall, server, error);
  }
  return report;
}

}  // namespace xios_lite
