#include "layout.hpp"

#include <algorithm>

#include "transport/event.hpp"

namespace xios_lite::client {

std::vector<int> Layout::entry(int process, int thread, const std::vector<Block>& blocks) {
  std::vector<int> out{process, thread};
  for (const Block& b : blocks) {
    out.insert(out.end(), {b.ibegin, b.ni, b.jbegin, b.nj});
  }
  return out;
}

std::string Layout::check_entries() const {
  if (all_.size() % static_cast<std::size_t>(stride()) != 0) {
    return "the clients read configurations with different domains";
  }
  return "";
}

Block Layout::block(int rank, std::size_t domain) const {
  const int* p = at(rank) + 2 + 4 * domain;
  return Block{p[0], p[1], p[2], p[3]};
}

int Layout::max_threads() const {
  int threads = 1;
  for (int r = 0; r < clients(); ++r) {
    threads = std::max(threads, thread(r) + 1);
  }
  return threads;
}

std::string Layout::check_coverage() const {
  const Config& cfg = *cfg_;
  std::vector<bool> used(cfg.domains.size(), false);
  for (const auto& file : cfg.files) {
    for (const auto& v : file.variables) {
      used[static_cast<std::size_t>(cfg.domain_of_field(v.source))] = true;
    }
  }
  auto text = [](int r, const Block& b) {
    return "client " + std::to_string(r) + " [i " + std::to_string(b.ibegin) + "+" +
           std::to_string(b.ni) + ", j " + std::to_string(b.jbegin) + "+" + std::to_string(b.nj) +
           "]";
  };
  for (std::size_t d = 0; d < cfg.domains.size(); ++d) {
    if (!used[d]) {
      continue;
    }
    const DomainDef& dom = cfg.domains[d];
    long long area = 0;
    for (int r = 0; r < clients(); ++r) {
      const Block a = block(r, d);
      area += static_cast<long long>(a.ni) * a.nj;
      for (int q = 0; q < r; ++q) {
        const Block b = block(q, d);
        const bool overlap = a.ni > 0 && a.nj > 0 && b.ni > 0 && b.nj > 0 &&
                             a.ibegin < b.ibegin + b.ni && b.ibegin < a.ibegin + a.ni &&
                             a.jbegin < b.jbegin + b.nj && b.jbegin < a.jbegin + a.nj;
        if (overlap) {
          return "domain '" + dom.id + "': blocks overlap: " + text(q, b) + " and " + text(r, a);
        }
      }
    }
    const long long total = static_cast<long long>(dom.ni_glo) * dom.nj_glo;
    if (area != total) {
      return "domain '" + dom.id + "': the blocks cover " + std::to_string(area) + " of its " +
             std::to_string(total) + " points (every point needs exactly one client)";
    }
  }
  return "";
}

std::map<int, std::vector<int>> Layout::engines(bool funneled) const {
  std::map<int, std::vector<int>> out;
  for (int r = 0; r < clients(); ++r) {
    out[funneled ? process(r) : r].push_back(r);
  }
  return out;
}

std::size_t Layout::buffer_capacity(const std::vector<int>& ranks, std::string& error) const {
  const Config& cfg = *cfg_;
  std::size_t step_bytes = 0;
  std::size_t largest = 0;
  for (const auto& file : cfg.files) {
    for (const auto& v : file.variables) {
      const FieldDef& f = cfg.fields[static_cast<std::size_t>(v.source)];
      const auto d = static_cast<std::size_t>(cfg.grids[static_cast<std::size_t>(f.grid)].domain);
      for (int r : ranks) {
        const Block b = block(r, d);
        const std::size_t bytes =
            sizeof(transport::EventHeader) + static_cast<std::size_t>(cfg.levels(f.grid)) *
                                                 static_cast<std::size_t>(b.ni) *
                                                 static_cast<std::size_t>(b.nj) * sizeof(double);
        step_bytes += bytes;
        largest = std::max(largest, bytes);
      }
    }
  }
  const std::size_t control = sizeof(transport::EventHeader) + 4096;
  largest = std::max(largest, control);
  std::size_t cap =
      static_cast<std::size_t>(cfg.buffers.factor * static_cast<double>(step_bytes + control));
  cap = std::clamp(cap, cfg.buffers.min_bytes, cfg.buffers.max_bytes);
  if (error.empty() && largest > cap) {
    error = "buffer_max_bytes " + std::to_string(cfg.buffers.max_bytes) +
            " is below the largest event of client " + std::to_string(ranks.front()) + " (" +
            std::to_string(largest) + " bytes)";
  }
  return cap;
}

std::vector<std::vector<Block>> Layout::blocks_of(const std::vector<int>& ranks) const {
  std::vector<std::vector<Block>> out(cfg_->domains.size());
  for (int r : ranks) {
    for (std::size_t d = 0; d < out.size(); ++d) {
      out[d].push_back(block(r, d));
    }
  }
  return out;
}

std::vector<std::uint8_t> block_mask(const DomainDef& dom, const Block& b,
                                     const std::vector<std::uint8_t>& model) {
  if (dom.mask.empty() && model.empty()) {
    return {};
  }
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(b.ni) * static_cast<std::size_t>(b.nj),
                                 1);
  bool any_masked = false;
  for (int j = 0; j < b.nj; ++j) {
    for (int i = 0; i < b.ni; ++i) {
      const auto at = static_cast<std::size_t>(j) * static_cast<std::size_t>(b.ni) +
                      static_cast<std::size_t>(i);
      const bool config_valid =
          dom.mask.empty() ||
          dom.mask[static_cast<std::size_t>(b.jbegin + j) * static_cast<std::size_t>(dom.ni_glo) +
                   static_cast<std::size_t>(b.ibegin + i)] != 0;
      const bool valid = config_valid && (model.empty() || model[at] != 0);
      mask[at] = valid ? 1 : 0;
      any_masked = any_masked || !valid;
    }
  }
  return any_masked ? mask : std::vector<std::uint8_t>{};
}

}  // namespace xios_lite::client
