#include "context_link.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "ep/error.hpp"

namespace xios_lite::transport {
namespace {

// The fixed part of an announcement on the wire, then the name and the text.
struct Header {
  std::int32_t kind = 0;
  std::int32_t client_leader = -1;
  std::int32_t client_processes = 0;
  std::int32_t reply_tag = 0;
  std::int32_t connection_tag = 0;
  std::int32_t name_bytes = 0;
  std::uint64_t text_bytes = 0;
};

struct AnswerHeader {
  std::int32_t server_processes = 0;
  std::int32_t error_bytes = 0;
};

// Reply tags start above every fixed tag of World::control; each opening
// takes two (reply, connection) and the counter wraps well below the
// smallest MPI_TAG_UB MPI allows (32767).
constexpr int kFirstLinkTag = 100;
constexpr int kLinkTagPairs = 16000;

// Polls with a short sleep: these waits are rare (an opening, a close) and
// must not take a core from the model or the receiving threads.
void nap(int us = 100) { std::this_thread::sleep_for(std::chrono::microseconds(us)); }

}  // namespace

std::vector<char> pack(const Announcement& a) {
  Header h;
  h.kind = static_cast<std::int32_t>(a.kind);
  h.client_leader = a.client_leader;
  h.client_processes = a.client_processes;
  h.reply_tag = a.reply_tag;
  h.connection_tag = a.connection_tag;
  h.name_bytes = static_cast<std::int32_t>(a.context.size());
  h.text_bytes = a.text.size();
  std::vector<char> out(sizeof h + a.context.size() + a.text.size());
  std::memcpy(out.data(), &h, sizeof h);
  std::memcpy(out.data() + sizeof h, a.context.data(), a.context.size());
  std::memcpy(out.data() + sizeof h + a.context.size(), a.text.data(), a.text.size());
  return out;
}

std::optional<Announcement> unpack_announcement(const std::vector<char>& bytes) {
  Header h;
  if (bytes.size() < sizeof h) {
    return std::nullopt;
  }
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.kind < static_cast<std::int32_t>(LinkKind::kOpen) ||
      h.kind > static_cast<std::int32_t>(LinkKind::kStop) || h.name_bytes < 0 ||
      bytes.size() - sizeof h != static_cast<std::uint64_t>(h.name_bytes) + h.text_bytes) {
    return std::nullopt;
  }
  Announcement a;
  a.kind = static_cast<LinkKind>(h.kind);
  a.client_leader = h.client_leader;
  a.client_processes = h.client_processes;
  a.reply_tag = h.reply_tag;
  a.connection_tag = h.connection_tag;
  const char* at = bytes.data() + sizeof h;
  a.context.assign(at, static_cast<std::size_t>(h.name_bytes));
  a.text.assign(at + h.name_bytes, h.text_bytes);
  return a;
}

std::vector<char> pack_answer(const std::string& error, int server_processes) {
  AnswerHeader h{server_processes, static_cast<std::int32_t>(error.size())};
  std::vector<char> out(sizeof h + error.size());
  std::memcpy(out.data(), &h, sizeof h);
  std::memcpy(out.data() + sizeof h, error.data(), error.size());
  return out;
}

std::optional<std::pair<std::string, int>> unpack_answer(const std::vector<char>& bytes) {
  AnswerHeader h;
  if (bytes.size() < sizeof h) {
    return std::nullopt;
  }
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.error_bytes < 0 || bytes.size() - sizeof h != static_cast<std::size_t>(h.error_bytes)) {
    return std::nullopt;
  }
  return std::pair{std::string(bytes.data() + sizeof h, static_cast<std::size_t>(h.error_bytes)),
                   static_cast<int>(h.server_processes)};
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

}  // namespace xios_lite::transport
