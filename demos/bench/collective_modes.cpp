#include "collective_modes.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "bench_mpi.hpp"

namespace bench::collectives {

namespace {

constexpr unsigned char kPoison = 0xA5;  // what a receive area holds before the check call
constexpr int kRoot = 0;

// Data bytes that differ per position, per block and per size; mod a prime so
// that no block repeats with a power-of-two period a wrong offset could hit.
unsigned char pattern_byte(std::size_t seed, std::size_t k) {
  return static_cast<unsigned char>((seed + 7 * k + (k >> 8)) % 251);
}

std::size_t bcast_seed(std::size_t bytes) { return bytes; }

std::size_t block_seed(int source, int dest, std::size_t bytes) {
  return static_cast<std::size_t>(source) * 1009 + static_cast<std::size_t>(dest) * 31 + bytes;
}

// The block rank `source` contributes to gather and allgather: the same for
// every receiver, so seeded as the block it sends the root.
std::size_t contribution_seed(int source, std::size_t bytes) {
  return block_seed(source, kRoot, bytes);
}

void fill(std::byte* data, std::size_t n, std::size_t seed) {
  auto* bytes = reinterpret_cast<unsigned char*>(data);
  for (std::size_t k = 0; k < n; ++k) bytes[k] = pattern_byte(seed, k);
}

// The first byte of `data` that differs from the pattern, or n.
std::size_t first_mismatch(const std::byte* data, std::size_t n, std::size_t seed) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(data);
  for (std::size_t k = 0; k < n; ++k) {
    if (bytes[k] != pattern_byte(seed, k)) return k;
  }
  return n;
}

// Allreduce inputs: small integers, so every order of summation gives the
// exact value and the check needs no tolerance.
double allreduce_input(int rank, std::size_t i) {
  return static_cast<double>(rank + 1) + static_cast<double>(i % 13);
}

double allreduce_sum(int size, std::size_t i) {
  return static_cast<double>(size) * (size + 1) / 2 +
         static_cast<double>(size) * static_cast<double>(i % 13);
}

[[noreturn]] void wrong_data(const char* mode, const CallShape& shape, int rank,
                             const std::string& what) {
  throw std::runtime_error(std::string(mode) + " " + collective_name(shape.collective) + " of " +
                           std::to_string(shape.bytes) + " B: rank " + std::to_string(rank) +
                           " received wrong data: " + what);
}

int to_int(std::size_t n) { return static_cast<int>(n); }  // sizes are checked against INT_MAX

// Fills the send area with shape.size blocks of shape.bytes, the block for
// rank d from seed_of(d).
template <class SeedOf>
void fill_blocks(const CallShape& shape, Buffers& buffers, SeedOf seed_of) {
  for (int dest = 0; dest < shape.size; ++dest) {
    fill(buffers.send(static_cast<std::size_t>(dest) * shape.bytes), shape.bytes, seed_of(dest));
  }
}

// Throws unless the block of shape.bytes at `data`, received from rank
// `source`, holds the pattern of `seed`.
void verify_block(const char* mode, const CallShape& shape, int rank, const std::byte* data,
                  std::size_t seed, int source) {
  const std::size_t k = first_mismatch(data, shape.bytes, seed);
  if (k != shape.bytes) {
    wrong_data(mode, shape, rank,
               "byte " + std::to_string(k) + " of the block from rank " + std::to_string(source));
  }
}

// Checks the shape.size blocks of the receive area: block s came from rank s
// with the pattern of seed_of(s).
template <class SeedOf>
void verify_blocks(const char* mode, const CallShape& shape, int rank, Buffers& buffers,
                   SeedOf seed_of) {
  for (int source = 0; source < shape.size; ++source) {
    verify_block(mode, shape, rank, buffers.recv(static_cast<std::size_t>(source) * shape.bytes),
                 seed_of(source), source);
  }
}

// Runs the blocking MPI call, or starts the nonblocking one and waits with
// yielding backoff; both report errors naming the call.
template <class Blocking, class Start>
void complete(bool blocking, const char* blocking_name, Blocking&& blocking_call,
              const char* start_name, Start&& start_call) {
  if (blocking) {
    check_mpi(blocking_call(), blocking_name);
    return;
  }
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(start_call(&request), start_name);
  wait_yielding(request, start_name);
}

}  // namespace

std::size_t buffer_bytes(const CallShape& shape) {
  switch (shape.collective) {
    case Collective::kBarrier:
      return 0;
    case Collective::kBcast:
    case Collective::kAllreduce:
      return shape.bytes;
    case Collective::kGather:
    case Collective::kScatter:
    case Collective::kAllgather:
    case Collective::kAlltoall:
    case Collective::kAlltoallv:
      return static_cast<std::size_t>(shape.size) * shape.bytes;
  }
  return 0;
}

std::size_t traffic_bytes(const CallShape& shape) { return buffer_bytes(shape); }

void prepare_rank_data(const CallShape& shape, int rank, Buffers& buffers) {
  const std::size_t n = buffer_bytes(shape);
  if (n == 0) return;  // barrier
  buffers.reserve(n);
  std::memset(buffers.recv(), kPoison, n);
  switch (shape.collective) {
    case Collective::kBarrier:
      return;
    case Collective::kBcast:
      // One buffer, as MPI_Bcast has: the root's holds the data.
      if (rank == kRoot) fill(buffers.recv(), n, bcast_seed(shape.bytes));
      return;
    case Collective::kAllreduce: {
      auto* send = reinterpret_cast<double*>(buffers.send());
      for (std::size_t i = 0; i < n / sizeof(double); ++i) send[i] = allreduce_input(rank, i);
      return;
    }
    case Collective::kGather:
    case Collective::kAllgather:
      fill(buffers.send(), shape.bytes, contribution_seed(rank, shape.bytes));
      return;
    case Collective::kScatter:
      // MPI reads the send area at the root only: block d is rank d's.
      if (rank == kRoot) {
        fill_blocks(shape, buffers, [&](int dest) { return block_seed(kRoot, dest, shape.bytes); });
      }
      return;
    case Collective::kAlltoall:
    case Collective::kAlltoallv:
      fill_blocks(shape, buffers, [&](int dest) { return block_seed(rank, dest, shape.bytes); });
      return;
  }
}

void verify_rank_data(const CallShape& shape, int rank, Buffers& buffers, const char* mode) {
  switch (shape.collective) {
    case Collective::kBarrier:
      // Nothing to read back; the tests of ep check that no endpoint leaves early.
      return;
    case Collective::kBcast: {
      const std::size_t k = first_mismatch(buffers.recv(), shape.bytes, bcast_seed(shape.bytes));
      if (k != shape.bytes) wrong_data(mode, shape, rank, "byte " + std::to_string(k));
      return;
    }
    case Collective::kAllreduce: {
      const auto* recv = reinterpret_cast<const double*>(buffers.recv());
      for (std::size_t i = 0; i < shape.bytes / sizeof(double); ++i) {
        if (recv[i] != allreduce_sum(shape.size, i)) {
          wrong_data(mode, shape, rank,
                     "element " + std::to_string(i) + " is " + std::to_string(recv[i]) +
                         ", expected " + std::to_string(allreduce_sum(shape.size, i)));
        }
      }
      return;
    }
    case Collective::kGather:
      // Only the root receives (MPI leaves the others' receive areas alone).
      if (rank == kRoot) {
        verify_blocks(mode, shape, rank, buffers,
                      [&](int source) { return contribution_seed(source, shape.bytes); });
      }
      return;
    case Collective::kScatter:
      verify_block(mode, shape, rank, buffers.recv(), block_seed(kRoot, rank, shape.bytes), kRoot);
      return;
    case Collective::kAllgather:
      verify_blocks(mode, shape, rank, buffers,
                    [&](int source) { return contribution_seed(source, shape.bytes); });
      return;
    case Collective::kAlltoall:
    case Collective::kAlltoallv:
      verify_blocks(mode, shape, rank, buffers,
                    [&](int source) { return block_seed(source, rank, shape.bytes); });
      return;
  }
}

// ---------------------------------------------------------------- MPI side ----

void MpiCollectives::barrier() const {
  complete(
      blocking_, "MPI_Barrier", [&] { return MPI_Barrier(comm_); }, "MPI_Ibarrier",
      [&](MPI_Request* r) { return MPI_Ibarrier(comm_, r); });
}

void MpiCollectives::bcast(void* buffer, int count, MPI_Datatype type, int root) const {
  complete(
      blocking_, "MPI_Bcast", [&] { return MPI_Bcast(buffer, count, type, root, comm_); },
      "MPI_Ibcast",
      [&](MPI_Request* r) { return MPI_Ibcast(buffer, count, type, root, comm_, r); });
}

void MpiCollectives::allreduce(const void* send, void* recv, int count, MPI_Datatype type,
                               MPI_Op op) const {
  complete(
      blocking_, "MPI_Allreduce", [&] { return MPI_Allreduce(send, recv, count, type, op, comm_); },
      "MPI_Iallreduce",
      [&](MPI_Request* r) { return MPI_Iallreduce(send, recv, count, type, op, comm_, r); });
}

void MpiCollectives::gather(const void* send, void* recv, int count, MPI_Datatype type,
                            int root) const {
  complete(
      blocking_, "MPI_Gather",
      [&] { return MPI_Gather(send, count, type, recv, count, type, root, comm_); }, "MPI_Igather",
      [&](MPI_Request* r) {
        return MPI_Igather(send, count, type, recv, count, type, root, comm_, r);
      });
}

void MpiCollectives::scatter(const void* send, void* recv, int count, MPI_Datatype type,
                             int root) const {
  complete(
      blocking_, "MPI_Scatter",
      [&] { return MPI_Scatter(send, count, type, recv, count, type, root, comm_); },
      "MPI_Iscatter",
      [&](MPI_Request* r) {
        return MPI_Iscatter(send, count, type, recv, count, type, root, comm_, r);
      });
}

void MpiCollectives::allgather(const void* send, void* recv, int count, MPI_Datatype type) const {
  complete(
      blocking_, "MPI_Allgather",
      [&] { return MPI_Allgather(send, count, type, recv, count, type, comm_); }, "MPI_Iallgather",
      [&](MPI_Request* r) {
        return MPI_Iallgather(send, count, type, recv, count, type, comm_, r);
      });
}

void MpiCollectives::alltoall(const void* send, void* recv, int count, MPI_Datatype type) const {
  complete(
      blocking_, "MPI_Alltoall",
      [&] { return MPI_Alltoall(send, count, type, recv, count, type, comm_); }, "MPI_Ialltoall",
      [&](MPI_Request* r) {
        return MPI_Ialltoall(send, count, type, recv, count, type, comm_, r);
      });
}

void MpiCollectives::alltoallv(const void* send, std::span<const int> counts,
                               std::span<const int> displs, void* recv, MPI_Datatype type) const {
  complete(
      blocking_, "MPI_Alltoallv",
      [&] {
        return MPI_Alltoallv(send, counts.data(), displs.data(), type, recv, counts.data(),
                             displs.data(), type, comm_);
      },
      "MPI_Ialltoallv",
      [&](MPI_Request* r) {
        return MPI_Ialltoallv(send, counts.data(), displs.data(), type, recv, counts.data(),
                              displs.data(), type, comm_, r);
      });
}

UniformBlocks::UniformBlocks(int size, int count)
    : counts(static_cast<std::size_t>(size), count), displs(static_cast<std::size_t>(size)) {
  for (int j = 0; j < size; ++j) displs[static_cast<std::size_t>(j)] = j * count;
}

namespace {

// The collectives of one endpoint in MpiCollectives' form (the same count on
// every rank, one type), over the endpoint layer's blocking calls.
class EpCollectives {
 public:
  explicit EpCollectives(const ep::Communicator& comm) : comm_(comm) {}
  void barrier() const { ep::barrier(comm_); }
  void bcast(void* buffer, int count, MPI_Datatype type, int root) const {
    ep::bcast(comm_, buffer, count, type, root);
  }
  void allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op) const {
    ep::allreduce(comm_, send, recv, count, type, op);
  }
  void gather(const void* send, void* recv, int count, MPI_Datatype type, int root) const {
    ep::gather(comm_, send, count, type, recv, count, type, root);
  }
  void scatter(const void* send, void* recv, int count, MPI_Datatype type, int root) const {
    ep::scatter(comm_, send, count, type, recv, count, type, root);
  }
  void allgather(const void* send, void* recv, int count, MPI_Datatype type) const {
    ep::allgather(comm_, send, count, type, recv, count, type);
  }
  void alltoall(const void* send, void* recv, int count, MPI_Datatype type) const {
    ep::alltoall(comm_, send, count, type, recv, count, type);
  }
  void alltoallv(const void* send, std::span<const int> counts, std::span<const int> displs,
                 void* recv, MPI_Datatype type) const {
    ep::alltoallv(comm_, send, counts, displs, type, recv, counts, displs, type);
  }

 private:
  const ep::Communicator& comm_;
};

// One call of `shape` through `ops` (MpiCollectives, EpCollectives) on one
// rank's buffers: bytes as MPI_BYTE (allreduce: doubles summed), the root
// kRoot, alltoallv in the uniform layout `blocks`.
template <class Collectives>
void call_collective(const Collectives& ops, const CallShape& shape, Buffers& buffers,
                     const UniformBlocks& blocks) {
  const int bytes = to_int(shape.bytes);
  switch (shape.collective) {
    case Collective::kBarrier:
      ops.barrier();
      return;
    case Collective::kBcast:
      ops.bcast(buffers.recv(), bytes, MPI_BYTE, kRoot);
      return;
    case Collective::kAllreduce:
      ops.allreduce(buffers.send(), buffers.recv(), bytes / to_int(sizeof(double)), MPI_DOUBLE,
                    MPI_SUM);
      return;
    case Collective::kGather:
      ops.gather(buffers.send(), buffers.recv(), bytes, MPI_BYTE, kRoot);
      return;
    case Collective::kScatter:
      ops.scatter(buffers.send(), buffers.recv(), bytes, MPI_BYTE, kRoot);
      return;
    case Collective::kAllgather:
      ops.allgather(buffers.send(), buffers.recv(), bytes, MPI_BYTE);
      return;
    case Collective::kAlltoall:
      ops.alltoall(buffers.send(), buffers.recv(), bytes, MPI_BYTE);
      return;
    case Collective::kAlltoallv:
      ops.alltoallv(buffers.send(), blocks.counts, blocks.displs, buffers.recv(), MPI_BYTE);
      return;
  }
}

}  // namespace

// -------------------------------------------------------------------- mpi ----

MpiCaller::MpiCaller(const MpiCollectives& mpi, const CallShape& shape, int rank, Buffers& buffers)
    : mpi_(mpi),
      shape_(shape),
      rank_(rank),
      buffers_(buffers),
      blocks_(shape.size, to_int(shape.bytes)) {}

void MpiCaller::call() { call_collective(mpi_, shape_, buffers_, blocks_); }

// --------------------------------------------------------------------- ep ----

EpCaller::EpCaller(const ep::Communicator& comm, const CallShape& shape, Buffers& buffers)
    : comm_(comm), shape_(shape), buffers_(buffers), blocks_(shape.size, to_int(shape.bytes)) {}

void EpCaller::call() { call_collective(EpCollectives(comm_), shape_, buffers_, blocks_); }

// --------------------------------------------------------------- funneled ----

FunneledCaller::FunneledCaller(FunneledProcess& process, const CallShape& shape, int thread)
    : process_(process),
      shape_(shape),
      thread_(thread),
      rank_(process.process * process.threads + thread),
      process_blocks_(process.processes, to_int(shape.bytes) * process.threads * process.threads) {}

void FunneledCaller::prepare() {
  prepare_rank_data(shape_, rank_, own());
  // allreduce combines every thread's input: all must be in place first.
  process_.team.arrive_and_wait();
}

void FunneledCaller::call() {
  // Indexed by Collective (the order of kCollectives).
  static constexpr void (FunneledCaller::*kCalls[])() = {
      &FunneledCaller::barrier,  &FunneledCaller::bcast,    &FunneledCaller::allreduce,
      &FunneledCaller::gather,   &FunneledCaller::scatter,  &FunneledCaller::allgather,
      &FunneledCaller::alltoall, &FunneledCaller::alltoallv};
  static_assert(std::size(kCalls) == std::size(kCollectives), "a call for each collective");
  (this->*kCalls[static_cast<std::size_t>(shape_.collective)])();
}

void FunneledCaller::barrier() {
  // All threads here, then the processes meet, then the threads go on.
  process_.team.arrive_and_wait();
  if (master()) process_.mpi.barrier();
  process_.team.arrive_and_wait();
}

void FunneledCaller::bcast() {
  // The master receives straight into its own buffer (on process 0 it is the
  // root's data), the other threads copy from there.
  std::byte* master_area = process_.thread_areas.front().recv();
  if (master()) process_.mpi.bcast(master_area, to_int(shape_.bytes), MPI_BYTE, kRoot);
  process_.team.arrive_and_wait();
  if (!master()) std::memcpy(own().recv(), master_area, shape_.bytes);
  // The next call's MPI_Bcast overwrites the master's buffer.
  process_.team.arrive_and_wait();
}

void FunneledCaller::allreduce() {
  // Threads combine in parallel, each summing one slice of the vector over
  // every thread's input (not one thread summing everything).
  const std::size_t count = shape_.bytes / sizeof(double);
  const auto threads = static_cast<std::size_t>(process_.threads);
  const auto thread = static_cast<std::size_t>(thread_);
  auto* combined = reinterpret_cast<double*>(process_.staging.send());
  for (std::size_t i = count * thread / threads; i < count * (thread + 1) / threads; ++i) {
    double sum = 0.0;
    for (Buffers& area : process_.thread_areas)
      sum += reinterpret_cast<const double*>(area.send())[i];
    combined[i] = sum;
  }
  process_.team.arrive_and_wait();
  if (master()) {
    process_.mpi.allreduce(process_.staging.send(), process_.staging.recv(), to_int(count),
                           MPI_DOUBLE, MPI_SUM);
  }
  process_.team.arrive_and_wait();
  // No barrier after the copy: the next call writes the staging send area
  // first, and MPI writes the receive area only after the next barrier.
  std::memcpy(own().recv(), process_.staging.recv(), shape_.bytes);
}

// gather, scatter and allgather: rank = process * T + thread, so a process's
// T blocks are contiguous in rank order and travel as one block of T * bytes
// of the MPI call over the processes; each thread's block sits at its thread
// number in the process's staging area.

void FunneledCaller::stage_own_block() {
  std::memcpy(process_.staging.send(static_cast<std::size_t>(thread_) * shape_.bytes), own().send(),
              shape_.bytes);
}

void FunneledCaller::gather() {
  stage_own_block();
  process_.team.arrive_and_wait();
  // On process 0 the master is the root (rank 0): MPI writes its own
  // receive area directly, every block in rank order.
  if (master()) {
    process_.mpi.gather(process_.staging.send(), own().recv(),
                        to_int(shape_.bytes) * process_.threads, MPI_BYTE, kRoot);
  }
  // The next call stages into the area the master's MPI_Gather reads.
  process_.team.arrive_and_wait();
}

void FunneledCaller::scatter() {
  // The previous call's threads have copied their blocks out of the area
  // that MPI writes now.
  process_.team.arrive_and_wait();
  // On process 0 the master is the root (rank 0): MPI reads its own send
  // area directly.
  if (master()) {
    process_.mpi.scatter(own().send(), process_.staging.recv(),
                         to_int(shape_.bytes) * process_.threads, MPI_BYTE, kRoot);
  }
  process_.team.arrive_and_wait();
  std::memcpy(own().recv(), process_.staging.recv(static_cast<std::size_t>(thread_) * shape_.bytes),
              shape_.bytes);
}

void FunneledCaller::allgather() {
  stage_own_block();
  process_.team.arrive_and_wait();
  if (master()) {
    process_.mpi.allgather(process_.staging.send(), process_.staging.recv(),
                           to_int(shape_.bytes) * process_.threads, MPI_BYTE);
  }
  process_.team.arrive_and_wait();
  // No barrier after the copy, as in alltoall: the next call writes the
  // staging send area first, and MPI writes the receive area only after the
  // next barrier.
  std::memcpy(own().recv(), process_.staging.recv(), buffer_bytes(shape_));
}

void FunneledCaller::exchange_blocks(bool v) {
  const std::size_t block = shape_.bytes;
  const auto threads = static_cast<std::size_t>(process_.threads);
  const auto thread = static_cast<std::size_t>(thread_);
  // Pack: the block for global rank d goes to slot [d][thread], so that each
  // destination process gets one message, and in it each destination
  // thread's blocks from all our threads sit together in rank order.
  for (std::size_t d = 0; d < static_cast<std::size_t>(shape_.size); ++d) {
    std::memcpy(process_.staging.send((d * threads + thread) * block), own().send(d * block),
                block);
  }
  process_.team.arrive_and_wait();
  if (master()) {
    Buffers& staging = process_.staging;
    if (v) {
      process_.mpi.alltoallv(staging.send(), process_blocks_.counts, process_blocks_.displs,
                             staging.recv(), MPI_BYTE);
    } else {
      process_.mpi.alltoall(staging.send(), staging.recv(), process_blocks_.counts.front(),
                            MPI_BYTE);
    }
  }
  process_.team.arrive_and_wait();
  // Unpack: from process p, this thread's T blocks (one per source thread)
  // are contiguous and belong at ranks p*T .. p*T+T-1.
  for (std::size_t p = 0; p < static_cast<std::size_t>(process_.processes); ++p) {
    std::memcpy(own().recv(p * threads * block),
                process_.staging.recv(((p * threads) + thread) * threads * block), threads * block);
  }
}

}  // namespace bench::collectives
