// The layer's wait policy (ep/backoff.hpp) under the name its sources use.
#pragma once

#include "ep/backoff.hpp"

namespace ep::detail {

using Backoff = ep::Backoff;

}  // namespace ep::detail
