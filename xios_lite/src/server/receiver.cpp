#include "receiver.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <optional>
#include <thread>

#include "transport/event.hpp"

namespace xios_lite::server {
namespace {

// The clients still expected to finalise, named for a timeout message.
std::string missing_clients(const std::vector<bool>& finished) {
  std::string which;
  for (std::size_t c = 0; c < finished.size(); ++c) {
    if (!finished[c]) {
      which += (which.empty() ? "" : ", ") + std::to_string(c);
    }
  }
  return which;
}

}  // namespace

ReceiverOutcome receive_until_finalised(const ep::InterCommunicator& inter,
                                        RecordAssembly& assembly, const WriterThread& writer,
                                        double timeout_s) {
  const int clients = inter.remote_size();
  ReceiverOutcome out;
  std::vector<bool> finished(static_cast<std::size_t>(clients), false);
  int finished_count = 0;
  std::string sent_error;
  std::vector<ep::Request> error_sends;
  std::vector<std::byte> buf;
  double first_finalise = -1;
  double t_idle = MPI_Wtime();
  auto sleep = std::chrono::microseconds(1);

  while (finished_count < clients && out.failure.empty()) {
    const std::string werr = writer.error();
    if (!werr.empty() && sent_error.empty()) {
      // The error channel: every client hears of it at its next call.
      sent_error = werr;
      for (int c = 0; c < clients; ++c) {
        error_sends.push_back(inter.isend(sent_error.data(), static_cast<int>(sent_error.size()),
                                          MPI_CHAR, c, transport::kErrorTag));
      }
    }
    std::optional<ep::Message> msg = inter.improbe(ep::kAnySource, transport::kEventsTag);
    if (!msg) {
      if (first_finalise >= 0 && MPI_Wtime() - first_finalise > timeout_s) {
        out.failure = "timed out after " + std::to_string(timeout_s) + " s waiting for clients [" +
                      missing_clients(finished) + "] to finalise (" +
                      std::to_string(clients - finished_count) + " of " + std::to_string(clients) +
                      ")";
        break;
      }
      std::this_thread::sleep_for(sleep);
      sleep = std::min(sleep * 2, std::chrono::microseconds(50));
      continue;
    }
    const double t0 = MPI_Wtime();
    out.stats.idle_s += t0 - t_idle;
    sleep = std::chrono::microseconds(1);
    const int source = msg->status().source;
    buf.resize(msg->status().bytes);
    ep::mrecv(buf.data(), static_cast<int>(buf.size()), MPI_BYTE, *msg);
    out.stats.bytes_received += static_cast<double>(buf.size());
    std::size_t off = 0;
    while (off + sizeof(transport::EventHeader) <= buf.size()) {
      const transport::EventHeader h = transport::read_header(buf, off);
      const std::size_t end = off + (h.valid() ? h.wire_bytes() : 0);
      if (!h.valid() || end > buf.size() ||
          (h.kind() != transport::EventKind::kData && off + sizeof h + h.record > buf.size())) {
        out.failure = "client " + std::to_string(source) + " sent a corrupt event at byte " +
                      std::to_string(off);
        break;
      }
      const std::byte* payload = buf.data() + off + sizeof h;
      if (h.kind() == transport::EventKind::kData) {
        off = end;
        // After a write error, data is received and dropped: clients never block.
        if (sent_error.empty() && !assembly.place(h, payload)) {
          out.failure = "client " + std::to_string(source) + " sent data for variable " +
                        std::to_string(h.var) + " outside this server's rows or variables";
          break;
        }
        continue;
      }
      off += sizeof h + h.record;  // control events carry a text of `record` bytes
      if (h.kind() == transport::EventKind::kDefinition && out.definition_error.empty()) {
        out.definition_error = std::string(reinterpret_cast<const char*>(payload), h.record);
      } else if (h.kind() == transport::EventKind::kFinalise &&
                 !finished[static_cast<std::size_t>(source)]) {
        finished[static_cast<std::size_t>(source)] = true;
        ++finished_count;
        if (first_finalise < 0) {
          first_finalise = MPI_Wtime();
        }
      }
    }
    t_idle = MPI_Wtime();
    out.stats.busy_s += t_idle - t0;
  }
  ep::wait_all(error_sends);
  out.unfinished = clients - finished_count;
  return out;
}

}  // namespace xios_lite::server
