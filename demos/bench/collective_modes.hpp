// The three ways ep_collectives calls a collective, behind one small interface
// so that one timing loop (time_point) measures all of them:
//
//   EpCaller        one endpoint (thread) of an endpoint communicator of P
//                   processes x T threads: ep::barrier, ep::bcast, ...
//   MpiCaller       one single-threaded MPI process of P*T: MPI_Barrier, ...
//   FunneledCaller  one thread of P processes x T threads as hybrid models do
//                   it today: the threads combine in shared memory, the master
//                   thread alone calls MPI on the P-process communicator, the
//                   threads read the result, OpenMP barriers around.
//
// All three hold the same data per rank (rank = EP rank, MPI rank, or
// process * T + thread), so one pair of functions fills and checks it:
//   bcast      root 0; one buffer of `bytes`
//   allreduce  bytes / 8 doubles per rank, MPI_SUM
//   gather     root 0; `bytes` per block (OSU's size): every rank sends one
//              block, the root receives size * bytes in rank order
//   scatter    root 0; `bytes` per block: the root sends size * bytes, every
//              rank receives its one block
//   allgather  `bytes` per block: every rank sends one block and receives
//              every rank's, size * bytes in rank order
//   alltoall   `bytes` per block: a rank sends one block to every rank,
//              size * bytes in all; alltoallv the same with counts and
//              displacements (uniform, as OSU's osu_alltoallv)
//
// A caller offers prepare() (fill the send data, poison the receive side),
// call() (one collective, the timed operation), verify() (throws when the
// received data is wrong) and barrier() (between repetitions).
//
// Thread safety: a caller belongs to one participant; callers of one
// FunneledProcess are used by that process's OpenMP team together.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench_buffers.hpp"
#include "ep/ep.hpp"
#include "team_barrier.hpp"

namespace bench::collectives {

enum class Collective {
  kBarrier,
  kBcast,
  kAllreduce,
  kGather,
  kScatter,
  kAllgather,
  kAlltoall,
  kAlltoallv
};
/// Every collective, and its name, in the order of the enumerators.
inline constexpr Collective kCollectives[] = {
    Collective::kBarrier, Collective::kBcast,     Collective::kAllreduce, Collective::kGather,
    Collective::kScatter, Collective::kAllgather, Collective::kAlltoall,  Collective::kAlltoallv};
inline constexpr std::string_view kCollectiveNames[] = {
    "barrier", "bcast", "allreduce", "gather", "scatter", "allgather", "alltoall", "alltoallv"};
static_assert(std::size(kCollectiveNames) == std::size(kCollectives), "a name for each");
static_assert(
    [] {
      for (std::size_t i = 0; i < std::size(kCollectives); ++i) {
        if (static_cast<std::size_t>(kCollectives[i]) != i) return false;
      }
      return true;
    }(),
    "kCollectives lists Collective in the order of its values (tables are indexed by them)");

inline const char* collective_name(Collective collective) {
  return kCollectiveNames[static_cast<std::size_t>(collective)].data();
}

/// One measured collective call: what, how large, and who takes part.
struct CallShape {
  Collective collective = Collective::kBarrier;
  std::size_t bytes = 0;  ///< per rank (bcast, allreduce) or per block (the others)
  int size = 1;           ///< ranks in all (P * T in every mode)
};

/// Bytes a participant needs in each of its send and receive areas for `shape`.
std::size_t buffer_bytes(const CallShape& shape);

/// Bytes the busiest rank sends or receives per call (gather's root receives
/// size * bytes, scatter's root sends them): what the iteration count scales with.
std::size_t traffic_bytes(const CallShape& shape);

/// Fills rank `rank`'s send data for `shape` and poisons its receive area, so
/// that data left over from an earlier size cannot pass verify_rank_data.
void prepare_rank_data(const CallShape& shape, int rank, Buffers& buffers);

/// Throws std::runtime_error, naming `mode`, the rank and the first wrong
/// element, when rank `rank`'s result for `shape` is not what MPI promises.
void verify_rank_data(const CallShape& shape, int rank, Buffers& buffers, const char* mode);

/// The collectives of one MPI communicator, either blocking (Open MPI
/// busy-polls inside) or started nonblocking and completed by MPI_Test with
/// yielding backoff (bench::wait_yielding), as the endpoint layer waits.
class MpiCollectives {
 public:
  MpiCollectives(MPI_Comm comm, bool blocking) : comm_(comm), blocking_(blocking) {}

  void barrier() const;
  void bcast(void* buffer, int count, MPI_Datatype type, int root) const;
  void allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op) const;
  /// count elements per rank, for gather, scatter and allgather alike.
  void gather(const void* send, void* recv, int count, MPI_Datatype type, int root) const;
  void scatter(const void* send, void* recv, int count, MPI_Datatype type, int root) const;
  void allgather(const void* send, void* recv, int count, MPI_Datatype type) const;
  void alltoall(const void* send, void* recv, int count, MPI_Datatype type) const;
  void alltoallv(const void* send, std::span<const int> counts, std::span<const int> displs,
                 void* recv, MPI_Datatype type) const;

 private:
  MPI_Comm comm_;
  bool blocking_;
};

/// Uniform alltoallv layout: `size` blocks of `count`, packed.
struct UniformBlocks {
  UniformBlocks(int size, int count);
  std::vector<int> counts;
  std::vector<int> displs;
};

/// Mode `mpi`: one single-threaded process of the P*T.
class MpiCaller {
 public:
  MpiCaller(const MpiCollectives& mpi, const CallShape& shape, int rank, Buffers& buffers);

  void prepare() { prepare_rank_data(shape_, rank_, buffers_); }
  void call();
  void verify() { verify_rank_data(shape_, rank_, buffers_, "mpi"); }
  void barrier() { mpi_.barrier(); }

 private:
  const MpiCollectives& mpi_;
  CallShape shape_;
  int rank_;
  Buffers& buffers_;
  UniformBlocks blocks_;
};

/// Mode `ep`: one endpoint; its EP rank is its rank.
class EpCaller {
 public:
  EpCaller(const ep::Communicator& comm, const CallShape& shape, Buffers& buffers);

  void prepare() { prepare_rank_data(shape_, comm_.rank(), buffers_); }
  void call();
  void verify() { verify_rank_data(shape_, comm_.rank(), buffers_, "ep"); }
  void barrier() { ep::barrier(comm_); }

 private:
  const ep::Communicator& comm_;
  CallShape shape_;
  Buffers& buffers_;
  UniformBlocks blocks_;
};

/// What the threads of one process share in mode `funneled`: the MPI side
/// (called by the master thread only), the process-wide staging buffers and
/// every thread's own buffers (the master reads and writes its own in bcast,
/// the other threads copy from it; on process 0 it is the root of gather and
/// scatter, whose MPI call uses its buffers directly).
struct FunneledProcess {
  const MpiCollectives& mpi;  ///< over the P processes
  TeamBarrier& team;          ///< the process's threads meet here
  int process = 0;            ///< rank among the P processes
  int processes = 1;
  int threads = 1;
  Buffers& staging;                    ///< the process's combined send / received data
  std::vector<Buffers>& thread_areas;  ///< by OpenMP thread
};

/// Mode `funneled`: one thread of a process; rank = process * threads + thread.
/// Every call is collective over the process's OpenMP team (its threads meet
/// in the process's TeamBarrier), so all threads of the team call it together.
class FunneledCaller {
 public:
  FunneledCaller(FunneledProcess& process, const CallShape& shape, int thread);

  void prepare();
  void call();
  void verify() { verify_rank_data(shape_, rank_, own(), "funneled"); }
  void barrier();

 private:
  [[nodiscard]] Buffers& own() { return process_.thread_areas[static_cast<std::size_t>(thread_)]; }
  [[nodiscard]] bool master() const { return thread_ == 0; }
  void bcast();
  void allreduce();
  void stage_own_block();  ///< into the thread's slot of the process's staging send area
  void gather();
  void scatter();
  void allgather();
  void alltoall() { exchange_blocks(false); }
  void alltoallv() { exchange_blocks(true); }
  /// alltoall (v false) or alltoallv in the uniform layout (v true).
  void exchange_blocks(bool v);

  FunneledProcess& process_;
  CallShape shape_;
  int thread_;
  int rank_;
  UniformBlocks process_blocks_;  ///< MPI_Alltoallv layout over the processes
};

}  // namespace bench::collectives
