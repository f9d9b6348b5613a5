// What an ep_comm_t (ep/ep.h) points to, for other libraries' C interfaces
// (xios_lite/xios_lite.h takes an ep_comm_t and needs the communicator).
// C++ only; C and Fortran code sees the handle as opaque.
#pragma once

#include "ep/comm_management.hpp"
#include "ep/communicator.hpp"
#include "ep/ep.h"

// An intercommunicator handle (ep_intercomm_create) leaves `comm` null and
// holds `inter`: the C interface, like MPI, has one handle type for both.
struct ep_comm_s {
  ep::Communicator comm;
  ep::InterCommunicator inter;
};
