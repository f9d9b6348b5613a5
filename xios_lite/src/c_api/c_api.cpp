// The C interface (xios_lite/xios_lite.h): exceptions become return codes and
// a thread-local message (ep/c_shim.hpp, shared with ep/ep.h); send_field checks the array's
// extents against the configuration and this client's blocks, so that a Fortran model learns which
// field has which wrong shape.
#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "c_codes.hpp"
#include "ep/c_handle.hpp"
#include "ep/error.hpp"
#include "xios_lite/client.hpp"
#include "xios_lite/config.hpp"
#include "xios_lite/server.hpp"
#include "xios_lite/xios_lite.h"

struct xios_lite_world_s {
  xios_lite::World world;
};

struct xios_lite_client_s {
  std::unique_ptr<xios_lite::Client> client;
  std::map<std::string, xios_lite::Block> blocks;  // for the shape checks of send_field
  std::map<std::string, xios_lite::DomainAttributes>
      block_parts;  // blocks given by set_domain_attr
  int ep_rank = -1;
  xios_lite::Mode mode = xios_lite::Mode::kEndpoints;
};

namespace {

// Runs `body`; an exception becomes its EP_ERR_* code and message.
template <typename Body>
int guarded(Body&& body) noexcept {
  return xios_lite::c_api::guarded("xios_lite", std::forward<Body>(body));
}

[[noreturn]] void argument_error(const char* call, int ep_rank, const std::string& detail) {
  throw ep::Error(ep::ErrorKind::kArgument, call, ep_rank, detail);
}

template <typename T>
T& checked(T* handle, const char* call, int ep_rank = -1) {
  if (handle == nullptr) {
    argument_error(call, ep_rank, "null handle");
  }
  return *handle;
}

std::string checked_string(const char* s, const char* call, const char* what, int ep_rank) {
  if (s == nullptr) {
    argument_error(call, ep_rank, std::string("null ") + what);
  }
  return s;
}

std::string shape_string(const std::vector<std::int64_t>& extents) {
  std::ostringstream out;
  out << '(';
  for (std::size_t d = 0; d < extents.size(); ++d) {
    out << (d > 0 ? ", " : "") << extents[d];
  }
  out << ')';
  return out.str();
}

// The extents a send of field `id` must have on this client, and what they mean.
std::vector<std::int64_t> expected_shape(const xios_lite_client_s& c, const std::string& id,
                                         std::string& meaning) {
  constexpr const char* kCall = "xios_lite_send_field";
  const xios_lite::Config& config = c.client->config();
  const int field = config.find_field(id);
  if (field < 0) {
    argument_error(kCall, c.ep_rank, "unknown field '" + id + "' in " + config.path);
  }
  const xios_lite::GridDef& grid =
      config.grids[static_cast<std::size_t>(config.fields[static_cast<std::size_t>(field)].grid)];
  const std::string& domain = config.domains[static_cast<std::size_t>(grid.domain)].id;
  const auto block = c.blocks.find(domain);
  if (block == c.blocks.end()) {
    argument_error(kCall, c.ep_rank,
                   "field '" + id + "': this client has no block of domain '" + domain +
                       "' (call set_domain_block first)");
  }
  std::vector<std::int64_t> shape{block->second.ni, block->second.nj};
  meaning = "(ni, nj) of this client's block of domain '" + domain + "'";
  if (grid.axis >= 0) {
    const xios_lite::AxisDef& axis = config.axes[static_cast<std::size_t>(grid.axis)];
    shape.push_back(axis.n_glo);
    meaning =
        "(ni, nj, nk) of this client's block of domain '" + domain + "' and axis '" + axis.id + "'";
  }
  if (grid.axis2 >= 0) {
    const xios_lite::AxisDef& axis = config.axes[static_cast<std::size_t>(grid.axis)];
    const xios_lite::AxisDef& outer = config.axes[static_cast<std::size_t>(grid.axis2)];
    shape.push_back(outer.n_glo);
    meaning = "(ni, nj, n1, n2) of this client's block of domain '" + domain + "' and axes '" +
              axis.id + "' and '" + outer.id + "'";
  }
  return shape;
}

// The number of values of a send with these extents; throws when they are
// not those of the field's definition on this client.
std::size_t checked_size(const xios_lite_client_s& c, const std::string& field, const void* data,
                         int rank, const int64_t* extents,
                         const char* call = "xios_lite_send_field") {
  if (rank < 1 || rank > 4 || extents == nullptr) {
    argument_error(call, c.ep_rank,
                   "field '" + field + "': array rank " + std::to_string(rank) +
                       (extents == nullptr ? " with null extents" : " is not 1 to 4"));
  }
  const std::vector<std::int64_t> given(extents, extents + rank);
  if (!c.client->config().complete) {
    // Before close_definition: the Client refuses the send with its own message.
    std::size_t n = 1;
    for (const std::int64_t e : given) n *= static_cast<std::size_t>(std::max<std::int64_t>(e, 0));
    return n;
  }
  if (c.client->config().find_field(field) < 0) {
    argument_error(call, c.ep_rank, "unknown field '" + field + "' in " + c.client->config().path);
  }
  const xios_lite::SendShape shape = c.client->send_shape(field);
  if (!shape.block) {
    // The model's own array (data_*): any rank whose extents hold the
    // values of a level, then the levels (the last extents, when there are
    // several levels and several extents).
    std::size_t n = 1;
    for (const std::int64_t e : given) n *= static_cast<std::size_t>(std::max<std::int64_t>(e, 0));
    // The levels are the last extents (one axis, or two: n1, n2).
    bool levels_last = shape.levels == 1 || given.size() == 1;
    std::int64_t trailing = 1;
    for (std::size_t d = given.size(); d-- > 1 && !levels_last;) {
      trailing *= given[d];
      levels_last = trailing == static_cast<std::int64_t>(shape.levels);
    }
    if (n != shape.per_level * static_cast<std::size_t>(shape.levels) || !levels_last) {
      throw ep::Error(ep::ErrorKind::kCount, call, c.ep_rank,
                      "field '" + field + "': array shape " + shape_string(given) + " (" +
                          std::to_string(n) + " values) does not match " +
                          std::to_string(shape.per_level) + " values per level x " +
                          std::to_string(shape.levels) + " levels = " + shape.meaning);
    }
    if (data == nullptr && n > 0) {
      argument_error(call, c.ep_rank, "field '" + field + "': null data");
    }
    return n;
  }
  std::string meaning;
  const std::vector<std::int64_t> expected = expected_shape(c, field, meaning);
  if (given != expected) {
    throw ep::Error(ep::ErrorKind::kCount, call, c.ep_rank,
                    "field '" + field + "': array shape " + shape_string(given) +
                        " does not match " + shape_string(expected) + " = " + meaning);
  }
  std::size_t n = 1;
  for (const std::int64_t e : given) {
    n *= static_cast<std::size_t>(e);
  }
  if (data == nullptr && n > 0) {
    argument_error(call, c.ep_rank, "field '" + field + "': null data");
  }
  return n;
}

xios_lite_world_s* split(MPI_Comm comm, xios_lite::Role role, const char* context = nullptr) {
  auto world = std::make_unique<xios_lite_world_s>();
  world->world = xios_lite::split_world(comm, role, context != nullptr ? context : "");
  return world.release();
}

// send_field of either precision, with the shape checks.
template <typename T>
int send_field(xios_lite_client_t client, const char* id, const T* data, int rank,
               const int64_t* extents) {
  constexpr const char* kCall = "xios_lite_send_field";
  return guarded([&] {
    xios_lite_client_s& c = checked(client, kCall);
    const std::string field = checked_string(id, kCall, "field id", c.ep_rank);
    std::size_t n = 0;
    try {
      n = checked_size(c, field, data, rank, extents);
    } catch (const ep::Error&) {
      if (c.mode != xios_lite::Mode::kEndpoints) {
        // In these modes send_field meets the process's other threads even
        // when it fails, so that all of them fail together instead of the
        // others waiting for this one: take part with no values (refused
        // there too), then report this thread's own message.
        try {
          c.client->send_field(field, std::span<const T>());
        } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): reported below
        }
      }
      throw;
    }
    c.client->send_field(field, std::span<const T>(data, n));
  });
}

using xios_lite::AxisAttributes;
using xios_lite::DomainAttributes;

// The member of Attributes with XIOS name `attr` (model_members(), from the
// attribute table) whose type is T, the kind of value the call takes; else
// an argument error "'attr' is not <what> (<the names of that type>)".
template <class T, class Attributes>
T Attributes::*named_member(const std::string& attr, const char* call, int ep_rank,
                            const char* what) {
  std::string names;
  for (const auto& m : xios_lite::model_members<Attributes>()) {
    T Attributes::*const* member = std::get_if<T Attributes::*>(&m.member);
    if (member == nullptr) continue;
    if (attr == m.name) return *member;
    names += (names.empty() ? "" : ", ") + std::string(m.name);
  }
  argument_error(call, ep_rank, "'" + attr + "' is not " + what + " (" + names + ")");
}

// What a set_{domain,axis}_attr_* call set: the client, the element and the
// attributes handed to set_domain_attr or set_axis_attr.
template <class Attributes>
struct AttributeSet {
  xios_lite_client_s& c;
  std::string id;
  Attributes attributes;
};

// A set_{domain,axis}_attr_* call: checks the client, the element's id and
// the attribute's name (a member of Attributes of type T; `what` names the
// kind in the error), sets that member of otherwise empty attributes to
// value_of(client record, name) and hands them to the client.
template <class T, class Attributes, class ValueOf>
AttributeSet<Attributes> set_named_attribute(xios_lite_client_t client, const char* call,
                                             const char* id, const char* name, const char* what,
                                             ValueOf&& value_of) {
  constexpr bool kDomain = std::is_same_v<Attributes, DomainAttributes>;
  xios_lite_client_s& c = checked(client, call);
  AttributeSet<Attributes> set{
      c, checked_string(id, call, kDomain ? "domain id" : "axis id", c.ep_rank), {}};
  const std::string attr = checked_string(name, call, "attribute name", c.ep_rank);
  T Attributes::*const member = named_member<T, Attributes>(attr, call, c.ep_rank, what);
  set.attributes.*member = value_of(static_cast<const xios_lite_client_s&>(c), attr);
  if constexpr (kDomain) {
    c.client->set_domain_attr(set.id, set.attributes);
  } else {
    c.client->set_axis_attr(set.id, set.attributes);
  }
  return set;
}

// The value of an index attribute for set_named_attribute: `n` entries of
// `values`, refused naming `call`, the rank and the count when n is negative
// or the values are null.
auto index_values(const char* call, const int* values, int n) {
  return [=](const xios_lite_client_s& c, const std::string& attr) {
    if (n < 0 || (values == nullptr && n > 0)) {
      argument_error(
          call, c.ep_rank,
          attr + ": " + std::to_string(n) + " values" + (values == nullptr ? " from null" : ""));
    }
    return std::vector<int>(values, values + n);
  };
}

// The number of values of an array of `rank` extents (XIOS's arrays of 1 to 3 dimensions).
std::size_t array_size(const char* call, int ep_rank, const std::string& what, const void* data,
                       int rank, const int64_t* extents) {
  if (rank < 1 || rank > 3 || extents == nullptr) {
    argument_error(call, ep_rank, what + ": array rank " + std::to_string(rank) + " is not 1 to 3");
  }
  std::size_t n = 1;
  for (int d = 0; d < rank; ++d) {
    if (extents[d] < 0) {
      argument_error(call, ep_rank, what + ": negative extent " + std::to_string(extents[d]));
    }
    n *= static_cast<std::size_t>(extents[d]);
  }
  if (data == nullptr && n > 0) {
    argument_error(call, ep_rank, what + ": null data");
  }
  return n;
}

// The value of a real array attribute for set_named_attribute: the
// array_size(rank, extents) entries of `values`.
auto array_values(const char* call, const double* values, int rank, const int64_t* extents) {
  return [=](const xios_lite_client_s& c, const std::string& attr) {
    const std::size_t n = array_size(call, c.ep_rank, attr, values, rank, extents);
    return std::vector<double>(values, values + n);
  };
}

// The value of a text attribute for set_named_attribute: `value`, refused
// when null.
auto text_value(const char* call, const char* value) {
  return [=](const xios_lite_client_s& c, const std::string&) {
    return checked_string(value, call, "value", c.ep_rank);
  };
}

}  // namespace

extern "C" {

int xios_lite_world_split(MPI_Comm world, int role, xios_lite_world_t* out) {
  return guarded([&] {
    checked(out, "xios_lite_world_split");
    if (role != XIOS_LITE_ROLE_CLIENT && role != XIOS_LITE_ROLE_SERVER) {
      argument_error("xios_lite_world_split", -1,
                     "role " + std::to_string(role) + " is neither client (0) nor server (1)");
    }
    *out = split(
        world, role == XIOS_LITE_ROLE_SERVER ? xios_lite::Role::kServer : xios_lite::Role::kClient);
  });
}

int xios_lite_world_split_f(MPI_Fint world, int role, xios_lite_world_t* out) {
  return xios_lite_world_split(MPI_Comm_f2c(world), role, out);
}

int xios_lite_world_split_context(MPI_Comm world, int role, const char* context,
                                  xios_lite_world_t* out) {
  return guarded([&] {
    checked(out, "xios_lite_world_split_context");
    if (role != XIOS_LITE_ROLE_CLIENT && role != XIOS_LITE_ROLE_SERVER) {
      argument_error("xios_lite_world_split_context", -1,
                     "role " + std::to_string(role) + " is neither client (0) nor server (1)");
    }
    *out = split(
        world, role == XIOS_LITE_ROLE_SERVER ? xios_lite::Role::kServer : xios_lite::Role::kClient,
        context);
  });
}

int xios_lite_world_split_context_f(MPI_Fint world, int role, const char* context,
                                    xios_lite_world_t* out) {
  return xios_lite_world_split_context(MPI_Comm_f2c(world), role, context, out);
}

int xios_lite_world_split_last_ranks(MPI_Comm world, int n_servers, xios_lite_world_t* out) {
  return guarded([&] {
    checked(out, "xios_lite_world_split_last_ranks");
    *out = split(world, xios_lite::role_of_last_ranks(world, n_servers));
  });
}

int xios_lite_world_split_last_ranks_f(MPI_Fint world, int n_servers, xios_lite_world_t* out) {
  return xios_lite_world_split_last_ranks(MPI_Comm_f2c(world), n_servers, out);
}

int xios_lite_world_role(xios_lite_world_t world, int* role) {
  return guarded([&] {
    const xios_lite_world_s& w = checked(world, "xios_lite_world_role");
    checked(role, "xios_lite_world_role") =
        w.world.role == xios_lite::Role::kServer ? XIOS_LITE_ROLE_SERVER : XIOS_LITE_ROLE_CLIENT;
  });
}

int xios_lite_world_local(xios_lite_world_t world, MPI_Comm* local) {
  return guarded([&] {
    checked(local, "xios_lite_world_local") = checked(world, "xios_lite_world_local").world.local;
  });
}

int xios_lite_world_local_f(xios_lite_world_t world, MPI_Fint* local) {
  return guarded([&] {
    checked(local, "xios_lite_world_local_f") =
        MPI_Comm_c2f(checked(world, "xios_lite_world_local_f").world.local);
  });
}

int xios_lite_world_free(xios_lite_world_t* world) {
  return guarded([&] {
    std::unique_ptr<xios_lite_world_s> w(checked(world, "xios_lite_world_free"));
    *world = nullptr;
    xios_lite::free_world(checked(w.get(), "xios_lite_world_free").world);
  });
}

int xios_lite_run_server(xios_lite_world_t world, const char* config_path) {
  return guarded([&] {
    const xios_lite_world_s& w = checked(world, "xios_lite_run_server");
    (void)xios_lite::run_server(
        w.world, checked_string(config_path, "xios_lite_run_server", "config path", -1));
  });
}

int xios_lite_client_create(ep_comm_t comm, xios_lite_world_t world, const char* config_path,
                            int mode, xios_lite_client_t* out) {
  constexpr const char* kCall = "xios_lite_client_create";
  return guarded([&] {
    const ep::Communicator& ep_comm = checked(comm, kCall).comm;
    const int rank = ep_comm.rank();
    checked(out, kCall, rank);
    const xios_lite_world_s& w = checked(world, kCall, rank);
    const std::string path = checked_string(config_path, kCall, "config path", rank);
    xios_lite::ClientOptions options;
    // The C constants are the enumerators' values.
    static_assert(XIOS_LITE_MODE_ENDPOINTS == static_cast<int>(xios_lite::Mode::kEndpoints) &&
                  XIOS_LITE_MODE_FUNNELED == static_cast<int>(xios_lite::Mode::kFunneled) &&
                  XIOS_LITE_MODE_SYNCHRONOUS == static_cast<int>(xios_lite::Mode::kSynchronous));
    if (mode < XIOS_LITE_MODE_ENDPOINTS || mode > XIOS_LITE_MODE_SYNCHRONOUS) {
      // Every endpoint passes the same mode, so every one fails here alike.
      argument_error(kCall, rank, "mode " + std::to_string(mode) + " is not 0, 1 or 2");
    }
    options.mode = static_cast<xios_lite::Mode>(mode);
    auto c = std::make_unique<xios_lite_client_s>();
    c->ep_rank = rank;
    c->mode = options.mode;
    // The client parses the same file (and fails collectively on a bad one)
    // before this copy is read for the shape checks.
    c->client = std::make_unique<xios_lite::Client>(ep_comm, w.world, path, options);
    *out = c.release();
  });
}

int xios_lite_set_domain_block(xios_lite_client_t client, const char* domain_id, int ibegin, int ni,
                               int jbegin, int nj) {
  constexpr const char* kCall = "xios_lite_set_domain_block";
  return guarded([&] {
    xios_lite_client_s& c = checked(client, kCall);
    const std::string domain = checked_string(domain_id, kCall, "domain id", c.ep_rank);
    const xios_lite::Block block{ibegin, ni, jbegin, nj};
    c.client->set_domain_block(domain, block);
    c.blocks[domain] = block;
  });
}

int xios_lite_set_domain_mask(xios_lite_client_t client, const char* domain_id, const int* valid,
                              int ni, int nj) {
  constexpr const char* kCall = "xios_lite_set_domain_mask";
  return guarded([&] {
    xios_lite_client_s& c = checked(client, kCall);
    const std::string domain = checked_string(domain_id, kCall, "domain id", c.ep_rank);
    const auto block = c.blocks.find(domain);
    if (block != c.blocks.end() && (block->second.ni != ni || block->second.nj != nj)) {
      throw ep::Error(ep::ErrorKind::kCount, kCall, c.ep_rank,
                      "domain '" + domain + "': mask shape (" + std::to_string(ni) + ", " +
                          std::to_string(nj) + ") does not match (" +
                          std::to_string(block->second.ni) + ", " +
                          std::to_string(block->second.nj) + ") = (ni, nj) of this client's block");
    }
    const std::size_t n =
        ni > 0 && nj > 0 ? static_cast<std::size_t>(ni) * static_cast<std::size_t>(nj) : 0;
    if (valid == nullptr && n > 0) {
      argument_error(kCall, c.ep_rank, "domain '" + domain + "': null mask");
    }
    const std::unique_ptr<bool[]> flags(new bool[n + 1]);
    for (std::size_t i = 0; i < n; ++i) {
      flags[i] = valid[i] != 0;
    }
    c.client->set_domain_mask(domain, std::span<const bool>(flags.get(), n));
  });
}

int xios_lite_set_domain_attr_int(xios_lite_client_t client, const char* domain_id,
                                  const char* name, int value) {
  return guarded([&] {
    const auto set = set_named_attribute<std::optional<int>, DomainAttributes>(
        client, "xios_lite_set_domain_attr_int", domain_id, name, "an integer domain attribute",
        [&](const xios_lite_client_s&, const std::string&) { return value; });
    // The block as set_domain_block would have it, for the shape checks.
    xios_lite::DomainAttributes& part = set.c.block_parts[set.id];
    for (const auto member : {&DomainAttributes::ibegin, &DomainAttributes::ni,
                              &DomainAttributes::jbegin, &DomainAttributes::nj}) {
      if (set.attributes.*member) part.*member = set.attributes.*member;
    }
    if (part.ibegin && part.ni && part.jbegin && part.nj) {
      set.c.blocks[set.id] = {*part.ibegin, *part.ni, *part.jbegin, *part.nj};
    }
  });
}

int xios_lite_set_domain_attr_index(xios_lite_client_t client, const char* domain_id,
                                    const char* name, const int* values, int n) {
  constexpr const char* kCall = "xios_lite_set_domain_attr_index";
  return guarded([&] {
    set_named_attribute<std::vector<int>, DomainAttributes>(client, kCall, domain_id, name,
                                                            "an index domain attribute",
                                                            index_values(kCall, values, n));
  });
}

int xios_lite_set_domain_attr_double(xios_lite_client_t client, const char* domain_id,
                                     const char* name, const double* values, int rank,
                                     const int64_t* extents) {
  constexpr const char* kCall = "xios_lite_set_domain_attr_double";
  return guarded([&] {
    set_named_attribute<std::vector<double>, DomainAttributes>(
        client, kCall, domain_id, name, "an array domain attribute",
        array_values(kCall, values, rank, extents));
  });
}

int xios_lite_set_domain_attr_text(xios_lite_client_t client, const char* domain_id,
                                   const char* name, const char* value) {
  constexpr const char* kCall = "xios_lite_set_domain_attr_text";
  return guarded([&] {
    set_named_attribute<std::optional<std::string>, DomainAttributes>(
        client, kCall, domain_id, name, "a text domain attribute", text_value(kCall, value));
  });
}

int xios_lite_set_domain_attr_mask(xios_lite_client_t client, const char* domain_id,
                                   const int* valid, int rank, const int64_t* extents) {
  constexpr const char* kCall = "xios_lite_set_domain_attr_mask";
  return guarded([&] {
    xios_lite_client_s& c = checked(client, kCall);
    const std::string domain = checked_string(domain_id, kCall, "domain id", c.ep_rank);
    const std::size_t n = array_size(kCall, c.ep_rank, "mask", valid, rank, extents);
    xios_lite::DomainAttributes a;
    a.mask.assign(n, true);
    for (std::size_t i = 0; i < n; ++i) {
      a.mask[i] = valid[i] != 0;
    }
    c.client->set_domain_attr(domain, a);
  });
}

int xios_lite_set_axis_attr_int(xios_lite_client_t client, const char* axis_id, const char* name,
                                int value) {
  return guarded([&] {
    set_named_attribute<std::optional<int>, AxisAttributes>(
        client, "xios_lite_set_axis_attr_int", axis_id, name, "an integer axis attribute",
        [&](const xios_lite_client_s&, const std::string&) { return value; });
  });
}

int xios_lite_set_axis_attr_index(xios_lite_client_t client, const char* axis_id, const char* name,
                                  const int* values, int n) {
  constexpr const char* kCall = "xios_lite_set_axis_attr_index";
  return guarded([&] {
    set_named_attribute<std::vector<int>, AxisAttributes>(
        client, kCall, axis_id, name, "an index axis attribute", index_values(kCall, values, n));
  });
}

int xios_lite_set_axis_attr_double(xios_lite_client_t client, const char* axis_id, const char* name,
                                   const double* values, int rank, const int64_t* extents) {
  constexpr const char* kCall = "xios_lite_set_axis_attr_double";
  return guarded([&] {
    set_named_attribute<std::vector<double>, AxisAttributes>(
        client, kCall, axis_id, name, "an array axis attribute",
        array_values(kCall, values, rank, extents));
  });
}

int xios_lite_set_axis_attr_text(xios_lite_client_t client, const char* axis_id, const char* name,
                                 const char* value) {
  constexpr const char* kCall = "xios_lite_set_axis_attr_text";
  return guarded([&] {
    set_named_attribute<std::optional<std::string>, AxisAttributes>(
        client, kCall, axis_id, name, "a text axis attribute", text_value(kCall, value));
  });
}

int xios_lite_define_calendar(xios_lite_client_t client, const char* type, const char* start_date,
                              const char* time_origin, const char* timestep) {
  constexpr const char* kCall = "xios_lite_define_calendar";
  return guarded([&] {
    xios_lite_client_s& c = checked(client, kCall);
    xios_lite::CalendarAttributes cal;
    if (type != nullptr && *type != '\0') cal.type = type;
    if (start_date != nullptr && *start_date != '\0') cal.start_date = start_date;
    if (time_origin != nullptr && *time_origin != '\0') cal.time_origin = time_origin;
    if (timestep != nullptr && *timestep != '\0') cal.timestep = timestep;
    c.client->define_calendar(cal);
  });
}

int xios_lite_define_calendar_user(xios_lite_client_t client, int64_t day_length,
                                   const int* month_lengths, int months) {
  constexpr const char* kCall = "xios_lite_define_calendar_user";
  return guarded([&] {
    xios_lite_client_s& c = checked(client, kCall);
    if (months < 1 || month_lengths == nullptr) {
      argument_error(kCall, c.ep_rank, "a user_defined calendar needs at least one month");
    }
    // XIOS's day_length is an integer attribute (seconds).
    if (day_length < 1 || day_length > std::numeric_limits<int>::max()) {
      argument_error(kCall, c.ep_rank,
                     "day_length " + std::to_string(day_length) + " is not 1 to 2^31-1 seconds");
    }
    xios_lite::CalendarAttributes cal;
    cal.day_length = static_cast<int>(day_length);
    cal.month_lengths.assign(month_lengths, month_lengths + months);
    c.client->define_calendar(cal);
  });
}

int xios_lite_set_timestep(xios_lite_client_t client, const char* duration) {
  constexpr const char* kCall = "xios_lite_set_timestep";
  return guarded([&] {
    xios_lite_client_s& c = checked(client, kCall);
    c.client->set_timestep(checked_string(duration, kCall, "duration", c.ep_rank));
  });
}

int xios_lite_close_definition(xios_lite_client_t client) {
  return guarded([&] { checked(client, "xios_lite_close_definition").client->close_definition(); });
}

int xios_lite_update_calendar(xios_lite_client_t client, int64_t step) {
  return guarded(
      [&] { checked(client, "xios_lite_update_calendar").client->update_calendar(step); });
}

int xios_lite_send_field(xios_lite_client_t client, const char* id, const double* data, int rank,
                         const int64_t* extents) {
  return send_field(client, id, data, rank, extents);
}

int xios_lite_send_field_float(xios_lite_client_t client, const char* id, const float* data,
                               int rank, const int64_t* extents) {
  return send_field(client, id, data, rank, extents);
}

int xios_lite_recv_field(xios_lite_client_t client, const char* id, double* data, int rank,
                         const int64_t* extents) {
  constexpr const char* kCall = "xios_lite_recv_field";
  return guarded([&] {
    xios_lite_client_s& c = checked(client, kCall);
    const std::string field = checked_string(id, kCall, "field id", c.ep_rank);
    const std::size_t n = checked_size(c, field, data, rank, extents, kCall);
    c.client->recv_field(field, std::span<double>(data, n));
  });
}

int xios_lite_finalise(xios_lite_client_t* client) {
  return guarded([&] {
    std::unique_ptr<xios_lite_client_s> c(checked(client, "xios_lite_finalise"));
    *client = nullptr;
    (void)checked(c.get(), "xios_lite_finalise").client->finalise();
  });
}

int xios_lite_client_free(xios_lite_client_t* client) {
  return guarded([&] {
    std::unique_ptr<xios_lite_client_s> c(checked(client, "xios_lite_client_free"));
    *client = nullptr;
    checked(c.get(), "xios_lite_client_free");
  });
}

const char* xios_lite_last_error(void) { return common::c_api::last_error(); }

}  // extern "C"
