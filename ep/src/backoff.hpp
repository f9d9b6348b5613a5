// The layer's wait policy (ep/backoff.hpp) under the name its sources use.
#pragma once

#include <atomic>

#include "ep/backoff.hpp"

namespace ep::detail {

using Backoff = ep::Backoff;

/// TEST ONLY (p2p/test_hooks.hpp, set_park_micros): when positive, how long
/// a parked waiter sleeps without a notification instead of kParkMicros, so
/// that a test can tell a waiter woken by its publisher from one that woke
/// on its own.
extern std::atomic<int> g_park_micros_for_tests;

}  // namespace ep::detail
