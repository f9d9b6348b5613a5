// Grids: their members (references or anonymous derived domains, axes and
// scalars), a field's implicit grid (domain_ref, axis_ref) and the domains
// standing in for a grid of an axis or a scalar alone.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "context_parser.hpp"
#include "vocabulary.hpp"
#include "xios_lite/config.hpp"
#include "xml_tree.hpp"

namespace xios_lite::parser {

int ContextParser::member_index(const std::map<std::string, int>& index, const Element& e,
                                const char* attr, const char* what) const {
  const std::string id = config::required(e, attr);
  const auto it = index.find(id);
  if (it == index.end()) {
    skip_if_failed(what, id);
    fail(e, attr, std::string("unknown ") + what + " '" + id + "'");
  }
  return it->second;
}

// A grid member: a plain reference, or an anonymous derived element.
GridDef::Member ContextParser::build_member(const Element& m, const std::string& grid,
                                            std::size_t pos) {
  using MemberKind = GridDef::Member::Kind;
  const std::string anon = m.has("id") ? m.get("id") : grid + "#" + std::to_string(pos);
  // As XIOS: a member naming only the id of a defined element is that
  // element (<axis id="ght_abl"/> in a grid is axis ght_abl).
  if (m.has("id") && m.attributes.size() == 1 && m.children.empty()) {
    if (m.name == "domain" && domain_ids_.count(anon) > 0) {
      return {MemberKind::kDomain, domain_of(*domain_ids_.at(anon))};
    }
    if (m.name == "axis" && axis_ids_.count(anon) > 0) {
      return {MemberKind::kAxis, axis_of(*axis_ids_.at(anon))};
    }
    if (m.name == "scalar" && scalar_ids_.count(anon) > 0) {
      return {MemberKind::kScalar, scalar_of(*scalar_ids_.at(anon))};
    }
  }
  if (m.has("id") &&
      (domain_ids_.count(anon) + axis_ids_.count(anon) + scalar_ids_.count(anon) +
       domain_index_.count(anon) + axis_index_.count(anon) + scalar_index_.count(anon)) > 0) {
    fail(m, "id", "duplicate id '" + anon + "'");
  }
  const bool plain = m.children.empty() && m.attributes.size() == 1;
  if (m.name == "domain") {
    if (plain && m.has("domain_ref")) {
      return {MemberKind::kDomain, member_index(domain_index_, m, "domain_ref", "domain")};
    }
    return {MemberKind::kDomain, build_domain(m, anon, true)};
  }
  if (m.name == "axis") {
    if (plain && m.has("axis_ref")) {
      return {MemberKind::kAxis, member_index(axis_index_, m, "axis_ref", "axis")};
    }
    return {MemberKind::kAxis, build_axis(m, anon, true)};
  }
  if (plain && m.has("scalar_ref")) {
    return {MemberKind::kScalar, member_index(scalar_index_, m, "scalar_ref", "scalar")};
  }
  return {MemberKind::kScalar, build_scalar(m, anon)};
}

void ContextParser::build_grid(const Element& g) {
  // domain_ref and axis_ref: xios_lite's short form of a grid (XIOS's grid
  // takes <domain> and <axis> children).
  config::check_attributes(g, {"domain_ref", "axis_ref"});
  config::check_children(g, {"domain", "axis", "scalar"});
  GridDef grid;
  grid.id = config::required(g, "id");
  grid.where = g.where();
  if (grid_index_.count(grid.id) > 0) {
    fail(g, "id", "duplicate id '" + grid.id + "'");
  }
  // As XIOS, which solves the references of the grids fields use only: a
  // grid naming an element nobody defines is left out with a warning (NEMO
  // ships such a grid), and is an error where a field uses it.
  for (const auto& m : g.children) {
    for (const auto& [ref, ids, built] : {std::tuple{"domain_ref", &domain_ids_, &domain_index_},
                                          std::tuple{"axis_ref", &axis_ids_, &axis_index_},
                                          std::tuple{"scalar_ref", &scalar_ids_, &scalar_index_}}) {
      if (m->has(ref) && ids->count(m->get(ref)) == 0 && built->count(m->get(ref)) == 0) {
        const std::string what = std::string(ref).substr(0, std::string(ref).size() - 4);
        const std::string message =
            m->where() + " attribute " + ref + ": unknown " + what + " '" + m->get(ref) + "'";
        broken_grids_[grid.id] = message;
        cfg_.warnings.push_back(message + ": grid '" + grid.id +
                                "' is left out (no field uses it)");
        return;
      }
    }
  }
  if (g.has("domain_ref")) {  // xios_lite's own short form
    grid.members.push_back(
        {GridDef::Member::Kind::kDomain, member_index(domain_index_, g, "domain_ref", "domain")});
  } else if (g.has("axis_ref")) {
    fail(g, "domain_ref", "missing (required)");
  }
  if (g.has("axis_ref")) {
    grid.members.push_back(
        {GridDef::Member::Kind::kAxis, member_index(axis_index_, g, "axis_ref", "axis")});
  }
  if (!grid.members.empty() && !g.children.empty()) {
    fail(g, "domain_ref", "a grid gives its members either as attributes or as children");
  }
  for (const auto& m : g.children) {
    grid.members.push_back(build_member(*m, grid.id, grid.members.size()));
  }
  if (grid.members.empty()) {
    fail(g, "", "a grid needs at least one member (<domain>, <axis> or <scalar>)");
  }
  set_first_members(grid);
  grid_index_[grid.id] = static_cast<int>(cfg_.grids.size());
  cfg_.grids.push_back(std::move(grid));
}

// The grids of an axis alone or a scalar alone that fields the model
// sends live on get a domain standing in for their member (see
// DomainDef::stand_in), so that their values travel and are written as a
// domain's; the axis is then no vertical axis of the grid.
void ContextParser::add_stand_in_domains() {
  for (const FieldDef& f : cfg_.fields) {
    if (f.grid < 0 || !f.expr.empty() || f.source_field >= 0) {
      continue;
    }
    GridDef& g = cfg_.grids[static_cast<std::size_t>(f.grid)];
    // An axis alone, or plain scalars only (XIOS's <scalar/><scalar/>: one value).
    const bool plain_scalars = std::all_of(g.members.begin(), g.members.end(), [&](const auto& m) {
      return m.kind == GridDef::Member::Kind::kScalar && plain_scalar(m.index);
    });
    if (g.domain >= 0 || g.members.empty() || (g.members.size() != 1 && !plain_scalars) ||
        g.members[0].kind == GridDef::Member::Kind::kDomain) {
      continue;
    }
    DomainDef d;
    d.id = "(" + g.id + ")";
    d.where = g.where;
    d.nj_glo = 1;
    if (g.members[0].kind == GridDef::Member::Kind::kAxis) {
      d.stand_in_for_axis = g.members[0].index;
      d.ni_glo = cfg_.axes[static_cast<std::size_t>(d.stand_in_for_axis)].n_glo;
    } else {
      d.stand_in_for_scalar = true;
      d.ni_glo = 1;
    }
    g.domain = static_cast<int>(cfg_.domains.size());
    g.axis = -1;
    domain_index_[d.id] = g.domain;
    cfg_.domains.push_back(std::move(d));
  }
}

bool ContextParser::plain_scalar(int index) const {
  const ScalarDef& s = cfg_.scalars[static_cast<std::size_t>(index)];
  return s.from_axis == Reduction::kNone && s.from_domain == Reduction::kNone &&
         s.extract_level < 0;
}

void ContextParser::set_first_members(GridDef& grid) {
  for (const auto& m : grid.members) {
    if (m.kind == GridDef::Member::Kind::kDomain && grid.domain < 0) grid.domain = m.index;
    if (m.kind == GridDef::Member::Kind::kAxis && grid.axis >= 0 && grid.axis2 < 0) {
      grid.axis2 = m.index;
    }
    if (m.kind == GridDef::Member::Kind::kAxis && grid.axis < 0) grid.axis = m.index;
  }
}

// The grid of a field from grid_ref, or domain_ref (+ axis_ref), whichever
// is nearer; -1 when none.
int ContextParser::grid_of(Kind kind, const Element& e) {
  const Found grid = lookup(kind, e, "grid_ref");
  const Found domain = lookup(kind, e, "domain_ref");
  if (grid && (!domain || grid.distance <= domain.distance)) {
    const auto it = grid_index_.find(*grid.value);
    if (const auto broken = broken_grids_.find(*grid.value);
        it == grid_index_.end() && broken != broken_grids_.end()) {
      fail(*grid.at, "grid_ref", "grid '" + *grid.value + "' is unusable: " + broken->second);
    }
    if (it == grid_index_.end()) {
      skip_if_failed("grid", *grid.value);
      fail(*grid.at, "grid_ref", "unknown grid '" + *grid.value + "'");
    }
    return it->second;
  }
  if (!domain) {
    return -1;
  }
  const auto d = domain_index_.find(*domain.value);
  if (d == domain_index_.end()) {
    skip_if_failed("domain", *domain.value);
    fail(*domain.at, "domain_ref", "unknown domain '" + *domain.value + "'");
  }
  GridDef g;
  g.members.push_back({GridDef::Member::Kind::kDomain, d->second});
  g.id = *domain.value;
  if (const Found axis = lookup(kind, e, "axis_ref")) {
    const auto a = axis_index_.find(*axis.value);
    if (a == axis_index_.end()) {
      skip_if_failed("axis", *axis.value);
      fail(*axis.at, "axis_ref", "unknown axis '" + *axis.value + "'");
    }
    g.members.push_back({GridDef::Member::Kind::kAxis, a->second});
    g.id += "/" + *axis.value;
  }
  g.id = "(" + g.id + ")";  // implicit grids cannot clash with named ones
  const auto same = grid_index_.find(g.id);
  if (same != grid_index_.end()) {
    return same->second;
  }
  g.where = domain.at->where();
  set_first_members(g);
  grid_index_[g.id] = static_cast<int>(cfg_.grids.size());
  cfg_.grids.push_back(std::move(g));
  return static_cast<int>(cfg_.grids.size()) - 1;
}

}  // namespace xios_lite::parser
