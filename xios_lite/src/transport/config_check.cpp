#include "config_check.hpp"

#include <mpi.h>

#include <cstdint>

namespace xios_lite::transport {
namespace {

// Endpoint 0 of the sending group gives `text` to every endpoint of the
// other group (intercommunicator broadcast: root MPI_ROOT, the rest of its
// group MPI_PROC_NULL, the receivers name the root).
std::string cross(const ep::InterCommunicator& inter, bool sending, const std::string& text) {
  std::uint64_t size = text.size();
  const int root = sending ? (inter.rank() == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  ep::bcast(inter, &size, 1, MPI_UINT64_T, root);
  std::string out = sending ? text : std::string(size, '\0');
  ep::bcast(inter, out.data(), static_cast<int>(size), MPI_CHAR, root);
  return sending ? std::string() : out;
}

}  // namespace

std::string check_same_definitions(const ep::InterCommunicator& inter, const Config& cfg,
                                   bool servers) {
  const std::string text = definition_text(cfg);
  const std::uint64_t d = digest_of(text);
  const std::uint64_t mine[2] = {d, ~d};
  std::uint64_t theirs[2] = {0, 0};
  ep::allreduce(inter, mine, theirs, 2, MPI_UINT64_T, MPI_MAX);
  const int bad = (theirs[0] != d || ~theirs[1] != d) ? 1 : 0;
  int other_bad = 0;
  ep::allreduce(inter, &bad, &other_bad, 1, MPI_INT, MPI_MAX);
  if (bad == 0 && other_bad == 0) {
    return "";
  }
  // Something differs somewhere: the texts of both endpoints 0 cross over.
  const std::string here = cfg.path + "\n" + text;
  std::string there;
  if (servers) {
    (void)cross(inter, true, here);
    there = cross(inter, false, here);
  } else {
    there = cross(inter, false, here);
    (void)cross(inter, true, here);
  }
  const std::string::size_type cut = there.find('\n');
  const std::string there_path = there.substr(0, cut);
  const std::string other = servers ? "client 0" : "server 0";
  const std::string difference =
      first_difference(text, cut == std::string::npos ? "" : there.substr(cut + 1));
  if (!difference.empty()) {
    return "the definitions read here (" + cfg.path + ") differ from those of " + other + " (" +
           there_path + "): first difference " + difference;
  }
  const bool other_side = bad != 0;  // else one of this side differs from the other side
  return std::string("another ") + ((other_side != servers) ? "server" : "client") +
         " read different definitions (their digests differ); those read here (" + cfg.path +
         ") are the same as " + other + "'s (" + there_path + ")";
}

}  // namespace xios_lite::transport
