// Domains: their geometry (sizes, coordinates, bounds, area, mask), a
// domain_ref'd domain's zoom window, and the model's data layout.
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "context_parser.hpp"
#include "vocabulary.hpp"
#include "xios_lite/config.hpp"
#include "xml_tree.hpp"

namespace xios_lite::parser {
namespace {

// 0/1 or true/false values, one per point (`expected` of them, 0: any count).
std::vector<std::uint8_t> mask_values(const Element& e, std::string_view attr,
                                      std::size_t expected) {
  std::string text = config::required(e, attr);
  const auto open = text.find('[');
  if (!text.empty() && text[0] == '(' && open != std::string::npos) {
    text = text.substr(open + 1, text.rfind(']') - open - 1);
  }
  std::replace(text.begin(), text.end(), ',', ' ');
  std::istringstream in(text);
  std::vector<std::uint8_t> out;
  std::vector<std::string> words;
  std::string word;
  while (in >> word) {
    words.push_back(word);
  }
  if (expected > 0 && words.size() != expected) {
    fail(e, attr,
         "has " + std::to_string(words.size()) + " values, expected " + std::to_string(expected));
  }
  for (const std::string& word : words) {
    bool b = false;
    if (word == "1" || word == "0") {
      out.push_back(word == "1" ? 1 : 0);
    } else if (config::parse_boolean(word, b)) {
      out.push_back(b ? 1 : 0);
    } else {
      fail(e, attr, "value " + word + " out of range (0 masked, 1 valid)");
    }
  }
  return out;
}

}  // namespace

void ContextParser::check_domain_attributes(const Element& e) {
  // xios_lite's own (older) names for the rectilinear coordinates and mask.
  config::check_attributes(e, {"lon_start", "lon_end", "lat_start", "lat_end", "lon_values",
                               "lat_values", "mask", "bounds_lon", "bounds_lat"});
}

int ContextParser::build_domain(const Element& e, const std::string& id, bool member) {
  (void)member;
  check_domain_attributes(e);
  config::check_children(e, {"zoom_domain", "extract_domain"});
  DomainDef d;
  d.id = id;
  d.where = e.where();
  const Found name = lookup(Kind::kDomain, e, "name");
  d.name = name ? *name.value : "";
  if (const Found ln = lookup(Kind::kDomain, e, "long_name")) d.long_name = *ln.value;
  if (const Element* src = referenced(Kind::kDomain, e)) {
    d.source = domain_of(*src);
    for (const char* geometric : {"ni_glo", "nj_glo", "lonvalue_1d", "latvalue_1d", "lonvalue_2d",
                                  "latvalue_2d", "type", "area", "mask_1d", "mask_2d"}) {
      if (e.has(geometric)) {
        fail(e, geometric,
             "a domain with domain_ref takes its geometry from domain '" + src->get("id") + "'");
      }
    }
    const std::vector<const Element*> zooms = transformation_children(e);
    if (!zooms.empty()) {
      const Element& z = *zooms.front();
      config::check_attributes(z);
      config::check_children(z, {});
      for (const char* line : {"direction", "position"}) {
        if (z.has(line)) fail(z, line, "only an extract_domain inside an axis takes it");
      }
      // As XIOS: an attribute not given is the whole source along it
      // (ibegin 0, ni to the end); a named zoom (<zoom_domain id="EqT"/>)
      // may get them from the model (xios_set_zoom_domain_attr) before
      // close_definition. -1: to the end, resolved when the source is known.
      const auto value = [&](const char* a, const char* old, int absent) {
        const char* given = z.has(a) ? a : z.has(old) ? old : nullptr;
        return given == nullptr ? absent : static_cast<int>(config::integer(z, given, 0, 1 << 24));
      };
      Window w;
      w.ibegin = value("ibegin", "zoom_ibegin", 0);
      w.ni = value("ni", "zoom_ni", -1);
      w.jbegin = value("jbegin", "zoom_jbegin", 0);
      w.nj = value("nj", "zoom_nj", -1);
      if (w.ni == 0 || w.nj == 0) {
        fail(z, w.ni == 0 ? "ni" : "nj", "an empty window");
      }
      d.window = w;
      d.where = z.where();
    }
    return add_domain(std::move(d), e);
  }
  if (!transformation_children(e).empty()) {
    fail(*transformation_children(e).front(), "",
         "a zoom or extraction needs domain_ref on its domain (the domain it selects from)");
  }
  if (const Found t = lookup(Kind::kDomain, e, "type")) {
    if (*t.value == "curvilinear") {
      d.type = DomainType::kCurvilinear;
    } else if (*t.value != "rectilinear") {
      config::unsupported(*t.at, "type",
                          "'" + *t.value + "' domains (rectilinear and curvilinear are written)");
    }
  }
  if (const Found f = lookup(Kind::kDomain, e, "ni_glo")) {
    d.ni_glo = static_cast<int>(config::integer(*f.at, "ni_glo", 1, 1 << 24));
  }
  if (const Found f = lookup(Kind::kDomain, e, "nj_glo")) {
    d.nj_glo = static_cast<int>(config::integer(*f.at, "nj_glo", 1, 1 << 24));
  }
  const bool curvilinear = d.type == DomainType::kCurvilinear;
  // Coordinates: checked against the sizes when both are in the configuration.
  const auto coordinate = [&](std::initializer_list<const char*> names, std::size_t expected,
                              std::vector<double>& out) {
    for (const char* name : names) {
      if (const Found f = lookup(Kind::kDomain, e, name)) {
        out = config::reals(*f.at, name, expected);
        return;
      }
    }
  };
  const std::size_t ni = static_cast<std::size_t>(d.ni_glo);
  const std::size_t nj = static_cast<std::size_t>(d.nj_glo);
  if (curvilinear) {
    coordinate({"lonvalue_2d"}, ni * nj, d.lon);
    coordinate({"latvalue_2d"}, ni * nj, d.lat);
  } else {
    coordinate({"lonvalue_1d", "lon_values"}, ni, d.lon);
    coordinate({"latvalue_1d", "lat_values"}, nj, d.lat);
  }
  // Coordinates are written as given: XIOS checks no range (its own test
  // programs give latitudes of 1000 and more).
  const auto range = [&](const char* a, double& slot) {
    if (const Found f = lookup(Kind::kDomain, e, a)) slot = config::real(*f.at, a);
  };
  range("lon_start", d.lon_start);
  range("lon_end", d.lon_end);
  range("lat_start", d.lat_start);
  range("lat_end", d.lat_end);
  if (const Found f = lookup(Kind::kDomain, e, "nvertex")) {
    d.nvertex = static_cast<int>(config::integer(*f.at, "nvertex", 2, 64));
  }
  if (curvilinear) {
    coordinate({"bounds_lon_2d"}, 0, d.bounds_lon);
    coordinate({"bounds_lat_2d"}, 0, d.bounds_lat);
  } else {
    coordinate({"bounds_lon_1d", "bounds_lon"}, ni * 2, d.bounds_lon);
    coordinate({"bounds_lat_1d", "bounds_lat"}, nj * 2, d.bounds_lat);
  }
  coordinate({"area"}, ni * nj, d.area);
  for (const char* name : {"mask_2d", "mask_1d", "mask"}) {
    if (const Found f = lookup(Kind::kDomain, e, name)) {
      d.mask = mask_values(*f.at, name, ni * nj);
      break;
    }
  }
  read_data_layout(e, d);
  return add_domain(std::move(d), e);
}

// The model's array layout (XIOS's data_* attributes), the same for
// every client; whether it fits a client's block is checked at
// close_definition, where the blocks are known.
void ContextParser::read_data_layout(const Element& e, DomainDef& d) {
  constexpr long long kBig = 1LL << 30;
  if (const Found f = lookup(Kind::kDomain, e, "data_dim")) {
    d.data_dim = static_cast<int>(config::integer(*f.at, "data_dim", 1, 2));
  }
  const auto whole = [&](const char* name, long long lo, std::optional<int>& slot) {
    if (const Found f = lookup(Kind::kDomain, e, name)) {
      slot = static_cast<int>(config::integer(*f.at, name, lo, kBig));
    }
  };
  whole("data_ibegin", -kBig, d.data_ibegin);
  whole("data_ni", 0, d.data_ni);
  whole("data_jbegin", -kBig, d.data_jbegin);
  whole("data_nj", 0, d.data_nj);
  const auto indices = [&](const char* name, std::vector<int>& out) {
    if (const Found f = lookup(Kind::kDomain, e, name)) {
      for (const double x : config::reals(*f.at, name, 0)) {
        if (x != static_cast<double>(static_cast<int>(x))) {
          config::fail(*f.at, name, "index " + std::to_string(x) + " is not a whole number");
        }
        out.push_back(static_cast<int>(x));
      }
    }
  };
  indices("data_i_index", d.data_i_index);
  indices("data_j_index", d.data_j_index);
}

// The index of a definition's element, built first when it comes later
// in the file (a reference may point forward).
int ContextParser::domain_of(const Element& e) {
  const auto it = domain_index_.find(e.get("id"));
  return it != domain_index_.end() ? it->second : build_domain(e, e.get("id"), false);
}

int ContextParser::add_domain(DomainDef d, const Element& e) {
  (void)e;
  domain_index_[d.id] = static_cast<int>(cfg_.domains.size());
  cfg_.domains.push_back(std::move(d));
  return static_cast<int>(cfg_.domains.size()) - 1;
}

}  // namespace xios_lite::parser
