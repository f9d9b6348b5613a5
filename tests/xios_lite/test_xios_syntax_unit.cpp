// XIOS's own syntax, as configurations published by model users write it:
// a <simulation> root with the context "xios" and its server parameters,
// definitions in included files, empty domains the model sizes, grids of
// members, inheritance from groups and references, file groups, and the
// XIOS features xios_lite refuses by name. Also durations, dates and
// calendars, and field expressions. No MPI.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "config/expression.hpp"
#include "config_error.hpp"
#include "ep/error.hpp"
#include "xios_lite/calendar.hpp"
#include "xios_lite/config.hpp"

namespace {

using xios_test::error_of;

using xios_lite::Config;

// A scratch directory for configurations with included files.
class Files {
 public:
  Files() {
    char templ[] = "/tmp/xios_syntax_XXXXXX";
    dir_ = mkdtemp(templ) != nullptr ? templ : "/tmp";
  }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  [[nodiscard]] const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

std::string error_of_file(const std::string& path, const std::string& context = "") {
  try {
    (void)xios_lite::parse_config(path, context);
  } catch (const ep::Error& e) {
    return e.what();
  }
  return "";
}

// The field definitions of a model, in a file of their own (NEMO style).
const char* kFieldDef = R"(<?xml version="1.0"?>
<field_definition level="1" prec="8" operation="average" freq_op="1ts" default_value="1.e20">
  <field_group id="grid_T" grid_ref="grid_T_3D">
    <field id="toce" long_name="temperature" standard_name="sea_water_potential_temperature" unit="degC"/>
    <field id="soce" long_name="salinity" unit="1e-3"/>
    <field id="sst" long_name="sea surface temperature" unit="degC" grid_ref="grid_T_2D"/>
    <field id="sst_K" field_ref="sst" grid_ref="grid_T_2D" unit="K" long_name="sst in kelvin"> sst + 273.15 </field>
    <field id="mld" grid_ref="grid_T_2D" level="3" unit="m"/>
    <field id="ssh" grid_ref="grid_T_2D" unit="m" enabled=".FALSE."/>
  </field_group>
  <field_group id="diag" domain_ref="grid_T">
    <field id="heat" unit="W m-2" detect_missing_value=".TRUE."/>
  </field_group>
</field_definition>
)";

// An iodef as a coupled model has it: the xios context with its
// parameters in variable groups, then the ocean's context.
const char* kIodef = R"(<?xml version="1.0"?>
<simulation>
  <context id="xios">
    <variable_definition>
      <variable_group id="buffer">
        <variable id="optimal_buffer_size" type="string">performance</variable>
        <variable id="buffer_size_factor" type="double">4.0</variable>
      </variable_group>
      <variable_group id="parameters">
        <variable id="using_server" type="bool">true</variable>
        <variable id="info_level" type="int">0</variable>
        <variable id="print_file" type="bool">false</variable>
        <variable id="using_oasis" type="bool">false</variable>
      </variable_group>
    </variable_definition>
  </context>
  <context id="nemo">
    <calendar type="Gregorian" start_date="2012-03-01 15:00:00" time_origin="2012-02-28 15:00:00 + 1d" timestep="1h"/>
    <field_definition src="./field_def.xml"/>
    <domain_definition>
      <domain id="grid_T"/>
      <domain id="grid_T_zoom" domain_ref="grid_T"><zoom_domain ibegin="2" ni="3" jbegin="1" nj="2"/></domain>
    </domain_definition>
    <axis_definition>
      <axis id="deptht" long_name="depth" unit="m" positive="down"/>
      <axis id="deptht_top" axis_ref="deptht"><zoom_axis begin="0" n="2"/></axis>
    </axis_definition>
    <grid_definition>
      <grid id="grid_T_2D"><domain domain_ref="grid_T"/></grid>
      <grid id="grid_T_3D"><domain domain_ref="grid_T"/><axis axis_ref="deptht"/></grid>
      <grid id="grid_T_top"><domain domain_ref="grid_T_zoom"/><axis axis_ref="deptht_top"/></grid>
      <grid id="grid_T_vmin"><domain domain_ref="grid_T"/><scalar><reduce_axis operation="min"/></scalar></grid>
    </grid_definition>
    <file_definition type="one_file" par_access="collective" sync_freq="1d" min_digits="4" enabled=".TRUE.">
      <file_group id="1h" output_freq="1h" output_level="2" enabled=".TRUE.">
        <file id="file1" name="ocean" name_suffix="_grid_T" description="ocean T grid">
          <variable id="model" type="string">toy ocean</variable>
          <field field_ref="toce" name="thetao"/>
          <field field_ref="sst" name="tos" operation="instant"/>
          <field field_ref="sst_K"/>
          <field field_ref="mld"/>
          <field field_ref="ssh"/>
          <field field_ref="heat">
            <variable id="comment" type="string">net heat flux</variable>
          </field>
          <field field_ref="toce" name="thetao_top" grid_ref="grid_T_top"/>
        </file>
      </file_group>
      <file_group id="1d" output_freq="1d" type="multiple_file">
        <file id="file2" name="ocean_daily" enabled="false">
          <field field_ref="sst"/>
        </file>
        <file id="file3" name="ocean_daily_T">
          <field_group operation="maximum">
            <field field_ref="sst" name="tosmax"/>
          </field_group>
        </file>
      </file_group>
    </file_definition>
  </context>
</simulation>
)";

TEST(XiosSyntax, ARealConfigurationParses) {
  const Files files;
  files.write("field_def.xml", kFieldDef);
  const std::string iodef = files.write("iodef.xml", kIodef);
  Config cfg = xios_lite::parse_config(iodef);  // the only context besides "xios"
  EXPECT_EQ(cfg.context, "nemo");
  EXPECT_DOUBLE_EQ(cfg.buffers.factor, 4.0);  // buffer_size_factor
  // The model sizes grid_T and deptht: the definitions wait for it.
  EXPECT_FALSE(cfg.complete);
  EXPECT_EQ(xios_lite::undefined_definitions(cfg),
            "domain 'grid_T': ni_glo, nj_glo; axis 'deptht': n_glo");
  // Inheritance: field_definition -> field_group -> field -> field_ref.
  const auto& toce = cfg.fields[static_cast<std::size_t>(cfg.find_field("toce"))];
  EXPECT_EQ(toce.unit, "degC");
  EXPECT_EQ(toce.operation, xios_lite::Operation::kAverage);  // from the included root
  EXPECT_EQ(toce.default_value, 1e20);
  EXPECT_EQ(toce.level, 1);
  const auto& sst_k = cfg.fields[static_cast<std::size_t>(cfg.find_field("sst_K"))];
  EXPECT_EQ(sst_k.expr, "sst + 273.15");
  EXPECT_EQ(sst_k.source_field, cfg.find_field("sst"));
  EXPECT_EQ(sst_k.grid, cfg.fields[static_cast<std::size_t>(cfg.find_field("sst"))].grid);
  const auto& heat = cfg.fields[static_cast<std::size_t>(cfg.find_field("heat"))];
  EXPECT_TRUE(heat.detect_missing_value);
  EXPECT_EQ(cfg.grids[static_cast<std::size_t>(heat.grid)].domain, cfg.find_domain("grid_T"));
  // Files: file_definition -> file_group -> file; disabled files and fields,
  // and fields above output_level, are left out.
  ASSERT_EQ(cfg.files.size(), 2U);
  const auto& f1 = cfg.files[0];
  EXPECT_EQ(f1.type, xios_lite::FileType::kOneFile);
  EXPECT_EQ(f1.name + f1.name_suffix, "ocean_grid_T");
  EXPECT_EQ(f1.min_digits, 4);
  EXPECT_EQ(f1.output_freq, (xios_lite::Frequency{0, 0, 0, 3600, 0}));
  EXPECT_EQ(f1.sync_freq, (xios_lite::Frequency{0, 0, 1, 0, 0}));
  ASSERT_EQ(f1.attributes.size(), 1U);
  EXPECT_EQ(f1.attributes[0].value, "toy ocean");
  std::vector<std::string> names;
  for (const auto& v : f1.variables) names.push_back(v.name);
  EXPECT_EQ(names, (std::vector<std::string>{"thetao", "tos", "sst_K", "heat", "thetao_top"}));
  EXPECT_EQ(f1.variables[1].operation, xios_lite::Operation::kInstant);  // per file
  EXPECT_EQ(f1.variables[0].unit, "degC");
  EXPECT_EQ(f1.variables[2].unit, "K");
  ASSERT_EQ(f1.variables[3].attributes.size(), 1U);
  EXPECT_EQ(f1.variables[3].attributes[0].name, "comment");
  const auto& f3 = cfg.files[1];
  EXPECT_EQ(f3.name, "ocean_daily_T");
  EXPECT_EQ(f3.type, xios_lite::FileType::kMultipleFile);                // the group's
  EXPECT_EQ(f3.variables[0].operation, xios_lite::Operation::kMaximum);  // file field_group
  // The model gives the sizes; then everything completes: the zoomed grid
  // is a window and a level selection of toce's grid.
  cfg.domains[static_cast<std::size_t>(cfg.find_domain("grid_T"))].ni_glo = 8;
  cfg.domains[static_cast<std::size_t>(cfg.find_domain("grid_T"))].nj_glo = 4;
  cfg.axes[static_cast<std::size_t>(cfg.find_axis("deptht"))].n_glo = 3;
  xios_lite::complete_definitions(cfg);
  const xios_lite::OutputShape& top = cfg.files[0].variables[4].shape;
  EXPECT_EQ(top.window, (xios_lite::Window{2, 3, 1, 2}));
  EXPECT_EQ(top.levels, (std::vector<int>{0, 1}));
  EXPECT_EQ(cfg.files[0].variables[2].source, cfg.find_field("sst_K"));  // an expression
  EXPECT_EQ(cfg.files[0].variables[1].source, cfg.find_field("sst"));
  // time_origin with an offset: 2012-02-29 15:00 (a leap year), one day
  // before the start.
  EXPECT_EQ(cfg.calendar.time_origin(), (xios_lite::Date{2012, 2, 29, 15, 0, 0}));
  EXPECT_EQ(cfg.calendar.origin_offset(), 86400);
}

TEST(XiosSyntax, ErrorsInIncludedFilesNameThatFile) {
  const Files files;
  std::string bad = kFieldDef;
  bad.replace(bad.find("unit=\"1e-3\""), 11, "unit=\"1e-3\" colour=\"red\"");
  files.write("field_def.xml", bad);
  const std::string e = error_of_file(files.write("iodef.xml", kIodef));
  EXPECT_NE(e.find("field_def.xml:5: <field id=\"soce\"> attribute colour: unknown attribute"),
            std::string::npos)
      << e;
  const std::string missing = error_of_file(files.write("other.xml", [] {
    std::string text = kIodef;
    text.replace(text.find("./field_def.xml"), 15, "./nowhere.xml");
    return text;
  }()));
  EXPECT_NE(missing.find("other.xml:19: <field_definition> attribute src: cannot open"),
            std::string::npos)
      << missing;
}

// A file included through nested "./" includes is named as a user writes
// it: no "." components, a relative path stays relative.
TEST(XiosSyntax, NestedIncludesNameTheFileAsWritten) {
  const Files files;
  files.write("group.xml", R"(<?xml version="1.0"?>
<field_group id="more" grid_ref="grid_T_2D">
  <field id="extra" colour="red"/>
</field_group>
)");
  std::string def = kFieldDef;
  def.replace(def.find("</field_definition>"), 0, "  <field_group src=\"./group.xml\"/>\n");
  files.write("field_def.xml", def);
  const std::string where = "group.xml:3: <field id=\"extra\"> attribute colour: unknown attribute";
  const std::string absolute = error_of_file(files.write("iodef.xml", kIodef));
  EXPECT_NE(absolute.find(files.dir() + "/" + where), std::string::npos) << absolute;
  EXPECT_EQ(absolute.find("/./"), std::string::npos) << absolute;
  // From the directory itself, as a model run there names its iodef.
  std::string cwd(4096, '\0');
  ASSERT_NE(getcwd(cwd.data(), cwd.size()), nullptr);
  ASSERT_EQ(chdir(files.dir().c_str()), 0);
  const std::string relative = error_of_file("iodef.xml");
  ASSERT_EQ(chdir(cwd.c_str()), 0);
  EXPECT_NE(relative.find(" " + where), std::string::npos) << relative;
  EXPECT_EQ(relative.find("./"), std::string::npos) << relative;
  // "./loop.xml" and "loop.xml" are one file: a loop is found at once.
  files.write("loop.xml", "<field_definition src=\"./loop.xml\"/>\n");
  std::string text = kIodef;
  text.replace(text.find("./field_def.xml"), 15, "loop.xml");
  const std::string loop = error_of_file(files.write("iodef.xml", text));
  EXPECT_NE(loop.find("'./loop.xml' includes itself (through " + files.dir() + "/loop.xml)"),
            std::string::npos)
      << loop;
}

// An XIOS feature xios_lite does not implement is refused as such, never
// as a typo.
TEST(XiosSyntax, UnsupportedXiosFeaturesAreNamed) {
  const Files files;
  files.write("field_def.xml", kFieldDef);
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string text = kIodef;
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
    return error_of_file(files.write("iodef.xml", text));
  };
  // Each case: the text of kIodef replaced, what replaces it, and a part of
  // the error that must name the feature (and where the line is stable, the line).
  struct Case {
    const char* from;
    const char* to;
    const char* expected;
  };
  const Case cases[] = {
      {R"(<zoom_domain ibegin="2" ni="3" jbegin="1" nj="2"/>)",
       R"(<interpolate_domain order="2"/>)",
       "iodef.xml:22: <interpolate_domain>: unsupported XIOS feature (interpolation between grids "
       "(interpolate_domain))"},
      {R"(<field field_ref="mld"/>)", R"(<field field_ref="mld" scale_factor="0.1"/>)",
       "attribute scale_factor: unsupported XIOS feature (packed output"},
      {R"(<variable id="using_oasis" type="bool">false)",
       R"(<variable id="using_oasis" type="bool">true)",
       "iodef.xml:13: <variable id=\"using_oasis\">: unsupported XIOS feature (coupling through "
       "OASIS)"},
      {R"(name="ocean_daily_T")", R"(name="ocean_daily_T" format="netcdf4_classic")",
       "attribute format: unsupported XIOS feature (netcdf4_classic"},
      {R"(<domain id="grid_T"/>)", R"(<domain id="grid_T" data_dim="3"/>)",
       "<domain id=\"grid_T\"> attribute data_dim: "},
      {R"(<variable id="info_level" type="int">0</variable>)",
       R"(<variable id="info_levle" type="int">0</variable>)",
       "unknown XIOS server parameter 'info_levle'"},
      {R"(<reduce_axis operation="min"/>)", R"(<reduce_axis operation="median"/>)",
       "<reduce_axis> attribute operation: unknown reduction 'median'"},
  };
  for (const Case& c : cases) {
    const std::string e = with(c.from, c.to);
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.to << ": " << e;
  }
}

TEST(XiosSyntax, SeveralContextsAreNamed) {
  const std::string two = R"(<simulation>
  <context id="atm"><calendar type="NoLeap" start_date="2000-01-01" timestep="1h"/></context>
  <context id="oce"><calendar type="D360" start_date="2000-01-01" timestep="2h"/></context>
</simulation>)";
  const Files files;
  const std::string path = files.write("iodef.xml", two);
  EXPECT_NE(error_of_file(path).find("several contexts (atm, oce)"), std::string::npos);
  EXPECT_EQ(xios_lite::parse_config(path, "oce").calendar.timestep_seconds(), 7200);
  EXPECT_EQ(xios_lite::parse_config(path, "atm").calendar.type(), xios_lite::CalendarType::kNoLeap);
  EXPECT_NE(error_of_file(path, "ice").find("no context 'ice'"), std::string::npos);
  EXPECT_EQ(xios_lite::parse_simulation(path).contexts.size(), 2U);
}

// XIOS's array form, booleans in both spellings, and the legacy dialect's
// attributes in the same parser.
TEST(XiosSyntax, ValuesAsXiosWritesThem) {
  const std::string xml = R"(<simulation><context id="c">
  <calendar type="gregorian" start_date="2000-01-01" timestep="30mi"/>
  <domain_definition><domain id="d" ni_glo="3" nj_glo="2" lonvalue_1d="(0,2)[10 20 30]" latvalue_1d="(0,1)[-5 5]"/></domain_definition>
  <axis_definition><axis id="z" n_glo="2" value="(0,1)[100 200]" bounds="(0,1)x(0,1)[50 150 150 250]"/></axis_definition>
  <grid_definition><grid id="g"><domain domain_ref="d"/><axis axis_ref="z"/></grid></grid_definition>
  <field_definition><field id="f" grid_ref="g" detect_missing_value=".true." freq_op="2ts" freq_offset="1ts"/></field_definition>
  <file_definition><file id="o" output_freq="1h30mi" enabled=".TRUE."><field field_ref="f"/></file></file_definition>
</context></simulation>)";
  const Config cfg = xios_lite::parse_config_string(xml, "iodef.xml");
  ASSERT_TRUE(cfg.complete);
  EXPECT_EQ(cfg.domains[0].lon, (std::vector<double>{10, 20, 30}));
  EXPECT_EQ(cfg.axes[0].bounds, (std::vector<double>{50, 150, 150, 250}));
  EXPECT_TRUE(cfg.fields[0].detect_missing_value);
  EXPECT_EQ(cfg.files[0].variables[0].freq_offset, (xios_lite::Frequency{0, 0, 0, 0, 1}));
  EXPECT_EQ(xios_lite::to_string(cfg.files[0].output_freq), "1h30mi");
  std::string bad = xml;
  bad.replace(bad.find("(0,2)[10 20 30]"), 15, "(0,3)[10 20 30]");
  EXPECT_NE(error_of(bad).find("attribute lonvalue_1d: the array declares 4 values and lists 3"),
            std::string::npos)
      << error_of(bad);
  bad = xml;
  bad.replace(bad.find(R"(output_freq="1h30mi")"), 20, R"(output_freq="1h15mi")");
  EXPECT_NE(error_of(bad).find("attribute output_freq: value '1h15mi' out of range (not a "
                               "multiple of the timestep)"),
            std::string::npos)
      << error_of(bad);
}

TEST(XiosCalendars, JulianAllLeapAndUserDefined) {
  using xios_lite::Calendar;
  using xios_lite::CalendarType;
  using xios_lite::Date;
  const xios_lite::Frequency year{1, 0, 0, 0, 0};
  const Calendar julian(CalendarType::kJulian, {1900, 1, 1, 0, 0, 0}, 3600);
  EXPECT_EQ(julian.days_in_month(1900, 2), 29);  // a julian leap year, not a gregorian one
  EXPECT_EQ(julian.boundary(year, 1), 366LL * 86400);
  EXPECT_EQ(julian.date_at(366LL * 86400), (Date{1901, 1, 1, 0, 0, 0}));
  const Calendar greg(CalendarType::kGregorian, {1900, 1, 1, 0, 0, 0}, 3600);
  EXPECT_EQ(greg.boundary(year, 1), 365LL * 86400);
  const Calendar all_leap(CalendarType::kAllLeap, {2001, 2, 28, 0, 0, 0}, 3600);
  EXPECT_EQ(all_leap.date_at(86400), (Date{2001, 2, 29, 0, 0, 0}));
  EXPECT_EQ(all_leap.boundary(year, 3), 3LL * 366 * 86400);
  // A user_defined calendar: 10-hour days, 3 months of 4, 5 and 6 days.
  const Calendar mars(CalendarType::kUserDefined, {0, 1, 1, 0, 0, 0}, 1800, {36000, {4, 5, 6}});
  EXPECT_EQ(mars.boundary({0, 1, 0, 0, 0}, 1), 4LL * 36000);
  EXPECT_EQ(mars.boundary(year, 1), 15LL * 36000);
  EXPECT_EQ(mars.date_at(15LL * 36000 + 9 * 3600), (Date{1, 1, 1, 9, 0, 0}));
  EXPECT_FALSE(mars.is_valid({0, 1, 1, 10, 0, 0}));  // past the day's length
  EXPECT_FALSE(mars.is_valid({0, 4, 1, 0, 0, 0}));   // a fourth month
  xios_lite::CalendarType t{};
  EXPECT_TRUE(xios_lite::parse_calendar_type("AllLeap", t));
  EXPECT_EQ(t, CalendarType::kAllLeap);
  EXPECT_TRUE(xios_lite::parse_calendar_type("366_day", t));
  EXPECT_TRUE(xios_lite::parse_calendar_type("D360", t));
  EXPECT_EQ(t, CalendarType::k360Day);
  EXPECT_FALSE(xios_lite::parse_calendar_type("lunar", t));
}

TEST(XiosCalendars, DatesWithOffsetsAndSplitFormats) {
  using xios_lite::Date;
  const xios_lite::Calendar noleap(xios_lite::CalendarType::kNoLeap, {2000, 1, 1, 0, 0, 0}, 60);
  Date d;
  EXPECT_EQ(xios_lite::parse_date("2001-02-28 23:00:00 + 2h", noleap, d), "");
  EXPECT_EQ(d, (Date{2001, 3, 1, 1, 0, 0}));
  EXPECT_EQ(xios_lite::parse_date("2001-02", noleap, d), "");
  EXPECT_EQ(d, (Date{2001, 2, 1, 0, 0, 0}));
  EXPECT_EQ(xios_lite::parse_date("2001-01-31 + 1mo", noleap, d), "");
  EXPECT_EQ(d, (Date{2001, 2, 28, 0, 0, 0}));  // clamped to the month's length
  EXPECT_NE(xios_lite::parse_date("2001-02-29", noleap, d), "");
  EXPECT_NE(xios_lite::parse_date("2001-02-01 + 1ts", noleap, d), "");
  EXPECT_EQ(xios_lite::format_date_as({2001, 3, 4, 5, 6, 7}, "%y%mo%d_%h%mi%s"), "20010304_050607");
  EXPECT_EQ(xios_lite::format_date_as({2001, 3, 4, 5, 6, 7}, "%y-%mo"), "2001-03");
}

TEST(XiosExpressions, CompileAndEvaluate) {
  const auto eval = [](const std::string& text, std::vector<double> operands) {
    xios_lite::Expression e;
    std::string error;
    EXPECT_TRUE(e.compile(text, error)) << text << ": " << error;
    return e.evaluate_point(operands);
  };
  EXPECT_DOUBLE_EQ(eval("@a * @b + 2", {3, 4}), 14);
  EXPECT_DOUBLE_EQ(eval("a - b - 1", {10, 4}), 5);  // left-associative
  EXPECT_DOUBLE_EQ(eval("2 ^ 3 ^ 2", {}), 512);     // right-associative
  EXPECT_DOUBLE_EQ(eval("-a ^ 2", {3}), 9);
  EXPECT_DOUBLE_EQ(eval("sqrt(@u*@u + @v*@v)", {3, 4}), 5);
  EXPECT_DOUBLE_EQ(eval("@a > 0 ? @a : 0", {-2}), 0);
  EXPECT_DOUBLE_EQ(eval("max(a, 2) + min(a, 2)", {5}), 7);
  EXPECT_DOUBLE_EQ(eval("a /= 1", {1}), 0);
  EXPECT_DOUBLE_EQ(eval("exp(log(a)) + abs(-1) + log10(100)", {2}), 5);
  EXPECT_DOUBLE_EQ(eval("1.5e1 / (a - 2)", {5}), 5);
  xios_lite::Expression e;
  std::string error;
  EXPECT_FALSE(e.compile("@a + ", error));
  EXPECT_FALSE(e.compile("cosh(a", error));
  EXPECT_FALSE(e.compile("median(a)", error));
  EXPECT_NE(error.find("unknown function 'median'"), std::string::npos) << error;
  ASSERT_TRUE(e.compile("@sst * 2 + @sst", error));
  EXPECT_EQ(e.operands(), (std::vector<std::string>{"sst"}));
}

// Expressions in a configuration: operands resolved, grids shared, cycles refused.
TEST(XiosExpressions, InTheConfiguration) {
  const auto config = [](const std::string& fields) {
    return R"(<simulation><context id="c">
  <calendar type="gregorian" start_date="2000-01-01" timestep="1h"/>
  <domain_definition><domain id="d" ni_glo="4" nj_glo="2"/><domain id="e" ni_glo="3" nj_glo="2"/></domain_definition>
  <field_definition>
    <field id="a" domain_ref="d"/><field id="b" domain_ref="d"/><field id="c" domain_ref="e"/>
    )" + fields +
           R"(
  </field_definition>
  <file_definition><file id="o" output_freq="2h"><field field_ref="x"/></file></file_definition>
</context></simulation>)";
  };
  const Config cfg =
      xios_lite::parse_config_string(config(R"(<field id="x">@a * @b</field>)"), "i.xml");
  const auto& x = cfg.fields[static_cast<std::size_t>(cfg.find_field("x"))];
  EXPECT_EQ(x.expr_operands, (std::vector<int>{cfg.find_field("a"), cfg.find_field("b")}));
  EXPECT_EQ(x.grid, cfg.fields[0].grid);
  EXPECT_NE(error_of(config(R"(<field id="x">@a * @c</field>)"))
                .find("operand 'c' is on grid '(e)', the expression on grid '(d)'"),
            std::string::npos);
  EXPECT_NE(
      error_of(config(R"(<field id="x">@y + 1</field><field id="y">@x + 1</field>)")).find("cycle"),
      std::string::npos);
  EXPECT_NE(error_of(config(R"(<field id="x">@nope</field>)")).find("unknown field 'nope'"),
            std::string::npos);
  // '@' over a freq_op of several timesteps: a's operation over each
  // window; a window of part of a timestep is refused, saying so.
  const Config windows = xios_lite::parse_config_string(
      config(R"(<field id="x" freq_op="2h">@a + a</field>)"), "i.xml");
  const auto& w = windows.fields[static_cast<std::size_t>(windows.find_field("x"))];
  EXPECT_EQ(w.expr_operands, (std::vector<int>{windows.find_field("a"), windows.find_field("a")}));
  EXPECT_TRUE(xios_lite::has_at_windows(windows, windows.find_field("x")));
  EXPECT_FALSE(xios_lite::has_at_windows(cfg, cfg.find_field("x")));
  const std::string part = error_of(config(R"(<field id="x" freq_op="90mi">@a</field>)"));
  EXPECT_NE(
      part.find("iodef.xml:6: <field id=\"x\"> attribute freq_op: value '1h30mi' out of range "
                "(not a whole number of timesteps of 3600 s: the @ operator of '@a' "
                "reduces its operands over windows of freq_op)"),
      std::string::npos)
      << part;
  const std::string once =
      error_of(config(R"(<field id="y" field_ref="a" operation="once"/><field id="x" )"
                      R"(freq_op="2h">@y</field>)"));
  EXPECT_NE(once.find("unsupported XIOS feature ('@y' over freq_op 2h: field 'y' has operation "
                      "once"),
            std::string::npos)
      << once;
  const std::string inner =
      error_of(config(R"(<field id="y" freq_op="2h">@a</field><field id="x">y * 2</field>)"));
  EXPECT_NE(inner.find("operand 'y' of 'y * 2' is computed once per freq_op 2h"), std::string::npos)
      << inner;
}

// As XIOS, which solves only what files use: a field no file uses whose
// '@' windows cannot be completed is left out with a warning naming it (NEMO's
// uocetr_vsum_op and the strait sections reading monthly windows), and so
// is one no file uses that reads a field left out; read by a file, each is
// the error it was.
TEST(XiosExpressions, UnusedWindowsThatCannotBeCompletedAreLeftOut) {
  const auto config = [](const std::string& written) {
    return R"(<simulation><context id="c">
  <calendar type="gregorian" start_date="2000-01-01" timestep="1h"/>
  <domain_definition><domain id="d" ni_glo="4" nj_glo="2"/></domain_definition>
  <field_definition>
    <field id="a" domain_ref="d"/><field id="b" domain_ref="d"/>
    <field id="x">a + b</field>
    <field id="y" freq_op="2h">@a</field><field id="z">y * 2</field>
    <field id="o" field_ref="a" operation="once"/><field id="w" freq_op="2h">@o</field>
    <field id="p" freq_op="90mi">@b</field>
    <field id="q">z + 1</field>
  </field_definition>
  <file_definition><file id="f" output_freq="2h"><field field_ref=")" +
           written + R"("/></file></file_definition>
</context></simulation>)";
  };
  const Config cfg = xios_lite::parse_config_string(config("x"), "i.xml");
  const auto warning = [&](const std::string& field) {
    const std::string tag = "<field id=\"" + field + "\">";
    const auto it =
        std::find_if(cfg.warnings.begin(), cfg.warnings.end(),
                     [&](const std::string& w) { return w.find(tag) != std::string::npos; });
    return it == cfg.warnings.end() ? std::string() : *it;
  };
  const std::string z = warning("z");
  EXPECT_NE(z.find("operand 'y' of 'y * 2' is computed once per freq_op 2h"), std::string::npos)
      << z;
  EXPECT_NE(warning("w").find("'@o' over freq_op 2h: field 'o' has operation once"),
            std::string::npos)
      << warning("w");
  EXPECT_NE(warning("p").find("attribute freq_op: value '1h30mi' out of range"), std::string::npos)
      << warning("p");
  EXPECT_NE(warning("q").find("attribute expr: field 'z' is left out"), std::string::npos)
      << warning("q");
  for (const char* f : {"z", "w", "p", "q"}) {
    EXPECT_NE(warning(f).find("(no file uses the field: it is left out)"), std::string::npos) << f;
  }
  // y itself completes: its window is whole timesteps.
  EXPECT_EQ(warning("y"), "");
  EXPECT_TRUE(xios_lite::has_at_windows(cfg, cfg.find_field("y")));
  // Read by a file: the errors they were.
  EXPECT_NE(error_of(config("z")).find("operand 'y' of 'y * 2' is computed once per freq_op 2h"),
            std::string::npos);
  EXPECT_NE(error_of(config("w")).find("field 'o' has operation once"), std::string::npos);
  EXPECT_NE(error_of(config("p")).find("value '1h30mi' out of range"), std::string::npos);
  EXPECT_NE(error_of(config("q")).find("operand 'y' of 'y * 2' is computed once per freq_op 2h"),
            std::string::npos);
}

// On a domain, a scalar is one value per point: an operand on the domain
// alone lives on the points of an expression on the domain and a scalar
// (NEMO's vertical means against surface fields), and the reverse; a level
// extracted to a scalar is an operand of the domain's points, a 2-D field
// duplicated on an axis one of the 3-D points, a zoom then a sum the sum
// of the levels kept; an operand with an axis is other points.
TEST(XiosExpressions, AScalarOnADomainHoldsTheDomainsPoints) {
  const auto config = [](const std::string& fields) {
    return R"(<simulation><context id="c">
  <calendar type="gregorian" start_date="2000-01-01" timestep="1h"/>
  <domain_definition><domain id="d" ni_glo="4" nj_glo="2"/></domain_definition>
  <axis_definition><axis id="z" n_glo="2"/><axis id="zz" axis_ref="z"><zoom_axis begin="1" n="1"/></axis></axis_definition>
  <grid_definition>
    <grid id="g2"><domain domain_ref="d"/></grid>
    <grid id="gz"><domain domain_ref="d"/><axis axis_ref="zz"/></grid>
    <grid id="g3"><domain domain_ref="d"/><axis axis_ref="z"/></grid>
    <grid id="gs"><domain domain_ref="d"/><scalar><reduce_axis operation="sum"/></scalar></grid>
    <grid id="gx"><domain domain_ref="d"/><scalar><extract_axis position="1"/></scalar></grid>
    <grid id="gd"><domain domain_ref="d"/><axis axis_ref="z"><duplicate_scalar/></axis></grid>
  </grid_definition>
  <field_definition>
    <field id="a" grid_ref="g2"/><field id="t" grid_ref="g3"/>
    <field id="ts" field_ref="t" grid_ref="gs"/><field id="tx" field_ref="t" grid_ref="gx"/>
    <field id="ad" field_ref="a" grid_ref="gd"/>
    <field id="tz" field_ref="t" grid_ref="gz"/><field id="tzs" field_ref="tz" grid_ref="gs"/>
    )" + fields +
           R"(
  </field_definition>
  <file_definition><file id="o" output_freq="2h"><field field_ref="x"/></file></file_definition>
</context></simulation>)";
  };
  EXPECT_EQ(error_of(config(R"(<field id="x" field_ref="ts" grid_ref="gs">ts - a</field>)")), "");
  EXPECT_EQ(error_of(config(R"(<field id="x">a - ts</field>)")), "");
  // The transformation that leads to `operand` in a context of `fields`.
  const auto transform_of = [&config](const char* fields, const char* operand) {
    const Config cfg = xios_lite::parse_config_string(config(fields), "i.xml");
    return xios_lite::operand_transform(cfg, cfg.find_field(operand));
  };
  // One level extracted to a scalar (NEMO's grid_T_SFC): that level of t.
  const std::optional<xios_lite::OperandTransform> t =
      transform_of(R"(<field id="x">a - tx</field>)", "tx");
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->active);
  EXPECT_EQ(t->levels, std::vector<int>{1});
  // A 2-D field duplicated on every level (duplicate_scalar, NEMO's straits).
  const std::optional<xios_lite::OperandTransform> d = transform_of(
      R"(<field id="m" grid_ref="gd"/><field id="x" grid_ref="gd">m * ad</field>)", "ad");
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->active);
  EXPECT_EQ(d->levels, (std::vector<int>{0, 0}));
  // A chain: the zoom to level 1, then the sum of what it kept.
  const std::optional<xios_lite::OperandTransform> z =
      transform_of(R"(<field id="x">a - tzs</field>)", "tzs");
  ASSERT_TRUE(z.has_value());
  EXPECT_TRUE(z->active);
  EXPECT_EQ(z->reduce, xios_lite::Reduction::kSum);
  EXPECT_EQ(z->levels, std::vector<int>{1});
  EXPECT_NE(error_of(config(R"(<field id="x">a - t</field>)"))
                .find("operand 't' is on grid 'g3', the expression on grid 'g2'"),
            std::string::npos)
      << error_of(config(R"(<field id="x">a - t</field>)"));
}

// Files in read mode: kept apart from the output files (Config::inputs),
// what cannot be read refused with its place.
TEST(XiosReadMode, InputFilesAndTheirLimits) {
  const auto expect_has = [](const std::string& text, const std::string& part) {
    EXPECT_NE(text.find(part), std::string::npos) << text;
  };
  const auto xml = [](const std::string& file, const std::string& fields) {
    return R"(<simulation><context id="c">
  <calendar type="gregorian" start_date="2000-01-01" timestep="1h"/>
  <domain_definition><domain id="d" ni_glo="4" nj_glo="3"/></domain_definition>
  <grid_definition><grid id="g"><domain domain_ref="d"/></grid></grid_definition>
  <field_definition><field id="a" grid_ref="g"/><field id="b" grid_ref="g">@a * 2</field></field_definition>
  <file_definition>
    <file id="out" output_freq="1h"><field field_ref="a"/></file>
    )" + file +
           fields +
           R"(</file>
  </file_definition>
</context></simulation>)";
  };
  const Config cfg = xios_lite::parse_config_string(
      xml(R"(<file id="in" name="forcing" output_freq="2h" mode="read">)",
          R"(<field field_ref="a"/>)"),
      "iodef.xml");
  ASSERT_EQ(cfg.files.size(), 1U);
  ASSERT_EQ(cfg.inputs.size(), 1U);
  EXPECT_EQ(cfg.inputs[0].id, "in");
  EXPECT_EQ(cfg.find_input(cfg.find_field("a")), 0);
  EXPECT_EQ(cfg.input_variable(0).name, "a");
  EXPECT_EQ(cfg.find_input(cfg.find_field("b")), -1);
  EXPECT_NE(xios_lite::definition_text(cfg).find("input in variable a: field a"),
            std::string::npos);
  expect_has(
      error_of(xml(R"(<file id="in" output_freq="1mo" mode="read">)", R"(<field field_ref="a"/>)")),
      "<file id=\"in\"> attribute output_freq: unsupported XIOS feature (files in read "
      "mode with records in months or years");
  expect_has(
      error_of(xml(R"(<file id="in" output_freq="1h" mode="read">)", R"(<field field_ref="b"/>)")),
      "field 'b' is read from a file in read mode: it cannot also take its values from an "
      "expression");
}

}  // namespace
