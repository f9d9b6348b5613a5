// The public Client: argument checks and the definition/finalise
// protocols. How its threads reach the output (the mode) is its Funnel, the
// temporal work is in ClientEngine, the transport in the sinks.
#include "xios_lite/client.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>

#include "client_engine.hpp"
#include "common/enum_names.hpp"
#include "config/model_definitions.hpp"
#include "ep/comm_management.hpp"
#include "ep/error.hpp"
#include "ep/typed.hpp"
#include "funnel.hpp"
#include "layout.hpp"
#include "meeting.hpp"
#include "netcdf/domain_names.hpp"
#include "netcdf/input_file.hpp"
#include "record_sink.hpp"
#include "transport/bands.hpp"
#include "transport/config_check.hpp"
#include "transport/event.hpp"
#include "transport/wire_codec.hpp"

namespace xios_lite {

namespace {
constexpr auto kModeNames = common::enum_names<Mode>(
    {{Mode::kEndpoints, "ep"}, {Mode::kFunneled, "funneled"}, {Mode::kSynchronous, "synchronous"}});
}  // namespace

const char* to_string(Mode mode) noexcept { return common::enum_name(kModeNames, mode, "ep"); }

namespace detail {

namespace {
constexpr int kIntercommTag = 7407;  // MPI tag of the leaders' handshake on the world communicator

// An error raised inside the library, re-raised under the public call's
// name: its own "call: ep rank r: " prefix is dropped so the message names
// the public call once.
using client::Failure;
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
      : cfg_(options.definitions
                 ? *options.definitions
                 : parse_config(path, options.context.empty() ? world.context : options.context)),
        world_(world),
        options_(options),
        t_start_(MPI_Wtime()) {
    timeout_s_ = options.finalise_timeout_s.value_or(cfg_.finalise_timeout_s);
    const bool sync = options.mode == Mode::kSynchronous;
    if (world.role != Role::kClient) {
      fail("xios_lite::Client", comm.rank(), "called on a server process");
    }
    if (world.open_contexts && world.server_processes > 0) {
      // Its servers run serve_contexts and wait for openings: a connection
      // here would never be answered. (Without servers the clients write
      // themselves: nothing to open.)
      fail("xios_lite::Client", comm.rank(),
           "the World comes from initialize(): open the context with open_context and give "
           "the Client its ContextLink's World");
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
    funnel_ = client::Funnel::make(options.mode, comm_, timeout_s_,
                                   [this](const std::string& why) { tell_servers_once(why); });
    inter_ = funnel_->connect(
        comm_, world,
        options.connection_tag.value_or(world.connection_tag.value_or(kIntercommTag)));
    check_definitions();
    meeting_ = std::make_unique<client::Meeting>(comm_, timeout_s_);
    blocks_.resize(cfg_.domains.size());
    masks_.resize(cfg_.domains.size());
    last_sent_.assign(cfg_.fields.size(), -1);
  }

  // A Client destroyed without finalise (an exception left the model, say)
  // tells the other clients and the servers, so that nobody waits for it.
  ~ClientImpl() {
    if (!finalised_) {
      leave();
    }
  }
  ClientImpl(const ClientImpl&) = delete;
  ClientImpl& operator=(const ClientImpl&) = delete;

  // Why a call can no longer be made: close_definition failed (the first
  // line of its error, the same on every client; finalise gives it whole)
  // or finalise was called; "" otherwise.
  [[nodiscard]] std::string ended() const {
    if (!refused_.empty()) {
      return "called after close_definition failed (" + refused_.substr(0, refused_.find('\n')) +
             ")";
    }
    return finalised_ ? "called after finalise" : "";
  }

  // Throws unless the definition is still open (a definition call `call`).
  void check_defining(const char* call) const {
    if (std::string why = ended(); !why.empty()) {
      fail(call, comm_.rank(), why);
    }
    if (closed_) {
      fail(call, comm_.rank(), "the definition is already closed");
    }
  }

  // The index of domain `id` for a definition call `call` (before close_definition).
  std::size_t defining_domain(const char* call, const std::string& id) const {
    check_defining(call);
    const auto it = std::find_if(cfg_.domains.begin(), cfg_.domains.end(),
                                 [&](const DomainDef& d) { return d.id == id; });
    if (it == cfg_.domains.end()) {
      fail(call, comm_.rank(), "unknown domain '" + id + "'");
    }
    return static_cast<std::size_t>(it - cfg_.domains.begin());
  }

  void set_domain_block(const std::string& id, const Block& b) {
    constexpr const char* kCall = "xios_lite::Client::set_domain_block";
    set_block(kCall, defining_domain(kCall, id), b);
  }

  // A block of domain `d`, checked against the sizes known so far (the
  // model may still set them: close_definition checks again).
  void set_block(const char* call, std::size_t d, const Block& b) {
    const DomainDef& dom = cfg_.domains[d];
    const auto set = model_.domains.find(static_cast<int>(d));
    const int ni_glo =
        set != model_.domains.end() && set->second.ni_glo ? *set->second.ni_glo : dom.ni_glo;
    const int nj_glo =
        set != model_.domains.end() && set->second.nj_glo ? *set->second.nj_glo : dom.nj_glo;
    const bool sized = ni_glo > 0 && nj_glo > 0;
    const std::string& id = dom.id;
    if (b.ibegin < 0 || b.jbegin < 0 || b.ni < 0 || b.nj < 0 ||
        (sized && (b.ibegin + b.ni > ni_glo || b.jbegin + b.nj > nj_glo))) {
      fail(call, comm_.rank(),
           "block (ibegin " + std::to_string(b.ibegin) + ", ni " + std::to_string(b.ni) +
               ", jbegin " + std::to_string(b.jbegin) + ", nj " + std::to_string(b.nj) +
               ") outside domain '" + id + "' of " + std::to_string(ni_glo) + " x " +
               std::to_string(nj_glo));
    }
    blocks_[d] = b;
  }

  void set_domain_attr(const std::string& id, const DomainAttributes& a) {
    constexpr const char* kCall = "xios_lite::Client::set_domain_attr";
    const std::size_t d = defining_domain(kCall, id);
    DomainAttributes& mine = model_.domains[static_cast<int>(d)];
    const auto take = [](auto& to, const auto& from) {
      if (from) to = from;
    };
    const auto take_list = [](auto& to, const auto& from) {
      if (!from.empty()) to = from;
    };
    take(mine.ni_glo, a.ni_glo);
    take(mine.nj_glo, a.nj_glo);
    take(mine.type, a.type);
    take(mine.nvertex, a.nvertex);
    take_list(mine.lonvalue_1d, a.lonvalue_1d);
    take_list(mine.latvalue_1d, a.latvalue_1d);
    take_list(mine.lonvalue_2d, a.lonvalue_2d);
    take_list(mine.latvalue_2d, a.latvalue_2d);
    take_list(mine.bounds_lon_1d, a.bounds_lon_1d);
    take_list(mine.bounds_lat_1d, a.bounds_lat_1d);
    take_list(mine.bounds_lon_2d, a.bounds_lon_2d);
    take_list(mine.bounds_lat_2d, a.bounds_lat_2d);
    take_list(mine.area, a.area);
    // The block: XIOS's ibegin, ni, jbegin, nj (all four by the time of close_definition).
    take(mine.ibegin, a.ibegin);
    take(mine.ni, a.ni);
    take(mine.jbegin, a.jbegin);
    take(mine.nj, a.nj);
    if (mine.ibegin && mine.ni && mine.jbegin && mine.nj) {
      set_block(kCall, d, {*mine.ibegin, *mine.ni, *mine.jbegin, *mine.nj});
    }
    // How the model's arrays hold the block (checked against it at close_definition).
    if (a.data_dim && *a.data_dim != 1 && *a.data_dim != 2) {
      fail(kCall, comm_.rank(),
           "domain '" + id + "': data_dim " + std::to_string(*a.data_dim) + " (expected 1 or 2)");
    }
    for (const auto& [name, value] : {std::pair{"data_ni", a.data_ni}, {"data_nj", a.data_nj}}) {
      if (value && *value < 0) {
        fail(kCall, comm_.rank(),
             "domain '" + id + "': " + name + " " + std::to_string(*value) + " is negative");
      }
    }
    take(mine.data_dim, a.data_dim);
    take(mine.data_ibegin, a.data_ibegin);
    take(mine.data_ni, a.data_ni);
    take(mine.data_jbegin, a.data_jbegin);
    take(mine.data_nj, a.data_nj);
    take(mine.data_n_index, a.data_n_index);
    take_list(mine.data_i_index, a.data_i_index);
    take_list(mine.data_j_index, a.data_j_index);
    if (!a.mask.empty()) {
      set_mask(kCall, d, a.mask);
    }
  }

  void set_axis_attr(const std::string& id, const AxisAttributes& a) {
    constexpr const char* kCall = "xios_lite::Client::set_axis_attr";
    check_defining(kCall);
    const int axis = cfg_.find_axis(id);
    if (axis < 0) {
      fail(kCall, comm_.rank(), "unknown axis '" + id + "'");
    }
    // A part of an axis (begin, n) is a client's block of the axis where it
    // stands alone in a grid; elsewhere every client has the whole axis. An
    // array holding its levels otherwise (data_*) is not read: both would be
    // ignored silently.
    const bool alone = std::any_of(cfg_.domains.begin(), cfg_.domains.end(),
                                   [&](const DomainDef& d) { return d.stand_in_for_axis == axis; });
    const char* part = a.begin && !alone       ? "begin"
                       : a.n && !alone         ? "n"
                       : a.data_begin          ? "data_begin"
                       : a.data_n              ? "data_n"
                       : !a.data_index.empty() ? "data_index"
                                               : nullptr;
    if (part != nullptr) {
      fail(kCall, comm_.rank(),
           "axis '" + id + "': " + part +
               ": unsupported XIOS feature (axes distributed over the clients only in grids of "
               "the axis alone; no axis data layouts: every client sends every level of the "
               "axis)");
    }
    if ((a.begin && *a.begin < 0) || (a.n && *a.n < 0)) {
      fail(kCall, comm_.rank(),
           "axis '" + id + "': part (begin " + std::to_string(a.begin.value_or(0)) + ", n " +
               std::to_string(a.n.value_or(0)) + ") is negative");
    }
    AxisAttributes& mine = model_.axes[axis];
    const auto take = [](auto& to, const auto& from) {
      if (from) to = from;
    };
    take(mine.n_glo, a.n_glo);
    if (!a.value.empty()) mine.value = a.value;
    if (!a.bounds.empty()) mine.bounds = a.bounds;
    take(mine.name, a.name);
    take(mine.unit, a.unit);
    take(mine.positive, a.positive);
    take(mine.long_name, a.long_name);
    take(mine.standard_name, a.standard_name);
    take(mine.begin, a.begin);
    take(mine.n, a.n);
  }

  void define_calendar(const CalendarAttributes& c) {
    constexpr const char* kCall = "xios_lite::Client::define_calendar";
    check_defining(kCall);
    CalendarAttributes& mine = model_.calendar ? *model_.calendar : model_.calendar.emplace();
    const auto take = [](auto& to, const auto& from) {
      if (from) to = from;
    };
    take(mine.type, c.type);
    take(mine.start_date, c.start_date);
    take(mine.time_origin, c.time_origin);
    take(mine.timestep, c.timestep);
    take(mine.day_length, c.day_length);
    if (!c.month_lengths.empty()) mine.month_lengths = c.month_lengths;
  }

  void set_timestep(const std::string& duration) {
    constexpr const char* kCall = "xios_lite::Client::set_timestep";
    check_defining(kCall);
    Frequency f;
    if (!parse_frequency(duration, f) || f.timesteps != 0 || f.is_calendar_dependent()) {
      fail(kCall, comm_.rank(),
           "timestep '" + duration + "' is not a duration in s, mi, h or d (\"1800s\", \"1h\")");
    }
    CalendarAttributes c;
    c.timestep = duration;
    define_calendar(c);
  }

  [[nodiscard]] const Config& config() const { return cfg_; }

  void set_domain_mask(const std::string& id, std::span<const bool> valid) {
    constexpr const char* kCall = "xios_lite::Client::set_domain_mask";
    set_mask(kCall, defining_domain(kCall, id), valid);
  }

  template <class Range>
  void set_mask(const char* call, std::size_t d, const Range& valid) {
    const std::string& id = cfg_.domains[d].id;
    const Block& b = blocks_[d];
    const std::size_t points = static_cast<std::size_t>(b.ni) * static_cast<std::size_t>(b.nj);
    if (valid.size() != points) {
      fail(call, comm_.rank(),
           "domain '" + id + "': mask of " + std::to_string(valid.size()) + " values, expected " +
               std::to_string(points) + " (nj " + std::to_string(b.nj) + " x ni " +
               std::to_string(b.ni) + " of this client's block; set the block first)");
    }
    masks_[d].assign(valid.begin(), valid.end());
  }

  // What send_field takes of field `field` on this client (after close_definition).
  [[nodiscard]] SendShape send_shape(int field) const {
    const FieldDef& f = cfg_.fields[static_cast<std::size_t>(field)];
    const GridDef& g = cfg_.grids[static_cast<std::size_t>(f.grid)];
    const auto d = static_cast<std::size_t>(g.domain);
    const Block& b = blocks_[d];
    const client::DataLayout& layout = layouts_[d];
    SendShape shape;
    shape.per_level = layout.per_level;
    shape.levels = cfg_.levels(f.grid);
    shape.meaning = "levels " + std::to_string(shape.levels) + " x nj " + std::to_string(b.nj) +
                    " x ni " + std::to_string(b.ni);
    if (const DomainDef& dom = cfg_.domains[d]; dom.stand_in()) {
      shape.block = false;
      shape.meaning = dom.stand_in_for_axis >= 0
                          ? "levels " + std::to_string(shape.levels) + " x the " +
                                std::to_string(layout.per_level) + " values of axis '" +
                                cfg_.axes[static_cast<std::size_t>(dom.stand_in_for_axis)].id +
                                "' (grid " + dom.id + ")"
                          : "levels " + std::to_string(shape.levels) +
                                " x the one value of a scalar (grid " + dom.id + ")";
    } else if (!layout.text.empty()) {
      shape.block = false;
      shape.meaning = "levels " + std::to_string(shape.levels) + " x " +
                      std::to_string(layout.per_level) + " values of domain '" +
                      cfg_.domains[d].id + "' as " + layout.text + " hold the block (ni " +
                      std::to_string(b.ni) + ", nj " + std::to_string(b.nj) + ")";
    }
    return shape;
  }
  [[nodiscard]] SendShape send_shape(const std::string& id) const {
    constexpr const char* kCall = "xios_lite::Client::send_shape";
    if (std::string why = ended(); !why.empty()) {
      fail(kCall, comm_.rank(), why);
    }
    if (!closed_) {
      fail(kCall, comm_.rank(), "called before close_definition (field '" + id + "')");
    }
    const int field = cfg_.find_field(id);
    if (field < 0) {
      fail(kCall, comm_.rank(), "field '" + id + "' was never defined");
    }
    return send_shape(field);
  }

  void close_definition();
  void update_calendar(std::int64_t step);
  void recv_field(const std::string& id, std::span<double> data);
  void send_field(const std::string& id, std::span<const double> data);
  void send_field(const std::string& id, std::span<const float> data) {
    const int field = cfg_.find_field(id);
    const double fill = field >= 0 ? cfg_.fields[static_cast<std::size_t>(field)].default_value : 0;
    const auto fill_single = static_cast<float>(fill);
    widened_.resize(data.size());
    for (std::size_t i = 0; i < data.size(); ++i) {
      widened_[i] = data[i] == fill_single ? fill : static_cast<double>(data[i]);
    }
    send_field(id, std::span<const double>(widened_));
  }
  Report finalise();

 private:
  [[noreturn]] static void fail(const char* call, int rank, const std::string& what) {
    throw ep::Error(ep::ErrorKind::kArgument, call, rank, what);
  }

  // Clients and servers read the same definitions, or all of them fail
  // here, naming the first difference (clients among themselves when there
  // is no server).
  void check_definitions() {
    std::string verdict;
    if (!inter_.is_null()) {
      verdict = transport::check_same_definitions(inter_, cfg_, false);
    } else if (!funnel_->has_servers()) {
      const std::uint64_t d = digest_of(definition_text(cfg_));
      const std::uint64_t mine[2] = {d, ~d};
      std::uint64_t all[2] = {0, 0};
      ep::allreduce(comm_, std::span<const std::uint64_t>(mine), std::span<std::uint64_t>(all),
                    MPI_MAX);
      if (all[0] != d || ~all[1] != d) {
        verdict = "the clients read different definitions (their digests differ; this one read " +
                  cfg_.path + ")";
      }
    }
    // The threads that speak to the servers checked with them: every thread learns the verdict.
    verdict = funnel_->from_speaker("xios_lite::Client", verdict);
    if (!verdict.empty()) {
      fail("xios_lite::Client", comm_.rank(), verdict);
    }
  }

  // The master speaks for its process: a thread that left (or a process
  // whose threads no longer meet) is news for every client, through the servers.
  void tell_servers_once(const std::string& text) {
    if (funnel_->speaks() && sink_ && !told_servers_) {
      told_servers_ = true;
      sink_->report_error(text);
    }
  }

  // The work of a call for the threads this one speaks for (see Funnel::arrive).
  Failure begin_engine_step(std::int64_t step);
  Failure send_to_engine(int field, const std::string& id);

  // A sink to the servers for the messages of a client that never closed its
  // definition (the servers wait for every client).
  void ensure_control_sink() {
    if (!sink_ && funnel_->speaks() && funnel_->has_servers() && !inter_.is_null()) {
      sink_ = client::make_server_sink(cfg_, inter_, cfg_.buffers.min_bytes, timeout_s_, false);
    }
  }

  void leave() noexcept;
  // Frees the private communicator after an exchange that every client
  // completed; after a failed one a message to this client may still be on
  // its way, and a freed communicator's id, reused by a new communicator,
  // would receive it: the communicator then stays allocated.
  void release_comm(bool clean) {
    if (clean) {
      comm_.free();
    }
  }
  /// layouts_: how this client's arrays hold each domain's block (what the
  /// model set for the domain it renames); the first problem found, or "".
  [[nodiscard]] std::string compute_layouts() {
    layouts_.assign(cfg_.domains.size(), {});
    std::string first;
    for (std::size_t d = 0; d < cfg_.domains.size(); ++d) {
      const std::size_t r = renamed_[d];
      const auto set = model_.domains.find(static_cast<int>(r));
      std::string why;
      layouts_[d] = client::data_layout(
          cfg_.domains[r], set != model_.domains.end() ? &set->second : nullptr, blocks_[d], why);
      if (first.empty()) first = std::move(why);
    }
    return first;
  }
  void note_own_error(const std::string& text) {
    if (own_error_.empty()) {
      own_error_ = text;
    }
  }

  Config cfg_;
  World world_;
  ClientOptions options_;
  double timeout_s_ = 60;
  ep::Communicator comm_;
  std::unique_ptr<client::Funnel> funnel_;  // how this thread reaches the output (the mode)
  ep::InterCommunicator inter_;
  std::unique_ptr<client::Meeting> meeting_;
  std::vector<Block> blocks_;
  std::vector<std::size_t> renamed_;         ///< per domain: the one it renames (itself: none)
  std::vector<client::DataLayout> layouts_;  // per domain: how this client's arrays hold its block
  config::ModelDefinitions model_;           // what this client set (set_domain_attr, ...)
  std::vector<std::vector<std::uint8_t>> masks_;  // per domain: the model's mask of the block
  std::vector<std::int64_t> last_sent_;
  bool closed_ = false;
  bool finalised_ = false;
  bool finalise_called_ = false;
  std::string refused_;  // the error of a failed close_definition
  std::int64_t step_ = 0;
  std::unique_ptr<client::RecordSink> sink_;
  std::unique_ptr<client::ClientEngine> engine_;
  std::vector<double> widened_;  // send_field(float): the values as doubles
  std::string own_error_;        // the first output this client failed to give (a due field)
  bool told_servers_ = false;
  double t_start_;
  double in_calls_s_ = 0;
};

void ClientImpl::leave() noexcept {
  finalised_ = true;
  const std::string why =
      "client " + std::to_string(comm_.rank()) + " was destroyed without finalise " +
      (closed_ ? "after step " + std::to_string(step_) : std::string("before close_definition"));
  funnel_->leave(why);
  // The servers first (quick), then the other clients (client 0 collects
  // their exchange, which may take up to the timeout).
  if (funnel_->speaks()) {
    try {
      ensure_control_sink();
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): no server to tell
    }
    if (sink_) {
      sink_->abandon(why);
    }
  }
  if (meeting_) {
    meeting_->leave(why);
  }
  // The private communicator stays allocated: messages to this client may
  // still be on their way, and a freed communicator's id, reused by a new
  // one, would receive them.
  meeting_.reset();
}

namespace {

// An expression operand on a twin domain (expression.hpp, same_points) is
// read point for point against the expression's blocks: every client's
// blocks of the two domains must be equal. Every client checks every
// client's, so all reach the same verdict.
std::string check_twin_blocks(const Config& cfg, const client::Layout& layout) {
  // The domain the model gave the blocks of (a copy's source).
  const auto model_domain = [&](int d) {
    return cfg.domains[static_cast<std::size_t>(netcdf::copied_domain(cfg, d))].id;
  };
  for (const TwinOperand& t : twin_operands(cfg)) {
    for (int r = 0; r < layout.clients(); ++r) {
      const Block a = layout.block(r, static_cast<std::size_t>(t.domain));
      const Block b = layout.block(r, static_cast<std::size_t>(t.twin));
      if (a.ibegin != b.ibegin || a.ni != b.ni || a.jbegin != b.jbegin || a.nj != b.nj) {
        const auto text = [](const Block& x) {
          return "ibegin " + std::to_string(x.ibegin) + " ni " + std::to_string(x.ni) + " jbegin " +
                 std::to_string(x.jbegin) + " nj " + std::to_string(x.nj);
        };
        return "field '" + cfg.fields[static_cast<std::size_t>(t.field)].id +
               "': its expression reads field '" +
               cfg.fields[static_cast<std::size_t>(t.operand)].id + "' on domain '" +
               model_domain(t.twin) + "', whose block on client " + std::to_string(r) + " (" +
               text(b) + ") is not that of domain '" + model_domain(t.domain) + "' (" + text(a) +
               "): an operand on a twin domain covers the same points on every client";
      }
    }
  }
  return "";
}

}  // namespace

void ClientImpl::close_definition() {
  constexpr const char* kCall = "xios_lite::Client::close_definition";
  check_defining(kCall);
  funnel_->share_masks(masks_);
  // This client's entry: its layout (process, thread, blocks), then what
  // the model set (config::pack); a block given in pieces by
  // set_domain_attr must be whole by now.
  std::string own_error;
  for (const auto& [d, a] : model_.domains) {
    const int given = (a.ibegin ? 1 : 0) + (a.ni ? 1 : 0) + (a.jbegin ? 1 : 0) + (a.nj ? 1 : 0);
    if (given > 0 && given < 4 && own_error.empty()) {
      own_error = "domain '" + cfg_.domains[static_cast<std::size_t>(d)].id +
                  "': set_domain_attr gave only part of the block (ibegin, ni, jbegin and nj "
                  "go together)";
    }
  }
  // A domain standing in for an axis or a scalar: client 0 holds it whole
  // (its size as the model may have set it), the others none.
  for (std::size_t d = 0; d < cfg_.domains.size(); ++d) {
    const DomainDef& dom = cfg_.domains[d];
    if (!dom.stand_in()) {
      continue;
    }
    int n = 1;
    if (dom.stand_in_for_axis >= 0) {
      const auto set = model_.axes.find(dom.stand_in_for_axis);
      n = set != model_.axes.end() && set->second.n_glo
              ? *set->second.n_glo
              : cfg_.axes[static_cast<std::size_t>(dom.stand_in_for_axis)].n_glo;
      if (set != model_.axes.end() && (set->second.begin || set->second.n)) {
        // This client's part of the axis (XIOS's begin, n): its block.
        blocks_[d] = Block{set->second.begin.value_or(0), set->second.n.value_or(0), 0, 1};
        continue;
      }
    }
    // Client 0 holds it whole, the others have no part (no row: see data_layout).
    blocks_[d] = comm_.rank() == 0 ? Block{0, n, 0, 1} : Block{0, 0, 0, 0};
  }
  // A domain that only renames another (NEMO's <domain domain_ref=
  // "grid_T_inner" name="grid_T"/> in a grid) holds that one's block and
  // takes the model's arrays as that one does.
  renamed_.assign(cfg_.domains.size(), 0);
  for (std::size_t d = 0; d < cfg_.domains.size(); ++d) {
    std::size_t r = d;
    for (std::size_t hops = 0; hops < cfg_.domains.size() && cfg_.domains[r].source >= 0 &&
                               !cfg_.domains[r].window.has_value();
         ++hops) {
      r = static_cast<std::size_t>(cfg_.domains[r].source);
    }
    renamed_[d] = r;
    if (r != d) blocks_[d] = blocks_[r];
  }
  // This client's array layouts, checked against its blocks (every client
  // learns of a bad one through the meeting).
  if (std::string why = compute_layouts(); !why.empty() && own_error.empty()) {
    own_error = std::move(why);
  }
  // This client's entry: its layout as a vector, then config::pack of what
  // the model set, to the end of the entry.
  const std::vector<std::byte> entry = [&] {
    transport::WireWriter w;
    w.put(client::Layout::entry(comm_.process_rank(), comm_.local_thread(), blocks_));
    w.put_raw(std::span<const std::byte>(config::pack(model_)));
    return w.take();
  }();
  const client::Meeting::Outcome met =
      meeting_->meet(client::Meeting::Call::kCloseDefinition, entry, own_error);
  std::vector<int> all;
  std::vector<config::ModelDefinitions> models;
  std::string malformed;  // the first entry that arrived malformed, and how
  for (std::size_t r = 0; r < met.payloads.size(); ++r) {
    const std::vector<std::byte>& p = met.payloads[r];
    models.emplace_back();
    if (p.empty()) {
      continue;  // a client absent from the meeting (its failure says so)
    }
    transport::WireReader in(p, kCall, comm_.rank());
    try {
      const std::vector<int> one = in.get_vector<int>();
      all.insert(all.end(), one.begin(), one.end());
      models.back() = config::unpack(in.rest(), kCall, comm_.rank());
    } catch (const common::Error& e) {
      if (malformed.empty()) {
        malformed =
            "client " + std::to_string(r) + "'s definitions arrived malformed (" + e.what() + ")";
      }
    }
  }
  const client::Layout layout(cfg_, std::move(all));
  std::string error = met.failure.empty() ? layout.check_entries() : met.failure;
  for (std::size_t r = 0; r < met.errors.size() && error.empty(); ++r) {
    if (!met.errors[r].empty()) {
      error = "client " + std::to_string(r) + ": " + met.errors[r];
    }
  }
  if (error.empty()) {
    error = malformed;
  }
  std::vector<std::byte> context;  // client 0: what the servers complete their definitions with
  if (error.empty()) {
    // Every client assembles the same definitions from the same entries
    // (or fails with the same error).
    try {
      std::vector<std::vector<Window>> blocks(static_cast<std::size_t>(layout.clients()));
      for (int r = 0; r < layout.clients(); ++r) {
        for (std::size_t d = 0; d < cfg_.domains.size(); ++d) {
          const Block b = layout.block(r, d);
          blocks[static_cast<std::size_t>(r)].push_back({b.ibegin, b.ni, b.jbegin, b.nj});
        }
      }
      config::apply_model_definitions(cfg_, models, blocks);
      // The layouts again with the completed sizes (a stand-in domain's).
      (void)compute_layouts();  // checked before the meeting
      // The digest of the definitions, then what completes them (the servers'
      // ProcessContext::define reads it).
      transport::WireWriter w;
      w.put(digest_of(definition_text(cfg_)));
      w.put_raw(std::span<const std::byte>(config::pack(config::global_definitions(cfg_))));
      context = w.take();
    } catch (const std::exception& e) {
      error = failure_of(e).detail;
    }
  }
  if (error.empty()) {
    error = layout.check_coverage();
  }
  if (error.empty()) {
    error = check_twin_blocks(cfg_, layout);
  }
  if (error.empty() && !funnel_->has_servers()) {
    for (const FileDef& f : cfg_.files) {
      for (const OutputVariable& v : f.variables) {
        if (v.shape.reduces() && error.empty()) {
          error = "file '" + f.id + "', variable '" + v.name +
                  "': grid reductions (reduce_axis, reduce_domain) are computed by the servers, "
                  "and the synchronous mode has none";
        }
      }
    }
  }

  // This engine's blocks and buffers; every client checks every engine's
  // buffers so that all of them reach the same verdict.
  const int engine_key = funnel_->engine_key();
  std::vector<int> my_ranks;
  std::size_t capacity = cfg_.buffers.min_bytes;
  const std::size_t context_event = sizeof(transport::EventHeader) + context.size();
  if (error.empty()) {
    for (const auto& [engine, ranks] : layout.engines(funnel_->per_process())) {
      std::size_t cap = layout.buffer_capacity(ranks, error);
      if (ranks.front() == 0 && funnel_->has_servers()) {
        // Client 0 sends the completed definitions as one event.
        if (context_event > cfg_.buffers.max_bytes && error.empty()) {
          error = "the definitions the model completed take " + std::to_string(context_event) +
                  " bytes, more than buffer_max_bytes " + std::to_string(cfg_.buffers.max_bytes) +
                  " (raise max_buffer_size)";
        }
        cap = std::max(cap, context_event);
      }
      if (engine == engine_key) {
        capacity = cap;
        my_ranks = ranks;
      }
    }
  }
  const std::vector<std::vector<Block>> engine_blocks = layout.blocks_of(my_ranks);

  if (funnel_->speaks()) {
    try {
      if (!funnel_->has_servers()) {
        if (error.empty()) {
          sink_ = client::make_file_sink(cfg_, world_.local, comm_.rank(), layout.max_threads());
        }
      } else {
        sink_ = client::make_server_sink(cfg_, inter_, capacity, timeout_s_,
                                         options_.progress_thread.value_or(cfg_.progress_thread));
      }
    } catch (const std::exception& e) {
      error = error.empty() ? failure_of(e).detail : error;
    }
  }
  if (!error.empty()) {
    // The servers wait for these clients: tell them, and finish cleanly.
    if (sink_) {
      try {
        (void)sink_->finish(error);
      } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): reported below
      }
    }
    sink_.reset();
    finalised_ = true;
    refused_ = error;
    meeting_.reset();
    release_comm(met.failure.empty());
    fail(kCall, comm_.rank(), error);
  }
  // Every thread's masks (a master reads its process's threads' ones), and
  // how each thread's arrays hold its blocks (from the entries every client
  // gathered; each thread checked its own above).
  funnel_->barrier(kCall);
  std::vector<std::vector<std::vector<std::uint8_t>>> engine_masks(cfg_.domains.size());
  std::vector<std::vector<client::DataLayout>> engine_layouts(cfg_.domains.size());
  if (funnel_->speaks()) {
    for (const int r : my_ranks) {
      const client::BlockMasks& model = funnel_->masks_of(layout.thread(r));
      const config::ModelDefinitions& set = models[static_cast<std::size_t>(r)];
      for (std::size_t d = 0; d < cfg_.domains.size(); ++d) {
        // A copy of a domain (a grid member renaming it) holds its data as
        // the model gave it for that domain: its array layout and mask.
        const auto given_for =
            static_cast<std::size_t>(netcdf::copied_domain(cfg_, static_cast<int>(d)));
        const auto given = set.domains.find(static_cast<int>(given_for));
        std::string why;
        client::DataLayout data = client::data_layout(
            cfg_.domains[given_for], given != set.domains.end() ? &given->second : nullptr,
            layout.block(r, d), why);
        engine_masks[d].push_back(
            client::block_mask(cfg_.domains[d], layout.block(r, d), model[given_for], data));
        engine_layouts[d].push_back(std::move(data));
      }
    }
  }
  funnel_->barrier(kCall);  // the masters have read the threads' masks
  if (funnel_->speaks()) {
    engine_ = std::make_unique<client::ClientEngine>(cfg_, engine_blocks, std::move(engine_masks),
                                                     std::move(engine_layouts), *sink_);
    // The servers learn every client's blocks (they name the clients a
    // record misses) and the EP ranks it speaks for (a funneled master: its
    // process's threads).
    if (comm_.rank() == 0) {
      sink_->define_context(context);
    }
    std::vector<int> definition{static_cast<int>(my_ranks.size())};
    definition.insert(definition.end(), my_ranks.begin(), my_ranks.end());
    for (const auto& blocks : engine_blocks) {
      definition.push_back(static_cast<int>(blocks.size()));
      for (const Block& b : blocks) {
        definition.insert(definition.end(), {b.ibegin, b.ni, b.jbegin, b.nj});
      }
    }
    sink_->define(definition);
  }
  closed_ = true;
}

void ClientImpl::update_calendar(std::int64_t step) {
  constexpr const char* kCall = "xios_lite::Client::update_calendar";
  const double t0 = MPI_Wtime();
  std::string error;
  if (std::string why = ended(); !why.empty()) {
    error = std::move(why);
  } else if (!closed_) {
    error = "called before close_definition";
  } else if (step < 0 || (step <= step_ && step_ > 0)) {
    error = "step " + std::to_string(step) + " goes backwards (the previous step was " +
            std::to_string(step_) + ")";
  }
  // Step 0 before any step is XIOS's calendar at its start date, where it
  // already is (NEMO calls update_calendar(0) right after
  // close_definition): the threads still meet, but no step begins.
  const bool begins = step > 0;
  if (error.empty() && begins) {
    step_ = step;
  }
  Failure outcome;
  if (funnel_->arrive(kCall, error) && begins) {
    outcome = begin_engine_step(step);
  }
  funnel_->depart(kCall, error, outcome);
  in_calls_s_ += MPI_Wtime() - t0;
}

// Ends the current step on the engine: its missed fields are this client's
// own failure (the servers pass it on to every client), then the servers'
// errors that came.
Failure ClientImpl::begin_engine_step(std::int64_t step) {
  try {
    const std::vector<client::MissedField> missed = engine_->begin_step(step);
    sink_->progress();
    if (!missed.empty()) {
      const std::string text = engine_->describe(missed);
      sink_->report_error("client " + std::to_string(comm_.rank()) + ": " + text);
      note_own_error(text);
      return {ep::ErrorKind::kArgument, text};
    }
    const std::string server_error = sink_->take_server_error();
    if (!server_error.empty()) {
      return {ep::ErrorKind::kArgument, server_error};
    }
  } catch (const std::exception& e) {
    return failure_of(e);
  }
  return {};
}

// The values of every thread this one speaks for, into the engine.
Failure ClientImpl::send_to_engine(int field, const std::string& id) {
  try {
    std::string error;
    const std::span<const std::span<const double>> parts = funnel_->parts(id, error);
    if (!error.empty()) {
      return {ep::ErrorKind::kArgument, error};
    }
    engine_->send(field, parts);
    sink_->progress();
  } catch (const std::exception& e) {
    return failure_of(e);
  }
  return {};
}

void ClientImpl::send_field(const std::string& id, std::span<const double> data) {
  constexpr const char* kCall = "xios_lite::Client::send_field";
  const double t0 = MPI_Wtime();
  std::string error;
  const int field = cfg_.find_field(id);
  if (std::string why = ended(); !why.empty()) {
    error = std::move(why);
  } else if (!closed_) {
    error = "send before close_definition (field '" + id + "')";
  } else if (field < 0) {
    error = "field '" + id + "' was never defined";
  } else if (step_ == 0) {
    error = "field '" + id + "' sent before the first update_calendar";
  } else if (last_sent_[static_cast<std::size_t>(field)] == step_) {
    error = "field '" + id + "' sent twice in step " + std::to_string(step_);
  } else if (const FieldDef& f = cfg_.fields[static_cast<std::size_t>(field)];
             !f.unusable.empty()) {
    error = "field '" + id + "' was left out at close_definition (no file uses it): " + f.unusable;
  } else if (!f.expr.empty()) {
    error = "field '" + id + "' is computed from its expression '" + f.expr +
            "': send the fields it reads";
  } else if (f.source_field >= 0) {
    error = "field '" + id + "' takes its values from field '" +
            cfg_.fields[static_cast<std::size_t>(f.source_field)].id +
            "' (field_ref): send that one";
  } else {
    const SendShape shape = send_shape(field);
    const std::size_t expected = shape.per_level * static_cast<std::size_t>(shape.levels);
    if (data.size() != expected) {
      error = "field '" + id + "': " + std::to_string(data.size()) + " values, expected " +
              std::to_string(expected) + " (" + shape.meaning + ")";
    }
  }
  if (error.empty()) {
    last_sent_[static_cast<std::size_t>(field)] = step_;
  }
  funnel_->deposit(id, data);
  Failure outcome;
  if (funnel_->arrive(kCall, error)) {
    outcome = send_to_engine(field, id);
  }
  funnel_->depart(kCall, error, outcome);
  in_calls_s_ += MPI_Wtime() - t0;
}

void ClientImpl::recv_field(const std::string& id, std::span<double> data) {
  constexpr const char* kCall = "xios_lite::Client::recv_field";
  const double t0 = MPI_Wtime();
  const int field = cfg_.find_field(id);
  const int input = field >= 0 ? cfg_.find_input(field) : -1;
  if (std::string why = ended(); !why.empty()) {
    fail(kCall, comm_.rank(), why);
  }
  if (!closed_) {
    fail(kCall, comm_.rank(), "before close_definition (field '" + id + "')");
  }
  if (field < 0) {
    fail(kCall, comm_.rank(), "field '" + id + "' was never defined");
  }
  if (input < 0) {
    fail(kCall, comm_.rank(), "field '" + id + "' is in no file of mode=\"read\"");
  }
  const FieldDef& f = cfg_.fields[static_cast<std::size_t>(field)];
  const int nk = cfg_.levels(f.grid);
  const Block& b =
      blocks_[static_cast<std::size_t>(cfg_.grids[static_cast<std::size_t>(f.grid)].domain)];
  const std::size_t expected = static_cast<std::size_t>(nk) * b.ni * b.nj;
  if (data.size() != expected) {
    fail(kCall, comm_.rank(),
         "field '" + id + "': room for " + std::to_string(data.size()) + " values, expected " +
             std::to_string(expected) + " (levels " + std::to_string(nk) + " x nj " +
             std::to_string(b.nj) + " x ni " + std::to_string(b.ni) + ")");
  }
  // The record of the file's period holding this step (before the first
  // update_calendar: the first record).
  const FileDef& file = cfg_.input_file(input);
  const std::int64_t per_record = std::max<std::int64_t>(
      1, cfg_.calendar.fixed_seconds(file.output_freq) / cfg_.calendar.timestep_seconds());
  const std::int64_t record = step_ == 0 ? 0 : (step_ - 1) / per_record;
  std::string error;
  if (!funnel_->per_process()) {
    // Every thread has its own sink to the servers.
    error = sink_->fetch(input, record, b, nk, data);
  } else if (expected > 0) {
    // Without endpoints to the servers, every thread reads its block itself.
    const DomainDef& d = cfg_.domains[static_cast<std::size_t>(cfg_.domain_of_field(field))];
    const netcdf::InputVariableShape shape{netcdf::input_path(file),
                                           cfg_.input_variable(input).name, nk, d.nj_glo, d.ni_glo};
    netcdf::InputBlock block;
    error = netcdf::read_input(shape, static_cast<int>(record), 1, b.jbegin, b.nj, b.ibegin, b.ni,
                               block);
    if (error.empty()) {
      std::copy(block.values.begin(), block.values.end(), data.begin());
    }
  }
  in_calls_s_ += MPI_Wtime() - t0;
  if (!error.empty()) {
    fail(kCall, comm_.rank(),
         "field '" + id + "' at step " + std::to_string(step_) + " (record " +
             std::to_string(record) + " of file '" + file.id + "'): " + error);
  }
}

Report ClientImpl::finalise() {
  constexpr const char* kCall = "xios_lite::Client::finalise";
  if (finalise_called_) {
    fail(kCall, comm_.rank(), "called twice");
  }
  finalise_called_ = true;
  if (!refused_.empty()) {
    // close_definition already told the other clients and the servers, and
    // released what the run held: there is nothing to meet or wait for.
    fail(kCall, comm_.rank(), "close_definition failed (" + refused_ + ")");
  }
  finalised_ = true;
  const int rank = comm_.rank();
  if (!closed_) {
    // The other clients may be waiting in close_definition: they hear of this
    // call there, and the servers that the definition failed.
    const client::Meeting::Outcome met = meeting_->meet(client::Meeting::Call::kFinalise, {}, "");
    std::string error = "called before close_definition";
    if (!met.failure.empty()) {
      error += " (" + met.failure + ")";
    }
    if (funnel_->speaks()) {
      try {
        ensure_control_sink();
        if (sink_) {
          (void)sink_->finish("client " + std::to_string(rank) + " " + error);
        }
      } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): reported below
      }
    }
    meeting_.reset();
    release_comm(met.failure.empty());
    fail(kCall, rank, error);
  }
  const double t_call = MPI_Wtime();
  client::FinishOutcome outcome;  // what the speaker learnt, then every thread of its group
  client::ClientStats stats;
  if (funnel_->speaks()) {
    try {
      const std::vector<client::MissedField> missed = engine_->finish();
      if (!missed.empty()) {
        const std::string text = engine_->describe(missed);
        sink_->report_error("client " + std::to_string(rank) + ": " + text);
        note_own_error(text);
      }
    } catch (const std::exception& e) {
      outcome.transport_error = failure_of(e).detail;
    }
    try {
      client::Finish fin = sink_->finish("");
      outcome.servers = std::move(fin.reports);
      outcome.server_error = std::move(fin.error);
      outcome.gone = std::move(fin.gone);
    } catch (const std::exception& e) {
      if (outcome.transport_error.empty()) {
        outcome.transport_error = failure_of(e).detail;
      }
    }
    stats = sink_->stats();
  }
  bool at_arrival = false;
  const std::string funnel_error = funnel_->share_finish(outcome, at_arrival);
  if (at_arrival && funnel_->speaks() && sink_) {
    note_own_error(funnel_error);  // the servers heard it during the run, if at all
  }
  in_calls_s_ += MPI_Wtime() - t_call;
  const double total = MPI_Wtime() - t_start_;
  const std::vector<double> mine{
      static_cast<double>(rank), total,        in_calls_s_, stats.blocked_s,
      stats.bytes_sent,          stats.write_s};
  transport::WireWriter mine_bytes;
  mine_bytes.put(mine);
  const client::Meeting::Outcome met =
      meeting_->meet(client::Meeting::Call::kFinalise, mine_bytes.bytes(), own_error_,
                     funnel_->per_process() ? std::vector<int>{} : outcome.gone);
  Report report;
  report.mode = to_string(options_.mode);
  report.servers = outcome.servers;
  for (const auto& p : met.payloads) {
    std::vector<double> c;
    try {
      transport::WireReader in(p, "xios_lite::Client::finalise", rank);
      c = in.get_vector<double>();
      in.expect_done();
    } catch (const common::Error&) {
      c.clear();  // an absent or malformed entry: that client is left out of the report
    }
    if (c.size() == mine.size()) {
      report.clients.push_back({static_cast<int>(c[0]), c[1], c[2], c[3], c[4], c[5]});
    }
  }
  // The error every client gives: everything it knows, once each -- its own
  // failure, its process's threads, the other clients, the servers, its own
  // waits -- and when nothing else, another client's failure.
  std::string error;
  for (const std::string& part :
       {own_error_, funnel_error, met.failure, outcome.server_error, outcome.transport_error}) {
    if (!part.empty() && error.find(part) == std::string::npos) {
      error += (error.empty() ? "" : "; ") + part;
    }
  }
  for (std::size_t r = 0; r < met.errors.size() && error.empty(); ++r) {
    if (!met.errors[r].empty()) {
      error = "client " + std::to_string(r) + ": " + met.errors[r];
    }
  }
  meeting_.reset();
  release_comm(met.failure.empty());
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
void Client::set_domain_mask(const std::string& domain_id, std::span<const bool> valid) {
  impl_->set_domain_mask(domain_id, valid);
}
void Client::set_domain_attr(const std::string& domain_id, const DomainAttributes& attributes) {
  impl_->set_domain_attr(domain_id, attributes);
}
void Client::set_axis_attr(const std::string& axis_id, const AxisAttributes& attributes) {
  impl_->set_axis_attr(axis_id, attributes);
}
void Client::define_calendar(const CalendarAttributes& calendar) {
  impl_->define_calendar(calendar);
}
void Client::set_timestep(const std::string& duration) { impl_->set_timestep(duration); }
void Client::close_definition() { impl_->close_definition(); }
const Config& Client::config() const { return impl_->config(); }
void Client::update_calendar(std::int64_t step) { impl_->update_calendar(step); }
void Client::recv_field(const std::string& id, std::span<double> data) {
  impl_->recv_field(id, data);
}
SendShape Client::send_shape(const std::string& id) const { return impl_->send_shape(id); }
void Client::send_field(const std::string& id, std::span<const double> data) {
  impl_->send_field(id, data);
}
void Client::send_field(const std::string& id, std::span<const float> data) {
  impl_->send_field(id, data);
}
Report Client::finalise() { return impl_->finalise(); }

}  // namespace xios_lite
