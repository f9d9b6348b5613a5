// The parser's driver: a <simulation>'s contexts, each read by
// ContextParser::run in the order that lets definitions refer to each other
// (domains, axes, scalars, grids, fields, files); the index of definitions
// and XIOS's inheritance that every kind's parsing looks attributes up
// with; the public entry points and Config's look-ups.
#include <cctype>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "common/enum_names.hpp"
#include "context_parser.hpp"
#include "ep/error.hpp"
#include "parse_tree.hpp"
#include "vocabulary.hpp"
#include "xios_lite/config.hpp"
#include "xml_tree.hpp"

namespace xios_lite::parser {
namespace {

// The groups and definitions an element of `kind` inherits from.
bool is_group_of(Kind kind, const std::string& name) {
  switch (kind) {
    case Kind::kDomain:
      return name == "domain_group" || name == "domain_definition";
    case Kind::kAxis:
      return name == "axis_group" || name == "axis_definition";
    case Kind::kScalar:
      return name == "scalar_group" || name == "scalar_definition";
    case Kind::kField:
      return name == "field_group" || name == "field_definition";
    case Kind::kFileField:
      return name == "field_group";  // inside the file, up to the file
    case Kind::kFile:
      return name == "file_group" || name == "file_definition";
  }
  return false;
}

// The attribute naming the element an element of `kind` references.
constexpr auto kRefAttributes = common::enum_names<Kind>({{Kind::kDomain, "domain_ref"},
                                                          {Kind::kAxis, "axis_ref"},
                                                          {Kind::kScalar, "scalar_ref"},
                                                          {Kind::kField, "field_ref"},
                                                          {Kind::kFileField, "field_ref"},
                                                          {Kind::kFile, ""}});

const char* ref_attribute(Kind kind) { return common::enum_name(kRefAttributes, kind, ""); }

// XIOS's value that leaves an attribute undefined on an element and stops
// its inheritance there (NEMO's freq_offset="_reset_" on a field whose
// groups set one).
constexpr std::string_view kReset = "_reset_";

// Attributes that belong to the element itself, never inherited.
bool inheritable(std::string_view attr) {
  return attr != "id" && attr != "field_ref" && attr != "expr" && attr != "group_ref" &&
         attr != "src";
}

}  // namespace

ContextParser::ContextParser(const Element& ctx, const Settings& settings, const std::string& path,
                             Errors& errors)
    : ctx_(ctx), errors_(errors) {
  cfg_.path = path;
  cfg_.buffers = settings.buffers;
  cfg_.finalise_timeout_s = settings.finalise_timeout_s;
  cfg_.progress_thread = settings.progress_thread;
  cfg_.report_json = settings.report_json;
}

// Each definition is parsed under a guard (parse_errors.hpp), in the order
// that lets later kinds refer to earlier ones.
Config ContextParser::run() {
  errors_.guard([&] { config::check_attributes(ctx_); });
  errors_.guard([&] {
    config::check_children(
        ctx_, {"calendar", "options", "domain_definition", "axis_definition", "scalar_definition",
               "grid_definition", "field_definition", "file_definition", "variable_definition"});
  });
  errors_.guard([&] { cfg_.context = config::required(ctx_, "id"); });
  errors_.guard([&] { read_calendar(); });
  for (const Element* opt : ctx_.children_named("options")) {
    errors_.guard([&] { read_options(*opt); });
  }
  // A model context's <variable>s are the model's own parameters (XIOS's
  // xios_getvar reads them); they write nothing. Each is checked as a
  // <variable> is (id, type, a value of that type).
  for (const Element* def : ctx_.children_named("variable_definition")) {
    errors_.guard([&] { check_model_variables(*def, cfg_.variables); });
  }
  index_definitions();
  find_fields_files_reach();
  for (const Element* e : domain_elements_) {
    guarded("domain", e->get("id"), [&] { (void)domain_of(*e); });
  }
  for (const Element* e : axis_elements_) {
    guarded("axis", e->get("id"), [&] { (void)axis_of(*e); });
  }
  for (const Element* e : scalar_elements_) {
    guarded("scalar", e->get("id"), [&] { (void)scalar_of(*e); });
  }
  walk("grid_definition", "grid_group", "grid",
       [&](const Element& g) { guarded("grid", g.get("id"), [&] { build_grid(g); }); });
  for (const Element* e : field_elements_) {
    guarded("field", e->get("id"), [&] { build_field(*e); });
  }
  cfg_.fields = std::move(field_slots_);
  errors_.guard([&] { add_stand_in_domains(); });
  walk("file_definition", "file_group", "file",
       [&](const Element& f) { errors_.guard([&] { build_file(f); }); });
  return std::move(cfg_);
}

const Element* ContextParser::referenced(Kind kind, const Element& e) const {
  const char* ref = ref_attribute(kind);
  const std::string* id = ref[0] != '\0' ? e.find(ref) : nullptr;
  if (id == nullptr) {
    return nullptr;
  }
  const std::map<std::string, const Element*>* ids = nullptr;
  switch (kind) {
    case Kind::kDomain:
      ids = &domain_ids_;
      break;
    case Kind::kAxis:
      ids = &axis_ids_;
      break;
    case Kind::kScalar:
      ids = &scalar_ids_;
      break;
    case Kind::kField:
    case Kind::kFileField:
      ids = &field_ids_;
      break;
    case Kind::kFile:
      return nullptr;
  }
  const auto it = ids->find(*id);
  const std::string what = std::string(ref).substr(0, std::string(ref).size() - 4);
  if (it == ids->end()) {
    fail(e, ref, "unknown " + what + " '" + *id + "'");
  }
  skip_if_failed(what, *id);
  return it->second;
}

void ContextParser::skip_if_failed(const std::string& what, const std::string& id) const {
  const auto kind = failed_.find(what);
  if (kind != failed_.end() && kind->second.count(id) > 0) {
    throw DependsOnFailed();
  }
}

// XIOS's inheritance: own, groups (nearest first), then the referenced element.
Found ContextParser::lookup(Kind kind, const Element& e, std::string_view attr, int depth) const {
  if (depth > 32) {
    fail(e, ref_attribute(kind), "references form a cycle");
  }
  if (const std::string* v = e.find(attr)) {
    if (*v == kReset) return {};  // XIOS's "_reset_": undefined here, nothing inherited
    return {v, &e, depth};
  }
  if (!inheritable(attr) ||
      (attr == ref_attribute(kind) && kind != Kind::kField && kind != Kind::kFileField)) {
    return {};
  }
  int d = depth;
  for (const Element* p = e.parent; p != nullptr && is_group_of(kind, p->name); p = p->parent) {
    ++d;
    if (const std::string* v = p->find(attr)) {
      if (*v == kReset) return {};
      return {v, p, d};
    }
  }
  if (const Element* target = referenced(kind, e)) {
    return lookup(kind == Kind::kFileField ? Kind::kField : kind, *target, attr, d + 1);
  }
  return {};
}

// XIOS solves the fields files read only. Those are found here from the
// elements, before any is built: the field_ref of each file's field, every
// field of a group a file names (group_ref), then what these read through
// field_ref and expressions. Every name in an expression counts (one that
// names no field adds nothing), so that a field a file reads is never
// taken for one it does not.
void ContextParser::find_fields_files_reach() {
  std::vector<std::string> todo;
  const std::function<void(const Element&)> group_fields = [&](const Element& g) {
    for (const auto& c : g.children) {
      if (c->name == "field" && c->has("id")) todo.push_back(c->get("id"));
      if (c->name == "field_group") group_fields(*c);
    }
  };
  const std::function<void(const Element&)> in_files = [&](const Element& e) {
    for (const auto& c : e.children) {
      if (c->name == "field" && c->has("field_ref")) todo.push_back(c->get("field_ref"));
      if (c->name == "field_group" && c->has("group_ref")) {
        const auto g = group_ids_.find(c->get("group_ref"));
        if (g != group_ids_.end()) group_fields(*g->second);
      }
      in_files(*c);
    }
  };
  for (const Element* def : ctx_.children_named("file_definition")) in_files(*def);
  while (!todo.empty()) {
    const std::string id = std::move(todo.back());
    todo.pop_back();
    const auto it = field_ids_.find(id);
    if (it == field_ids_.end() || !files_reach_.insert(id).second) continue;
    const Element& f = *it->second;
    if (f.has("field_ref")) todo.push_back(f.get("field_ref"));
    const std::string expr = f.has("expr") ? f.get("expr") : f.text;
    for (std::size_t at = 0; at < expr.size();) {
      const auto word = [&](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
      };
      if (!word(expr[at])) {
        ++at;
        continue;
      }
      const std::size_t from = at;
      while (at < expr.size() && word(expr[at])) ++at;
      todo.push_back(expr.substr(from, at - from));
    }
  }
}

void ContextParser::index(std::map<std::string, const Element*>& ids,
                          std::vector<const Element*>& order, const Element& e, bool id_required) {
  if (!e.has("id")) {
    if (id_required) {
      fail(e, "id", "missing (required)");
    }
    return;
  }
  const std::string id = config::required(e, "id");
  if (!ids.emplace(id, &e).second) {
    fail(e, "id", "duplicate id '" + id + "'");
  }
  order.push_back(&e);
}

void ContextParser::index_definitions() {
  walk("domain_definition", "domain_group", "domain", [&](const Element& e) {
    errors_.guard([&] { index(domain_ids_, domain_elements_, e, true); });
  });
  walk("axis_definition", "axis_group", "axis", [&](const Element& e) {
    errors_.guard([&] { index(axis_ids_, axis_elements_, e, true); });
  });
  walk("scalar_definition", "scalar_group", "scalar", [&](const Element& e) {
    errors_.guard([&] { index(scalar_ids_, scalar_elements_, e, true); });
  });
  walk("field_definition", "field_group", "field", [&](const Element& e) {
    errors_.guard([&] { index(field_ids_, field_elements_, e, true); });
  });
  for (const Element* e : field_elements_) {
    (void)field_position(*e);  // fields are numbered in document order
  }
  // Field groups may be named (group_ref) and share the fields' namespace.
  const std::function<void(const Element&)> groups_of = [&](const Element& e) {
    for (const auto& c : e.children) {
      if (c->name == "field_group") {
        errors_.guard([&] {
          if (c->has("id") && !group_ids_.emplace(c->get("id"), c.get()).second) {
            fail(*c, "id", "duplicate id '" + c->get("id") + "'");
          }
          if (c->has("id") && field_ids_.count(c->get("id")) > 0) {
            fail(*c, "id", "duplicate id '" + c->get("id") + "'");
          }
        });
        groups_of(*c);
      }
    }
  };
  for (const Element* def : ctx_.children_named("field_definition")) {
    groups_of(*def);
  }
  // Every container's own attributes and children are checked once.
  const auto check_tree = [&](const char* definition, const char* group, const char* element,
                              auto&& attrs) {
    const std::function<void(const Element&)> visit = [&](const Element& e) {
      errors_.guard([&] { config::check_children(e, {group, element}); });
      for (const auto& c : e.children) {
        if (c->name == group) {
          errors_.guard([&] { attrs(*c); });
          visit(*c);
        }
      }
    };
    for (const Element* def : ctx_.children_named(definition)) {
      errors_.guard([&] { attrs(*def); });
      visit(*def);
    }
  };
  check_tree("domain_definition", "domain_group", "domain",
             [](const Element& e) { check_domain_attributes(e); });
  check_tree("axis_definition", "axis_group", "axis",
             [](const Element& e) { check_axis_attributes(e); });
  check_tree("scalar_definition", "scalar_group", "scalar",
             [](const Element& e) { check_scalar_attributes(e); });
  check_tree("grid_definition", "grid_group", "grid",
             [](const Element& e) { config::check_attributes(e); });
  check_tree("field_definition", "field_group", "field",
             [](const Element& e) { check_field_attributes(e); });
  check_tree("file_definition", "file_group", "file",
             [](const Element& e) { check_file_attributes(e); });
}

std::vector<const Element*> ContextParser::transformation_children(const Element& e) {
  std::vector<const Element*> out;
  for (const auto& c : e.children) {
    out.push_back(c.get());
  }
  if (out.size() > 1) {
    config::unsupported(*out[1], "", "several transformations in one element (grid_path)");
  }
  return out;
}

}  // namespace xios_lite::parser

namespace xios_lite {
namespace {

using parser::ContextParser;
using parser::Element;
using parser::fail;
using parser::Settings;

Simulation parse_tree(const Element& root, const std::string& path) {
  if (root.name != "simulation" && root.name != "xios_lite") {
    fail(root, "", "root element must be <simulation> (XIOS) or <xios_lite>");
  }
  // Past the root, every context and definition is read under a guard
  // and the errors are thrown together (parse_errors.hpp).
  parser::Errors errors;
  errors.guard([&] { config::check_attributes(root, {}); });
  errors.guard([&] { config::check_children(root, {"context"}); });
  Settings settings;
  for (const Element* ctx : root.children_named("context")) {
    if (ctx->get("id") == "xios") {
      errors.guard([&] { parser::read_xios_context(*ctx, settings); });
    }
  }
  Simulation sim;
  sim.path = path;
  std::set<std::string> ids;
  for (const Element* ctx : root.children_named("context")) {
    if (ctx->get("id") == "xios") {
      continue;
    }
    if (!ids.insert(ctx->get("id")).second) {
      errors.guard([&] { fail(*ctx, "id", "duplicate id '" + ctx->get("id") + "'"); });
      continue;
    }
    const std::size_t failures = errors.failures();
    Config cfg = ContextParser(*ctx, settings, path, errors).run();
    if (errors.failures() > failures) {
      continue;  // completing a context with failed definitions would only add noise
    }
    errors.guard([&] {
      parser::separate_inputs(cfg);
      if (undefined_definitions(cfg).empty()) {
        complete_definitions(cfg);
      }
      sim.contexts.push_back(std::move(cfg));
    });
  }
  errors.throw_if_any();
  if (sim.contexts.empty()) {
    fail(root, "", "no <context> element (besides the context \"xios\")");
  }
  return sim;
}

Config pick(Simulation sim, const std::string& context) {
  if (context.empty()) {
    if (sim.contexts.size() > 1) {
      std::string ids;
      for (const Config& c : sim.contexts) {
        ids += (ids.empty() ? "" : ", ") + c.context;
      }
      throw ep::Error(ep::ErrorKind::kConfig, config::kCall, -1,
                      sim.path + ": several contexts (" + ids +
                          "): name the context (ClientOptions::context, run_server's contexts)");
    }
    return std::move(sim.contexts.front());
  }
  for (Config& c : sim.contexts) {
    if (c.context == context) {
      return std::move(c);
    }
  }
  throw ep::Error(ep::ErrorKind::kArgument, config::kCall, -1,
                  sim.path + ": no context '" + context + "'");
}
}  // namespace

int Config::find_field(const std::string& id) const {
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].id == id) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int Config::find_domain(const std::string& id) const {
  for (std::size_t i = 0; i < domains.size(); ++i) {
    if (domains[i].id == id) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int Config::find_axis(const std::string& id) const {
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].id == id) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int Config::levels(int grid) const {
  const GridDef& g = grids.at(static_cast<std::size_t>(grid));
  const int inner = g.axis < 0 ? 1 : axes.at(static_cast<std::size_t>(g.axis)).n_glo;
  return g.axis2 < 0 ? inner : inner * axes.at(static_cast<std::size_t>(g.axis2)).n_glo;
}

int Config::domain_of_field(int field) const {
  return grids.at(static_cast<std::size_t>(fields.at(static_cast<std::size_t>(field)).grid)).domain;
}

int Config::find_input(int field) const {
  int index = 0;
  for (const FileDef& f : inputs) {
    for (const OutputVariable& v : f.variables) {
      if (v.field == field) return index;
      ++index;
    }
  }
  return -1;
}

const FileDef& Config::input_file(int index) const {
  for (const FileDef& f : inputs) {
    if (index < static_cast<int>(f.variables.size())) return f;
    index -= static_cast<int>(f.variables.size());
  }
  throw ep::Error(ep::ErrorKind::kArgument, config::kCall, -1,
                  "no input variable " + std::to_string(index));
}

const OutputVariable& Config::input_variable(int index) const {
  const FileDef& f = input_file(index);
  for (const FileDef& g : inputs) {
    if (&g == &f) break;
    index -= static_cast<int>(g.variables.size());
  }
  return f.variables.at(static_cast<std::size_t>(index));
}

Simulation parse_simulation(const std::string& path) {
  const std::unique_ptr<config::Element> root = config::load_tree_file(path);
  return parse_tree(*root, path);
}

Config parse_config(const std::string& path, const std::string& context) {
  return pick(parse_simulation(path), context);
}

Config parse_config_tree(const config::Element& root, const std::string& path,
                         const std::string& context) {
  return pick(parse_tree(root, path), context);
}

Config parse_config_string(const std::string& xml, const std::string& name,
                           const std::string& context) {
  const std::unique_ptr<config::Element> root = config::load_tree(xml, name, ".");
  return pick(parse_tree(*root, name), context);
}

}  // namespace xios_lite
