// The run harness of the xios_lite MPI tests: a scratch directory and a
// configuration written once for every rank, and one run of a small model
// (clients on endpoints, servers on the last ranks) whose exceptions are
// collected instead of propagated, so no failing endpoint leaves the others
// waiting. The values the models send are in field_data.hpp, the reads of the
// files they write in nc_reader.hpp.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "field_data.hpp"
#include "thrown_message.hpp"
#include "xios_lite/client.hpp"
#include "xios_lite/server.hpp"

/// `text` contains `part` (and the failure shows `text`).
#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

namespace xios_test {

/// The message of `f`'s ep::Error ("" when nothing is thrown).
template <class F>
std::string error_of(F&& f) {
  return thrown_message(std::forward<F>(f));
}

// The names every test of xios_lite uses (`using namespace xios_test;`).
using xios_lite::Block;
using xios_lite::Mode;

/// Up to `wanted` server processes when the shape has room for them (one
/// client process stays), else none: the synchronous mode.
int servers(int wanted = 1);
/// The client mode for `servers` server processes: endpoints, or synchronous without servers.
xios_lite::Mode mode_for(int servers);
/// mode_for(servers()).
xios_lite::Mode mode();
/// Every client mode the shape can run: mode(), and the funneled mode when
/// there is a server. With each, the tag of its files: `tag`, then
/// `tag`_funneled.
std::vector<std::pair<xios_lite::Mode, std::string>> client_modes(const std::string& tag);
/// Whether this process reads the files back: world rank 0 (NetCDF-C is
/// called from one thread of one process).
bool is_reader();

/// A fresh directory made by world rank 0, the same path on every rank. Collective.
std::string scratch_dir(const std::string& tag);
/// Rank 0 writes `text` to `path`; everybody waits for it. Collective.
void write_file(const std::string& path, const std::string& text);
/// Writes `text` as `dir`/iodef.xml (as write_file) and returns that path. Collective.
std::string write_config(const std::string& dir, const std::string& text);
/// The configuration tests/xios_lite/configs/test_xios/<name> with every
/// "@KEY@" replaced by the value given for KEY (the scratch directory, say).
/// Throws std::runtime_error for a file that cannot be read or a placeholder
/// left without a value. Local.
std::string config_file(const std::string& name,
                        const std::vector<std::pair<std::string, std::string>>& values);

/// A fresh scratch directory and the configuration written in it.
struct Scratch {
  std::string dir;
  std::string config;  ///< the path of dir/iodef.xml
};
/// scratch_dir(tag) with config_file(name, values) written as its iodef.xml,
/// each value being appended to the directory's path ({"NAME", "/out"}
/// stands for dir + "/out"). Collective.
Scratch scratch_config(const std::string& tag, const std::string& name,
                       const std::vector<std::pair<std::string, std::string>>& values);

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

/// The parts of a configuration of one context: each *_definition element
/// holds the text given, and is left out when it is empty.
struct ContextXml {
  std::string id = "test";
  std::string calendar = R"(type="gregorian" start_date="2000-01-01" timestep="1h")";
  std::string options = R"(finalise_timeout="20")";  ///< attributes of <options>
  std::string domains;
  std::string axes;
  std::string grids;
  std::string fields;
  std::string files;
};
[[nodiscard]] std::string context_config(const ContextXml& c);

/// A model: runs on one endpoint, from the Client's construction on.
using Model = std::function<void(xios_lite::Client&, const ep::Communicator&)>;

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
  Model model;
};

/// Runs the model with the clients and servers of `spec`. Collective over
/// MPI_COMM_WORLD. Exceptions are collected, never propagated.
Outcome run(const RunSpec& spec);

/// Fails the test with every error `o` collected.
void expect_no_errors(const Outcome& o);

/// Runs `spec` and fails the test with every error collected; returns
/// whether this process reads the files back (is_reader). Collective over
/// MPI_COMM_WORLD.
bool run_without_errors(const RunSpec& spec);

/// A spec of `model` on `servers` server processes in mode_for(servers).
RunSpec run_spec(const std::string& config, int servers, Model model);
/// The same in client mode `mode`.
RunSpec run_spec(const std::string& config, int servers, xios_lite::Mode mode, Model model);

/// A spec of `model` on servers() server processes in mode() over
/// scratch_config(tag, name, values), with its scratch directory. Collective.
struct ScratchRun {
  std::string dir;
  RunSpec spec;
};
ScratchRun scratch_run(const std::string& tag, const std::string& name,
                       const std::vector<std::pair<std::string, std::string>>& values, Model model);

/// This client's uneven_block of an ni x nj domain: uneven_block(comm.rank(), comm.size(), ni, nj).
xios_lite::Block uneven_block(const ep::Communicator& comm, int ni, int nj);

/// The domain attributes of a client's block `b` (ibegin, ni, jbegin, nj),
/// with the global sizes when given (ni_glo, nj_glo > 0).
xios_lite::DomainAttributes block_attributes(const xios_lite::Block& b, int ni_glo = 0,
                                             int nj_glo = 0);

/// Masks the points of this client's block `b` of `domain` where land(j, i)
/// holds (global j, i): set_domain_mask with the others valid.
void mask_land(xios_lite::Client& c, const std::string& domain, const xios_lite::Block& b,
               const std::function<bool(int j, int i)>& land);

/// The data layout of a 2-D array holding block `b` with a halo of
/// `halo_i` points on each side in i and `halo_j` in j (data_dim 2,
/// data_ibegin -halo_i, data_ni ni + 2 halo_i, likewise in j).
xios_lite::DomainAttributes halo_attributes(const xios_lite::Block& b, int halo_i, int halo_j);

/// Sets this client's uneven_block of domain "dom" (ni x nj points) and
/// closes the definition; returns the block.
xios_lite::Block define_uneven_block(xios_lite::Client& c, const ep::Communicator& comm, int ni,
                                     int nj);

/// Closes the definition, then at steps 1..steps updates the calendar and
/// calls send(step), then finalises: a model's time loop.
void close_and_step(xios_lite::Client& c, int steps, const std::function<void(int step)>& send);

/// What a stepping model sends at one step on this client's block.
using StepSender = std::function<void(xios_lite::Client&, const xios_lite::Block&, int step)>;
/// A model on domain "dom" of ni x nj points: each client sets its
/// uneven_block, closes the definition, calls `send` at steps 1..steps and
/// finalises.
Model stepping_model(int ni, int nj, int steps, StepSender send);

}  // namespace xios_test
