// The public Client: argument checks, the funnel of the funneled and
// synchronous modes, and the definition/finalise protocols. The temporal
// work is in ClientEngine, the transport in the sinks.
#include "xios_lite/client.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>

#include "client_engine.hpp"
#include "ep/comm_management.hpp"
#include "ep/error.hpp"
#include "ep/typed.hpp"
#include "funnel.hpp"
#include "record_sink.hpp"
#include "transport/bands.hpp"
#include "transport/event.hpp"

namespace xios_lite {

const char* to_string(Mode mode) noexcept {
  switch (mode) {
    case Mode::kEndpoints:
      return "ep";
    case Mode::kFunneled:
      return "funneled";
    case Mode::kSynchronous:
      return "synchronous";
  }
  return "ep";
}

namespace detail {

namespace {
constexpr int kIntercommTag = 7407;  // MPI tag of the leaders' handshake on the world communicator
constexpr int kFunnelTag = 1;        // on the client's private dup: the funnel's address

// An error raised inside the library, re-raised under the public call's
// name: its own "call: ep rank r: " prefix is dropped so the message names
// the public call once.
struct Failure {
  ep::ErrorKind kind = ep::ErrorKind::kArgument;
  std::string detail;
};
Failure failure_of(const std::exception& e) {
  const auto* err = dynamic_cast<const ep::Error*>(&e);
  std::string text = e.what();
  if (err == nullptr) {
    return {ep::ErrorKind::kArgument, text};
  }
  std::string prefix = err->call();
  if (err->ep_rank() >= 0) {
    prefix.append(": ep rank ").append(std::to_string(err->ep_rank()));
  }
  prefix.append(": ");
  if (err->call().rfind("xios_lite::Client", 0) == 0 && text.rfind(prefix, 0) == 0) {
    text.erase(0, prefix.size());
  }
  return {err->kind(), text};
}
}  // namespace

class ClientImpl {
 public:
  ClientImpl(const ep::Communicator& comm, const World& world, const std::string& path,
             const ClientOptions& options)
      : cfg_(parse_config(path)), world_(world), options_(options), t_start_(MPI_Wtime()) {
    timeout_s_ = options.finalise_timeout_s.value_or(cfg_.finalise_timeout_s);
    const bool sync = options.mode == Mode::kSynchronous;
    if (world.role != Role::kClient) {
      fail("xios_lite::Client", comm.rank(), "called on a server process");
    }
    if (sync && world.server_processes > 0) {
      fail("xios_lite::Client", comm.rank(),
           "synchronous mode needs a world without servers (it has " +
               std::to_string(world.server_processes) + " server processes)");
    }
    if (!sync && world.server_processes == 0) {
      fail("xios_lite::Client", comm.rank(),
           std::string(to_string(options.mode)) + " mode needs at least one server process");
    }
    comm_ = ep::dup(comm);
    funneled_ = options.mode != Mode::kEndpoints;
    master_ = !funneled_ || comm_.local_thread() == 0;
    if (funneled_) {
      share_funnel();
    }
    if (options.mode == Mode::kEndpoints) {
      inter_ = ep::create_intercomm(comm_, 0, world.world, world.server_leader, kIntercommTag);
    } else if (options.mode == Mode::kFunneled) {
      ep::Communicator masters = ep::split(comm_, master_ ? 0 : MPI_UNDEFINED, comm_.rank());
      if (master_) {
        inter_ = ep::create_intercomm(masters, 0, world.world, world.server_leader, kIntercommTag);
        masters.free();
      }
    }
    blocks_.resize(cfg_.domains.size());
    last_sent_.assign(cfg_.fields.size(), -1);
  }

  void set_domain_block(const std::string& id, const Block& b) {
    constexpr const char* kCall = "xios_lite::Client::set_domain_block";
    if (closed_) {
      fail(kCall, comm_.rank(), "the definition is already closed");
    }
    const auto it = std::find_if(cfg_.domains.begin(), cfg_.domains.end(),
                                 [&](const DomainDef& d) { return d.id == id; });
    if (it == cfg_.domains.end()) {
      fail(kCall, comm_.rank(), "unknown domain '" + id + "'");
    }
    if (b.ibegin < 0 || b.jbegin < 0 || b.ni < 0 || b.nj < 0 || b.ibegin + b.ni > it->ni_glo ||
        b.jbegin + b.nj > it->nj_glo) {
      fail(kCall, comm_.rank(),
           "block (ibegin " + std::to_string(b.ibegin) + ", ni " + std::to_string(b.ni) +
               ", jbegin " + std::to_string(b.jbegin) + ", nj " + std::to_string(b.nj) +
               ") outside domain '" + id + "' of " + std::to_string(it->ni_glo) + " x " +
               std::to_string(it->nj_glo));
    }
    blocks_[static_cast<std::size_t>(it - cfg_.domains.begin())] = b;
  }

  void close_definition();
  void update_calendar(std::int64_t step);
  void send_field(const std::string& id, std::span<const double> data);
  Report finalise();

 private:
  [[noreturn]] static void fail(const char* call, int rank, const std::string& what) {
    throw ep::Error(ep::ErrorKind::kArgument, call, rank, what);
  }

  // The master thread makes the funnel and sends its address to the other
  // threads of the process (intra-process messages on the private dup).
  void share_funnel() {
    const int base = comm_.rank() - comm_.local_thread();
    if (comm_.local_thread() == 0) {
      funnel_ = std::make_shared<client::Funnel>(comm_.local_size());
      for (int t = 1; t < comm_.local_size(); ++t) {
        auto* copy = new std::shared_ptr<client::Funnel>(funnel_);
        const auto address = reinterpret_cast<std::uintptr_t>(copy);
        comm_.send(&address, 1, MPI_UINT64_T, base + t, kFunnelTag);
      }
    } else {
      std::uintptr_t address = 0;
      comm_.recv(&address, 1, MPI_UINT64_T, base, kFunnelTag);
      std::unique_ptr<std::shared_ptr<client::Funnel>> copy(
          reinterpret_cast<std::shared_ptr<client::Funnel>*>(address));
      funnel_ = *copy;
    }
  }

  // Runs `work` once per process on the master (or here, in ep mode) after
  // every thread of the process passed its own check; every thread then
  // throws the same error if anything failed.
  template <class Work>
  void meet(const char* call, const std::string& my_error, Work&& work) {
    if (!funneled_) {
      if (!my_error.empty()) {
        fail(call, comm_.rank(), my_error);
      }
      try {
        work();
      } catch (const std::exception& e) {
        const Failure f = failure_of(e);
        throw ep::Error(f.kind, call, comm_.rank(), f.detail);
      }
      return;
    }
    client::Funnel& f = *funnel_;
    const auto me = static_cast<std::size_t>(comm_.local_thread());
    f.errors[me] = my_error;
    f.sync.arrive_and_wait();
    if (master_) {
      f.error.clear();
      for (std::size_t t = 0; t < f.errors.size() && f.error.empty(); ++t) {
        if (!f.errors[t].empty()) {
          f.error = "thread " + std::to_string(t) + " of this process: " + f.errors[t];
        }
      }
      if (f.error.empty()) {
        try {
          work();
        } catch (const std::exception& e) {
          f.error = failure_of(e).detail;
        }
      }
    }
    f.sync.arrive_and_wait();
    if (!my_error.empty()) {
      fail(call, comm_.rank(), my_error);
    }
    if (!f.error.empty()) {
      fail(call, comm_.rank(), f.error);
    }
  }

  [[nodiscard]] std::string check_blocks(const std::vector<int>& all, int stride) const;

  Config cfg_;
  World world_;
  ClientOptions options_;
  double timeout_s_ = 60;
  ep::Communicator comm_;
  bool funneled_ = false;
  bool master_ = true;
  std::shared_ptr<client::Funnel> funnel_;
  ep::InterCommunicator inter_;
  std::vector<Block> blocks_;
  std::vector<std::int64_t> last_sent_;
  bool closed_ = false;
  bool finalised_ = false;
  std::int64_t step_ = 0;
  std::unique_ptr<client::RecordSink> sink_;
  std::unique_ptr<client::ClientEngine> engine_;
  double t_start_;
  double in_calls_s_ = 0;
};

// Blocks of every endpoint: [process, thread, then ibegin ni jbegin nj per domain].
std::string ClientImpl::check_blocks(const std::vector<int>& all, int stride) const {
  const int n = static_cast<int>(all.size()) / stride;
  std::vector<bool> used(cfg_.domains.size(), false);
  for (const auto& file : cfg_.files) {
    for (const auto& v : file.variables) {
      used[static_cast<std::size_t>(
          cfg_.grids[static_cast<std::size_t>(cfg_.fields[static_cast<std::size_t>(v.field)].grid)]
              .domain)] = true;
    }
  }
  auto block = [&](int r, std::size_t d) {
    const int* p = all.data() + static_cast<std::ptrdiff_t>(r) * stride + 2 +
                   static_cast<std::ptrdiff_t>(4 * d);
    return Block{p[0], p[1], p[2], p[3]};
  };
  auto text = [](int r, const Block& b) {
    return "client " + std::to_string(r) + " [i " + std::to_string(b.ibegin) + "+" +
           std::to_string(b.ni) + ", j " + std::to_string(b.jbegin) + "+" + std::to_string(b.nj) +
           "]";
  };
  for (std::size_t d = 0; d < cfg_.domains.size(); ++d) {
    if (!used[d]) {
      continue;
    }
    const DomainDef& dom = cfg_.domains[d];
    if (world_.server_processes > dom.nj_glo) {
      return "domain '" + dom.id + "' has " + std::to_string(dom.nj_glo) +
             " rows, fewer than the " + std::to_string(world_.server_processes) +
             " servers that split it";
    }
    long long area = 0;
    for (int r = 0; r < n; ++r) {
      const Block a = block(r, d);
      area += static_cast<long long>(a.ni) * a.nj;
      for (int q = 0; q < r; ++q) {
        const Block b = block(q, d);
        const bool overlap = a.ni > 0 && a.nj > 0 && b.ni > 0 && b.nj > 0 &&
                             a.ibegin < b.ibegin + b.ni && b.ibegin < a.ibegin + a.ni &&
                             a.jbegin < b.jbegin + b.nj && b.jbegin < a.jbegin + a.nj;
        if (overlap) {
          return "domain '" + dom.id + "': blocks overlap: " + text(q, b) + " and " + text(r, a);
        }
      }
    }
    const long long total = static_cast<long long>(dom.ni_glo) * dom.nj_glo;
    if (area != total) {
      return "domain '" + dom.id + "': the blocks cover " + std::to_string(area) + " of its " +
             std::to_string(total) + " points (every point needs exactly one client)";
    }
  }
  return "";
}

void ClientImpl::close_definition() {
  constexpr const char* kCall = "xios_lite::Client::close_definition";
  if (closed_) {
    fail(kCall, comm_.rank(), "the definition is already closed");
  }
  const int stride = 2 + 4 * static_cast<int>(cfg_.domains.size());
  std::vector<int> mine{comm_.process_rank(), comm_.local_thread()};
  for (const Block& b : blocks_) {
    mine.insert(mine.end(), {b.ibegin, b.ni, b.jbegin, b.nj});
  }
  std::vector<int> all(static_cast<std::size_t>(stride) * static_cast<std::size_t>(comm_.size()));
  ep::allgather(comm_, std::span<const int>(mine), std::span<int>(all));
  std::string error = check_blocks(all, stride);

  // This engine's blocks: its own, or (master) those of its process's threads.
  std::vector<std::vector<Block>> engine_blocks(cfg_.domains.size());
  int max_threads = 1;
  for (int r = 0; r < comm_.size(); ++r) {
    const int* p = all.data() + static_cast<std::ptrdiff_t>(r) * stride;
    max_threads = std::max(max_threads, p[1] + 1);
    const bool mine_to_handle = funneled_ ? p[0] == comm_.process_rank() : r == comm_.rank();
    if (mine_to_handle) {
      for (std::size_t d = 0; d < cfg_.domains.size(); ++d) {
        engine_blocks[d].push_back({p[2 + 4 * d], p[3 + 4 * d], p[4 + 4 * d], p[5 + 4 * d]});
      }
    }
  }

  // Buffers: factor x one step of events, clamped; never below the largest event.
  std::size_t step_bytes = 0;
  std::size_t largest = 0;
  for (const auto& file : cfg_.files) {
    for (const auto& v : file.variables) {
      const FieldDef& f = cfg_.fields[static_cast<std::size_t>(v.field)];
      const int d = cfg_.grids[static_cast<std::size_t>(f.grid)].domain;
      for (const Block& b : engine_blocks[static_cast<std::size_t>(d)]) {
        const std::size_t bytes =
            sizeof(transport::EventHeader) +
            static_cast<std::size_t>(cfg_.levels(f.grid)) * b.ni * b.nj * sizeof(double);
        step_bytes += bytes;
        largest = std::max(largest, bytes);
      }
    }
  }
  const std::size_t control = sizeof(transport::EventHeader) + 4096;
  largest = std::max(largest, control);
  std::size_t capacity =
      static_cast<std::size_t>(cfg_.buffers.factor * static_cast<double>(step_bytes + control));
  capacity = std::clamp(capacity, cfg_.buffers.min_bytes, cfg_.buffers.max_bytes);
  if (error.empty() && largest > capacity) {
    error = "buffer_max_bytes " + std::to_string(cfg_.buffers.max_bytes) +
            " is below the largest event of this client (" + std::to_string(largest) + " bytes)";
  }
  // A buffer-size error is local to a client: agree on it so all throw.
  const int bad = ep::allreduce(comm_, error.empty() ? 0 : 1, MPI_MAX);
  if (bad != 0 && error.empty()) {
    error = "another client failed to close its definition";
  }

  if (master_) {
    if (options_.mode == Mode::kSynchronous) {
      if (error.empty()) {
        sink_ = client::make_file_sink(cfg_, world_.local, comm_.rank(), max_threads);
      }
    } else {
      sink_ = client::make_server_sink(cfg_, inter_, capacity, timeout_s_,
                                       options_.progress_thread.value_or(cfg_.progress_thread));
    }
  }
  if (!error.empty()) {
    // The servers wait for these clients: tell them, and finish cleanly.
    if (sink_) {
      try {
        (void)sink_->finish(error);
      } catch (const ep::Error&) {
        // the definition error below is the one to report
      }
    }
    sink_.reset();
    finalised_ = true;
    comm_.free();
    fail(kCall, comm_.rank(), error);
  }
  if (master_) {
    engine_ = std::make_unique<client::ClientEngine>(cfg_, std::move(engine_blocks), *sink_);
  }
  closed_ = true;
}

void ClientImpl::update_calendar(std::int64_t step) {
  constexpr const char* kCall = "xios_lite::Client::update_calendar";
  const double t0 = MPI_Wtime();
  std::string error;
  if (!closed_ || finalised_) {
    error = finalised_ ? "called after finalise" : "called before close_definition";
  } else if (step <= step_) {
    error = "step " + std::to_string(step) + " goes backwards (the previous step was " +
            std::to_string(step_) + ")";
  }
  meet(kCall, error, [&] {
    engine_->end_step();
    sink_->progress();
  });
  step_ = step;
  in_calls_s_ += MPI_Wtime() - t0;
}

void ClientImpl::send_field(const std::string& id, std::span<const double> data) {
  constexpr const char* kCall = "xios_lite::Client::send_field";
  const double t0 = MPI_Wtime();
  std::string error;
  const int field = cfg_.find_field(id);
  if (!closed_ || finalised_) {
    error =
        finalised_ ? "called after finalise" : "send before close_definition (field '" + id + "')";
  } else if (field < 0) {
    error = "field '" + id + "' was never defined";
  } else if (step_ == 0) {
    error = "field '" + id + "' sent before the first update_calendar";
  } else if (last_sent_[static_cast<std::size_t>(field)] == step_) {
    error = "field '" + id + "' sent twice in step " + std::to_string(step_);
  } else {
    const FieldDef& f = cfg_.fields[static_cast<std::size_t>(field)];
    const Block& b =
        blocks_[static_cast<std::size_t>(cfg_.grids[static_cast<std::size_t>(f.grid)].domain)];
    const std::size_t expected = static_cast<std::size_t>(cfg_.levels(f.grid)) * b.ni * b.nj;
    if (data.size() != expected) {
      error = "field '" + id + "': " + std::to_string(data.size()) + " values, expected " +
              std::to_string(expected) + " (levels " + std::to_string(cfg_.levels(f.grid)) +
              " x nj " + std::to_string(b.nj) + " x ni " + std::to_string(b.ni) + ")";
    }
  }
  if (error.empty()) {
    last_sent_[static_cast<std::size_t>(field)] = step_;
  }
  if (funneled_) {
    funnel_->parts[static_cast<std::size_t>(comm_.local_thread())] = data;
    funnel_->ids[static_cast<std::size_t>(comm_.local_thread())] = id;
  }
  meet(kCall, error, [&] {
    if (funneled_) {
      for (const auto& other : funnel_->ids) {
        if (other != id) {
          throw ep::Error(ep::ErrorKind::kArgument, kCall, comm_.rank(),
                          "threads of one process sent different fields together ('" + id +
                              "' and '" + other + "')");
        }
      }
      engine_->send(field, step_, funnel_->parts);
    } else {
      const std::span<const double> part = data;
      engine_->send(field, step_, std::span<const std::span<const double>>(&part, 1));
    }
    sink_->progress();
  });
  in_calls_s_ += MPI_Wtime() - t0;
}

Report ClientImpl::finalise() {
  constexpr const char* kCall = "xios_lite::Client::finalise";
  if (finalised_) {
    fail(kCall, comm_.rank(), "called twice (or after a failed close_definition)");
  }
  if (!closed_) {
    fail(kCall, comm_.rank(), "called before close_definition");
  }
  finalised_ = true;
  const double t_call = MPI_Wtime();
  std::string error;
  std::vector<ServerReport> servers;
  client::ClientStats stats;
  if (master_) {
    try {
      engine_->end_step();  // records finished in the last step
    } catch (const std::exception& e) {
      error = failure_of(e).detail;
    }
    try {
      servers = sink_->finish("");
    } catch (const std::exception& e) {
      if (error.empty()) {
        error = failure_of(e).detail;
      }
    }
    stats = sink_->stats();
  }
  if (funneled_) {
    client::Funnel& f = *funnel_;
    // The other threads may still be reading the previous call's outcome in
    // `f.error` (meet() publishes it at its last barrier): the master writes
    // the slots only once every thread has arrived here.
    f.sync.arrive_and_wait();
    if (master_) {
      f.error = error;
      f.servers = servers;
    }
    f.sync.arrive_and_wait();
    error = f.error;
    servers = f.servers;
    f.sync.arrive_and_wait();
  }
  in_calls_s_ += MPI_Wtime() - t_call;
  const double total = MPI_Wtime() - t_start_;
  const std::vector<double> mine{static_cast<double>(comm_.rank()),
                                 total,
                                 in_calls_s_,
                                 stats.blocked_s,
                                 stats.bytes_sent,
                                 stats.write_s};
  std::vector<double> all(mine.size() * static_cast<std::size_t>(comm_.size()));
  ep::allgather(comm_, std::span<const double>(mine), std::span<double>(all));
  Report report;
  report.mode = to_string(options_.mode);
  report.servers = servers;
  for (std::size_t r = 0; r < static_cast<std::size_t>(comm_.size()); ++r) {
    const double* p = all.data() + r * mine.size();
    report.clients.push_back({static_cast<int>(p[0]), p[1], p[2], p[3], p[4], p[5]});
  }
  const int rank = comm_.rank();
  comm_.free();
  if (rank == 0) {
    if (options_.print_report) {
      report.print(stdout);
    }
    const std::string json = options_.report_json.value_or(cfg_.report_json);
    if (!json.empty() && error.empty()) {
      report.write_json(json);
    }
  }
  if (!error.empty()) {
    fail(kCall, rank, error);
  }
  return report;
}

}  // namespace detail

Client::Client(const ep::Communicator& comm, const World& world, const std::string& config_path,
               const ClientOptions& options)
    : impl_(std::make_unique<detail::ClientImpl>(comm, world, config_path, options)) {}
Client::~Client() = default;
void Client::set_domain_block(const std::string& domain_id, const Block& block) {
  impl_->set_domain_block(domain_id, block);
}
void Client::close_definition() { impl_->close_definition(); }
void Client::update_calendar(std::int64_t step) { impl_->update_calendar(step); }
void Client::send_field(const std::string& id, std::span<const double> data) {
  impl_->send_field(id, data);
}
Report Client::finalise() { return impl_->finalise(); }

}  // namespace xios_lite
