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
// 2^19-1, MPICH 2^28-1) get a narrow layout (TagLayout below), t = bits of
// the largest endpoint count of any process, B = bits of MPI_TAG_UB:
//
// Channel layout: the two thread indices form a pair code of 2t bits; the
// tag keeps the 15 user bits and as many low bits of the pair code as fit,
// and the remaining high bits choose one of `channels` duplicate MPI
// communicators:
//
//   channel = pair >> p          (one MPI communicator per channel)
//   tag     = user tag (15) | low p bits of pair,   p = min(2t, B - 15)
//   pair    = source thread (t) | dest thread (t)
//
// Source-header layout, when the channel layout would need more than the
// allowed channels (256 endpoints under 2^19-1 need 4096): the wire carries
// only the destination thread, in the same way (pair = dest thread, t bits),
// and the source thread travels in a small header in front of the message
// (p2p/inter_process.cpp in the library), so the channels drop to
// 2^(t - p) (16 for 256 endpoints under 2^19-1).
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
/// ids in all) and one more MPI_Improbe per drain. EndpointOptions::
/// max_tag_channels lowers it.
inline constexpr int kMaxTagChannels = 64;

/// What decode() gives as the source thread under the source-header layout:
/// the thread is in the message's header, not in its address.
inline constexpr int kSourceInHeader = -1;

/// Where the wire puts the thread indices for one communicator.
struct TagLayout {
  int thread_bits = kThreadBits;        ///< t: bits of one thread index
  int tag_pair_bits = 2 * kThreadBits;  ///< p: low pair-code bits carried in the tag
  int channels = 1;                     ///< MPI communicators the high bits select
  /// The pair code is the destination thread alone; the source thread rides
  /// in a header in front of the message.
  bool source_in_header = false;

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
/// channel layout within `max_channels`, else the source-header layout. The
/// caller checks channels <= max_channels (the source-header layout may still
/// need more) and tag_bits(tag_ub) >= kUserTagBits.
[[nodiscard]] constexpr TagLayout make_tag_layout(long long tag_ub, int max_local_endpoints,
                                                  int max_channels = kMaxTagChannels) noexcept {
  if (tag_ub >= kRequiredTagUb) return {};
  const int t =
      max_local_endpoints <= 1
          ? 0
          : static_cast<int>(std::bit_width(static_cast<unsigned>(max_local_endpoints - 1)));
  const int free_bits = tag_bits(tag_ub) - kUserTagBits < 0 ? 0 : tag_bits(tag_ub) - kUserTagBits;
  const int p = free_bits < 2 * t ? free_bits : 2 * t;
  const TagLayout channel_layout{t, p, 1 << (2 * t - p), false};
  if (channel_layout.channels <= max_channels) return channel_layout;
  const int dest_p = free_bits < t ? free_bits : t;
  return {t, dest_p, 1 << (t - dest_p), true};
}

[[nodiscard]] constexpr WireAddress encode(const TagLayout& layout, WireTag t) noexcept {
  const int pair = layout.source_in_header
                       ? t.dest_thread
                       : (t.source_thread << layout.thread_bits) | t.dest_thread;
  const int low = pair & ((1 << layout.tag_pair_bits) - 1);
  return {pair >> layout.tag_pair_bits, (t.user_tag << layout.tag_pair_bits) | low};
}

[[nodiscard]] constexpr WireTag decode(const TagLayout& layout, int channel, int tag) noexcept {
  const int pair = (channel << layout.tag_pair_bits) | (tag & ((1 << layout.tag_pair_bits) - 1));
  const int user_tag = tag >> layout.tag_pair_bits;
  if (layout.source_in_header) return {user_tag, kSourceInHeader, pair};
  const int thread_mask = (1 << layout.thread_bits) - 1;
  return {user_tag, pair >> layout.thread_bits, pair & thread_mask};
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
// Intel MPI's 2^19-1 with 256 endpoints: 4096 channels as pairs, so the
// source rides in the header; 4 destination bits in the tag, 16 channels.
static_assert(make_tag_layout((1 << 19) - 1, 256) == TagLayout{8, 4, 16, true});
static_assert(decode(make_tag_layout((1 << 19) - 1, 256), 15, (kMaxUserTag << 4) | 15) ==
              WireTag{kMaxUserTag, kSourceInHeader, 255});
static_assert(encode(make_tag_layout((1 << 19) - 1, 256), {kMaxUserTag, 200, 255}) ==
              WireAddress{15, (kMaxUserTag << 4) | 15});

}  // namespace ep
