// Scalars: their names, and a scalar reduced from an axis or a domain.
#include <string>
#include <vector>

#include "context_parser.hpp"
#include "vocabulary.hpp"
#include "xios_lite/config.hpp"
#include "xml_tree.hpp"

namespace xios_lite::parser {

void ContextParser::check_scalar_attributes(const Element& e) { config::check_attributes(e); }

int ContextParser::build_scalar(const Element& e, const std::string& id) {
  check_scalar_attributes(e);
  ScalarDef s;
  s.id = id;
  s.where = e.where();
  const auto text = [&](const char* n, std::string& out) {
    if (const Found f = lookup(Kind::kScalar, e, n)) out = *f.value;
  };
  text("name", s.name);
  text("long_name", s.long_name);
  text("standard_name", s.standard_name);
  text("unit", s.unit);
  const Element* src = referenced(Kind::kScalar, e);
  if (!e.children.empty()) {
    read_scalar_transformations(e, s);
  } else if (src != nullptr) {
    const ScalarDef& base = cfg_.scalars.at(static_cast<std::size_t>(scalar_of(*src)));
    s.from_axis = base.from_axis;
    s.from_domain = base.from_domain;
    s.extract_level = base.extract_level;
    s.client_local = base.client_local;
  }
  if (s.name.empty()) s.name = id;
  scalar_index_[s.id] = static_cast<int>(cfg_.scalars.size());
  cfg_.scalars.push_back(std::move(s));
  return static_cast<int>(cfg_.scalars.size()) - 1;
}

// What a scalar's transformations make of the field's grid. One of:
//   reduce_axis                  the levels of each point reduced
//   reduce_domain                the domain reduced to one value (local="true": per client)
//   reduce_domain local="true" + reduce_scalar   the clients' values reduced in turn:
//                                the whole domain's reduction when both are the same
//                                sum, min or max (an average of the clients' averages is not
//                                the domain's average, and is refused)
//   extract_axis position=p      level p of the field's axis (extract_axis_to_scalar)
void ContextParser::read_scalar_transformations(const Element& e, ScalarDef& s) {
  config::check_children(e, {"reduce_axis", "reduce_domain", "reduce_scalar", "extract_axis"});
  std::vector<const Element*> chain;
  for (const auto& c : e.children) chain.push_back(c.get());
  for (const Element* t : chain) {
    config::check_attributes(*t);
    config::check_children(*t, {});
  }
  const Element& r = *chain.front();
  s.where = r.where();
  const bool second_reduces_scalar = chain.size() == 2 && chain[1]->name == "reduce_scalar";
  if (chain.size() > 2 ||
      (chain.size() == 2 && (r.name != "reduce_domain" || !second_reduces_scalar))) {
    config::unsupported(*chain[1], "",
                        "several transformations in one element (grid_path), other than "
                        "reduce_domain followed by reduce_scalar");
  }
  if (r.name == "extract_axis") {
    for (const char* other : {"begin", "n", "index"}) {
      if (r.has(other)) fail(r, other, "an extract_axis inside a scalar takes position only");
    }
    s.extract_level = static_cast<int>(config::integer(r, "position", 0, 1 << 20));
    return;
  }
  if (r.has("position")) fail(r, "position", "only an extract_axis inside a scalar takes it");
  const Reduction op = reduction_of(r, config::required(r, "operation"));
  if (r.name == "reduce_scalar") {
    config::unsupported(r, "",
                        "reduce_scalar of a field's scalar (its values on several clients); "
                        "reduce_scalar after reduce_domain local=\"true\" is supported");
  }
  if (r.name == "reduce_axis") {
    // The levels of a point are on one client: local="true" changes nothing.
    if (r.has("direction")) fail(r, "direction", "unknown attribute");
    s.from_axis = op;
    return;
  }
  if (r.has("direction")) {
    config::unsupported(r, "direction", "a domain reduced to a scalar along one direction");
  }
  s.from_domain = op;
  const bool local = r.has("local") && config::boolean(r, "local");
  if (!second_reduces_scalar) {
    s.client_local = local;
    return;
  }
  const Element& across = *chain[1];
  if (across.has("direction")) fail(across, "direction", "unknown attribute");
  const Reduction then = reduction_of(across, config::required(across, "operation"));
  if (!local) {
    return;  // the domain's reduction is one value already: reducing it again keeps it
  }
  if (then != op) {
    fail(across, "operation",
         std::string("'") + to_string(then) + "' after a client-local '" + to_string(op) +
             "' (the same operation gives the whole domain's " + to_string(op) + ")");
  }
  if (op == Reduction::kAverage) {
    config::unsupported(across, "operation",
                        "the average of the clients' averages (not the domain's average: use "
                        "reduce_domain operation=\"average\" without local)");
  }
}

int ContextParser::scalar_of(const Element& e) {
  const auto it = scalar_index_.find(e.get("id"));
  return it != scalar_index_.end() ? it->second : build_scalar(e, e.get("id"));
}

}  // namespace xios_lite::parser
