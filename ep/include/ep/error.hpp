// The endpoint layer's errors are the project's one error type
// (common/error.hpp): every ep call throws ep::Error, which is
// common::Error, naming the call, the endpoint rank and the offending value.
// The names below let ep's users and code say ep:: as before.
#pragma once

#include "common/error.hpp"

namespace ep {

using common::check_mpi;
using common::Error;
using common::ErrorKind;
using common::kErrorKindCount;
using common::name_of;

}  // namespace ep
