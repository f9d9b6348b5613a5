// Completing a nonblocking request the two ways a program can: ep::wait, or
// ep::test polled in a loop (which drives progress from the caller's side).
// Tests that compare the nonblocking calls with the blocking ones run both.
#pragma once

#include <gtest/gtest.h>

#include <thread>

#include "ep/request.hpp"

namespace ep_test {

enum class Completion { kWait, kTestLoop };

/// "wait" or "test loop", for the failures' messages.
inline const char* name_of(Completion how) {
  return how == Completion::kTestLoop ? "test loop" : "wait";
}

/// Completes `request` by `how` and expects it null afterwards. Local: the
/// calling endpoint's request only; yields between tests so that threads
/// sharing the cores keep running.
inline void complete(ep::Request& request, Completion how) {
  if (how == Completion::kTestLoop) {
    while (!ep::test(request)) std::this_thread::yield();
  } else {
    ep::wait(request);
  }
  EXPECT_TRUE(request.is_null());
}

}  // namespace ep_test
