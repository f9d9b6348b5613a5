// Halo exchange on a 2-D decomposition: thin and wide halos, 5- and 9-point
// stencils, land-domain exclusion, four algorithms behind one plan.
//
//   collectives::HaloSpec spec;
//   spec.decomposition = collectives::Decomposition::even(ni, nj, px, py, true, false);
//   spec.width = 3;
//   spec.stencil = collectives::Stencil::kNinePoint;
//   spec.algorithm = collectives::HaloAlgorithm::kNeighbor;
//   collectives::HaloPlan plan(comm, spec);          // once: collective
//   std::vector<double> u(plan.field_elements(nk));  // (nx+2w) x (ny+2w) x nk
//   std::vector<int> flag(plan.field_elements(1));
//   for (step...) plan.exchange({collectives::halo_field<double>(u, nk),
//                                collectives::halo_field<int>(flag, 1)});
//
// What a halo cell receives (mirror of a global cell, untouched outside a
// non-periodic domain and at 5-point corners, fill value from all-land
// subdomains) and the field layout: collectives/halo/geometry.hpp and
// collectives/halo/copy_lists.hpp.
//
// Ranks and land. Subdomains that are all land (HaloSpec::land_cells) take no
// part. The others are numbered in index order (by * px + bx) and subdomain
// number r belongs to rank r of `comm`, so `comm` needs at least that many
// ranks; ranks beyond them (the land ranks, where they exist at all) own
// nothing: they build the plan (it is collective) and their exchange() does
// nothing. Fields of every subdomain hold the same levels.
//
// Algorithms (HaloAlgorithm), all giving identical halos:
//   kTwoSweep  stage 1 exchanges the west and east strips (interior rows);
//              stage 2 the south and north strips extended over the x halo
//              (9 points), which forwards the corners. Rows owned by an
//              all-land subdomain are fetched from their owners directly.
//   kNeighbor  one neighbor_alltoallv on a distributed graph of the ranks
//              this rank exchanges with (land ranks are not in it).
//   kDirect    every owner at once with isend/irecv, corners included.
//   kSplit     kDirect cut in two: start() posts the messages and returns,
//              finish() completes them, so interior work can overlap.
// Every algorithm sends one packed message per peer and stage, holding all
// fields of the exchange. A peer that is the rank itself (small periodic
// grids) is a local copy, and two directions that reach the same rank
// travel in the one message to it, so no direction order can misplace them.
//
// Peers per rank (interior subdomain, all neighbours' sizes >= s in x and
// >= t in y, kx = ceil(w / s), ky = ceil(w / t)), at most, messages sent
// per exchange (as many received):
//   9-point, one stage (kNeighbor, kDirect, kSplit): (2kx+1)(2ky+1) - 1
//     (8 for w <= s, t; 24 for w up to 2s, 2t)
//   5-point, one stage: 2kx + 2ky
//   two stages (either stencil): 2kx in stage 1, then 2ky in stage 2
// Fewer at non-periodic edges and next to land, and fewer distinct ranks on
// small periodic grids, where the same rank lies in several directions.
//
// Errors (common::Error, on every rank, never a hang): width < 1, width larger
// than the domain in a non-periodic direction, sizes that do not cover the
// domain, fewer ranks than sea subdomains, ranks that disagree on the spec
// (plan construction); fields whose sizes do not match the plan or the
// levels given, or that differ between ranks in count, levels or type size
// (exchange). The field check is agreed across ranks whenever a rank passes a
// different set of fields than in its previous exchange; all ranks must then
// change their field set in the same call (as a time loop does).
//
// Zero-copy path (bind). A plan whose fields are bound once,
//   plan.bind({collectives::halo_field<double>(u, nk)});   // collective
//   for (step...) plan.exchange();                          // or exchange(same fields)
// reads the halo cells owned by ranks of the same process (endpoint threads
// share the address space) straight out of their arrays, one strided
// rectangle per field, rectangle and level, with no pack or unpack buffer
// and no message (rows narrower than detail::kStagedRowBytes, column
// strips, and a few KiB of rows under 1 KiB, detail::staged_row_limit, are
// packed by their owner into one block its reader copies: a row read from
// another core costs a cache line however narrow, and reading in place
// costs the owner a second wait); peers in other processes keep the packed
// messages of the algorithm. Each exchange is one arrive/depart
// round among the local peers (collectives/detail/process_board.hpp): a
// rank arrives when its interior is ready (and, for kTwoSweep's second
// stage, when its first stage is done), copies each local peer's cells once
// that peer has arrived, and returns only when every local peer has
// finished reading its own arrays (when all it sends locally is staged, the
// peers read only its staging blocks: it waits for them at its next call
// instead, so a call has one blocking wait). So, between bind() and the last exchange:
//   - the bound arrays must stay where they are (no reallocation): peers
//     read them through the addresses recorded at bind(). exchange(fields)
//     on a bound plan checks that the fields are the bound ones (same
//     address, size, levels and type size, in every build: a few compares)
//     and throws common::Error (kArgument) naming the field and both addresses;
//     the other ranks then wait for this rank, so treat it as a bug to fix,
//     not a condition to recover from. bind() again (collectively) to move.
//   - with kSplit and kDirect, the interior is read by the local peers until
//     finish() returns: compute into other arrays between start() and
//     finish() (the halo was already off-limits there).
// A plan never bound exchanges every peer by messages, as before. On MPI
// and funneled communicators every peer is in another process: bind() only
// records and checks the fields there.
//
// Thread safety: a plan belongs to one rank (an EP rank's thread, an MPI
// process, or a funneled process's master thread outside parallel regions;
// FunneledComm's team shares the pack loops). Plans own a communicator split
// from `comm`; destroy them in the same order on every rank.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "collectives/communicator.hpp"
#include "collectives/detail/process_board.hpp"
#include "collectives/halo/copy_lists.hpp"
#include "collectives/halo/geometry.hpp"
#include "common/error.hpp"

namespace collectives {

enum class HaloAlgorithm { kTwoSweep, kNeighbor, kDirect, kSplit };

/// "two_sweep", "neighbor", "direct", "split" (benchmark mode names).
std::string_view halo_algorithm_name(HaloAlgorithm algorithm);
/// Inverse of halo_algorithm_name; throws common::Error (kArgument) for other names.
HaloAlgorithm halo_algorithm_from_name(std::string_view name);

/// Everything a plan is built from; must be the same on every rank.
struct HaloSpec {
  Decomposition decomposition;
  int width = 1;
  Stencil stencil = Stencil::kNinePoint;
  HaloAlgorithm algorithm = HaloAlgorithm::kTwoSweep;
  /// ni * nj flags (index gj * ni + gi, nonzero = land); empty: all sea.
  std::vector<std::uint8_t> land_cells;
};

/// One field of an exchange: its memory, levels and fill value (for halo
/// cells mirroring all-land subdomains), type-erased. Make it with halo_field.
struct HaloField {
  std::byte* data = nullptr;
  std::size_t elements = 0;
  std::size_t element_bytes = 0;
  int levels = 1;
  std::array<std::byte, 16> fill{};
};

template <class T>
requires std::is_trivially_copyable_v<T> &&(sizeof(T) <= 16) [[nodiscard]] HaloField
    halo_field(std::span<T> data, int levels = 1, T fill = T{}) {
  HaloField field;
  field.data = reinterpret_cast<std::byte*>(data.data());
  field.elements = data.size();
  field.element_bytes = sizeof(T);
  field.levels = levels;
  std::memcpy(field.fill.data(), &fill, sizeof(T));
  return field;
}

namespace detail {

/// Why `spec` cannot be built on a communicator of `comm_size` ranks (empty:
/// it can). Local.
std::string halo_spec_problem(const HaloSpec& spec, int comm_size);
/// A few integers that differ when two ranks' specs differ.
std::vector<int> halo_spec_fingerprint(const HaloSpec& spec);
/// Why `fields` do not fit a subdomain of nx x ny with halo `width` (empty: they do).
std::string halo_fields_problem(std::span<const HaloField> fields, int nx, int ny, int width);
/// Levels and type size of every field, hashed (for the cross-rank check).
std::vector<int> halo_fields_fingerprint(std::span<const HaloField> fields);

/// Throws on every rank of `comm` when `problem` is not empty on any rank or
/// `fingerprint` differs between ranks. Collective (one allreduce).
template <Communicator C>
void agree_or_throw(const C& comm, const char* call, const std::string& problem,
                    const std::vector<int>& fingerprint) {
  // One MPI_MAX over (bad, f, -f) gives the largest and smallest of each entry.
  std::vector<int> v;
  v.push_back(problem.empty() ? 0 : 1);
  for (const int f : fingerprint) v.push_back(f);
  for (const int f : fingerprint) v.push_back(-f);
  comm.library_allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_INT, MPI_MAX);
  if (!problem.empty())
    throw common::Error(common::ErrorKind::kArgument, call, comm.rank(), problem);
  if (v[0] != 0) {
    throw common::Error(common::ErrorKind::kArgument, call, comm.rank(),
                        "another rank rejected its arguments (see that rank's error)");
  }
  const std::size_t n = fingerprint.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (v[1 + i] != -v[1 + n + i]) {
      throw common::Error(common::ErrorKind::kArgument, call, comm.rank(),
                          "ranks passed different arguments (entry " + std::to_string(i) +
                              " of the check differs)");
    }
  }
}

}  // namespace detail

/// A halo exchange built once and reused every step (see the file comment).
template <Communicator C>
class HaloPlan {
 public:
  /// Validates `spec` on every rank, splits a private communicator for the
  /// sea ranks (private_split: every message of the plan travels on it, none
  /// on `comm`; freed with the plan), computes the schedule and, for
  /// kNeighbor, creates the graph. Collective over `comm`.
  HaloPlan(const C& comm, const HaloSpec& spec);
  // One plan, one private communicator and one set of buffers: copies would
  // share the communicator and collide on its tags.
  HaloPlan(const HaloPlan&) = delete;
  HaloPlan& operator=(const HaloPlan&) = delete;
  HaloPlan(HaloPlan&&) noexcept = default;
  HaloPlan& operator=(HaloPlan&&) noexcept = default;
  ~HaloPlan() = default;

  /// Whether this rank owns a subdomain (false for land ranks).
  [[nodiscard]] bool takes_part() const noexcept { return block_ >= 0; }
  [[nodiscard]] int nx() const noexcept { return nx_; }
  [[nodiscard]] int ny() const noexcept { return ny_; }
  /// Global index of the subdomain's first interior cell.
  [[nodiscard]] int x0() const noexcept { return x0_; }
  [[nodiscard]] int y0() const noexcept { return y0_; }
  [[nodiscard]] int width() const noexcept { return spec_.width; }
  [[nodiscard]] const HaloSpec& spec() const noexcept { return spec_; }
  /// Elements of a field of `levels` levels: (nx + 2w)(ny + 2w) levels (0 on land ranks).
  [[nodiscard]] std::size_t field_elements(int levels) const noexcept {
    if (!takes_part()) return 0;
    return static_cast<std::size_t>(nx_ + 2 * spec_.width) *
           static_cast<std::size_t>(ny_ + 2 * spec_.width) * static_cast<std::size_t>(levels);
  }
  /// Messages this rank sends per exchange (all stages).
  [[nodiscard]] int messages_sent() const;
  /// Bytes this rank sends per exchange for the fields of the last exchange.
  [[nodiscard]] std::size_t bytes_sent() const;

  /// Records `fields` as the arrays of every later exchange and switches
  /// the plan to the zero-copy path for peers in this process (see the file
  /// comment): the fields are checked as a new field set is (agreed across
  /// ranks), the copy lists built, the addresses published to the local
  /// peers. Collective over every rank of the plan (land ranks included);
  /// not while an exchange is in flight. Binding again replaces the fields.
  void bind(std::span<const HaloField> fields);
  void bind(std::initializer_list<HaloField> fields) {
    bind(std::span<const HaloField>(fields.begin(), fields.size()));
  }
  /// Whether bind() was called.
  [[nodiscard]] bool bound() const noexcept { return bound_; }
  /// The exchange of the bound fields. Collective, as exchange(fields).
  void exchange() { exchange(std::span<const HaloField>(bound_fields_)); }

  /// The whole exchange: start() then finish(). Collective over the ranks
  /// that take part (a land rank returns at once).
  void exchange(std::span<const HaloField> fields) {
    start(fields);
    finish();
  }
  void exchange(std::initializer_list<HaloField> fields) {
    exchange(std::span<const HaloField>(fields.begin(), fields.size()));
  }

  /// Starts an exchange: all stages but the last run to completion; the last
  /// is posted. Only kSplit and kDirect leave the messages in flight, so only
  /// they overlap with work done before finish(); kNeighbor completes here.
  /// The fields must stay alive and their halos untouched until finish().
  void start(std::span<const HaloField> fields);
  void start(std::initializer_list<HaloField> fields) {
    start(std::span<const HaloField>(fields.begin(), fields.size()));
  }
  /// Completes the exchange begun by start().
  void finish();

 private:
  void prepare(std::span<const HaloField> fields);
  void build_lists(std::span<const HaloField> fields);
  void check_bound(std::span<const HaloField> fields) const;
  /// Throws kRequest naming `call` while a start() awaits its finish().
  void check_idle(const char* call) const;
  /// The arrival value of stage s of the current call (bound plans).
  [[nodiscard]] std::uint64_t phase(std::size_t s) const noexcept {
    return (calls_ - 1) * stages_.size() + s + 1;
  }
  void arrive(std::size_t s);
  void copy_local(std::size_t s);
  void depart();
  /// Waits until every local peer has departed from call `call`.
  void wait_departures(std::uint64_t call);
  void post_stage(std::size_t s);
  void complete_stage(std::size_t s);
  void neighbor_exchange();

  HaloSpec spec_;
  C comm_;   // the sea ranks, private to this plan (tags cannot collide)
  C graph_;  // kNeighbor: distributed graph over comm_
  int block_ = -1;
  int nx_ = 0, ny_ = 0, x0_ = 0, y0_ = 0;
  std::vector<detail::Stage> stages_;
  std::vector<detail::StageCopies> copies_;
  // Levels, type size and element count of each field of the last agreed
  // exchange: an exchange with the same fields skips every check but this
  // comparison (no allocation, no communication per step).
  std::vector<detail::FieldShape> agreed_shapes_;
  std::vector<std::size_t> agreed_elements_;
  std::vector<std::vector<std::byte>> send_buffers_, recv_buffers_;
  std::vector<HaloField> fields_;  // of the exchange in flight
  std::vector<typename C::Request> requests_;
  bool pending_ = false;
  // Zero-copy path: the board of comm_'s ranks in this process (null for
  // one rank per process), this rank's slot, the local peers, what each
  // sends this rank per stage, the stages without them (the messages of a
  // bound plan) and the row lists of the bound fields.
  std::shared_ptr<detail::ProcessBoard> board_;
  int thread_ = 0;
  std::vector<int> local_peers_;  // threads, this rank's excluded
  std::vector<std::vector<detail::LocalTransfer>> local_transfers_;  // per stage
  std::vector<detail::Stage> packed_stages_;
  std::vector<std::vector<detail::StripCopy>> direct_;  // per stage, grouped by peer
  // What this rank sends each local reader per stage (its frame), and the
  // narrow strips it packs for them into its staging buffers (per stage).
  std::vector<std::vector<std::pair<int, std::vector<detail::Rect>>>> local_sends_;
  std::vector<std::vector<detail::StripCopy>> staged_pack_;
  // Whether a local reader reads rows straight out of this rank's arrays
  // (then every call waits for the readers' departure before returning;
  // otherwise the next call does, before refilling the staging buffers).
  bool read_in_place_ = false;
  std::vector<HaloField> bound_fields_;
  bool bound_ = false;
  bool neighbor_messages_ = true;  // kNeighbor, bound: some rank still sends messages
  std::uint64_t calls_ = 0;        // exchanges of the bound plan so far
};

}  // namespace collectives

#include "collectives/halo/plan_impl.hpp"
