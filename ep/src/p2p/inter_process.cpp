#include "p2p/inter_process.hpp"

#include <mpi.h>

#include <memory>
#include <mutex>
#include <string>

#include "comm_state.hpp"
#include "ep/error.hpp"
#include "ep/tag_encoding.hpp"

namespace ep::detail {

std::shared_ptr<RequestState> send_inter(const Communicator& self, const IntraSend& send,
                                         const TypedBuffer& data, Location to) {
  auto request = std::make_shared<RequestState>(RequestState::Kind::kSend, self.state(),
                                                self.local_thread(), self.rank());
  request->call = send.call;
  const CommState& state = *self.state();
  const WireAddress wire = encode(state.tag_layout(), {send.tag, self.local_thread(), to.thread});
  // Always nonblocking underneath: a blocking MPI_Send of a large message
  // could wait for a peer process whose threads need this one to drain.
  MPI_Request* mpi = &request->mpi_request;
  MPI_Comm comm = state.p2p_comm(wire.channel);
  const int rc = send.synchronous
                     ? MPI_Issend(data.buf, data.count, data.type, to.process, wire.tag, comm, mpi)
                     : MPI_Isend(data.buf, data.count, data.type, to.process, wire.tag, comm, mpi);
  check_mpi(rc, send.call, self.rank());
  request->phase.store(Phase::kMpiPending, std::memory_order_relaxed);
  return request;
}

void CommState::drain(int ep_rank) {
  std::unique_lock lock(drain_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread is draining and will route our messages
  // Channels are drained in turn until none has a message: order within a
  // channel is MPI's, and one sender-receiver pair never spans two channels.
  const int channels = tag_layout_.channels;
  for (int idle = 0, channel = 0; idle < channels; channel = (channel + 1) % channels) {
    int flag = 0;
    MPI_Message message = MPI_MESSAGE_NULL;
    MPI_Status status;
    check_mpi(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, p2p_comm(channel), &flag, &message, &status),
              "ep::drain (MPI_Improbe)", ep_rank);
    if (flag == 0) {
      ++idle;
      continue;
    }
    idle = 0;
    const WireTag wire = decode(tag_layout_, channel, status.MPI_TAG);
    int bytes = 0;
    check_mpi(MPI_Get_count(&status, MPI_BYTE, &bytes), "ep::drain (MPI_Get_count)", ep_rank);
    if (wire.dest_thread >= local_size_ ||
        wire.source_thread >= map_.endpoints_of(status.MPI_SOURCE)) {
      throw Error(ErrorKind::kTag, "ep::drain", ep_rank,
                  "wire tag " + std::to_string(status.MPI_TAG) + " from process " +
                      std::to_string(status.MPI_SOURCE) + " names no endpoint");
    }
    auto envelope = std::make_shared<Envelope>();
    envelope->kind = Envelope::Kind::kRemote;
    envelope->source = map_.ep_rank(status.MPI_SOURCE, wire.source_thread);
    envelope->tag = wire.user_tag;
    envelope->bytes = static_cast<std::size_t>(bytes);
    envelope->mpi_message = message;
    deliver(mailboxes_[wire.dest_thread], std::move(envelope));
  }
}

bool receive_remote(RequestState& request, Envelope& message) {
  // Any thread may receive for the owner (MPI_THREAD_MULTIPLE). A small
  // message arrived whole with its match (MPI's eager protocol), so
  // MPI_Mrecv returns at once and spares the owner an MPI_Test; a larger
  // one may still be streaming in, so the owner finishes it with MPI_Test
  // and nobody blocks here.
  const TypedBuffer& dst = request.recv_buffer;
  void* buf = const_cast<void*>(dst.buf);
  if (message.bytes <= kMrecvInlineBytes) {
    check_mpi(MPI_Mrecv(buf, dst.count, dst.type, &message.mpi_message, MPI_STATUS_IGNORE),
              request.call, request.owner_rank);
    return true;
  }
  check_mpi(MPI_Imrecv(buf, dst.count, dst.type, &message.mpi_message, &request.mpi_request),
            request.call, request.owner_rank);
  request.phase.store(Phase::kMpiPending, std::memory_order_release);
  return false;
}

bool test_mpi(RequestState& request) {
  int done = 0;
  check_mpi(MPI_Test(&request.mpi_request, &done, MPI_STATUS_IGNORE), request.call,
            request.owner_rank);
  if (done == 0) return false;
  request.complete();
  return true;
}

}  // namespace ep::detail
