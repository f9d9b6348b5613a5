// What a file calls its domains. A domain's dimensions and coordinates are
// named after its XIOS `name` (its id when it has none): "lat_<name>",
// "lon_<name>" when the file writes several domains, "lat"/"lon" when one.
// Two output domains of one file with the same name and the same global
// points share them: NEMO writes its grid_T fields (sent with their halo)
// and its grid_T_inner fields (sent without, on grids that rename the
// domain name="grid_T") on one pair of x/y dimensions, "so we don't
// duplicate x, y dimensions". The same name on other points is a clash of
// names (config/check_names).
//
// Pure functions: thread-safe, no NetCDF.
#pragma once

#include <map>
#include <set>
#include <string>

#include "xios_lite/config.hpp"

namespace xios_lite::netcdf {

/// The name domain `d`'s dimensions and coordinates carry in files.
[[nodiscard]] inline const std::string& output_name(const Config& cfg, int d) {
  const DomainDef& dom = cfg.domains[static_cast<std::size_t>(d)];
  return dom.name.empty() ? dom.id : dom.name;
}

/// The domain whose points `d` holds as they are: `d`, or through a chain
/// of plain copies (a grid member renaming a domain, `<domain
/// domain_ref="grid_T_inner" name="grid_T"/>`, or a window covering its
/// whole source) the first domain of the chain that is not one. A copy
/// takes the model's blocks, masks and array layouts of that domain.
[[nodiscard]] inline int copied_domain(const Config& cfg, int d) {
  for (;;) {
    const DomainDef& x = cfg.domains[static_cast<std::size_t>(d)];
    if (x.source < 0) return d;
    const DomainDef& s = cfg.domains[static_cast<std::size_t>(x.source)];
    if (x.window && !(x.window->ibegin == 0 && x.window->jbegin == 0 && x.window->ni == s.ni_glo &&
                      x.window->nj == s.nj_glo)) {
      return d;
    }
    d = x.source;
  }
}

/// Whether domains a and b hold the same global points: one domain (up to
/// copies), or two of one size neither of which is a window of another
/// domain. A size the model has not given yet (0) is not a difference.
[[nodiscard]] inline bool same_global_points(const Config& cfg, int a, int b) {
  a = copied_domain(cfg, a);
  b = copied_domain(cfg, b);
  if (a == b) return true;
  const DomainDef& x = cfg.domains[static_cast<std::size_t>(a)];
  const DomainDef& y = cfg.domains[static_cast<std::size_t>(b)];
  const auto same = [](int p, int q) { return p == 0 || q == 0 || p == q; };
  return same(x.ni_glo, y.ni_glo) && same(x.nj_glo, y.nj_glo) && !x.window && !y.window;
}

/// For the output domains of one file: the domain whose dimensions and
/// coordinates each one uses (itself, or the first of `domains` of the
/// same name and points).
[[nodiscard]] inline std::map<int, int> coordinate_owners(const Config& cfg,
                                                          const std::set<int>& domains) {
  std::map<int, int> owner;
  for (const int d : domains) {
    owner[d] = d;
    for (const int o : domains) {
      if (o >= d) break;
      const bool same_kind = cfg.domains[static_cast<std::size_t>(o)].type ==
                             cfg.domains[static_cast<std::size_t>(d)].type;
      if (owner.at(o) == o && output_name(cfg, o) == output_name(cfg, d) && same_kind &&
          same_global_points(cfg, o, d)) {
        owner[d] = o;
        break;
      }
    }
  }
  return owner;
}

/// How many sets of horizontal coordinates a file with these owners writes.
[[nodiscard]] inline std::size_t coordinate_sets(const std::map<int, int>& owners) {
  std::set<int> distinct;
  for (const auto& [d, o] : owners) distinct.insert(o);
  return distinct.size();
}

}  // namespace xios_lite::netcdf
