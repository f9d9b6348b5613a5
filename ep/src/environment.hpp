// Run-time settings read from the environment. Each is parsed strictly: a
// value that is not entirely a number is an ep::Error naming the variable,
// never a silent zero.
#pragma once

#include <cstddef>
#include <optional>

#include "ep/backoff.hpp"

namespace ep::detail {

/// EP_EAGER_THRESHOLD in bytes, or nothing when unset. Throws
/// ep::Error(kArgument) naming `call` for a value that is not a byte count.
std::optional<std::size_t> eager_threshold_from_env(const char* call);

/// EP_EAGER_CAP in bytes, or nothing when unset. Throws ep::Error(kArgument)
/// naming `call` for a value that is not a byte count.
std::optional<std::size_t> eager_cap_from_env(const char* call);

/// EP_TAG_UB: a lower MPI_TAG_UB for the wire encoding to assume, or nothing
/// when unset. Throws ep::Error(kArgument) naming `call` for a value that is
/// not a non-negative integer.
std::optional<long long> tag_ub_from_env(const char* call);

/// EP_TAG_CHANNELS: the most channel communicators a narrow tag layout may
/// use (1..64), or nothing when unset. Throws ep::Error(kArgument) naming
/// `call` for any other value.
std::optional<int> tag_channels_from_env(const char* call);

/// EP_DIRECT_RECEIVE (0 or 1), or nothing when unset. Throws
/// ep::Error(kArgument) naming `call` for any other value.
std::optional<bool> direct_receive_from_env(const char* call);

/// EP_WAIT_POLICY (spin, park or auto), or nothing when unset. Throws
/// ep::Error(kArgument) naming `call` for any other value.
std::optional<WaitPolicy> wait_policy_from_env(const char* call);

/// EP_WAIT_WARN_SECONDS: how long a wait lasts before it warns on stderr
/// (default 60, 0 disables). Read once per process and cached; throws
/// ep::Error(kArgument) naming `call` for a value that is not a non-negative
/// number (create_endpoints reads it first, so a bad value fails there).
double wait_warn_seconds(const char* call);

}  // namespace ep::detail
