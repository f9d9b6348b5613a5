// The model's own arrays, as XIOS takes them (the domain's data_dim,
// data_ibegin, data_ni, data_jbegin, data_nj, data_i_index, data_j_index):
// halo'd 2-D and 3-D arrays with negative begins (NEMO's data_ibegin =
// -nn_hls), the halo given in the configuration and the sizes by the model,
// a 1-D array over the block with values before and after it, and
// compressed arrays that list some points only (data_dim 1 and 2). The
// values in the halos and of indices outside the block are garbage (1e30)
// that must not appear; the points a compressed array leaves out are
// _FillValue. Every record of an instant (the values go out as sent) and of
// an average (through the accumulator) is checked value by value; a send of
// the wrong size names the field and the data_* shape it expected.
//
// Before: send_field refused every such array ("N values, expected M").
#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"

namespace {

using namespace xios_test;

constexpr int kNi = 10;
constexpr int kNj = 6;
constexpr int kNk = 3;
constexpr int kSteps = 4;  // two records of 2 steps
constexpr double kGarbage = 1e30;
constexpr double kFill = -1e20;

// The fields, numbered for xios_test::value.
enum Field { kH2 = 1, kH3, kO2, kL3, kC3, kC2 };

// The points a compressed array lists (global indices).
bool listed_1d(int j, int i) { return (i + j) % 3 != 0; }
bool listed_2d(int j, int i) { return (i * j) % 2 == 0; }

// A halo'd array of `nk` levels of block b: hi columns and hj rows of halo
// on each side (data_ibegin -hi, data_jbegin -hj), garbage in the halo.
std::vector<double> halo_array(const Block& b, int nk, int f, int s, int hi, int hj) {
  const int dni = b.ni + 2 * hi;
  const int dnj = b.nj + 2 * hj;
  std::vector<double> a(static_cast<std::size_t>(nk) * dni * dnj, kGarbage);
  std::size_t n = 0;
  for (int k = 0; k < nk; ++k) {
    for (int kj = 0; kj < dnj; ++kj) {
      for (int ki = 0; ki < dni; ++ki, ++n) {
        const int i = ki - hi;
        const int j = kj - hj;
        if (i >= 0 && i < b.ni && j >= 0 && j < b.nj) {
          a[n] = value(f, s, k, b.jbegin + j, b.ibegin + i);
        }
      }
    }
  }
  return a;
}

// The points of block b a compressed 1-D array lists, in reverse order (the
// order is the model's), as block indices j * ni + i.
std::vector<int> listed_points(const Block& b) {
  std::vector<int> out;
  for (int j = b.nj - 1; j >= 0; --j) {
    for (int i = b.ni - 1; i >= 0; --i) {
      if (listed_1d(b.jbegin + j, b.ibegin + i)) out.push_back(j * b.ni + i);
    }
  }
  return out;
}

void define(xios_lite::Client& c, const Block& b) {
  xios_lite::DomainAttributes block = xios_test::block_attributes(b);
  for (const char* d : {"ocean", "halo", "line", "land", "land2"}) {
    c.set_domain_attr(d, block);
  }
  // NEMO's arrays: field(0:ni+1, -1:nj+2).
  c.set_domain_attr("halo", xios_test::halo_attributes(b, 1, 2));
  // The configuration gives the begins; the sizes are this client's.
  xios_lite::DomainAttributes ocean;
  ocean.data_ni = b.ni + 2;
  ocean.data_nj = b.nj + 2;
  c.set_domain_attr("ocean", ocean);
  // 1-D: 3 values before the block's points and 2 after.
  xios_lite::DomainAttributes line;
  line.data_dim = 1;
  line.data_ibegin = -3;
  line.data_ni = b.ni * b.nj + 5;
  c.set_domain_attr("line", line);
  // Compressed 1-D: only the listed points.
  xios_lite::DomainAttributes land;
  land.data_dim = 1;
  land.data_ibegin = 0;
  land.data_i_index = listed_points(b);
  land.data_n_index = static_cast<int>(land.data_i_index.size());
  land.data_ni = static_cast<int>(land.data_i_index.size());
  c.set_domain_attr("land", land);
  // Compressed 2-D, indices from data_ibegin = data_jbegin = -1, and one
  // index past the block's last column (ignored).
  xios_lite::DomainAttributes land2;
  land2.data_dim = 2;
  land2.data_ibegin = -1;
  land2.data_jbegin = -1;
  for (int j = 0; j < b.nj; ++j) {
    for (int i = 0; i < b.ni; ++i) {
      if (listed_2d(b.jbegin + j, b.ibegin + i)) {
        land2.data_i_index.push_back(i + 1);
        land2.data_j_index.push_back(j + 1);
      }
    }
  }
  land2.data_i_index.push_back(b.ni + 1);
  land2.data_j_index.push_back(1);
  c.set_domain_attr("land2", land2);
}

// What the model sends at step s.
void send_all(xios_lite::Client& c, const Block& b, int s) {
  c.send_field("h2", halo_array(b, 1, kH2, s, 1, 2));
  c.send_field("h3", halo_array(b, kNk, kH3, s, 1, 2));
  c.send_field("o2", halo_array(b, 1, kO2, s, 1, 1));
  std::vector<double> line;
  for (int k = 0; k < kNk; ++k) {
    line.insert(line.end(), 3, kGarbage);
    for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
      for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) line.push_back(value(kL3, s, k, j, i));
    }
    line.insert(line.end(), 2, kGarbage);
  }
  c.send_field("l3", line);
  // field(nb_pt, llm), as a float array: the same path widened.
  std::vector<float> packed;
  const std::vector<int> points = listed_points(b);
  for (int k = 0; k < kNk; ++k) {
    for (const int p : points) {
      packed.push_back(
          static_cast<float>(value(kC3, s, k, b.jbegin + p / b.ni, b.ibegin + p % b.ni)));
    }
  }
  c.send_field("c3", packed);
  std::vector<double> packed2;
  for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
    for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) {
      if (listed_2d(j, i)) packed2.push_back(value(kC2, s, 0, j, i));
    }
  }
  packed2.push_back(kGarbage);  // the index outside the block
  c.send_field("c2", packed2);
}

// The value field f's file variable holds at a step and point, or kFill.
double at_step(int f, int s, int k, int j, int i) {
  if (f == kC3) {
    return listed_1d(j, i) ? static_cast<double>(static_cast<float>(value(f, s, k, j, i))) : kFill;
  }
  if (f == kC2) {
    return listed_2d(j, i) ? value(f, s, k, j, i) : kFill;
  }
  return value(f, s, k, j, i);
}

// A spec of data_layout.xml in the fresh scratch directory `tag`: every
// client defines its uneven block (define), then goes on with `model` on it.
// Collective.
xios_test::ScratchRun layout_run(
    const std::string& tag,
    std::function<void(xios_lite::Client&, const ep::Communicator&, const Block&)> model) {
  return xios_test::scratch_run(tag, "data_layout.xml", {{"NAME", "/out"}},
                                [model](xios_lite::Client& c, const ep::Communicator& comm) {
                                  const Block b = xios_test::uneven_block(comm, kNi, kNj);
                                  define(c, b);
                                  model(c, comm, b);
                                });
}

void run_and_check(Mode mode, int servers, const std::string& tag) {
  const auto [dir, cfg] = xios_test::scratch_config(tag, "data_layout.xml", {{"NAME", "/out"}});
  const xios_test::RunSpec spec = xios_test::run_spec(
      cfg, servers, mode, [](xios_lite::Client& c, const ep::Communicator& comm) {
        const Block b = xios_test::uneven_block(comm, kNi, kNj);
        define(c, b);
        xios_test::close_and_step(c, kSteps, [&](int s) { send_all(c, b, s); });
      });
  if (xios_test::run_without_errors(spec)) {
    const std::string path = dir + "/out.nc";
    const struct {
      const char* name;
      int field;
      int nk;
    } vars[] = {{"h2", kH2, 1},   {"h3", kH3, kNk}, {"o2", kO2, 1},
                {"l3", kL3, kNk}, {"c3", kC3, kNk}, {"c2", kC2, 1}};
    for (const auto& v : vars) {
      const std::vector<double> inst = xios_test::read_var(path, std::string(v.name) + "_inst");
      const std::vector<double> avg = xios_test::read_var(path, std::string(v.name) + "_avg");
      const std::size_t size = static_cast<std::size_t>(kSteps / 2) * v.nk * kNj * kNi;
      ASSERT_EQ(inst.size(), size) << v.name;
      ASSERT_EQ(avg.size(), size) << v.name;
      std::size_t n = 0;
      for (int r = 0; r < kSteps / 2; ++r) {
        for (int k = 0; k < v.nk; ++k) {
          for (int j = 0; j < kNj; ++j) {
            for (int i = 0; i < kNi; ++i, ++n) {
              const double a = at_step(v.field, 2 * r + 1, k, j, i);
              const double b = at_step(v.field, 2 * r + 2, k, j, i);
              EXPECT_EQ(inst[n], b) << tag << " " << v.name << "_inst record " << r << " k " << k
                                    << " j " << j << " i " << i;
              EXPECT_EQ(avg[n], b == kFill ? kFill : (a + b) * (1.0 / 2))
                  << tag << " " << v.name << "_avg record " << r << " k " << k << " j " << j
                  << " i " << i;
            }
          }
        }
      }
    }
    // The expressions: 2 * h2 everywhere, c2 + 1 at the listed points.
    const std::vector<double> e2 = xios_test::read_var(path, "e2_inst");
    const std::vector<double> e3 = xios_test::read_var(path, "e3_inst");
    ASSERT_EQ(e2.size(), static_cast<std::size_t>(kSteps / 2 * kNj * kNi));
    ASSERT_EQ(e3.size(), e2.size());
    std::size_t n = 0;
    for (int r = 0; r < kSteps / 2; ++r) {
      for (int j = 0; j < kNj; ++j) {
        for (int i = 0; i < kNi; ++i, ++n) {
          EXPECT_EQ(e2[n], 2 * value(kH2, 2 * r + 2, 0, j, i)) << tag << " e2 " << j << " " << i;
          EXPECT_EQ(e3[n], listed_2d(j, i) ? value(kC2, 2 * r + 2, 0, j, i) + 1 : kFill)
              << tag << " e3 " << j << " " << i;
        }
      }
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// In every client mode the shape allows: the funneled mode's master packs every thread's array with
// that thread's layout.
TEST(XiosDataLayout, HaloedAndCompressedArraysWritten) {
  for (const auto& [client_mode, tag] : client_modes("data_layout")) {
    run_and_check(client_mode, servers(), tag);
  }
}

// An array of the block's size where the halo'd one is expected: refused,
// naming the field, the values given and the data_* shape expected; the
// right array then goes through.
TEST(XiosDataLayout, WrongSizeNamesTheShape) {
  const auto [dir, spec] = layout_run(
      "data_layout_size", [](xios_lite::Client& c, const ep::Communicator&, const Block& b) {
        // A part of the axis, or its own data layout, is refused (not ignored).
        xios_lite::AxisAttributes part;
        part.begin = 0;
        part.n = 1;
        EXPECT_HAS(error_of([&] { c.set_axis_attr("z", part); }),
                   "axis 'z': begin: unsupported XIOS feature");
        xios_lite::AxisAttributes data;
        data.data_index = {0, 1, 2};
        EXPECT_HAS(error_of([&] { c.set_axis_attr("z", data); }),
                   "axis 'z': data_index: unsupported");
        c.close_definition();
        c.update_calendar(1);
        const std::string e =
            error_of([&] { c.send_field("h2", xios_test::field_values(kH2, 1, 1, b)); });
        const std::string given = std::to_string(b.ni * b.nj) + " values, expected " +
                                  std::to_string((b.ni + 2) * (b.nj + 4));
        EXPECT_HAS(e, "field 'h2': " + given);
        EXPECT_HAS(e, "data_dim 2, data_ibegin -1, data_ni " + std::to_string(b.ni + 2) +
                          ", data_jbegin -2, data_nj " + std::to_string(b.nj + 4));
        EXPECT_HAS(e, "(ni " + std::to_string(b.ni) + ", nj " + std::to_string(b.nj) + ")");
        for (int s = 1; s <= kSteps; ++s) {
          if (s > 1) c.update_calendar(s);
          send_all(c, b, s);
        }
        (void)c.finalise();
      });
  if (xios_test::run_without_errors(spec)) {
    const std::vector<double> h2 = xios_test::read_var(dir + "/out.nc", "h2_inst");
    ASSERT_EQ(h2.size(), static_cast<std::size_t>(kSteps / 2 * kNj * kNi));
    EXPECT_EQ(h2[0], value(kH2, 2, 0, 0, 0));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// Layouts that do not fit: every client's close_definition fails, naming the domain.
TEST(XiosDataLayout, BadLayoutFailsTheDefinition) {
  const auto [dir, spec] = layout_run(
      "data_layout_bad", [](xios_lite::Client& c, const ep::Communicator& comm, const Block&) {
        if (comm.rank() == 0) {
          xios_lite::DomainAttributes bad;
          bad.data_j_index = {0, 1};  // land2 has one index per value
          c.set_domain_attr("land2", bad);
        }
        const std::string e = error_of([&] { c.close_definition(); });
        EXPECT_HAS(e, "domain 'land2': data_j_index has 2 values, data_i_index ");
        EXPECT_HAS(e, "close_definition");
      });
  const xios_test::Outcome outcome = xios_test::run(spec);
  EXPECT_TRUE(outcome.client_errors.empty());
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
