// Every client's blocks, as close_definition's exchange gathers them, and
// what follows from them: whether they cover each domain exactly once, which
// blocks each engine holds (its own; a funneled master: its process's
// threads'), how large each engine's send buffers are, and which points of
// a block are valid (the masks).
//
// Every client computes the same verdicts from the same gathered entries,
// so that all of them fail or succeed together. Pure values: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "records/data_layout.hpp"
#include "xios_lite/client.hpp"
#include "xios_lite/config.hpp"

namespace xios_lite::client {

class Layout {
 public:
  /// One client's entry: its process, its thread, then ibegin ni jbegin nj
  /// of its block of every domain (configuration order).
  [[nodiscard]] static std::vector<int> entry(int process, int thread,
                                              const std::vector<Block>& blocks);

  /// The entries of every client in EP rank order, concatenated.
  Layout(const Config& cfg, std::vector<int> all) : cfg_(&cfg), all_(std::move(all)) {}

  /// "" when the entries have the size of this configuration's, else why not.
  [[nodiscard]] std::string check_entries() const;
  /// "" when the blocks of every domain a file uses cover it exactly once,
  /// else the first gap or overlap, naming the clients.
  [[nodiscard]] std::string check_coverage() const;

  [[nodiscard]] int clients() const { return static_cast<int>(all_.size()) / stride(); }
  [[nodiscard]] int process(int rank) const { return at(rank)[0]; }
  [[nodiscard]] int thread(int rank) const { return at(rank)[1]; }
  [[nodiscard]] Block block(int rank, std::size_t domain) const;
  [[nodiscard]] int max_threads() const;

  /// The EP ranks of each engine, by engine: a process (funneled modes) or
  /// a rank (ep mode).
  [[nodiscard]] std::map<int, std::vector<int>> engines(bool funneled) const;
  /// Bytes per send buffer of the engine of `ranks`: buffer_factor x one
  /// step of its events, clamped, never below its largest event; `error`
  /// is set when buffer_max_bytes is below that event.
  [[nodiscard]] std::size_t buffer_capacity(const std::vector<int>& ranks,
                                            std::string& error) const;
  /// The blocks of `ranks`, per domain, in the ranks' order.
  [[nodiscard]] std::vector<std::vector<Block>> blocks_of(const std::vector<int>& ranks) const;

 private:
  [[nodiscard]] int stride() const { return 2 + 4 * static_cast<int>(cfg_->domains.size()); }
  [[nodiscard]] const int* at(int rank) const {
    return all_.data() + static_cast<std::ptrdiff_t>(rank) * stride();
  }

  const Config* cfg_;
  std::vector<int> all_;
};

/// How a client's array holds its block (records/data_layout.hpp).
using records::DataLayout;

/// The layout of the model's array of block `b` of `domain`: the
/// configuration's data_* overridden by what the model set (`model`, may
/// be null). `error` is set (and the block's layout returned) when the
/// attributes do not make one. A domain standing in for an axis or a
/// scalar (DomainDef::stand_in) takes a client's part of the axis (its
/// block, of one row) or, from a client without a part (no row), the whole
/// axis or the scalar's value, which is not used.
[[nodiscard]] DataLayout data_layout(const DomainDef& domain, const DomainAttributes* model,
                                     const Block& b, std::string& error);

/// The valid points of block `b` of `domain` (nj x ni of the block, 1
/// valid): the configuration's mask, the model's (`model`, same shape,
/// empty: all valid) and the points the model's array gives (`layout`).
/// Empty when every point is valid.
[[nodiscard]] std::vector<std::uint8_t> block_mask(const DomainDef& domain, const Block& b,
                                                   const std::vector<std::uint8_t>& model,
                                                   const DataLayout& layout);

}  // namespace xios_lite::client
