// Calls NEMO's iom module makes through xios.h, shared by the tests that
// play NEMO (checked by their gtest `ok`) and by nemo_iom_driver (which runs
// without gtest and counts failures with its own `ok`).
#pragma once

#include <mpi.h>

#include <string>

#include "xios_lite/xios.h"

namespace xios_test {

/// The model's communicator from xios_initialize and
/// xios_context_initialize("nemo"), with this process's rank and size in it.
struct NemoClient {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
};

/// iom_init's start: joins XIOS as client "nemo" and opens context "nemo".
/// Collective over the model's processes; `ok(rc, what)` checks each call.
template <class Check>
NemoClient init_nemo_client(Check&& ok) {
  MPI_Fint fcomm = 0;
  ok(cxios_init_client("nemo", 4, nullptr, &fcomm), "xios_initialize");
  ok(cxios_context_initialize("nemo", 4, &fcomm), "xios_context_initialize");
  NemoClient c;
  c.comm = MPI_Comm_f2c(fcomm);
  MPI_Comm_rank(c.comm, &c.rank);
  MPI_Comm_size(c.comm, &c.size);
  return c;
}

/// Sets domain `d` (named `id` in the messages) to ni_glo x nj_glo points
/// of which this process holds `block` (any type with ibegin, ni, jbegin
/// and nj); `ok(rc, what)` checks each call.
template <class Block, class Check>
void set_domain_block(xios_handle_t d, const std::string& id, int ni_glo, int nj_glo,
                      const Block& block, Check&& ok) {
  ok(cxios_set_domain_ni_glo(d, ni_glo), id + " ni_glo");
  ok(cxios_set_domain_nj_glo(d, nj_glo), id + " nj_glo");
  ok(cxios_set_domain_ibegin(d, block.ibegin), id + " ibegin");
  ok(cxios_set_domain_ni(d, block.ni), id + " ni");
  ok(cxios_set_domain_jbegin(d, block.jbegin), id + " jbegin");
  ok(cxios_set_domain_nj(d, block.nj), id + " nj");
}

}  // namespace xios_test
