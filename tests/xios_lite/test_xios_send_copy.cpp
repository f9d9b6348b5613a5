// xios_lite send_field hands a record straight to the servers when the sent
// values complete it on their own (an instant, or an operation sampled once
// per period): the client packs them from the model's array, without the
// temporal accumulator's copy. The model may overwrite that array as soon
// as send_field returns, so each record must still hold exactly its step's
// values. These models send every field from one scratch array that they
// poison right after each send_field; records that need the accumulator
// (several samples per period) run beside them in the same files. Shapes
// with one process use the synchronous mode (no server), which keeps the
// accumulator for every record.
//
// A client's channel to a server has two buffers and does not wait for a
// buffer's send when it flushes it, only when it writes into that buffer
// again. The lagging-server test makes that wait happen: records past
// Open MPI's eager limit, buffers of about one record (a step spans
// several), and steps without compute, so the client refills buffers that
// are still in flight to a server busy writing; each record must still be
// exact.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "ep_test.hpp"
#include "field_data.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"

namespace {

using namespace xios_test;

constexpr double kPoison = -7.5e8;

// The domain, the steps and the <options> of one run.
struct Shape {
  int ni = 7;
  int nj = 9;
  int steps = 6;
  std::string options = R"(finalise_timeout="20")";
};

// Fields 0-3 (a, b, c, d). File "each" is written every step: a as an
// instant, b as an average of one sample; file "pairs" every two steps: c as
// an average of two samples (the accumulator) and d as an instant (the
// first sample of a period goes to the accumulator, the last one at send).
std::string config(const std::string& dir, const Shape& shape) {
  return R"(<xios_lite><context id="send_copy">
  <calendar type="gregorian" start_date="2000-01-01" timestep="1h"/>
  <options )" +
         shape.options + R"(/>
  <domain_definition><domain id="dom" ni_glo=")" +
         std::to_string(shape.ni) + R"(" nj_glo=")" + std::to_string(shape.nj) +
         R"("/></domain_definition>
  <grid_definition><grid id="g" domain_ref="dom"/></grid_definition>
  <field_definition>
    <field id="a" grid_ref="g" operation="instant"/>
    <field id="b" grid_ref="g" operation="average"/>
    <field id="c" grid_ref="g" operation="average"/>
    <field id="d" grid_ref="g" operation="instant"/>
  </field_definition>
  <file_definition>
    <file id="each" name=")" +
         dir + R"(/each" output_freq="1ts" type="one_file">
      <field field_ref="a"/><field field_ref="b"/>
    </file>
    <file id="pairs" name=")" +
         dir + R"(/pairs" output_freq="2ts" type="one_file">
      <field field_ref="c"/><field field_ref="d"/>
    </file>
  </file_definition>
</context></xios_lite>
)";
}

// Every field sent from the same array, poisoned after each send_field.
void send_from_one_array(xios_lite::Client& c, const Block& b, int step) {
  const char* const ids[] = {"a", "b", "c", "d"};
  std::vector<double> scratch;
  for (int f = 0; f < 4; ++f) {
    scratch = field_values(f, step, 1, b);
    c.send_field(ids[f], scratch);
    std::fill(scratch.begin(), scratch.end(), kPoison);
  }
}

// The value of `var` (field f) in record r at point (j, i), as the client
// computes it.
double expected(int f, int r, int j, int i, bool pairs) {
  if (!pairs) {
    return value(f, r + 1, 0, j, i);
  }
  const int last = 2 * r + 2;
  if (f == 3) {
    return value(f, last, 0, j, i);
  }
  double sum = value(f, last - 1, 0, j, i);
  sum += value(f, last, 0, j, i);
  return sum * (1.0 / 2);
}

void expect_file(const Shape& shape, const std::string& path, const char* var, int f, bool pairs) {
  const std::vector<double> got = read_var(path, var);
  const int records = pairs ? shape.steps / 2 : shape.steps;
  ASSERT_EQ(got.size(), static_cast<std::size_t>(records) * shape.nj * shape.ni)
      << path << " " << var;
  std::size_t n = 0;
  int wrong = 0;
  for (int r = 0; r < records; ++r) {
    for (int j = 0; j < shape.nj; ++j) {
      for (int i = 0; i < shape.ni; ++i, ++n) {
        const double want = expected(f, r, j, i, pairs);
        if (got[n] != want && ++wrong <= 5) {
          ADD_FAILURE() << path << " " << var << " record " << r << " j " << j << " i " << i << ": "
                        << got[n] << ", expected " << want;
        }
      }
    }
  }
  EXPECT_EQ(wrong, 0) << path << " " << var << ": points not holding their record's values";
}

// One run of the models in a fresh directory, `adjust` changing the
// spec, then every record checked.
void run_and_check(const std::string& tag, const std::function<void(RunSpec&)>& adjust,
                   const Shape& shape = {}) {
  const std::string dir = scratch_dir(tag);
  const std::string cfg = write_config(dir, config(dir, shape));
  RunSpec spec = run_spec(cfg, servers(),
                          stepping_model(shape.ni, shape.nj, shape.steps, send_from_one_array));
  adjust(spec);
  if (run_without_errors(spec)) {
    expect_file(shape, dir + "/each.nc", "a", 0, false);
    expect_file(shape, dir + "/each.nc", "b", 1, false);
    expect_file(shape, dir + "/pairs.nc", "c", 2, true);
    expect_file(shape, dir + "/pairs.nc", "d", 3, true);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

TEST(XiosSendCopy, ModelOverwritesItsArrayAfterSend) {
  run_and_check("send_copy", [](RunSpec&) {});
}

// Client processes of different thread counts (3 and 1 alternating; odd).
TEST(XiosSendCopy, UnevenThreadCounts) {
  run_and_check("send_copy_uneven",
                [](RunSpec& spec) { spec.threads = [](int p) { return p % 2 == 0 ? 3 : 1; }; });
}

// Two server processes where the shape has room (r3): each record is cut
// along their row bands, and each channel leaves with the step's last record.
TEST(XiosSendCopy, TwoServers) {
  if (servers() == 0) {
    GTEST_SKIP() << "needs a server process";
  }
  run_and_check("send_copy_two_servers", [](RunSpec& spec) { spec.servers = servers(2); });
}

// The funneled mode: the master packs every thread's array before they return.
TEST(XiosSendCopy, Funneled) {
  if (servers() == 0) {
    GTEST_SKIP() << "needs a server process";
  }
  run_and_check("send_copy_funneled",
                [](RunSpec& spec) { spec.mode = xios_lite::Mode::kFunneled; });
}

// Without the progress thread every transfer moves only inside the
// client's calls.
TEST(XiosSendCopy, WithoutProgressThread) {
  if (servers() == 0) {
    GTEST_SKIP() << "needs a server process";
  }
  run_and_check("send_copy_no_progress", [](RunSpec& spec) { spec.progress_thread = false; });
}

// Buffers refilled while their sends are still in flight (see the file
// comment): 96 x 64 points (48 KiB a record for one client, 6-16 KiB for
// the shapes' 3-8 clients, past the eager limit), buffers of 64 KiB, 40 steps.
TEST(XiosSendCopy, BuffersRefilledWhileServerLags) {
  if (servers() == 0) {
    GTEST_SKIP() << "needs a server process";
  }
  Shape lagging;
  lagging.ni = 96;
  lagging.nj = 64;
  lagging.steps = 40;
  lagging.options = R"(finalise_timeout="20" buffer_factor="1" buffer_min_bytes="65536" )"
                    R"(buffer_max_bytes="65536")";
  run_and_check(
      "send_copy_lagging", [](RunSpec&) {}, lagging);
  run_and_check(
      "send_copy_lagging_no_progress", [](RunSpec& spec) { spec.progress_thread = false; },
      lagging);
}

}  // namespace
