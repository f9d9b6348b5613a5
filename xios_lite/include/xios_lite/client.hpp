// The client API: every model thread is an output client.
//
//   xios_lite::World world = xios_lite::split_world(MPI_COMM_WORLD, role);
//   #pragma omp parallel
//   {
//     ep::Communicator ep = my_endpoint;           // over world.local
//     xios_lite::Client out(ep, world, "iodef.xml");
//     out.set_domain_block("atm", {ibegin, ni, jbegin, nj});
//     out.close_definition();
//     for (int step = 1; step <= n; ++step) {
//       ... compute ...
//       out.update_calendar(step);
//       out.send_field("tas", tas);                 // nk*nj*ni doubles, ni fastest
//     }
//     xios_lite::Report r = out.finalise();
//   }
//
// Modes (ClientOptions::mode):
//   kEndpoints    every endpoint is a client of the servers (the default);
//   kFunneled     only the master thread (local thread 0) of each process is
//                 a client; the other threads hand their blocks to it inside
//                 each call (the situation before endpoints);
//   kSynchronous  no server: each process's master thread writes the
//                 process's blocks itself through parallel NetCDF-4.
// All endpoints of a Client must use the same mode.
//
// Progress: the endpoint runtime has no progress thread. Every call
// (update_calendar, send_field, finalise) tests the pending sends of the
// caller (update_calendar and finalise also read its error channel), so
// transfers advance whenever the model calls the library. Between calls, a
// large message moves only while some thread of the process is inside MPI:
// by default (config option progress_thread="true") the library runs one
// process-wide thread that enters MPI every few microseconds while a send
// is in flight and parks otherwise; with it off, sends advance only inside
// the client's calls.
//
// Integrity: records are named by their output period; a field due at a
// step (see docs/xios_lite.md) and not sent is an error at the next
// update_calendar (or finalise) naming the field, the step and the client,
// and its record is _FillValue at this client's points.
//
// No wait without an end: every wait is bounded by the finalise timeout
// (ClientOptions::finalise_timeout_s, or the configuration's). A Client
// destroyed without finalise tells the servers and the other clients.
//
// Collectivity and threads: each thread owns its Client (one per endpoint).
// The constructor, close_definition and finalise are collective over every
// endpoint of `comm`. In kEndpoints mode update_calendar and send_field are
// local; in kFunneled and kSynchronous modes they are collective over the
// threads of the process (they meet the master thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "ep/communicator.hpp"
#include "xios_lite/config.hpp"
#include "xios_lite/model_attributes.hpp"
#include "xios_lite/report.hpp"
#include "xios_lite/server.hpp"

namespace xios_lite {

enum class Mode { kEndpoints, kFunneled, kSynchronous };
[[nodiscard]] const char* to_string(Mode mode) noexcept;

/// This client's part of a domain, in global indices: a Window of the
/// domain (config.hpp), the same rectangle the configuration's windows use.
using Block = Window;

struct ClientOptions {
  Mode mode = Mode::kEndpoints;
  /// The context of the configuration this client writes (XIOS's
  /// xios_context_initialize); "" : the World's (split_world with a
  /// context), else the only one besides "xios".
  std::string context;
  std::optional<double> finalise_timeout_s;  ///< overrides the configuration
  std::optional<std::string> report_json;    ///< overrides the configuration
  std::optional<bool> progress_thread;       ///< overrides the configuration (see "Progress")
  bool print_report = true;                  ///< EP rank 0 prints the report at finalise
  /// Definitions already parsed (and edited at run time, XIOS's
  /// xios_add_child and xios_set_*_attr): used instead of reading
  /// config_path, which then only names them in messages. Every client of
  /// a Client passes the same definitions.
  std::shared_ptr<const Config> definitions;
  /// The MPI tag of the connection's handshake between the client and
  /// server leaders: ContextLink::connection_tag for a context opened with
  /// open_context (xios_lite/contexts.hpp), whose servers use the same.
  /// Unset: the World's (World::connection_tag, which open_context sets),
  /// else the tag of split_world launches, which run_server uses.
  std::optional<int> connection_tag;
};

/// The array send_field takes of a field on one client (Client::send_shape).
struct SendShape {
  std::size_t per_level = 0;  ///< values per level (the block's, or as data_* say)
  int levels = 1;
  std::string meaning;  ///< "levels 5 x nj 50 x ni 100", or the data_* that make it
  bool block = true;    ///< the array is the block itself (no data_* layout)
};

namespace detail {
class ClientImpl;
}

class Client {
 public:
  /// Reads the configuration and connects to the servers (creates the
  /// endpoint intercommunicator). Collective over all endpoints of `comm`
  /// (which must span exactly the client processes of `world`) and over
  /// the server processes (inside run_server).
  Client(const ep::Communicator& comm, const World& world, const std::string& config_path,
         const ClientOptions& options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// Sets this client's block of a domain. Local. Throws for an unknown
  /// domain, a block outside the domain or a call after close_definition.
  void set_domain_block(const std::string& domain_id, const Block& block);

  /// Marks points of this client's block of a domain as masked (land, say):
  /// `valid` holds nj x ni entries of the block (ni fastest), false =
  /// masked. Masked points are left out of every temporal operation and are
  /// _FillValue in every record; a domain's `mask` in the configuration
  /// masks points too (a point is valid when both say so). Local; after
  /// set_domain_block, before close_definition. Throws for an unknown
  /// domain, a wrong size, or a call after close_definition.
  void set_domain_mask(const std::string& domain_id, std::span<const bool> valid);

  /// XIOS's xios_set_domain_attr: the domain's global sizes and type, this
  /// client's block (ibegin, ni, jbegin, nj: the same as set_domain_block)
  /// and its block's coordinates, bounds, areas and mask (see
  /// model_attributes.hpp). Attributes not given keep their value; a later
  /// call overrides. Local; before close_definition, which assembles the
  /// clients' pieces and checks them. Throws for an unknown domain, a call
  /// after close_definition, or a mask of the wrong size.
  void set_domain_attr(const std::string& domain_id, const DomainAttributes& attributes);

  /// XIOS's xios_set_axis_attr: n_glo, value, bounds, names, unit,
  /// positive. Local; before close_definition. Every client that sets an
  /// attribute sets the same value (checked at close_definition).
  void set_axis_attr(const std::string& axis_id, const AxisAttributes& attributes);

  /// XIOS's xios_define_calendar: type, start date, time origin, timestep,
  /// and the day and month lengths of a user_defined calendar. Local;
  /// before close_definition; every client that defines it gives the same.
  void define_calendar(const CalendarAttributes& calendar);
  /// XIOS's xios_set_timestep: the model's timestep as a duration ("1800s",
  /// "1h", "30mi"). Local; before close_definition.
  void set_timestep(const std::string& duration);

  /// Assembles the definitions every client set, completes them (sizes,
  /// coordinates, calendar), checks the blocks of all clients (no overlap,
  /// full coverage of every domain used by a file), sizes the buffers and
  /// tells the servers. Collective. Throws the same ep::Error on every
  /// endpoint on failure.
  void close_definition();

  /// The definitions this client writes with: the configuration's, and
  /// after close_definition completed with what the model set. Local.
  [[nodiscard]] const Config& config() const;

  /// Starts timestep `step` (1, 2, ...). Step 0 before the first step does
  /// nothing (XIOS's calendar at its start date, as NEMO calls it). Throws
  /// when the step does not grow, when a field due in the steps before was
  /// not sent (the step begins anyway), and with an error a server passed
  /// on (once).
  void update_calendar(std::int64_t step);

  /// Hands this step's values of field `id`: levels x nj x ni of this
  /// client's block, ni fastest; or, when the domain's data_* attributes
  /// say so (set_domain_attr or the configuration), levels of the model's
  /// own array: a halo'd data_ni x data_nj one, data_ni values (data_dim
  /// 1) or data_n_index listed points (data_i_index). The block's points
  /// are picked out of it while the values are packed (no copy of the
  /// array first); points it does not give are missing (_FillValue).
  /// Throws for an unknown field, a wrong size (naming the shape
  /// expected), the same field twice in a step and a call before
  /// close_definition (a server's error waits for the next update_calendar).
  void send_field(const std::string& id, std::span<const double> data);
  /// The same from single-precision values (widened to double for the
  /// temporal operations; a value equal to the field's default_value in
  /// single precision stays a missing value). The file's precision is the
  /// field's `prec`, whichever form the model sends.
  void send_field(const std::string& id, std::span<const float> data);

  /// What send_field takes of field `id` on this client: values per level
  /// and levels, and their meaning for messages. Local; after
  /// close_definition. Throws for an unknown field or an earlier call.
  [[nodiscard]] SendShape send_shape(const std::string& id) const;

  /// XIOS's xios_recv_field: this client's block (levels x nj x ni, ni
  /// fastest) of field `id` from the file in read mode that holds it, the
  /// record of the file's output period holding the current step (record
  /// 0 before the first update_calendar: restart input). In the endpoints
  /// mode the servers read the file (once, at close_definition, each its
  /// rows) and answer each request; in the funneled and synchronous modes
  /// each thread reads its block from the file itself. Local; waits for
  /// the servers' answer, bounded by the finalise timeout. Throws, naming
  /// the field, the step, the record and the file, for an unknown field,
  /// a field in no read file, a wrong size, a call outside close_definition
  /// .. finalise, a file that cannot be read, a missing variable or one
  /// whose dimensions differ from the grid's, and a record past the end.
  void recv_field(const std::string& id, std::span<double> data);

  /// Flushes, waits for every server to finish (at most 1.5 finalise
  /// timeouts + 1 s, then throws naming what it still waits for), gathers
  /// and prints the report (bounded by the timeout). Collective. Throws,
  /// on every client, everything it knows went wrong: its own missing
  /// fields, a server's error, clients that left or are gone. Before
  /// close_definition it tells the others and the servers, and throws;
  /// after a failed close_definition it is local and throws that error
  /// (every other call then names it too).
  Report finalise();

 private:
  std::unique_ptr<detail::ClientImpl> impl_;
};

}  // namespace xios_lite
