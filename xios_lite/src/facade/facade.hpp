// The `xios` interface: XIOS's own calls (xios_initialize,
// xios_context_initialize, xios_get_handle, xios_set_*_attr, xios_add_child,
// xios_close_context_definition, xios_send_field, ...) over xios_lite's
// Client, for models written against XIOS (Fortran module `xios`, C header
// xios_lite/xios.h).
//
// How XIOS's model maps onto xios_lite:
//   xios_initialize            splits MPI_COMM_WORLD into the model's
//                              processes and the server processes (an MPMD
//                              launch with xios_lite_server, or none: the
//                              clients then write, XIOS's using_server=false)
//   xios_context_initialize    reads the context from iodef.xml into
//                              elements this thread may edit; the
//                              communicator is the model's (one endpoint per
//                              process) or an endpoint (one client per thread)
//   xios_set_*_attr, add_child edit those elements, or (domain sizes, blocks,
//                              coordinates, the model's array layout, axis
//                              values, the calendar) set what Client's
//                              set_domain_attr & co. take
//   close_context_definition   parses the edited elements, makes the Client,
//                              hands it what the model set, closes
//   update_calendar, send_field, context_finalize   the Client's calls
//
// Threads: every OpenMP thread may be a client of its own (the endpoints
// mode): the contexts and the current context are the calling thread's.
// initialize and finalize are called by one thread per process.
// Every function throws ep::Error naming the XIOS call.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ep/communicator.hpp"
#include "facade/attribute_table.hpp"
#include "facade/calendar_source.hpp"
#include "xios_lite/calendar.hpp"
#include "xios_lite/xios_date.h"

namespace xios_lite::config {
struct Element;
}

namespace xios_lite::facade {

/// XIOS's xios_duration and xios_date (Fortran: type(xios_duration) and
/// type(xios_date), bind(C)): the C interface's types, so that a value
/// passes between the C calls and the facade as it is. Plain C structs:
/// `Duration d{}` is zero.
using Duration = xios_lite_duration;
using DateValue = xios_lite_date;

/// A calendar date as XIOS's xios_date carries it.
[[nodiscard]] inline DateValue date_value(const Date& d) {
  return {d.year, d.month, d.day, d.hour, d.minute, d.second};
}

/// One attribute's value as the interface passes it; only the member of
/// `type` is meaningful (arrays hold their extents, first fastest).
struct Value {
  AttributeType type = AttributeType::kString;
  std::string text;
  bool flag = false;
  long long integer = 0;
  double real = 0;
  Duration duration{};
  DateValue date{};
  std::vector<int> integers;  ///< int_1d, and bool arrays as 0/1
  std::vector<double> reals;
  std::vector<std::int64_t> extents;
};

class ContextClient;

/// What an XIOS handle (the daddr of type(xios_field), ...) points to: an
/// element of a context's definitions, or the context itself.
struct Handle {
  ContextClient* context = nullptr;
  config::Element* element = nullptr;  ///< nullptr: the context
  std::string kind;                    ///< the table kind ("field", "fieldgroup", "context")
};

// ---- the process (one thread per process) ----

/// xios_initialize: collective over MPI_COMM_WORLD (clients and servers).
/// Initialises MPI (MPI_THREAD_MULTIPLE) when the model did not; `local`
/// is the model's communicator when it split MPI_COMM_WORLD itself.
/// Returns the communicator of the model's processes (return_comm).
MPI_Comm initialize(const std::string& client_id, std::optional<MPI_Comm> local);
/// xios_finalize: finalises the contexts still open (collective), tells the
/// servers, frees the world; finalises MPI when initialize initialised it.
void finalize();

// ---- contexts (the calling thread's) ----

/// xios_context_initialize with the model's communicator (one client per
/// process: every process of `comm` calls it, from one thread each).
void context_initialize(const std::string& id, MPI_Comm comm);
/// The same with an endpoint: each thread of the endpoint communicator is a
/// client of its own (every endpoint calls it).
void context_initialize(const std::string& id, const ep::Communicator& comm);

/// xios_get_handle: `kind` is the handle's table kind ("context", "field",
/// "fieldgroup", "file", ...); ids of the *_definition elements are their
/// names. Throws for an unknown id or one of another kind.
Handle* get_handle(const std::string& kind, const std::string& id);
/// xios_is_valid_<kind>: whether the current context has it.
bool is_valid(const std::string& kind, const std::string& id);
void set_current_context(Handle* context);
Handle* current_context();

/// xios_add_child: a new element of `child_kind` under `parent`, with `id`
/// when given.
Handle* add_child(Handle* parent, const std::string& child_kind, const std::string* id);

/// xios_set_<kind>_attr: one attribute. Before close_context_definition.
void set_attribute(Handle* h, const std::string& name, const Value& value);
/// xios_get_<kind>_attr: false (and `value` untouched) when not defined.
/// `value.type` says what the caller wants.
bool get_attribute(Handle* h, const std::string& name, Value& value);
/// xios_is_defined_<kind>_attr.
bool is_defined(Handle* h, const std::string& name);

/// xios_set_timestep, xios_get_calendar_type, xios_get_time_origin, ...
void set_timestep(const Duration& d);
std::string calendar_type();
DateValue time_origin();
DateValue start_date();
void set_time_origin(const DateValue& d);
void set_start_date(const DateValue& d);
// current_calendar() and current_time_origin(): calendar_source.hpp.

/// xios_close_context_definition: collective over the context's clients.
void close_context_definition();
/// xios_update_calendar.
void update_calendar(std::int64_t step);
/// xios_send_field / xios_recv_field: `extents` of the model's array (first
/// fastest), for the messages.
void send_field(const std::string& id, std::span<const double> data,
                std::span<const std::int64_t> extents);
void send_field(const std::string& id, std::span<const float> data,
                std::span<const std::int64_t> extents);
void recv_field(const std::string& id, std::span<double> data,
                std::span<const std::int64_t> extents);
/// xios_field_is_active: whether a file of the context writes the field,
/// directly or through a reference or an expression. After close.
bool field_is_active(const std::string& id);
/// xios_getvar: a <variable> of the current context (or of "xios");
/// `value.type` says the Fortran type. False when absent.
bool get_variable(const std::string& name, Value& value);
/// xios_context_finalize: collective over the context's clients.
void context_finalize();

}  // namespace xios_lite::facade
