#include "meeting.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <span>
#include <thread>

#include "ep/point_to_point.hpp"
#include "ep/typed.hpp"

namespace xios_lite::client {
namespace {

constexpr int kEntryTag = 31;    // client -> client 0
constexpr int kVerdictTag = 32;  // client 0 -> client
constexpr int kRoot = 0;

struct EntryHeader {
  std::int32_t call = 0;
  std::int32_t round = 0;
  std::int32_t error_bytes = 0;
  std::int32_t payload_bytes = 0;
};
struct VerdictHeader {
  std::int32_t round = 0;
  std::int32_t failure_bytes = 0;
  std::int32_t ranks = 0;
  std::int32_t reserved = 0;
};
static_assert(sizeof(EntryHeader) == 16 && sizeof(VerdictHeader) == 16);

// Appends raw bytes.
void put(std::vector<std::byte>& out, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const std::byte*>(data);
  out.insert(out.end(), p, p + bytes);
}

// Reads raw bytes at `at`, advancing it; false when the message is too short.
bool take(std::span<const std::byte> in, std::size_t& at, void* data, std::size_t bytes) {
  if (at + bytes > in.size()) {
    return false;
  }
  if (bytes > 0) {  // an empty vector's data() may be null, which memcpy must not see
    std::memcpy(data, in.data() + at, bytes);
  }
  at += bytes;
  return true;
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
    std::vector<std::byte> entry;
    const EntryHeader h{static_cast<std::int32_t>(call), round_,
                        static_cast<std::int32_t>(own_error.size()),
                        static_cast<std::int32_t>(payload.size())};
    put(entry, &h, sizeof h);
    put(entry, own_error.data(), own_error.size());
    put(entry, payload.data(), payload.size());
    send(std::make_shared<const std::vector<std::byte>>(std::move(entry)), kRoot, kEntryTag);
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
      std::vector<std::byte> entry;
      const EntryHeader h{static_cast<std::int32_t>(Call::kLeft), round_,
                          static_cast<std::int32_t>(why.size()), 0};
      put(entry, &h, sizeof h);
      put(entry, why.data(), why.size());
      send(std::make_shared<const std::vector<std::byte>>(std::move(entry)), kRoot, kEntryTag);
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
      std::size_t at = 0;
      EntryHeader h;
      if (!take(buf, at, &h, sizeof h) || h.round < round_) {
        waiting = waiting || !gone[q];
        continue;  // an entry of an exchange that already failed
      }
      Entry& e = entries[q];
      e.present = true;
      e.call = static_cast<Call>(h.call);
      e.error.resize(static_cast<std::size_t>(h.error_bytes));
      e.payload.resize(static_cast<std::size_t>(h.payload_bytes));
      (void)take(buf, at, e.error.data(), e.error.size());
      (void)take(buf, at, e.payload.data(), e.payload.size());
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
  std::vector<std::byte> verdict;
  const VerdictHeader vh{round_, static_cast<std::int32_t>(failure.size()),
                         static_cast<std::int32_t>(size), 0};
  put(verdict, &vh, sizeof vh);
  put(verdict, failure.data(), failure.size());
  for (Entry& e : entries) {
    const bool real = e.present && e.call != Call::kLeft;
    const std::string& error = real ? e.error : std::string();
    const auto eb = static_cast<std::int32_t>(error.size());
    const auto pb = static_cast<std::int32_t>(real ? e.payload.size() : 0);
    const std::int32_t present = e.present ? 1 : 0;
    put(verdict, &present, sizeof present);
    put(verdict, &eb, sizeof eb);
    put(verdict, &pb, sizeof pb);
    put(verdict, error.data(), error.size());
    put(verdict, e.payload.data(), static_cast<std::size_t>(pb));
    out.errors.push_back(error);
    out.present.push_back(e.present);
    out.payloads.push_back(real ? std::move(e.payload) : std::vector<std::byte>());
  }
  const auto shared = std::make_shared<const std::vector<std::byte>>(std::move(verdict));
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
      std::size_t at = 0;
      VerdictHeader vh;
      if (!take(buf, at, &vh, sizeof vh) || vh.round < round_) {
        continue;  // the verdict of an exchange this client missed
      }
      out.failure.resize(static_cast<std::size_t>(vh.failure_bytes));
      (void)take(buf, at, out.failure.data(), out.failure.size());
      for (int r = 0; r < vh.ranks; ++r) {
        std::int32_t present = 0;
        std::int32_t eb = 0;
        std::int32_t pb = 0;
        (void)take(buf, at, &present, sizeof present);
        (void)take(buf, at, &eb, sizeof eb);
        (void)take(buf, at, &pb, sizeof pb);
        std::string error(static_cast<std::size_t>(eb), '\0');
        std::vector<std::byte> payload(static_cast<std::size_t>(pb));
        (void)take(buf, at, error.data(), error.size());
        (void)take(buf, at, payload.data(), payload.size());
        out.errors.push_back(std::move(error));
        out.present.push_back(present != 0);
        out.payloads.push_back(std::move(payload));
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
