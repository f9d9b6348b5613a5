#include "funnel.hpp"

#include "ep/process_shared.hpp"

namespace xios_lite::client {
namespace {

// ep mode: every thread works for itself.
class EachThread final : public Funnel {
 public:
  explicit EachThread(const ep::Communicator& comm) : Funnel(comm, true) {}

  [[nodiscard]] bool per_process() const noexcept override { return false; }
  [[nodiscard]] bool has_servers() const noexcept override { return true; }

  ep::InterCommunicator connect(const ep::Communicator& comm, const World& world,
                                int tag) override {
    return ep::create_intercomm(comm, 0, world.world, world.server_leader, tag);
  }

  std::string from_speaker(const char* /*call*/, const std::string& value) override {
    return value;
  }
  void barrier(const char* /*call*/) override {}

  bool arrive(const char* call, const std::string& own_error) override {
    if (!own_error.empty()) {
      fail(call, own_error);
    }
    return true;
  }
  void depart(const char* call, const std::string& /*own_error*/, const Failure& outcome) override {
    if (!outcome.detail.empty()) {
      throw ep::Error(outcome.kind, call, rank(), outcome.detail);
    }
  }

  void deposit(const std::string& /*id*/, std::span<const double> values) override {
    part_ = values;
  }
  std::span<const std::span<const double>> parts(const std::string& /*id*/,
                                                 std::string& /*error*/) override {
    return {&part_, 1};
  }

  void share_masks(const BlockMasks& mine) override { masks_ = &mine; }
  [[nodiscard]] const BlockMasks& masks_of(int /*thread*/) const override { return *masks_; }

  std::string share_finish(FinishOutcome& /*outcome*/, bool& at_arrival) override {
    at_arrival = false;
    return "";
  }
  void leave(const std::string& /*why*/) noexcept override {}

 private:
  std::span<const double> part_;
  const BlockMasks* masks_ = nullptr;
};

// The slots the threads of one process meet at (see the publication rule
// in the header).
struct ProcessSlots {
  explicit ProcessSlots(int threads)
      : sync(threads),
        parts(static_cast<std::size_t>(threads)),
        ids(static_cast<std::size_t>(threads)),
        errors(static_cast<std::size_t>(threads)),
        masks(static_cast<std::size_t>(threads), nullptr) {}

  TimedBarrier sync;
  std::vector<std::span<const double>> parts;  // per thread: its values for this call
  std::vector<std::string> ids;                // per thread: the field id of this call
  std::vector<std::string> errors;             // per thread: its own argument error
  std::vector<const BlockMasks*> masks;        // per thread, during close_definition
  std::string error;                           // master: the outcome of the call
  FinishOutcome finish;                        // master: what finalise learnt
};

// The funneled modes: the master (local thread 0) works for its process.
class ThroughMaster : public Funnel {
 public:
  ThroughMaster(const ep::Communicator& comm, double timeout_s, BrokenHook on_broken)
      : Funnel(comm, comm.local_thread() == 0),
        slots_(ep::share_in_process<ProcessSlots>(
            comm, [&] { return std::make_shared<ProcessSlots>(comm.local_size()); })),
        me_(static_cast<std::size_t>(comm.local_thread())),
        timeout_s_(timeout_s),
        on_broken_(std::move(on_broken)) {}

  [[nodiscard]] bool per_process() const noexcept override { return true; }

  std::string from_speaker(const char* call, const std::string& value) override {
    if (speaks()) {
      slots_->error = value;
    }
    barrier(call);
    std::string out = slots_->error;
    barrier(call);
    return out;
  }

  void barrier(const char* call) override {
    const std::string broken = slots_->sync.arrive_and_wait(timeout_s_);
    if (!broken.empty()) {
      on_broken_(broken);
      fail(call, broken);
    }
  }

  bool arrive(const char* call, const std::string& own_error) override {
    ProcessSlots& s = *slots_;
    s.errors[me_] = own_error;
    barrier(call);
    if (!speaks()) {
      return false;
    }
    s.error.clear();
    for (std::size_t t = 0; t < s.errors.size() && s.error.empty(); ++t) {
      if (!s.errors[t].empty()) {
        s.error = "thread " + std::to_string(t) + " of this process: " + s.errors[t];
      }
    }
    return s.error.empty();
  }

  void depart(const char* call, const std::string& own_error, const Failure& outcome) override {
    ProcessSlots& s = *slots_;
    if (speaks() && s.error.empty()) {
      s.error = outcome.detail;
    }
    barrier(call);
    if (!own_error.empty()) {
      fail(call, own_error);
    }
    if (!s.error.empty()) {
      fail(call, s.error);
    }
  }

  void deposit(const std::string& id, std::span<const double> values) override {
    slots_->parts[me_] = values;
    slots_->ids[me_] = id;
  }

  std::span<const std::span<const double>> parts(const std::string& id,
                                                 std::string& error) override {
    for (const std::string& other : slots_->ids) {
      if (other != id) {
        error = std::string("threads of one process sent different fields together ('")
                    .append(id)
                    .append("' and '")
                    .append(other)
                    .append("')");
        return {};
      }
    }
    return slots_->parts;
  }

  void share_masks(const BlockMasks& mine) override { slots_->masks[me_] = &mine; }
  [[nodiscard]] const BlockMasks& masks_of(int thread) const override {
    return *slots_->masks[static_cast<std::size_t>(thread)];
  }

  std::string share_finish(FinishOutcome& outcome, bool& at_arrival) override {
    ProcessSlots& s = *slots_;
    // The other threads may still be reading the previous call's outcome
    // in `s.error` (depart() publishes it at its last barrier): the master
    // writes the slots only once every thread has arrived here.
    std::string broken = s.sync.arrive_and_wait(timeout_s_);
    at_arrival = !broken.empty();
    if (broken.empty() && speaks()) {
      s.finish = outcome;
    }
    if (broken.empty()) {
      broken = s.sync.arrive_and_wait(timeout_s_);
    }
    if (broken.empty()) {
      outcome = s.finish;
      broken = s.sync.arrive_and_wait(timeout_s_);
    }
    return broken;
  }

  void leave(const std::string& why) noexcept override {
    slots_->sync.leave("thread " + std::to_string(me_) + " of this process left: " + why);
  }

 private:
  std::shared_ptr<ProcessSlots> slots_;
  std::size_t me_;
  double timeout_s_;
  BrokenHook on_broken_;
};

// funneled: the masters speak to the servers.
class MasterToServers final : public ThroughMaster {
 public:
  using ThroughMaster::ThroughMaster;
  [[nodiscard]] bool has_servers() const noexcept override { return true; }

  ep::InterCommunicator connect(const ep::Communicator& comm, const World& world,
                                int tag) override {
    ep::InterCommunicator inter;
    ep::Communicator masters = ep::split(comm, speaks() ? 0 : MPI_UNDEFINED, comm.rank());
    if (speaks()) {
      inter = ep::create_intercomm(masters, 0, world.world, world.server_leader, tag);
      masters.free();
    }
    return inter;
  }
};

// synchronous: the masters write the files, there is no server.
class MasterToFiles final : public ThroughMaster {
 public:
  using ThroughMaster::ThroughMaster;
  [[nodiscard]] bool has_servers() const noexcept override { return false; }

  ep::InterCommunicator connect(const ep::Communicator& /*comm*/, const World& /*world*/,
                                int /*tag*/) override {
    return {};
  }
};

}  // namespace

std::unique_ptr<Funnel> Funnel::make(Mode mode, const ep::Communicator& comm, double timeout_s,
                                     BrokenHook on_broken) {
  switch (mode) {
    case Mode::kFunneled:
      return std::make_unique<MasterToServers>(comm, timeout_s, std::move(on_broken));
    case Mode::kSynchronous:
      return std::make_unique<MasterToFiles>(comm, timeout_s, std::move(on_broken));
    case Mode::kEndpoints:
      break;
  }
  return std::make_unique<EachThread>(comm);
}

}  // namespace xios_lite::client
