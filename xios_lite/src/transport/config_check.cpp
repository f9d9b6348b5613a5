#include "config_check.hpp"

#include <mpi.h>

#include <cstdint>
#include <span>

#include "ep/typed.hpp"

namespace xios_lite::transport {
namespace {

// Endpoint 0 of the sending group gives `text` to every endpoint of the
// other group (intercommunicator broadcast: root MPI_ROOT, the rest of its
// group MPI_PROC_NULL, the receivers name the root).
std::string cross(const ep::InterCommunicator& inter, bool sending, const std::string& text) {
  std::uint64_t size = text.size();
  const int root = sending ? (inter.rank() == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  ep::bcast(inter, std::span<std::uint64_t>(&size, 1), root);
  std::string out = sending ? text : std::string(size, '\0');
  ep::bcast(inter, std::span<char>(out), root);
  return sending ? std::string() : out;
}

}  // namespace

std::string check_same_definitions(const ep::InterCommunicator& inter, const Config& cfg,
                                   bool servers) {
  const std::string text = definition_text(cfg);
  const std::uint64_t d = digest_of(text);
  const std::uint64_t mine[2] = {d, ~d};
  std::uint64_t theirs[2] = {0, 0};
  ep::allreduce(inter, std::span<const std::uint64_t>(mine), std::span<std::uint64_t>(theirs),
                MPI_MAX);
  const int bad = (theirs[0] != d || ~theirs[1] != d) ? 1 : 0;
  const int other_bad = ep::allreduce(inter, bad, MPI_MAX);
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
