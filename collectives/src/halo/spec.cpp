// Checks of a halo specification and of the fields of an exchange, and the
// fingerprints that let every rank see when another rank's arguments differ.
#include <array>
#include <cstdint>
#include <numeric>
#include <string>

#include "collectives/halo.hpp"
#include "common/enum_names.hpp"

namespace collectives {

namespace {
constexpr auto kHaloAlgorithmNames =
    common::enum_names<HaloAlgorithm>({{HaloAlgorithm::kTwoSweep, "two_sweep"},
                                       {HaloAlgorithm::kNeighbor, "neighbor"},
                                       {HaloAlgorithm::kDirect, "direct"},
                                       {HaloAlgorithm::kSplit, "split"}});
}  // namespace

std::string_view halo_algorithm_name(HaloAlgorithm algorithm) {
  return common::enum_name(kHaloAlgorithmNames, algorithm, "unknown");
}

HaloAlgorithm halo_algorithm_from_name(std::string_view name) {
  if (const auto algorithm = common::enum_from_name(kHaloAlgorithmNames, name)) return *algorithm;
  throw common::Error(common::ErrorKind::kArgument, "collectives::halo_algorithm_from_name", -1,
                      "unknown halo algorithm '" + std::string(name) + "' (" +
                          common::joined_names(kHaloAlgorithmNames) + ")");
}

namespace detail {

namespace {

std::string sizes_problem(const std::vector<int>& sizes, int n, const char* axis) {
  if (sizes.empty()) return std::string("no subdomains along ") + axis;
  long long sum = 0;
  for (std::size_t b = 0; b < sizes.size(); ++b) {
    if (sizes[b] < 1) {
      return std::string(axis) + " size of subdomain column/row " + std::to_string(b) + " is " +
             std::to_string(sizes[b]) + " (must be >= 1)";
    }
    sum += sizes[b];
  }
  if (sum != n) {
    return std::string("decomposition does not cover the domain: ") + axis + " sizes add up to " +
           std::to_string(sum) + ", the domain has " + std::to_string(n);
  }
  return {};
}

int mix(int h, long long v) {
  // Stays below 2^30, so that -h fits in an int for the MAX-of-negatives trick.
  const unsigned long long x = (static_cast<unsigned long long>(h) * 1000003ULL) ^
                               static_cast<unsigned long long>(v + 0x9e3779b9LL);
  return static_cast<int>(x % (1ULL << 30));
}

}  // namespace

std::string halo_spec_problem(const HaloSpec& spec, int comm_size) {
  const Decomposition& d = spec.decomposition;
  if (spec.width < 1) return "halo width " + std::to_string(spec.width) + " is below 1";
  if (d.ni < 1 || d.nj < 1) {
    return "domain " + std::to_string(d.ni) + " x " + std::to_string(d.nj) + " is empty";
  }
  if (auto p = sizes_problem(d.x_sizes, d.ni, "x"); !p.empty()) return p;
  if (auto p = sizes_problem(d.y_sizes, d.nj, "y"); !p.empty()) return p;
  if (!d.periodic_x && spec.width > d.ni) {
    return "halo width " + std::to_string(spec.width) + " exceeds the non-periodic x extent " +
           std::to_string(d.ni);
  }
  if (!d.periodic_y && spec.width > d.nj) {
    return "halo width " + std::to_string(spec.width) + " exceeds the non-periodic y extent " +
           std::to_string(d.nj);
  }
  const auto cells = static_cast<std::size_t>(d.ni) * static_cast<std::size_t>(d.nj);
  if (!spec.land_cells.empty() && spec.land_cells.size() != cells) {
    return "land mask has " + std::to_string(spec.land_cells.size()) + " cells, the domain " +
           std::to_string(cells);
  }
  int sea = d.subdomains();
  if (!spec.land_cells.empty()) {
    const auto land = all_land_subdomains(d, spec.land_cells);
    sea -= static_cast<int>(std::accumulate(land.begin(), land.end(), 0));
  }
  if (sea > comm_size) {
    return std::to_string(sea) + " sea subdomains need as many ranks, the communicator has " +
           std::to_string(comm_size);
  }
  return {};
}

std::vector<int> halo_spec_fingerprint(const HaloSpec& spec) {
  const Decomposition& d = spec.decomposition;
  int sizes = 17;
  for (const int s : d.x_sizes) sizes = mix(sizes, s);
  for (const int s : d.y_sizes) sizes = mix(sizes, s);
  int land = 23;
  for (std::size_t c = 0; c < spec.land_cells.size(); ++c) {
    if (spec.land_cells[c] != 0) land = mix(land, static_cast<long long>(c));
  }
  return {d.ni % (1 << 30),
          d.nj % (1 << 30),
          sizes,
          (d.periodic_x ? 1 : 0) + (d.periodic_y ? 2 : 0),
          spec.width % (1 << 30),
          static_cast<int>(spec.stencil),
          static_cast<int>(spec.algorithm),
          land};
}

std::string halo_fields_problem(std::span<const HaloField> fields, int nx, int ny, int width) {
  if (fields.empty()) return "no fields to exchange";
  const auto plane =
      static_cast<std::size_t>(nx + 2 * width) * static_cast<std::size_t>(ny + 2 * width);
  for (std::size_t f = 0; f < fields.size(); ++f) {
    const HaloField& field = fields[f];
    const std::string name = "field " + std::to_string(f);
    if (field.levels < 1) return name + " has " + std::to_string(field.levels) + " levels";
    if (field.element_bytes < 1 || field.element_bytes > field.fill.size()) {
      return name + " has elements of " + std::to_string(field.element_bytes) + " bytes";
    }
    const std::size_t expected = plane * static_cast<std::size_t>(field.levels);
    if (field.elements != expected) {
      return name + " has " + std::to_string(field.elements) +
             " elements; its shape does not match the plan's (" + std::to_string(nx) + "+2*" +
             std::to_string(width) + ") x (" + std::to_string(ny) + "+2*" + std::to_string(width) +
             ") x " + std::to_string(field.levels) + " levels = " + std::to_string(expected);
    }
    if (field.data == nullptr) return name + " has no data";
  }
  return {};
}

std::vector<int> halo_fields_fingerprint(std::span<const HaloField> fields) {
  int h = 31;
  for (const HaloField& f : fields) {
    h = mix(h, f.levels);
    h = mix(h, static_cast<long long>(f.element_bytes));
  }
  return {static_cast<int>(fields.size() % (1 << 30)), h};
}

}  // namespace detail
}  // namespace collectives
