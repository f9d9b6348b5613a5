#include "environment.hpp"

#include <cmath>
#include <cstdlib>
#include <string>

#include "ep/error.hpp"
#include "ep/tag_encoding.hpp"

namespace ep::detail {

namespace {

constexpr double kDefaultWaitWarnSeconds = 60.0;

double parse_wait_warn_seconds(const char* call) {
  const char* env = std::getenv("EP_WAIT_WARN_SECONDS");
  if (env == nullptr) return kDefaultWaitWarnSeconds;
  char* end = nullptr;
  const double value = std::strtod(env, &end);
  if (end == env || *end != '\0' || !std::isfinite(value) || value < 0) {
    throw Error(ErrorKind::kArgument, call, -1,
                std::string("EP_WAIT_WARN_SECONDS='") + env +
                    "' is not a number of seconds (>= 0; 0 disables the warning)");
  }
  return value;
}

// A byte count from the environment variable `name`, or nothing when unset.
std::optional<std::size_t> bytes_from_env(const char* name, const char* call) {
  const char* env = std::getenv(name);
  if (env == nullptr) return std::nullopt;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(env, &end, 10);
  if (end == env || *end != '\0' || *env == '-') {
    throw Error(ErrorKind::kArgument, call, -1,
                std::string(name) + "='" + env + "' is not a byte count");
  }
  return static_cast<std::size_t>(value);
}

// A switch from the environment variable `name` (0 or 1), or nothing when unset.
std::optional<bool> switch_from_env(const char* name, const char* call) {
  const char* env = std::getenv(name);
  if (env == nullptr) return std::nullopt;
  const std::string value(env);
  if (value == "0") return false;
  if (value == "1") return true;
  throw Error(ErrorKind::kArgument, call, -1,
              std::string(name) + "='" + value + "' is neither 0 (off) nor 1 (on)");
}

}  // namespace

std::optional<WaitPolicy> wait_policy_from_env(const char* call) {
  const char* env = std::getenv("EP_WAIT_POLICY");
  if (env == nullptr) return std::nullopt;
  const std::string value(env);
  for (const WaitPolicy policy : {WaitPolicy::kAuto, WaitPolicy::kSpin, WaitPolicy::kPark}) {
    if (value == wait_policy_name(policy)) return policy;
  }
  throw Error(ErrorKind::kArgument, call, -1,
              "EP_WAIT_POLICY='" + value + "' is none of spin, park and auto");
}

std::optional<std::size_t> eager_threshold_from_env(const char* call) {
  return bytes_from_env("EP_EAGER_THRESHOLD", call);
}

std::optional<std::size_t> eager_cap_from_env(const char* call) {
  return bytes_from_env("EP_EAGER_CAP", call);
}

std::optional<long long> tag_ub_from_env(const char* call) {
  const char* env = std::getenv("EP_TAG_UB");
  if (env == nullptr) return std::nullopt;
  char* end = nullptr;
  const long long value = std::strtoll(env, &end, 10);
  if (end == env || *end != '\0' || value < 0) {
    throw Error(ErrorKind::kArgument, call, -1,
                std::string("EP_TAG_UB='") + env + "' is not a tag bound (an integer >= 32767)");
  }
  return value;
}

std::optional<int> tag_channels_from_env(const char* call) {
  const char* env = std::getenv("EP_TAG_CHANNELS");
  if (env == nullptr) return std::nullopt;
  char* end = nullptr;
  const long value = std::strtol(env, &end, 10);
  if (end == env || *end != '\0' || value < 1 || value > kMaxTagChannels) {
    throw Error(ErrorKind::kArgument, call, -1,
                std::string("EP_TAG_CHANNELS='") + env + "' is not a channel count (1.." +
                    std::to_string(kMaxTagChannels) + ")");
  }
  return static_cast<int>(value);
}

std::optional<bool> direct_receive_from_env(const char* call) {
  return switch_from_env("EP_DIRECT_RECEIVE", call);
}

double wait_warn_seconds(const char* call) {
  // A throwing initialiser leaves the static uninitialised: the next call
  // parses (and throws) again, so a bad value is never taken as a default.
  static const double kSeconds = parse_wait_warn_seconds(call);
  return kSeconds;
}

}  // namespace ep::detail
