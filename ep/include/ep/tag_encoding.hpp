// Wire tag of an inter-process endpoint message:
//
//   bit 30 ............ 16 | 15 ........ 8 | 7 ......... 0
//          user tag (15)    | source thread | dest thread
//
// User tags are therefore 0..32767 (the MPI minimum guarantee) and a process
// has at most 256 endpoints. The encoding needs MPI_TAG_UB >= 2^31 - 1, which
// create_endpoints() checks.
#pragma once

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

}  // namespace ep
