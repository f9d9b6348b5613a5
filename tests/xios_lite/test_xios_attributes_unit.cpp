// The attribute table (xios_attributes.def) against what it drives: the
// model's members and their lookup by name, their wire form, and the
// configuration parser's vocabulary. No MPI.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "config/model_definitions.hpp"
#include "config_error.hpp"
#include "ep/error.hpp"
#include "thrown_message.hpp"
#include "xios_lite/config.hpp"
#include "xios_lite/model_attributes.hpp"

namespace {

using xios_test::error_of;
using xios_test::thrown_message;

using xios_lite::AxisAttributes;
using xios_lite::CalendarAttributes;
using xios_lite::DomainAttributes;

struct Line {
  std::string_view kind;
  std::string_view name;
  std::string_view type;
  std::string_view use;
  std::string_view why;  // refused lines only
};

// The table read here on its own, every line with its use.
// NOLINTBEGIN(cppcoreguidelines-macro-usage): the table is an X-macro file
#define XIOS_ATTRIBUTE(kind, name, type, use) Line{#kind, #name, #type, #use, ""},
#define XIOS_REFUSED(kind, name, type, use, why) Line{#kind, #name, #type, #use, why},
#define XIOS_XML_ATTRIBUTE(kind, name, use) Line{#kind, #name, "", #use, ""},
#define XIOS_XML_REFUSED(kind, name, why) Line{#kind, #name, "", "none", why},
const std::vector<Line> kLines{
#include "xios_lite/xios_attributes.def"
};
#undef XIOS_ATTRIBUTE
#undef XIOS_REFUSED
#undef XIOS_XML_ATTRIBUTE
#undef XIOS_XML_REFUSED
// NOLINTEND(cppcoreguidelines-macro-usage)

bool model_sets(const Line& l) {
  return l.use == "read_model" || l.use == "model" || l.use == "read_mask";
}

// The member type a table type has (model_attributes.hpp), as the index of
// its alternative in MemberPointer.
std::size_t alternative_of(std::string_view type) {
  if (type == "int") return 0;
  if (type == "double") return 1;
  if (type == "bool") return 2;
  if (type == "string" || type == "date" || type == "duration") return 3;
  if (type == "int_1d") return 4;
  if (type.substr(0, 7) == "double_") return 5;
  return 6;  // bool_*
}

template <class A>
void expect_members_match(std::string_view kind) {
  std::size_t lines = 0;
  for (const Line& l : kLines) {
    if (l.kind != kind || !model_sets(l)) continue;
    ++lines;
    const xios_lite::ModelMember<A>* m = xios_lite::find_model_member<A>(l.name);
    ASSERT_NE(m, nullptr) << kind << " " << l.name << " is marked " << l.use;
    EXPECT_EQ(m->member.index(), alternative_of(l.type)) << kind << " " << l.name;
  }
  EXPECT_GT(lines, 0U) << kind;
  EXPECT_EQ(xios_lite::model_members<A>().size(), lines) << kind;
}

TEST(XiosAttributeTable, ModelMembersAreTheModelLines) {
  expect_members_match<DomainAttributes>("domain");
  expect_members_match<AxisAttributes>("axis");
  expect_members_match<CalendarAttributes>("calendar_wrapper");
  // Names not in the table, or not set by the model, have no member.
  EXPECT_EQ(xios_lite::find_model_member<DomainAttributes>("colour"), nullptr);
  EXPECT_EQ(xios_lite::find_model_member<DomainAttributes>("radius"), nullptr);
  EXPECT_EQ(xios_lite::find_model_member<AxisAttributes>("ni_glo"), nullptr);
  // mask_1d and mask_2d are the one mask.
  const auto* m1 = xios_lite::find_model_member<DomainAttributes>("mask_1d");
  const auto* m2 = xios_lite::find_model_member<DomainAttributes>("mask_2d");
  ASSERT_TRUE(m1 != nullptr && m2 != nullptr);
  EXPECT_TRUE(m1->member == m2->member);
}

// Sets every member of `a` to a value that depends on `seed` and the member.
template <class A>
void fill(A& a, int seed) {
  int k = seed;
  for (const auto& m : xios_lite::model_members<A>()) {
    ++k;
    std::visit(
        [&](auto member) {
          auto& v = a.*member;
          using V = std::remove_reference_t<decltype(v)>;
          if constexpr (std::is_same_v<V, std::optional<int>>) {
            v = k;
          } else if constexpr (std::is_same_v<V, std::optional<double>>) {
            v = k + 0.5;
          } else if constexpr (std::is_same_v<V, std::optional<bool>>) {
            v = k % 2 == 0;
          } else if constexpr (std::is_same_v<V, std::optional<std::string>>) {
            // Appended, not "v" + ...: GCC 12 warns falsely on that (-Wrestrict).
            std::string text(1, 'v');
            text.append(std::to_string(k));
            v = text;
          } else if constexpr (std::is_same_v<V, std::vector<bool>>) {
            v = {true, false, k % 2 == 0};
          } else {
            v = {static_cast<typename V::value_type>(k), 2, -3};
          }
        },
        m.member);
  }
}

template <class A>
void expect_same(const A& a, const A& b, std::string_view kind) {
  for (const auto& m : xios_lite::model_members<A>()) {
    std::visit([&](auto member) { EXPECT_TRUE(a.*member == b.*member) << kind << " " << m.name; },
               m.member);
  }
}

TEST(XiosAttributeTable, EveryModelMemberRoundTrips) {
  xios_lite::config::ModelDefinitions d;
  fill(d.domains[0], 10);
  fill(d.domains[3], 50);
  fill(d.axes[1], 100);
  fill(d.calendar.emplace(), 200);
  const std::vector<std::byte> bytes = xios_lite::config::pack(d);
  xios_lite::config::ModelDefinitions back = xios_lite::config::unpack(bytes);
  ASSERT_EQ(back.domains.size(), 2U);
  ASSERT_EQ(back.axes.size(), 1U);
  ASSERT_TRUE(back.calendar.has_value());
  expect_same(d.domains[0], back.domains[0], "domain");
  expect_same(d.domains[3], back.domains[3], "domain");
  expect_same(d.axes[1], back.axes[1], "axis");
  expect_same(*d.calendar, *back.calendar, "calendar_wrapper");
  // A cut buffer is refused, never read past its end, unless it is cut
  // between two sections (then the last, the calendar, is missing).
  std::size_t refused = 0;
  for (std::size_t n = 1; n < bytes.size(); ++n) {
    try {
      const xios_lite::config::ModelDefinitions cut =
          xios_lite::config::unpack(std::span<const std::byte>(bytes.data(), n));
      EXPECT_FALSE(cut.calendar.has_value()) << n << " of " << bytes.size() << " bytes";
    } catch (const common::Error& e) {
      EXPECT_EQ(e.kind(), common::ErrorKind::kIo) << e.what();
      ++refused;
    }
  }
  EXPECT_GE(refused, bytes.size() - 4);
}

// The kinds of element of config_with's configuration.
constexpr std::array<std::string_view, 8> kConfigKinds{
    "context", "calendar_wrapper", "domain", "axis", "scalar", "grid", "field", "file"};

// A small configuration; `extra` is added to the element of kind `kind`
// (at its "{kind}"; the other marks are dropped).
std::string config_with(std::string_view kind, const std::string& extra) {
  std::string xml = R"(<?xml version="1.0"?>
<simulation>
  <context id="atm"{context}>
    <calendar type="noleap" start_date="2000-01-01 00:00:00" timestep="1h"{calendar_wrapper}/>
    <domain_definition>
      <domain id="dom" ni_glo="8" nj_glo="4"{domain}/>
    </domain_definition>
    <axis_definition>
      <axis id="lev" n_glo="2" value="1000 500"{axis}/>
    </axis_definition>
    <scalar_definition>
      <scalar id="sc"{scalar}/>
    </scalar_definition>
    <grid_definition>
      <grid id="g2"{grid}><domain domain_ref="dom"/></grid>
    </grid_definition>
    <field_definition>
      <field id="ps" grid_ref="g2" operation="instant"{field}/>
    </field_definition>
    <file_definition>
      <file id="hist" name="hist" output_freq="6h"{file}>
        <field field_ref="ps"/>
      </file>
    </file_definition>
  </context>
</simulation>
)";
  for (const std::string_view k : kConfigKinds) {
    std::string mark(1, '{');
    mark.append(k).push_back('}');
    std::string with;
    if (k == kind) with.append(1, ' ').append(extra);
    xml.replace(xml.find(mark), mark.size(), with);
  }
  return xml;
}

bool in_config(std::string_view kind) {
  return std::find(kConfigKinds.begin(), kConfigKinds.end(), kind) != kConfigKinds.end();
}

TEST(XiosAttributeTable, ParserFollowsTheTable) {
  ASSERT_EQ(error_of(config_with("", "")), "");
  std::size_t checked = 0;
  for (const Line& l : kLines) {
    if (!in_config(l.kind)) continue;
    ++checked;
    const std::string name(l.name);
    const std::string e = error_of(config_with(l.kind, name + "=\"1\""));
    const std::string prefix = "attribute " + name + ": ";
    if (l.why.empty()) {
      // Read or ignored: accepted (the value "1" may still be wrong for it,
      // or a value xios_lite does not write).
      EXPECT_EQ(e.find(prefix + "unknown attribute"), std::string::npos) << l.kind << ": " << e;
    } else {
      EXPECT_NE(e.find(prefix + "unsupported XIOS feature (" + std::string(l.why) + ")"),
                std::string::npos)
          << l.kind << " " << name << ": " << e;
    }
  }
  EXPECT_GT(checked, 150U);
  // Not in the table, or in another kind's: unknown.
  EXPECT_NE(
      error_of(config_with("axis", "colour=\"red\"")).find("attribute colour: unknown attribute"),
      std::string::npos);
  EXPECT_NE(
      error_of(config_with("axis", "nvertex=\"4\"")).find("attribute nvertex: unknown attribute"),
      std::string::npos);
  EXPECT_NE(
      error_of(config_with("file", "ni_glo=\"4\"")).find("attribute ni_glo: unknown attribute"),
      std::string::npos);
}

// A configuration whose domain "d" (4 x 2) the model sets; its grid g is
// written, the grid of the unsized axis "gau" is not.
xios_lite::Config model_set_config() {
  return xios_lite::parse_config_string(R"(<?xml version="1.0"?>
<simulation>
  <context id="nemo">
    <calendar type="noleap" start_date="2000-01-01" timestep="1h"/>
    <domain_definition> <domain id="d"/> </domain_definition>
    <axis_definition> <axis id="gau"/> </axis_definition>
    <grid_definition>
      <grid id="g"> <domain domain_ref="d"/> </grid>
      <grid id="g_gau"> <domain domain_ref="d"/> <axis axis_ref="gau"/> </grid>
    </grid_definition>
    <field_definition>
      <field id="sst" grid_ref="g"/>
      <field id="tide" grid_ref="g_gau"/>
    </field_definition>
    <file_definition> <file id="f" output_freq="1h"> <field field_ref="sst"/> </file> </file_definition>
  </context>
</simulation>
)",
                                        "model_set.xml");
}

// Two clients, rows 0 and 1 of domain d, as NEMO sets a curvilinear domain:
// lonvalue_1d and latvalue_1d of the block's ni x nj points (i fastest),
// bounds_*_1d of nvertex x (ni x nj).
std::vector<xios_lite::config::ModelDefinitions> curvilinear_rows() {
  std::vector<xios_lite::config::ModelDefinitions> clients(2);
  for (int r = 0; r < 2; ++r) {
    DomainAttributes a;
    a.ni_glo = 4;
    a.nj_glo = 2;
    a.type = "curvilinear";
    a.nvertex = 4;
    for (int i = 0; i < 4; ++i) {
      a.lonvalue_1d.push_back(10.0 * i + r);
      a.latvalue_1d.push_back(-5.0 + 10.0 * r + i);
      for (int v = 0; v < 4; ++v) {
        a.bounds_lon_1d.push_back(100.0 * r + 10.0 * i + v);
        a.bounds_lat_1d.push_back(-(100.0 * r + 10.0 * i + v));
      }
    }
    clients[static_cast<std::size_t>(r)].domains[0] = a;
  }
  return clients;
}

TEST(XiosModelDefinitions, CurvilinearDomainFromOneDimensionalValues) {
  xios_lite::Config cfg = model_set_config();
  const std::vector<std::vector<xios_lite::Window>> blocks{{{0, 4, 0, 1}}, {{0, 4, 1, 1}}};
  xios_lite::config::apply_model_definitions(cfg, curvilinear_rows(), blocks);
  const xios_lite::DomainDef& d = cfg.domains[0];
  EXPECT_EQ(d.type, xios_lite::DomainType::kCurvilinear);
  EXPECT_EQ(d.lon, (std::vector<double>{0, 10, 20, 30, 1, 11, 21, 31}));
  EXPECT_EQ(d.lat, (std::vector<double>{-5, -4, -3, -2, 5, 6, 7, 8}));
  ASSERT_EQ(d.bounds_lon.size(), 32U);
  EXPECT_EQ(d.bounds_lon[4 * 5 + 2], 112.0);  // point (i 1, j 1), vertex 2
  EXPECT_EQ(d.bounds_lat[4 * 2 + 3], -23.0);  // point (i 2, j 0), vertex 3
  // Both forms at once are refused.
  std::vector<xios_lite::config::ModelDefinitions> both = curvilinear_rows();
  both[0].domains[0].lonvalue_2d = both[0].domains[0].lonvalue_1d;
  xios_lite::Config again = model_set_config();
  const std::string e =
      thrown_message([&] { xios_lite::config::apply_model_definitions(again, both, blocks); });
  EXPECT_NE(e.find("not both"), std::string::npos) << e;
}

// An axis no written variable uses needs no size (NEMO's gau); one that is
// written does.
TEST(XiosModelDefinitions, UnwrittenAxesNeedNoSize) {
  const std::vector<std::vector<xios_lite::Window>> blocks{{{0, 4, 0, 1}}, {{0, 4, 1, 1}}};
  xios_lite::Config cfg = model_set_config();
  xios_lite::config::apply_model_definitions(cfg, curvilinear_rows(), blocks);
  EXPECT_EQ(cfg.axes[0].n_glo, 0);
  xios_lite::Config written = model_set_config();
  written.files[0].variables[0].field = written.find_field("tide");
  written.files[0].variables[0].grid = -1;
  const std::string e = thrown_message(
      [&] { xios_lite::config::apply_model_definitions(written, curvilinear_rows(), blocks); });
  EXPECT_NE(e.find("axis 'gau': n_glo"), std::string::npos) << e;
}

}  // namespace
