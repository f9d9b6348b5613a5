// What a server process writes with: the definitions (the configuration
// completed with what the model set), the record assembly and the writer
// thread, and the input read for recv_field. The model may size its domains
// and set its calendar at run time, so all four are made when client 0's completed definitions
// arrive (transport kContextDefinition, the first event of client 0 in every channel after
// close_definition): the first receiving endpoint to get them makes them, the others find them made
// and check that theirs are the same. Until then the receiving endpoints keep aside the events that
// need them (receiver.cpp).
//
// Thread safety: define() and the accessors may be called by any receiving
// thread; made() publishes the assembly with release/acquire, so a thread
// that sees it non-null sees the writer and the definitions complete.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "input_store.hpp"
#include "record_assembly.hpp"
#include "server_process.hpp"
#include "writer_thread.hpp"

namespace xios_lite::server {

class ProcessContext {
 public:
  ProcessContext(Config parsed, const ServerProcess& process, MPI_Comm servers_comm,
                 std::atomic<std::size_t>& bytes_in_flight)
      : cfg_(std::move(parsed)),
        process_(process),
        servers_comm_(servers_comm),
        in_flight_(bytes_in_flight) {}
  ~ProcessContext();
  ProcessContext(const ProcessContext&) = delete;
  ProcessContext& operator=(const ProcessContext&) = delete;

  /// Completes the definitions with client 0's (a kContextDefinition
  /// payload) and makes the assembly and the writer, once; a later call
  /// checks that its definitions are the same. Returns "" or what is wrong.
  std::string define(std::span<const std::byte> payload);

  /// The record assembly once defined, else nullptr.
  [[nodiscard]] RecordAssembly* assembly() const {
    return assembly_ready_.load(std::memory_order_acquire);
  }
  /// The writer once defined, else nullptr.
  [[nodiscard]] WriterThread* writer() const {
    return assembly() != nullptr ? writer_.get() : nullptr;
  }
  /// What recv_field reads (call only once assembly() is non-null).
  [[nodiscard]] const InputStore& inputs() const { return *inputs_; }
  /// The completed definitions (call only once assembly() is non-null).
  [[nodiscard]] const Config& config() const { return cfg_; }

 private:
  std::mutex mutex_;
  Config cfg_;
  ServerProcess process_;
  MPI_Comm servers_comm_;
  std::atomic<std::size_t>& in_flight_;
  std::uint64_t digest_ = 0;
  std::string error_;  // a failed define, for every later call
  std::unique_ptr<InputStore> inputs_;
  std::unique_ptr<WriterThread> writer_;
  std::unique_ptr<RecordAssembly> assembly_;
  std::atomic<RecordAssembly*> assembly_ready_{nullptr};
};

}  // namespace xios_lite::server
