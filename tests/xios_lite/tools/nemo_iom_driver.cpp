// nemo_iom_driver: NEMO's output configuration, read from a directory of
// NEMO's own XML files (iodef.xml, context_nemo.xml and what it includes),
// driven through XIOS's interface (xios.h) as NEMO's iom_init does it, then
// a time loop sending every field an enabled file needs. Not a ctest: its
// input lies outside the project (see docs/xios_lite.md, "NEMO's ORCA2
// files").
//
//   mpiexec -n <clients + servers> nemo_iom_driver <xml dir> [--steps N]
//       [--servers S] [--fsbc N] [--out DIR]
//
// The last S ranks are server processes (0: the clients write). What the
// model sets, as iom_init does: the calendar (NoLeap, time_origin from the
// context's ref_year/ref_month/ref_day, start 0001-01-01, a step of 5400 s),
// the domains grid_T/U/V/W/F with their _halo1 and _inner twins (ORCA2's
// 180 x 148 points split between the clients, data with one halo point),
// gznl, scalarpoint, the axes (31 levels with bounds, 5 ice categories,
// 2 ice layers, 4 straits, 10 iceberg classes, 5 basins, the isotherms,
// the ABL levels), set_xmlatt's freq_op/freq_offset of the field groups,
// the zooms of the equatorial sections, the zonal means and the moorings
// (iom_set_zoom_domain_attr, with the grids it adds) and the files' names
// (iom_update_file_name). The fields sent: every field with neither
// field_ref nor expression that xios_field_is_active calls active, on the
// array its grid takes, at the steps NEMO calls iom_put for it (SBC, ABL
// groups every nn_fsbc steps from the first, trendT_odd on odd steps,
// trendT_even on even ones, operation once at the first step only).
//
// Reports on rank 0: the files enabled and their variables, every warning
// close_definition printed, the fields sent, and any call that failed.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <pugixml.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "xios_h_nemo.hpp"
#include "xios_lite/contexts.hpp"
#include "xios_lite/xios.h"

namespace {

namespace fs = std::filesystem;

constexpr int kNiGlo = 180;  // ORCA2's Ni0glo x Nj0glo
constexpr int kNjGlo = 148;
constexpr int kHalo = 1;  // nn_hls
constexpr int kLevels = 31;
constexpr double kDt = 5400.0;

int failures = 0;

void ok(int rc, const std::string& what) {
  if (rc != 0) {
    ++failures;
    std::fprintf(stderr, "nemo_iom_driver: %s failed: %s\n", what.c_str(), cxios_last_error());
  }
}

xios_handle_t handle(const char* kind, const std::string& id) {
  xios_handle_t h = nullptr;
  ok(cxios_handle_create(kind, id.c_str(), static_cast<int>(id.size()), &h),
     std::string(kind) + " " + id);
  return h;
}

bool valid(const char* kind, const std::string& id) {
  return cxios_valid_id(kind, id.c_str(), static_cast<int>(id.size()));
}

std::string text_of(int (*get)(xios_handle_t, char*, int), xios_handle_t h) {
  std::vector<char> text(512, ' ');
  if (get(h, text.data(), static_cast<int>(text.size())) != 0) return "";
  std::string out(text.data(), text.size());
  out.erase(out.find_last_not_of(std::string(" \0", 2)) + 1);
  return out;
}

// ---- what NEMO's XML files define (read here as NEMO's code knows it) ----

struct Member {
  std::string kind;  // domain, axis, scalar
  std::string ref;   // its domain_ref / axis_ref, or its id
  std::string transform;
};

struct Xml {
  std::vector<std::string> fields;           // ids, first definition first
  std::map<std::string, bool> root;          // neither field_ref nor expression
  std::map<std::string, std::string> group;  // the send pattern of its groups
  std::map<std::string, std::vector<Member>> grids;
  std::map<std::string, std::string> domain_ref;
  std::map<std::string, std::string> axis_ref;
  std::vector<std::pair<std::string, int>> files;  // id, field children
  std::vector<std::unique_ptr<pugi::xml_document>> docs;
};

std::string trimmed(std::string s) {
  s.erase(0, s.find_first_not_of(" \t\n\r"));
  s.erase(s.find_last_not_of(" \t\n\r") + 1);
  return s;
}

void walk(Xml& x, const fs::path& dir, pugi::xml_node node, const std::string& pattern);

// The element itself, or the root of the file its src names.
pugi::xml_node included(Xml& x, const fs::path& dir, pugi::xml_node node) {
  const std::string src = node.attribute("src").as_string();
  if (src.empty()) return node;
  auto doc = std::make_unique<pugi::xml_document>();
  const fs::path path = dir / src;
  if (!doc->load_file(path.c_str())) {
    throw std::runtime_error("cannot read " + path.string());
  }
  const pugi::xml_node root = doc->document_element();
  x.docs.push_back(std::move(doc));
  return root;
}

void walk(Xml& x, const fs::path& dir, pugi::xml_node node, const std::string& pattern) {
  for (pugi::xml_node c : included(x, dir, node).children()) {
    const std::string name = c.name();
    const std::string id = c.attribute("id").as_string();
    if (name == "field_group") {
      std::string p = pattern;
      for (const char* g : {"SBC", "SBC_scalar", "ABL", "trendT_odd", "trendT_even"}) {
        if (id == g) p = g == std::string("SBC_scalar") || g == std::string("ABL") ? "SBC" : g;
      }
      walk(x, dir, c, p);
    } else if (name == "field" && !id.empty()) {
      const bool computed = !c.attribute("field_ref").empty() || !c.attribute("expr").empty() ||
                            !trimmed(c.child_value()).empty();
      if (x.root.count(id) == 0) {
        x.fields.push_back(id);
        x.root[id] = true;
        x.group[id] = pattern;
      }
      if (computed) x.root[id] = false;
    } else if (name == "grid") {
      std::vector<Member> members;
      for (pugi::xml_node m : c.children()) {
        const std::string kind = m.name();
        std::string ref = m.attribute((kind + "_ref").c_str()).as_string();
        if (ref.empty()) ref = m.attribute("id").as_string();
        members.push_back({kind, ref, m.first_child().name()});
      }
      x.grids[id] = members;
    } else if (name == "domain" && !id.empty()) {
      x.domain_ref[id] = c.attribute("domain_ref").as_string();
    } else if (name == "axis" && !id.empty()) {
      x.axis_ref[id] = c.attribute("axis_ref").as_string();
    } else if (name == "file") {
      int n = 0;
      for (pugi::xml_node f : c.children("field"))
        n += f.attribute("enabled").as_string("true")[0] != 'f' ? 1 : 0;
      x.files.emplace_back(id, n);
    } else if (name.find("_definition") != std::string::npos ||
               name.find("_group") != std::string::npos) {
      walk(x, dir, c, pattern);
    }
  }
}

Xml read_xml(const fs::path& dir) {
  Xml x;
  auto doc = std::make_unique<pugi::xml_document>();
  if (!doc->load_file((dir / "iodef.xml").c_str())) {
    throw std::runtime_error("cannot read " + (dir / "iodef.xml").string());
  }
  for (pugi::xml_node c : doc->document_element().children("context")) {
    if (std::string(c.attribute("id").as_string()) == "nemo") walk(x, dir, c, "");
  }
  x.docs.push_back(std::move(doc));
  return x;
}

// ---- the model's geometry ----

struct Block {
  int ibegin, ni, jbegin, nj;
};

// A jpni x jpnj decomposition as near square as the client count allows.
Block block_of(int rank, int size) {
  int pi = 1;
  for (int p = 1; p * p <= size; ++p) {
    if (size % p == 0) pi = p;
  }
  const int pj = size / pi;
  const auto cut = [](int n, int parts, int k, int& begin, int& count) {
    begin = n * k / parts;
    count = n * (k + 1) / parts - begin;
  };
  Block b{};
  cut(kNiGlo, pi, rank % pi, b.ibegin, b.ni);
  cut(kNjGlo, pj, rank / pi, b.jbegin, b.nj);
  return b;
}

double glam(int i) { return -179.0 + 2.0 * i; }
double gphi(int j) { return -78.0 + 168.0 * j / (kNjGlo - 1); }

// dom_ngb: the 1-based indices of the point nearest (lon, lat).
void dom_ngb(double lon, double lat, int& ix, int& iy) {
  double best = 1e300;
  for (int j = 0; j < kNjGlo; ++j) {
    for (int i = 0; i < kNiGlo; ++i) {
      double dl = std::fabs(glam(i) - lon);
      dl = std::min(dl, 360.0 - dl);
      const double d = dl * dl + (gphi(j) - lat) * (gphi(j) - lat);
      if (d < best) {
        best = d;
        ix = i + 1;
        iy = j + 1;
      }
    }
  }
}

void set_domain(const std::string& id, const Block& b, int halo) {
  if (!valid("domain", id)) return;
  const xios_handle_t d = handle("domain", id);
  ok(cxios_set_domain_type(d, "curvilinear", 11), id + " type");
  xios_test::set_domain_block(d, id, kNiGlo, kNjGlo, b, ok);
  ok(cxios_set_domain_data_dim(d, 2), id + " data_dim");
  ok(cxios_set_domain_data_ibegin(d, -halo), id + " data_ibegin");
  ok(cxios_set_domain_data_ni(d, b.ni + 2 * halo), id + " data_ni");
  ok(cxios_set_domain_data_jbegin(d, -halo), id + " data_jbegin");
  ok(cxios_set_domain_data_nj(d, b.nj + 2 * halo), id + " data_nj");
  std::vector<double> lon;
  std::vector<double> lat;
  for (int j = b.jbegin; j < b.jbegin + b.nj; ++j) {
    for (int i = b.ibegin; i < b.ibegin + b.ni; ++i) {
      lon.push_back(glam(i));
      lat.push_back(gphi(j));
    }
  }
  ok(cxios_set_domain_lonvalue_1d(d, lon.data(), static_cast<int>(lon.size())), id + " lonvalue");
  ok(cxios_set_domain_latvalue_1d(d, lat.data(), static_cast<int>(lat.size())), id + " latvalue");
}

void set_axis(const std::string& id, int n, bool bounds = false) {
  if (!valid("axis", id)) return;
  const xios_handle_t a = handle("axis", id);
  std::vector<double> v(static_cast<std::size_t>(n));
  std::vector<double> bnd;
  for (int k = 0; k < n; ++k) {
    v[static_cast<std::size_t>(k)] = k + 1.0;
    bnd.push_back(k + 0.5);
    bnd.push_back(k + 1.5);
  }
  ok(cxios_set_axis_n_glo(a, n), id + " n_glo");
  ok(cxios_set_axis_value(a, v.data(), n), id + " value");
  if (bounds) ok(cxios_set_axis_bounds(a, bnd.data(), 2, n), id + " bounds");
}

// iom_set_zoom_domain_attr: the window, and grids <id>_2D and <id>_3D of it.
void set_zoom(const std::string& id, int ibegin, int jbegin, int ni, int nj) {
  if (!valid("zoom_domain", id)) return;
  const xios_handle_t z = handle("zoom_domain", id);
  ok(cxios_set_zoom_domain_ibegin(z, ibegin), id + " ibegin");
  ok(cxios_set_zoom_domain_jbegin(z, jbegin), id + " jbegin");
  ok(cxios_set_zoom_domain_ni(z, ni), id + " ni");
  ok(cxios_set_zoom_domain_nj(z, nj), id + " nj");
  const xios_handle_t grids = handle("gridgroup", "grid_definition");
  xios_handle_t g = nullptr;
  xios_handle_t m = nullptr;
  const std::string g2 = id + "_2D";
  const std::string g3 = id + "_3D";
  ok(cxios_add_child(grids, "grid", g2.c_str(), static_cast<int>(g2.size()), &g), "add " + g2);
  ok(cxios_add_child(g, "domain", id.c_str(), static_cast<int>(id.size()), &m), "add " + id);
  ok(cxios_add_child(grids, "grid", g3.c_str(), static_cast<int>(g3.size()), &g), "add " + g3);
  ok(cxios_add_child(g, "domain", id.c_str(), static_cast<int>(id.size()), &m), "add " + id);
  // 'depth' and the id's last letter in lower case (NEMO's 'deptht', 'depthr' for ptr).
  const std::string axis = "depth" + std::string(1, static_cast<char>(std::tolower(id.back())));
  ok(cxios_add_child(g, "axis", axis.c_str(), static_cast<int>(axis.size()), &m), "add " + axis);
}

// A date of the NoLeap calendar as iom_sdate writes it.
std::string sdate(double days_since_start, bool end_of_day) {
  static constexpr std::array<int, 12> kMonth{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  long day = static_cast<long>(std::floor(days_since_start + 1e-9));
  if (end_of_day && std::fabs(days_since_start - std::round(days_since_start)) < 1e-9) --day;
  int year = 1 + static_cast<int>(day / 365);
  day %= 365;
  int month = 0;
  while (day >= kMonth[static_cast<std::size_t>(month)])
    day -= kMonth[static_cast<std::size_t>(month++)];
  char out[32];
  std::snprintf(out, sizeof out, "%04d%02d%02ld", year, month + 1, day + 1);
  return out;
}

// iom_update_file_name: @expname@, @freq@, @startdate@, @enddate@.
void update_file_name(const std::string& id, int steps) {
  if (!valid("file", id)) return;
  const xios_handle_t f = handle("file", id);
  cxios_duration d{};
  if (cxios_is_defined_file_output_freq(f))
    ok(cxios_get_file_output_freq(f, &d), id + " output_freq");
  // @freq@: the finest unit set, as NEMO's iom_update_file_name writes it.
  std::string freq;
  const std::pair<double, const char*> units[] = {
      {d.timestep, "ts"}, {d.second, "s"}, {d.minute, "mi"}, {d.hour, "h"},
      {d.day, "d"},       {d.month, "m"},  {d.year, "y"}};
  for (const auto& [value, unit] : units) {
    if (value != 0) {
      freq = std::to_string(static_cast<int>(value)) + unit;
      break;
    }
  }
  const std::map<std::string, std::string> keys{{"@expname@", "ORCA2"},
                                                {"@freq@", freq},
                                                {"@startdate@", sdate(0, false)},
                                                {"@enddate@", sdate(steps * kDt / 86400.0, true)}};
  for (const bool suffix : {false, true}) {
    const bool defined =
        suffix ? cxios_is_defined_file_name_suffix(f) : cxios_is_defined_file_name(f);
    if (!defined) continue;
    std::string name = text_of(suffix ? cxios_get_file_name_suffix : cxios_get_file_name, f);
    for (const auto& [key, value] : keys) {
      for (auto at = name.find(key); at != std::string::npos; at = name.find(key)) {
        name.replace(at, key.size(), value);
      }
    }
    ok((suffix ? cxios_set_file_name_suffix : cxios_set_file_name)(f, name.c_str(),
                                                                   static_cast<int>(name.size())),
       id + " name");
  }
}

// set_mooring: the moorings' zooms, named as NEMO names them.
void set_moorings(const std::vector<double>& lons, const std::vector<double>& lats) {
  for (double lon0 : lons) {
    for (double lat0 : lats) {
      double lon = lon0;
      double lat = lat0;
      if (lon == 67. && lat == 15.) lon = 65.;
      if (lon == 90. && lat <= -4.) lon = 95.;
      if (lon == 95. && lat == -4.) lat = -5.;
      if (lon == -38. && lat == -19.) lon = -34.;
      if (lon == -38. && lat == -14.) lon = -32.;
      if (lon == -38. && lat == -8.) lon = -30.;
      if (lon == -38. && lat == 0.) lon = -35.;
      if (lon == -23. && lat == 20.) lat = 21.;
      if (lon == -10. && lat == -14.) lat = -10.;
      if (lon == -10. && lat == -8.) lat = -6.;
      if (lon == -10. && lat == 4.) {
        lon = 0.;
        lat = 0.;
      }
      int ix = 0;
      int iy = 0;
      dom_ngb(lon, lat, ix, iy);
      const auto part = [](double v, const char* pos, const char* neg) {
        char out[16];
        const double a = std::fabs(v);
        if (a == std::round(a))
          std::snprintf(out, sizeof out, "%d%s", static_cast<int>(a), v >= 0 ? pos : neg);
        else
          std::snprintf(out, sizeof out, "%.1f%s", a, v >= 0 ? pos : neg);
        return std::string(out);
      };
      const std::string name = part(lat, "n", "s") + part(lon, "e", "w") + "T";
      set_zoom(name, ix - 1, iy - 1, 1, 1);
    }
  }
}

// ---- sending ----

struct Send {
  std::string id;
  std::string pattern;
  std::size_t values = 0;
  bool once = false;
  long sent = 0;
};

std::string field_text(int (*get)(xios_handle_t, char*, int), bool (*defined)(xios_handle_t),
                       xios_handle_t h) {
  return defined(h) ? text_of(get, h) : "";
}

// The values per step of the array NEMO hands for `id`: its grid's domain
// as the model holds it (halo'd or inner), times its axes.
std::size_t array_size(const Xml& x, const std::string& id, const Block& b,
                       const std::map<std::string, int>& axes) {
  const xios_handle_t f = handle("field", id);
  std::vector<Member> members;
  const std::string grid = field_text(cxios_get_field_grid_ref, cxios_is_defined_field_grid_ref, f);
  if (!grid.empty()) {
    const auto g = x.grids.find(grid);
    if (g != x.grids.end()) members = g->second;
  } else {
    const std::string d =
        field_text(cxios_get_field_domain_ref, cxios_is_defined_field_domain_ref, f);
    const std::string a = field_text(cxios_get_field_axis_ref, cxios_is_defined_field_axis_ref, f);
    if (!d.empty()) members.push_back({"domain", d, ""});
    if (!a.empty()) members.push_back({"axis", a, ""});
  }
  std::size_t n = 1;
  for (const Member& m : members) {
    if (m.kind == "domain") {
      std::string base = m.ref;
      while (x.domain_ref.count(base) != 0 && !x.domain_ref.at(base).empty())
        base = x.domain_ref.at(base);
      const bool halo = base.rfind("grid_", 0) == 0 && base.find("_inner") == std::string::npos;
      const int h = halo ? kHalo : 0;
      n *= static_cast<std::size_t>((b.ni + 2 * h) * (b.nj + 2 * h));
    } else if (m.kind == "axis") {
      std::string base = m.ref;
      while (x.axis_ref.count(base) != 0 && !x.axis_ref.at(base).empty())
        base = x.axis_ref.at(base);
      const auto a = axes.find(base);
      n *= static_cast<std::size_t>(a != axes.end() ? a->second : 1);
    }
  }
  return n;
}

bool due(const Send& s, int kt, int fsbc) {
  if (s.once) return kt == 1;
  if (s.pattern == "SBC") return (kt - 1) % fsbc == 0;
  if (s.pattern == "trendT_odd") return kt % 2 == 1;
  if (s.pattern == "trendT_even") return kt % 2 == 0;
  return true;
}

// Captures what this process prints on stderr while `run` runs.
std::string capture_stderr(const std::function<void()>& run) {
  std::fflush(stderr);
  char path[] = "/tmp/nemo_iom_driver_XXXXXX";
  const int fd = mkstemp(path);
  const int saved = dup(2);
  dup2(fd, 2);
  run();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  close(fd);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path);
  return text.str();
}

int model(const Xml& x, int steps, int fsbc) {
  const auto [comm, rank, size] = xios_test::init_nemo_client(ok);
  const Block b = block_of(rank, size);

  // iom_init: the calendar.
  int ref[3] = {1900, 1, 1};
  const char* names[3] = {"ref_year", "ref_month", "ref_day"};
  for (int k = 0; k < 3; ++k) {
    int found = 0;
    int v = 0;
    ok(cxios_getvar(names[k], static_cast<int>(std::strlen(names[k])), CXIOS_INT, &v, 1, &found),
       names[k]);
    if (found != 0) ref[k] = v;
  }
  const xios_handle_t cal = handle("calendar_wrapper", "");
  ok(cxios_set_calendar_wrapper_type(cal, "NoLeap", 6), "calendar type");
  ok(cxios_set_calendar_wrapper_time_origin(cal, cxios_date{ref[0], ref[1], ref[2], 0, 0, 0}),
     "time_origin");
  ok(cxios_set_calendar_wrapper_start_date(cal, cxios_date{1, 1, 1, 0, 0, 0}), "start_date");

  // set_scalar, set_grid, set_grid_znl. The _halo1 and _inner twins of the
  // grids NEMO's domain_def names as defined automatically are added here.
  const xios_handle_t domains = handle("domaingroup", "domain_definition");
  for (const char* g : {"T", "U", "V", "W", "F"}) {
    for (const char* twin : {"_halo1", "_inner"}) {
      const std::string id = std::string("grid_") + g + twin;
      xios_handle_t d = nullptr;
      if (!valid("domain", id)) {
        ok(cxios_add_child(domains, "domain", id.c_str(), static_cast<int>(id.size()), &d),
           "add " + id);
      }
    }
  }
  if (valid("domain", "scalarpoint")) {
    const xios_handle_t s = handle("domain", "scalarpoint");
    ok(cxios_set_domain_type(s, "curvilinear", 11), "scalarpoint type");
    ok(cxios_set_domain_ni_glo(s, size), "scalarpoint ni_glo");
    ok(cxios_set_domain_nj_glo(s, 1), "scalarpoint nj_glo");
    ok(cxios_set_domain_ibegin(s, rank), "scalarpoint ibegin");
    ok(cxios_set_domain_ni(s, 1), "scalarpoint ni");
    ok(cxios_set_domain_jbegin(s, 0), "scalarpoint jbegin");
    ok(cxios_set_domain_nj(s, 1), "scalarpoint nj");
    ok(cxios_set_domain_data_dim(s, 2), "scalarpoint data_dim");
    ok(cxios_set_domain_data_ibegin(s, 1), "scalarpoint data_ibegin");
    ok(cxios_set_domain_data_ni(s, 1), "scalarpoint data_ni");
    ok(cxios_set_domain_data_jbegin(s, 1), "scalarpoint data_jbegin");
    ok(cxios_set_domain_data_nj(s, 1), "scalarpoint data_nj");
    const double area = rank + 1.0;
    ok(cxios_set_domain_lonvalue_1d(s, &area, 1), "scalarpoint lonvalue");
    ok(cxios_set_domain_latvalue_1d(s, &area, 1), "scalarpoint latvalue");
  }
  for (const char* g : {"T", "U", "V", "W", "F"}) {
    set_domain(std::string("grid_") + g, b, kHalo);
    set_domain(std::string("grid_") + g + "_halo1", b, 1);
    set_domain(std::string("grid_") + g + "_inner", b, 0);
  }
  set_domain("gznl", b, 0);
  {
    int ix = 0;
    int iy = 0;
    dom_ngb(180.0, 90.0, ix, iy);
    set_zoom("ptr", ix - 1, 0, 1, kNjGlo);
  }

  // The axes.
  const std::map<std::string, int> axes{
      {"deptht", kLevels}, {"depthu", kLevels}, {"depthv", kLevels}, {"depthw", kLevels},
      {"depthf", kLevels}, {"ght_abl", 1},      {"ghw_abl", 1},      {"ncatice", 5},
      {"nlayice", 2},      {"nstrait", 4},      {"icbcla", 10},      {"iax_20C", 1},
      {"iax_26C", 1},      {"iax_28C", 1},      {"basin", 5},        {"section", 16},
      {"section_ice", 4}};
  for (const auto& [id, n] : axes) {
    if (id != "section" && id != "section_ice")
      set_axis(id, n, id.rfind("depth", 0) == 0 || id.find("abl") != std::string::npos);
  }

  // set_xmlatt: sampling of the field groups, file names, zooms.
  const auto group_freq = [](const char* id, int op, int offset) {
    const std::string kind = valid("field", id) ? "field" : "fieldgroup";
    if (!valid(kind.c_str(), id)) return;
    cxios_duration o{};
    cxios_duration f{};
    o.timestep = op;
    f.timestep = offset;
    const xios_handle_t h = handle(kind.c_str(), id);
    if (kind == "field") {
      ok(cxios_set_field_freq_op(h, o), std::string(id) + " freq_op");
      ok(cxios_set_field_freq_offset(h, f), std::string(id) + " freq_offset");
    } else {
      ok(cxios_set_fieldgroup_freq_op(h, o), std::string(id) + " freq_op");
      ok(cxios_set_fieldgroup_freq_offset(h, f), std::string(id) + " freq_offset");
    }
  };
  group_freq("field_definition", 1, 0);
  group_freq("trendT_even", 2, 0);
  group_freq("trendT_odd", 2, -1);
  group_freq("SBC", fsbc, 0);
  group_freq("SBC_scalar", fsbc, 0);
  group_freq("ABL", fsbc, 0);
  for (int n = 1; n <= 999; ++n) {
    char id[8];
    if (n <= 9) {
      std::snprintf(id, sizeof id, "file%d", n);
      update_file_name(id, steps);
    }
    if (n <= 99) {
      std::snprintf(id, sizeof id, "file%02d", n);
      update_file_name(id, steps);
    }
    std::snprintf(id, sizeof id, "file%03d", n);
    update_file_name(id, steps);
  }
  for (const char* g : {"T", "U", "W"}) {
    int ix = 0;
    int iy = 0;
    dom_ngb(0.0, 0.0, ix, iy);
    const std::string id = std::string("Eq") + g;
    set_zoom(id, 0, iy - 1, kNiGlo, 1);
    if (valid("file", id)) {
      const xios_handle_t f = handle("file", id);
      const std::string suffix = text_of(cxios_get_file_name_suffix, f) + "_Eq";
      ok(cxios_set_file_name_suffix(f, suffix.c_str(), static_cast<int>(suffix.size())), id);
      update_file_name(id, steps);
    }
  }
  set_moorings({137.0, 147.0, 156.0, 165.0, -180.0, -170.0, -155.0, -140.0, -125.0, -110.0, -95.0},
               {-8.0, -5.0, -2.0, 0.0, 2.0, 5.0, 8.0});
  set_moorings({55.0, 67.0, 80.5, 90.0},
               {-16.0, -12.0, -8.0, -4.0, -1.5, 0.0, 1.5, 4.0, 8.0, 12.0, 15.0});
  set_moorings({-38.0, -23.0, -10.0}, {-19.0, -14.0, -8.0, 0.0, 4.0, 8.0, 12.0, 15.0, 20.0});

  cxios_duration dt{};
  dt.second = kDt;
  ok(cxios_set_timestep(dt), "xios_set_timestep");

  // iom_init_closedef.
  int closed = 0;
  const std::string printed = capture_stderr([&] { closed = cxios_context_close_definition(); });
  if (closed != 0) {
    std::fprintf(stderr, "%s", printed.c_str());
    std::fprintf(stderr, "nemo_iom_driver: rank %d: xios_close_context_definition refused: %s\n",
                 rank, cxios_last_error());
    return 1;
  }
  ok(cxios_update_calendar(0), "xios_update_calendar(0)");

  // What the files hold, and the fields sent.
  int files = 0;
  int variables = 0;
  for (const auto& [id, n] : x.files) {
    const xios_handle_t f = handle("file", id);
    bool enabled = true;
    if (cxios_is_defined_file_enabled(f)) ok(cxios_get_file_enabled(f, &enabled), id + " enabled");
    if (!enabled) continue;
    ++files;
    variables += n;
  }
  std::vector<Send> sends;
  for (const std::string& id : x.fields) {
    if (!x.root.at(id) || !cxios_field_is_active(id.c_str(), static_cast<int>(id.size()))) continue;
    Send s{id, x.group.at(id), array_size(x, id, b, axes)};
    const std::string op = field_text(cxios_get_field_operation, cxios_is_defined_field_operation,
                                      handle("field", id));
    s.once = op == "once";
    sends.push_back(s);
  }
  if (rank == 0) {
    int warnings = 0;
    std::istringstream lines(printed);
    for (std::string line; std::getline(lines, line);) {
      std::printf("%s\n", line.c_str());
      if (line.find("xios_lite: warning:") != std::string::npos) ++warnings;
    }
    std::printf(
        "nemo_iom_driver: close_definition passed on %d client(s): %d files enabled, %d "
        "variables; %d warnings; %zu fields sent by the model\n",
        size, files, variables, warnings, sends.size());
    std::fflush(stdout);
  }

  for (int kt = 1; kt <= steps; ++kt) {
    ok(cxios_update_calendar(kt), "xios_update_calendar " + std::to_string(kt));
    for (Send& s : sends) {
      if (!due(s, kt, fsbc)) continue;
      std::vector<double> v(s.values);
      for (std::size_t p = 0; p < v.size(); ++p) {
        v[p] = 1.5 + 0.25 * std::sin(0.37 * kt + 0.01 * static_cast<double>(p % 97) + s.id.size());
      }
      const std::int64_t n = static_cast<std::int64_t>(v.size());
      const int rc =
          cxios_write_data_k8(s.id.c_str(), static_cast<int>(s.id.size()), v.data(), 1, &n);
      if (rc != 0 && s.sent >= 0) {
        ok(rc, "xios_send_field " + s.id + " at step " + std::to_string(kt));
        s.sent = -1;  // said once
      } else if (rc == 0 && s.sent >= 0) {
        ++s.sent;
      }
    }
  }
  ok(cxios_context_finalize(), "xios_context_finalize");
  ok(cxios_finalize(), "xios_finalize");
  if (rank == 0) {
    std::printf("nemo_iom_driver: %d steps done, %d failed calls on rank 0\n", steps, failures);
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int world_rank = 0;
  int world_size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  std::string dir;
  std::string out = "nemo_iom_out";
  int steps = 496;
  int servers = 0;
  int fsbc = 4;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    const auto next = [&]() -> std::string { return a + 1 < argc ? argv[++a] : ""; };
    if (arg == "--steps")
      steps = std::atoi(next().c_str());
    else if (arg == "--servers")
      servers = std::atoi(next().c_str());
    else if (arg == "--fsbc")
      fsbc = std::atoi(next().c_str());
    else if (arg == "--out")
      out = next();
    else
      dir = arg;
  }
  if (dir.empty() || steps < 0 || fsbc < 1 || servers < 0 || servers >= world_size) {
    if (world_rank == 0) {
      std::fprintf(stderr,
                   "usage: mpiexec -n <clients + servers> nemo_iom_driver <dir of NEMO's XML> "
                   "[--steps N] [--servers S] [--fsbc N] [--out DIR] (rank %d of %d, servers %d)\n",
                   world_rank, world_size, servers);
    }
    MPI_Finalize();
    return 2;
  }
  // A fresh directory with NEMO's files: XIOS reads ./iodef.xml, and the
  // files are written beside it.
  int ready = 1;
  if (world_rank == 0) {
    std::error_code e;
    fs::create_directories(out, e);
    for (const auto& entry : fs::directory_iterator(out, e)) {
      if (entry.path().extension() == ".nc") {
        std::fprintf(stderr, "nemo_iom_driver: %s holds NetCDF files of an earlier run\n",
                     out.c_str());
        ready = 0;
        break;
      }
    }
    for (const auto& entry : fs::directory_iterator(dir, e)) {
      if (entry.path().extension() == ".xml") {
        fs::copy_file(entry.path(), fs::path(out) / entry.path().filename(),
                      fs::copy_options::overwrite_existing, e);
      }
    }
    if (e) {
      std::fprintf(stderr, "nemo_iom_driver: %s: %s\n", out.c_str(), e.message().c_str());
      ready = 0;
    }
  }
  MPI_Bcast(&ready, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (ready == 0 || chdir(out.c_str()) != 0) {
    MPI_Finalize();
    return 2;
  }
  int rc = 0;
  if (world_rank >= world_size - servers) {
    xios_lite::World w = xios_lite::initialize(MPI_COMM_WORLD, xios_lite::Role::kServer);
    try {
      xios_lite::ServerOptions options;
      options.threads = 1;
      (void)xios_lite::serve_contexts(w, options);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "nemo_iom_driver: server %d: %s\n", world_rank, e.what());
      rc = 1;
    }
    xios_lite::free_world(w);
  } else {
    try {
      rc = model(read_xml("."), steps, fsbc);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "nemo_iom_driver: rank %d: %s\n", world_rank, e.what());
      rc = 1;
    }
  }
  MPI_Finalize();
  return rc;
}
