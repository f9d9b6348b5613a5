// Helpers of the xios_lite MPI tests: a scratch directory, a run of a small
// model (clients on endpoints, servers on the last ranks) and NetCDF reads.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "xios_lite/client.hpp"
#include "xios_lite/server.hpp"

/// `text` contains `part` (and the failure shows `text`).
#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

namespace xios_test {

/// The message of `f`'s ep::Error ("" when nothing is thrown).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ep::Error& e) {
    return e.what();
  }
  return "";
}

/// One server process when the shape has room for one (2 processes or
/// more), else none: the synchronous mode.
int servers();
/// The client mode for `servers()`: endpoints, or synchronous without servers.
xios_lite::Mode mode();

/// A fresh directory made by world rank 0, the same path on every rank. Collective.
std::string scratch_dir(const std::string& tag);
/// Rank 0 writes `text` to `path`; everybody waits for it. Collective.
void write_file(const std::string& path, const std::string& text);

/// One field on one domain (grid "g"), written every step to one one_file
/// file: the configuration most error tests need.
struct OneField {
  std::string context = "test";
  std::string calendar = R"(type="gregorian" start_date="2000-01-01" timestep="1h")";
  int ni = 8;
  int nj = 4;
  std::string field = "t";
  std::string file_name;  ///< path stem of the file
  int timeout_s = 20;     ///< finalise_timeout
};
[[nodiscard]] std::string one_field_config(const OneField& c);

/// What one run of the model saw.
struct Outcome {
  std::vector<std::string> client_errors;          ///< every exception text, any endpoint
  std::string server_error;                        ///< this process's run_server exception
  std::optional<ep::ErrorKind> server_error_kind;  ///< its kind, when an ep::Error
  bool is_server = false;
};

struct RunSpec {
  std::string config;
  int servers = 1;  ///< 0: every process is a client (synchronous mode)
  xios_lite::Mode mode = xios_lite::Mode::kEndpoints;
  std::optional<bool> progress_thread;  ///< unset: the configuration's (default on)
  int server_threads = 1;               ///< receiving endpoints per server process
  /// Threads of client process `p` (its rank among the client processes).
  std::function<int(int p)> threads = [](int) { return 0; };  // 0: OMP_NUM_THREADS
  /// The context of client process `world_rank` (split_world with a
  /// context); unset: the plain split_world.
  std::function<std::string(int world_rank)> context;
  /// Runs the model on one endpoint, from the Client's construction on.
  std::function<void(xios_lite::Client&, const ep::Communicator&)> model;
};

/// Runs the model with the clients and servers of `spec`. Collective over
/// MPI_COMM_WORLD. Exceptions are collected, never propagated.
Outcome run(const RunSpec& spec);

/// The block of client `rank` of `size` in an ni x nj domain: rows split
/// unevenly (weights 1, 2, 1, 2, ...), and a client with more than one row
/// of every second one split along i too (it goes to the next rank).
xios_lite::Block uneven_block(int rank, int size, int ni, int nj);

/// The test's value of field `f` at a step and point.
inline double value(int f, long step, int k, int j, int i) {
  return f * 1e6 + static_cast<double>(step) * 1e4 + k * 1e3 + j * 10.0 + i * 0.25;
}
/// This client's values of field `f` at `step` (levels x block, ni fastest).
std::vector<double> field_values(int f, long step, int nk, const xios_lite::Block& b);

/// Reads a whole double variable (an empty vector and a test failure when absent).
std::vector<double> read_var(const std::string& path, const std::string& var);
/// A text attribute ("" when absent); var "" for a global one.
std::string text_att(const std::string& path, const std::string& var, const std::string& name);
/// A numeric attribute as a double (NaN when absent); var "" for a global one.
double double_att(const std::string& path, const std::string& var, const std::string& name);
/// A variable's NetCDF type (NC_DOUBLE, NC_FLOAT, ...; -1 when absent).
int var_type(const std::string& path, const std::string& var);
/// A variable's chunk extents (empty when absent or contiguous).
std::vector<std::size_t> var_chunks(const std::string& path, const std::string& var);
/// Length of a dimension (-1 when absent).
long dim_len(const std::string& path, const std::string& dim);
bool file_exists(const std::string& path);

}  // namespace xios_test
