// The clients' collective calls (close_definition, finalise) as one exchange
// that cannot hang: every client sends its entry (which call it is in, its
// own error, its payload) to client 0, which answers everybody with all
// entries or with why the exchange failed. Unlike a collective of the
// endpoint layer it
//   - gives up after the timeout, naming the clients it waited for (client
//     0) or client 0 itself (the others);
//   - sees clients that are in different calls (one in finalise while the
//     others close the definition) and clients that left without finalise
//     (a Client destroyed by an exception sends a last entry saying so);
// and every client that takes part gets the same verdict.
//
//   wire (point-to-point on the client's private communicator, in the
//   codec's form, transport/wire_codec.hpp):
//     entry   (tag kEntryTag, to 0):   i32 call | i32 round | string error |
//                                      vector<byte> payload
//     verdict (tag kVerdictTag, from 0): i32 round | string failure | u64 ranks |
//               per rank: bool present, string error, vector<byte> payload
//
// Rounds are numbered on every client (0, 1, ...); entries and verdicts of
// an older round (a client that arrived after its exchange failed) are
// dropped. Thread safety: one Meeting per client endpoint, one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ep/communicator.hpp"
#include "ep/request.hpp"

namespace xios_lite::client {

class Meeting {
 public:
  enum class Call : std::int32_t { kCloseDefinition = 1, kFinalise = 2, kLeft = 3 };

  struct Outcome {
    std::vector<std::vector<std::byte>> payloads;  ///< by EP rank (this client's included)
    std::vector<std::string> errors;               ///< by EP rank: each client's own error
    std::vector<bool> present;  ///< by EP rank: its entry reached client 0 in time
    std::string failure;        ///< "": every client came to the same call; else why not
  };

  /// `comm`: the client's private communicator (outlives the Meeting).
  Meeting(const ep::Communicator& comm, double timeout_s) : comm_(&comm), timeout_s_(timeout_s) {}
  ~Meeting();
  Meeting(const Meeting&) = delete;
  Meeting& operator=(const Meeting&) = delete;

  /// This client's part of the exchange of `call`. `known_gone`: clients
  /// known to be gone (client 0 does not wait for them). Collective over
  /// the clients; returns within the timeout (plus the time to send).
  Outcome meet(Call call, std::span<const std::byte> payload, const std::string& own_error,
               const std::vector<int>& known_gone = {});

  /// This client leaves without finalise (`why`): its entry tells the
  /// others. Client 0 still collects the round (bounded by the timeout) and
  /// answers the others. Never throws.
  void leave(const std::string& why) noexcept;

 private:
  struct Entry {
    bool present = false;
    Call call = Call::kFinalise;
    std::string error;
    std::vector<std::byte> payload;
  };
  Outcome collect(Call call, std::span<const std::byte> payload, const std::string& own_error,
                  const std::vector<int>& known_gone);
  Outcome await_verdict(Call call);
  void send(std::shared_ptr<const std::vector<std::byte>> message, int dest, int tag);
  void settle_sends(double seconds);

  const ep::Communicator* comm_;
  double timeout_s_;
  std::int32_t round_ = 0;
  // Messages in flight and their buffers (kept until complete: the buffers
  // of sends that never complete are left allocated, see the destructor).
  std::vector<ep::Request> sends_;
  std::vector<std::shared_ptr<const std::vector<std::byte>>> outbox_;
};

[[nodiscard]] const char* to_string(Meeting::Call call) noexcept;

}  // namespace xios_lite::client
