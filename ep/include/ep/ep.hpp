// Umbrella header of the endpoint layer.
#pragma once

#include "ep/collectives.hpp"
#include "ep/comm_management.hpp"
#include "ep/communicator.hpp"
#include "ep/error.hpp"
#include "ep/point_to_point.hpp"
#include "ep/process_shared.hpp"
#include "ep/rank_map.hpp"
#include "ep/request.hpp"
#include "ep/tag_encoding.hpp"
#include "ep/topology.hpp"
#include "ep/typed.hpp"
