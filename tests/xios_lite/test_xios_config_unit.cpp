// xios_lite pure functions: configuration parsing and its errors, calendars
// and frequencies, temporal accumulation. No MPI.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "config_error.hpp"
#include "ep/error.hpp"
#include "netcdf/chunking.hpp"
#include "temporal/temporal.hpp"
#include "xios_lite/calendar.hpp"
#include "xios_lite/config.hpp"

namespace {

using xios_test::error_of;

using xios_lite::parse_config_string;

// A valid configuration; tests replace one line to make it wrong.
std::string base_config() {
  return R"(<?xml version="1.0"?>
<xios_lite>
  <context id="atm">
    <calendar type="noleap" start_date="2000-01-01 00:00:00" timestep="1h"/>
    <options buffer_factor="3" finalise_timeout="5"/>
    <domain_definition>
      <domain id="dom" ni_glo="8" nj_glo="4"/>
    </domain_definition>
    <axis_definition>
      <axis id="lev" n_glo="2" value="1000 500" units="hPa" positive="down"/>
    </axis_definition>
    <grid_definition>
      <grid id="g2" domain_ref="dom"/>
      <grid id="g3" domain_ref="dom" axis_ref="lev"/>
    </grid_definition>
    <field_definition>
      <field_group id="phys" operation="average" grid_ref="g2" units="K">
        <field id="tas" standard_name="air_temperature"/>
        <field id="ta" grid_ref="g3"/>
      </field_group>
      <field id="ps" grid_ref="g2" operation="instant" units="Pa"/>
    </field_definition>
    <file_definition>
      <file id="hist" name="hist" output_freq="6h" split_freq="1d" sync_freq="12h" compression_level="2">
        <field field_ref="tas"/>
        <field field_ref="ta" operation="maximum" name="ta_max"/>
        <field field_ref="ps"/>
      </file>
    </file_definition>
  </context>
</xios_lite>
)";
}

std::string replaced(const std::string& from, const std::string& to) {
  std::string text = base_config();
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return pos == std::string::npos ? text : text.replace(pos, from.size(), to);
}

// "iodef.xml:<line>:" of the line holding `text` in the base configuration.
std::string at(const std::string& text) {
  const std::string cfg = base_config();
  const auto pos = cfg.find(text);
  EXPECT_NE(pos, std::string::npos) << text;
  const auto line =
      1 + std::count(cfg.begin(), cfg.begin() + static_cast<std::ptrdiff_t>(pos), '\n');
  return "iodef.xml:" + std::to_string(line) + ":";
}

TEST(XiosConfig, ParsesAndInherits) {
  const xios_lite::Config cfg = parse_config_string(base_config(), "iodef.xml");
  EXPECT_EQ(cfg.context, "atm");
  EXPECT_EQ(cfg.calendar.timestep_seconds(), 3600);
  EXPECT_EQ(cfg.calendar.type(), xios_lite::CalendarType::kNoLeap);
  ASSERT_EQ(cfg.fields.size(), 3U);
  EXPECT_EQ(cfg.fields[0].unit, "K");  // inherited from the group
  EXPECT_EQ(cfg.fields[0].operation, xios_lite::Operation::kAverage);
  EXPECT_EQ(cfg.fields[1].grid, 1);  // own grid_ref overrides the group's
  EXPECT_EQ(cfg.fields[2].operation, xios_lite::Operation::kInstant);
  ASSERT_EQ(cfg.files.size(), 1U);
  const auto& f = cfg.files[0];
  EXPECT_EQ(f.output_freq, (xios_lite::Frequency{0, 0, 0, std::int64_t{6} * 3600, 0}));
  EXPECT_EQ(f.compression_level, 2);
  ASSERT_EQ(f.variables.size(), 3U);
  EXPECT_EQ(f.variables[1].name, "ta_max");
  EXPECT_EQ(f.variables[1].operation, xios_lite::Operation::kMaximum);
  EXPECT_DOUBLE_EQ(cfg.buffers.factor, 3.0);
  ASSERT_EQ(cfg.domains[0].lon.size(), 8U);
  EXPECT_DOUBLE_EQ(cfg.domains[0].lon[0], 22.5);
  EXPECT_DOUBLE_EQ(cfg.domains[0].lat[0], -67.5);
  EXPECT_EQ(cfg.levels(1), 2);
}

TEST(XiosConfig, UnknownReferenceNamesFileLineElementAttribute) {
  const std::string e =
      error_of(replaced(R"(<field field_ref="ps"/>)", R"(<field field_ref="psx"/>)"));
  EXPECT_NE(e.find(at(R"(<field field_ref="ps"/>)")), std::string::npos) << e;
  EXPECT_NE(e.find("<field>"), std::string::npos) << e;
  EXPECT_NE(e.find("attribute field_ref"), std::string::npos) << e;
  EXPECT_NE(e.find("unknown field 'psx'"), std::string::npos) << e;
}

// The lines of an error message.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    out.push_back(line);
  }
  return out;
}

// The errors of independent definitions come together, one per line, in the
// order the parse meets them (domains, grids, fields, files); what refers to
// a failed definition (the grids on the domain, the file's fields) adds none.
TEST(XiosConfig, EveryIndependentErrorIsReported) {
  std::string xml = base_config();
  const std::array<std::pair<std::string, std::string>, 3> errors{{
      {R"(ni_glo="8")", R"(ni_glo="0")"},
      {R"(<field id="ta" grid_ref="g3"/>)", R"(<field id="ta" grid_ref="g9"/>)"},
      {R"(output_freq="6h")", R"(output_freq="6hours")"},
  }};
  for (const auto& [from, to] : errors) {
    xml.replace(xml.find(from), from.size(), to);
  }
  const std::string e = error_of(xml);
  const std::vector<std::string> lines = lines_of(e);
  ASSERT_EQ(lines.size(), 3U) << e;
  EXPECT_EQ(lines[0].rfind("xios_lite::parse_config: " + at(R"(<domain id="dom")") +
                               R"( <domain id="dom"> attribute ni_glo: )",
                           0),
            0U)
      << e;
  EXPECT_EQ(lines[1],
            at(R"(<field id="ta")") + R"( <field id="ta"> attribute grid_ref: unknown grid 'g9')")
      << e;
  EXPECT_EQ(lines[2].rfind(at("output_freq") +
                               R"( <file id="hist"> attribute output_freq: bad frequency '6hours')",
                           0),
            0U)
      << e;
}

// A single error reads as it always has: one line, the call's prefix first.
TEST(XiosConfig, OneErrorIsReportedAlone) {
  const std::string e = error_of(replaced(R"(output_freq="6h")", R"(output_freq="6hours")"));
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  EXPECT_EQ(e.rfind("xios_lite::parse_config: " + at("output_freq") +
                        R"( <file id="hist"> attribute output_freq: bad frequency '6hours')",
                    0),
            0U)
      << e;
}

// Past 50 errors the list says how many more there are. (An unknown
// attribute is an error wherever it is; an unknown grid only where a file
// uses the field: see UnusedFieldsThatCannotBeEvaluatedAreLeftOut.)
TEST(XiosConfig, LongErrorListsAreCut) {
  std::string fields;
  for (int i = 0; i < 60; ++i) {
    fields += "<field id=\"f" + std::to_string(i) + "\" grid_ref=\"g2\" colour=\"red\"/>\n";
  }
  const std::string ps = R"(<field id="ps" grid_ref="g2" operation="instant" units="Pa"/>)";
  const std::string e = error_of(replaced(ps, ps + "\n" + fields));
  const std::vector<std::string> lines = lines_of(e);
  ASSERT_EQ(lines.size(), 51U) << e;
  EXPECT_EQ(lines.back(), "... and 10 more") << e;
}

TEST(XiosConfig, BadFrequency) {
  const std::string e = error_of(replaced(R"(output_freq="6h")", R"(output_freq="6hours")"));
  EXPECT_NE(e.find(at("output_freq")), std::string::npos) << e;
  EXPECT_NE(e.find("<file id=\"hist\">"), std::string::npos) << e;
  EXPECT_NE(e.find("attribute output_freq: bad frequency '6hours'"), std::string::npos) << e;
}

TEST(XiosConfig, MissingGrid) {
  const std::string e =
      error_of(replaced(R"(<field id="ps" grid_ref="g2" )", R"(<field id="ps" )"));
  EXPECT_NE(e.find(at(R"(<field id="ps")")), std::string::npos) << e;
  EXPECT_NE(e.find("<field id=\"ps\"> attribute grid_ref: missing grid"), std::string::npos) << e;
  const std::string unknown = error_of(replaced(R"(grid_ref="g3")", R"(grid_ref="g9")"));
  EXPECT_NE(unknown.find("unknown grid 'g9'"), std::string::npos) << unknown;
}

// XIOS: an id given twice names one object. The later element adds its
// attributes (overriding the earlier's) to the first, which keeps its place.
TEST(XiosConfig, RepeatedIdIsTheSameObject) {
  const xios_lite::Config cfg = parse_config_string(
      replaced(R"(<field id="ps" grid_ref="g2" operation="instant" units="Pa"/>)",
               R"(<field id="tas" long_name="near-surface air temperature" units="degC"/>
      <field id="ps" grid_ref="g2" operation="instant" units="Pa"/>)"),
      "repeated.xml");
  const int tas = cfg.find_field("tas");
  ASSERT_GE(tas, 0);
  const xios_lite::FieldDef& f = cfg.fields[static_cast<std::size_t>(tas)];
  EXPECT_EQ(f.standard_name, "air_temperature");           // the first element's
  EXPECT_EQ(f.long_name, "near-surface air temperature");  // the second's
  EXPECT_EQ(f.unit, "degC");                               // the second overrides the group's
  EXPECT_EQ(std::count_if(cfg.fields.begin(), cfg.fields.end(),
                          [](const xios_lite::FieldDef& d) { return d.id == "tas"; }),
            1);
}

// NEMO's field_def files each hold a field_group id="SBC" with a group
// id="SBC_2D" inside, and some fields in both (Cd_ice): the groups merge,
// and so do the fields inside them, at any depth.
TEST(XiosConfig, RepeatedIdsMergeInsideMergedGroups) {
  const std::string ps = R"(<field id="ps" grid_ref="g2" operation="instant" units="Pa"/>)";
  const xios_lite::Config cfg = parse_config_string(replaced(ps, ps + R"(
    </field_definition>
    <field_definition>
      <field_group id="SBC">
        <field_group id="SBC_2D" grid_ref="g2">
          <field id="Cd_ice" long_name="drag over ice"/>
        </field_group>
      </field_group>
    </field_definition>
    <field_definition>
      <field_group id="SBC">
        <field_group id="SBC_2D" grid_ref="g2">
          <field id="Cd_ice" units="1"/>
          <field id="Ch_ice"/>
        </field_group>
      </field_group>)"),
                                                    "merged.xml");
  const int cd = cfg.find_field("Cd_ice");
  ASSERT_GE(cd, 0);
  EXPECT_EQ(cfg.fields[static_cast<std::size_t>(cd)].long_name, "drag over ice");
  EXPECT_EQ(cfg.fields[static_cast<std::size_t>(cd)].unit, "1");
  EXPECT_GE(cfg.find_field("Ch_ice"), 0);
  EXPECT_EQ(std::count_if(cfg.fields.begin(), cfg.fields.end(),
                          [](const xios_lite::FieldDef& d) { return d.id == "Cd_ice"; }),
            1);
}

// XIOS's "_reset_": the attribute is undefined on the element, whatever its
// groups say (NEMO's monthly means take freq_offset="_reset_" in a group
// whose offset the model sets).
TEST(XiosConfig, ResetLeavesAnAttributeUndefined) {
  const xios_lite::Config cfg = parse_config_string(
      replaced(R"(<field id="tas" standard_name="air_temperature"/>)",
               R"(<field id="tas" standard_name="air_temperature" units="_reset_"
                   freq_offset="_reset_"/>
        <field id="tas2" field_ref="tas" freq_offset="2h"/>)"),
      "reset.xml");
  const xios_lite::FieldDef& tas = cfg.fields[static_cast<std::size_t>(cfg.find_field("tas"))];
  EXPECT_EQ(tas.unit, "");  // the group's "K" stops at the field
  EXPECT_FALSE(tas.freq_offset.is_set());
  const xios_lite::FieldDef& ta = cfg.fields[static_cast<std::size_t>(cfg.find_field("ta"))];
  EXPECT_EQ(ta.unit, "K");
}

// As XIOS, which solves only what files use: a field no file reads whose
// grid is missing, unknown or broken, or whose freq_offset is bad, is left
// out with a warning, as is one whose expression cannot be evaluated; the
// same field read by a file is an error.
TEST(XiosConfig, UnusedFieldsThatCannotBeEvaluatedAreLeftOut) {
  const std::string ps = R"(<field id="ps" grid_ref="g2" operation="instant" units="Pa"/>)";
  const std::string unused = ps + R"(
      <field id="floats" grid_ref="grid_T_nfloat"/>
      <field id="agrif"/>
      <field id="odd" grid_ref="g2" freq_offset="1mo"/>
      <field id="strait" field_ref="floats" grid_ref="g2"> this * maskMFO </field>
      <field id="twice" grid_ref="g2"> floats * 2 </field>)";
  const xios_lite::Config cfg = parse_config_string(replaced(ps, unused), "unused.xml");
  const auto warned = [&](const std::string& part) {
    return std::any_of(cfg.warnings.begin(), cfg.warnings.end(),
                       [&](const std::string& w) { return w.find(part) != std::string::npos; });
  };
  EXPECT_TRUE(warned("<field id=\"floats\"> attribute grid_ref: unknown grid 'grid_T_nfloat'"));
  EXPECT_TRUE(warned("<field id=\"agrif\"> attribute grid_ref: missing grid"));
  EXPECT_TRUE(warned("<field id=\"odd\"> attribute freq_offset"));
  EXPECT_TRUE(warned("<field id=\"twice\">"));
  for (const std::string& w : cfg.warnings) {
    EXPECT_NE(w.find("no file uses the field"), std::string::npos) << w;
  }
  // Read by a file (twice through its operand): errors, as before.
  const std::string file_field = R"(<field field_ref="ps"/>)";
  for (const auto& [read, named] : {std::pair{"floats", "floats"}, std::pair{"agrif", "agrif"},
                                    std::pair{"odd", "odd"}, std::pair{"twice", "floats"}}) {
    std::string xml = replaced(ps, unused);
    xml.replace(xml.find(file_field), file_field.size(),
                file_field + "<field field_ref=\"" + std::string(read) + "\"/>");
    const std::string e = error_of(xml);
    EXPECT_NE(e.find(std::string("<field id=\"") + named + "\">"), std::string::npos)
        << read << ": " << e;
  }
}

// A zoom no file writes on may lie outside its domain (NEMO's moorings the
// model sets only where its grid has them, XIOS solving the grids files use
// only): a warning naming the zoom, its window and the domain. Written by a
// file, the same window is an error naming them.
TEST(XiosConfig, UnwrittenZoomOutsideItsDomainIsAWarning) {
  const std::string dom = R"(<domain id="dom" ni_glo="8" nj_glo="4"/>)";
  const std::string zooms = dom + R"(
      <domain id="east" domain_ref="dom"><zoom_domain id="eastzoom" ibegin="6" ni="3"/></domain>
      <domain id="north" domain_ref="dom"><zoom_domain jbegin="5"/></domain>)";
  const xios_lite::Config cfg = parse_config_string(replaced(dom, zooms), "zooms.xml");
  const auto warning = [&](const std::string& part) {
    const auto it =
        std::find_if(cfg.warnings.begin(), cfg.warnings.end(),
                     [&](const std::string& w) { return w.find(part) != std::string::npos; });
    return it == cfg.warnings.end() ? std::string() : *it;
  };
  const std::string east = warning("eastzoom");
  EXPECT_NE(east.find("zooms.xml:8: <zoom_domain id=\"eastzoom\">"), std::string::npos) << east;
  EXPECT_NE(east.find("window [i 6+3, j 0+4] outside domain 'dom' of 8 x 4"), std::string::npos)
      << east;
  EXPECT_NE(east.find("no file writes on domain 'east'"), std::string::npos) << east;
  const std::string north = warning("domain 'north'");
  EXPECT_NE(north.find("window begins at [i 0, j 5], outside domain 'dom' of 8 x 4"),
            std::string::npos)
      << north;
  // Left out, the windows are their whole source.
  const xios_lite::DomainDef& d = cfg.domains[static_cast<std::size_t>(cfg.find_domain("east"))];
  EXPECT_EQ(d.ni_glo, 8);
  EXPECT_EQ(d.nj_glo, 4);
  // Written by a file (through a grid on the zoom): an error, as before.
  std::string xml = replaced(dom, zooms);
  const std::string grid = R"(<grid id="g2" domain_ref="dom"/>)";
  xml.replace(xml.find(grid), grid.size(), grid + R"(<grid id="ge" domain_ref="east"/>)");
  const std::string file_field = R"(<field field_ref="ps"/>)";
  xml.replace(xml.find(file_field), file_field.size(),
              file_field + R"(<field field_ref="ps" name="ps_east" grid_ref="ge"/>)");
  const std::string e = error_of(xml);
  EXPECT_NE(e.find("<zoom_domain id=\"eastzoom\""), std::string::npos) << e;
  EXPECT_NE(e.find("window [i 6+3, j 0+4] outside domain 'dom' of 8 x 4"), std::string::npos) << e;
  EXPECT_EQ(e.find("no file writes"), std::string::npos) << e;
}

// NEMO's trendT_odd: freq_op="2ts" freq_offset="-1ts" samples the odd
// steps (its slots are [0, 1], [2, 3], ...): the offset is kept as given.
TEST(XiosConfig, NegativeFreqOffset) {
  const xios_lite::Config cfg = parse_config_string(
      replaced(R"(<field id="ps" grid_ref="g2" operation="instant" units="Pa"/>)",
               R"(<field id="ps" grid_ref="g2" operation="instant" units="Pa" freq_op="2h"
                   freq_offset="-1h"/>)"),
      "negative.xml");
  const xios_lite::FieldDef& f = cfg.fields[static_cast<std::size_t>(cfg.find_field("ps"))];
  EXPECT_EQ(f.freq_offset.seconds, -3600);
  EXPECT_EQ(f.freq_offset.timesteps, 0);
  const std::string e =
      error_of(replaced(R"(<field id="ps" grid_ref="g2" operation="instant" units="Pa"/>)",
                        R"(<field id="ps" grid_ref="g2" operation="instant" units="Pa" freq_op="1mo"
                   freq_offset="-1h"/>)"));
  EXPECT_NE(e.find("attribute freq_offset: value '-1h' out of range (a negative offset needs"),
            std::string::npos)
      << e;
}

// Only definitions merge by id: a <variable> of the same id in two files
// (XIOS's test_complete gives each file its my_global_attribute) stays each
// file's own.
TEST(XiosConfig, VariablesOfTwoFilesStayApart) {
  const xios_lite::Config cfg = parse_config_string(replaced(R"(<field field_ref="ps"/>
      </file>)",
                                                             R"(<field field_ref="ps"/>
        <variable id="note" type="string">first</variable>
      </file>
      <file id="second" name="second" output_freq="1d">
        <field field_ref="ps"/>
        <variable id="note" type="string">second</variable>
      </file>)"),
                                                    "two_files.xml");
  ASSERT_EQ(cfg.files.size(), 2U);
  ASSERT_EQ(cfg.files[0].attributes.size(), 1U);
  ASSERT_EQ(cfg.files[1].attributes.size(), 1U);
  EXPECT_EQ(cfg.files[0].attributes[0].value, "first");
  EXPECT_EQ(cfg.files[1].attributes[0].value, "second");
}

// XIOS lets a field without an id sit in a field group (it names it itself):
// nothing refers to it, and the configuration parses.
TEST(XiosConfig, FieldWithoutIdInAGroup) {
  const xios_lite::Config cfg = parse_config_string(
      replaced(R"(<field id="ps" grid_ref="g2" operation="instant" units="Pa"/>)",
               R"(<field id="ps" grid_ref="g2" operation="instant" units="Pa"/>
      <field_group id="extra" grid_ref="g2"><field field_ref="ps" name="ps_copy"/></field_group>)"),
      "anonymous.xml");
  EXPECT_GE(cfg.find_field("ps"), 0);
}

TEST(XiosConfig, UnknownAttribute) {
  const std::string e = error_of(replaced(R"(<axis id="lev")", R"(<axis id="lev" colour="red")"));
  EXPECT_NE(e.find(at("<axis id") + " <axis id=\"lev\"> attribute colour: unknown attribute"),
            std::string::npos)
      << e;
}

TEST(XiosConfig, ValuesOutOfRange) {
  std::string e = error_of(replaced(R"(compression_level="2")", R"(compression_level="12")"));
  EXPECT_NE(e.find("attribute compression_level: value 12 out of range [0, 9]"), std::string::npos)
      << e;
  e = error_of(replaced(R"(ni_glo="8")", R"(ni_glo="0")"));
  EXPECT_NE(
      e.find(at("<domain id") + " <domain id=\"dom\"> attribute ni_glo: value 0 out of range"),
      std::string::npos)
      << e;
  e = error_of(replaced(R"(output_freq="6h")", R"(output_freq="90mi")"));
  EXPECT_NE(e.find("not a multiple of the timestep"), std::string::npos) << e;
  e = error_of(replaced(R"(split_freq="1d")", R"(split_freq="9h")"));
  EXPECT_NE(
      e.find("attribute split_freq: value '9h' out of range (not a multiple of output_freq 6h)"),
      std::string::npos)
      << e;
  e = error_of(
      replaced(R"(finalise_timeout="5")", R"(finalise_timeout="5" progress_thread="yes")"));
  EXPECT_NE(e.find("attribute progress_thread: value 'yes' out of range (expected true or false)"),
            std::string::npos)
      << e;
  e = error_of(replaced(R"(value="1000 500")", R"(value="1000")"));
  EXPECT_NE(e.find("attribute value: has 1 values, expected 2"), std::string::npos) << e;
}

// Missing values: detect_missing_value is inherited; a domain mask has one
// 0/1 value per point.
TEST(XiosConfig, MissingValuesAndMasks) {
  const xios_lite::Config cfg = parse_config_string(
      replaced(R"(<field_group id="phys" operation="average")",
               R"(<field_group id="phys" detect_missing_value="true" operation="average")"),
      "iodef.xml");
  EXPECT_TRUE(cfg.fields[static_cast<std::size_t>(cfg.find_field("tas"))].detect_missing_value);
  EXPECT_FALSE(cfg.fields[static_cast<std::size_t>(cfg.find_field("ps"))].detect_missing_value);
  std::string e = error_of(replaced(R"(<field_group id="phys" operation="average")",
                                    R"(<field_group id="phys" detect_missing_value="1")"));
  EXPECT_NE(e.find("attribute detect_missing_value: value '1' out of range (expected true or "
                   "false)"),
            std::string::npos)
      << e;
  const std::string mask =
      R"( mask="1 1 1 1 1 1 1 1 0 0 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1")";
  const xios_lite::Config masked =
      parse_config_string(replaced(R"(nj_glo="4")", R"(nj_glo="4")" + mask), "iodef.xml");
  ASSERT_EQ(masked.domains[0].mask.size(), 32U);
  EXPECT_EQ(masked.domains[0].mask[8], 0);
  EXPECT_EQ(masked.domains[0].mask[10], 1);
  e = error_of(replaced(R"(nj_glo="4")", R"(nj_glo="4" mask="1 0 2")"));
  EXPECT_NE(e.find("attribute mask: has 3 values, expected 32"), std::string::npos) << e;
  std::string two = mask;
  two.replace(two.find('0'), 1, "2");
  e = error_of(replaced(R"(nj_glo="4")", R"(nj_glo="4")" + two));
  EXPECT_NE(e.find("attribute mask: value 2 out of range (0 masked, 1 valid)"), std::string::npos)
      << e;
}

// Chunks from a target: the record when it fits, never above the target,
// never at or above HDF5's 4 GiB limit (a 75-level ORCA12 record of doubles
// is 7.9 GB).
TEST(XiosChunks, TargetAndHdf5Limit) {
  using xios_lite::netcdf::chunk_extents;
  const auto bytes = [](const std::array<std::uint64_t, 3>& c, std::uint64_t b) {
    return c[0] * c[1] * c[2] * b;
  };
  EXPECT_EQ(chunk_extents({3, 6, 12}, 8, 20.0 * 1024 * 1024),
            (std::array<std::uint64_t, 3>{3, 6, 12}));
  const auto orca = chunk_extents({75, 3059, 4322}, 8, 20.0 * 1024 * 1024);
  EXPECT_LE(bytes(orca, 8), 20ULL * 1024 * 1024);
  EXPECT_GT(bytes(orca, 8), 5ULL * 1024 * 1024);  // not needlessly small
  const auto capped = chunk_extents({75, 3059, 4322}, 8, 1e13);
  EXPECT_LT(bytes(capped, 8), 4ULL * 1024 * 1024 * 1024);
  EXPECT_EQ(chunk_extents({75, 3059, 4322}, 4, 4.0), (std::array<std::uint64_t, 3>{1, 1, 1}));
  std::string e = error_of(replaced(R"(compression_level="2")",
                                    R"(compression_level="2" chunking_blocksize_target="4096")"));
  EXPECT_NE(e.find("attribute chunking_blocksize_target: value out of range (0, 4096) MiB"),
            std::string::npos)
      << e;
  e = error_of(replaced(R"(<field id="tas" )", R"(<field id="tas" prec="2" )"));
  EXPECT_NE(e.find("attribute prec: value 2 out of range (4: float, 8: double)"), std::string::npos)
      << e;
}

// What clients and servers compare at connection: options may differ, the
// definitions may not, and the difference is named.
TEST(XiosConfig, DefinitionTextNamesTheFirstDifference) {
  const std::string base = base_config();
  const auto a = xios_lite::definition_text(parse_config_string(base, "a.xml"));
  std::string other_options = base;
  other_options.replace(other_options.find(R"(buffer_factor="3")"), 17, R"(buffer_factor="9")");
  EXPECT_EQ(xios_lite::definition_text(parse_config_string(other_options, "b.xml")), a);
  EXPECT_EQ(xios_lite::first_difference(a, a), "");
  std::string other_domain = base;
  other_domain.replace(other_domain.find(R"(nj_glo="4")"), 10, R"(nj_glo="5")");
  const auto b = xios_lite::definition_text(parse_config_string(other_domain, "b.xml"));
  EXPECT_NE(xios_lite::digest_of(a), xios_lite::digest_of(b));
  const std::string d = xios_lite::first_difference(a, b);
  EXPECT_EQ(d.rfind("'domain dom: ni_glo 8 nj_glo 4 ", 0), 0U) << d;
  EXPECT_NE(d.find("' vs 'domain dom: ni_glo 8 nj_glo 5 "), std::string::npos) << d;
}

TEST(XiosConfig, XmlSyntaxErrorHasLine) {
  const std::string e = error_of(replaced("</file>", "</fil>"));
  EXPECT_NE(e.find("iodef.xml:"), std::string::npos) << e;
  EXPECT_NE(e.find("XML syntax error"), std::string::npos) << e;
}

// A file that cannot be read is an I/O error, not a configuration error.
TEST(XiosConfig, UnreadableFileIsAnIoError) {
  const std::string path = "no_such_directory/iodef.xml";
  try {
    (void)xios_lite::parse_config(path);
    ADD_FAILURE() << "parse_config of a missing file did not throw";
  } catch (const ep::Error& e) {
    EXPECT_EQ(e.kind(), ep::ErrorKind::kIo) << e.what();
    EXPECT_NE(std::string(e.what()).find(path + ": cannot open the file"), std::string::npos)
        << e.what();
  }
}

TEST(XiosCalendar, Frequencies) {
  xios_lite::Frequency f;
  EXPECT_TRUE(xios_lite::parse_frequency("1ts", f));
  EXPECT_EQ(f, (xios_lite::Frequency{0, 0, 0, 0, 1}));
  EXPECT_TRUE(xios_lite::parse_frequency("1mo", f));
  EXPECT_EQ(f, (xios_lite::Frequency{0, 1, 0, 0, 0}));
  EXPECT_TRUE(xios_lite::parse_frequency("1y2mo3d4h5mi6s", f));
  EXPECT_EQ(f, (xios_lite::Frequency{1, 2, 3, 4 * 3600 + 5 * 60 + 6, 0}));
  EXPECT_EQ(xios_lite::to_string(f), "1y2mo3d4h5mi6s");
  EXPECT_TRUE(xios_lite::parse_frequency("30mi", f));
  EXPECT_EQ(xios_lite::to_string(f), "30mi");
  EXPECT_FALSE(xios_lite::parse_frequency("0d", f));
  EXPECT_FALSE(xios_lite::parse_frequency("d", f));
  EXPECT_FALSE(xios_lite::parse_frequency("3w", f));
}

TEST(XiosCalendar, MonthBoundariesFollowTheCalendar) {
  using xios_lite::Calendar;
  using xios_lite::CalendarType;
  const xios_lite::Frequency month{0, 1, 0, 0, 0};
  const Calendar greg(CalendarType::kGregorian, {2000, 1, 1, 0, 0, 0}, 3600);
  EXPECT_EQ(greg.boundary(month, 2), (31 + 29) * 86400);  // 2000 is a leap year
  const Calendar noleap(CalendarType::kNoLeap, {2000, 1, 1, 0, 0, 0}, 3600);
  EXPECT_EQ(noleap.boundary(month, 2), (31 + 28) * 86400);
  const Calendar d360(CalendarType::k360Day, {2000, 1, 1, 0, 0, 0}, 3600);
  EXPECT_EQ(d360.boundary(month, 14), 14 * 30 * 86400);
  EXPECT_EQ(d360.date_at(std::int64_t{14} * 30 * 86400), (xios_lite::Date{2001, 3, 1, 0, 0, 0}));
  EXPECT_EQ(greg.date_at(60 * 86400 + 3661), (xios_lite::Date{2000, 3, 1, 1, 1, 1}));
  EXPECT_EQ(noleap.date_at(std::int64_t{365} * 86400), (xios_lite::Date{2001, 1, 1, 0, 0, 0}));
  EXPECT_EQ(greg.seconds_since_start({2001, 1, 1, 0, 0, 0}), 366 * 86400);
}

TEST(XiosTemporal, OperationsFoldSamples) {
  using xios_lite::Operation;
  const double a[3] = {1, 5, -2};
  const double b[3] = {3, 2, 4};
  auto fold = [&](Operation op) {
    xios_lite::temporal::Accumulator acc(op, 3, -1.0, false, false);
    acc.add_part(0, a, {});
    acc.end_sample();
    acc.add_part(0, b, {});
    acc.end_sample();
    const auto r = acc.result();
    return std::vector<double>(r.begin(), r.end());
  };
  EXPECT_EQ(fold(Operation::kAverage), (std::vector<double>{2, 3.5, 1}));
  EXPECT_EQ(fold(Operation::kAccumulate), (std::vector<double>{4, 7, 2}));
  EXPECT_EQ(fold(Operation::kMinimum), (std::vector<double>{1, 2, -2}));
  EXPECT_EQ(fold(Operation::kMaximum), (std::vector<double>{3, 5, 4}));
  EXPECT_EQ(fold(Operation::kInstant), (std::vector<double>{3, 2, 4}));
}

// Missing points (mask 0, or the fill value with detection) are left out;
// a point never valid in the period is the fill value.
TEST(XiosTemporal, MissingPointsAreLeftOut) {
  using xios_lite::Operation;
  constexpr double kFill = -1;
  const double a[4] = {1, kFill, 7, 9};
  const double b[4] = {3, 4, kFill, 8};
  const std::uint8_t mask[4] = {1, 1, 1, 0};
  auto fold = [&](Operation op) {
    xios_lite::temporal::Accumulator acc(op, 4, kFill, true, true);
    acc.add_part(0, a, mask);
    acc.end_sample();
    acc.add_part(0, b, mask);
    acc.end_sample();
    const auto r = acc.result();
    return std::vector<double>(r.begin(), r.end());
  };
  EXPECT_EQ(fold(Operation::kAverage), (std::vector<double>{2, 4, 7, kFill}));
  EXPECT_EQ(fold(Operation::kAccumulate), (std::vector<double>{4, 4, 7, kFill}));
  EXPECT_EQ(fold(Operation::kMinimum), (std::vector<double>{1, 4, 7, kFill}));
  EXPECT_EQ(fold(Operation::kMaximum), (std::vector<double>{3, 4, 7, kFill}));
  EXPECT_EQ(fold(Operation::kInstant), (std::vector<double>{3, 4, kFill, kFill}));
}

}  // namespace

namespace {

// The shipped examples parse (they are documentation; they must stay valid).
TEST(XiosConfig, ExamplesParse) {
  for (const char* name : {"iodef_atmosphere.xml", "iodef_minimal.xml"}) {
    const std::string path = std::string(XIOS_LITE_EXAMPLES_DIR) + "/" + name;
    EXPECT_NO_THROW({
      const xios_lite::Config cfg = xios_lite::parse_config(path);
      EXPECT_FALSE(cfg.files.empty()) << path;
    }) << path;
  }
  const xios_lite::Config atm =
      xios_lite::parse_config(std::string(XIOS_LITE_EXAMPLES_DIR) + "/iodef_atmosphere.xml");
  EXPECT_EQ(atm.files.size(), 2U);  // the disabled file is left out
  EXPECT_EQ(atm.calendar.timestep_seconds(), 1800);
}

}  // namespace

// XIOS's temporal filter samples at start + freq_offset + one timestep and
// every freq_op after that, taking the first value sent at or after each
// date: slot j of freq_op N and offset f is steps [f + 1 + jN, f + (j + 1)N].
TEST(XiosConfig, SamplingSlotsFollowXiosTemporalFilter) {
  using xios_lite::temporal::SamplingSlots;
  const SamplingSlots every_step(1, 0);
  EXPECT_EQ(every_step.of_step(1), 0);
  EXPECT_EQ(every_step.of_step(5), 4);
  EXPECT_EQ(every_step.last_step(4), 5);

  // NEMO's surface fields, nn_fsbc = 4: sent at steps 1, 5, 9, ...
  const SamplingSlots four(4, 0);
  for (std::int64_t s = 1; s <= 4; ++s) EXPECT_EQ(four.of_step(s), 0) << s;
  EXPECT_EQ(four.of_step(5), 1);
  EXPECT_EQ(four.first_step(1), 5);
  EXPECT_EQ(four.last_step(1), 8);

  // trendT_even (2ts, offset 0): [1, 2], [3, 4]; trendT_odd (offset -1):
  // [0, 1], [2, 3], so step 1 is the first odd step's slot.
  const SamplingSlots even(2, 0);
  EXPECT_EQ(even.of_step(2), 0);
  EXPECT_EQ(even.of_step(3), 1);
  const SamplingSlots odd(2, -1);
  EXPECT_EQ(odd.of_step(1), 0);
  EXPECT_EQ(odd.first_step(0), 0);
  EXPECT_EQ(odd.last_step(0), 1);
  EXPECT_EQ(odd.of_step(2), 1);
  EXPECT_EQ(odd.of_step(3), 1);
  EXPECT_EQ(odd.last_step(1), 3);
  const SamplingSlots odd_far(2, -3);  // the same slots
  EXPECT_EQ(odd_far.of_step(1), 0);
  EXPECT_EQ(odd_far.last_step(1), 3);

  // A positive offset: nothing is sampled before step offset + 1.
  const SamplingSlots late(2, 3);
  EXPECT_EQ(late.of_step(3), -1);
  EXPECT_EQ(late.of_step(4), 0);
  EXPECT_EQ(late.last_step(0), 5);

  // Months: the calendar's months, from the first step after each boundary.
  const xios_lite::Calendar cal(xios_lite::CalendarType::kNoLeap, xios_lite::Date{2000, 1, 1},
                                86400);
  const SamplingSlots monthly(cal, xios_lite::Frequency{0, 1, 0, 0, 0});
  EXPECT_EQ(monthly.of_step(1), 0);
  EXPECT_EQ(monthly.of_step(31), 0);
  EXPECT_EQ(monthly.of_step(32), 1);
  EXPECT_EQ(monthly.first_step(1), 32);
  EXPECT_EQ(monthly.last_step(1), 59);
}
