// Axes: their levels, an axis_ref'd axis's selection (zoom, extract) and
// an axis reduced from a domain (reduce_domain); the reductions' names.
#include <string>

#include "common/enum_names.hpp"
#include "context_parser.hpp"
#include "vocabulary.hpp"
#include "xios_lite/config.hpp"
#include "xml_tree.hpp"

namespace xios_lite::parser {
namespace {

// The texts of Reduction (to_string, and what reduction_of reads).
constexpr auto kReductionNames = common::enum_names<Reduction>({{Reduction::kNone, "none"},
                                                                {Reduction::kSum, "sum"},
                                                                {Reduction::kAverage, "average"},
                                                                {Reduction::kMin, "min"},
                                                                {Reduction::kMax, "max"}});

}  // namespace

Reduction reduction_of(const Element& e, const std::string& v) {
  const auto r = common::enum_from_name(kReductionNames, v);
  if (r && *r != Reduction::kNone) return *r;
  fail(e, "operation", "unknown reduction '" + v + "' (expected sum, average, min or max)");
}

void ContextParser::check_axis_attributes(const Element& e) {
  // units: xios_lite's older spelling of unit.
  config::check_attributes(e, {"units"});
}

int ContextParser::build_axis(const Element& e, const std::string& id, bool member) {
  (void)member;
  check_axis_attributes(e);
  config::check_children(e, {"zoom_axis", "extract_axis", "reduce_domain", "reduce_axis",
                             "duplicate_scalar", "extract_domain"});
  AxisDef a;
  a.id = id;
  a.where = e.where();
  const auto text = [&](const char* name, std::string& out) {
    if (const Found f = lookup(Kind::kAxis, e, name)) {
      out = *f.value;
    }
  };
  text("name", a.name);
  read_unit(lookup(Kind::kAxis, e, "unit"), lookup(Kind::kAxis, e, "units"), a.unit);
  text("long_name", a.long_name);
  text("standard_name", a.standard_name);
  text("positive", a.positive);
  if (!a.positive.empty() && a.positive != "up" && a.positive != "down") {
    fail(e, "positive", "value '" + a.positive + "' out of range (expected up or down)");
  }
  std::vector<const Element*> trans;
  for (const auto& c : e.children) trans.push_back(c.get());
  if (!trans.empty() && trans.front()->name == "reduce_domain") {
    read_axis_reduction(trans, a);
    if (a.name.empty()) a.name = id;
    return add_axis(std::move(a));
  }
  if (trans.size() > 1) {
    config::unsupported(*trans[1], "", "several transformations in one element (grid_path)");
  }
  if (trans.size() == 1 && trans.front()->name == "extract_domain") {
    // XIOS's extract_domain_to_axis: one line of the field's domain.
    const Element& x = *trans.front();
    config::check_attributes(x);
    config::check_children(x, {});
    for (const char* window : {"ibegin", "ni", "jbegin", "nj"}) {
      if (x.has(window)) {
        fail(x, window, "an extract_domain inside an axis takes direction and position");
      }
    }
    const std::string dir = config::required(x, "direction");
    if (dir != "iDir" && dir != "jDir") {
      fail(x, "direction", "value '" + dir + "' out of range (expected iDir or jDir)");
    }
    a.extract_position = static_cast<int>(config::integer(x, "position", 0, 1 << 24));
    a.from_domain = Reduction::kMax;  // of the line's one cell per point: the cell's value
    a.along_i = dir == "jDir";        // jDir: one value per row
    a.where = x.where();
    if (a.name.empty()) a.name = id;
    return add_axis(std::move(a));
  }
  if (!trans.empty() && trans.front()->name == "reduce_axis") {
    config::unsupported(*trans.front(), "",
                        "reductions of an axis onto an axis (reduce_axis inside an axis, other "
                        "than after reduce_domain)");
  }
  if (const Element* src = referenced(Kind::kAxis, e)) {
    a.source = axis_of(*src);
    for (const char* geometric : {"n_glo", "value", "bounds"}) {
      if (e.has(geometric)) {
        fail(e, geometric,
             "an axis with axis_ref takes its levels from axis '" + src->get("id") + "'");
      }
    }
    if (!trans.empty() && trans.front()->name == "duplicate_scalar") {
      // Every level of the referenced axis takes the field's scalar value.
      config::check_attributes(*trans.front());
      config::check_children(*trans.front(), {});
      a.from_scalar = true;
      a.where = trans.front()->where();
    } else if (!trans.empty()) {
      const Element& z = *trans.front();
      config::check_attributes(z);
      config::check_children(z, {});
      AxisDef::Selection sel;
      if (z.has("index")) {
        for (const double v : config::reals(z, "index", 0)) {
          sel.index.push_back(static_cast<int>(v));
        }
      } else {
        const char* b = z.has("begin") ? "begin" : "zoom_begin";
        sel.begin = z.has(b) ? static_cast<int>(config::integer(z, b, 0, 1 << 20)) : 0;
        if (z.has("n") || z.has("zoom_size")) {
          sel.n = static_cast<int>(config::integer(z, z.has("n") ? "n" : "zoom_size", 1, 1 << 20));
        } else if (z.has("zoom_end")) {
          sel.n =
              static_cast<int>(config::integer(z, "zoom_end", sel.begin, 1 << 20)) - sel.begin + 1;
        }
      }
      a.selection = sel;
      a.where = z.where();
    }
    return add_axis(std::move(a));
  }
  if (!trans.empty()) {
    fail(*trans.front(), "", "a zoom or extraction needs axis_ref on its axis");
  }
  if (a.name.empty()) a.name = id;
  if (const Found f = lookup(Kind::kAxis, e, "n_glo")) {
    a.n_glo = static_cast<int>(config::integer(*f.at, "n_glo", 1, 1 << 20));
  }
  if (const Found f = lookup(Kind::kAxis, e, "value")) {
    a.value = config::reals(*f.at, "value", static_cast<std::size_t>(a.n_glo));
  }
  if (const Found f = lookup(Kind::kAxis, e, "bounds")) {
    a.bounds = config::reals(*f.at, "bounds", 2 * static_cast<std::size_t>(a.n_glo));
  }
  return add_axis(std::move(a));
}

// An axis made by reduce_domain along iDir or jDir; local="true" reduces
// each client's part only, and a reduce_axis of the same sum, min or max
// after it combines the clients' parts: the whole domain's reduction.
void ContextParser::read_axis_reduction(const std::vector<const Element*>& chain, AxisDef& a) {
  for (const Element* t : chain) {
    config::check_attributes(*t);
    config::check_children(*t, {});
  }
  const Element& r = *chain.front();
  const bool then_across = chain.size() == 2 && chain[1]->name == "reduce_axis";
  if (chain.size() > 2 || (chain.size() == 2 && !then_across)) {
    config::unsupported(*chain[1], "",
                        "several transformations in one element (grid_path), other than "
                        "reduce_domain followed by reduce_axis");
  }
  a.from_domain = reduction_of(r, config::required(r, "operation"));
  const std::string dir = config::required(r, "direction");
  if (dir != "iDir" && dir != "jDir") {
    fail(r, "direction", "value '" + dir + "' out of range (expected iDir or jDir)");
  }
  a.along_i = dir == "iDir";
  a.where = r.where();
  const bool local = r.has("local") && config::boolean(r, "local");
  if (!then_across) {
    if (local) {
      config::unsupported(r, "local",
                          "a client-local reduction alone (local=\"true\" without a reduce_axis "
                          "after it: one line of values per client)");
    }
    return;
  }
  const Element& across = *chain[1];
  const Reduction then = reduction_of(across, config::required(across, "operation"));
  if (local && then != a.from_domain) {
    fail(across, "operation",
         std::string("'") + to_string(then) + "' after a client-local '" +
             to_string(a.from_domain) + "' (the same operation gives the whole domain's)");
  }
  if (local && a.from_domain == Reduction::kAverage) {
    config::unsupported(across, "operation",
                        "the average of the clients' averages (not the domain's average: use "
                        "reduce_domain operation=\"average\" without local)");
  }
}

int ContextParser::axis_of(const Element& e) {
  const auto it = axis_index_.find(e.get("id"));
  return it != axis_index_.end() ? it->second : build_axis(e, e.get("id"), false);
}

int ContextParser::add_axis(AxisDef a) {
  axis_index_[a.id] = static_cast<int>(cfg_.axes.size());
  cfg_.axes.push_back(std::move(a));
  return static_cast<int>(cfg_.axes.size()) - 1;
}

}  // namespace xios_lite::parser

namespace xios_lite {

const char* to_string(Reduction r) noexcept {
  return common::enum_name(parser::kReductionNames, r, "none");
}

}  // namespace xios_lite
