// Helpers shared by the point-to-point tests: partner choice, data patterns,
// a message-only barrier and checks of ep::Error.
//
// The endpoint layer has no collectives of its own yet, so the barrier here is
// built from point-to-point messages on a tag that no test uses for anything
// else (kBarrierTag).
//
// Thread safety: every function is called by one endpoint (thread) on its own
// Communicator handle; none keeps state between calls.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ep/ep.hpp"

namespace ep_p2p {

/// Reserved for message_barrier(); tests use tags below 32000.
inline constexpr int kBarrierTag = ep::kMaxUserTag;

/// Dissemination barrier made of messages: ceil(log2 n) rounds, in round k an
/// endpoint sends to rank + k and receives from rank - k. Every source sends
/// to a given endpoint in exactly one round per barrier, so the reused tag
/// cannot confuse rounds (and non-overtaking keeps successive barriers apart).
/// Collective over all endpoints of `comm`.
inline void message_barrier(const ep::Communicator& comm) {
  const int n = comm.size();
  const int r = comm.rank();
  char out = 1;
  char in = 0;
  for (int k = 1; k < n; k <<= 1) {
    comm.sendrecv(&out, 1, MPI_CHAR, (r + k) % n, kBarrierTag, &in, 1, MPI_CHAR, (r - k + n) % n,
                  kBarrierTag);
  }
}

/// Value of element `i` of a message from `src` to `dst` in exchange `salt`:
/// distinct for every (src, dst, i, salt) a test can produce.
inline int pattern(int src, int dst, int i, int salt = 0) {
  // Unsigned arithmetic wraps (no signed overflow); the conversion back is modular in C++20.
  const auto key =
      (static_cast<std::uint32_t>(src) * 1000U + static_cast<std::uint32_t>(dst)) * 1000U +
      static_cast<std::uint32_t>(salt);
  return static_cast<int>(key * 0x9E3779B1U + static_cast<std::uint32_t>(i));
}

inline std::vector<int> make_pattern(int src, int dst, int elems, int salt = 0) {
  std::vector<int> v(static_cast<std::size_t>(elems));
  for (int i = 0; i < elems; ++i) v[static_cast<std::size_t>(i)] = pattern(src, dst, i, salt);
  return v;
}

/// True when `v[0..elems)` holds the pattern (reports nothing).
inline bool has_pattern(const int* v, int elems, int src, int dst, int salt = 0) {
  for (int i = 0; i < elems; ++i) {
    if (v[i] != pattern(src, dst, i, salt)) return false;
  }
  return true;
}

/// Number of elements of `v[0..elems)` that differ from the pattern; reports the first.
inline int count_mismatches(const int* v, int elems, int src, int dst, int salt = 0) {
  int bad = 0;
  for (int i = 0; i < elems; ++i) {
    if (v[i] != pattern(src, dst, i, salt)) {
      if (bad == 0) {
        ADD_FAILURE() << "first mismatch at element " << i << " of a message " << src << " -> "
                      << dst << " (salt " << salt << "): got " << v[i] << ", expected "
                      << pattern(src, dst, i, salt);
      }
      ++bad;
    }
  }
  return bad;
}

inline int count_mismatches(const std::vector<int>& v, int src, int dst, int salt = 0) {
  return count_mismatches(v.data(), static_cast<int>(v.size()), src, dst, salt);
}

/// Byte pattern for messages measured in bytes.
inline unsigned char byte_pattern(int src, int seq, std::size_t k) {
  return static_cast<unsigned char>(
      (static_cast<std::size_t>(seq) * 31U + k * 7U + static_cast<std::size_t>(src) * 13U) & 0xFFU);
}

// ---- partners -------------------------------------------------------------
// Tests run with the same thread count in every process unless they say
// otherwise; these helpers still look every count up in the rank map.

/// Next endpoint of the same process (ring over the local threads): always
/// the intra-process path (itself when the process has one endpoint).
inline int intra_next(const ep::Communicator& c) {
  return c.rank_map().ep_rank(c.process_rank(), (c.local_thread() + 1) % c.local_size());
}
inline int intra_prev(const ep::Communicator& c) {
  return c.rank_map().ep_rank(c.process_rank(),
                              (c.local_thread() - 1 + c.local_size()) % c.local_size());
}

/// Same thread index in the next process (ring over the processes): the
/// inter-process path whenever there are two processes or more.
inline int inter_next(const ep::Communicator& c) {
  const ep::RankMap& m = c.rank_map();
  const int p = (c.process_rank() + 1) % m.num_processes();
  return m.ep_rank(p, c.local_thread() % m.endpoints_of(p));
}
inline int inter_prev(const ep::Communicator& c) {
  const ep::RankMap& m = c.rank_map();
  const int p = (c.process_rank() - 1 + m.num_processes()) % m.num_processes();
  return m.ep_rank(p, c.local_thread() % m.endpoints_of(p));
}

/// A ring of endpoints: this one sends to `to` and receives from `from`.
struct Ring {
  int to;
  int from;
  const char* name;
};
/// The rings of the two paths: over the threads of this process
/// (intra_next / intra_prev) and over the processes (inter_next / inter_prev).
inline std::array<Ring, 2> path_rings(const ep::Communicator& c) {
  return {Ring{intra_next(c), intra_prev(c), "intra-process ring"},
          Ring{inter_next(c), inter_prev(c), "inter-process ring"}};
}

/// Symmetric partners (an involution: partner(partner(x)) == x).
/// Intra: thread t^1 of the same process, or itself when that thread does not exist.
inline int intra_partner(const ep::Communicator& c) {
  const int t = c.local_thread() ^ 1;
  return t < c.local_size() ? c.rank_map().ep_rank(c.process_rank(), t) : c.rank();
}
/// Inter: same thread of process p^1, or itself when that process does not exist.
inline int inter_partner(const ep::Communicator& c) {
  const ep::RankMap& m = c.rank_map();
  const int p = c.process_rank() ^ 1;
  if (p >= m.num_processes() || c.local_thread() >= m.endpoints_of(p)) return c.rank();
  return m.ep_rank(p, c.local_thread());
}

inline bool same_process(const ep::Communicator& c, int ep_rank) {
  return c.rank_map().locate(ep_rank).process == c.process_rank();
}

/// Gives the core away while polling a nonblocking call in a loop (tests run
/// oversubscribed: more endpoints than cores).
inline void relax() { std::this_thread::yield(); }

// ---- errors ---------------------------------------------------------------

/// Runs `f`, expecting an ep::Error of `kind` whose what() contains every
/// string of `needles` (the call's name, the offending value). Returns the
/// error when an ep::Error of any kind was thrown, for further checks.
template <class F>
std::optional<ep::Error> expect_ep_error(F&& f, ep::ErrorKind kind,
                                         std::initializer_list<std::string> needles,
                                         const std::string& context) {
  try {
    f();
  } catch (const ep::Error& e) {
    const std::string what = e.what();
    EXPECT_STREQ(ep::name_of(e.kind()), ep::name_of(kind)) << context << ": what() = " << what;
    for (const std::string& needle : needles) {
      EXPECT_NE(what.find(needle), std::string::npos)
          << context << ": what() = \"" << what << "\" does not mention \"" << needle << "\"";
    }
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << context << ": expected ep::Error(" << ep::name_of(kind)
                  << "), got another exception: " << e.what();
    return std::nullopt;
  }
  ADD_FAILURE() << context << ": expected ep::Error(" << ep::name_of(kind) << "), nothing thrown";
  return std::nullopt;
}

}  // namespace ep_p2p
