// HaloPlan: construction, field checks and the start()/finish() dispatch to
// the algorithms (point_to_point.hpp: two-stage sweep, direct, split;
// neighbor.hpp: neighbourhood collective). Included by halo.hpp only.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>

#include "collectives/halo.hpp"

namespace collectives {

namespace detail {

/// The byte loops every algorithm shares; comm.parallel_for lets a funneled
/// process's team share them.
template <Communicator C>
void pack_rows(const C& comm, const std::vector<RowCopy>& rows, std::span<const HaloField> fields,
               std::byte* buffer) {
  if (rows.empty()) return;  // a funneled team would still fork and join
  comm.parallel_for(static_cast<int>(rows.size()), [&](int n) {
    const RowCopy& row = rows[static_cast<std::size_t>(n)];
    std::memcpy(buffer + row.buffer_offset,
                fields[static_cast<std::size_t>(row.field)].data + row.field_offset, row.bytes);
  });
}

template <Communicator C>
void unpack_rows(const C& comm, const std::vector<RowCopy>& rows, std::span<const HaloField> fields,
                 const std::byte* buffer) {
  comm.parallel_for(static_cast<int>(rows.size()), [&](int n) {
    const RowCopy& row = rows[static_cast<std::size_t>(n)];
    std::memcpy(fields[static_cast<std::size_t>(row.field)].data + row.field_offset,
                buffer + row.buffer_offset, row.bytes);
  });
}

template <Communicator C>
void copy_and_fill(const C& comm, const StageCopies& copies, std::span<const HaloField> fields) {
  if (!copies.self.empty()) {
    comm.parallel_for(static_cast<int>(copies.self.size()), [&](int n) {
      const RowSelfCopy& row = copies.self[static_cast<std::size_t>(n)];
      std::byte* data = fields[static_cast<std::size_t>(row.field)].data;
      std::memcpy(data + row.to_offset, data + row.from_offset, row.bytes);
    });
  }
  if (copies.fill.empty()) return;
  comm.parallel_for(static_cast<int>(copies.fill.size()), [&](int n) {
    const RowFill& row = copies.fill[static_cast<std::size_t>(n)];
    const HaloField& field = fields[static_cast<std::size_t>(row.field)];
    std::byte* cell = field.data + row.field_offset;
    for (int c = 0; c < row.cells; ++c, cell += field.element_bytes) {
      std::memcpy(cell, field.fill.data(), field.element_bytes);
    }
  });
}

inline StageLayout stage_layout(HaloAlgorithm algorithm) {
  return algorithm == HaloAlgorithm::kTwoSweep ? StageLayout::kTwoStage : StageLayout::kOneStage;
}

}  // namespace detail

template <Communicator C>
HaloPlan<C>::HaloPlan(const C& comm, const HaloSpec& spec) : spec_(spec) {
  detail::agree_or_throw(comm, "collectives::HaloPlan",
                         detail::halo_spec_problem(spec, comm.size()),
                         detail::halo_spec_fingerprint(spec));
  const Decomposition& d = spec_.decomposition;
  std::vector<std::uint8_t> land;
  if (!spec_.land_cells.empty()) land = all_land_subdomains(d, spec_.land_cells);
  const detail::SubdomainMap map(d, land);
  block_ = map.block_of(comm.rank());
  // Sea ranks keep their rank (they are the first ones, key = rank).
  comm_ = comm.private_split(block_ >= 0 ? 0 : MPI_UNDEFINED, comm.rank());
  if (block_ < 0) return;
  const int bx = block_ % d.px();
  const int by = block_ / d.px();
  nx_ = d.x_sizes[static_cast<std::size_t>(bx)];
  ny_ = d.y_sizes[static_cast<std::size_t>(by)];
  x0_ = map.x_start(bx);
  y0_ = map.y_start(by);
  stages_ = detail::build_stages(map, comm_.rank(), spec_.width, spec_.stencil,
                                 detail::stage_layout(spec_.algorithm));
  if (spec_.algorithm == HaloAlgorithm::kNeighbor) {
    // Sources and destinations are the same sorted peer list: a peer is one
    // when cells go either way, which both ends see alike, so the graph is
    // consistent; one block per peer leaves no direction order to get wrong.
    std::vector<int> peers;
    for (const auto& t : stages_.front().peers) peers.push_back(t.peer);
    graph_ = comm_.dist_graph(peers, peers);
  }
  send_buffers_.resize(stages_.size());
  recv_buffers_.resize(stages_.size());
  // The zero-copy path's geometry: what each peer of this process sends
  // this rank, in the peer's frame (its own schedule, computed here as it
  // computes it), and the stages left for messages.
  board_ = detail::make_process_board(comm_);
  thread_ = detail::local_thread_of(comm_);
  const std::vector<int> threads = detail::local_threads_of(comm_);
  packed_stages_ = stages_;
  local_transfers_.resize(stages_.size());
  local_sends_.resize(stages_.size());
  for (std::size_t s = 0; s < stages_.size(); ++s) {
    for (detail::PeerTransfer& t : packed_stages_[s].peers) {
      const int thread = threads[static_cast<std::size_t>(t.peer)];
      if (thread < 0 || board_ == nullptr) continue;
      if (std::find(local_peers_.begin(), local_peers_.end(), thread) == local_peers_.end()) {
        local_peers_.push_back(thread);
      }
      if (!t.receives.empty()) {
        const int peer_block = map.block_of(t.peer);
        const std::vector<detail::Stage> theirs = detail::build_stages(
            map, t.peer, spec_.width, spec_.stencil, detail::stage_layout(spec_.algorithm));
        detail::LocalTransfer local;
        local.thread = thread;
        local.nx = d.x_sizes[static_cast<std::size_t>(peer_block % d.px())];
        local.ny = d.y_sizes[static_cast<std::size_t>(peer_block / d.px())];
        for (const detail::PeerTransfer& back : theirs[s].peers) {
          if (back.peer == comm_.rank()) local.from = back.sends;
        }
        local.to = t.receives;
        local_transfers_[s].push_back(std::move(local));
      }
      if (!t.sends.empty()) local_sends_[s].emplace_back(thread, t.sends);
      // Kept with nothing to send or receive: kNeighbor's counts follow the
      // graph's neighbours, which include this peer.
      t.sends.clear();
      t.receives.clear();
    }
  }
  direct_.resize(stages_.size());
  staged_pack_.resize(stages_.size());
}

template <Communicator C>
int HaloPlan<C>::messages_sent() const {
  int n = 0;
  for (const auto& stage : stages_) {
    for (const auto& t : stage.peers) n += t.sends.empty() ? 0 : 1;
  }
  return n;
}

template <Communicator C>
std::size_t HaloPlan<C>::bytes_sent() const {
  std::size_t n = 0;
  for (const auto& c : copies_) n += c.send_bytes;
  return n;
}

template <Communicator C>
void HaloPlan<C>::bind(std::span<const HaloField> fields) {
  check_idle("collectives::HaloPlan::bind");
  if (takes_part()) {
    // The lists, staging buffers and addresses below are read by the local
    // peers until they depart from the last call.
    if (bound_) wait_departures(calls_);
    detail::agree_or_throw(comm_, "collectives::HaloPlan::bind",
                           detail::halo_fields_problem(fields, nx_, ny_, spec_.width),
                           detail::halo_fields_fingerprint(fields));
    bound_ = true;
    build_lists(fields);
    if (board_ != nullptr) {
      // No local peer reads this slot now: the last exchange ended with
      // their departures, and the next one publishes it with an arrival.
      std::vector<std::byte*>& addresses = board_->addresses(thread_);
      addresses.clear();
      for (const HaloField& f : fields) addresses.push_back(f.data);
      std::vector<std::vector<std::size_t>>& blocks = board_->staging_blocks(thread_);
      blocks.assign(stages_.size(),
                    std::vector<std::size_t>(static_cast<std::size_t>(board_->threads()), 0));
      for (std::size_t s = 0; s < stages_.size(); ++s) {
        std::size_t cursor = 0;
        for (const auto& [reader, rects] : local_sends_[s]) {
          blocks[s][static_cast<std::size_t>(reader)] = cursor;
          std::vector<detail::StripCopy> ignored;
          detail::add_staged_strips(rects, nx_, ny_, spec_.width, agreed_shapes_, cursor, ignored);
        }
      }
    }
    if (spec_.algorithm == HaloAlgorithm::kNeighbor) {
      // The neighbourhood collective is skipped when no rank has a peer in
      // another process (the one-process layouts).
      int messages = copies_.front().send_bytes + copies_.front().recv_bytes > 0 ? 1 : 0;
      comm_.library_allreduce(MPI_IN_PLACE, &messages, 1, MPI_INT, MPI_MAX);
      neighbor_messages_ = messages != 0;
    }
  }
  bound_ = true;
  bound_fields_.assign(fields.begin(), fields.end());
}

template <Communicator C>
void HaloPlan<C>::check_idle(const char* call) const {
  if (pending_) {
    throw common::Error(common::ErrorKind::kRequest, call, comm_.rank(),
                        "an exchange is already in flight (call finish() first)");
  }
}

template <Communicator C>
void HaloPlan<C>::check_bound(std::span<const HaloField> fields) const {
  const auto hex = [](const void* p) {
    char text[32];
    std::snprintf(text, sizeof text, "%p", p);
    return std::string(text);
  };
  if (fields.size() != bound_fields_.size()) {
    throw common::Error(
        common::ErrorKind::kArgument, "collectives::HaloPlan::exchange", comm_.rank(),
        std::to_string(fields.size()) + " fields given, " + std::to_string(bound_fields_.size()) +
            " bound (bind() the new fields first, on every rank)");
  }
  for (std::size_t f = 0; f < fields.size(); ++f) {
    const HaloField& given = fields[f];
    const HaloField& bound = bound_fields_[f];
    if (given.data != bound.data || given.elements != bound.elements ||
        given.levels != bound.levels || given.element_bytes != bound.element_bytes) {
      throw common::Error(
          common::ErrorKind::kArgument, "collectives::HaloPlan::exchange", comm_.rank(),
          "field " + std::to_string(f) + " at " + hex(given.data) + " (" +
              std::to_string(given.elements) + " elements) is not the bound field at " +
              hex(bound.data) + " (" + std::to_string(bound.elements) +
              " elements): bind() the new fields first, on every rank");
    }
  }
}

template <Communicator C>
void HaloPlan<C>::build_lists(std::span<const HaloField> fields) {
  std::vector<detail::FieldShape> shapes;
  std::vector<std::size_t> elements;
  for (const HaloField& f : fields) {
    shapes.push_back({f.levels, f.element_bytes});
    elements.push_back(f.elements);
  }
  copies_ = detail::build_copies(bound_ ? packed_stages_ : stages_, nx_, ny_, spec_.width, shapes,
                                 comm_.rank());
  read_in_place_ = false;
  for (std::size_t s = 0; s < copies_.size(); ++s) {
    // At least one byte, so that no buffer pointer handed to MPI is null.
    send_buffers_[s].resize(std::max<std::size_t>(1, copies_[s].send_bytes));
    recv_buffers_[s].resize(std::max<std::size_t>(1, copies_[s].recv_bytes));
    direct_[s].clear();
    staged_pack_[s].clear();
    if (!bound_) continue;
    for (const detail::LocalTransfer& t : local_transfers_[s]) {
      detail::add_direct_strips(t, nx_, ny_, spec_.width, shapes, direct_[s]);
    }
    if (board_ == nullptr) continue;
    std::size_t staged_bytes = 0;
    for (const auto& [reader, rects] : local_sends_[s]) {
      detail::add_staged_strips(rects, nx_, ny_, spec_.width, shapes, staged_bytes,
                                staged_pack_[s]);
      const std::size_t limit = detail::staged_row_limit(rects, shapes);
      for (const detail::FieldShape& field : shapes) {
        for (const detail::Rect& r : rects) {
          if (static_cast<std::size_t>(r.width) * field.element_bytes >= limit) {
            read_in_place_ = true;
          }
        }
      }
    }
    std::vector<std::vector<std::byte>>& staging = board_->staging(thread_);
    staging.resize(stages_.size());
    staging[s].resize(std::max<std::size_t>(1, staged_bytes));
  }
  agreed_shapes_ = std::move(shapes);
  agreed_elements_ = std::move(elements);
}

template <Communicator C>
void HaloPlan<C>::arrive(std::size_t s) {
  if (board_ == nullptr) return;
  // Readers of staged rows only: they may still be copying the previous
  // call's blocks (this rank did not wait for them then).
  if (s == 0 && !read_in_place_ && calls_ > 1) wait_departures(calls_ - 1);
  std::byte* staging = board_->staging(thread_)[s].data();
  for (const detail::StripCopy& strip : staged_pack_[s]) {
    detail::copy_strip(staging + strip.to_offset, strip.to_stride,
                       fields_[static_cast<std::size_t>(strip.field)].data + strip.from_offset,
                       strip.from_stride, strip.row_bytes, strip.rows);
  }
  board_->arrive(thread_, phase(s));
}

template <Communicator C>
void HaloPlan<C>::wait_departures(std::uint64_t call) {
  if (board_ == nullptr) return;
  for (const int peer : local_peers_) board_->wait_departed(peer, call);
}

template <Communicator C>
void HaloPlan<C>::copy_local(std::size_t s) {
  // Strips come grouped by peer: wait for each peer once, just before its strips.
  int waited_for = -1;
  const std::vector<std::byte*>* addresses = nullptr;
  const std::byte* block = nullptr;  // the peer's staged strips for this rank
  for (const detail::StripCopy& strip : direct_[s]) {
    if (strip.thread != waited_for) {
      board_->wait_arrived(strip.thread, phase(s));
      waited_for = strip.thread;
      addresses = &board_->addresses(strip.thread);
      block = board_->staging(strip.thread)[s].data() +
              board_->staging_blocks(strip.thread)[s][static_cast<std::size_t>(thread_)];
    }
    const std::byte* from =
        strip.staged ? block : (*addresses)[static_cast<std::size_t>(strip.field)];
    detail::copy_strip(fields_[static_cast<std::size_t>(strip.field)].data + strip.to_offset,
                       strip.to_stride, from + strip.from_offset, strip.from_stride,
                       strip.row_bytes, strip.rows);
  }
}

template <Communicator C>
void HaloPlan<C>::depart() {
  if (board_ == nullptr || local_peers_.empty()) return;
  board_->depart(thread_, calls_);
  if (read_in_place_) wait_departures(calls_);
}

template <Communicator C>
void HaloPlan<C>::prepare(std::span<const HaloField> fields) {
  bool same = fields.size() == agreed_shapes_.size();
  for (std::size_t f = 0; same && f < fields.size(); ++f) {
    same = fields[f].levels == agreed_shapes_[f].levels &&
           fields[f].element_bytes == agreed_shapes_[f].element_bytes &&
           fields[f].elements == agreed_elements_[f] && fields[f].data != nullptr;
  }
  if (same) return;
  // A new set of fields: check it on every rank (sizes may be right on one
  // rank and wrong on another with uneven subdomains), then rebuild the lists.
  detail::agree_or_throw(comm_, "collectives::HaloPlan::exchange",
                         detail::halo_fields_problem(fields, nx_, ny_, spec_.width),
                         detail::halo_fields_fingerprint(fields));
  build_lists(fields);
}

template <Communicator C>
void HaloPlan<C>::start(std::span<const HaloField> fields) {
  check_idle("collectives::HaloPlan::start");
  if (takes_part()) {
    if (bound_) {
      check_bound(fields);
      ++calls_;
    } else {
      prepare(fields);
    }
    fields_.assign(fields.begin(), fields.end());
    if (spec_.algorithm == HaloAlgorithm::kNeighbor) {
      neighbor_exchange();
    } else {
      for (std::size_t s = 0; s + 1 < stages_.size(); ++s) {
        post_stage(s);
        complete_stage(s);
      }
      post_stage(stages_.size() - 1);
    }
  }
  pending_ = true;
}

template <Communicator C>
void HaloPlan<C>::finish() {
  if (!pending_) {
    throw common::Error(common::ErrorKind::kRequest, "collectives::HaloPlan::finish", comm_.rank(),
                        "no exchange in flight (call start() first)");
  }
  pending_ = false;
  if (!takes_part()) return;
  if (spec_.algorithm != HaloAlgorithm::kNeighbor) complete_stage(stages_.size() - 1);
  if (bound_) depart();
}

}  // namespace collectives

#include "collectives/halo/neighbor.hpp"
#include "collectives/halo/point_to_point.hpp"
