#include "context_link.hpp"

#include <atomic>
#include <chrono>
#include <span>
#include <thread>

#include "ep/error.hpp"
#include "transport/wire_codec.hpp"

namespace xios_lite::transport {
namespace {

// The bytes of a writer as the char buffer send_within takes.
std::vector<char> chars_of(const WireWriter& w) {
  const std::vector<std::byte>& b = w.bytes();
  const auto* p = reinterpret_cast<const char*>(b.data());
  return {p, p + b.size()};
}

// Reply tags start above every fixed tag of World::control; each opening
// takes two (reply, connection) and the counter wraps well below the
// smallest MPI_TAG_UB MPI allows (32767).
constexpr int kFirstLinkTag = 100;
constexpr int kLinkTagPairs = 16000;

// Polls with a short sleep: these waits are rare (an opening, a close) and
// must not take a core from the model or the receiving threads.
void nap(int us = 100) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

}  // namespace

// An announcement: i32 kind, client leader, client processes, reply tag,
// connection tag, then the context's name and the text as strings.
std::vector<char> pack(const Announcement& a) {
  WireWriter w;
  w.put(static_cast<std::int32_t>(a.kind));
  w.put(static_cast<std::int32_t>(a.client_leader));
  w.put(static_cast<std::int32_t>(a.client_processes));
  w.put(static_cast<std::int32_t>(a.reply_tag));
  w.put(static_cast<std::int32_t>(a.connection_tag));
  w.put(a.context);
  w.put(a.text);
  return chars_of(w);
}

std::optional<Announcement> unpack_announcement(const std::vector<char>& bytes) {
  WireReader in(std::as_bytes(std::span<const char>(bytes)), "xios_lite::unpack_announcement");
  Announcement a;
  try {
    const auto kind = in.get<std::int32_t>();
    if (kind < static_cast<std::int32_t>(LinkKind::kOpen) ||
        kind > static_cast<std::int32_t>(LinkKind::kStop)) {
      return std::nullopt;
    }
    a.kind = static_cast<LinkKind>(kind);
    a.client_leader = in.get<std::int32_t>();
    a.client_processes = in.get<std::int32_t>();
    a.reply_tag = in.get<std::int32_t>();
    a.connection_tag = in.get<std::int32_t>();
    a.context = in.get_string();
    a.text = in.get_string();
    in.expect_done();
  } catch (const common::Error&) {
    return std::nullopt;
  }
  return a;
}

// The answer: i32 server processes, then the error as a string.
std::vector<char> pack_answer(const std::string& error, int server_processes) {
  WireWriter w;
  w.put(static_cast<std::int32_t>(server_processes));
  w.put(error);
  return chars_of(w);
}

std::optional<std::pair<std::string, int>> unpack_answer(const std::vector<char>& bytes) {
  WireReader in(std::as_bytes(std::span<const char>(bytes)), "xios_lite::unpack_answer");
  try {
    const auto processes = in.get<std::int32_t>();
    std::string error = in.get_string();
    in.expect_done();
    return std::pair{std::move(error), static_cast<int>(processes)};
  } catch (const common::Error&) {
    return std::nullopt;
  }
}

std::pair<int, int> next_link_tags() {
  static std::atomic<int> next{0};
  const int n = next.fetch_add(1, std::memory_order_relaxed) % kLinkTagPairs;
  return {kFirstLinkTag + 2 * n, kFirstLinkTag + 2 * n + 1};
}

std::optional<std::vector<char>> receive_within(MPI_Comm comm, int source, int tag, double limit_s,
                                                int* from, int nap_us) {
  constexpr const char* kCall = "xios_lite::receive_within";
  const double t0 = MPI_Wtime();
  for (;;) {
    int found = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    ep::check_mpi(MPI_Improbe(source, tag, comm, &found, &message, &status), kCall, -1);
    if (found != 0) {
      int count = 0;
      ep::check_mpi(MPI_Get_count(&status, MPI_CHAR, &count), kCall, -1);
      std::vector<char> bytes(static_cast<std::size_t>(count));
      ep::check_mpi(MPI_Mrecv(bytes.data(), count, MPI_CHAR, &message, MPI_STATUS_IGNORE), kCall,
                    -1);
      if (from != nullptr) {
        *from = status.MPI_SOURCE;
      }
      return bytes;
    }
    if (MPI_Wtime() - t0 > limit_s) {
      return std::nullopt;
    }
    nap(nap_us);
  }
}

bool wait_within(MPI_Request& request, double limit_s) {
  const double t0 = MPI_Wtime();
  for (;;) {
    int done = 0;
    ep::check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test", -1);
    if (done != 0) {
      return true;
    }
    if (MPI_Wtime() - t0 > limit_s) {
      return false;
    }
    nap();
  }
}

bool send_within(std::vector<char> bytes, int dest, int tag, MPI_Comm comm, double limit_s) {
  MPI_Request request = MPI_REQUEST_NULL;
  ep::check_mpi(
      MPI_Isend(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, dest, tag, comm, &request),
      "MPI_Isend", -1);
  if (wait_within(request, limit_s)) {
    return true;
  }
  // Never matched (the receiver is gone): MPI may still read the buffer.
  ep::check_mpi(MPI_Request_free(&request), "MPI_Request_free", -1);
  // NOLINTNEXTLINE(cppcoreguidelines-owning-memory): MPI may still read it
  (void)new std::vector<char>(std::move(bytes));
  return false;
}

void require_open_contexts_world(const World& world, Role role, const char* call,
                                 const char* wrong_role, const char* not_opened) {
  if (world.role != role) throw ep::Error(ep::ErrorKind::kArgument, call, -1, wrong_role);
  if (!world.open_contexts || world.control == MPI_COMM_NULL) {
    throw ep::Error(ep::ErrorKind::kArgument, call, -1, not_opened);
  }
}

}  // namespace xios_lite::transport
