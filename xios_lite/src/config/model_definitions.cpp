#include "model_definitions.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <variant>

#include "ep/error.hpp"
#include "transport/wire_codec.hpp"
#include "xml_tree.hpp"

namespace xios_lite::config {
namespace {

// ---- the wire form ----

// Sections: a u8 kind (domain and axis then their index), then each set
// member as a u8 tag -- its index in model_members<A>() -- and its value,
// then kEnd.
enum Section : std::uint8_t { kDomain = 1, kAxis, kCalendar };
constexpr std::uint8_t kEnd = 0xff;
static_assert(kDomainMembers.size() < kEnd && kAxisMembers.size() < kEnd &&
              kCalendarMembers.size() < kEnd);

template <class T>
bool is_set(const std::optional<T>& v) {
  return v.has_value();
}
template <class T>
bool is_set(const std::vector<T>& v) {
  return !v.empty();
}

template <class A>
void put_members(transport::WireWriter& w, const A& a) {
  const auto& members = model_members<A>();
  for (std::size_t i = 0; i < members.size(); ++i) {
    // mask_1d and mask_2d share one member: it travels once.
    const bool repeated = std::any_of(members.begin(), members.begin() + static_cast<long>(i),
                                      [&](const auto& m) { return m.member == members[i].member; });
    if (repeated) continue;
    std::visit(
        [&](auto member) {
          const auto& v = a.*member;
          if (!is_set(v)) return;
          w.put(static_cast<std::uint8_t>(i));
          if constexpr (requires { v.value(); }) {
            w.put(*v);
          } else {
            w.put(v);
          }
        },
        members[i].member);
  }
  w.put(kEnd);
}

template <class A>
void get_members(transport::WireReader& r, A& a) {
  const auto& members = model_members<A>();
  for (;;) {
    const auto tag = r.get<std::uint8_t>();
    if (tag == kEnd) return;
    if (tag >= members.size()) r.malformed("member tag " + std::to_string(tag));
    std::visit(
        [&](auto member) {
          auto& v = a.*member;
          if constexpr (requires { v.value(); }) {
            typename std::remove_reference_t<decltype(v)>::value_type x{};
            r.get(x);
            v = std::move(x);
          } else {
            r.get(v);
          }
        },
        members[tag].member);
  }
}

std::vector<double> as_doubles(const std::vector<int>& v) { return {v.begin(), v.end()}; }

std::string client_list(const std::vector<int>& clients) {
  std::string out;
  for (const int c : clients) out += (out.empty() ? "" : ", ") + std::to_string(c);
  return out;
}

// ---- assembly ----

[[noreturn]] void fail_model(const std::string& where, const std::string& what) {
  throw ep::Error(ep::ErrorKind::kConfig, kCall, -1, where + ": " + what);
}

// A value every client that sets it must set alike; `current` keeps the
// configuration's value when no client sets it.
template <class T, class Get>
void agree(const std::vector<ModelDefinitions>& clients, const std::string& where, const char* name,
           Get&& get, T& current, bool& set) {
  int first = -1;
  for (std::size_t r = 0; r < clients.size(); ++r) {
    const std::optional<T> v = get(clients[r]);
    if (!v) continue;
    if (first < 0) {
      first = static_cast<int>(r);
      current = *v;
      set = true;
    } else if (!(*v == current)) {
      fail_model(where, std::string(name) + " differs between clients " + std::to_string(first) +
                            " and " + std::to_string(r) +
                            " (each client that sets it sets the "
                            "same value)");
    }
  }
}

// agree() on one attribute: member `member` of the attributes `attributes_of`
// finds in a client's definitions (nullptr: that client sets none of them).
// True when some client sets it.
template <class T, class Attributes, class Find>
bool agree_on(const std::vector<ModelDefinitions>& clients, const std::string& where,
              const char* name, const Find& attributes_of, std::optional<T> Attributes::*member,
              T& current) {
  bool set = false;
  agree(
      clients, where, name,
      [&](const ModelDefinitions& m) -> std::optional<T> {
        const Attributes* a = attributes_of(m);
        return a != nullptr ? a->*member : std::nullopt;
      },
      current, set);
  return set;
}

// Places each client's piece of a local array into the global one: `extent`
// gives the piece's position (first index, count) per client, `per` values
// per index. Pieces that overlap must match; every index must be given when
// any is. `name` names the array.
void assemble(const std::vector<ModelDefinitions>& clients, int domain, const std::string& where,
              const char* name, const std::vector<double> DomainAttributes::*member,
              const std::vector<std::vector<Window>>& blocks, bool along_i, std::size_t per,
              std::size_t global_n, std::vector<double>& out) {
  std::vector<double> values(global_n * per, 0.0);
  std::vector<int> by(global_n, -1);
  bool any = false;
  for (std::size_t r = 0; r < clients.size(); ++r) {
    const auto it = clients[r].domains.find(domain);
    if (it == clients[r].domains.end()) continue;
    const std::vector<double>& piece = it->second.*member;
    if (piece.empty()) continue;
    any = true;
    const Window& b = blocks[r][static_cast<std::size_t>(domain)];
    const int first = along_i ? b.ibegin : b.jbegin;
    const int n = along_i ? b.ni : b.nj;
    if (piece.size() != static_cast<std::size_t>(n) * per) {
      fail_model(where, std::string(name) + " of client " + std::to_string(r) + " has " +
                            std::to_string(piece.size()) + " values, expected " +
                            std::to_string(static_cast<std::size_t>(n) * per) + " (" +
                            (per > 1 ? std::to_string(per) + " x " : "") +
                            (along_i ? "ni " : "nj ") + std::to_string(n) + " of its block)");
    }
    for (int x = 0; x < n; ++x) {
      const auto g = static_cast<std::size_t>(first) + static_cast<std::size_t>(x);
      const double* src = piece.data() + static_cast<std::size_t>(x) * per;
      if (by[g] >= 0) {
        if (std::memcmp(values.data() + g * per, src, per * sizeof(double)) != 0) {
          fail_model(where, std::string(name) + " differs between clients " +
                                std::to_string(by[g]) + " and " + std::to_string(r) + " at " +
                                (along_i ? "i " : "j ") + std::to_string(g));
        }
        continue;
      }
      std::memcpy(values.data() + g * per, src, per * sizeof(double));
      by[g] = static_cast<int>(r);
    }
  }
  if (!any) return;
  std::size_t given = 0;
  for (const int c : by) given += c >= 0 ? 1 : 0;
  if (given != global_n) {
    fail_model(where, std::string(name) + " given for " + std::to_string(given) + " of " +
                          std::to_string(global_n) + (along_i ? " columns" : " rows") +
                          " (the clients holding the others did not set it)");
  }
  out = std::move(values);
}

// The same for arrays over the points of a block (ni x nj, `per` values each).
void assemble_2d(const std::vector<ModelDefinitions>& clients, int domain, const std::string& where,
                 const char* name, const std::vector<double> DomainAttributes::*member,
                 const std::vector<std::vector<Window>>& blocks, std::size_t per, int ni_glo,
                 int nj_glo, std::vector<double>& out) {
  const std::size_t points = static_cast<std::size_t>(ni_glo) * static_cast<std::size_t>(nj_glo);
  std::vector<double> values(points * per, 0.0);
  std::vector<int> missing;
  bool any = false;
  std::size_t given = 0;
  for (std::size_t r = 0; r < clients.size(); ++r) {
    const Window& b = blocks[r][static_cast<std::size_t>(domain)];
    const std::size_t n = static_cast<std::size_t>(b.ni) * static_cast<std::size_t>(b.nj);
    const auto it = clients[r].domains.find(domain);
    const std::vector<double>* piece =
        it != clients[r].domains.end() ? &(it->second.*member) : nullptr;
    if (piece == nullptr || piece->empty()) {
      if (n > 0) missing.push_back(static_cast<int>(r));
      continue;
    }
    any = true;
    if (piece->size() != n * per) {
      fail_model(where, std::string(name) + " of client " + std::to_string(r) + " has " +
                            std::to_string(piece->size()) + " values, expected " +
                            std::to_string(n * per) + " (" +
                            (per > 1 ? std::to_string(per) + " x " : "") + "ni " +
                            std::to_string(b.ni) + " x nj " + std::to_string(b.nj) +
                            " of its block)");
    }
    for (int j = 0; j < b.nj; ++j) {
      const std::size_t row =
          static_cast<std::size_t>(b.jbegin + j) * static_cast<std::size_t>(ni_glo) +
          static_cast<std::size_t>(b.ibegin);
      std::memcpy(
          values.data() + row * per,
          piece->data() + static_cast<std::size_t>(j) * static_cast<std::size_t>(b.ni) * per,
          static_cast<std::size_t>(b.ni) * per * sizeof(double));
    }
    given += n;
  }
  if (!any) return;
  if (!missing.empty() || given != points) {
    fail_model(where, std::string(name) + " is set by some clients but not by clients [" +
                          client_list(missing) + "] (every client sets its block's values)");
  }
  out = std::move(values);
}

// What each client set for definition `idx` of one kind (`of`:
// ModelDefinitions::domains or ::axes): called with a client's definitions,
// its attributes or null. `any` says whether some client set some.
template <class Attributes>
struct SetByClients {
  const std::vector<ModelDefinitions>& clients;
  std::map<int, Attributes> ModelDefinitions::*of;
  int idx;
  const Attributes* operator()(const ModelDefinitions& m) const {
    const auto it = (m.*of).find(idx);
    return it != (m.*of).end() ? &it->second : nullptr;
  }
  [[nodiscard]] bool any() const {
    return std::any_of(clients.begin(), clients.end(),
                       [this](const ModelDefinitions& m) { return (*this)(m) != nullptr; });
  }
};

void apply(Config& cfg, const std::vector<ModelDefinitions>& clients,
           const std::vector<std::vector<Window>>& blocks) {
  // The calendar.
  CalendarSpec& spec = cfg.calendar_spec;
  const std::string cal_where = spec.where + " (calendar set by the model)";
  const auto calendar = [](const ModelDefinitions& m) {
    return m.calendar ? &*m.calendar : nullptr;
  };
  std::string text;
  if (agree_on(clients, cal_where, "type", calendar, &CalendarAttributes::type, text)) {
    CalendarType t{};
    if (!parse_calendar_type(text, t)) {
      fail_model(cal_where, "unknown calendar type '" + text + "'");
    }
    spec.type = t;
  }
  agree_on(clients, cal_where, "start_date", calendar, &CalendarAttributes::start_date,
           spec.start_date);
  agree_on(clients, cal_where, "time_origin", calendar, &CalendarAttributes::time_origin,
           spec.time_origin);
  if (agree_on(clients, cal_where, "timestep", calendar, &CalendarAttributes::timestep, text)) {
    Frequency f;
    if (!parse_frequency(text, f)) {
      fail_model(cal_where, "bad timestep '" + text + "' (a duration such as 1800s or 1h)");
    }
    spec.timestep = f;
  }
  int day = 0;
  if (agree_on(clients, cal_where, "day_length", calendar, &CalendarAttributes::day_length, day)) {
    spec.day_length = day;
  }
  bool set = false;
  std::vector<double> months;
  agree(
      clients, cal_where, "month_lengths",
      [](const ModelDefinitions& m) {
        return m.calendar && !m.calendar->month_lengths.empty()
                   ? std::optional(as_doubles(m.calendar->month_lengths))
                   : std::nullopt;
      },
      months, set);
  if (set) spec.month_lengths.assign(months.begin(), months.end());

  // Domains.
  for (std::size_t di = 0; di < cfg.domains.size(); ++di) {
    DomainDef& d = cfg.domains[di];
    const int idx = static_cast<int>(di);
    const SetByClients<DomainAttributes> attr{clients, &ModelDefinitions::domains, idx};
    if (!attr.any()) continue;
    const std::string where = d.where + " (domain '" + d.id + "' set by the model)";
    if (d.source >= 0) {
      fail_model(where, "the domain takes its geometry from domain '" +
                            cfg.domains[static_cast<std::size_t>(d.source)].id + "': set that one");
    }
    agree_on(clients, where, "ni_glo", attr, &DomainAttributes::ni_glo, d.ni_glo);
    agree_on(clients, where, "nj_glo", attr, &DomainAttributes::nj_glo, d.nj_glo);
    std::string type;
    if (agree_on(clients, where, "type", attr, &DomainAttributes::type, type)) {
      if (type != "rectilinear" && type != "curvilinear") {
        fail_model(where, "type '" + type + "' (rectilinear and curvilinear are written)");
      }
      d.type = type == "curvilinear" ? DomainType::kCurvilinear : DomainType::kRectilinear;
    }
    agree_on(clients, where, "nvertex", attr, &DomainAttributes::nvertex, d.nvertex);
    if (d.ni_glo <= 0 || d.nj_glo <= 0) {
      fail_model(where, "ni_glo and nj_glo are needed (configuration or set_domain_attr)");
    }
    for (std::size_t r = 0; r < blocks.size(); ++r) {
      const Window& b = blocks[r][di];
      if (b.ibegin < 0 || b.jbegin < 0 || b.ni < 0 || b.nj < 0 || b.ibegin + b.ni > d.ni_glo ||
          b.jbegin + b.nj > d.nj_glo) {
        fail_model(where, "the block of client " + std::to_string(r) + " (ibegin " +
                              std::to_string(b.ibegin) + ", ni " + std::to_string(b.ni) +
                              ", jbegin " + std::to_string(b.jbegin) + ", nj " +
                              std::to_string(b.nj) + ") lies outside " + std::to_string(d.ni_glo) +
                              " x " + std::to_string(d.nj_glo));
      }
    }
    const bool curvilinear = d.type == DomainType::kCurvilinear;
    for (const ModelDefinitions& m : clients) {
      const DomainAttributes* a = attr(m);
      if (a == nullptr) continue;
      const bool two_d = !a->lonvalue_2d.empty() || !a->latvalue_2d.empty() ||
                         !a->bounds_lon_2d.empty() || !a->bounds_lat_2d.empty();
      const bool one_d = !a->lonvalue_1d.empty() || !a->latvalue_1d.empty() ||
                         !a->bounds_lon_1d.empty() || !a->bounds_lat_1d.empty();
      if (curvilinear && one_d && two_d) {
        fail_model(where,
                   "a curvilinear domain takes its coordinates either as lonvalue_2d, latvalue_2d "
                   "and bounds_*_2d or as lonvalue_1d, latvalue_1d and bounds_*_1d, not both");
      }
      if (!curvilinear && two_d) {
        fail_model(where, "a rectilinear domain takes lonvalue_1d, latvalue_1d and bounds_*_1d");
      }
    }
    const auto ni = static_cast<std::size_t>(d.ni_glo);
    const auto nj = static_cast<std::size_t>(d.nj_glo);
    if (curvilinear) {
      // As XIOS: a curvilinear domain's lonvalue_1d (NEMO's) holds the
      // block's ni x nj points, i fastest, as lonvalue_2d does; its
      // bounds_lon_1d nvertex x (ni x nj), as bounds_lon_2d.
      const bool flat = std::any_of(clients.begin(), clients.end(), [&](const auto& m) {
        const DomainAttributes* a = attr(m);
        return a != nullptr && (!a->lonvalue_1d.empty() || !a->latvalue_1d.empty() ||
                                !a->bounds_lon_1d.empty() || !a->bounds_lat_1d.empty());
      });
      using Member = std::vector<double> DomainAttributes::*;
      const auto pick = [flat](Member two_d, Member one_d, const char* two_name,
                               const char* one_name) {
        return flat ? std::pair{one_d, one_name} : std::pair{two_d, two_name};
      };
      const auto [lon, lon_name] =
          pick(&DomainAttributes::lonvalue_2d, &DomainAttributes::lonvalue_1d, "lonvalue_2d",
               "lonvalue_1d");
      const auto [lat, lat_name] =
          pick(&DomainAttributes::latvalue_2d, &DomainAttributes::latvalue_1d, "latvalue_2d",
               "latvalue_1d");
      const auto [blon, blon_name] =
          pick(&DomainAttributes::bounds_lon_2d, &DomainAttributes::bounds_lon_1d, "bounds_lon_2d",
               "bounds_lon_1d");
      const auto [blat, blat_name] =
          pick(&DomainAttributes::bounds_lat_2d, &DomainAttributes::bounds_lat_1d, "bounds_lat_2d",
               "bounds_lat_1d");
      assemble_2d(clients, idx, where, lon_name, lon, blocks, 1, d.ni_glo, d.nj_glo, d.lon);
      assemble_2d(clients, idx, where, lat_name, lat, blocks, 1, d.ni_glo, d.nj_glo, d.lat);
      const auto nv = static_cast<std::size_t>(std::max(d.nvertex, 1));
      assemble_2d(clients, idx, where, blon_name, blon, blocks, nv, d.ni_glo, d.nj_glo,
                  d.bounds_lon);
      assemble_2d(clients, idx, where, blat_name, blat, blocks, nv, d.ni_glo, d.nj_glo,
                  d.bounds_lat);
    } else {
      assemble(clients, idx, where, "lonvalue_1d", &DomainAttributes::lonvalue_1d, blocks, true, 1,
               ni, d.lon);
      assemble(clients, idx, where, "latvalue_1d", &DomainAttributes::latvalue_1d, blocks, false, 1,
               nj, d.lat);
      assemble(clients, idx, where, "bounds_lon_1d", &DomainAttributes::bounds_lon_1d, blocks, true,
               2, ni, d.bounds_lon);
      assemble(clients, idx, where, "bounds_lat_1d", &DomainAttributes::bounds_lat_1d, blocks,
               false, 2, nj, d.bounds_lat);
    }
    assemble_2d(clients, idx, where, "area", &DomainAttributes::area, blocks, 1, d.ni_glo, d.nj_glo,
                d.area);
  }

  // Axes.
  for (std::size_t ai = 0; ai < cfg.axes.size(); ++ai) {
    AxisDef& a = cfg.axes[ai];
    const SetByClients<AxisAttributes> get{clients, &ModelDefinitions::axes, static_cast<int>(ai)};
    if (!get.any()) continue;
    const std::string where = a.where + " (axis '" + a.id + "' set by the model)";
    if (a.source >= 0 || a.from_domain != Reduction::kNone) {
      fail_model(where, "the axis is derived from another one: set that one");
    }
    agree_on(clients, where, "n_glo", get, &AxisAttributes::n_glo, a.n_glo);
    const auto list = [&](const char* name, std::vector<double> AxisAttributes::*member,
                          std::vector<double>& out) {
      bool any = false;
      agree(
          clients, where, name,
          [&](const ModelDefinitions& m) {
            const auto* x = get(m);
            return x != nullptr && !(x->*member).empty() ? std::optional(x->*member) : std::nullopt;
          },
          out, any);
    };
    list("value", &AxisAttributes::value, a.value);
    list("bounds", &AxisAttributes::bounds, a.bounds);
    agree_on(clients, where, "name", get, &AxisAttributes::name, a.name);
    agree_on(clients, where, "unit", get, &AxisAttributes::unit, a.unit);
    agree_on(clients, where, "positive", get, &AxisAttributes::positive, a.positive);
    agree_on(clients, where, "long_name", get, &AxisAttributes::long_name, a.long_name);
    agree_on(clients, where, "standard_name", get, &AxisAttributes::standard_name, a.standard_name);
    if (!a.positive.empty() && a.positive != "up" && a.positive != "down") {
      fail_model(where, "positive '" + a.positive + "' (expected up or down)");
    }
  }
}

}  // namespace

std::vector<std::byte> pack(const ModelDefinitions& d) {
  transport::WireWriter w;
  for (const auto& [index, a] : d.domains) {
    w.put(static_cast<std::uint8_t>(kDomain));
    w.put(index);
    put_members(w, a);
  }
  for (const auto& [index, a] : d.axes) {
    w.put(static_cast<std::uint8_t>(kAxis));
    w.put(index);
    put_members(w, a);
  }
  if (d.calendar) {
    w.put(static_cast<std::uint8_t>(kCalendar));
    put_members(w, *d.calendar);
  }
  return w.take();
}

ModelDefinitions unpack(std::span<const std::byte> bytes, const char* call, int rank) {
  transport::WireReader r(bytes, call, rank);
  ModelDefinitions out;
  while (!r.done()) {
    const auto section = r.get<std::uint8_t>();
    switch (section) {
      case kDomain:
      case kAxis: {
        const int index = r.get<int>();
        if (index < 0) r.malformed("a negative index " + std::to_string(index));
        if (section == kDomain) {
          get_members(r, out.domains[index]);
        } else {
          get_members(r, out.axes[index]);
        }
        break;
      }
      case kCalendar:
        get_members(r, out.calendar.emplace());
        break;
      default:
        r.malformed("section kind " + std::to_string(section));
    }
  }
  return out;
}

void apply_model_definitions(Config& cfg, const std::vector<ModelDefinitions>& clients,
                             const std::vector<std::vector<Window>>& blocks) {
  const bool nothing = std::all_of(clients.begin(), clients.end(),
                                   [](const ModelDefinitions& m) { return m.empty(); });
  if (nothing && cfg.complete) {
    return;
  }
  apply(cfg, clients, blocks);
  complete_definitions(cfg);
}

ModelDefinitions global_definitions(const Config& cfg) {
  ModelDefinitions g;
  for (std::size_t di = 0; di < cfg.domains.size(); ++di) {
    const DomainDef& d = cfg.domains[di];
    if (d.source >= 0) continue;
    DomainAttributes a;
    a.ni_glo = d.ni_glo;
    a.nj_glo = d.nj_glo;
    a.type = d.type == DomainType::kCurvilinear ? "curvilinear" : "rectilinear";
    if (d.nvertex > 0) a.nvertex = d.nvertex;
    // The coordinates as the model gives them: 2-D for a curvilinear
    // domain, 1-D (per column, per row) for a rectilinear one.
    using Coordinates = std::vector<double> DomainAttributes::*;
    const bool two_d = d.type == DomainType::kCurvilinear;
    const auto pick = [two_d](Coordinates one_d, Coordinates two) { return two_d ? two : one_d; };
    a.*pick(&DomainAttributes::lonvalue_1d, &DomainAttributes::lonvalue_2d) = d.lon;
    a.*pick(&DomainAttributes::latvalue_1d, &DomainAttributes::latvalue_2d) = d.lat;
    a.*pick(&DomainAttributes::bounds_lon_1d, &DomainAttributes::bounds_lon_2d) = d.bounds_lon;
    a.*pick(&DomainAttributes::bounds_lat_1d, &DomainAttributes::bounds_lat_2d) = d.bounds_lat;
    a.area = d.area;
    g.domains[static_cast<int>(di)] = std::move(a);
  }
  for (std::size_t ai = 0; ai < cfg.axes.size(); ++ai) {
    const AxisDef& x = cfg.axes[ai];
    if (x.source >= 0 || x.from_domain != Reduction::kNone) continue;
    AxisAttributes a;
    a.n_glo = x.n_glo;
    a.value = x.value;
    a.bounds = x.bounds;
    a.name = x.name;
    a.unit = x.unit;
    a.positive = x.positive;
    a.long_name = x.long_name;
    a.standard_name = x.standard_name;
    g.axes[static_cast<int>(ai)] = std::move(a);
  }
  const CalendarSpec& spec = cfg.calendar_spec;
  CalendarAttributes c;
  c.type = std::string(to_string(*spec.type));
  c.start_date = spec.start_date;
  if (!spec.time_origin.empty()) c.time_origin = spec.time_origin;
  c.timestep = to_string(*spec.timestep);
  if (spec.day_length) c.day_length = *spec.day_length;
  c.month_lengths = spec.month_lengths;
  g.calendar = std::move(c);
  return g;
}

void apply_global_definitions(Config& cfg, const ModelDefinitions& global) {
  std::vector<Window> whole;
  for (std::size_t di = 0; di < cfg.domains.size(); ++di) {
    const auto it = global.domains.find(static_cast<int>(di));
    whole.push_back(it != global.domains.end()
                        ? Window{0, it->second.ni_glo.value_or(0), 0, it->second.nj_glo.value_or(0)}
                        : Window{});
  }
  apply_model_definitions(cfg, {global}, {whole});
}

}  // namespace xios_lite::config
