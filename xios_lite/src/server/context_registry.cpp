// serve_contexts: the server processes of a launch whose clients open their
// contexts at run time (xios_lite/contexts.hpp).
//
// XIOS does it so: its server leader listens on the world communicator for
// the client leaders' registration of a context (the context's id and the
// client leader's rank), passes each registration on to the other server
// processes, and every server process then creates the context's
// intercommunicator with the clients and adds the context to the ones its
// event loop serves, until the clients' finalisation messages say they are
// all done. Here the same announcements carry the context's definitions as
// XML text (the model may have edited them), and each context is served by
// its own threads (receiving endpoints and writer: run_server's machinery,
// context_service.hpp), concurrently with the others.
//
// Every server process runs this dispatcher in the thread that called
// serve_contexts. Its rules:
// - The server leader takes the announcements (any client, one tag on
//   World::control) one at a time and relays each to the other server
//   processes on their own communicator, in the order it took them; so
//   every server process handles the same announcements in the same order,
//   and the collective calls made for them (the check of the definitions,
//   the duplicate of the servers' communicator for the context) match.
// - An opening is parsed on every server process; the leader gathers the
//   verdicts, adds its own checks (a name already open, the one_file rule
//   below), tells the others whether the context is served and answers the
//   context's first client process: the error, or nothing (accepted).
// - Each accepted context gets a duplicate of the servers' communicator:
//   its endpoints, its shared files and its other collectives run on it,
//   in its own thread, without ordering against the other contexts'.
// - NetCDF: one lock per process (writer_thread.hpp, netcdf_lock). Two
//   contexts whose writes are collective over several server processes
//   (one_file) could deadlock on it across processes (process 0 holding it
//   in context A's collective write, process 1 in B's), so the leader
//   refuses a second such context while one is served.
// - No wait without an end: with no context served the leader waits at
//   most the timeout for the next announcement, then relays a stop that
//   ends every server process with the reason; the others wait a little
//   longer than the leader for its relays.
#include <algorithm>
#include <atomic>
#include <list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "context_service.hpp"
#include "ep/error.hpp"
#include "transport/context_link.hpp"
#include "xios_lite/config.hpp"
#include "xios_lite/contexts.hpp"

namespace xios_lite {
namespace {

constexpr const char* kCall = "xios_lite::serve_contexts";
// A server process's parse error travels to the leader in a fixed slot
// (an MPI_Igather): longer messages are cut.
constexpr std::size_t kVerdictBytes = 1024;
// How long the dispatcher waits for one announcement before it looks at
// its contexts and clocks again.
constexpr double kSliceS = 0.05;
constexpr int kNapUs = 1000;

std::string seconds(double s) {
  std::string text = std::to_string(s);
  text.erase(text.find_last_not_of('0') + 1);
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text + " s";
}

// A stop: the dispatcher ends, every server process with the same reason.
transport::Announcement stop(std::string why) {
  transport::Announcement a;
  a.kind = transport::LinkKind::kStop;
  a.text = std::move(why);
  return a;
}

// One context being served by this process.
struct Served {
  std::string name;
  std::string call;         // "context '<name>'": the call its errors are under
  bool collective = false;  // one_file files over several server processes
  MPI_Comm servers = MPI_COMM_NULL;
  std::thread thread;
  std::atomic<bool> done{false};
  ServerReport report;
  std::string error;
  ep::ErrorKind kind = ep::ErrorKind::kRequest;
};

class Dispatcher {
 public:
  Dispatcher(const World& world, const ServerOptions& options) : world_(world), options_(options) {
    timeout_s_ = options.finalise_timeout_s.value_or(transport::kDefaultLinkTimeout);
    ep::check_mpi(MPI_Comm_rank(world.local, &index_), "MPI_Comm_rank", -1);
    ep::check_mpi(MPI_Comm_size(world.local, &processes_), "MPI_Comm_size", -1);
    ep::check_mpi(MPI_Comm_rank(world.control, &world_rank_), "MPI_Comm_rank", -1);
    // The relays and verdicts among the server processes, apart from any
    // other traffic of theirs.
    ep::check_mpi(MPI_Comm_dup(world.local, &relay_), "MPI_Comm_dup", -1);
  }
  ~Dispatcher() {
    for (auto& s : served_) {
      if (s->thread.joinable()) s->thread.join();
      if (s->servers != MPI_COMM_NULL) (void)MPI_Comm_free(&s->servers);
    }
    if (relay_ != MPI_COMM_NULL) (void)MPI_Comm_free(&relay_);
  }
  Dispatcher(const Dispatcher&) = delete;
  Dispatcher& operator=(const Dispatcher&) = delete;

  ServerReport run();

 private:
  [[nodiscard]] bool leader() const { return index_ == 0; }
  [[nodiscard]] bool any_active() const {
    return std::any_of(served_.begin(), served_.end(),
                       [](const std::unique_ptr<Served>& s) { return !s->done.load(); });
  }
  std::optional<transport::Announcement> next();
  void open(const transport::Announcement& a);
  [[nodiscard]] std::string leader_checks(const transport::Announcement& a, bool collective) const;
  [[nodiscard]] std::string where() const {
    return "server process " + std::to_string(index_) + " (world rank " +
           std::to_string(world_rank_) + ")";
  }

  const World& world_;
  ServerOptions options_;
  double timeout_s_ = transport::kDefaultLinkTimeout;
  int index_ = 0;
  int processes_ = 1;
  int world_rank_ = 0;
  MPI_Comm relay_ = MPI_COMM_NULL;
  std::list<std::unique_ptr<Served>> served_;
  std::set<std::string> opened_;  // every context accepted so far (the leader's)
  double idle_since_ = 0;
  std::string stop_;  // why the dispatcher stopped early ("" : close_contexts)
};

// The next announcement: the leader's from the clients (relayed at once),
// the others' from the leader; nullopt when none came in this slice. A
// kStop when the wait ran out.
std::optional<transport::Announcement> Dispatcher::next() {
  const double now = MPI_Wtime();
  if (any_active()) {
    idle_since_ = now;
  }
  if (!leader()) {
    const auto bytes =
        transport::receive_within(relay_, 0, transport::kRelayTag, kSliceS, nullptr, kNapUs);
    if (bytes) {
      auto a = transport::unpack_announcement(*bytes);
      if (a) return a;
      return stop("the server leader relayed a malformed message");
    }
    // The leader gives up after the timeout and says so; give it time to.
    if (!any_active() && MPI_Wtime() - idle_since_ > timeout_s_ + 5) {
      return stop("nothing from the server leader for " + seconds(timeout_s_ + 5) +
                  " with no context served (the leader is gone?)");
    }
    return std::nullopt;
  }
  std::optional<transport::Announcement> a;
  int from = -1;
  if (const auto bytes = transport::receive_within(
          world_.control, MPI_ANY_SOURCE, transport::kAnnounceTag, kSliceS, &from, kNapUs)) {
    a = transport::unpack_announcement(*bytes);
    if (!a) {
      a = stop("world rank " + std::to_string(from) +
               " sent a malformed announcement to the server leader");
    }
  } else if (!any_active() && MPI_Wtime() - idle_since_ > timeout_s_) {
    a = stop("no context opened and no close_contexts for " + seconds(timeout_s_) + " " +
             (served_.empty() ? "since the start" : "after the last context ended") + " (timeout " +
             seconds(timeout_s_) + "; did the clients die, or forget close_contexts?)");
  }
  if (a) {
    // Relayed in the order taken: every server process handles the same
    // announcements in the same order.
    const std::vector<char> bytes = transport::pack(*a);
    for (int p = 1; p < processes_; ++p) {
      if (!transport::send_within(bytes, p, transport::kRelayTag, relay_, timeout_s_)) {
        a = stop("server process " + std::to_string(p) +
                 " did not take the leader's relay within " + seconds(timeout_s_));
      }
    }
  }
  return a;
}

std::string Dispatcher::leader_checks(const transport::Announcement& a, bool collective) const {
  if (opened_.count(a.context) != 0) {
    return "a context named '" + a.context + "' was already opened on these servers";
  }
  if (a.client_processes < 1) {
    return "no client process";
  }
  if (collective) {
    for (const auto& s : served_) {
      if (s->collective && !s->done.load()) {
        return "it has one_file files over " + std::to_string(processes_) +
               " server processes, as context '" + s->name +
               "' which is being served: their collective NetCDF writes could deadlock on the "
               "servers' one NetCDF lock per process, so one such context is served at a time "
               "(make one of them multiple_file, or open it after the other finalised)";
      }
    }
  }
  return "";
}

void Dispatcher::open(const transport::Announcement& a) {
  const std::string named = "context '" + a.context + "'";
  // Every server process parses the text (the same on all of them).
  std::optional<Config> cfg;
  std::string error;
  try {
    cfg = parse_config_string(
        a.text, "definitions of " + named + " from world rank " + std::to_string(a.client_leader),
        a.context);
  } catch (const std::exception& e) {
    error = e.what();
  }
  const bool collective = cfg && processes_ > 1 &&
                          std::any_of(cfg->files.begin(), cfg->files.end(), [](const FileDef& f) {
                            return f.type == FileType::kOneFile;
                          });
  // The leader gathers the verdicts and decides for everybody.
  std::vector<char> mine(kVerdictBytes, '\0');
  std::copy_n(error.begin(), std::min(error.size(), kVerdictBytes - 1), mine.begin());
  std::vector<char> all(leader() ? kVerdictBytes * static_cast<std::size_t>(processes_) : 0);
  MPI_Request request = MPI_REQUEST_NULL;
  ep::check_mpi(MPI_Igather(mine.data(), static_cast<int>(kVerdictBytes), MPI_CHAR, all.data(),
                            static_cast<int>(kVerdictBytes), MPI_CHAR, 0, relay_, &request),
                "MPI_Igather", -1);
  if (!transport::wait_within(request, timeout_s_ + (leader() ? 0 : 5))) {
    stop_ = named + ": the server processes' verdicts did not meet within " + seconds(timeout_s_);
    return;
  }
  std::string verdict;
  if (leader()) {
    for (int p = 0; p < processes_ && verdict.empty(); ++p) {
      const char* text = all.data() + static_cast<std::size_t>(p) * kVerdictBytes;
      if (text[0] != '\0') {
        verdict = (processes_ > 1 ? "server process " + std::to_string(p) + ": " : "") +
                  std::string(text);
      }
    }
    if (verdict.empty()) {
      verdict = leader_checks(a, collective);
    }
  }
  int accepted = verdict.empty() ? 1 : 0;
  ep::check_mpi(MPI_Ibcast(&accepted, 1, MPI_INT, 0, relay_, &request), "MPI_Ibcast", -1);
  if (!transport::wait_within(request, timeout_s_ + (leader() ? 0 : 5))) {
    stop_ = named + ": the leader's decision did not come within " + seconds(timeout_s_);
    return;
  }
  if (leader()) {
    // The clients wait (bounded) for this answer; a client leader that gave
    // up meanwhile never takes it, and the send is abandoned.
    if (!transport::send_within(
            transport::pack_answer(verdict.empty() ? "" : "the servers refuse it: " + verdict,
                                   processes_),
            a.client_leader, a.reply_tag, world_.control, timeout_s_)) {
      verdict = "its first client process (world rank " + std::to_string(a.client_leader) +
                ") did not take the answer";
    }
    if (accepted != 0) opened_.insert(a.context);
  }
  if (accepted == 0) {
    return;  // the clients were told; the servers go on with the others
  }
  auto s = std::make_unique<Served>();
  s->name = a.context;
  s->collective = collective;
  // Collective over the server processes, made in the relayed order.
  ep::check_mpi(MPI_Comm_dup(world_.local, &s->servers), "MPI_Comm_dup", -1);
  server::ContextService service;
  // The context's own errors name it in place of the call: this call's
  // name and the process come once, in front (run()).
  s->call = "context '" + a.context + "'";
  service.call = s->call.c_str();
  service.servers = s->servers;
  service.peer = world_.control;
  service.client_leader = a.client_leader;
  service.tag = a.connection_tag;
  service.options = options_;
  service.await_clients = true;
  Served* raw = s.get();
  s->thread = std::thread([raw, service, parsed = std::move(*cfg)]() mutable {
    try {
      raw->report = server::serve_context(std::move(parsed), service);
    } catch (const ep::Error& e) {
      raw->error = e.what();
      raw->kind = e.kind();
    } catch (const std::exception& e) {
      raw->error = raw->call + ": " + e.what();
    }
    raw->done.store(true);
  });
  served_.push_back(std::move(s));
}

ServerReport Dispatcher::run() {
  idle_since_ = MPI_Wtime();
  for (;;) {
    const std::optional<transport::Announcement> a = next();
    if (!a) continue;
    idle_since_ = MPI_Wtime();
    if (a->kind == transport::LinkKind::kStop) {
      stop_ = a->text;
      break;
    }
    if (a->kind == transport::LinkKind::kClose) {
      break;
    }
    open(*a);
    if (!stop_.empty()) break;
  }
  // Each context ends on its own: its clients finalise, or its waits run out.
  ServerReport report;
  report.server = index_;
  std::string errors;
  std::optional<ep::ErrorKind> kind;  // the failed contexts' kind, when they agree
  for (auto& s : served_) {
    s->thread.join();
    report.busy_s += s->report.busy_s;
    report.idle_s += s->report.idle_s;
    report.write_s += s->report.write_s;
    report.bytes_received += s->report.bytes_received;
    report.bytes_written += s->report.bytes_written;
    report.peak_record_bytes = std::max(report.peak_record_bytes, s->report.peak_record_bytes);
    report.peak_rss_bytes = std::max(report.peak_rss_bytes, s->report.peak_rss_bytes);
    if (!s->error.empty()) {
      errors += (errors.empty() ? "" : "; ") + s->error;
      kind = !kind || *kind == s->kind ? s->kind : ep::ErrorKind::kRequest;
    }
  }
  if (!stop_.empty()) {
    errors = stop_ + (errors.empty() ? "" : "; " + errors);
    kind = ep::ErrorKind::kRequest;
  }
  if (!errors.empty()) {
    throw ep::Error(kind.value_or(ep::ErrorKind::kRequest), kCall, -1, where() + ": " + errors);
  }
  return report;
}

}  // namespace

ServerReport serve_contexts(const World& world, const ServerOptions& options) {
  transport::require_open_contexts_world(world, Role::kServer, kCall, "called on a client process",
                                         "the clients did not call initialize(): they connect "
                                         "with split_world and Client, served by run_server");
  Dispatcher dispatcher(world, options);
  return dispatcher.run();
}

}  // namespace xios_lite
