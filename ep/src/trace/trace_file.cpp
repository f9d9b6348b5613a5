#include "trace/trace_file.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "ep/error.hpp"

namespace ep::detail {

namespace {

template <class Array>
void put_array(std::ostream& out, const Array& values) {
  out << '[';
  for (std::size_t i = 0; i < values.size(); ++i) out << (i == 0 ? "" : ", ") << values[i];
  out << ']';
}

void put_counts(std::ostream& out, const trace::ClassCounts& counts) {
  out << "\"count\": ";
  put_array(out, counts.count);
  out << ", \"bytes\": ";
  put_array(out, counts.bytes);
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", seconds);
  return text;
}

void put_endpoint(std::ostream& out, const TraceFile& file, int thread,
                  const EndpointTrace& record) {
  out << "    {\"process\": " << file.process << ", \"thread\": " << thread << ",\n";
  out << "     \"sends\": {";
  put_counts(out, record.sends);
  out << "},\n     \"peers\": [";
  // Peers in (process, thread) order, which is the key order.
  std::vector<std::uint64_t> keys;
  keys.reserve(record.peers.size());
  for (const auto& [key, counts] : record.peers) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    out << (i == 0 ? "\n" : ",\n") << "       {\"process\": " << (keys[i] >> 32)
        << ", \"thread\": " << (keys[i] & 0xffffffffU) << ", ";
    put_counts(out, record.peers.at(keys[i]));
    out << '}';
  }
  out << (keys.empty() ? "" : "\n     ") << "],\n";
  const double p2p = record.seconds[0];
  const double collective = record.seconds[1];
  out << "     \"p2p_seconds\": " << seconds_text(p2p)
      << ", \"collective_seconds\": " << seconds_text(collective)
      << ", \"outside_seconds\": " << seconds_text(file.wall_seconds - p2p - collective) << ",\n";
  out << "     \"p2p_calls\": " << record.calls[0] << ", \"collective_calls\": " << record.calls[1]
      << "}";
}

}  // namespace

void prepare_trace_directory(const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  // Another process may have made it meanwhile: only "not a directory" fails.
  if (!std::filesystem::is_directory(directory)) {
    throw Error(ErrorKind::kArgument, "ep::trace::enable", -1,
                "trace directory '" + directory + "' cannot be created" +
                    (error ? ": " + error.message() : std::string()));
  }
}

std::string write_trace_file(const std::string& directory, const TraceFile& file) {
  std::ostringstream out;
  out << "{\n  \"format\": \"ep-trace/1\",\n";
  out << "  \"process\": " << file.process << ", \"processes\": " << file.processes << ",\n";
  out << "  \"recording\": " << (file.recording ? "true" : "false")
      << ", \"wall_seconds\": " << seconds_text(file.wall_seconds) << ",\n";
  out << "  \"size_classes\": [\"< 100 B\", \"100-1000 B\", \"1-10 KB\", \"> 10 KB\"],\n";
  out << "  \"size_class_max_bytes\": [99, 999, 10000, null],\n";
  out << "  \"endpoints\": [\n";
  const EndpointTrace empty;
  for (std::size_t i = 0; i < file.endpoints.size(); ++i) {
    const EndpointTrace* record = file.endpoints[i];
    put_endpoint(out, file, file.threads[i], record != nullptr ? *record : empty);
    out << (i + 1 < file.endpoints.size() ? ",\n" : "\n");
  }
  out << "  ]\n}\n";

  std::string path =
      (std::filesystem::path(directory) / ("trace." + std::to_string(file.process) + ".json"))
          .string();
  // Written aside and renamed, so a reader never sees half a file.
  const std::string partial = path + ".partial";
  {
    std::ofstream stream(partial, std::ios::trunc);
    stream << out.str();
    if (!stream.flush()) {
      throw Error(ErrorKind::kArgument, "ep::trace::write", -1, "cannot write '" + partial + "'");
    }
  }
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error) {
    throw Error(ErrorKind::kArgument, "ep::trace::write", -1,
                "cannot rename '" + partial + "' to '" + path + "': " + error.message());
  }
  return path;
}

}  // namespace ep::detail
