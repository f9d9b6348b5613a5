#include "meeting.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <span>
#include <thread>

#include "ep/point_to_point.hpp"
#include "ep/typed.hpp"
#include "transport/wire_codec.hpp"

namespace xios_lite::client {
namespace {

constexpr int kEntryTag = 31;    // client -> client 0
constexpr int kVerdictTag = 32;  // client 0 -> client
constexpr int kRoot = 0;

constexpr const char* kCall = "xios_lite::Client::meeting";

// An entry: which call, which round, the client's error, its payload.
std::vector<std::byte> entry_of(Meeting::Call call, std::int32_t round, const std::string& error,
                                std::span<const std::byte> payload) {
  transport::WireWriter w;
  w.put(static_cast<std::int32_t>(call));
  w.put(round);
  w.put(error);
  w.put_vector(payload);
  return w.take();
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string text;
  for (int r : ranks) {
    text += (text.empty() ? "" : ", ") + std::to_string(r);
  }
  return "[" + text + "]";
}

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", s);
  return text;
}

// A short sleep that grows while nothing happens (waits must not starve the
// other threads of an oversubscribed node).
class Backoff {
 public:
  void pause() {
    std::this_thread::sleep_for(sleep_);
    sleep_ = std::min(sleep_ * 2, std::chrono::microseconds(500));
  }
  void reset() { sleep_ = std::chrono::microseconds(1); }

 private:
  std::chrono::microseconds sleep_{1};
};

}  // namespace

const char* to_string(Meeting::Call call) noexcept {
  switch (call) {
    case Meeting::Call::kCloseDefinition:
      return "close_definition";
    case Meeting::Call::kFinalise:
      return "finalise";
    case Meeting::Call::kLeft:
      return "none (it left without finalise)";
  }
  return "?";
}

Meeting::~Meeting() {
  for (std::size_t i = 0; i < sends_.size(); ++i) {
    if (!sends_[i].is_null()) {
      // MPI may still read a buffer whose send never completed (a client
      // gone): it is left allocated. Without memory for the small holder the
      // exception ends the program here, rather than free what MPI may read.
      // NOLINTNEXTLINE(bugprone-unhandled-exception-at-new)
      (void)new std::shared_ptr<const std::vector<std::byte>>(std::move(outbox_[i]));
    }
  }
}

void Meeting::send(std::shared_ptr<const std::vector<std::byte>> message, int dest, int tag) {
  const std::vector<std::byte>& m = *message;
  sends_.push_back(ep::isend(*comm_, std::span<const std::byte>(m), dest, tag));
  outbox_.push_back(std::move(message));
}

void Meeting::settle_sends(double seconds) {
  const double t0 = MPI_Wtime();
  Backoff backoff;
  for (;;) {
    bool all = true;
    for (ep::Request& r : sends_) {
      all = (r.is_null() || ep::test(r)) && all;
    }
    if (all) {
      sends_.clear();
      outbox_.clear();
      return;
    }
    if (MPI_Wtime() - t0 > seconds) {
      return;  // left in flight (the destructor keeps their buffers)
    }
    backoff.pause();
  }
}

Meeting::Outcome Meeting::meet(Call call, std::span<const std::byte> payload,
                               const std::string& own_error, const std::vector<int>& known_gone) {
  Outcome out;
  if (comm_->rank() == kRoot) {
    out = collect(call, payload, own_error, known_gone);
  } else {
    send(std::make_shared<const std::vector<std::byte>>(entry_of(call, round_, own_error, payload)),
         kRoot, kEntryTag);
    out = await_verdict(call);
  }
  // The verdicts to clients that never came may stay unsent: a short bound.
  settle_sends(std::min(timeout_s_, 2.0));
  ++round_;
  return out;
}

void Meeting::leave(const std::string& why) noexcept {
  try {
    if (comm_->rank() == kRoot) {
      (void)collect(Call::kLeft, {}, why, {});
    } else {
      send(std::make_shared<const std::vector<std::byte>>(entry_of(Call::kLeft, round_, why, {})),
           kRoot, kEntryTag);
    }
    settle_sends(std::min(timeout_s_, 2.0));
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): leaving in any case
  }
  ++round_;
}

Meeting::Outcome Meeting::collect(Call call, std::span<const std::byte> payload,
                                  const std::string& own_error,
                                  const std::vector<int>& known_gone) {
  const auto size = static_cast<std::size_t>(comm_->size());
  std::vector<Entry> entries(size);
  entries[kRoot] = {true, call, own_error, {payload.begin(), payload.end()}};
  std::vector<bool> gone(size, false);
  for (int r : known_gone) {
    if (r > kRoot && r < static_cast<int>(size)) {
      gone[static_cast<std::size_t>(r)] = true;
    }
  }
  const double t0 = MPI_Wtime();
  Backoff backoff;
  for (;;) {
    bool waiting = false;
    bool got = false;
    for (std::size_t q = 1; q < size; ++q) {
      if (entries[q].present) {
        continue;
      }
      std::optional<ep::Message> m = comm_->improbe(static_cast<int>(q), kEntryTag);
      if (!m) {
        waiting = waiting || !gone[q];
        continue;
      }
      std::vector<std::byte> buf(m->status().bytes);
      ep::mrecv(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, *m);
      got = true;
      transport::WireReader in(buf, kCall, comm_->rank());
      Entry& e = entries[q];
      try {
        const auto entry_call = in.get<std::int32_t>();
        if (in.get<std::int32_t>() < round_) {
          waiting = waiting || !gone[q];
          continue;  // an entry of an exchange that already failed
        }
        e.call = static_cast<Call>(entry_call);
        e.error = in.get_string();
        e.payload = in.get_vector<std::byte>();
      } catch (const common::Error& x) {
        // Present, in this call, with the codec's word for what arrived.
        e = {true, call, std::string("its entry arrived malformed (") + x.what() + ")", {}};
        continue;
      }
      e.present = true;
    }
    if (!waiting || MPI_Wtime() - t0 > timeout_s_) {
      break;
    }
    if (got) {
      backoff.reset();
    } else {
      backoff.pause();
    }
  }

  // The verdict: who left, who is elsewhere, who never came.
  std::vector<int> left;
  std::vector<int> absent;
  std::vector<int> found_gone;
  std::string elsewhere;
  std::string why_left;
  for (std::size_t q = 0; q < size; ++q) {
    const Entry& e = entries[q];
    if (!e.present) {
      (gone[q] ? found_gone : absent).push_back(static_cast<int>(q));
    } else if (e.call == Call::kLeft) {
      left.push_back(static_cast<int>(q));
      why_left = why_left.empty() ? e.error : why_left;
    } else if (e.call != call && elsewhere.empty() && call != Call::kLeft) {
      elsewhere = "client " + std::to_string(q) + " called " + to_string(e.call) +
                  " while client 0 called " + to_string(call);
    }
  }
  std::string failure;
  auto add = [&failure](const std::string& part) {
    failure += (failure.empty() ? "" : "; ") + part;
  };
  if (!left.empty()) {
    add("client" + std::string(left.size() > 1 ? "s " : " ") + ranks_text(left) +
        " left without finalise (" + why_left + ")");
  }
  if (!elsewhere.empty()) {
    add(elsewhere);
  }
  if (!found_gone.empty()) {
    add("clients " + ranks_text(found_gone) + " did not come (the servers found them gone)");
  }
  if (!absent.empty()) {
    add("timed out after " + seconds(timeout_s_) + " in " + to_string(call) +
        " waiting for clients " + ranks_text(absent));
  }

  Outcome out;
  out.failure = failure;
  transport::WireWriter verdict;
  verdict.put(round_);
  verdict.put(failure);
  verdict.put(static_cast<std::uint64_t>(size));
  for (Entry& e : entries) {
    const bool real = e.present && e.call != Call::kLeft;
    const std::string& error = real ? e.error : std::string();
    verdict.put(e.present);
    verdict.put(error);
    verdict.put_vector(real ? std::span<const std::byte>(e.payload) : std::span<const std::byte>());
    out.errors.push_back(error);
    out.present.push_back(e.present);
    out.payloads.push_back(real ? std::move(e.payload) : std::vector<std::byte>());
  }
  const auto shared = std::make_shared<const std::vector<std::byte>>(verdict.take());
  for (std::size_t q = 1; q < size; ++q) {
    if (!(entries[q].present && entries[q].call == Call::kLeft)) {
      send(shared, static_cast<int>(q), kVerdictTag);  // also to late ones: they read it later
    }
  }
  return out;
}

Meeting::Outcome Meeting::await_verdict(Call call) {
  const double t0 = MPI_Wtime();
  Backoff backoff;
  Outcome out;
  for (;;) {
    if (std::optional<ep::Message> m = comm_->improbe(kRoot, kVerdictTag)) {
      std::vector<std::byte> buf(m->status().bytes);
      ep::mrecv(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, *m);
      transport::WireReader in(buf, kCall, comm_->rank());
      try {
        if (in.get<std::int32_t>() < round_) {
          continue;  // the verdict of an exchange this client missed
        }
        out.failure = in.get_string();
        const auto ranks = in.get<std::uint64_t>();
        for (std::uint64_t r = 0; r < ranks; ++r) {
          bool present = false;
          in.get(present);
          out.errors.push_back(in.get_string());
          out.present.push_back(present);
          out.payloads.push_back(in.get_vector<std::byte>());
        }
        in.expect_done();
      } catch (const common::Error& x) {
        out = {};
        out.failure = std::string("client 0's verdict arrived malformed (") + x.what() + ")";
        return out;
      }
      const auto me = static_cast<std::size_t>(comm_->rank());
      if (me < out.present.size() && !out.present[me]) {
        out.failure =
            "this client came after client 0 gave up waiting for it (" + out.failure + ")";
      }
      return out;
    }
    if (MPI_Wtime() - t0 > timeout_s_) {
      out.failure = "timed out after " + seconds(timeout_s_) + " in " + to_string(call) +
                    " waiting for client 0 (which collects the exchange)";
      return out;
    }
    backoff.pause();
  }
}

}  // namespace xios_lite::client
