#include "p2p/protocol_tuning.hpp"

#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

#include "ep/communicator.hpp"
#include "ep/error.hpp"

namespace ep::detail {

namespace {

// The file's eager_threshold: lines `key=value`, `#` comments; the last
// eager_threshold wins. Throws for a file that cannot be opened, or a value
// that is not a byte count.
std::size_t read_tuning(const std::string& path, const char* call) {
  std::ifstream in(path);
  if (!in) {
    throw Error(ErrorKind::kArgument, call, -1,
                "EP_P2P_TUNING='" + path + "': the file cannot be opened");
  }
  std::optional<std::size_t> threshold;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    const std::string key = "eager_threshold=";
    if (line.rfind(key, 0) != 0) continue;  // other keys: for other versions
    const std::string value = line.substr(key.size());
    char* end = nullptr;
    const unsigned long long bytes = std::strtoull(value.c_str(), &end, 10);
    if (value.empty() || *end != '\0' || value[0] == '-') {
      std::string message = "EP_P2P_TUNING='" + path;
      message += "', line " + std::to_string(number);
      message += ": '" + line;
      message += "' is not eager_threshold=<bytes>";
      throw Error(ErrorKind::kArgument, call, -1, message);
    }
    threshold = static_cast<std::size_t>(bytes);
  }
  if (!threshold) {
    throw Error(ErrorKind::kArgument, call, -1,
                "EP_P2P_TUNING='" + path + "' holds no eager_threshold=<bytes> line");
  }
  return *threshold;
}

}  // namespace

std::size_t tuned_eager_threshold(const char* call) {
  const char* path = std::getenv("EP_P2P_TUNING");
  if (path == nullptr || *path == '\0') return kDefaultEagerThreshold;
  // Read once per file name: creating a communicator must not reread it.
  static const std::string kReadPath = path;
  static const std::size_t kTuned = read_tuning(kReadPath, call);
  if (kReadPath != path) return read_tuning(path, call);
  return kTuned;
}

}  // namespace ep::detail
