// Names that would meet in the output: two files written to one path, two
// NetCDF names of one file (two variables, a variable and a coordinate, a
// dimension or a bounds variable). NetCDF refuses the second definition
// only when the file is created, on the servers, after the run started
// (the clients hear of it at their next call or at finalise), and two
// files of one path overwrite each other into an unreadable file. Here
// both are refused while the definitions are completed, on every client
// (and server) alike, naming both places.
//
// The names of a file follow the writer (netcdf/nc_file.cpp): "time",
// "time_bounds" and "axis_nbounds"; per output domain "lat"/"lon" (or
// "y"/"x" and 2-D "lat"/"lon" when curvilinear), suffixed "_<domain name>"
// when the file has several sets of them (two domains of one name and the
// same points share one set: netcdf/domain_names.hpp), "bounds_lat"/"bounds_lon" and
// "nvertex" with cell bounds, "area" with cell areas; per axis its name,
// and "<name>_bounds" with bounds. The writer counts a file's domains over
// the whole file (not over the rows one server process holds), so every
// part of a multiple_file set names its dimensions alike.
#include "check_names.hpp"

#include <map>
#include <set>
#include <string>

#include "netcdf/domain_names.hpp"
#include "netcdf/variable_layout.hpp"
#include "xml_tree.hpp"

namespace xios_lite::config {
namespace {

// The path stem of a file: its name and suffix, without a leading "./"
// (the split dates and the server index are appended alike to equal stems).
std::string stem_of(const FileDef& f) {
  std::string s = f.name + f.name_suffix;
  while (s.rfind("./", 0) == 0) {
    s.erase(0, 2);
  }
  return s;
}

// One name of a file and what made it.
struct Owner {
  Origin where;      // the element that made it
  std::string what;  // "variable", "coordinate of domain 'd'", ...
  int entity = -1;   // the same coordinate made twice (one domain in two variables) is one name
  friend bool operator==(const Owner& a, const Owner& b) {
    return a.entity >= 0 && a.entity == b.entity && a.what == b.what;
  }
};

class FileNames {
 public:
  explicit FileNames(const FileDef& file) : file_(file) {}

  void add(const std::string& name, const Owner& owner, const Origin& reported_at,
           const char* attribute) {
    const auto [it, inserted] = names_.emplace(name, owner);
    if (inserted || it->second == owner) {
      return;
    }
    fail_at(reported_at, attribute,
            "name '" + name + "' of " + owner.what + " in file '" + file_.id + "' (" + file_.where +
                ") is already the name of " + it->second.what + " (" + it->second.where +
                "): two NetCDF names of one file must differ");
  }

 private:
  const FileDef& file_;
  std::map<std::string, Owner> names_;
};

// Entities: domains, axes and the file's own names get distinct numbers.
constexpr int kFileEntity = 0;
int domain_entity(int d) { return 1 + 2 * d; }
int axis_entity(int a) { return 2 + 2 * a; }

void check_file(const Config& cfg, const FileDef& file) {
  FileNames names(file);
  const Owner time{file.where, "the time axis", kFileEntity};
  bool has_time = false;
  std::set<int> domains;  // output domains (not stand-ins)
  for (const OutputVariable& v : file.variables) {
    has_time = has_time || v.operation != Operation::kOnce;
    const netcdf::VariableLayout l = netcdf::layout_of(cfg, v);
    if (l.horizontal == netcdf::VariableLayout::Horizontal::kDomain &&
        !cfg.domains[static_cast<std::size_t>(l.domain)].stand_in()) {
      domains.insert(l.domain);
    }
  }
  // Twins of one name share their coordinates (netcdf/domain_names.hpp).
  const std::map<int, int> owners = netcdf::coordinate_owners(cfg, domains);
  if (has_time) {
    for (const char* n : {"time", "time_bounds", "axis_nbounds"}) {
      names.add(n, time, file.where, "name");
    }
  }
  const auto add_axis = [&](int a, const Origin& used_at) {
    const AxisDef& ax = cfg.axes[static_cast<std::size_t>(a)];
    const Owner o{ax.where, "axis '" + ax.id + "'", axis_entity(a)};
    names.add(ax.name, o, used_at, "name");
    if (!ax.bounds.empty()) {
      names.add(ax.name + "_bounds", o, used_at, "name");
      names.add("axis_nbounds", time, used_at, "name");
    }
  };
  // Coordinates first, then the variables, in the writer's order: the
  // message then names the variable as the one that clashes.
  for (const OutputVariable& v : file.variables) {
    const netcdf::VariableLayout l = netcdf::layout_of(cfg, v);
    if (l.horizontal == netcdf::VariableLayout::Horizontal::kDomain) {
      const DomainDef& dom = cfg.domains[static_cast<std::size_t>(l.domain)];
      if (dom.stand_in_for_axis >= 0) {
        add_axis(dom.stand_in_for_axis, v.where);
      } else if (!dom.stand_in()) {
        const int owner = owners.at(l.domain);
        const std::string suffix =
            netcdf::coordinate_sets(owners) > 1 ? "_" + netcdf::output_name(cfg, owner) : "";
        const DomainDef& named = cfg.domains[static_cast<std::size_t>(owner)];
        const Owner o{named.where, "a coordinate of domain '" + named.id + "'",
                      domain_entity(owner)};
        const bool curvilinear = named.type == DomainType::kCurvilinear;
        for (const std::string& n : {"lat" + suffix, "lon" + suffix}) {
          names.add(n, o, v.where, "name");
        }
        if (curvilinear) {
          names.add("y" + suffix, o, v.where, "name");
          names.add("x" + suffix, o, v.where, "name");
        }
        if (!named.bounds_lat.empty()) names.add("bounds_lat" + suffix, o, v.where, "name");
        if (!named.bounds_lon.empty()) names.add("bounds_lon" + suffix, o, v.where, "name");
        if (!named.bounds_lat.empty() || !named.bounds_lon.empty()) {
          names.add("nvertex", time, v.where, "name");
        }
        if (!named.area.empty()) names.add("area" + suffix, o, v.where, "name");
      }
    }
    if (l.horizontal == netcdf::VariableLayout::Horizontal::kAxis) {
      add_axis(l.reduced_axis, v.where);
    }
    if (l.vertical_axis >= 0) add_axis(l.vertical_axis, v.where);
    if (l.outer_axis >= 0) add_axis(l.outer_axis, v.where);
  }
  for (const OutputVariable& v : file.variables) {
    names.add(v.name, Owner{v.where, "variable '" + v.name + "'", -1}, v.where, "name");
  }
}

}  // namespace

void check_output_names(const Config& cfg) {
  // Files: an output file must overwrite neither another output nor an
  // input (several read-mode files may read one file).
  std::map<std::string, const FileDef*> paths;
  const auto add_file = [&](const FileDef& f) {
    const std::string stem = stem_of(f);
    const auto [it, inserted] = paths.emplace(stem, &f);
    if (!inserted && (!f.read || !it->second->read)) {
      fail_at(f.where, "name",
              "output name '" + stem + "' is also the name of file '" + it->second->id + "' (" +
                  it->second->where + "): " +
                  (it->second->read ? "the file would overwrite its input"
                                    : "both would write one path") +
                  " (give one a name or name_suffix of its own)");
    }
  };
  for (const FileDef& f : cfg.inputs) add_file(f);
  for (const FileDef& f : cfg.files) add_file(f);
  for (const FileDef& f : cfg.files) check_file(cfg, f);
}

}  // namespace xios_lite::config
