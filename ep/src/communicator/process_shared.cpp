// share_in_process: the constructors' leader pattern (team/on_leader.hpp)
// for an object of the caller's, handed to every local endpoint.
#include "ep/process_shared.hpp"

#include <functional>
#include <memory>

#include "team/collective_call.hpp"
#include "team/on_leader.hpp"

namespace ep::detail {

std::shared_ptr<void> share_in_process(const Communicator& comm, const char* call,
                                       const std::function<std::shared_ptr<void>()>& make) {
  CollectiveCall context = begin_collective(comm, call);
  return on_leader<std::shared_ptr<void>>(context, make);
}

}  // namespace ep::detail
