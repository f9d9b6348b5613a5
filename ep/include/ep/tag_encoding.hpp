// Wire tag of an inter-process endpoint message:
//
//   bit 30 ............ 16 | 15 ........ 8 | 7 ......... 0
//          user tag (15)    | source thread | dest thread
//
// User tags are therefore 0..32767 (the MPI minimum guarantee) and a process
// has at most 256 endpoints. This full layout needs MPI_TAG_UB >= 2^31 - 1
// (Open MPI's ob1/vader here).
//
// Smaller tag bounds (Open MPI+UCX 2^23-1, Cray MPICH 2^21-1, Intel MPI
// 2^19-1, MPICH 2^28-1) get a narrow layout (TagLayout below). The two thread
// indices form a pair code of 2t bits, t = bits of the largest endpoint count
// of any process; the tag keeps the 15 user bits and as many low bits of the
// pair code as fit, and the remaining high bits choose one of `channels`
// duplicate MPI communicators:
//
//   channel = pair >> p          (one MPI communicator per channel)
//   tag     = user tag (15) | low p bits of pair,   p = min(2t, B - 15)
//   pair    = source thread (t) | dest thread (t),  B = bits of MPI_TAG_UB
//
// Messages of one (source endpoint, destination endpoint) pair always travel
// on one channel, so MPI's non-overtaking order per pair carries over.
#pragma once

#include <bit>
#include <cstdint>

namespace ep {

inline constexpr int kUserTagBits = 15;
inline constexpr int kThreadBits = 8;
inline constexpr int kMaxUserTag = (1 << kUserTagBits) - 1;       // 32767
inline constexpr int kMaxEndpointsPerProcess = 1 << kThreadBits;  // 256
inline constexpr long long kRequiredTagUb = (1LL << (kUserTagBits + 2 * kThreadBits)) - 1;

struct WireTag {
  int user_tag;
  int source_thread;
  int dest_thread;
  friend bool operator==(const WireTag&, const WireTag&) = default;
};

[[nodiscard]] constexpr int encode_tag(WireTag t) noexcept {
  return (t.user_tag << (2 * kThreadBits)) | (t.source_thread << kThreadBits) | t.dest_thread;
}

[[nodiscard]] constexpr WireTag decode_tag(int wire) noexcept {
  constexpr int kMask = (1 << kThreadBits) - 1;
  return {wire >> (2 * kThreadBits), (wire >> kThreadBits) & kMask, wire & kMask};
}

static_assert(decode_tag(encode_tag({kMaxUserTag, 255, 7})) == WireTag{kMaxUserTag, 255, 7});

/// Largest channel count a narrow layout may use: every channel is one more
/// duplicate MPI communicator (MPICH-family libraries have about 2000 context
/// ids in all) and one more MPI_Improbe per drain.
inline constexpr int kMaxTagChannels = 64;

/// Where the wire puts the thread indices for one communicator.
struct TagLayout {
  int thread_bits = kThreadBits;        ///< t: bits of one thread index
  int tag_pair_bits = 2 * kThreadBits;  ///< p: low pair-code bits carried in the tag
  int channels = 1;                     ///< MPI communicators the high bits select

  friend bool operator==(const TagLayout&, const TagLayout&) = default;
};

/// An encoded message address: which channel communicator and which MPI tag.
struct WireAddress {
  int channel;
  int tag;
  friend bool operator==(const WireAddress&, const WireAddress&) = default;
};

/// Bits of a tag bound: the largest B with 2^B - 1 <= tag_ub.
[[nodiscard]] constexpr int tag_bits(long long tag_ub) noexcept {
  return tag_ub < 1
             ? 0
             : static_cast<int>(std::bit_width(static_cast<unsigned long long>(tag_ub) + 1)) - 1;
}

/// The layout for `tag_ub` and processes of at most `max_local_endpoints`
/// endpoints: the full 15/8/8 layout when the bound allows it, else the
/// narrow one. The caller checks channels <= kMaxTagChannels and
/// tag_bits(tag_ub) >= kUserTagBits.
[[nodiscard]] constexpr TagLayout make_tag_layout(long long tag_ub,
                                                  int max_local_endpoints) noexcept {
  if (tag_ub >= kRequiredTagUb) return {};
  const int t =
      max_local_endpoints <= 1
          ? 0
          : static_cast<int>(std::bit_width(static_cast<unsigned>(max_local_endpoints - 1)));
  const int free_bits = tag_bits(tag_ub) - kUserTagBits;
  const int p = free_bits < 0 ? 0 : (free_bits < 2 * t ? free_bits : 2 * t);
  return {t, p, 1 << (2 * t - p)};
}

[[nodiscard]] constexpr WireAddress encode(const TagLayout& layout, WireTag t) noexcept {
  const int pair = (t.source_thread << layout.thread_bits) | t.dest_thread;
  const int low = pair & ((1 << layout.tag_pair_bits) - 1);
  return {pair >> layout.tag_pair_bits, (t.user_tag << layout.tag_pair_bits) | low};
}

[[nodiscard]] constexpr WireTag decode(const TagLayout& layout, int channel, int tag) noexcept {
  const int pair = (channel << layout.tag_pair_bits) | (tag & ((1 << layout.tag_pair_bits) - 1));
  const int thread_mask = (1 << layout.thread_bits) - 1;
  return {tag >> layout.tag_pair_bits, pair >> layout.thread_bits, pair & thread_mask};
}

// The full layout is the 15/8/8 encoding above, on one channel.
static_assert(make_tag_layout(kRequiredTagUb, 256) == TagLayout{});
static_assert(encode(TagLayout{}, {kMaxUserTag, 255, 7}) ==
              WireAddress{0, encode_tag({kMaxUserTag, 255, 7})});
// Intel MPI's 2^19-1 with 16 endpoints per process: 4 pair bits in the tag,
// 16 channels; every field survives the round trip.
static_assert(make_tag_layout((1 << 19) - 1, 16) == TagLayout{4, 4, 16});
static_assert(decode(make_tag_layout((1 << 19) - 1, 16), 15, (kMaxUserTag << 4) | 9) ==
              WireTag{kMaxUserTag, 15, 9});
static_assert(encode(make_tag_layout((1 << 19) - 1, 16), {kMaxUserTag, 15, 9}) ==
              WireAddress{15, (kMaxUserTag << 4) | 9});
// MPICH's 2^28-1 holds any 2 x 6 thread bits in the tag: one channel.
static_assert(make_tag_layout((1 << 28) - 1, 64).channels == 1);
// One endpoint per process needs no thread bits at all.
static_assert(make_tag_layout(32767, 1) == TagLayout{0, 0, 1});

}  // namespace ep
