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
  config::check_children(e, {"reduce_axis", "reduce_domain"});
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
  const std::vector<const Element*> trans = transformation_children(e);
  if (!trans.empty()) {
    const Element& r = *trans.front();
    config::check_attributes(r);
    config::check_children(r, {});
    if (r.has("local") && config::boolean(r, "local")) {
      config::unsupported(r, "local", "client-local reductions (local=\"true\")");
    }
    const Reduction op = reduction_of(r, config::required(r, "operation"));
    if (r.name == "reduce_axis") {
      if (r.has("direction")) fail(r, "direction", "unknown attribute");
      s.from_axis = op;
    } else {
      if (r.has("direction")) {
        config::unsupported(r, "direction", "a domain reduced to a scalar along one direction");
      }
      s.from_domain = op;
    }
    s.where = r.where();
  } else if (src != nullptr) {
    const ScalarDef& base = cfg_.scalars.at(static_cast<std::size_t>(scalar_of(*src)));
    s.from_axis = base.from_axis;
    s.from_domain = base.from_domain;
  }
  if (s.name.empty()) s.name = id;
  scalar_index_[s.id] = static_cast<int>(cfg_.scalars.size());
  cfg_.scalars.push_back(std::move(s));
  return static_cast<int>(cfg_.scalars.size()) - 1;
}

int ContextParser::scalar_of(const Element& e) {
  const auto it = scalar_index_.find(e.get("id"));
  return it != scalar_index_.end() ? it->second : build_scalar(e, e.get("id"));
}

}  // namespace xios_lite::parser
