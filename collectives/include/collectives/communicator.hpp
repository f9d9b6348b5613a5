// The communicator interface every kernel of collectives/ is written against,
// and its three backends.
//
// A kernel is a function template over `collectives::Communicator C`: the same
// code runs with MPI processes (MpiComm), with endpoint threads (EpComm, any
// layout, including processes with different thread counts) and with the
// funneled form of today's hybrid models (FunneledComm: one MPI rank per
// process, its OpenMP threads pack and unpack, only the calling thread calls
// MPI). Calls are resolved at compile time: no virtual call per message.
//
//   template <collectives::Communicator C>
//   void shift(const C& comm, std::span<const double> out, std::span<double> in) {
//     std::array<typename C::Request, 2> reqs{
//         collectives::irecv(comm, in, (comm.rank() + comm.size() - 1) % comm.size(), 0),
//         collectives::isend(comm, out, (comm.rank() + 1) % comm.size(), 0)};
//     comm.wait_all(reqs);
//   }
//
// What a backend provides (checked by the concept below):
//   rank(), size()                  this rank and the rank count (local)
//   isend / irecv (void*, count, MPI_Datatype, peer, tag) -> Request
//   wait_all(span<Request>)         completes and nulls every request
//   post_sized_receives / finish_sized_receives
//                                   receives whose messages may have another
//                                   size than their buffers (alltoallv's check
//                                   at the receivers; MpiComm and EpComm only)
//   split(color, key) -> C          collective; MPI_UNDEFINED gives a null handle
//   library_alltoallv, library_allreduce
//                                   the underlying library's own collective
//   dist_graph(sources, destinations) -> C, and neighbor_alltoallv on it
//                                   the library's neighbourhood collective
//   kernel_comm() -> const C&       the communicator the kernels send their own
//                                   point-to-point messages on (below); valid
//                                   while the handle it was asked of lives
//   private_split(color, key) -> C  split() for a plan's own use: its
//                                   kernel_comm() is itself
//   parallel_for(n, f)              f(i) for i in [0, n): serial for EP and MPI
//                                   ranks (a rank is one thread), shared by the
//                                   OpenMP team for FunneledComm
//   backend()                       "ep", "mpi" or "funneled" (benchmark modes)
//
// Handles are cheap to copy; copies share one communicator. A communicator
// made by split() or dist_graph() is released when the last copy is destroyed
// (MPI_Comm_free or ep::Communicator::free, which are collective: every rank
// destroys its copies, in the same order as the other communicators it frees).
//
// The kernels' own messages. No kernel sends on the caller's communicator,
// so every tag and MPI_ANY_TAG stay the user's: a receive with MPI_ANY_TAG
// (or EP's) may be posted on it while any kernel runs. A kernel's point-to-
// point traffic goes to kernel_comm(): a duplicate of the caller's
// communicator, made by the first kernel call on it (collective, as that
// call is) and cached on the communicator itself, as MPI libraries cache
// their inner communicators (PETSc's PetscCommDuplicate):
//   MpiComm, FunneledComm  an MPI attribute of the wrapped MPI_Comm; its
//                          delete callback frees the duplicate when the user
//                          frees the communicator (MPI_Comm_free). A
//                          duplicate cached on MPI_COMM_WORLD is left to
//                          MPI_Finalize. Every wrapper of one MPI_Comm finds
//                          the same duplicate.
//   EpComm                 a process-wide table keyed by the endpoint
//                          communicator's state: each endpoint holds its own
//                          handle of one ep::dup. The endpoint layer has no
//                          attribute callbacks, so the duplicate is not freed
//                          with the user's communicator: once every handle of
//                          that is gone, the table drops its handles at the
//                          next first use of another communicator, and the
//                          duplicate's MPI communicators stay until
//                          MPI_Finalize, as for any endpoint communicator
//                          never freed.
// A wrapper also remembers the duplicate after its first lookup, so a
// wrapper kept between calls pays no lookup per call. Plans (HaloPlan,
// TransposePlan) own communicators made by private_split(), which are
// already private: kernel_comm() of those is themselves, no second copy.
//
// Thread safety: as for the wrapped communicator. An EpComm is used by its own
// thread; an MpiComm by one thread at a time; a FunneledComm by the master
// thread outside any OpenMP parallel region (its parallel_for opens one).
// kernel_comm() follows the same rule (it fills the wrapper's memory of the
// duplicate); the threads of one process that run kernel_comm() for their
// endpoints at once share the EP table under a mutex, held for the lookup
// only (never across ep::dup, which waits for the process's other endpoints).
#pragma once

#include <mpi.h>

#include <concepts>
#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/datatype.hpp"
#include "common/error.hpp"

namespace collectives {

template <class C>
concept Communicator = std::copyable<C> &&
    requires(const C& c, std::span<typename C::Request> requests, const void* sendbuf,
             void* recvbuf, int n, MPI_Datatype type, MPI_Op op, std::span<const int> ints,
             void (*body)(int)) {
  typename C::Request;
  { c.rank() } -> std::same_as<int>;
  { c.size() } -> std::same_as<int>;
  { c.isend(sendbuf, n, type, n, n) } -> std::same_as<typename C::Request>;
  { c.irecv(recvbuf, n, type, n, n) } -> std::same_as<typename C::Request>;
  c.wait_all(requests);
  { c.split(n, n) } -> std::same_as<C>;
  { c.is_null() } -> std::same_as<bool>;
  { c.kernel_comm() } -> std::same_as<const C&>;
  { c.private_split(n, n) } -> std::same_as<C>;
  c.library_alltoallv(sendbuf, ints, ints, recvbuf, ints, ints, type);
  c.library_allreduce(sendbuf, recvbuf, n, type, op);
  { c.dist_graph(ints, ints) } -> std::same_as<C>;
  c.neighbor_alltoallv(sendbuf, ints, ints, recvbuf, ints, ints, type);
  c.parallel_for(n, body);
  { c.backend() } -> std::convertible_to<std::string_view>;
};

// ---- typed forms: the datatype comes from T (common::datatype_of) ----

template <Communicator C, common::HasDatatype T>
[[nodiscard]] typename C::Request isend(const C& comm, std::span<const T> data, int dest, int tag) {
  return comm.isend(data.data(), common::count_of(data.size(), "collectives::isend", comm.rank()),
                    common::datatype_of<T>(), dest, tag);
}

template <Communicator C, common::HasDatatype T>
[[nodiscard]] typename C::Request irecv(const C& comm, std::span<T> data, int source, int tag) {
  return comm.irecv(data.data(), common::count_of(data.size(), "collectives::irecv", comm.rank()),
                    common::datatype_of<T>(), source, tag);
}

/// One receive whose message may hold another number of elements than its
/// buffer has room for (collectives::alltoallv's check at the receivers).
struct SizedReceive {
  /// `received` when a message was longer than `count` and the backend does
  /// not say by how much (EP reports the truncation, not the size).
  static constexpr int kLonger = -1;
  void* buf = nullptr;
  int count = 0;  ///< room in `buf`, in elements
  int source = 0;
  int received = 0;  ///< out: the elements the message held, or kLonger
};

// ---------------------------------------------------------------------------
/// The two library backends differ only in the handle they wrap and how each
/// operation calls the library: BasicComm's operations are defined once per
/// backend, MPI's in src/mpi_comm.cpp and the endpoint layer's (EpBackend,
/// collectives/ep_comm.hpp) in src/ep_comm.cpp, so that a program using only
/// MpiComm and FunneledComm links common and MPI, not the endpoint runtime.
struct MpiBackend {
  using Handle = MPI_Comm;
  using Request = MPI_Request;
  static constexpr std::string_view kName = "mpi";
};

/// A communicator of one library: MpiComm (a plain MPI communicator) or EpComm
/// (one endpoint of an endpoint communicator: each thread is a rank).
/// Wrapping an existing handle does not take ownership (for EpComm: the caller
/// frees it); communicators made by split() and dist_graph() are owned.
template <class Backend>
class BasicComm {
 public:
  using Handle = typename Backend::Handle;
  using Request = typename Backend::Request;

  BasicComm() = default;  ///< null handle
  /// Wraps `comm` (not owned). Local.
  explicit BasicComm(const Handle& comm);

  [[nodiscard]] int rank() const noexcept { return rank_; }
  [[nodiscard]] int size() const noexcept { return size_; }
  [[nodiscard]] bool is_null() const noexcept;
  /// The wrapped handle (MPI_COMM_NULL, or a null ep::Communicator, for a null one).
  [[nodiscard]] const Handle& get() const noexcept;
  [[nodiscard]] static constexpr std::string_view backend() noexcept { return Backend::kName; }

  /// MPI_Isend or the endpoint's isend. Point-to-point.
  [[nodiscard]] Request isend(const void* buf, int count, MPI_Datatype type, int dest,
                              int tag) const;
  /// MPI_Irecv or the endpoint's irecv. Point-to-point.
  [[nodiscard]] Request irecv(void* buf, int count, MPI_Datatype type, int source, int tag) const;
  /// Completes every request (MPI_Waitall or ep::wait_all).
  void wait_all(std::span<Request> requests) const;

  /// Receives one message with `tag` from each receive's source, whatever
  /// its size, in two halves around the caller's sends: post, then (after
  /// the sends were appended to `requests`) finish, which completes every
  /// request and fills each receive's `received`. A message that fits lands
  /// in `buf`; a longer one never overruns it and is consumed all the same,
  /// so a size mismatch leaves no message behind and throws nothing here.
  ///   EP:  post = ep irecvs (first in `requests`); ep consumes a longer
  ///        message, fails only its request with kTruncate (-> kLonger).
  ///   MPI: post does nothing; finish matches each message by probe
  ///        (MPI_Improbe over the sources still waited for, so no order is
  ///        imposed) and receives it with MPI_Mrecv at its own size, a longer
  ///        one into `spill`. A truncated MPI receive would go through an
  ///        error handler (Open MPI: the communicator's, MPICH:
  ///        MPI_COMM_WORLD's), which aborts by default.
  /// Failures other than a size difference throw common::Error after every
  /// request is complete. Point-to-point; the calling thread only.
  void post_sized_receives(std::span<SizedReceive> receives, MPI_Datatype type, int tag,
                           std::vector<Request>& requests) const;
  void finish_sized_receives(std::span<SizedReceive> receives, MPI_Datatype type, int tag,
                             std::vector<Request>& requests, std::vector<std::byte>& spill) const;

  /// MPI_Comm_split or ep::split. Collective.
  [[nodiscard]] BasicComm split(int color, int key) const;
  /// split() for a communicator no user sees (a plan's): the kernels may
  /// send on it directly, so its kernel_comm() is itself. Collective.
  [[nodiscard]] BasicComm private_split(int color, int key) const {
    BasicComm out = split(color, key);
    out.private_ = true;
    return out;
  }
  /// The communicator the kernels send their own messages on (see the file
  /// comment): this one when it is private, else its cached duplicate.
  /// Collective the first time on a communicator (it makes the duplicate:
  /// every rank calls it, as every rank calls the kernel that asks), local
  /// and cheap afterwards (no copy, no lookup). The reference lives as long
  /// as this handle. Throws common::Error naming the MPI or ep call that failed.
  /// Thread safety: as the wrapper's other calls.
  [[nodiscard]] const BasicComm& kernel_comm() const {
    if (private_ || comm_ == nullptr) return *this;
    if (kernel_ == nullptr) kernel_ = std::make_shared<const BasicComm>(find_kernel_comm());
    return *kernel_;
  }
  /// Whether the kernels send on this communicator itself (kernel_comm()
  /// returns it): made by kernel_comm() or private_split().
  [[nodiscard]] bool is_private() const noexcept { return private_; }
  /// MPI_Dist_graph_create_adjacent (unweighted, no reorder) or
  /// ep::dist_graph_create_adjacent. Collective.
  [[nodiscard]] BasicComm dist_graph(std::span<const int> sources,
                                     std::span<const int> destinations) const;

  /// MPI_Alltoallv, or ep::alltoallv (hierarchical, aggregated per process
  /// pair). Collective.
  void library_alltoallv(const void* sendbuf, std::span<const int> sendcounts,
                         std::span<const int> sdispls, void* recvbuf,
                         std::span<const int> recvcounts, std::span<const int> rdispls,
                         MPI_Datatype type) const;
  /// MPI_Allreduce or ep::allreduce (sendbuf may be MPI_IN_PLACE). Collective.
  void library_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type,
                         MPI_Op op) const;
  /// MPI_Neighbor_alltoallv or ep::neighbor_alltoallv on a communicator made
  /// by dist_graph(). Collective.
  void neighbor_alltoallv(const void* sendbuf, std::span<const int> sendcounts,
                          std::span<const int> sdispls, void* recvbuf,
                          std::span<const int> recvcounts, std::span<const int> rdispls,
                          MPI_Datatype type) const;

  /// f(i) for i in [0, n), on the calling thread (an MPI rank or an endpoint
  /// is one thread).
  template <class F>
  void parallel_for(int n, F&& f) const {
    for (int i = 0; i < n; ++i) f(i);
  }

 private:
  /// Takes ownership of `comm` (freed with the last copy).
  static BasicComm adopt(Handle comm);
  /// Finds or makes the cached duplicate (communicator.cpp).
  [[nodiscard]] BasicComm find_kernel_comm() const;

  std::shared_ptr<Handle> comm_;
  int rank_ = -1;
  int size_ = 0;
  bool private_ = false;
  // The duplicate found by this wrapper's first kernel_comm() (null before);
  // filled from a const call, under the wrapper's one-thread-at-a-time rule.
  mutable std::shared_ptr<const BasicComm> kernel_;
};

// ---------------------------------------------------------------------------
/// The operations each library backend defines in its own source file
/// (src/mpi_comm.cpp, src/ep_comm.cpp), declared as explicit specialisations
/// of `Comm` (a BasicComm) after its alias so that every use sees them. One
/// list for both backends: a new backend operation is declared here once.
#define COLLECTIVES_DECLARE_BACKEND_OPERATIONS(Comm)                                             \
  template <>                                                                                    \
  Comm::BasicComm(const Comm::Handle& comm);                                                     \
  template <>                                                                                    \
  Comm Comm::adopt(Comm::Handle comm);                                                           \
  template <>                                                                                    \
  bool Comm::is_null() const noexcept;                                                           \
  template <>                                                                                    \
  const Comm::Handle& Comm::get() const noexcept;                                                \
  template <>                                                                                    \
  void Comm::wait_all(std::span<Comm::Request> requests) const;                                  \
  template <>                                                                                    \
  void Comm::post_sized_receives(std::span<SizedReceive> receives, MPI_Datatype type, int tag,   \
                                 std::vector<Comm::Request>& requests) const;                    \
  template <>                                                                                    \
  void Comm::finish_sized_receives(std::span<SizedReceive> receives, MPI_Datatype type, int tag, \
                                   std::vector<Comm::Request>& requests,                         \
                                   std::vector<std::byte>& spill) const;                         \
  template <>                                                                                    \
  Comm Comm::split(int color, int key) const;                                                    \
  template <>                                                                                    \
  Comm Comm::find_kernel_comm() const;                                                           \
  template <>                                                                                    \
  Comm Comm::dist_graph(std::span<const int> sources, std::span<const int> destinations) const;  \
  template <>                                                                                    \
  void Comm::library_alltoallv(const void* sendbuf, std::span<const int> sendcounts,             \
                               std::span<const int> sdispls, void* recvbuf,                      \
                               std::span<const int> recvcounts, std::span<const int> rdispls,    \
                               MPI_Datatype type) const;                                         \
  template <>                                                                                    \
  void Comm::library_allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, \
                               MPI_Op op) const;                                                 \
  template <>                                                                                    \
  void Comm::neighbor_alltoallv(const void* sendbuf, std::span<const int> sendcounts,            \
                                std::span<const int> sdispls, void* recvbuf,                     \
                                std::span<const int> recvcounts, std::span<const int> rdispls,   \
                                MPI_Datatype type) const

/// A plain MPI communicator. Its operations are defined in src/mpi_comm.cpp.
using MpiComm = BasicComm<MpiBackend>;
COLLECTIVES_DECLARE_BACKEND_OPERATIONS(MpiComm);

// The per-message calls stay inline.
template <>
[[nodiscard]] inline MPI_Request MpiComm::isend(const void* buf, int count, MPI_Datatype type,
                                                int dest, int tag) const {
  MPI_Request request = MPI_REQUEST_NULL;
  common::check_mpi(MPI_Isend(buf, count, type, dest, tag, get(), &request), "collectives::isend",
                    rank_);
  return request;
}
template <>
[[nodiscard]] inline MPI_Request MpiComm::irecv(void* buf, int count, MPI_Datatype type, int source,
                                                int tag) const {
  MPI_Request request = MPI_REQUEST_NULL;
  common::check_mpi(MPI_Irecv(buf, count, type, source, tag, get(), &request), "collectives::irecv",
                    rank_);
  return request;
}

// The rest of the class is compiled once, in src/mpi_comm.cpp.
extern template class BasicComm<MpiBackend>;

// ---------------------------------------------------------------------------
/// Funneled hybrid form: one MPI rank per process, `threads` OpenMP threads
/// share every pack/unpack loop (parallel_for), only the calling (master)
/// thread calls MPI. Call the kernels from outside a parallel region.
class FunneledComm : public MpiComm {
 public:
  FunneledComm() = default;
  /// Wraps `comm` (not owned); `threads` >= 1 share the loops.
  FunneledComm(MPI_Comm comm, int threads);

  [[nodiscard]] static constexpr std::string_view backend() noexcept { return "funneled"; }
  [[nodiscard]] int threads() const noexcept { return threads_; }

  [[nodiscard]] FunneledComm split(int color, int key) const;
  [[nodiscard]] FunneledComm private_split(int color, int key) const;
  /// MpiComm::kernel_comm() with this team's threads (remembered as there).
  [[nodiscard]] const FunneledComm& kernel_comm() const {
    if (is_private() || is_null()) return *this;
    if (funneled_kernel_ == nullptr) {
      funneled_kernel_.reset(new FunneledComm(MpiComm::kernel_comm(), threads_));
    }
    return *funneled_kernel_;
  }
  [[nodiscard]] FunneledComm dist_graph(std::span<const int> sources,
                                        std::span<const int> destinations) const;

  /// f(i) for i in [0, n), shared statically by the team of threads().
  template <class F>
  void parallel_for(int n, F&& f) const {
#pragma omp parallel for num_threads(threads_) schedule(static) default(none) shared(f, n)
    for (int i = 0; i < n; ++i) f(i);
  }

 private:
  FunneledComm(MpiComm base, int threads) : MpiComm(std::move(base)), threads_(threads) {}
  int threads_ = 1;
  mutable std::shared_ptr<const FunneledComm> funneled_kernel_;  // as BasicComm's kernel_
};

static_assert(Communicator<MpiComm>);
static_assert(Communicator<FunneledComm>);

}  // namespace collectives
