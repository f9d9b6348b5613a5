// What used to lose data without a word, refused or made visible before
// anything is written: names that meet in one file or one path (each
// message naming both places), `unit` and `units` that disagree on one
// element, a sampling period longer than the output period, and NaN in the
// temporal operations and in expressions' min and max (one rule for all).
// A write error stays in its file (OutputFiles, serial files). No MPI.
#include <gtest/gtest.h>
#include <netcdf.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "config/expression.hpp"
#include "config_error.hpp"
#include "ep/error.hpp"
#include "netcdf/output_files.hpp"
#include "temporal/temporal.hpp"
#include "thrown_message.hpp"
#include "xios_lite/config.hpp"

namespace {

using xios_test::error_of;

using xios_lite::Operation;

// A context with `files` as its file_definition (lines 1-based as written).
std::string config_with(const std::string& domains, const std::string& files) {
  return R"(<?xml version="1.0"?>
<simulation>
  <context id="atm">
    <calendar type="noleap" start_date="2000-01-01 00:00:00" timestep="1h"/>
    <domain_definition>
      <domain id="dom" ni_glo="8" nj_glo="4"/>
)" + domains +
         R"(
    </domain_definition>
    <axis_definition>
      <axis id="lev" n_glo="2" value="1000 500" bounds="1100 900 900 100"/>
    </axis_definition>
    <grid_definition>
      <grid id="g2" domain_ref="dom"/>
      <grid id="g3" domain_ref="dom" axis_ref="lev"/>
      <grid id="gw" domain_ref="wide"/>
    </grid_definition>
    <field_definition>
      <field id="tas" grid_ref="g2" operation="average"/>
      <field id="ta" grid_ref="g3" operation="average"/>
      <field id="sst" grid_ref="gw" operation="average"/>
    </field_definition>
    <file_definition>
)" + files +
         R"(
    </file_definition>
  </context>
</simulation>
)";
}

const std::string kWide =
    R"(      <domain id="wide" ni_glo="6" nj_glo="3" bounds_lat_1d="0 1 1 2 2 3"/>)";

#define EXPECT_HAS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << "in: " << (text)

TEST(XiosNames, TwoFilesOfOneNameAreRefusedNamingBoth) {
  const std::string e = error_of(config_with(kWide, R"(
      <file id="a" name="out" output_freq="1d"><field field_ref="tas"/></file>
      <file id="b" name="out" output_freq="1d"><field field_ref="sst"/></file>)"));
  EXPECT_HAS(e, "xios_lite::parse_config");
  EXPECT_HAS(e, "iodef.xml:25: <file id=\"b\"> attribute name: output name 'out'");
  EXPECT_HAS(e, "file 'a' (iodef.xml:24: <file id=\"a\">)");
}

TEST(XiosNames, AnOutputMustNotOverwriteAnInput) {
  const std::string e = error_of(config_with(kWide, R"(
      <file id="in" name="forcing" output_freq="1d" mode="read"><field field_ref="sst"/></file>
      <file id="out" name="forcing" output_freq="1d"><field field_ref="tas"/></file>)"));
  EXPECT_HAS(e,
             "<file id=\"out\"> attribute name: output name 'forcing' is also the name of "
             "file 'in' (iodef.xml:24: <file id=\"in\">): the file would overwrite its input");
  // Two read-mode files may read one file.
  EXPECT_EQ(error_of(config_with(kWide, R"(
      <file id="in" name="forcing" output_freq="1d" mode="read"><field field_ref="sst"/></file>
      <file id="in2" name="forcing" output_freq="1d" mode="read"><field field_ref="tas"/></file>)")),
            "");
}

TEST(XiosNames, NameAndSuffixMakeTheName) {
  // "a" + "_b" and "a_b": one path; "./x" and "x" too.
  std::string e = error_of(config_with(kWide, R"(
      <file id="f1" name="a" name_suffix="_b" output_freq="1d"><field field_ref="tas"/></file>
      <file id="f2" name="a_b" output_freq="1d"><field field_ref="tas"/></file>)"));
  EXPECT_HAS(e, "<file id=\"f2\"> attribute name: output name 'a_b'");
  e = error_of(config_with(kWide, R"(
      <file id="f1" name="./x" output_freq="1d"><field field_ref="tas"/></file>
      <file id="f2" name="x" output_freq="1d"><field field_ref="tas"/></file>)"));
  EXPECT_HAS(e, "output name 'x'");
  // Distinct names, the same field in both: fine.
  EXPECT_EQ(error_of(config_with(kWide, R"(
      <file id="f1" name="x" output_freq="1d"><field field_ref="tas"/></file>
      <file id="f2" name="y" output_freq="1d"><field field_ref="tas"/></file>)")),
            "");
}

TEST(XiosNames, TwoVariablesOfOneNameAreRefused) {
  // Already refused by the parser, which sees the file's fields together.
  const std::string e = error_of(config_with(kWide, R"(
      <file id="h" output_freq="1d">
        <field field_ref="tas" name="t"/>
        <field field_ref="tas" name="t" operation="maximum"/>
      </file>)"));
  EXPECT_HAS(e, "iodef.xml:26: <field> attribute name: duplicate variable name 't' in file 'h'");
}

TEST(XiosNames, AVariableNamedLikeACoordinateIsRefused) {
  struct Case {
    std::string name;
    std::string field;
    std::string owner;
  };
  for (const Case& c : std::vector<Case>{
           {"time", "tas", "the time axis"},
           {"time_bounds", "tas", "the time axis"},
           {"lat", "tas", "a coordinate of domain 'dom'"},
           {"lon", "tas", "a coordinate of domain 'dom'"},
           {"lev", "ta", "axis 'lev'"},
           {"lev_bounds", "ta", "axis 'lev'"},
           {"bounds_lat", "sst", "a coordinate of domain 'wide'"},
       }) {
    const std::string e = error_of(config_with(kWide, R"(
      <file id="h" output_freq="1d">
        <field field_ref=")" + c.field + R"(" name=")" + c.name +
                                                          R"("/>
      </file>)"));
    EXPECT_HAS(e, "iodef.xml:25: <field> attribute name: name '" + c.name + "' of variable '" +
                      c.name + "' in file 'h' (iodef.xml:24: <file id=\"h\">)");
    EXPECT_HAS(e, "is already the name of " + c.owner);
  }
  // Two domains in one file: their coordinates are suffixed, and a variable
  // named like the suffixed one is refused; "lat" is then free.
  const std::string two = R"(
      <file id="h" output_freq="1d">
        <field field_ref="tas"/>
        <field field_ref="sst" name="NAME"/>
      </file>)";
  std::string files = two;
  files.replace(files.find("NAME"), 4, "lat_wide");
  EXPECT_HAS(error_of(config_with(kWide, files)), "a coordinate of domain 'wide'");
  files = two;
  files.replace(files.find("NAME"), 4, "lat");
  EXPECT_EQ(error_of(config_with(kWide, files)), "");
}

TEST(XiosNames, TwoAxesOfOneNameInOneFileAreRefused) {
  const std::string xml = config_with(kWide, R"(
      <file id="h" output_freq="1d"><field field_ref="ta"/><field field_ref="tb"/></file>)");
  std::string text = xml;
  text.replace(text.find("    </axis_definition>"), 0,
               "      <axis id=\"lev2\" name=\"lev\" n_glo=\"3\"/>\n");
  text.replace(text.find("    </grid_definition>"), 0,
               "      <grid id=\"g4\" domain_ref=\"dom\" axis_ref=\"lev2\"/>\n");
  text.replace(text.find("    </field_definition>"), 0,
               "      <field id=\"tb\" grid_ref=\"g4\" operation=\"average\"/>\n");
  const std::string e = error_of(text);
  EXPECT_HAS(e, "name 'lev' of axis 'lev2'");
  EXPECT_HAS(e, "is already the name of axis 'lev'");
}

TEST(XiosNames, FreqOpLongerThanOutputFreqIsRefused) {
  const std::string e = error_of(config_with(kWide, R"(
      <file id="h" output_freq="6h"><field field_ref="tas" freq_op="1d"/></file>)"));
  EXPECT_HAS(e,
             "iodef.xml:24: <field> attribute freq_op: value '1d' out of range "
             "(longer than output_freq 6h of file 'h'");
  EXPECT_EQ(error_of(config_with(kWide, R"(
      <file id="h" output_freq="6h"><field field_ref="tas" freq_op="6h"/></file>)")),
            "");
}

// NaN: without detect_missing_value it propagates through every operation,
// wherever it stands among the samples (std::max kept or dropped it by its
// place); with detect_missing_value it is a missing value, left out.
TEST(XiosTemporal, NaNFollowsOneRule) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  constexpr double kFill = -999.0;
  const std::vector<double> samples = {2.0, 5.0, 3.0};
  for (const Operation op : {Operation::kAverage, Operation::kAccumulate, Operation::kMinimum,
                             Operation::kMaximum, Operation::kInstant}) {
    for (std::size_t at = 0; at < samples.size(); ++at) {
      for (const bool detect : {false, true}) {
        for (const bool masked : {false, true}) {
          SCOPED_TRACE(std::string(xios_lite::to_string(op)) + " NaN at sample " +
                       std::to_string(at) + (detect ? " detect" : "") + (masked ? " masked" : ""));
          // Point 0 gets the NaN, point 1 the plain samples.
          xios_lite::temporal::Accumulator acc(op, 2, kFill, detect, masked);
          std::vector<double> kept;
          for (std::size_t s = 0; s < samples.size(); ++s) {
            const std::vector<double> part = {s == at ? kNaN : samples[s], samples[s]};
            if (s != at) kept.push_back(samples[s]);
            const std::vector<std::uint8_t> mask = {1, 1};
            acc.add_part(
                0, part,
                masked ? std::span<const std::uint8_t>(mask) : std::span<const std::uint8_t>());
            acc.end_sample();
          }
          const std::span<const double> r = acc.result();
          const auto fold = [&](const std::vector<double>& v) {
            double x = v[0];
            for (std::size_t i = 1; i < v.size(); ++i) {
              if (op == Operation::kMinimum) x = std::min(x, v[i]);
              if (op == Operation::kMaximum) x = std::max(x, v[i]);
              if (op == Operation::kAverage || op == Operation::kAccumulate) x += v[i];
              if (op == Operation::kInstant) x = v[i];
            }
            return op == Operation::kAverage ? x * (1.0 / static_cast<double>(v.size())) : x;
          };
          EXPECT_EQ(r[1], fold(samples));
          const bool last_only = op == Operation::kInstant;
          if (!detect) {
            if (last_only && at + 1 != samples.size()) {
              EXPECT_EQ(r[0], samples.back());
            } else {
              EXPECT_TRUE(std::isnan(r[0])) << r[0];
            }
          } else if (last_only) {
            EXPECT_EQ(r[0], at + 1 == samples.size() ? kFill : samples.back());
          } else {
            EXPECT_EQ(r[0], fold(kept));
          }
        }
      }
    }
  }
}

TEST(XiosTemporal, NaNMinMaxHelpers) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  using xios_lite::temporal::nan_max;
  using xios_lite::temporal::nan_min;
  EXPECT_TRUE(std::isnan(nan_max(kNaN, 1.0)));
  EXPECT_TRUE(std::isnan(nan_max(1.0, kNaN)));
  EXPECT_TRUE(std::isnan(nan_min(kNaN, 1.0)));
  EXPECT_TRUE(std::isnan(nan_min(1.0, kNaN)));
  EXPECT_EQ(nan_max(1.0, 2.0), 2.0);
  EXPECT_EQ(nan_min(1.0, 2.0), 1.0);
  // The servers' fold of reduced values: the fill value always missing, NaN
  // only when asked.
  xios_lite::temporal::Accumulator keep(Operation::kMaximum, 1, -1.0, true, false, false);
  xios_lite::temporal::Accumulator drop(Operation::kMaximum, 1, -1.0, true, false, true);
  for (const double v : {3.0, -1.0, kNaN, 2.0}) {
    const std::vector<double> one = {v};
    keep.add_part(0, one, {});
    keep.end_sample();
    drop.add_part(0, one, {});
    drop.end_sample();
  }
  EXPECT_TRUE(std::isnan(keep.result()[0]));
  EXPECT_EQ(drop.result()[0], 3.0);
}

// `unit` and its other spelling `units` on one element: different values
// are refused naming both, equal ones pass; on different elements (a
// group's and the field's own) the nearer wins, as for any inherited
// attribute (before: `unit` won wherever it stood, and one value was
// dropped without a word).
TEST(XiosNames, UnitAndUnitsMustAgreeOnOneElement) {
  const auto with = [](const std::string& field_attrs, const std::string& axis_attrs) {
    std::string xml = config_with(kWide, R"(
      <file id="h" output_freq="1d"><field field_ref="pr"/><field field_ref="ta"/></file>)");
    xml.replace(xml.find("    </field_definition>"), 0,
                R"(      <field_group unit="g"><field id="pr" grid_ref="g2" )" + field_attrs +
                    "/></field_group>\n");
    xml.replace(xml.find(R"(n_glo="2")"), 0, axis_attrs + " ");
    return xml;
  };
  std::string e = error_of(with(R"(unit="mm" units="kg m-2 s-1")", ""));
  EXPECT_HAS(e,
             "iodef.xml:21: <field id=\"pr\"> attribute units: 'kg m-2 s-1' differs from "
             "unit 'mm' on the same element");
  e = error_of(with("", R"(unit="m" units="km")"));
  EXPECT_HAS(e, "iodef.xml:10: <axis id=\"lev\"> attribute units: 'km' differs from unit 'm'");
  // Equal values pass; the nearer of a group's unit and the field's own
  // units wins.
  for (const auto& [field_attrs, want] : std::vector<std::pair<std::string, std::string>>{
           {R"(unit="mm" units="mm")", "mm"}, {R"(units="mm")", "mm"}, {"", "g"}}) {
    SCOPED_TRACE(field_attrs);
    const xios_lite::Config cfg =
        xios_lite::parse_config_string(with(field_attrs, R"(unit="hPa" units="hPa")"), "iodef.xml");
    EXPECT_EQ(cfg.fields[static_cast<std::size_t>(cfg.find_field("pr"))].unit, want);
    EXPECT_EQ(cfg.axes[static_cast<std::size_t>(cfg.find_axis("lev"))].unit, "hPa");
  }
}

// NaN in an expression's min and max: a value that propagates, whichever
// argument it is (std::min and std::max kept or dropped it by its place);
// a comparison with it is false, so a condition can replace it.
TEST(XiosTemporal, NaNPropagatesThroughExpressionMinMax) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  for (const char* text : {"max(@a, @b)", "min(@a, @b)", "max(@b, @a)", "min(@b, @a)",
                           "max(max(@a, 1), @b)", "min(@a + 1, @b) * 2"}) {
    SCOPED_TRACE(text);
    xios_lite::Expression ex;
    std::string error;
    ASSERT_TRUE(ex.compile(text, error)) << error;
    ASSERT_EQ(ex.operands().size(), 2U);
    for (const std::vector<double>& in :
         {std::vector<double>{kNaN, 3.0}, std::vector<double>{3.0, kNaN},
          std::vector<double>{kNaN, kNaN}}) {
      EXPECT_TRUE(std::isnan(ex.evaluate_point(in))) << in[0] << " " << in[1];
    }
    EXPECT_FALSE(std::isnan(ex.evaluate_point(std::vector<double>{2.0, 3.0})));
  }
  xios_lite::Expression pick;
  std::string error;
  ASSERT_TRUE(pick.compile("@a == @a ? max(@a, @b) : @b", error)) << error;
  EXPECT_EQ(pick.evaluate_point(std::vector<double>{kNaN, 3.0}), 3.0);
  EXPECT_EQ(pick.evaluate_point(std::vector<double>{5.0, 3.0}), 5.0);
  // A NaN the operand marks as missing (detect_missing_value) never reaches
  // max: the point is the fill value.
  xios_lite::Expression mx;
  ASSERT_TRUE(mx.compile("max(@a, @b)", error)) << error;
  const std::vector<double> a = {kNaN, kNaN, 1.0};
  const std::vector<double> b = {3.0, 3.0, 2.0};
  const std::vector<std::span<const double>> inputs = {a, b};
  const std::vector<std::vector<std::uint8_t>> missing = {{1, 0, 0}, {}};
  std::vector<double> out(3);
  mx.evaluate(inputs, missing, -999.0, out);
  EXPECT_EQ(out[0], -999.0);
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_EQ(out[2], 2.0);
}

}  // namespace

namespace {

// The length of dimension `dim` of the NetCDF file `path` (-1 when it cannot be read).
long dimension_length(const std::string& path, const char* dim) {
  int ncid = -1;
  if (nc_open(path.c_str(), NC_NOWRITE, &ncid) != NC_NOERR) {
    return -1;
  }
  int id = -1;
  std::size_t length = 0;
  const bool ok =
      nc_inq_dimid(ncid, dim, &id) == NC_NOERR && nc_inq_dimlen(ncid, id, &length) == NC_NOERR;
  nc_close(ncid);
  return ok ? static_cast<long>(length) : -1;
}

// Serial files written as a server process writes its multiple_file part:
// records 0 to 2 of the variable of two files.
struct TwoFiles {
  std::string dir;
  xios_lite::Config cfg;
  std::vector<double> values = std::vector<double>(32, 1.5);

  explicit TwoFiles(const std::string& first_dir) {
    char templ[] = "/tmp/xios_dataloss_XXXXXX";
    dir = mkdtemp(templ) != nullptr ? templ : "/tmp";
    cfg =
        xios_lite::parse_config_string(
            config_with(kWide, R"(<file id="first" name=")" + dir + first_dir +
                                   R"(/first" output_freq="1h"><field field_ref="tas"/></file>
      <file id="second" name=")" + dir +
                                   R"(/second" output_freq="1h"><field field_ref="tas"/></file>)"),
            "iodef.xml");
  }
  // Writes records 0 to 2 of both files; returns what each write threw, "" when nothing.
  std::vector<std::string> write(xios_lite::netcdf::OutputFiles& files) const {
    std::vector<std::string> thrown;
    const xios_lite::netcdf::BlockView view{{0, 4, 0, 8, 1}, values.data()};
    for (int r = 0; r < 3; ++r) {
      const xios_lite::records::RecordTime t{r, (r + 1) * 3600.0, r * 3600.0, (r + 1) * 3600.0};
      for (int gvar = 0; gvar < 2; ++gvar) {
        thrown.push_back(xios_test::thrown_message(
            [&] { files.write(gvar, t, std::span(&view, 1)); }, common::ErrorKind::kIo));
      }
    }
    return thrown;
  }
};

// A file that cannot be created throws once, with the cause strerror
// gives; its later records are counted as lost, not written and not
// thrown; the other file takes every record.
TEST(XiosWriteError, AFailedFileTakesNoMoreRecordsAndCountsThem) {
  const TwoFiles two("/no_such_dir");
  xios_lite::netcdf::OutputFiles files(two.cfg, {{{0, 4}, {0, 3}}, true, 0, 1}, MPI_COMM_NULL, 0);
  const std::vector<std::string> thrown = two.write(files);
  EXPECT_HAS(thrown[0], "nc_create");
  EXPECT_HAS(thrown[0], "No such file or directory (directory '" + two.dir + "/no_such_dir/')");
  for (std::size_t i = 1; i < thrown.size(); ++i) {
    EXPECT_EQ(thrown[i], "") << i;
  }
  files.close_all();
  EXPECT_EQ(files.lost_report(),
            "file 'first': 3 record(s) not written after its write error (records 0 to 2)");
  EXPECT_EQ(dimension_length(two.dir + "/second.nc", "time"), 3);
}

// XIOS_LITE_TEST_WRITE_FAILURE: the named writer fails after the named
// record of the named file, and only there.
TEST(XiosWriteError, TheTestHookFailsOneRecordOfOneFile) {
  const TwoFiles two("");
  setenv("XIOS_LITE_TEST_WRITE_FAILURE", "second:0:1", 1);
  xios_lite::netcdf::OutputFiles files(two.cfg, {{{0, 4}, {0, 3}}, true, 0, 1}, MPI_COMM_NULL, 0);
  unsetenv("XIOS_LITE_TEST_WRITE_FAILURE");
  const std::vector<std::string> thrown = two.write(files);
  for (std::size_t i = 0; i < thrown.size(); ++i) {
    if (i == 3) {  // record 1 of the second file
      EXPECT_HAS(thrown[i], "file '" + two.dir + "/second.nc': Input/output error");
      EXPECT_HAS(thrown[i], "XIOS_LITE_TEST_WRITE_FAILURE after record 1");
    } else {
      EXPECT_EQ(thrown[i], "") << i;
    }
  }
  files.close_all();
  EXPECT_EQ(files.lost_report(),
            "file 'second': 2 record(s) not written after its write error (records 1 to 2)");
  EXPECT_EQ(dimension_length(two.dir + "/first.nc", "time"), 3);
}

}  // namespace
