// Completing the definitions once every value is known (the configuration's
// and the model's): the calendar, default coordinates, derived domains and
// axes (zooms, extractions), where each field's values come from, and what
// each file variable's grid does to its field's grid (OutputShape). Every
// check that needs a size or the timestep runs here, and its message names
// the element where it was defined.
#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <numeric>
#include <set>

#include "check_names.hpp"
#include "ep/error.hpp"
#include "expression.hpp"
#include "xios_lite/config.hpp"
#include "xml_tree.hpp"

namespace xios_lite {
namespace {

using config::fail_at;
using Member = GridDef::Member;

void complete_calendar(Config& cfg) {
  const CalendarSpec& spec = cfg.calendar_spec;
  UserCalendar user;
  if (*spec.type == CalendarType::kUserDefined) {
    user.day_length = spec.day_length.value_or(86400);
    user.month_lengths = spec.month_lengths;
  }
  const Calendar probe = [&] {
    try {
      return Calendar(*spec.type, Date{0, 1, 1, 0, 0, 0}, 1, user);
    } catch (const ep::Error& e) {
      fail_at(spec.where, "type", e.what());
    }
  }();
  Date start;
  if (const std::string why = parse_date(spec.start_date, probe, start); !why.empty()) {
    fail_at(spec.where, "start_date", why);
  }
  const Calendar fixed(*spec.type, start, 1, user);
  const Frequency& step = *spec.timestep;
  if (step.timesteps != 0 || step.is_calendar_dependent()) {
    fail_at(spec.where, "timestep",
            "value '" + to_string(step) + "' out of range (use s, mi, h or d)");
  }
  cfg.calendar = Calendar(*spec.type, start, fixed.fixed_seconds(step), user);
  if (!spec.time_origin.empty()) {
    Date origin;
    if (const std::string why = parse_date(spec.time_origin, probe, origin); !why.empty()) {
      fail_at(spec.where, "time_origin", why);
    }
    cfg.calendar.set_time_origin(origin);
  }
}

// Cell centres of a regular range.
std::vector<double> centres(double lo, double hi, int n) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    v[static_cast<std::size_t>(i)] = lo + (hi - lo) * (i + 0.5) / n;
  }
  return v;
}

void expect_size(const DomainDef& d, const char* attr, const std::vector<double>& v,
                 std::size_t n) {
  if (!v.empty() && v.size() != n) {
    fail_at(d.where, attr,
            "has " + std::to_string(v.size()) + " values, expected " + std::to_string(n));
  }
}

void complete_base_domain(DomainDef& d) {
  const auto ni = static_cast<std::size_t>(d.ni_glo);
  const auto nj = static_cast<std::size_t>(d.nj_glo);
  const bool curvilinear = d.type == DomainType::kCurvilinear;
  if (curvilinear) {
    if (d.lon.empty() || d.lat.empty()) {
      fail_at(d.where, d.lon.empty() ? "lonvalue_2d" : "latvalue_2d",
              "a curvilinear domain needs its 2-D coordinates (configuration or set_domain_attr)");
    }
    expect_size(d, "lonvalue_2d", d.lon, ni * nj);
    expect_size(d, "latvalue_2d", d.lat, ni * nj);
  } else {
    if (d.lon.empty()) d.lon = centres(d.lon_start, d.lon_end, d.ni_glo);
    if (d.lat.empty()) d.lat = centres(d.lat_start, d.lat_end, d.nj_glo);
    expect_size(d, "lonvalue_1d", d.lon, ni);
    expect_size(d, "latvalue_1d", d.lat, nj);
  }
  // Coordinates are written as given, as XIOS writes them (no range check).
  if (curvilinear) {
    if (!d.bounds_lon.empty() || !d.bounds_lat.empty()) {
      if (d.nvertex <= 0) {
        d.nvertex =
            static_cast<int>(std::max(d.bounds_lon.size(), d.bounds_lat.size()) / (ni * nj));
      }
      expect_size(d, "bounds_lon_2d", d.bounds_lon, static_cast<std::size_t>(d.nvertex) * ni * nj);
      expect_size(d, "bounds_lat_2d", d.bounds_lat, static_cast<std::size_t>(d.nvertex) * ni * nj);
    }
  } else {
    expect_size(d, "bounds_lon_1d", d.bounds_lon, 2 * ni);
    expect_size(d, "bounds_lat_1d", d.bounds_lat, 2 * nj);
  }
  expect_size(d, "area", d.area, ni * nj);
  if (!d.mask.empty() && d.mask.size() != ni * nj) {
    fail_at(
        d.where, "mask_2d",
        "has " + std::to_string(d.mask.size()) + " values, expected " + std::to_string(ni * nj));
  }
}

// A derived domain: the window of its source (sources come first in the list).
void complete_derived_domain(Config& cfg, DomainDef& d) {
  const DomainDef& s = cfg.domains[static_cast<std::size_t>(d.source)];
  Window w = d.window.value_or(Window{0, s.ni_glo, 0, s.nj_glo});
  if (w.ni < 0) w.ni = s.ni_glo - w.ibegin;  // not given: to the end of the source
  if (w.nj < 0) w.nj = s.nj_glo - w.jbegin;
  if (w.ni < 1 || w.nj < 1) {
    fail_at(d.where, w.ni < 1 ? "ibegin" : "jbegin",
            "window begins at [i " + std::to_string(w.ibegin) + ", j " + std::to_string(w.jbegin) +
                "], outside domain '" + s.id + "' of " + std::to_string(s.ni_glo) + " x " +
                std::to_string(s.nj_glo));
  }
  if (w.ibegin + w.ni > s.ni_glo || w.jbegin + w.nj > s.nj_glo) {
    fail_at(d.where, w.ibegin + w.ni > s.ni_glo ? "ni" : "nj",
            "window [i " + std::to_string(w.ibegin) + "+" + std::to_string(w.ni) + ", j " +
                std::to_string(w.jbegin) + "+" + std::to_string(w.nj) + "] outside domain '" +
                s.id + "' of " + std::to_string(s.ni_glo) + " x " + std::to_string(s.nj_glo));
  }
  d.window = w;
  d.type = s.type;
  d.ni_glo = w.ni;
  d.nj_glo = w.nj;
  d.nvertex = s.nvertex;
  const auto sni = static_cast<std::size_t>(s.ni_glo);
  const auto cut2d = [&](const std::vector<double>& v, std::size_t per_point) {
    std::vector<double> out;
    if (v.empty()) return out;
    for (int j = 0; j < w.nj; ++j) {
      const std::size_t row = static_cast<std::size_t>(w.jbegin + j) * sni;
      const auto* first = v.data() + (row + static_cast<std::size_t>(w.ibegin)) * per_point;
      out.insert(out.end(), first, first + static_cast<std::size_t>(w.ni) * per_point);
    }
    return out;
  };
  const auto cut1d = [](const std::vector<double>& v, int begin, int n, std::size_t per) {
    if (v.empty()) return std::vector<double>{};
    return std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(begin * per),
                               v.begin() + static_cast<std::ptrdiff_t>((begin + n) * per));
  };
  if (s.type == DomainType::kCurvilinear) {
    d.lon = cut2d(s.lon, 1);
    d.lat = cut2d(s.lat, 1);
    d.bounds_lon = cut2d(s.bounds_lon, static_cast<std::size_t>(s.nvertex));
    d.bounds_lat = cut2d(s.bounds_lat, static_cast<std::size_t>(s.nvertex));
  } else {
    d.lon = cut1d(s.lon, w.ibegin, w.ni, 1);
    d.lat = cut1d(s.lat, w.jbegin, w.nj, 1);
    d.bounds_lon = cut1d(s.bounds_lon, w.ibegin, w.ni, 2);
    d.bounds_lat = cut1d(s.bounds_lat, w.jbegin, w.nj, 2);
  }
  d.area = cut2d(s.area, 1);
  std::vector<double> mask(s.mask.begin(), s.mask.end());
  const std::vector<double> cut = cut2d(mask, 1);
  d.mask.assign(cut.begin(), cut.end());
}

void complete_axis(Config& cfg, AxisDef& a) {
  if (a.from_domain != Reduction::kNone) {
    return;  // sized by the domain it reduces (resolve_shape)
  }
  if (a.source < 0) {
    if (a.value.empty()) {
      for (int k = 0; k < a.n_glo; ++k) a.value.push_back(k);
    }
    if (a.value.size() != static_cast<std::size_t>(a.n_glo)) {
      fail_at(
          a.where, "value",
          "has " + std::to_string(a.value.size()) + " values, expected " + std::to_string(a.n_glo));
    }
    if (!a.bounds.empty() && a.bounds.size() != 2 * static_cast<std::size_t>(a.n_glo)) {
      fail_at(a.where, "bounds",
              "has " + std::to_string(a.bounds.size()) + " values, expected " +
                  std::to_string(2 * a.n_glo));
    }
    return;
  }
  const AxisDef& s = cfg.axes[static_cast<std::size_t>(a.source)];
  if (s.from_domain != Reduction::kNone) {
    fail_at(a.where, "axis_ref", "a zoom of an axis made by reduce_domain");
  }
  a.index.clear();
  if (!a.selection) {
    for (int k = 0; k < s.n_glo; ++k) a.index.push_back(k);
  } else if (!a.selection->index.empty()) {
    a.index = a.selection->index;
  } else {
    const int n = a.selection->n < 0 ? s.n_glo - a.selection->begin : a.selection->n;
    for (int k = 0; k < n; ++k) a.index.push_back(a.selection->begin + k);
  }
  for (const int k : a.index) {
    if (k < 0 || k >= s.n_glo) {
      fail_at(a.where, a.selection && !a.selection->index.empty() ? "index" : "n",
              "level " + std::to_string(k) + " outside axis '" + s.id + "' of " +
                  std::to_string(s.n_glo) + " levels");
    }
  }
  if (a.index.empty()) {
    fail_at(a.where, "n", "selects no level");
  }
  a.n_glo = static_cast<int>(a.index.size());
  a.value.clear();
  a.bounds.clear();
  for (const int k : a.index) {
    a.value.push_back(s.value[static_cast<std::size_t>(k)]);
    if (!s.bounds.empty()) {
      a.bounds.push_back(s.bounds[2 * static_cast<std::size_t>(k)]);
      a.bounds.push_back(s.bounds[2 * static_cast<std::size_t>(k) + 1]);
    }
  }
  if (a.name.empty()) a.name = a.id;  // a dimension of its own beside its source's
  if (a.unit.empty()) a.unit = s.unit;
  if (a.positive.empty()) a.positive = s.positive;
  if (a.long_name.empty()) a.long_name = s.long_name;
  if (a.standard_name.empty()) a.standard_name = s.standard_name;
}

void check_timestep_multiple(const Config& cfg, const Origin& where, const char* attr,
                             const Frequency& f) {
  if (f.is_calendar_dependent()) {
    return;
  }
  const std::int64_t s = cfg.calendar.fixed_seconds(f);
  if (s % cfg.calendar.timestep_seconds() != 0) {
    fail_at(where, attr,
            "value '" + to_string(f) + "' out of range (not a multiple of the timestep)");
  }
}

// XIOS takes a negative freq_offset (NEMO's trendT_odd: freq_op="2ts"
// freq_offset="-1ts", the odd steps: its sampling slots are [0, 1], [2, 3],
// ..., see temporal::SamplingSlots); it must be of fixed length, as the
// slots of a freq_op of months or years ignore the offset.
void check_negative_offset(const Origin& where, const Frequency& op, const Frequency& offset) {
  const bool negative = offset.years < 0 || offset.months < 0 || offset.days < 0 ||
                        offset.seconds < 0 || offset.timesteps < 0;
  if (negative && op.is_calendar_dependent()) {
    fail_at(where, "freq_offset",
            "value '" + to_string(offset) + "' out of range (a negative offset needs a freq_op " +
                "of fixed length, not '" + to_string(op) + "')");
  }
}

// The field whose values `field` takes: itself (the model sends it, or an
// expression computes it) or the end of its field_ref chain.
int data_field(const Config& cfg, int field) {
  std::set<int> seen;
  while (cfg.fields[static_cast<std::size_t>(field)].source_field >= 0 &&
         cfg.fields[static_cast<std::size_t>(field)].expr.empty()) {
    if (!seen.insert(field).second) {
      fail_at(cfg.fields[static_cast<std::size_t>(field)].where, "field_ref",
              "references form a cycle");
    }
    field = cfg.fields[static_cast<std::size_t>(field)].source_field;
  }
  return field;
}

// The window of derived domain `d` in domain `base` (its source chain), or
// nullopt when `d` does not derive from `base`.
std::optional<Window> window_in(const Config& cfg, int d, int base) {
  // A domain that only renames its source (<domain domain_ref="grid_T_inner"
  // name="grid_T"/> in each of NEMO's grids) holds the same points: the
  // window is looked for in the source.
  for (;;) {
    const DomainDef& b = cfg.domains[static_cast<std::size_t>(base)];
    if (b.source < 0) break;
    const DomainDef& up = cfg.domains[static_cast<std::size_t>(b.source)];
    if (b.window != Window{0, up.ni_glo, 0, up.nj_glo}) break;
    base = b.source;
  }
  Window w{0, cfg.domains[static_cast<std::size_t>(d)].ni_glo, 0,
           cfg.domains[static_cast<std::size_t>(d)].nj_glo};
  while (d != base) {
    const DomainDef& dom = cfg.domains[static_cast<std::size_t>(d)];
    if (dom.source < 0) {
      return std::nullopt;
    }
    w.ibegin += dom.window->ibegin;
    w.jbegin += dom.window->jbegin;
    d = dom.source;
  }
  return w;
}

// The levels of `base` that derived axis `a` selects, or nullopt.
std::optional<std::vector<int>> levels_in(const Config& cfg, int a, int base) {
  // An axis that only renames its source holds the same levels.
  for (;;) {
    const AxisDef& b = cfg.axes[static_cast<std::size_t>(base)];
    if (b.source < 0 || b.selection) break;  // duplicate_scalar: as data, its source's levels
    base = b.source;
  }
  std::vector<int> levels(static_cast<std::size_t>(cfg.axes[static_cast<std::size_t>(a)].n_glo));
  std::iota(levels.begin(), levels.end(), 0);
  while (a != base) {
    const AxisDef& ax = cfg.axes[static_cast<std::size_t>(a)];
    if (ax.source < 0) {
      return std::nullopt;
    }
    for (int& k : levels) k = ax.index[static_cast<std::size_t>(k)];
    a = ax.source;
  }
  return levels;
}

// A field on a domain and two axes (levels: axis fastest, then axis2):
// the output grid keeps the domain or a zoom of it, the first axis or a
// zoom of it, and the second axis, a zoom of it, or one of its positions
// (extract_axis inside a scalar: XIOS's extract_axis_to_scalar, NEMO's
// basins of a zonal mean).
OutputShape resolve_two_axes(Config& cfg, const OutputVariable& v, int data, OutputShape shape) {
  const GridDef& src =
      cfg.grids[static_cast<std::size_t>(cfg.fields[static_cast<std::size_t>(data)].grid)];
  const GridDef& out = cfg.grids[static_cast<std::size_t>(v.grid)];
  const std::string from = "grid '" + out.id + "' does not derive from field '" +
                           cfg.fields[static_cast<std::size_t>(data)].id + "''s grid '" + src.id +
                           "' of a domain and two axes";
  const auto refusal = [&](const std::string& why) {
    return from + ": " + why +
           " (supported: the domain or a zoom, the first axis or a zoom, then the second axis, a "
           "zoom, or a scalar extracting one of its positions)";
  };
  if (out.members.size() != 3)
    fail_at(v.where, "grid_ref",
            refusal("it has " + std::to_string(out.members.size()) + " members"));
  const Member h = out.members[0];
  const Member z1 = out.members[1];
  const Member z2 = out.members[2];
  if (h.kind != Member::Kind::kDomain || z1.kind != Member::Kind::kAxis) {
    fail_at(v.where, "grid_ref", refusal("its first members are not a domain and an axis"));
  }
  const std::optional<Window> w = window_in(cfg, h.index, src.domain);
  if (!w)
    fail_at(v.where, "grid_ref",
            refusal("domain '" + cfg.domains[static_cast<std::size_t>(h.index)].id +
                    "' is not derived"));
  const std::optional<std::vector<int>> inner = levels_in(cfg, z1.index, src.axis);
  if (!inner)
    fail_at(
        v.where, "grid_ref",
        refusal("axis '" + cfg.axes[static_cast<std::size_t>(z1.index)].id + "' is not derived"));
  const AxisDef& outer_src = cfg.axes[static_cast<std::size_t>(src.axis2)];
  std::vector<int> outer;
  shape.axis2 = -1;
  if (z2.kind == Member::Kind::kAxis) {
    const std::optional<std::vector<int>> o = levels_in(cfg, z2.index, src.axis2);
    if (!o)
      fail_at(
          v.where, "grid_ref",
          refusal("axis '" + cfg.axes[static_cast<std::size_t>(z2.index)].id + "' is not derived"));
    outer = *o;
    shape.axis2 = z2.index;
  } else if (z2.kind == Member::Kind::kScalar &&
             cfg.scalars[static_cast<std::size_t>(z2.index)].extract_level >= 0) {
    const int p = cfg.scalars[static_cast<std::size_t>(z2.index)].extract_level;
    if (p >= outer_src.n_glo) {
      fail_at(v.where, "grid_ref",
              "scalar '" + cfg.scalars[static_cast<std::size_t>(z2.index)].id +
                  "' extracts position " + std::to_string(p) + " of axis '" + outer_src.id +
                  "' of " + std::to_string(outer_src.n_glo) + " levels");
    }
    outer = {p};
  } else {
    fail_at(v.where, "grid_ref",
            refusal("its third member is neither an axis nor a scalar with extract_axis"));
  }
  const int n_inner = cfg.axes[static_cast<std::size_t>(src.axis)].n_glo;
  shape.domain = h.index;
  shape.window = *w;
  shape.axis = z1.index;
  shape.levels.clear();
  for (const int o : outer) {
    for (const int k : *inner) shape.levels.push_back(k + n_inner * o);
  }
  return shape;
}

// What the variable's grid does to its data field's grid, member by member.
OutputShape resolve_shape(Config& cfg, const OutputVariable& v, int data) {
  const GridDef& src =
      cfg.grids[static_cast<std::size_t>(cfg.fields[static_cast<std::size_t>(data)].grid)];
  const GridDef& out = cfg.grids[static_cast<std::size_t>(v.grid)];
  const DomainDef& dom = cfg.domains[static_cast<std::size_t>(src.domain)];
  OutputShape shape;
  shape.domain = src.domain;
  shape.window = {0, dom.ni_glo, 0, dom.nj_glo};
  shape.axis = src.axis;
  shape.axis2 = src.axis2;
  if (src.axis >= 0) {
    for (int k = 0; k < cfg.levels(cfg.fields[static_cast<std::size_t>(data)].grid); ++k) {
      shape.levels.push_back(k);
    }
  }
  if (v.grid == cfg.fields[static_cast<std::size_t>(data)].grid) {
    return shape;
  }
  if (src.axis2 >= 0) {
    return resolve_two_axes(cfg, v, data, shape);
  }
  const std::string from = "grid '" + out.id + "' does not derive from field '" +
                           cfg.fields[static_cast<std::size_t>(data)].id + "''s grid '" + src.id +
                           "'";
  // The output grid's members that do something: a plain <scalar/> adds
  // no dimension (XIOS writes it as a 0-d variable; here nothing).
  std::vector<Member> members;
  for (std::size_t at = 0; at < out.members.size(); ++at) {
    const Member& m = out.members[at];
    const bool plain =
        m.kind == Member::Kind::kScalar &&
        cfg.scalars[static_cast<std::size_t>(m.index)].from_axis == Reduction::kNone &&
        cfg.scalars[static_cast<std::size_t>(m.index)].from_domain == Reduction::kNone &&
        cfg.scalars[static_cast<std::size_t>(m.index)].extract_level < 0;
    if (!plain || at == 0) members.push_back(m);
  }
  const bool duplicates = src.axis < 0 && members.size() == 2 &&
                          members[1].kind == Member::Kind::kAxis &&
                          cfg.axes[static_cast<std::size_t>(members[1].index)].from_scalar;
  const std::size_t expected = src.axis >= 0 || duplicates ? 2 : 1;
  if (members.size() != expected) {
    fail_at(v.where, "grid_ref",
            from + ": it has " + std::to_string(members.size()) + " member(s), the field's " +
                std::to_string(src.axis >= 0 ? 2 : 1) +
                " (one per member: a domain, then an axis; duplicate_scalar adds an axis to a "
                "field without one)");
  }
  // The horizontal member.
  const Member h = members[0];
  if (h.kind == Member::Kind::kDomain) {
    const std::optional<Window> w = window_in(cfg, h.index, src.domain);
    if (!w) {
      fail_at(v.where, "grid_ref",
              from + ": domain '" + cfg.domains[static_cast<std::size_t>(h.index)].id +
                  "' is neither '" + dom.id + "' nor a zoom or extraction of it");
    }
    shape.domain = h.index;
    shape.window = *w;
  } else if (h.kind == Member::Kind::kAxis) {
    AxisDef& a = cfg.axes[static_cast<std::size_t>(h.index)];
    if (a.from_domain == Reduction::kNone) {
      fail_at(v.where, "grid_ref",
              from + ": axis '" + a.id + "' stands where the domain is, without reduce_domain");
    }
    shape.horizontal =
        a.along_i ? OutputShape::Horizontal::kAlongI : OutputShape::Horizontal::kAlongJ;
    shape.horizontal_op = a.from_domain;
    shape.reduced_axis = h.index;
    shape.domain = -1;
    if (a.extract_position >= 0) {
      const int lines = a.along_i ? dom.ni_glo : dom.nj_glo;
      if (a.extract_position >= lines) {
        fail_at(a.where, "position",
                "value " + std::to_string(a.extract_position) + " out of range (domain '" + dom.id +
                    "' has " + std::to_string(lines) + (a.along_i ? " columns" : " rows") + ")");
      }
      shape.line = a.extract_position;
    }
    // The axis made by the reduction: one value per row (iDir) or column (jDir).
    const int n = a.along_i ? dom.nj_glo : dom.ni_glo;
    std::vector<double> values;
    for (int x = 0; x < n; ++x) {
      if (dom.type == DomainType::kRectilinear) {
        values.push_back(a.along_i ? dom.lat[static_cast<std::size_t>(x)]
                                   : dom.lon[static_cast<std::size_t>(x)]);
      } else {
        values.push_back(x);
      }
    }
    if (a.n_glo != 0 && (a.n_glo != n || a.value != values)) {
      fail_at(v.where, "grid_ref",
              "axis '" + a.id + "' reduces domains of different sizes or coordinates");
    }
    a.n_glo = n;
    a.value = values;
    if (a.unit.empty() && dom.type == DomainType::kRectilinear) {
      a.unit = a.along_i ? "degrees_north" : "degrees_east";
    }
    if (a.standard_name.empty() && dom.type == DomainType::kRectilinear) {
      a.standard_name = a.along_i ? "latitude" : "longitude";
    }
  } else {
    const ScalarDef& s = cfg.scalars[static_cast<std::size_t>(h.index)];
    if (s.from_domain == Reduction::kNone) {
      fail_at(v.where, "grid_ref",
              from + ": scalar '" + s.id + "' stands where the domain is, without reduce_domain");
    }
    if (s.client_local) {
      fail_at(v.where, "grid_ref",
              "unsupported XIOS feature (scalar '" + s.id +
                  "': a client-local reduce_domain (local=\"true\") alone gives one value per "
                  "client, which no file variable holds; follow it with <reduce_scalar "
                  "operation=\"sum\"/> for the whole domain's)");
    }
    shape.horizontal = OutputShape::Horizontal::kGlobal;
    shape.horizontal_op = s.from_domain;
    shape.domain = -1;
  }
  if (duplicates) {
    // duplicate_scalar: every level of the axis holds the 2-D field's value.
    const AxisDef& a = cfg.axes[static_cast<std::size_t>(members[1].index)];
    shape.axis = members[1].index;
    shape.levels.assign(static_cast<std::size_t>(a.n_glo), 0);
    return shape;
  }
  if (src.axis < 0) {
    return shape;
  }
  // The vertical member.
  const Member z = members[1];
  const int extract = z.kind == Member::Kind::kScalar
                          ? cfg.scalars[static_cast<std::size_t>(z.index)].extract_level
                          : -1;
  if (z.kind == Member::Kind::kAxis && cfg.axes[static_cast<std::size_t>(z.index)].from_scalar) {
    fail_at(v.where, "grid_ref",
            from + ": axis '" + cfg.axes[static_cast<std::size_t>(z.index)].id +
                "' duplicates a scalar, and the field has axis '" +
                cfg.axes[static_cast<std::size_t>(src.axis)].id + "'");
  }
  if (extract >= 0) {
    // extract_axis inside a scalar: one level, no vertical dimension.
    const int n = cfg.levels(cfg.fields[static_cast<std::size_t>(data)].grid);
    if (extract >= n) {
      fail_at(v.where, "grid_ref",
              "scalar '" + cfg.scalars[static_cast<std::size_t>(z.index)].id +
                  "' extracts position " + std::to_string(extract) + " of axis '" +
                  cfg.axes[static_cast<std::size_t>(src.axis)].id + "' of " + std::to_string(n) +
                  " levels");
    }
    shape.axis = -1;
    shape.levels = {extract};
  } else if (z.kind == Member::Kind::kAxis) {
    const std::optional<std::vector<int>> levels = levels_in(cfg, z.index, src.axis);
    if (!levels) {
      fail_at(v.where, "grid_ref",
              from + ": axis '" + cfg.axes[static_cast<std::size_t>(z.index)].id +
                  "' is neither '" + cfg.axes[static_cast<std::size_t>(src.axis)].id +
                  "' nor a zoom or extraction of it");
    }
    shape.axis = z.index;
    shape.levels = *levels;
  } else if (z.kind == Member::Kind::kScalar &&
             cfg.scalars[static_cast<std::size_t>(z.index)].from_axis != Reduction::kNone) {
    shape.axis = -1;
    shape.vertical_op = cfg.scalars[static_cast<std::size_t>(z.index)].from_axis;
  } else {
    fail_at(
        v.where, "grid_ref",
        from + ": its second member must be an axis (or its zoom) or a scalar with reduce_axis");
  }
  if (shape.horizontal != OutputShape::Horizontal::kDomain &&
      shape.window != Window{0, dom.ni_glo, 0, dom.nj_glo}) {
    fail_at(v.where, "grid_ref", "a reduction of a zoomed domain (grid_path)");
  }
  return shape;
}

// A data field's grid: one domain, at most two axes, no reduction.
void check_data_grid(const Config& cfg, const FieldDef& f) {
  const GridDef& g = cfg.grids[static_cast<std::size_t>(f.grid)];
  // A field the model sends on a grid with transformations sends the
  // grid's own points: duplicate_scalar applies only to a field_ref'd
  // field's values, and a plain <scalar/> beside the domain adds no point.
  const auto plain_axis = [&](const Member& m) {
    if (m.kind == Member::Kind::kScalar) {
      const ScalarDef& sc = cfg.scalars[static_cast<std::size_t>(m.index)];
      return sc.from_axis == Reduction::kNone && sc.from_domain == Reduction::kNone &&
             sc.extract_level < 0;
    }
    return m.kind == Member::Kind::kAxis &&
           cfg.axes[static_cast<std::size_t>(m.index)].from_domain == Reduction::kNone;
  };
  const bool stand_in = g.domain >= 0 && cfg.domains[static_cast<std::size_t>(g.domain)].stand_in();
  const bool ok =
      stand_in ||
      (!g.members.empty() && g.members[0].kind == Member::Kind::kDomain &&
       g.members.size() - static_cast<std::size_t>(std::count_if(
                              g.members.begin(), g.members.end(),
                              [](const Member& m) { return m.kind == Member::Kind::kScalar; })) <=
           3 &&
       std::all_of(g.members.begin() + 1, g.members.end(), plain_axis));
  // An expression of vertical sums (NEMO's toce_vmean300): its domain and
  // the scalar of the reduce_axis its operands went through.
  const bool reduced_expression =
      !f.expr.empty() && g.members.size() == 2 && g.members[0].kind == Member::Kind::kDomain &&
      g.members[1].kind == Member::Kind::kScalar &&
      cfg.scalars[static_cast<std::size_t>(g.members[1].index)].from_axis != Reduction::kNone;
  if (!ok && !reduced_expression) {
    fail_at(f.where, "grid_ref",
            "unsupported XIOS feature (a field whose values the model sends or an expression "
            "computes lives on a grid of one domain and at most two axes; grid '" +
                g.id +
                "' is not one (an axis or a scalar alone goes too); a grid with reductions is "
                "the grid of a file variable, reached through field_ref)");
  }
  if (g.axis2 >= 0 && g.axis2 == g.axis) {
    fail_at(f.where, "grid_ref",
            "grid '" + g.id + "' has axis '" + cfg.axes[static_cast<std::size_t>(g.axis)].id +
                "' twice (its two axes make distinct file dimensions)");
  }
}

}  // namespace

namespace {

// The grids some file writes on: those of the fields files use and of the
// files' variables.
std::vector<bool> grids_in_use(const Config& cfg) {
  std::vector<bool> grid(cfg.grids.size(), false);
  const auto need = [&grid](int g) {
    if (g >= 0) grid[static_cast<std::size_t>(g)] = true;
  };
  const std::vector<bool> used = fields_in_use(cfg);
  for (std::size_t i = 0; i < cfg.fields.size(); ++i) {
    if (used[i]) need(cfg.fields[i].grid);
  }
  for (const std::vector<FileDef>* files : {&cfg.files, &cfg.inputs}) {
    for (const FileDef& file : *files) {
      for (const OutputVariable& v : file.variables) need(v.grid);
    }
  }
  return grid;
}

// The definitions of one kind (axes or domains) that the grids in use name,
// as members or through their axis/axis2/domain slots, with the chain of
// sources each derives from.
template <class Def>
std::vector<bool> used_by_grids(const Config& cfg, const std::vector<Def>& defs, Member::Kind kind,
                                std::initializer_list<int GridDef::*> slots) {
  std::vector<bool> used(defs.size(), false);
  const std::function<void(int)> need = [&](int i) {
    if (i < 0 || used[static_cast<std::size_t>(i)]) return;
    used[static_cast<std::size_t>(i)] = true;
    need(defs[static_cast<std::size_t>(i)].source);
  };
  const std::vector<bool> grids = grids_in_use(cfg);
  for (std::size_t g = 0; g < cfg.grids.size(); ++g) {
    if (!grids[g]) continue;
    const GridDef& grid = cfg.grids[g];
    for (const Member& m : grid.members) {
      if (m.kind == kind) need(m.index);
    }
    for (int GridDef::*slot : slots) need(grid.*slot);
  }
  return used;
}

// The axes some file's variable needs. As XIOS, which sizes the axes of what
// it writes only, an axis nobody writes needs no n_glo (NEMO's icbbas,
// profsed without sediment).
std::vector<bool> axes_in_use(const Config& cfg) {
  return used_by_grids(cfg, cfg.axes, Member::Kind::kAxis, {&GridDef::axis, &GridDef::axis2});
}

// The domains some file writes on.
std::vector<bool> domains_in_use(const Config& cfg) {
  return used_by_grids(cfg, cfg.domains, Member::Kind::kDomain, {&GridDef::domain});
}

}  // namespace

std::string undefined_definitions(const Config& cfg) {
  std::string out;
  const auto add = [&out](const std::string& what, const std::string& names) {
    if (!names.empty()) {
      out += (out.empty() ? "" : "; ") + what + ": " + names;
    }
  };
  std::string cal;
  const auto list = [](std::string& to, const char* name) {
    to += (to.empty() ? "" : ", ") + std::string(name);
  };
  const CalendarSpec& spec = cfg.calendar_spec;
  if (!spec.type) list(cal, "type");
  if (spec.start_date.empty()) list(cal, "start_date");
  if (!spec.timestep) list(cal, "timestep");
  if (spec.type == CalendarType::kUserDefined && spec.month_lengths.empty()) {
    list(cal, "month_lengths");
  }
  add("calendar", cal);
  for (const DomainDef& d : cfg.domains) {
    std::string missing;
    if (d.source < 0) {
      if (d.ni_glo <= 0) list(missing, "ni_glo");
      if (d.nj_glo <= 0) list(missing, "nj_glo");
      if (d.type == DomainType::kCurvilinear && d.lon.empty()) list(missing, "lonvalue_2d");
      if (d.type == DomainType::kCurvilinear && d.lat.empty()) list(missing, "latvalue_2d");
    }
    add("domain '" + d.id + "'", missing);
  }
  const std::vector<bool> axes_used = axes_in_use(cfg);
  for (std::size_t i = 0; i < cfg.axes.size(); ++i) {
    const AxisDef& a = cfg.axes[i];
    if (axes_used[i] && a.source < 0 && a.from_domain == Reduction::kNone && a.n_glo <= 0) {
      add("axis '" + a.id + "'", "n_glo");
    }
  }
  return out;
}

void complete_definitions(Config& cfg) {
  // A domain standing in for an axis has its size (the model may set it).
  for (DomainDef& d : cfg.domains) {
    if (d.stand_in_for_axis >= 0) {
      d.ni_glo = cfg.axes[static_cast<std::size_t>(d.stand_in_for_axis)].n_glo;
    }
  }
  if (const std::string missing = undefined_definitions(cfg); !missing.empty()) {
    throw ep::Error(ep::ErrorKind::kConfig, config::kCall, -1,
                    cfg.path + ": context '" + cfg.context +
                        "': neither the configuration nor the model gives " + missing);
  }
  complete_calendar(cfg);
  // A window no file writes on may lie outside its domain, as XIOS, which
  // solves the grids files use only, lets it (a zoom the model never set):
  // a warning, and the window is its whole source so that the definitions
  // stay consistent. One some file writes on is an error naming it.
  const std::vector<bool> domains_used = domains_in_use(cfg);
  for (std::size_t i = 0; i < cfg.domains.size(); ++i) {
    DomainDef& d = cfg.domains[i];
    if (d.source < 0) {
      complete_base_domain(d);
      continue;
    }
    if (domains_used[i]) {
      complete_derived_domain(cfg, d);
      continue;
    }
    try {
      complete_derived_domain(cfg, d);
    } catch (const ep::Error& error) {
      cfg.warnings.push_back(config::message_of(error) + " (no file writes on domain '" + d.id +
                             "': its window is left out)");
      d.window.reset();
      complete_derived_domain(cfg, d);
    }
  }
  for (AxisDef& a : cfg.axes) {
    complete_axis(cfg, a);
  }
  // As XIOS, which solves the fields files use only: a field that cannot be
  // evaluated is an error where a file uses it, else it is left out with a
  // warning (Config::warnings).
  const std::vector<bool> used = fields_in_use(cfg);
  for (std::size_t i = 0; i < cfg.fields.size(); ++i) {
    FieldDef& f = cfg.fields[i];
    if (!f.unusable.empty()) {
      if (used[i]) throw ep::Error(ep::ErrorKind::kConfig, config::kCall, -1, f.unusable);
      const std::string why = f.unusable;
      f.unusable.clear();
      leave_out(cfg, f, why);
    }
  }
  // Expressions: their operands, grids and checks (expression.hpp).
  resolve_expressions(cfg);
  for (std::size_t i = 0; i < cfg.fields.size(); ++i) {
    FieldDef& f = cfg.fields[i];
    if (!f.unusable.empty()) continue;
    check_or_leave_out(cfg, used, i, [&] {
      check_timestep_multiple(cfg, f.where, "freq_op", f.freq_op);
      check_timestep_multiple(cfg, f.where, "freq_offset", f.freq_offset);
      check_negative_offset(f.where, f.freq_op, f.freq_offset);
    });
  }
  for (std::size_t i = 0; i < cfg.fields.size(); ++i) {
    if (!cfg.fields[i].unusable.empty()) continue;
    check_or_leave_out(cfg, used, i, [&] {
      const int data = data_field(cfg, static_cast<int>(i));
      FieldDef& f = cfg.fields[i];
      if (f.grid < 0) {
        f.grid = cfg.fields[static_cast<std::size_t>(data)].grid;
      }
      if (f.grid < 0) {
        fail_at(f.where, "grid_ref",
                "no grid: its field_ref chain ends at field '" +
                    cfg.fields[static_cast<std::size_t>(data)].id + "', which has none");
      }
      if (static_cast<int>(i) == data) {
        check_data_grid(cfg, f);
      }
    });
  }
  for (FileDef& file : cfg.files) {
    check_timestep_multiple(cfg, file.where, "output_freq", file.output_freq);
    const std::int64_t out_s = cfg.calendar.boundary(file.output_freq, 1);
    for (auto [attr, freq] :
         {std::pair{"split_freq", &file.split_freq}, std::pair{"sync_freq", &file.sync_freq}}) {
      const bool both_fixed = freq->is_set() && !freq->is_calendar_dependent() &&
                              !file.output_freq.is_calendar_dependent();
      if (both_fixed && cfg.calendar.boundary(*freq, 1) % out_s != 0) {
        fail_at(file.where, attr,
                "value '" + to_string(*freq) + "' out of range (not a multiple of output_freq " +
                    to_string(file.output_freq) + ")");
      }
    }
    for (OutputVariable& v : file.variables) {
      check_timestep_multiple(cfg, v.where, "freq_op", v.freq_op);
      check_timestep_multiple(cfg, v.where, "freq_offset", v.freq_offset);
      check_negative_offset(v.where, v.freq_op, v.freq_offset);
      // As XIOS ("output file has output_freq < freq_op"): a sampling period
      // longer than the output period leaves records without a sample,
      // written all _FillValue.
      if (v.operation != Operation::kOnce && cfg.calendar.boundary(v.freq_op, 1) > out_s) {
        fail_at(v.where, "freq_op",
                "value '" + to_string(v.freq_op) + "' out of range (longer than output_freq " +
                    to_string(file.output_freq) + " of file '" + file.id +
                    "': its records would hold no sample)");
      }
      const int data = data_field(cfg, v.field);
      if (v.grid < 0) {
        v.grid = cfg.fields[static_cast<std::size_t>(v.field)].grid;
      }
      // Every field on the way from the variable to its data is on the
      // data's grid or on the variable's: one transformation at most.
      for (int f = v.field; f != data; f = cfg.fields[static_cast<std::size_t>(f)].source_field) {
        const int g = cfg.fields[static_cast<std::size_t>(f)].grid;
        if (g != v.grid && g != cfg.fields[static_cast<std::size_t>(data)].grid) {
          fail_at(v.where, "grid_ref",
                  "unsupported XIOS feature (a chain of grid transformations through field '" +
                      cfg.fields[static_cast<std::size_t>(f)].id + "', grid_path)");
        }
      }
      v.source = data;
      v.shape = resolve_shape(cfg, v, data);
      if (v.shape.reduces() && v.operation == Operation::kOnce) {
        fail_at(v.where, "operation", "a reduced variable with operation once");
      }
      if (v.shape.reduces() && v.freq_op.is_calendar_dependent()) {
        fail_at(v.where, "freq_op",
                "unsupported XIOS feature (a reduced variable sampled every " +
                    to_string(v.freq_op) + ": the servers fold samples of a fixed interval)");
      }
    }
  }
  // Before anything is written: names that would meet in one file or one path.
  config::check_output_names(cfg);
  cfg.complete = true;
}

}  // namespace xios_lite
