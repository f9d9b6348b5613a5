// MPI_Ibcast on an endpoint communicator: the root copies its buffer into
// the instance; MPI_Ibcast of that copy; every other thread copies the result
// out when it polls the completed request. With one endpoint per process the
// user's buffer goes to MPI directly.
#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "collective/aggregated_exchange.hpp"
#include "collective/nonblocking_registry.hpp"
#include "ep/collectives.hpp"
#include "team/collective_call.hpp"

namespace ep::detail {

namespace {

// Byte-count mismatch between one endpoint's buffer and the process's copy.
void check_same_bytes(const CollectiveCall& call, std::size_t mine, std::size_t process,
                      FailureSlot& failure) {
  if (mine == process) return;
  failure.record(Error(mine < process ? ErrorKind::kTruncate : ErrorKind::kCount, call.name,
                       call.rank,
                       "buffer holds " + std::to_string(mine) + " bytes, other endpoints give " +
                           std::to_string(process) + " (type signatures must match)"));
}

class Ibcast final : public NbcInstance {
 public:
  Ibcast(const CollectiveCall& call, std::shared_ptr<CommState> comm, int count, MPI_Datatype type,
         const TypeLayout& layout, int root)
      : NbcInstance(call, std::move(comm)),
        count_(count),
        type_(type),
        layout_(layout),
        root_(root),
        direct_(call.comm.rank_map().max_endpoints_per_process() == 1),
        targets_(static_cast<std::size_t>(call.local_size())) {
    if (!direct_) scratch_ = TypedScratch(count, type, call.name, call.rank);
  }

  void contribute(const CollectiveCall& call, const TypedBuffer& buffer, int root) {
    if (root != root_) {
      throw Error(ErrorKind::kRank, call.name, call.rank,
                  "root " + std::to_string(root) + " differs from root " + std::to_string(root_) +
                      " given by other endpoints of the process");
    }
    targets_[static_cast<std::size_t>(call.thread)] = buffer;
    if (direct_ || call.rank != root_) return;
    // The root's buffer is free again once its request completes, which may
    // be before the other threads copy: they copy from the instance's copy.
    check_same_bytes(call, buffer.bytes(), process_bytes(), failure());
    copy_typed(buffer, scratch_view(), std::min(buffer.bytes(), process_bytes()));
  }

 protected:
  MPI_Request start() override {
    if (comm().single_process()) return MPI_REQUEST_NULL;
    const int root_process = comm().rank_map().locate(root_).process;
    MPI_Request request = MPI_REQUEST_NULL;
    if (direct_) {
      const TypedBuffer& only = targets_[0];
      check_mpi(MPI_Ibcast(const_cast<void*>(only.buf), only.count, only.type, root_process,
                           comm().internal_comm(), &request),
                name(), call_of(0).rank);
    } else {
      check_mpi(MPI_Ibcast(scratch_.data(), count_, type_, root_process, comm().internal_comm(),
                           &request),
                name(), call_of(0).rank);
    }
    return request;
  }

  void finish(int thread, FailureSlot& mine) override {
    const CollectiveCall call = call_of(thread);
    if (direct_ || call.rank == root_) return;
    const TypedBuffer& target = targets_[static_cast<std::size_t>(thread)];
    check_same_bytes(call, target.bytes(), process_bytes(), mine);
    copy_typed(scratch_view(), target, std::min(target.bytes(), process_bytes()));
  }

 private:
  [[nodiscard]] std::size_t process_bytes() const {
    return static_cast<std::size_t>(count_) * static_cast<std::size_t>(layout_.size);
  }
  TypedBuffer scratch_view() { return scratch_.view(count_, type_, layout_); }

  int count_;
  MPI_Datatype type_;
  TypeLayout layout_;
  int root_;
  bool direct_;
  TypedScratch scratch_;
  std::vector<TypedBuffer> targets_;  // per local thread: its buffer
};

}  // namespace

}  // namespace ep::detail

namespace ep {

Request ibcast(const Communicator& comm, void* buffer, int count, MPI_Datatype datatype, int root) {
  const detail::CollectiveCall call = detail::begin_collective(comm, "ep::ibcast");
  detail::check_root(root, call.size(), call.name, call.rank);
  detail::check_count(count, call.name, call.rank);
  const detail::TypeLayout layout = detail::layout_of(datatype, call.name, call.rank);
  const detail::TypedBuffer mine{buffer, count, datatype, layout};
  return detail::start_nonblocking<detail::Ibcast>(
      comm, call,
      [&] {
        return std::make_shared<detail::Ibcast>(call, comm.state(), count, datatype, layout, root);
      },
      [&](detail::Ibcast& instance) { instance.contribute(call, mine, root); });
}

}  // namespace ep
