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

DataLayout data_layout(const DomainDef& dom, const DomainAttributes* model, const Block& b,
                       std::string& error) {
  const auto pick = [&](std::optional<int> DomainAttributes::*m, const std::optional<int>& cfg) {
    return model != nullptr && model->*m ? model->*m : cfg;
  };
  const auto pick_list = [&](std::vector<int> DomainAttributes::*m, const std::vector<int>& cfg) {
    return model != nullptr && !(model->*m).empty() ? model->*m : cfg;
  };
  const std::optional<int> dim_set = pick(&DomainAttributes::data_dim, dom.data_dim);
  const std::optional<int> ibegin_set = pick(&DomainAttributes::data_ibegin, dom.data_ibegin);
  const std::optional<int> ni_set = pick(&DomainAttributes::data_ni, dom.data_ni);
  const std::optional<int> jbegin_set = pick(&DomainAttributes::data_jbegin, dom.data_jbegin);
  const std::optional<int> nj_set = pick(&DomainAttributes::data_nj, dom.data_nj);
  const std::vector<int> i_index = pick_list(&DomainAttributes::data_i_index, dom.data_i_index);
  const std::vector<int> j_index = pick_list(&DomainAttributes::data_j_index, dom.data_j_index);
  // data_n_index only repeats the count of data_i_index: -1 when not given.
  const int n_index = model != nullptr ? model->data_n_index.value_or(-1) : -1;
  const std::size_t points = static_cast<std::size_t>(b.ni) * static_cast<std::size_t>(b.nj);
  DataLayout out;
  out.per_level = points;
  out.row = static_cast<std::size_t>(b.ni);
  if (dom.stand_in()) {
    // A client with a part of the axis (a block of one row, maybe of no
    // point) sends that part; the others (no row) send the whole axis, or
    // the scalar's value, which is not used.
    if (b.nj == 0) {
      out.per_level = static_cast<std::size_t>(std::max(dom.ni_glo, 0));
      out.whole_block = out.per_level == points;
    }
    return out;
  }
  if (!dim_set && !ibegin_set && !ni_set && !jbegin_set && !nj_set && i_index.empty() &&
      j_index.empty() && n_index < 0) {
    return out;
  }
  // XIOS's defaults: data_dim 1, begins 0, data_ni the block's points (1-D)
  // or ni (2-D), data_nj nj.
  const int dim = dim_set.value_or(1);
  const int ibegin = ibegin_set.value_or(0);
  const int jbegin = jbegin_set.value_or(0);
  const long long ni = ni_set.value_or(dim == 1 ? b.ni * b.nj : b.ni);
  const long long nj = dim == 1 ? 1 : nj_set.value_or(b.nj);
  out.text = "data_dim " + std::to_string(dim) + ", data_ibegin " + std::to_string(ibegin) +
             ", data_ni " + std::to_string(ni);
  if (dim == 2) {
    out.text += ", data_jbegin " + std::to_string(jbegin) + ", data_nj " + std::to_string(nj);
  }
  if (!i_index.empty()) {
    out.text += ", data_n_index " + std::to_string(i_index.size());
  }
  const std::string where = "domain '" + dom.id + "': ";
  if (dim != 1 && dim != 2) {
    error = where + "data_dim " + std::to_string(dim) + " (expected 1 or 2)";
    return {};
  }
  if (ni < 0 || nj < 0) {
    error = where + "negative data size (" + out.text + ")";
    return {};
  }
  if (n_index >= 0 && static_cast<std::size_t>(n_index) != i_index.size()) {
    error = where + "data_n_index " + std::to_string(n_index) + " but data_i_index has " +
            std::to_string(i_index.size()) + " values";
    return {};
  }
  if (dim == 2 && i_index.empty() != j_index.empty()) {
    error = where + "with data_dim 2, data_i_index and data_j_index go together (" +
            std::to_string(i_index.size()) + " and " + std::to_string(j_index.size()) + " values)";
    return {};
  }
  if (!j_index.empty() && j_index.size() != i_index.size()) {
    error = where + "data_j_index has " + std::to_string(j_index.size()) +
            " values, data_i_index " + std::to_string(i_index.size()) + " (one of each per value)";
    return {};
  }
  const bool indexed = !i_index.empty();
  out.per_level = indexed ? i_index.size() : static_cast<std::size_t>(ni * nj);
  out.source.assign(points, -1);
  for (std::size_t k = 0; k < out.per_level; ++k) {
    long long at = -1;
    if (dim == 2) {
      const long long i = (indexed ? i_index[k] : static_cast<long long>(k) % ni) + ibegin;
      const long long j = (indexed ? j_index[k] : static_cast<long long>(k) / ni) + jbegin;
      at = i >= 0 && i < b.ni && j >= 0 && j < b.nj ? j * b.ni + i : -1;
    } else {
      const long long p = (indexed ? i_index[k] : static_cast<long long>(k)) + ibegin;
      at = p >= 0 && p < static_cast<long long>(points) ? p : -1;
    }
    if (at >= 0) {
      out.source[static_cast<std::size_t>(at)] = static_cast<std::int32_t>(k);
    }
  }
  // Rows: a plain array that holds the whole block.
  if (indexed) {
    out.rows = false;
  } else if (dim == 2) {
    out.rows = ibegin <= 0 && jbegin <= 0 && ibegin + ni >= b.ni && jbegin + nj >= b.nj;
    out.first = static_cast<std::size_t>(-ibegin) +
                static_cast<std::size_t>(-jbegin) * static_cast<std::size_t>(ni);
    out.row = static_cast<std::size_t>(ni);
  } else {
    out.rows = ibegin <= 0 && ibegin + ni >= static_cast<long long>(points);
    out.first = static_cast<std::size_t>(-std::min(ibegin, 0));
    out.row = static_cast<std::size_t>(b.ni);
  }
  out.whole_block = out.rows && out.first == 0 && out.row == static_cast<std::size_t>(b.ni) &&
                    out.per_level == points;
  if (out.whole_block) {
    out.source.clear();  // the block itself
  }
  return out;
}

std::vector<std::uint8_t> block_mask(const DomainDef& dom, const Block& b,
                                     const std::vector<std::uint8_t>& model,
                                     const DataLayout& layout) {
  const bool uncovered =
      std::any_of(layout.source.begin(), layout.source.end(), [](std::int32_t s) { return s < 0; });
  if (dom.mask.empty() && model.empty() && !uncovered) {
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
      const bool given = layout.source.empty() || layout.source[at] >= 0;
      const bool valid = config_valid && given && (model.empty() || model[at] != 0);
      mask[at] = valid ? 1 : 0;
      any_masked = any_masked || !valid;
    }
  }
  return any_masked ? mask : std::vector<std::uint8_t>{};
}

}  // namespace xios_lite::client
