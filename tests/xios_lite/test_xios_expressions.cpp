// Field expressions and what XIOS writes besides values: expressions of
// the fields the model sends (evaluated on the clients at each step, before
// the temporal operation: the average of a product is not the product of
// averages), "this" and field_ref, expressions in a file's field, the
// fields an expression needs and did not get (named), <variable> elements
// as typed NetCDF attributes, and time-series files (timeseries,
// ts_enabled, ts_prefix).
//
// Shapes: r1t2 (synchronous), r2t2 and r3t1 (one server).
#include <gtest/gtest.h>
#include <mpi.h>
#include <netcdf.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "ep_test.hpp"
#include "nc_reader.hpp"
#include "run_harness.hpp"

namespace {

using namespace xios_test;

constexpr int kNi = 7;
constexpr int kNj = 5;
constexpr int kSteps = 4;

double a_at(int s, int j, int i) { return 1.0 + 0.5 * s + 0.1 * j - 0.3 * i; }
double b_at(int s, int j, int i) { return static_cast<double>((s * 3) % 4) - 1.5 + 0.2 * i + j; }

std::string config(const std::string& dir) {
  return config_file("expressions.xml", {{"DIR", dir}});
}

std::vector<double> sent(int s, const Block& b, double (*f)(int, int, int)) {
  return xios_test::block_values(b, 1, [&](int, int j, int i) { return f(s, j, i); });
}

// Per 2-step period: the mean (or maximum, or last) of `f` at each point.
std::vector<double> in_time(const std::function<double(int, int, int)>& f, char how = 'a') {
  std::vector<double> out;
  for (int p = 0; p < kSteps / 2; ++p) {
    for (int j = 0; j < kNj; ++j) {
      for (int i = 0; i < kNi; ++i) {
        const double x = f(2 * p + 1, j, i);
        const double y = f(2 * p + 2, j, i);
        out.push_back(how == 'a' ? (x + y) * 0.5 : how == 'x' ? std::max(x, y) : y);
      }
    }
  }
  return out;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want,
                 const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t x = 0; x < got.size(); ++x) {
    EXPECT_NEAR(got[x], want[x], 1e-12 * (1 + std::fabs(want[x]))) << what << " [" << x << "]";
  }
}

std::string attribute_text(const std::string& path, const std::string& var, const char* name,
                           nc_type& type) {
  int nc = -1;
  std::string out;
  type = -1;
  if (nc_open(path.c_str(), NC_NOWRITE, &nc) != NC_NOERR) return out;
  int id = NC_GLOBAL;
  if (var.empty() || nc_inq_varid(nc, var.c_str(), &id) == NC_NOERR) {
    if (nc_inq_atttype(nc, id, name, &type) == NC_NOERR && type == NC_CHAR) {
      std::size_t len = 0;
      nc_inq_attlen(nc, id, name, &len);
      out.resize(len);
      nc_get_att_text(nc, id, name, out.data());
    }
  }
  nc_close(nc);
  return out;
}

TEST(XiosExpressions, EvaluatedBeforeTheTemporalOperation) {
  const std::string dir = xios_test::scratch_dir("expressions");
  const std::string cfg = xios_test::write_config(dir, config(dir));
  xios_test::RunSpec spec = xios_test::run_spec(
      cfg, xios_test::servers(), [](xios_lite::Client& c, const ep::Communicator& comm) {
        const Block b = xios_test::uneven_block(comm, kNi, kNj);
        c.set_domain_block("d", b);
        // Expressions are computed, never sent.
        c.close_definition();
        EXPECT_HAS(
            xios_test::error_of([&] {
              c.update_calendar(1);
              c.send_field("ab", sent(1, b, a_at));
            }),
            "field 'ab' is computed from its expression '@a * @b + 2': send the fields it reads");
        EXPECT_HAS(xios_test::error_of([&] { c.send_field("a_copy", sent(1, b, a_at)); }),
                   "field 'a_copy' takes its values from field 'a' (field_ref): send that one");
        EXPECT_HAS(xios_test::error_of([&] { c.send_field("floats", sent(1, b, a_at)); }),
                   "field 'floats' was left out at close_definition (no file uses it): ");
        for (int s = 1; s <= kSteps; ++s) {
          if (s > 1) c.update_calendar(s);
          c.send_field("a", sent(s, b, a_at));
          c.send_field("b", sent(s, b, b_at));
        }
        (void)c.finalise();
      });
  if (xios_test::run_without_errors(spec)) {
    const std::string path = dir + "/expr.nc";
    expect_near(xios_test::read_var(path, "a"), in_time(a_at), "a");
    // The average of the products, not the product of the averages.
    expect_near(xios_test::read_var(path, "ab"),
                in_time([](int s, int j, int i) { return a_at(s, j, i) * b_at(s, j, i) + 2; }),
                "ab");
    expect_near(xios_test::read_var(path, "speed"), in_time([](int s, int j, int i) {
                  return std::sqrt(a_at(s, j, i) * a_at(s, j, i) + b_at(s, j, i) * b_at(s, j, i));
                }),
                "speed");
    expect_near(xios_test::read_var(path, "a_pos"), in_time([](int s, int j, int i) {
                  return a_at(s, j, i) > 0 ? a_at(s, j, i) : 0.0;
                }),
                "a_pos");
    expect_near(xios_test::read_var(path, "a_copy"), in_time(a_at, 'x'), "a_copy");
    expect_near(xios_test::read_var(path, "a_k"),
                in_time([](int s, int j, int i) { return a_at(s, j, i) + 273.15; }), "a_k");
    expect_near(xios_test::read_var(path, "b_inst"), in_time(b_at, 'l'), "b_inst");
    EXPECT_EQ(xios_test::text_att(path, "a_k", "units"), "K");
    EXPECT_EQ(xios_test::text_att(path, "ab", "long_name"), "product");
    // <variable> elements: global and per variable, typed.
    nc_type type = -1;
    EXPECT_EQ(attribute_text(path, "", "institution", type), "here");
    EXPECT_EQ(xios_test::double_att(path, "", "run"), 7);
    EXPECT_EQ(xios_test::double_att(path, "", "scale"), 0.5);
    (void)attribute_text(path, "", "run", type);
    EXPECT_EQ(type, NC_INT);
    EXPECT_EQ(attribute_text(path, "b", "comment", type), "the second wind component");
    EXPECT_EQ(attribute_text(path, "b_inst", "positive", type), "up");
    EXPECT_EQ(xios_test::double_att(path, "b_inst", "flag"), 1);
    // timeseries="both": "twice" in the main file and in one of its own.
    const std::string ts = dir + "/ts_twice.nc";
    const std::vector<double> twice =
        in_time([](int s, int j, int i) { return 2 * (a_at(s, j, i) * b_at(s, j, i) + 2); });
    expect_near(xios_test::read_var(path, "twice"), twice, "twice");
    expect_near(xios_test::read_var(ts, "twice"), twice, "ts twice");
    EXPECT_EQ(xios_test::var_type(ts, "a"), -1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// An expression whose field was not sent: the error names the expression
// and the missing field, and the record is _FillValue, not a wrong value.
TEST(XiosExpressions, AMissingOperandIsNamed) {
  const std::string dir = xios_test::scratch_dir("expressions_missing");
  // Only the expression is written: its missing operand is what the error names.
  std::string text = config(dir);
  const auto first_field = text.find("        <field field_ref=\"a\"/>");
  const auto last_field = text.find("      </file>");
  text.replace(first_field, last_field - first_field, "        <field field_ref=\"ab\"/>\n");
  const std::string cfg = xios_test::write_config(dir, text);
  xios_test::RunSpec spec = xios_test::run_spec(
      cfg, xios_test::servers(), [](xios_lite::Client& c, const ep::Communicator& comm) {
        const Block b = xios_test::uneven_block(comm, kNi, kNj);
        c.set_domain_block("d", b);
        c.close_definition();
        std::string first;
        for (int s = 1; s <= kSteps; ++s) {
          const std::string e = xios_test::error_of([&] { c.update_calendar(s); });
          if (first.empty()) first = e;
          c.send_field("a", sent(s, b, a_at));
          if (s != 2) c.send_field("b", sent(s, b, b_at));
        }
        EXPECT_HAS(first,
                   "field 'ab' was due at step 2 and could not be computed (its expression reads "
                   "field 'b', which was not sent)");
        const std::string e = xios_test::error_of([&] { (void)c.finalise(); });
        EXPECT_HAS(e, "was due at step 2");
      });
  const xios_test::Outcome o = xios_test::run(spec);
  for (const auto& e : o.client_errors) ADD_FAILURE() << "client: " << e;
  if (ep_test::world_rank() == 0) {
    const std::string path = dir + "/expr.nc";
    const std::vector<double> ab = xios_test::read_var(path, "ab");
    ASSERT_EQ(ab.size(), static_cast<std::size_t>(2 * kNj * kNi));
    const double fill = 9.96920996838686905e+36;
    for (std::size_t x = 0; x < ab.size() / 2; ++x) EXPECT_EQ(ab[x], fill) << x;
    EXPECT_NEAR(ab[ab.size() / 2],
                (a_at(3, 0, 0) * b_at(3, 0, 0) + a_at(4, 0, 0) * b_at(4, 0, 0)) / 2 + 2, 1e-12);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

}  // namespace
