// The non-template half of alltoallv.hpp: algorithm names, the tuner's
// memory and the wording of argument errors.
#include "collectives/alltoallv.hpp"

#include <charconv>
#include <cstdlib>

namespace collectives {

std::string alltoallv_name(const AlltoallvChoice& choice) {
  switch (choice.algorithm) {
    case AlltoallvAlgorithm::kLibrary:
      return "library";
    case AlltoallvAlgorithm::kBurst:
      return "burst";
    case AlltoallvAlgorithm::kPairwise:
      return "pairwise";
    case AlltoallvAlgorithm::kBruck:
      return "bruck";
    case AlltoallvAlgorithm::kRingK:
      return "ring" + std::to_string(choice.k);
    case AlltoallvAlgorithm::kAuto:
      return "auto";
  }
  return "?";
}

AlltoallvChoice parse_alltoallv_choice(std::string_view name) {
  constexpr std::pair<std::string_view, AlltoallvAlgorithm> kFixed[] = {
      {"library", AlltoallvAlgorithm::kLibrary},
      {"burst", AlltoallvAlgorithm::kBurst},
      {"pairwise", AlltoallvAlgorithm::kPairwise},
      {"bruck", AlltoallvAlgorithm::kBruck},
      {"auto", AlltoallvAlgorithm::kAuto}};
  for (const auto& [text, algorithm] : kFixed) {
    if (name == text) return {algorithm, 1};
  }
  if (name.starts_with("ring")) {
    const std::string_view digits = name.substr(4);
    int k = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
    if (!digits.empty() && ec == std::errc() && end == digits.data() + digits.size() && k >= 1) {
      return {AlltoallvAlgorithm::kRingK, k};
    }
  }
  throw common::Error(common::ErrorKind::kArgument, "collectives::parse_alltoallv_choice", -1,
                      "'" + std::string(name) +
                          "' is not an alltoallv algorithm (library, burst, pairwise, bruck, "
                          "ring<k> with k >= 1, auto)");
}

AlltoallvTuner::AlltoallvTuner() {
  const char* env = std::getenv("COLLECTIVES_ALLTOALLV");
  if (env == nullptr || *env == '\0') return;
  const AlltoallvChoice choice = parse_alltoallv_choice(env);
  if (choice.algorithm != AlltoallvAlgorithm::kAuto) forced_ = choice;
}

void AlltoallvTuner::force(const AlltoallvChoice& choice) {
  if (choice.algorithm == AlltoallvAlgorithm::kAuto ||
      (choice.algorithm == AlltoallvAlgorithm::kRingK && choice.k < 1)) {
    throw common::Error(common::ErrorKind::kArgument, "collectives::AlltoallvTuner::force", -1,
                        "cannot force '" + alltoallv_name(choice) + "'");
  }
  forced_ = choice;
}

void AlltoallvTuner::reset() {
  forced_.reset();
  chosen_.clear();
  measurements_ = 0;
}

std::optional<AlltoallvChoice> AlltoallvTuner::chosen(int size_class) const {
  const auto it = chosen_.find(size_class);
  if (it == chosen_.end()) return std::nullopt;
  return it->second;
}

void AlltoallvTuner::remember(int size_class, const AlltoallvChoice& choice) {
  chosen_[size_class] = choice;
  ++measurements_;
}

std::vector<AlltoallvChoice> AlltoallvTuner::candidates(int ranks) {
  std::vector<AlltoallvChoice> list = {{AlltoallvAlgorithm::kLibrary, 1},
                                       {AlltoallvAlgorithm::kBurst, 1},
                                       {AlltoallvAlgorithm::kPairwise, 1},
                                       {AlltoallvAlgorithm::kBruck, 1}};
  // k >= n-1 is burst again.
  for (int k = 2; k < ranks - 1; k *= 2) list.push_back({AlltoallvAlgorithm::kRingK, k});
  return list;
}

namespace detail {

std::pair<common::ErrorKind, std::string> describe_alltoallv_problem(const LocalCheck& c,
                                                                     int ranks) {
  constexpr const char* kArrays[] = {"sendcounts", "sdispls", "recvcounts", "rdispls"};
  const auto side = [&](long long index) { return std::string(index < ranks ? "send" : "recv"); };
  const auto peer = [&](long long index) { return std::to_string(index % ranks); };
  switch (c.code) {
    case kArrayLength:
      return {common::ErrorKind::kArgument,
              std::string(kArrays[c.index]) + " of length " + std::to_string(c.value) +
                  " (the communicator has " + std::to_string(ranks) + " ranks)"};
    case kBadK:
      return {common::ErrorKind::kArgument,
              "k = " + std::to_string(c.value) + " for ring-k (k >= 1)"};
    case kNegative:
      return {common::ErrorKind::kCount, side(c.index) + "counts[" + peer(c.index) +
                                             "] = " + std::to_string(c.value) + " (negative)"};
    case kOutside:
      return {common::ErrorKind::kCount, side(c.index) + " block " + peer(c.index) +
                                             " at displacement " + std::to_string(c.value) +
                                             " outside its buffer"};
    case kNoTuner:
      return {common::ErrorKind::kArgument, "algorithm auto without a tuner (options.tuner)"};
    case kDisagree:
      return {common::ErrorKind::kArgument,
              std::string(c.index == 0 ? "algorithm number " : "k = ") + std::to_string(c.value) +
                  " while rank 0 passed " + std::to_string(c.agreed[0])};
    case kMismatch:
      return {common::ErrorKind::kCount,
              "recvcounts[" + std::to_string(c.index) + "] = " + std::to_string(c.value) +
                  " but rank " + std::to_string(c.index) + " sends " + std::to_string(c.agreed[0])};
    case kSelfMismatch:
      return {common::ErrorKind::kCount,
              "recvcounts[" + std::to_string(c.index) + "] = " + std::to_string(c.value) +
                  " but sendcounts[" + std::to_string(c.index) + "] differs (its block to itself)"};
    default:
      return {common::ErrorKind::kArgument, "problem code " + std::to_string(c.code)};
  }
}

}  // namespace detail
}  // namespace collectives
