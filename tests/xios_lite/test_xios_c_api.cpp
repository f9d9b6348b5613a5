// The C interfaces ep/ep.h and xios_lite/xios_lite.h as a C or Fortran model
// uses them: endpoints from a communicator, a client per thread writing a
// 2-D and a 3-D field through the server (last rank), the shape checks of
// send_field, and error codes with thread-local messages instead of exceptions.
#include <gtest/gtest.h>
#include <mpi.h>
#include <omp.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "c_endpoints.hpp"
#include "ep/ep.h"
#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"
#include "xios_lite/model_attributes.hpp"
#include "xios_lite/xios_lite.h"

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// "(a, b)", as the shape-check messages write a 2-D shape.
std::string shape(int a, int b) {
  char text[64];
  std::snprintf(text, sizeof text, "(%d, %d)", a, b);
  return text;
}

int total_threads(MPI_Comm comm) {
  int threads = omp_get_max_threads();
  MPI_Allreduce(MPI_IN_PLACE, &threads, 1, MPI_INT, MPI_SUM, comm);
  return threads;
}

constexpr int kNi = 8;
constexpr int kNj = 12;
constexpr int kNk = 2;
constexpr int kSteps = 3;

double value(int step, int k, int j, int i) { return step * 1e4 + k * 1e3 + j * 10.0 + i; }

std::string config_text(const std::string& dir) {
  return xios_test::config_file("c_api.xml", {{"DIR", dir}});
}

// The last rank serves `cfg`; every other process makes an endpoint per
// thread and runs `client(world, comm, j0, nj)` on each, rows j0 .. j0 + nj
// of the domain being that endpoint's block. Frees the endpoints and the
// world, then waits for every process. A failed split is a fatal failure.
template <class Client>
// `server_error`: "" when the server must succeed, else a part of its message.
void run_clients_and_server(const std::string& cfg, Client&& client,
                            const std::string& server_error = "") {
  xios_lite_world_t world = nullptr;
  ASSERT_EQ(xios_lite_world_split_last_ranks(MPI_COMM_WORLD, 1, &world), EP_OK)
      << xios_lite_last_error();
  int role = -1;
  EXPECT_EQ(xios_lite_world_role(world, &role), EP_OK);
  if (role == XIOS_LITE_ROLE_SERVER) {
    const int rc = xios_lite_run_server(world, cfg.c_str());
    if (server_error.empty()) {
      EXPECT_EQ(rc, EP_OK) << xios_lite_last_error();
    } else {
      EXPECT_NE(rc, EP_OK);
      EXPECT_NE(std::string(xios_lite_last_error()).find(server_error), std::string::npos)
          << xios_lite_last_error();
    }
  } else {
    MPI_Comm local = MPI_COMM_NULL;
    EXPECT_EQ(xios_lite_world_local(world, &local), EP_OK);
    std::vector<ep_comm_t> comms(static_cast<std::size_t>(omp_get_max_threads()), nullptr);
#pragma omp parallel
    {
#pragma omp single
      EXPECT_EQ(ep_create_endpoints(local, omp_get_num_threads(), comms.data()), EP_OK);
      ep_comm_t comm = comms[static_cast<std::size_t>(omp_get_thread_num())];
      int rank = 0;
      int size = 1;
      ep_comm_rank(comm, &rank);
      ep_comm_size(comm, &size);
      const int j0 = kNj * rank / size;
      const int nj = kNj * (rank + 1) / size - j0;
      client(world, comm, j0, nj);
      EXPECT_EQ(ep_comm_free(&comm), EP_OK) << ep_last_error();
    }
  }
  EXPECT_EQ(xios_lite_world_free(&world), EP_OK) << xios_lite_last_error();
  MPI_Barrier(MPI_COMM_WORLD);
}

// A client of `cfg` in `mode` on this endpoint (null, and a test failure,
// when refused).
xios_lite_client_t create_client(xios_lite_world_t world, ep_comm_t comm, const std::string& cfg,
                                 int mode) {
  xios_lite_client_t client = nullptr;
  EXPECT_EQ(xios_lite_client_create(comm, world, cfg.c_str(), mode, &client), EP_OK)
      << xios_lite_last_error();
  return client;
}

// create_client, then rows j0 .. j0 + nj of domain "d" and the end of the definition.
xios_lite_client_t defined_client(xios_lite_world_t world, ep_comm_t comm, const std::string& cfg,
                                  int mode, int j0, int nj) {
  xios_lite_client_t client = create_client(world, comm, cfg, mode);
  EXPECT_EQ(xios_lite_set_domain_block(client, "d", 0, kNi, j0, nj), EP_OK)
      << xios_lite_last_error();
  EXPECT_EQ(xios_lite_close_definition(client), EP_OK) << xios_lite_last_error();
  return client;
}

// The array shapes of "flat" (ni x nj) and "deep" (ni x nj x levels) on a block of nj rows.
struct Shapes {
  explicit Shapes(int nj) : flat{kNi, nj}, deep{kNi, nj, kNk} {}
  std::int64_t flat[2];
  std::int64_t deep[3];
};

// Sends this client's blocks of flat (ni x nj) and deep (ni x nj x kNk),
// both of which must go through.
void send_flat_and_deep(xios_lite_client_t client, const std::vector<double>& flat,
                        const std::vector<double>& deep, int nj) {
  const Shapes shapes(nj);
  EXPECT_EQ(xios_lite_send_field(client, "flat", flat.data(), 2, shapes.flat), EP_OK)
      << xios_lite_last_error();
  EXPECT_EQ(xios_lite_send_field(client, "deep", deep.data(), 3, shapes.deep), EP_OK)
      << xios_lite_last_error();
}

// The file `path` written by the flat / deep tests: kSteps records of
// variables flat (ni x nj) and deep (ni x nj x kNk), value(step, level, j, i)
// everywhere (flat's level 0). `note` names the case in a failure. Called by
// the reader alone.
void expect_flat_and_deep(const std::string& path, const std::string& note) {
  const std::vector<double> flat = xios_test::read_var(path, "flat");
  const std::vector<double> deep = xios_test::read_var(path, "deep");
  ASSERT_EQ(flat.size(), static_cast<std::size_t>(kSteps * kNj * kNi)) << note;
  ASSERT_EQ(deep.size(), static_cast<std::size_t>(kSteps * kNk * kNj * kNi)) << note;
  std::size_t n2 = 0;
  std::size_t n3 = 0;
  for (int s = 1; s <= kSteps; ++s) {
    for (int k = 0; k <= kNk; ++k) {
      for (int j = 0; j < kNj; ++j) {
        for (int i = 0; i < kNi; ++i) {
          if (k == 0) {
            EXPECT_EQ(flat[n2++], value(s, 0, j, i)) << note;
          } else {
            EXPECT_EQ(deep[n3++], value(s, k, j, i)) << note;
          }
        }
      }
    }
  }
}

// config_text's configuration written into the scratch folder `dir`: its path.
std::string config_in(const std::string& dir) {
  return xios_test::write_config(dir, config_text(dir));
}

// The tests that need a server process (the last rank serves, the others'
// threads are the clients): skipped on one process.
class CApiWithServer : public ::testing::Test {
 protected:
  void SetUp() override {
    if (ep_test::world_size() < 2) GTEST_SKIP() << "needs a client and a server process";
  }
};

}  // namespace

extern "C" int c_api_refuses_null_handles(void);  // c_api_from_c.c

TEST(CApi, EndpointsReportRankSizeAndFree) {
  const int expected_size = total_threads(MPI_COMM_WORLD);
  std::vector<ep_comm_t> comms(static_cast<std::size_t>(omp_get_max_threads()), nullptr);
  int create_rc = -1;
#pragma omp parallel
  {
#pragma omp single
    create_rc = ep_create_endpoints(MPI_COMM_WORLD, omp_get_num_threads(), comms.data());
    ep_comm_t comm = comms[static_cast<std::size_t>(omp_get_thread_num())];
    int rank = -1;
    int size = -1;
    int thread = -1;
    EXPECT_EQ(ep_comm_rank(comm, &rank), EP_OK) << ep_last_error();
    EXPECT_EQ(ep_comm_size(comm, &size), EP_OK) << ep_last_error();
    EXPECT_EQ(ep_comm_local_thread(comm, &thread), EP_OK) << ep_last_error();
    EXPECT_EQ(size, expected_size);
    EXPECT_GE(rank, 0);
    EXPECT_LT(rank, size);
    EXPECT_EQ(thread, omp_get_thread_num());
    EXPECT_EQ(ep_comm_free(&comm), EP_OK) << ep_last_error();
    EXPECT_EQ(comm, nullptr);
  }
  EXPECT_EQ(create_rc, EP_OK) << ep_last_error();
}

// Point-to-point through ep.h: a ring in both directions with ep_irecv /
// ep_isend, completed by ep_wait and ep_waitall; a bad rank is a code.
TEST(CApi, PointToPointRing) {
  ep_test::on_c_endpoints([](ep_comm_t comm, int rank, int size) {
    const int right = (rank + 1) % size;
    const int left = (rank + size - 1) % size;
    std::array<double, 3> to_right{rank + 0.5, 1.0 * rank, -1.0 * rank};
    const int to_left = 100 + rank;
    std::array<double, 3> from_left{};
    int from_right = -1;
    std::array<ep_request_t, 3> reqs{};
    EXPECT_EQ(ep_irecv(from_left.data(), 3, MPI_DOUBLE, left, 1, comm, &reqs[0]), EP_OK);
    EXPECT_EQ(ep_irecv(&from_right, 1, MPI_INT, MPI_ANY_SOURCE, 2, comm, &reqs[1]), EP_OK);
    EXPECT_EQ(ep_isend(to_right.data(), 3, MPI_DOUBLE, right, 1, comm, &reqs[2]), EP_OK);
    ep_request_t last = nullptr;
    EXPECT_EQ(ep_isend(&to_left, 1, MPI_INT, left, 2, comm, &last), EP_OK);
    EXPECT_EQ(ep_wait(&last), EP_OK) << ep_last_error();
    EXPECT_EQ(last, nullptr);
    EXPECT_EQ(ep_waitall(3, reqs.data()), EP_OK) << ep_last_error();
    EXPECT_EQ(reqs[0], nullptr);
    EXPECT_EQ(from_left[0], left + 0.5);
    EXPECT_EQ(from_left[2], -1.0 * left);
    EXPECT_EQ(from_right, 100 + right);
    ep_request_t refused = nullptr;
    EXPECT_EQ(ep_isend(&to_left, 1, MPI_INT, size, 2, comm, &refused), EP_ERR_RANK);
    EXPECT_TRUE(contains(ep_last_error(), "ep rank " + std::to_string(rank))) << ep_last_error();
    EXPECT_EQ(refused, nullptr);
    EXPECT_EQ(ep_waitall(-1, nullptr), EP_ERR_COUNT);
    EXPECT_EQ(ep_barrier(comm), EP_OK) << ep_last_error();
  });
}

TEST(CApi, ErrorsAreCodesWithThreadLocalMessages) {
  int rank = 0;
  EXPECT_EQ(ep_comm_rank(nullptr, &rank), EP_ERR_ARGUMENT);
  EXPECT_TRUE(contains(ep_last_error(), "ep_comm_rank")) << ep_last_error();
  ep_comm_t null_comm = nullptr;
  EXPECT_EQ(ep_comm_free(&null_comm), EP_ERR_ARGUMENT);
  EXPECT_EQ(xios_lite_close_definition(nullptr), EP_ERR_ARGUMENT);
  EXPECT_TRUE(contains(xios_lite_last_error(), "xios_lite_close_definition"))
      << xios_lite_last_error();
  // Another thread's failure does not overwrite this thread's message.
#pragma omp parallel num_threads(2)
  if (omp_get_thread_num() == 1) {
    EXPECT_EQ(xios_lite_update_calendar(nullptr, 1), EP_ERR_ARGUMENT);
  }
  EXPECT_TRUE(contains(xios_lite_last_error(), "xios_lite_close_definition"))
      << xios_lite_last_error();
  EXPECT_EQ(c_api_refuses_null_handles(), 0);
  // A bad role is refused on every process alike (before any MPI call).
  xios_lite_world_t world = nullptr;
  EXPECT_EQ(xios_lite_world_split(MPI_COMM_WORLD, 7, &world), EP_ERR_ARGUMENT);
  EXPECT_TRUE(contains(xios_lite_last_error(), "role 7")) << xios_lite_last_error();
}

// Needs a server process: the last rank serves, the others' threads write.
TEST_F(CApiWithServer, ClientsWriteThroughServerWithShapeChecks) {
  const std::string dir = xios_test::scratch_dir("c_api");
  const std::string cfg = config_in(dir);

  run_clients_and_server(cfg, [&](xios_lite_world_t world, ep_comm_t comm, int j0, int nj) {
    xios_lite_client_t client = defined_client(world, comm, cfg, XIOS_LITE_MODE_ENDPOINTS, j0, nj);
    std::vector<double> flat(static_cast<std::size_t>(kNi * nj));
    std::vector<double> deep(static_cast<std::size_t>(kNk * kNi * nj));
    const Shapes shapes(nj);
    for (int s = 1; s <= kSteps; ++s) {
      EXPECT_EQ(xios_lite_update_calendar(client, s), EP_OK) << xios_lite_last_error();
      std::size_t n = 0;
      for (int k = 0; k < kNk; ++k) {
        for (int j = 0; j < nj; ++j) {
          for (int i = 0; i < kNi; ++i) {
            deep[n] = value(s, k + 1, j0 + j, i);
            if (k == 0) {
              flat[n] = value(s, 0, j0 + j, i);
            }
            ++n;
          }
        }
      }
      if (s == 1) {
        // Wrong shapes: refused, naming the field and both shapes; nothing is sent.
        const std::int64_t swapped[] = {nj, kNi};
        EXPECT_EQ(xios_lite_send_field(client, "flat", flat.data(), 2, swapped), EP_ERR_COUNT);
        const std::string message = xios_lite_last_error();
        EXPECT_TRUE(contains(message, "'flat'") && contains(message, shape(nj, kNi)) &&
                    contains(message, shape(kNi, nj)))
            << message;
        EXPECT_EQ(xios_lite_send_field(client, "deep", deep.data(), 2, shapes.flat), EP_ERR_COUNT);
        EXPECT_TRUE(contains(xios_lite_last_error(), "axis 'z'")) << xios_lite_last_error();
        EXPECT_EQ(xios_lite_send_field(client, "nope", flat.data(), 2, shapes.flat),
                  EP_ERR_ARGUMENT);
        EXPECT_TRUE(contains(xios_lite_last_error(), "unknown field 'nope'"))
            << xios_lite_last_error();
      }
      send_flat_and_deep(client, flat, deep, nj);
    }
    EXPECT_EQ(xios_lite_finalise(&client), EP_OK) << xios_lite_last_error();
    EXPECT_EQ(client, nullptr);
  });
  if (HasFatalFailure()) return;
  if (ep_test::world_rank() == 0) expect_flat_and_deep(dir + "/c_api_out.nc", "");
}

// Funneled mode: send_field meets the process's threads, so one thread's
// wrong shape must fail every thread of its process, not leave them waiting.
TEST_F(CApiWithServer, FunneledShapeErrorFailsTheWholeProcess) {
  const std::string dir = xios_test::scratch_dir("c_api_funneled");
  const std::string cfg = config_in(dir);

  run_clients_and_server(
      cfg,
      [&](xios_lite_world_t world, ep_comm_t comm, int j0, int nj) {
        xios_lite_client_t client =
            defined_client(world, comm, cfg, XIOS_LITE_MODE_FUNNELED, j0, nj);
        std::vector<double> flat(static_cast<std::size_t>(kNi * nj), 1.0);
        std::vector<double> deep(static_cast<std::size_t>(kNk * kNi * nj), 2.0);
        const std::int64_t wrong_shape[] = {kNi, nj + 1};
        const Shapes shapes(nj);
        // Another process may already have reported its missing step 1 (below)
        // through the servers: update_calendar raises what the servers pass on.
        const int rc1 = xios_lite_update_calendar(client, 1);
        EXPECT_TRUE(rc1 == EP_OK || contains(xios_lite_last_error(), "was due at step 1"))
            << xios_lite_last_error();
        const bool wrong = omp_get_thread_num() == 0;
        const int rc =
            xios_lite_send_field(client, "flat", flat.data(), 2, wrong ? wrong_shape : shapes.flat);
        EXPECT_NE(rc, EP_OK) << "every thread of the process fails with the one wrong shape";
        if (wrong) {
          EXPECT_EQ(rc, EP_ERR_COUNT);
          EXPECT_TRUE(contains(xios_lite_last_error(), "array shape")) << xios_lite_last_error();
        }
        // Nothing of step 1 was sent: the next step says so on every thread, and
        // so does finalise (the record of step 1 holds _FillValue).
        EXPECT_EQ(xios_lite_update_calendar(client, 2), EP_ERR_ARGUMENT);
        EXPECT_TRUE(contains(xios_lite_last_error(), "field 'flat' was due at step 1"))
            << xios_lite_last_error();
        send_flat_and_deep(client, flat, deep, nj);
        EXPECT_EQ(xios_lite_finalise(&client), EP_ERR_ARGUMENT);
        EXPECT_TRUE(contains(xios_lite_last_error(), "field 'flat' was due at step 1"))
            << xios_lite_last_error();
      },
      "field 'flat' was due at step 1");
}

namespace {

// A mask through the C interface: a wrong shape is refused naming both
// shapes; masked points (column 0) are _FillValue in the file.
TEST_F(CApiWithServer, DomainMask) {
  const std::string dir = xios_test::scratch_dir("c_api_mask");
  const std::string cfg = config_in(dir);
  run_clients_and_server(cfg, [&](xios_lite_world_t world, ep_comm_t comm, int j0, int nj) {
    xios_lite_client_t client = create_client(world, comm, cfg, XIOS_LITE_MODE_ENDPOINTS);
    EXPECT_EQ(xios_lite_set_domain_block(client, "d", 0, kNi, j0, nj), EP_OK);
    std::vector<int> valid(static_cast<std::size_t>(kNi * nj), 1);
    for (int j = 0; j < nj; ++j) {
      valid[static_cast<std::size_t>(j * kNi)] = 0;  // column 0: land
    }
    EXPECT_EQ(xios_lite_set_domain_mask(client, "d", valid.data(), nj, kNi),
              nj == kNi ? EP_OK : EP_ERR_COUNT);
    EXPECT_TRUE(nj == kNi || contains(xios_lite_last_error(), "mask shape"))
        << xios_lite_last_error();
    EXPECT_EQ(xios_lite_set_domain_mask(client, "d", valid.data(), kNi, nj), EP_OK)
        << xios_lite_last_error();
    EXPECT_EQ(xios_lite_close_definition(client), EP_OK) << xios_lite_last_error();
    std::vector<double> flat(static_cast<std::size_t>(kNi * nj), 5.0);
    std::vector<double> deep(static_cast<std::size_t>(kNk * kNi * nj), 6.0);
    for (int s = 1; s <= 2; ++s) {
      EXPECT_EQ(xios_lite_update_calendar(client, s), EP_OK) << xios_lite_last_error();
      send_flat_and_deep(client, flat, deep, nj);
    }
    EXPECT_EQ(xios_lite_finalise(&client), EP_OK) << xios_lite_last_error();
  });
  if (ep_test::world_rank() == 0) {
    const std::vector<double> deep = xios_test::read_var(dir + "/c_api_out.nc", "deep");
    ASSERT_EQ(deep.size(), static_cast<std::size_t>(2 * kNk * kNj * kNi));
    const double fill = xios_test::double_att(dir + "/c_api_out.nc", "deep", "_FillValue");
    for (std::size_t n = 0; n < deep.size(); ++n) {
      EXPECT_EQ(deep[n], n % kNi == 0 ? fill : 6.0) << n;
    }
  }
}

}  // namespace

namespace {

// A configuration with nothing the model can give: empty domain and axis,
// no calendar.
std::string empty_definitions(const std::string& dir) {
  return R"(<?xml version="1.0"?>
<simulation><context id="c_attr">
  <domain_definition><domain id="d"/></domain_definition>
  <axis_definition><axis id="z"/></axis_definition>
  <grid_definition><grid id="g3"><domain domain_ref="d"/><axis axis_ref="z"/></grid></grid_definition>
  <field_definition><field id="deep" grid_ref="g3"/></field_definition>
  <file_definition><file id="out" name=")" +
         dir +
         R"(/c_attr_out" output_freq="1ts" type="one_file"><field field_ref="deep"/></file></file_definition>
</context></simulation>
)";
}

}  // namespace

// Calls the by-name setter of each of A's members (model_members) on the
// element "nope": the call must refuse the element, not the name.
template <class A>
void expect_settable_by_name(xios_lite_client_t client) {
  constexpr bool kDomain = std::is_same_v<A, xios_lite::DomainAttributes>;
  const int one = 1;
  const double real = 1.0;
  const std::int64_t shape[] = {1};
  for (const auto& m : xios_lite::model_members<A>()) {
    const std::string name(m.name);
    const int rc = std::visit(
        [&](auto member) -> int {
          using V = std::remove_reference_t<decltype(std::declval<A&>().*member)>;
          if constexpr (std::is_same_v<V, std::optional<int>>) {
            return kDomain ? xios_lite_set_domain_attr_int(client, "nope", name.c_str(), 1)
                           : xios_lite_set_axis_attr_int(client, "nope", name.c_str(), 1);
          } else if constexpr (std::is_same_v<V, std::vector<int>>) {
            return kDomain ? xios_lite_set_domain_attr_index(client, "nope", name.c_str(), &one, 1)
                           : xios_lite_set_axis_attr_index(client, "nope", name.c_str(), &one, 1);
          } else if constexpr (std::is_same_v<V, std::vector<double>>) {
            return kDomain ? xios_lite_set_domain_attr_double(client, "nope", name.c_str(), &real,
                                                              1, shape)
                           : xios_lite_set_axis_attr_double(client, "nope", name.c_str(), &real, 1,
                                                            shape);
          } else if constexpr (std::is_same_v<V, std::optional<std::string>>) {
            return kDomain ? xios_lite_set_domain_attr_text(client, "nope", name.c_str(), "x")
                           : xios_lite_set_axis_attr_text(client, "nope", name.c_str(), "x");
          } else {
            // The mask has its own call (xios_lite_set_domain_attr_mask), by shape.
            return -1;
          }
        },
        m.member);
    if (rc == -1) continue;
    EXPECT_EQ(rc, EP_ERR_ARGUMENT) << name;
    EXPECT_TRUE(contains(xios_lite_last_error(), "'nope'") &&
                !contains(xios_lite_last_error(), "'" + name + "' is not"))
        << name << ": " << xios_lite_last_error();
  }
}

// The geometry and calendar set through the C interface, one attribute per
// call as XIOS names them.
TEST_F(CApiWithServer, ModelSetsGeometryAndCalendar) {
  const std::string dir = xios_test::scratch_dir("c_attr");
  const std::string cfg = xios_test::write_config(dir, empty_definitions(dir));
  run_clients_and_server(cfg, [&](xios_lite_world_t world, ep_comm_t comm, int j0, int nj) {
    xios_lite_client_t client = create_client(world, comm, cfg, XIOS_LITE_MODE_ENDPOINTS);
    EXPECT_EQ(xios_lite_define_calendar(client, "Julian", "1900-02-28 12:00:00", nullptr, nullptr),
              EP_OK)
        << xios_lite_last_error();
    EXPECT_EQ(xios_lite_set_timestep(client, "12h"), EP_OK) << xios_lite_last_error();
    for (const auto& [name, v] : std::vector<std::pair<const char*, int>>{{"ni_glo", kNi},
                                                                          {"nj_glo", kNj},
                                                                          {"ibegin", 0},
                                                                          {"ni", kNi},
                                                                          {"jbegin", j0},
                                                                          {"nj", nj}}) {
      EXPECT_EQ(xios_lite_set_domain_attr_int(client, "d", name, v), EP_OK)
          << xios_lite_last_error();
    }
    std::vector<double> lat;
    for (int j = j0; j < j0 + nj; ++j) lat.push_back(-45.0 + 7.5 * j);
    const std::int64_t lat_shape[] = {nj};
    EXPECT_EQ(
        xios_lite_set_domain_attr_double(client, "d", "latvalue_1d", lat.data(), 1, lat_shape),
        EP_OK)
        << xios_lite_last_error();
    EXPECT_EQ(xios_lite_set_axis_attr_int(client, "z", "n_glo", kNk), EP_OK);
    const double levels[] = {5, 15};
    const std::int64_t level_shape[] = {kNk};
    EXPECT_EQ(xios_lite_set_axis_attr_double(client, "z", "value", levels, 1, level_shape), EP_OK)
        << xios_lite_last_error();
    EXPECT_EQ(xios_lite_set_axis_attr_text(client, "z", "unit", "m"), EP_OK);
    // Names XIOS does not have here are refused, naming the call and the name.
    EXPECT_EQ(xios_lite_set_domain_attr_int(client, "d", "colour", 1), EP_ERR_ARGUMENT);
    EXPECT_TRUE(contains(xios_lite_last_error(), "xios_lite_set_domain_attr_int") &&
                contains(xios_lite_last_error(), "'colour'"))
        << xios_lite_last_error();
    EXPECT_EQ(xios_lite_set_axis_attr_text(client, "nope", "unit", "m"), EP_ERR_ARGUMENT);
    EXPECT_TRUE(contains(xios_lite_last_error(), "unknown axis 'nope'")) << xios_lite_last_error();
    // Every attribute the table gives the model is taken by name by the call
    // of its type: on an unknown element, the call gets past the name.
    expect_settable_by_name<xios_lite::DomainAttributes>(client);
    expect_settable_by_name<xios_lite::AxisAttributes>(client);
    EXPECT_EQ(xios_lite_close_definition(client), EP_OK) << xios_lite_last_error();
    std::vector<double> deep;
    for (int k = 0; k < kNk; ++k) {
      for (int j = j0; j < j0 + nj; ++j) {
        for (int i = 0; i < kNi; ++i) deep.push_back(value(1, k, j, i));
      }
    }
    const Shapes shapes(nj);
    EXPECT_EQ(xios_lite_update_calendar(client, 1), EP_OK) << xios_lite_last_error();
    EXPECT_EQ(xios_lite_send_field(client, "deep", deep.data(), 3, shapes.deep), EP_OK)
        << xios_lite_last_error();
    EXPECT_EQ(xios_lite_finalise(&client), EP_OK) << xios_lite_last_error();
  });
  if (HasFatalFailure()) return;
  if (ep_test::world_rank() == 0) {
    const std::string path = dir + "/c_attr_out.nc";
    std::vector<double> lat;
    std::vector<double> deep;
    for (int j = 0; j < kNj; ++j) lat.push_back(-45.0 + 7.5 * j);
    for (int k = 0; k < kNk; ++k) {
      for (int j = 0; j < kNj; ++j) {
        for (int i = 0; i < kNi; ++i) deep.push_back(value(1, k, j, i));
      }
    }
    EXPECT_EQ(xios_test::read_var(path, "lat"), lat);
    EXPECT_EQ(xios_test::read_var(path, "z"), (std::vector<double>{5, 15}));
    EXPECT_EQ(xios_test::text_att(path, "z", "units"), "m");
    EXPECT_EQ(xios_test::text_att(path, "time", "calendar"), "julian");
    EXPECT_EQ(xios_test::read_var(path, "time"), (std::vector<double>{43200}));
    EXPECT_EQ(xios_test::read_var(path, "deep"), deep);
  }
}

// The model's own arrays through the C interface (data_* set one by one, as
// XIOS names them): "deep" as a halo'd (ni + 2, nj + 4, levels) array with
// garbage in the halo, "flat" as the same halo'd level handed as a 1-D
// array (any rank holding the values goes); a block-sized array is then the
// wrong shape, named with the data_* it should have. A second run lists the
// block's points in reverse order (data_i_index, xios_lite_set_domain_attr_index).
TEST_F(CApiWithServer, ModelArraysWithHalosAndIndices) {
  constexpr double kGarbage = 1e30;
  for (const bool indexed : {false, true}) {
    const std::string dir = xios_test::scratch_dir(indexed ? "c_api_index" : "c_api_halo");
    const std::string cfg = config_in(dir);
    run_clients_and_server(cfg, [&](xios_lite_world_t world, ep_comm_t comm, int j0, int nj) {
      xios_lite_client_t client = create_client(world, comm, cfg, XIOS_LITE_MODE_ENDPOINTS);
      EXPECT_EQ(xios_lite_set_domain_block(client, "d", 0, kNi, j0, nj), EP_OK)
          << xios_lite_last_error();
      const int dni = kNi + 2;
      const int dnj = nj + 4;
      std::vector<int> reversed;
      for (int p = kNi * nj - 1; p >= 0; --p) reversed.push_back(p);
      if (indexed) {
        EXPECT_EQ(xios_lite_set_domain_attr_int(client, "d", "data_dim", 1), EP_OK);
        EXPECT_EQ(xios_lite_set_domain_attr_int(client, "d", "data_n_index",
                                                static_cast<int>(reversed.size())),
                  EP_OK)
            << xios_lite_last_error();
        EXPECT_EQ(xios_lite_set_domain_attr_index(client, "d", "data_i_index", reversed.data(),
                                                  static_cast<int>(reversed.size())),
                  EP_OK)
            << xios_lite_last_error();
        EXPECT_EQ(xios_lite_set_domain_attr_index(client, "d", "data_k_index", reversed.data(), 1),
                  EP_ERR_ARGUMENT);
        EXPECT_TRUE(contains(xios_lite_last_error(), "'data_k_index'")) << xios_lite_last_error();
      } else {
        for (const auto& [name, v] : std::vector<std::pair<const char*, int>>{{"data_dim", 2},
                                                                              {"data_ibegin", -1},
                                                                              {"data_ni", dni},
                                                                              {"data_jbegin", -2},
                                                                              {"data_nj", dnj}}) {
          EXPECT_EQ(xios_lite_set_domain_attr_int(client, "d", name, v), EP_OK)
              << xios_lite_last_error();
        }
      }
      // An axis is whole on every client: its part and its data layout are refused by name.
      EXPECT_EQ(xios_lite_set_axis_attr_int(client, "z", "begin", 0), EP_ERR_ARGUMENT);
      EXPECT_TRUE(contains(xios_lite_last_error(), "axis 'z': begin: unsupported"))
          << xios_lite_last_error();
      const int levels[] = {0, 1};
      EXPECT_EQ(xios_lite_set_axis_attr_index(client, "z", "data_index", levels, 2),
                EP_ERR_ARGUMENT);
      EXPECT_TRUE(contains(xios_lite_last_error(), "axis 'z': data_index: unsupported"))
          << xios_lite_last_error();
      EXPECT_EQ(xios_lite_close_definition(client), EP_OK) << xios_lite_last_error();
      for (int s = 1; s <= kSteps; ++s) {
        EXPECT_EQ(xios_lite_update_calendar(client, s), EP_OK) << xios_lite_last_error();
        std::vector<double> flat;
        std::vector<double> deep;
        for (int k = 0; k <= kNk; ++k) {
          std::vector<double>& to = k == 0 ? flat : deep;
          if (indexed) {
            for (const int p : reversed) to.push_back(value(s, k, j0 + p / kNi, p % kNi));
            continue;
          }
          for (int kj = 0; kj < dnj; ++kj) {
            for (int ki = 0; ki < dni; ++ki) {
              const int i = ki - 1;
              const int j = kj - 2;
              to.push_back(i >= 0 && i < kNi && j >= 0 && j < nj ? value(s, k, j0 + j, i)
                                                                 : kGarbage);
            }
          }
        }
        const std::int64_t flat_shape[] = {static_cast<std::int64_t>(flat.size())};
        const std::int64_t deep_shape[] = {
            indexed ? static_cast<std::int64_t>(reversed.size()) : dni, indexed ? kNk : dnj,
            indexed ? 1 : kNk};
        if (s == 1) {
          // The block's shape (halo'd), or one value short of the list (indexed).
          const Shapes block(nj);
          const std::int64_t short_list[] = {kNi * nj - 1, kNk};
          EXPECT_EQ(xios_lite_send_field(client, "deep", deep.data(), indexed ? 2 : 3,
                                         indexed ? short_list : block.deep),
                    EP_ERR_COUNT);
          const std::string message = xios_lite_last_error();
          const std::string given = indexed ? shape(kNi * nj - 1, kNk)
                                            : shape(kNi, nj).substr(0, shape(kNi, nj).size() - 1) +
                                                  ", " + std::to_string(kNk) + ")";
          EXPECT_TRUE(contains(message, "'deep'") && contains(message, given) &&
                      contains(message, indexed ? "data_n_index " + std::to_string(kNi * nj)
                                                : "data_ibegin -1, data_ni " + std::to_string(dni)))
              << message;
        }
        EXPECT_EQ(xios_lite_send_field(client, "flat", flat.data(), 1, flat_shape), EP_OK)
            << xios_lite_last_error();
        EXPECT_EQ(xios_lite_send_field(client, "deep", deep.data(), indexed ? 2 : 3, deep_shape),
                  EP_OK)
            << xios_lite_last_error();
      }
      EXPECT_EQ(xios_lite_finalise(&client), EP_OK) << xios_lite_last_error();
    });
    if (HasFatalFailure()) return;
    if (ep_test::world_rank() == 0) {
      expect_flat_and_deep(dir + "/c_api_out.nc", indexed ? "indexed" : "not indexed");
    }
  }
}

// A grid with two axes through the C interface: the array is (ni, nj, n1,
// n2), rank 4; (ni, nj, n1 * n2) is the wrong shape, named with both axes.
TEST_F(CApiWithServer, GridWithTwoAxes) {
  const std::string dir = xios_test::scratch_dir("c_api_two_axes");
  std::string text = xios_test::config_file("two_axes.xml", {{"NAME", dir + "/ice"}});
  const std::string sizes = R"(ni_glo="7" nj_glo="5")";
  text.replace(text.find(sizes), sizes.size(),
               "ni_glo=\"" + std::to_string(kNi) + "\" nj_glo=\"" + std::to_string(kNj) + "\"");
  const std::string cfg = xios_test::write_config(dir, text);
  constexpr int kLayers = 3;
  constexpr int kCats = 2;
  run_clients_and_server(cfg, [&](xios_lite_world_t world, ep_comm_t comm, int j0, int nj) {
    xios_lite_client_t client = create_client(world, comm, cfg, XIOS_LITE_MODE_ENDPOINTS);
    EXPECT_EQ(xios_lite_set_domain_block(client, "ice", 0, kNi, j0, nj), EP_OK)
        << xios_lite_last_error();
    EXPECT_EQ(xios_lite_close_definition(client), EP_OK) << xios_lite_last_error();
    for (int s = 1; s <= 2; ++s) {
      EXPECT_EQ(xios_lite_update_calendar(client, s), EP_OK) << xios_lite_last_error();
      std::vector<double> t;
      for (int k = 0; k < kLayers * kCats; ++k) {
        for (int j = j0; j < j0 + nj; ++j) {
          for (int i = 0; i < kNi; ++i) t.push_back(value(s, k, j, i));
        }
      }
      const std::int64_t flat_levels[] = {kNi, nj, kLayers * kCats};
      EXPECT_EQ(xios_lite_send_field(client, "t_ice", t.data(), 3, flat_levels), EP_ERR_COUNT);
      EXPECT_TRUE(contains(xios_lite_last_error(), "axes 'layer' and 'cat'"))
          << xios_lite_last_error();
      const std::int64_t extents[] = {kNi, nj, kLayers, kCats};
      for (const char* id : {"t_ice", "h_ice"}) {
        EXPECT_EQ(xios_lite_send_field(client, id, t.data(), 4, extents), EP_OK)
            << xios_lite_last_error();
      }
    }
    EXPECT_EQ(xios_lite_finalise(&client), EP_OK) << xios_lite_last_error();
  });
  if (HasFatalFailure()) return;
  if (ep_test::world_rank() == 0) {
    const std::vector<double> got = xios_test::read_var(dir + "/ice.nc", "t_inst");
    ASSERT_EQ(got.size(), static_cast<std::size_t>(kLayers * kCats * kNj * kNi));
    std::size_t n = 0;
    for (int k = 0; k < kLayers * kCats; ++k) {
      for (int j = 0; j < kNj; ++j) {
        for (int i = 0; i < kNi; ++i) EXPECT_EQ(got[n++], value(2, k, j, i));
      }
    }
  }
}

// recv_field through the C interface: a file the clients wrote is read back
// as input (restart files are written this way), record by record, with
// the shape check and a record past the end refused, naming the call.
TEST_F(CApiWithServer, RecvFieldReadsWhatWasWritten) {
  const std::string dir = xios_test::scratch_dir("c_read");
  const std::string out_cfg = dir + "/iodef_out.xml";
  xios_test::write_file(out_cfg, config_text(dir));
  constexpr int kWritten = 2;
  run_clients_and_server(out_cfg, [&](xios_lite_world_t world, ep_comm_t comm, int j0, int nj) {
    xios_lite_client_t client =
        defined_client(world, comm, out_cfg, XIOS_LITE_MODE_ENDPOINTS, j0, nj);
    for (int s = 1; s <= kWritten; ++s) {
      std::vector<double> flat;
      std::vector<double> deep;
      for (int k = 0; k < kNk; ++k) {
        for (int j = j0; j < j0 + nj; ++j) {
          for (int i = 0; i < kNi; ++i) {
            deep.push_back(value(s, k, j, i));
            if (k == 0) flat.push_back(value(s, 7, j, i));
          }
        }
      }
      EXPECT_EQ(xios_lite_update_calendar(client, s), EP_OK);
      send_flat_and_deep(client, flat, deep, nj);
    }
    EXPECT_EQ(xios_lite_finalise(&client), EP_OK) << xios_lite_last_error();
  });
  if (HasFatalFailure()) return;
  std::string in_text = config_text(dir);
  const std::string file = R"(type="one_file")";
  in_text.replace(in_text.find(file), file.size(), R"(mode="read")");
  const std::string in_cfg = dir + "/iodef_in.xml";
  xios_test::write_file(in_cfg, in_text);
  run_clients_and_server(in_cfg, [&](xios_lite_world_t world, ep_comm_t comm, int j0, int nj) {
    xios_lite_client_t client =
        defined_client(world, comm, in_cfg, XIOS_LITE_MODE_ENDPOINTS, j0, nj);
    std::vector<double> flat(static_cast<std::size_t>(kNi * nj));
    std::vector<double> deep(flat.size() * kNk);
    const Shapes shapes(nj);
    for (int s = 1; s <= kWritten + 1; ++s) {
      EXPECT_EQ(xios_lite_update_calendar(client, s), EP_OK);
      if (s > kWritten) {
        if (nj > 0) {
          EXPECT_EQ(xios_lite_recv_field(client, "deep", deep.data(), 3, shapes.deep),
                    EP_ERR_ARGUMENT);
          EXPECT_TRUE(contains(xios_lite_last_error(), "record 2 does not exist"))
              << xios_lite_last_error();
        }
        break;
      }
      EXPECT_EQ(xios_lite_recv_field(client, "flat", deep.data(), 3, shapes.deep), EP_ERR_COUNT);
      EXPECT_TRUE(contains(xios_lite_last_error(), "xios_lite_recv_field") &&
                  contains(xios_lite_last_error(), "field 'flat'"))
          << xios_lite_last_error();
      EXPECT_EQ(xios_lite_recv_field(client, "flat", flat.data(), 2, shapes.flat), EP_OK)
          << xios_lite_last_error();
      EXPECT_EQ(xios_lite_recv_field(client, "deep", deep.data(), 3, shapes.deep), EP_OK)
          << xios_lite_last_error();
      for (int k = 0; k < kNk; ++k) {
        for (int j = 0; j < nj; ++j) {
          for (int i = 0; i < kNi; ++i) {
            const auto at = static_cast<std::size_t>((k * nj + j) * kNi + i);
            EXPECT_EQ(deep[at], value(s, k, j0 + j, i));
            if (k == 0) {
              EXPECT_EQ(flat[at], value(s, 7, j0 + j, i));
            }
          }
        }
      }
    }
    EXPECT_EQ(xios_lite_finalise(&client), EP_OK) << xios_lite_last_error();
  });
}

// xios_lite_world_split_context: one context named splits as the plain
// call; two contexts with one server process fail on every process with
// the reason (collective: no process is left waiting).
TEST(CApi, WorldSplitContext) {
  if (ep_test::world_size() < 3) {
    GTEST_SKIP() << "needs two client processes and a server";
  }
  const int rank = ep_test::world_rank();
  const bool server = rank == ep_test::world_size() - 1;
  const int role = server ? XIOS_LITE_ROLE_SERVER : XIOS_LITE_ROLE_CLIENT;
  xios_lite_world_t world = nullptr;
  EXPECT_EQ(xios_lite_world_split_context(MPI_COMM_WORLD, role, server ? nullptr : "ocean", &world),
            EP_OK)
      << xios_lite_last_error();
  int got = -1;
  EXPECT_EQ(xios_lite_world_role(world, &got), EP_OK);
  EXPECT_EQ(got, role);
  EXPECT_EQ(xios_lite_world_free(&world), EP_OK);
  EXPECT_EQ(xios_lite_world_split_context(
                MPI_COMM_WORLD, role, server ? "" : (rank == 0 ? "atmosphere" : "ocean"), &world),
            EP_ERR_ARGUMENT);
  EXPECT_TRUE(contains(xios_lite_last_error(), "xios_lite::split_world") &&
              contains(xios_lite_last_error(), "need at least 2 server processes"))
      << xios_lite_last_error();
  MPI_Barrier(MPI_COMM_WORLD);
}
