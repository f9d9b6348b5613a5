// What an ep_comm_t (ep/ep.h) points to, for other libraries' C interfaces
// (xios_lite/xios_lite.h takes an ep_comm_t and needs the communicator).
// C++ only; C and Fortran code sees the handle as opaque.
#pragma once

#include "ep/communicator.hpp"
#include "ep/ep.h"

struct ep_comm_s {
  ep::Communicator comm;
};
