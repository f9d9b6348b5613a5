// Read mode (XIOS's mode="read" files and xios_recv_field): forcing input
// with one record per output period, a restart field without a time
// dimension read before the first step, a field on a grid with an axis
// stored as float; every value each client receives is checked against
// the value the test wrote, and a value received is sent back out and read
// from the output file. A missing file, a missing variable, a variable of
// other dimensions and a record past the end are errors naming the call,
// the rank, the field, the step, the record and the file, and the run goes
// on after them.
//
// Shapes: r1t2 (synchronous: each thread reads its block), r2t2 and r3t1
// (one server, one and three receiving endpoints; and the funneled mode),
// r4t1 (two server processes of two receiving endpoints each, one client).
#include <gtest/gtest.h>
#include <mpi.h>
#include <netcdf.h>

#include <string>
#include <vector>

#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"

namespace {

using namespace xios_test;

constexpr int kNi = 7;
constexpr int kNj = 5;
constexpr int kNk = 3;
constexpr int kRecords = 3;  // records of the forcing file, one per 2 h
constexpr int kSteps = 2 * kRecords;

double sst_at(int r, int j, int i) { return 100.0 * r + 10.0 * j + 0.5 * i; }
// Stored as float: values exact in single precision.
double theta_at(int r, int k, int j, int i) { return 1000.0 * r + 100.0 * k + j + 0.25 * i; }
double restart_at(int j, int i) { return -7.0 * j - i - 0.5; }

void check_nc(int rc, const char* what) {
  ASSERT_EQ(rc, NC_NOERR) << what << ": " << nc_strerror(rc);
}

// World rank 0 writes the input files as a model's earlier run would have.
void write_inputs(const std::string& dir) {
  if (ep_test::world_rank() == 0) {
    int nc = -1;
    int t = -1;
    int z = -1;
    int y = -1;
    int x = -1;
    check_nc(nc_create((dir + "/forcing.nc").c_str(), NC_NETCDF4 | NC_CLOBBER, &nc), "create");
    check_nc(nc_def_dim(nc, "time", NC_UNLIMITED, &t), "time");
    check_nc(nc_def_dim(nc, "lev", kNk, &z), "lev");
    check_nc(nc_def_dim(nc, "lat", kNj, &y), "lat");
    check_nc(nc_def_dim(nc, "lon", kNi, &x), "lon");
    int sst = -1;
    int theta = -1;
    const int d3[] = {t, y, x};
    const int d4[] = {t, z, y, x};
    check_nc(nc_def_var(nc, "sst", NC_DOUBLE, 3, d3, &sst), "sst");
    check_nc(nc_def_var(nc, "thetao", NC_FLOAT, 4, d4, &theta), "thetao");
    std::vector<double> s;
    std::vector<float> th;
    for (int r = 0; r < kRecords; ++r) {
      for (int j = 0; j < kNj; ++j) {
        for (int i = 0; i < kNi; ++i) s.push_back(sst_at(r, j, i));
      }
      for (int k = 0; k < kNk; ++k) {
        for (int j = 0; j < kNj; ++j) {
          for (int i = 0; i < kNi; ++i) th.push_back(static_cast<float>(theta_at(r, k, j, i)));
        }
      }
    }
    const std::size_t start[] = {0, 0, 0, 0};
    const std::size_t c3[] = {kRecords, kNj, kNi};
    const std::size_t c4[] = {kRecords, kNk, kNj, kNi};
    check_nc(nc_put_vara_double(nc, sst, start, c3, s.data()), "put sst");
    check_nc(nc_put_vara_float(nc, theta, start, c4, th.data()), "put thetao");
    check_nc(nc_close(nc), "close");

    check_nc(nc_create((dir + "/restart.nc").c_str(), NC_NETCDF4 | NC_CLOBBER, &nc), "create");
    check_nc(nc_def_dim(nc, "y", kNj, &y), "y");
    check_nc(nc_def_dim(nc, "x", kNi, &x), "x");
    int h = -1;
    const int d2[] = {y, x};
    check_nc(nc_def_var(nc, "h", NC_DOUBLE, 2, d2, &h), "h");
    std::vector<double> hv;
    for (int j = 0; j < kNj; ++j) {
      for (int i = 0; i < kNi; ++i) hv.push_back(restart_at(j, i));
    }
    check_nc(nc_put_var_double(nc, h, hv.data()), "put h");
    check_nc(nc_close(nc), "close");
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

std::string config(const std::string& dir) { return config_file("read.xml", {{"DIR", dir}}); }

// Runs the model with `servers` server processes of `threads` receiving
// endpoints (none: the synchronous mode).
void run_and_check(const std::string& tag, int servers, int threads,
                   xios_lite::Mode mode = xios_lite::Mode::kEndpoints) {
  const std::string dir = xios_test::scratch_dir(tag);
  write_inputs(dir);
  const std::string cfg = xios_test::write_config(dir, config(dir));
  xios_test::RunSpec spec;
  spec.config = cfg;
  spec.servers = servers;
  spec.server_threads = threads;
  spec.mode = servers > 0 ? mode : xios_lite::Mode::kSynchronous;
  spec.model = [dir](xios_lite::Client& c, const ep::Communicator& comm) {
    const Block b = xios_test::uneven_block(comm, kNi, kNj);
    c.set_domain_block("d", b);
    const auto n2 = static_cast<std::size_t>(b.ni) * b.nj;
    std::vector<double> v2(n2);
    std::vector<double> v3(n2 * kNk);
    EXPECT_HAS(xios_test::error_of([&] { c.recv_field("sst", v2); }),
               "recv_field: ep rank " + std::to_string(comm.rank()) +
                   ": before close_definition (field 'sst')");
    c.close_definition();
    // Restart input before the first step: a variable without a time dimension.
    c.recv_field("h0", v2);
    for (int j = 0; j < b.nj; ++j) {
      for (int i = 0; i < b.ni; ++i) {
        EXPECT_EQ(v2[static_cast<std::size_t>(j * b.ni + i)],
                  restart_at(b.jbegin + j, b.ibegin + i))
            << "h0 " << j << " " << i;
      }
    }
    // The errors, each naming the call, the rank and the value.
    const std::string rank = "ep rank " + std::to_string(comm.rank());
    if (n2 > 0) {
      std::string e = xios_test::error_of([&] { c.recv_field("ghost", v2); });
      EXPECT_HAS(e, "xios_lite::Client::recv_field: " + rank);
      EXPECT_HAS(e, "field 'ghost' at step 0 (record 0 of file 'forcing')");
      EXPECT_HAS(e, "the input file '" + dir + "/forcing.nc' has no variable 'nope'");
      e = xios_test::error_of([&] { c.recv_field("absent", v2); });
      EXPECT_HAS(e, rank);
      EXPECT_HAS(e, "cannot open the input file '" + dir + "/lost.nc'");
      e = xios_test::error_of([&] { c.recv_field("flat", v3); });
      EXPECT_HAS(
          e, "variable 'sst' of '" + dir + "/forcing.nc' has dimensions (time 3, lat 5, lon 7)");
    }
    EXPECT_HAS(xios_test::error_of([&] { c.recv_field("never_read", v2); }),
               "field 'never_read' is in no file of mode=\"read\"");
    EXPECT_HAS(xios_test::error_of([&] { c.recv_field("sst", v3); }),
               "field 'sst': room for " + std::to_string(v3.size()) + " values, expected " +
                   std::to_string(n2));
    for (int s = 1; s <= kSteps + 1; ++s) {
      c.update_calendar(s);
      if (s > kSteps) {
        if (n2 > 0) {
          const std::string e = xios_test::error_of([&] { c.recv_field("sst", v2); });
          EXPECT_HAS(e, rank);
          EXPECT_HAS(e, "field 'sst' at step 7 (record 3 of file 'forcing')");
          EXPECT_HAS(e, "holds 3 record(s) of variable 'sst': record 3 does not exist");
        }
        c.send_field("sst_out", std::vector<double>(n2, 0.0));
        break;
      }
      const int r = (s - 1) / 2;
      c.recv_field("sst", v2);
      c.recv_field("theta", v3);
      for (int j = 0; j < b.nj; ++j) {
        for (int i = 0; i < b.ni; ++i) {
          const auto at = static_cast<std::size_t>(j * b.ni + i);
          EXPECT_EQ(v2[at], sst_at(r, b.jbegin + j, b.ibegin + i)) << "sst step " << s;
          for (int k = 0; k < kNk; ++k) {
            EXPECT_EQ(v3[static_cast<std::size_t>(k) * n2 + at],
                      theta_at(r, k, b.jbegin + j, b.ibegin + i))
                << "theta step " << s << " level " << k;
          }
        }
      }
      // What was read goes out again: the output file holds the forcing.
      for (double& x : v2) x += 1;
      c.send_field("sst_out", v2);
    }
    (void)c.finalise();
  };
  if (xios_test::run_without_errors(spec)) {
    std::vector<double> want;
    for (int s = 1; s <= kSteps; ++s) {
      for (int j = 0; j < kNj; ++j) {
        for (int i = 0; i < kNi; ++i) want.push_back(sst_at((s - 1) / 2, j, i) + 1);
      }
    }
    want.resize(want.size() + static_cast<std::size_t>(kNj * kNi), 0.0);
    EXPECT_EQ(xios_test::read_var(dir + "/echo.nc", "sst_out"), want);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(XiosRead, ForcingAndRestartInput) {
  run_and_check("read", xios_test::servers(), ep_test::world_size() == 3 ? 3 : 1);
}

// The funneled mode: the master thread is the servers' client, every
// thread reads its own block from the file.
TEST(XiosRead, Funneled) {
  if (ep_test::world_size() < 2) {
    GTEST_SKIP() << "needs a server process";
  }
  run_and_check("read_funneled", 1, 1, xios_lite::Mode::kFunneled);
}

TEST(XiosRead, SeveralServerProcesses) {
  if (ep_test::world_size() < 4) {
    GTEST_SKIP() << "needs two server processes and a client";
  }
  run_and_check("read_two_servers", 2, 2);
}

}  // namespace
