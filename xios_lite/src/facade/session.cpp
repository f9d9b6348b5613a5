// The process and thread state of the `xios` interface (facade.hpp): the
// client/server world, iodef.xml as read once per process, and each
// thread's contexts with its current one.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "config/xml_tree.hpp"
#include "ep/collectives.hpp"
#include "ep/error.hpp"
#include "facade/context_client.hpp"
#include "facade/facade.hpp"
#include "xios_lite/contexts.hpp"

namespace xios_lite::facade {
namespace {

using config::Element;

constexpr const char* kConfigPath = "iodef.xml";  // where XIOS reads its definitions

[[noreturn]] void fail(const char* call, int rank, const std::string& what) {
  throw ep::Error(ep::ErrorKind::kArgument, call, rank, what);
}

// A thread's contexts, in the order it initialised them.
struct ThreadState {
  std::vector<std::unique_ptr<ContextClient>> contexts;
  ContextClient* current = nullptr;
};

// A context opened on the servers by one thread of a process, for the
// process's other endpoints.
struct Opened {
  std::optional<ContextLink> link;
  std::string error;
  ep::ErrorKind kind = ep::ErrorKind::kArgument;
};

struct Process {
  std::mutex mutex;  // guards everything below against the model's threads
  bool initialized = false;
  std::map<std::string, Opened> opened;  // by context id
  bool finalize_mpi = false;             // initialize started MPI, finalize ends it
  bool thread_multiple = false;
  World world;
  std::unique_ptr<Element> tree;
  std::map<std::thread::id, std::unique_ptr<ThreadState>> threads;
};

Process& process() {
  static Process p;
  return p;
}

ThreadState& thread_state() {
  Process& p = process();
  const std::lock_guard lock(p.mutex);
  auto& state = p.threads[std::this_thread::get_id()];
  if (!state) {
    state = std::make_unique<ThreadState>();
  }
  return *state;
}

ContextClient& current(const char* call) {
  ThreadState& t = thread_state();
  if (t.current == nullptr) {
    fail(call, -1,
         "no current context (call xios_context_initialize and xios_set_current_context)");
  }
  return *t.current;
}

// The xios context's using_server, when the file gives it.
std::optional<bool> using_server(const Element& root) {
  std::optional<bool> out;
  const std::function<void(const Element&)> visit = [&](const Element& e) {
    for (const auto& c : e.children) {
      if (c->name == "variable" && c->get("id") == "using_server") {
        bool b = false;
        if (config::parse_boolean(c->text, b)) out = b;
      }
      visit(*c);
    }
  };
  for (const auto& c : root.children) {
    if (c->name == "context" && c->get("id") == "xios") visit(*c);
  }
  return out;
}

void add_context(const char* call, const std::string& id, ep::Communicator comm,
                 MPI_Comm model_comm) {
  Process& p = process();
  std::unique_ptr<Element> copy;
  {
    const std::lock_guard lock(p.mutex);
    if (!p.initialized) {
      fail(call, comm.rank(), "xios_initialize was not called");
    }
    copy = config::clone(*p.tree);
  }
  const bool known = std::any_of(copy->children.begin(), copy->children.end(), [&](const auto& c) {
    return c->name == "context" && c->get("id") == id;
  });
  if (!known || id == "xios") {
    fail(call, comm.rank(), "context '" + id + "' is not defined in " + kConfigPath);
  }
  ThreadState& t = thread_state();
  for (const auto& c : t.contexts) {
    if (c->id() == id && !c->finalised()) {
      fail(call, comm.rank(), "context '" + id + "' is already initialised on this client");
    }
  }
  t.contexts.push_back(std::make_unique<ContextClient>(id, std::move(comm), model_comm,
                                                       std::move(copy), kConfigPath));
  t.current = t.contexts.back().get();
}

}  // namespace

MPI_Comm initialize(const std::string& client_id, std::optional<MPI_Comm> local) {
  constexpr const char* kCall = "xios_initialize";
  Process& p = process();
  const std::lock_guard lock(p.mutex);
  if (p.initialized) {
    fail(kCall, -1, "called twice (client id '" + client_id + "')");
  }
  int started = 0;
  ep::check_mpi(MPI_Initialized(&started), "MPI_Initialized", -1);
  if (started == 0) {
    int provided = 0;
    ep::check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided),
                  "MPI_Init_thread", -1);
    p.finalize_mpi = true;
  }
  int provided = MPI_THREAD_SINGLE;
  ep::check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread", -1);
  p.thread_multiple = provided >= MPI_THREAD_MULTIPLE;

  // Every process reads the file before the collective split, so that a
  // broken file stops them all the same way.
  std::unique_ptr<Element> tree;
  std::string error;
  try {
    tree = config::load_tree_file(kConfigPath);
  } catch (const std::exception& e) {
    error = e.what();
  }
  // The servers (an MPMD launch) learn of the contexts as the model opens them.
  p.world = xios_lite::initialize(MPI_COMM_WORLD, Role::kClient);
  if (!error.empty()) {
    throw ep::Error(ep::ErrorKind::kConfig, kCall, -1, error);
  }
  const std::optional<bool> servers_wanted = using_server(*tree);
  if (servers_wanted.value_or(false) && p.world.server_processes == 0) {
    fail(kCall, -1,
         std::string(kConfigPath) +
             " sets using_server to true but no server process was launched (MPMD: mpiexec -n "
             "<clients> model : -n <servers> xios_lite_server)");
  }
  p.tree = std::move(tree);
  p.initialized = true;
  return local.value_or(p.world.local);
}

void finalize() {
  constexpr const char* kCall = "xios_finalize";
  ThreadState& t = thread_state();
  for (const auto& c : t.contexts) {
    // A context whose close failed said so then (and the servers heard it).
    if (c->closed() && !c->finalised() && !c->refused()) {
      c->finalise();
    }
  }
  Process& p = process();
  const std::lock_guard lock(p.mutex);
  if (!p.initialized) {
    fail(kCall, -1, "xios_initialize was not called");
  }
  p.threads.clear();
  p.opened.clear();
  if (p.world.server_processes > 0) {
    close_contexts(p.world);
  }
  free_world(p.world);
  p.tree.reset();
  p.initialized = false;
  if (p.finalize_mpi) {
    ep::check_mpi(MPI_Finalize(), "MPI_Finalize", -1);
  }
}

void context_initialize(const std::string& id, MPI_Comm comm) {
  constexpr const char* kCall = "xios_context_initialize";
  if (comm == MPI_COMM_NULL) {
    fail(kCall, -1, "context '" + id + "': MPI_COMM_NULL");
  }
  std::vector<ep::Communicator> one = ep::create_endpoints(comm, 1);
  add_context(kCall, id, std::move(one.front()), comm);
}

void context_initialize(const std::string& id, const ep::Communicator& comm) {
  add_context("xios_context_initialize", id, comm, MPI_COMM_NULL);
}

Handle* get_handle(const std::string& kind, const std::string& id) {
  constexpr const char* kCall = "xios_get_handle";
  ThreadState& t = thread_state();
  if (kind == "context") {
    for (auto it = t.contexts.rbegin(); it != t.contexts.rend(); ++it) {
      if ((*it)->id() == id) return (*it)->context_handle();
    }
    fail(kCall, -1, "context '" + id + "' is not initialised on this client");
  }
  ContextClient& c = current(kCall);
  Handle* h = c.find(kind, id);
  if (h == nullptr) {
    fail(kCall, c.comm().rank(), "no " + kind + " '" + id + "' in context '" + c.id() + "'");
  }
  return h;
}

bool is_valid(const std::string& kind, const std::string& id) {
  return current("xios_is_valid").find(kind, id) != nullptr;
}

void set_current_context(Handle* context) {
  if (context == nullptr || context->context == nullptr || context->kind != "context") {
    fail("xios_set_current_context", -1, "not a context handle");
  }
  thread_state().current = context->context;
}

Handle* current_context() { return current("xios_get_current_context").context_handle(); }

Handle* add_child(Handle* parent, const std::string& child_kind, const std::string* id) {
  if (parent == nullptr || parent->context == nullptr) {
    fail("xios_add_child", -1, "null handle");
  }
  return parent->context->add_child("xios_add_child", parent, child_kind, id);
}

void set_attribute(Handle* h, const std::string& name, const Value& value) {
  if (h == nullptr || h->context == nullptr) fail("xios_set_attr", -1, "null handle");
  const std::string call = "xios_set_" + h->kind + "_attr";
  h->context->set(call.c_str(), h, name, value);
}

bool get_attribute(Handle* h, const std::string& name, Value& value) {
  if (h == nullptr || h->context == nullptr) fail("xios_get_attr", -1, "null handle");
  const std::string call = "xios_get_" + h->kind + "_attr";
  return h->context->get(call.c_str(), h, name, value);
}

bool is_defined(Handle* h, const std::string& name) {
  if (h == nullptr || h->context == nullptr) fail("xios_is_defined_attr", -1, "null handle");
  return h->context->defined(h, name);
}

void set_timestep(const Duration& d) { current("xios_set_timestep").set_timestep(d); }

std::string calendar_type() { return current("xios_get_calendar_type").calendar_type(); }

namespace {
const Calendar& need_calendar(const char* call) {
  ContextClient& c = current(call);
  const Calendar* cal = c.calendar();
  if (cal == nullptr) {
    fail(call, c.comm().rank(), "context '" + c.id() + "' has no calendar type yet");
  }
  return *cal;
}
}  // namespace

DateValue time_origin() { return date_value(need_calendar("xios_get_time_origin").time_origin()); }
DateValue start_date() { return date_value(need_calendar("xios_get_start_date").start()); }
void set_time_origin(const DateValue& d) {
  current("xios_set_time_origin").set_calendar_date("xios_set_time_origin", d);
}
void set_start_date(const DateValue& d) {
  current("xios_set_start_date").set_calendar_date("xios_set_start_date", d);
}

const Calendar* current_calendar() noexcept {
  try {
    ThreadState& t = thread_state();
    return t.current != nullptr ? t.current->calendar() : nullptr;
  } catch (...) {
    return nullptr;
  }
}

Date current_time_origin() {
  const Calendar* cal = current_calendar();
  if (cal == nullptr) {
    fail("xios date", -1, "no calendar in the current context");
  }
  return cal->time_origin();
}

void close_context_definition() {
  ContextClient& c = current("xios_close_context_definition");
  Process& p = process();
  Connection link;
  {
    const std::lock_guard lock(p.mutex);
    link.world = p.world;
    link.progress_thread = p.thread_multiple;
  }
  // No server process: the clients write (XIOS's using_server=false).
  if (link.world.server_processes == 0) {
    link.mode = Mode::kSynchronous;
    c.close(link);
    return;
  }
  // The servers hear of the context, with its definitions as this model
  // edited them, from one thread per process; the process's other
  // endpoints take the same link. The barrier also carries a failure to
  // every endpoint, so that none waits for a connection that never comes.
  const ep::Communicator& comm = c.comm();
  if (comm.local_thread() == 0) {
    Opened opened;
    try {
      const MPI_Comm clients = c.model_comm() != MPI_COMM_NULL ? c.model_comm() : link.world.local;
      opened.link = open_context(link.world, clients, c.id(), c.definitions_xml());
    } catch (const ep::Error& e) {
      opened.error = e.what();
      opened.kind = e.kind();
    } catch (const std::exception& e) {
      opened.error = e.what();
    }
    const std::lock_guard lock(p.mutex);
    p.opened[c.id()] = std::move(opened);
  }
  ep::barrier(comm);
  Opened opened;
  {
    const std::lock_guard lock(p.mutex);
    opened = p.opened[c.id()];
  }
  if (!opened.link) {
    throw ep::Error(opened.kind, "xios_close_context_definition", comm.rank(),
                    "context '" + c.id() + "': " + opened.error);
  }
  link.mode = Mode::kEndpoints;
  link.world = opened.link->world;
  link.tag = opened.link->connection_tag;
  link.opened = true;
  c.close(link);
}

void update_calendar(std::int64_t step) {
  current("xios_update_calendar").client("xios_update_calendar").update_calendar(step);
}

void send_field(const std::string& id, std::span<const double> data,
                std::span<const std::int64_t> /*extents*/) {
  current("xios_send_field").client("xios_send_field").send_field(id, data);
}

void send_field(const std::string& id, std::span<const float> data,
                std::span<const std::int64_t> /*extents*/) {
  current("xios_send_field").client("xios_send_field").send_field(id, data);
}

void recv_field(const std::string& id, std::span<double> data,
                std::span<const std::int64_t> /*extents*/) {
  current("xios_recv_field").client("xios_recv_field").recv_field(id, data);
}

bool field_is_active(const std::string& id) {
  return current("xios_field_is_active").field_is_active("xios_field_is_active", id);
}

bool get_variable(const std::string& name, Value& value) {
  return current("xios_getvar").variable(name, value);
}

void context_finalize() { current("xios_context_finalize").finalise(); }

}  // namespace xios_lite::facade
