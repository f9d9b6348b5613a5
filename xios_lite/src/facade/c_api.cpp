// XIOS's C layer (xios_lite/xios.h) over the facade: exceptions become
// return codes and the calling thread's message (ep/c_shim.hpp).
#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "c_codes.hpp"
#include "ep/c_handle.hpp"
#include "ep/error.hpp"
#include "facade/facade.hpp"
#include "xios_lite/xios.h"

namespace xios_lite::facade {
namespace {

template <typename Body>
int guarded(Body&& body) noexcept {
  return xios_lite::c_api::guarded("xios", std::forward<Body>(body));
}

// A string as Fortran passes it: its length, without its trailing blanks.
std::string text(const char* s, int len) {
  if (s == nullptr || len <= 0) return {};
  std::string out(s, static_cast<std::size_t>(len));
  const auto end = out.find_last_not_of(' ');
  out.erase(end == std::string::npos ? 0 : end + 1);
  return out;
}

void blank_padded(const std::string& from, char* to, int len) {
  if (to == nullptr || len <= 0) return;
  const auto n = std::min<std::size_t>(from.size(), static_cast<std::size_t>(len));
  // Fortran's blank-padded form: no terminating null.
  std::copy_n(from.data(), n, to);
  std::fill(to + n, to + len, ' ');
}

Handle* handle(xios_handle_t h) { return static_cast<Handle*>(h); }

std::int64_t count_of(int rank, const std::int64_t* extents) {
  if (rank <= 0) return 1;
  return std::accumulate(extents, extents + rank, std::int64_t{1}, std::multiplies<>());
}

Value value_in(int type, const void* value, int rank, const std::int64_t* extents) {
  Value v;
  v.type = static_cast<AttributeType>(type);
  const std::int64_t n = count_of(rank, extents);
  switch (v.type) {
    case AttributeType::kString:
      v.text = text(static_cast<const char*>(value),
                    extents != nullptr ? static_cast<int>(extents[0]) : 0);
      break;
    case AttributeType::kBool:
      v.flag = *static_cast<const int*>(value) != 0;
      break;
    case AttributeType::kInt:
      v.integer = *static_cast<const int*>(value);
      break;
    case AttributeType::kDouble:
      v.real = *static_cast<const double*>(value);
      break;
    case AttributeType::kDuration:
      v.duration = *static_cast<const cxios_duration*>(value);
      break;
    case AttributeType::kDate:
      v.date = *static_cast<const cxios_date*>(value);
      break;
    case AttributeType::kInt1d:
    case AttributeType::kBool1d:
    case AttributeType::kBool2d: {
      const int* p = static_cast<const int*>(value);
      v.integers.assign(p, p + n);
      break;
    }
    case AttributeType::kDouble1d:
    case AttributeType::kDouble2d:
    case AttributeType::kDouble3d: {
      const double* p = static_cast<const double*>(value);
      v.reals.assign(p, p + n);
      break;
    }
  }
  if (rank > 0) v.extents.assign(extents, extents + rank);
  return v;
}

void value_out(const Value& v, void* value, int rank, const std::int64_t* extents) {
  const std::int64_t n = count_of(rank, extents);
  switch (v.type) {
    case AttributeType::kString:
      blank_padded(v.text, static_cast<char*>(value),
                   extents != nullptr ? static_cast<int>(extents[0]) : 0);
      break;
    case AttributeType::kBool:
      *static_cast<int*>(value) = v.flag ? 1 : 0;
      break;
    case AttributeType::kInt:
      *static_cast<int*>(value) = static_cast<int>(v.integer);
      break;
    case AttributeType::kDouble:
      *static_cast<double*>(value) = v.real;
      break;
    case AttributeType::kDuration:
      *static_cast<cxios_duration*>(value) = v.duration;
      break;
    case AttributeType::kDate:
      *static_cast<cxios_date*>(value) = v.date;
      break;
    case AttributeType::kInt1d:
    case AttributeType::kBool1d:
    case AttributeType::kBool2d:
      std::copy_n(v.integers.begin(), std::min<std::int64_t>(n, std::ssize(v.integers)),
                  static_cast<int*>(value));
      break;
    case AttributeType::kDouble1d:
    case AttributeType::kDouble2d:
    case AttributeType::kDouble3d:
      std::copy_n(v.reals.begin(), std::min<std::int64_t>(n, std::ssize(v.reals)),
                  static_cast<double*>(value));
      break;
  }
}

int set_attr(xios_handle_t h, const char* name, int type, const void* value, int rank,
             const std::int64_t* extents) {
  return guarded([&] { set_attribute(handle(h), name, value_in(type, value, rank, extents)); });
}

int get_attr(xios_handle_t h, const char* name, int type, void* value, int rank,
             const std::int64_t* extents, int* defined) {
  return guarded([&] {
    Value v;
    v.type = static_cast<AttributeType>(type);
    const bool found = get_attribute(handle(h), name, v);
    if (defined != nullptr) *defined = found ? 1 : 0;
    if (found) value_out(v, value, rank, extents);
  });
}

bool defined(xios_handle_t h, const char* name) {
  bool out = false;
  (void)guarded([&] { out = is_defined(handle(h), name); });
  return out;
}

int make_handle(const char* kind, const char* id, int len, xios_handle_t* out) {
  return guarded([&] {
    if (out == nullptr)
      throw ep::Error(ep::ErrorKind::kArgument, "xios_get_handle", -1, "null out");
    *out = get_handle(kind, text(id, len));
  });
}

std::vector<bool> bools(const bool* v, std::int64_t n) { return std::vector<bool>(v, v + n); }

}  // namespace
}  // namespace xios_lite::facade

using namespace xios_lite::facade;  // NOLINT(google-build-using-namespace): the C layer's one TU

extern "C" {

int cxios_init_client(const char* client_id, int len, const MPI_Fint* local_comm,
                      MPI_Fint* return_comm) {
  return guarded([&] {
    std::optional<MPI_Comm> local;
    if (local_comm != nullptr) local = MPI_Comm_f2c(*local_comm);
    const MPI_Comm comm = initialize(text(client_id, len), local);
    if (return_comm != nullptr) *return_comm = MPI_Comm_c2f(comm);
  });
}

int cxios_finalize(void) {
  return guarded([] { finalize(); });
}

int cxios_context_initialize(const char* context_id, int len, const MPI_Fint* comm) {
  return guarded([&] {
    if (comm == nullptr) {
      throw ep::Error(ep::ErrorKind::kArgument, "xios_context_initialize", -1, "null communicator");
    }
    context_initialize(text(context_id, len), MPI_Comm_f2c(*comm));
  });
}

int cxios_context_initialize_ep(const char* context_id, int len, ep_comm_t comm) {
  return guarded([&] {
    if (comm == nullptr) {
      throw ep::Error(ep::ErrorKind::kArgument, "xios_context_initialize", -1, "null endpoint");
    }
    context_initialize(text(context_id, len), comm->comm);
  });
}

int cxios_context_close_definition(void) {
  return guarded([] { close_context_definition(); });
}
int cxios_context_finalize(void) {
  return guarded([] { context_finalize(); });
}
int cxios_solve_inheritance(void) {
  return guarded([] { (void)current_context(); });
}
int cxios_context_set_current(xios_handle_t context) {
  return guarded([&] { set_current_context(handle(context)); });
}
int cxios_context_get_current(xios_handle_t* context) {
  return guarded([&] { *context = current_context(); });
}

int cxios_handle_create(const char* kind, const char* id, int len, xios_handle_t* out) {
  return make_handle(kind, id, len, out);
}

bool cxios_valid_id(const char* kind, const char* id, int len) {
  bool out = false;
  (void)guarded([&] { out = is_valid(kind, text(id, len)); });
  return out;
}

int cxios_add_child(xios_handle_t parent, const char* child_kind, const char* id, int id_len,
                    xios_handle_t* child) {
  return guarded([&] {
    const std::string name = text(id, id_len);
    *child = add_child(handle(parent), child_kind, id_len >= 0 ? &name : nullptr);
  });
}

int cxios_set_attr(xios_handle_t h, const char* name, int name_len, int type, const void* value,
                   int rank, const int64_t* extents) {
  return set_attr(h, text(name, name_len).c_str(), type, value, rank, extents);
}

int cxios_get_attr(xios_handle_t h, const char* name, int name_len, int type, void* value, int rank,
                   const int64_t* extents, int* defined_out) {
  return get_attr(h, text(name, name_len).c_str(), type, value, rank, extents, defined_out);
}

bool cxios_is_defined_attr(xios_handle_t h, const char* name, int name_len) {
  return defined(h, text(name, name_len).c_str());
}

// ---- one call per attribute (xios_attributes.def) ----
#define XIOS_SET_string       \
  const int64_t e[1] = {len}; \
  return set_attr(hdl, name, CXIOS_STRING, value, 1, e);
#define XIOS_GET_string       \
  const int64_t e[1] = {len}; \
  return get_attr(hdl, name, CXIOS_STRING, value, 1, e, nullptr);
#define XIOS_SET_SCALAR(code, ctype) \
  const ctype v = value;             \
  return set_attr(hdl, name, code, &v, 0, nullptr);
#define XIOS_GET_SCALAR(code, ctype)                                \
  ctype v{};                                                        \
  int found = 0;                                                    \
  const int rc = get_attr(hdl, name, code, &v, 0, nullptr, &found); \
  if (rc == 0 && found != 0) *value = v;                            \
  return rc;
#define XIOS_SET_bool XIOS_SET_SCALAR(CXIOS_BOOL, int)
#define XIOS_GET_bool                                                     \
  int v = 0;                                                              \
  int found = 0;                                                          \
  const int rc = get_attr(hdl, name, CXIOS_BOOL, &v, 0, nullptr, &found); \
  if (rc == 0 && found != 0) *value = v != 0;                             \
  return rc;
#define XIOS_SET_int XIOS_SET_SCALAR(CXIOS_INT, int)
#define XIOS_GET_int XIOS_GET_SCALAR(CXIOS_INT, int)
#define XIOS_SET_double XIOS_SET_SCALAR(CXIOS_DOUBLE, double)
#define XIOS_GET_double XIOS_GET_SCALAR(CXIOS_DOUBLE, double)
#define XIOS_SET_duration XIOS_SET_SCALAR(CXIOS_DURATION, cxios_duration)
#define XIOS_GET_duration XIOS_GET_SCALAR(CXIOS_DURATION, cxios_duration)
#define XIOS_SET_date XIOS_SET_SCALAR(CXIOS_DATE, cxios_date)
#define XIOS_GET_date XIOS_GET_SCALAR(CXIOS_DATE, cxios_date)
#define XIOS_SET_int_1d           \
  const int64_t e[1] = {extent1}; \
  return set_attr(hdl, name, CXIOS_INT_1D, value, 1, e);
#define XIOS_GET_int_1d           \
  const int64_t e[1] = {extent1}; \
  return get_attr(hdl, name, CXIOS_INT_1D, value, 1, e, nullptr);
#define XIOS_SET_BOOLS(code, rank, ...)                        \
  const int64_t e[rank] = {__VA_ARGS__};                       \
  const std::vector<bool> b = bools(value, count_of(rank, e)); \
  std::vector<int> ints(b.begin(), b.end());                   \
  return set_attr(hdl, name, code, ints.data(), rank, e);
#define XIOS_GET_BOOLS(code, rank, ...)                                   \
  const int64_t e[rank] = {__VA_ARGS__};                                  \
  std::vector<int> ints(static_cast<std::size_t>(count_of(rank, e)));     \
  int found = 0;                                                          \
  const int rc = get_attr(hdl, name, code, ints.data(), rank, e, &found); \
  if (rc == 0 && found != 0) std::copy(ints.begin(), ints.end(), value);  \
  return rc;
#define XIOS_SET_bool_1d XIOS_SET_BOOLS(CXIOS_BOOL_1D, 1, extent1)
#define XIOS_GET_bool_1d XIOS_GET_BOOLS(CXIOS_BOOL_1D, 1, extent1)
#define XIOS_SET_bool_2d XIOS_SET_BOOLS(CXIOS_BOOL_2D, 2, extent1, extent2)
#define XIOS_GET_bool_2d XIOS_GET_BOOLS(CXIOS_BOOL_2D, 2, extent1, extent2)
#define XIOS_SET_REALS(code, rank, ...)  \
  const int64_t e[rank] = {__VA_ARGS__}; \
  return set_attr(hdl, name, code, value, rank, e);
#define XIOS_GET_REALS(code, rank, ...)  \
  const int64_t e[rank] = {__VA_ARGS__}; \
  return get_attr(hdl, name, code, value, rank, e, nullptr);
#define XIOS_SET_double_1d XIOS_SET_REALS(CXIOS_DOUBLE_1D, 1, extent1)
#define XIOS_GET_double_1d XIOS_GET_REALS(CXIOS_DOUBLE_1D, 1, extent1)
#define XIOS_SET_double_2d XIOS_SET_REALS(CXIOS_DOUBLE_2D, 2, extent1, extent2)
#define XIOS_GET_double_2d XIOS_GET_REALS(CXIOS_DOUBLE_2D, 2, extent1, extent2)
#define XIOS_SET_double_3d XIOS_SET_REALS(CXIOS_DOUBLE_3D, 3, extent1, extent2, extent3)
#define XIOS_GET_double_3d XIOS_GET_REALS(CXIOS_DOUBLE_3D, 3, extent1, extent2, extent3)

#define XIOS_C_DEFINE(kind, attr, type)                                 \
  int cxios_set_##kind##_##attr(xios_handle_t hdl, XIOS_C_##type) {     \
    const char* name = #attr;                                           \
    XIOS_SET_##type                                                     \
  }                                                                     \
  int cxios_get_##kind##_##attr(xios_handle_t hdl, XIOS_C_OUT_##type) { \
    const char* name = #attr;                                           \
    XIOS_GET_##type                                                     \
  }                                                                     \
  bool cxios_is_defined_##kind##_##attr(xios_handle_t hdl) { return defined(hdl, #attr); }

#undef XIOS_C_DECLARE
#define XIOS_C_DECLARE(kind, name, type) XIOS_C_DEFINE(kind, name, type)
#define XIOS_ATTRIBUTE(kind, name, type, use) \
  XIOS_C_DECLARE(kind, name, type)            \
  XIOS_C_GROUPED_##kind(name, type)
#include "xios_lite/xios_attributes.def"
#undef XIOS_ATTRIBUTE

#define XIOS_C_HANDLE(kind)                                                       \
  int cxios_##kind##_handle_create(xios_handle_t* out, const char* id, int len) { \
    return make_handle(#kind, id, len, out);                                      \
  }
XIOS_C_HANDLE_KINDS(XIOS_C_HANDLE)
#undef XIOS_C_HANDLE

// ---- the calendar ----
int cxios_set_timestep(cxios_duration timestep) {
  return guarded([&] {
    set_timestep({timestep.year, timestep.month, timestep.day, timestep.hour, timestep.minute,
                  timestep.second, timestep.timestep});
  });
}

int cxios_get_calendar_type(char* type, int len) {
  return guarded([&] { blank_padded(calendar_type(), type, len); });
}

int cxios_get_time_origin(cxios_date* date) {
  return guarded([&] { *date = time_origin(); });
}
int cxios_get_start_date(cxios_date* date) {
  return guarded([&] { *date = start_date(); });
}
int cxios_set_time_origin(cxios_date date) {
  return guarded([&] { set_time_origin(date); });
}
int cxios_set_start_date(cxios_date date) {
  return guarded([&] { set_start_date(date); });
}

// ---- the time loop ----
int cxios_update_calendar(int step) {
  return guarded([&] { update_calendar(step); });
}

int cxios_write_data_k8(const char* field_id, int len, const double* data, int rank,
                        const int64_t* extents) {
  return guarded([&] {
    const auto n = static_cast<std::size_t>(count_of(rank, extents));
    send_field(text(field_id, len), std::span<const double>(data, n),
               std::span<const std::int64_t>(extents, static_cast<std::size_t>(std::max(rank, 0))));
  });
}

int cxios_write_data_k4(const char* field_id, int len, const float* data, int rank,
                        const int64_t* extents) {
  return guarded([&] {
    const auto n = static_cast<std::size_t>(count_of(rank, extents));
    send_field(text(field_id, len), std::span<const float>(data, n),
               std::span<const std::int64_t>(extents, static_cast<std::size_t>(std::max(rank, 0))));
  });
}

int cxios_read_data_k8(const char* field_id, int len, double* data, int rank,
                       const int64_t* extents) {
  return guarded([&] {
    const auto n = static_cast<std::size_t>(count_of(rank, extents));
    recv_field(text(field_id, len), std::span<double>(data, n),
               std::span<const std::int64_t>(extents, static_cast<std::size_t>(std::max(rank, 0))));
  });
}

int cxios_write_data_k80(const char* field_id, int len, const double* data) {
  return cxios_write_data_k8(field_id, len, data, 0, nullptr);
}
int cxios_write_data_k81(const char* field_id, int len, const double* data, int extent1) {
  const int64_t e[1] = {extent1};
  return cxios_write_data_k8(field_id, len, data, 1, e);
}
int cxios_write_data_k82(const char* field_id, int len, const double* data, int extent1,
                         int extent2) {
  const int64_t e[2] = {extent1, extent2};
  return cxios_write_data_k8(field_id, len, data, 2, e);
}
int cxios_write_data_k83(const char* field_id, int len, const double* data, int extent1,
                         int extent2, int extent3) {
  const int64_t e[3] = {extent1, extent2, extent3};
  return cxios_write_data_k8(field_id, len, data, 3, e);
}

bool cxios_field_is_active(const char* field_id, int len) {
  bool out = false;
  (void)guarded([&] { out = field_is_active(text(field_id, len)); });
  return out;
}

int cxios_field_is_active_checked(const char* field_id, int len, int* active) {
  return guarded([&] { *active = field_is_active(text(field_id, len)) ? 1 : 0; });
}

int cxios_getvar(const char* name, int len, int type, void* value, int value_len, int* found) {
  return guarded([&] {
    Value v;
    v.type = static_cast<AttributeType>(type);
    const bool present = get_variable(text(name, len), v);
    if (found != nullptr) *found = present ? 1 : 0;
    if (present) {
      const int64_t e[1] = {value_len};
      value_out(v, value, v.type == AttributeType::kString ? 1 : 0, e);
    }
  });
}

const char* cxios_last_error(void) { return common::c_api::last_error(); }

}  // extern "C"
