// neighbor_bench: the neighbourhood alltoall as MPI users call it for a halo
// exchange, on a distributed graph of a 2-D periodic grid of the launch's
// ranks (its distinct neighbours, up to 4; `bytes` per block), in three forms:
//   blocking     MPI_Neighbor_alltoall / ep::neighbor_alltoall
//   nonblocking  MPI_Ineighbor_alltoall + MPI_Wait / their ep forms
//   persistent   MPI-4's MPI_Neighbor_alltoall_init once, then MPI_Start +
//                MPI_Wait per call / ep::neighbor_alltoall_init, ep::start
// on endpoints (mode ep.<form>) and on MPI processes (mpi.<form>; the
// persistent form only where the MPI is MPI-4: Open MPI 4.1 is MPI-3.1).
// Funneled and ref have no such call and are not measured.
// Layout: kernel_bench.hpp.
//
//   mpiexec -n 1 neighbor_bench --threads 2 --backends ep   (threaded)
//   mpiexec -n 2 neighbor_bench --backends mpi              (flat)
//
// Why a graph of distinct neighbours and not a Cartesian communicator: on
// small periodic grids one rank lies in several directions, and MPIs
// disagree on which block lands in which slot then. MPI's rule for a
// Cartesian dimension of 1 or 2 ranks (block s of the sender in block s^1
// of the receiver) is met by ep's neighbourhood collectives and by Open
// MPI 4.1's blocking ones, not by its nonblocking ones (open-mpi/ompi issue
// 14430), and MPICH 4.0 mismatches repeated edges of a graph (pmodels/mpich
// pull request 7945). So each
// rank lists every neighbour rank once (its west, east, south and north
// neighbours without repeats, in rank order, itself included where a
// dimension has one rank), as a halo exchange that merges the strips for
// one rank into one message does, and no MPI has a pairing to choose.
//
// Every point checks one call first: each slot holds the block its source
// meant for this rank. Target (where both run): ep.persistent at or below
// ep.blocking (a persistent plan copies local blocks straight from the
// neighbours' send buffers, with no matching and no staging).
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ep/ep.hpp"
#include "kernel_bench.hpp"

namespace {

using bench::kernels::Backend;
constexpr const char* kBench = "neighbor_bench";

enum class Form { kBlocking, kNonblocking, kPersistent };

Form form_of(const std::string& name) {
  if (name == "blocking") return Form::kBlocking;
  if (name == "nonblocking") return Form::kNonblocking;
  if (name == "persistent") return Form::kPersistent;
  throw std::invalid_argument(std::string(kBench) + ": no form " + name);
}

// The ints rank `from` sends in its block for neighbour slot `slot`.
int pattern(int from, int slot, std::size_t i) {
  return from * 1000003 + slot * 100003 + static_cast<int>(i % 100000);
}

// The distinct neighbour ranks of `rank` on a px x py periodic grid of
// `ranks` (file comment), ascending: the graph's sources and destinations.
std::vector<int> neighbors_of(int rank, int ranks) {
  const std::pair<int, int> grid = bench::kernels::grid_of(ranks);
  const int px = grid.first;  // named ints, not a structured binding: the lambda captures them
  const int py = grid.second;
  const int x = rank % px;
  const int y = rank / px;
  const auto at = [&](int dx, int dy) { return (x + dx + px) % px + ((y + dy + py) % py) * px; };
  std::vector<int> all = {at(-1, 0), at(1, 0), at(0, -1), at(0, 1)};
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

// The slot of `to` among the neighbours of `from`: the block `from` sends it.
int slot_of(int from, int to, int ranks) {
  const std::vector<int> theirs = neighbors_of(from, ranks);
  return static_cast<int>(std::find(theirs.begin(), theirs.end(), to) - theirs.begin());
}

// Buffers and checks of one rank, shared by both backends.
struct Blocks {
  std::vector<int> neighbors;
  std::size_t ints;
  std::vector<int> out;
  std::vector<int> in;

  Blocks(int rank, int ranks, std::size_t bytes)
      : neighbors(neighbors_of(rank, ranks)),
        ints(std::max<std::size_t>(bytes / sizeof(int), 1)),
        out(ints * neighbors.size()),
        in(ints * neighbors.size()) {}

  [[nodiscard]] int degree() const { return static_cast<int>(neighbors.size()); }

  void fill(int rank) {
    for (int slot = 0; slot < degree(); ++slot) {
      for (std::size_t i = 0; i < ints; ++i) {
        out[static_cast<std::size_t>(slot) * ints + i] = pattern(rank, slot, i);
      }
    }
    std::fill(in.begin(), in.end(), -1);
  }

  void check(int rank, int ranks, const std::string& mode) const {
    for (int slot = 0; slot < degree(); ++slot) {
      const int from = neighbors[static_cast<std::size_t>(slot)];
      const int their_slot = slot_of(from, rank, ranks);
      for (std::size_t i = 0; i < ints; ++i) {
        const int expected = pattern(from, their_slot, i);
        const int got = in[static_cast<std::size_t>(slot) * ints + i];
        if (got != expected) {
          throw std::runtime_error(std::string(kBench) + ": " + mode + " on rank " +
                                   std::to_string(rank) + ": slot " + std::to_string(slot) +
                                   " int " + std::to_string(i) + " is " + std::to_string(got) +
                                   ", expected " + std::to_string(expected));
        }
      }
    }
  }
};

// A setup's first call, checked: after it every block holds its sender's
// pattern. `label` names the backend and form in a failure.
template <class Call>
void check_first_call(Call& setup, int rank, int size, const std::string& label) {
  setup.blocks.fill(rank);
  setup.call();
  setup.blocks.check(rank, size, label);
}

template <class C>
struct NeighborCall {
  NeighborCall(const C& /*comm*/, std::size_t /*bytes*/, const std::string& /*form*/) {
    throw std::logic_error(std::string(kBench) + ": runs on the ep and mpi backends only");
  }
  void call() {}
};

// Endpoints: ep's graph communicator and neighbourhood calls.
template <>
struct NeighborCall<collectives::EpComm> {
  ep::Communicator grid;
  Form form;
  Blocks blocks;
  ep::Request persistent;

  NeighborCall(const collectives::EpComm& comm, std::size_t bytes, const std::string& name)
      : form(form_of(name)), blocks(comm.rank(), comm.size(), bytes) {
    grid = ep::dist_graph_create_adjacent(comm.get(), blocks.neighbors, blocks.neighbors);
    const int count = static_cast<int>(blocks.ints);
    if (form == Form::kPersistent) {
      persistent = ep::neighbor_alltoall_init(grid, blocks.out.data(), count, MPI_INT,
                                              blocks.in.data(), count, MPI_INT);
    }
    check_first_call(*this, comm.rank(), comm.size(), "ep." + name);
  }
  NeighborCall(const NeighborCall&) = delete;
  NeighborCall& operator=(const NeighborCall&) = delete;
  ~NeighborCall() {
    if (!persistent.is_null()) ep::request_free(persistent);
    grid.free();  // collective: every endpoint ends its point together
  }

  void call() {
    const int count = static_cast<int>(blocks.ints);
    switch (form) {
      case Form::kBlocking:
        ep::neighbor_alltoall(grid, blocks.out.data(), count, MPI_INT, blocks.in.data(), count,
                              MPI_INT);
        return;
      case Form::kNonblocking: {
        ep::Request r = ep::ineighbor_alltoall(grid, blocks.out.data(), count, MPI_INT,
                                               blocks.in.data(), count, MPI_INT);
        ep::wait(r);
        return;
      }
      case Form::kPersistent:
        ep::start(persistent);
        ep::wait(persistent);
        return;
    }
  }
};

// MPI processes: MPI's own calls on an MPI graph communicator.
template <>
struct NeighborCall<collectives::MpiComm> {
  MPI_Comm grid = MPI_COMM_NULL;
  Form form;
  Blocks blocks;
  MPI_Request persistent = MPI_REQUEST_NULL;

  NeighborCall(const collectives::MpiComm& comm, std::size_t bytes, const std::string& name)
      : form(form_of(name)), blocks(comm.rank(), comm.size(), bytes) {
    bench::check_mpi(
        MPI_Dist_graph_create_adjacent(comm.get(), blocks.degree(), blocks.neighbors.data(),
                                       MPI_UNWEIGHTED, blocks.degree(), blocks.neighbors.data(),
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &grid),
        "MPI_Dist_graph_create_adjacent");
    const int count = static_cast<int>(blocks.ints);
    if (form == Form::kPersistent) {
#if MPI_VERSION >= 4
      bench::check_mpi(
          MPI_Neighbor_alltoall_init(blocks.out.data(), count, MPI_INT, blocks.in.data(), count,
                                     MPI_INT, grid, MPI_INFO_NULL, &persistent),
          "MPI_Neighbor_alltoall_init");
#else
      static_cast<void>(count);
      throw std::logic_error(std::string(kBench) + ": this MPI has no MPI_Neighbor_alltoall_init");
#endif
    }
    check_first_call(*this, comm.rank(), comm.size(), "mpi." + name);
  }
  NeighborCall(const NeighborCall&) = delete;
  NeighborCall& operator=(const NeighborCall&) = delete;
  ~NeighborCall() {
    if (persistent != MPI_REQUEST_NULL) MPI_Request_free(&persistent);
    MPI_Comm_free(&grid);
  }

  void call() {
    const int count = static_cast<int>(blocks.ints);
    switch (form) {
      case Form::kBlocking:
        bench::check_mpi(MPI_Neighbor_alltoall(blocks.out.data(), count, MPI_INT, blocks.in.data(),
                                               count, MPI_INT, grid),
                         "MPI_Neighbor_alltoall");
        return;
      case Form::kNonblocking: {
        MPI_Request r = MPI_REQUEST_NULL;
        bench::check_mpi(MPI_Ineighbor_alltoall(blocks.out.data(), count, MPI_INT, blocks.in.data(),
                                                count, MPI_INT, grid, &r),
                         "MPI_Ineighbor_alltoall");
        bench::check_mpi(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait");
        return;
      }
      case Form::kPersistent:
        bench::check_mpi(MPI_Start(&persistent), "MPI_Start");
        bench::check_mpi(MPI_Wait(&persistent, MPI_STATUS_IGNORE), "MPI_Wait");
        return;
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  return bench::kernels::run_main(
      argc, argv, kBench,
      [](bench::kernels::Harness& harness, const bench::kernels::Options& options) {
        const std::vector<std::string> algorithms =
            harness.selected_algorithms({"blocking", "nonblocking", "persistent"});
        const std::vector<std::size_t> sizes =
            options.quick ? std::vector<std::size_t>{8, 4096}
                          : std::vector<std::size_t>{8, 64, 512, 4096, 32768, 262144};
        bench::Report report(kBench);
        harness.print_launch(kBench);
        for (const std::size_t bytes : sizes) {
          for (const std::string& algorithm : algorithms) {
            for (const Backend backend : {Backend::kEp, Backend::kMpi}) {
              if (!harness.selected(backend)) continue;
              if (backend == Backend::kMpi && algorithm == "persistent" && MPI_VERSION < 4) {
                continue;
              }
              bench::Record record;
              record.test = "neighbor_alltoall";
              record.bytes = bytes;
              harness.measure(backend, algorithm, record,
                              bench::kernels::setup_calls<NeighborCall>(bytes, algorithm), report);
            }
          }
        }
        if (harness.world_rank() != 0) return;
        bench::kernels::print_backend_tables(report, "neighbor_alltoall",
                                             "neighbor_alltoall: graph of a 2-D periodic grid, 4 "
                                             "neighbours; bytes = one block; t = per call",
                                             algorithms, sizes);
        std::printf("# targets (t_avg ratios of this run)\n");
        bench::kernels::print_target(report, "neighbor_alltoall", "ep.persistent", "ep.blocking",
                                     1.0, sizes);
        bench::kernels::finish_report(report, "neighbor_alltoall", algorithms, sizes, options);
      });
}
