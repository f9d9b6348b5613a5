#include "xios_lite/report.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "ep/error.hpp"

namespace xios_lite {

void Report::print(std::FILE* out) const {
  std::fprintf(out, "xios_lite report (mode %s)\n", mode.c_str());
  std::fprintf(out, "  %-8s %12s %12s %12s %10s %14s\n", "client", "total_s", "in_calls_s",
               "blocked_s", "blocked%", "bytes_sent");
  for (const auto& c : clients) {
    std::fprintf(out, "  %-8d %12.4f %12.4f %12.6f %9.3f%% %14.0f\n", c.client, c.total_s,
                 c.in_calls_s, c.blocked_s, 100.0 * c.blocked_ratio(), c.bytes_sent);
  }
  if (!servers.empty()) {
    std::fprintf(out, "  %-8s %10s %10s %10s %14s %14s %10s %12s %12s\n", "server", "busy_s",
                 "idle_s", "write_s", "bytes_recv", "bytes_written", "MB/s", "peak_rec_MB",
                 "peak_rss_MB");
    for (const auto& s : servers) {
      std::fprintf(out, "  %-8d %10.4f %10.4f %10.4f %14.0f %14.0f %10.1f %12.3f %12.1f\n",
                   s.server, s.busy_s, s.idle_s, s.write_s, s.bytes_received, s.bytes_written,
                   s.write_mbps(), s.peak_record_bytes / 1e6, s.peak_rss_bytes / 1e6);
    }
  }
  std::fflush(out);
}

std::string Report::to_json() const {
  std::ostringstream j;
  j.precision(9);
  j << "{\n  \"mode\": \"" << mode << "\",\n  \"clients\": [";
  for (std::size_t i = 0; i < clients.size(); ++i) {
    const auto& c = clients[i];
    j << (i ? "," : "") << "\n    {\"client\": " << c.client << ", \"total_s\": " << c.total_s
      << ", \"in_calls_s\": " << c.in_calls_s << ", \"blocked_s\": " << c.blocked_s
      << ", \"blocked_ratio\": " << c.blocked_ratio() << ", \"bytes_sent\": " << c.bytes_sent
      << ", \"write_s\": " << c.write_s << "}";
  }
  j << "\n  ],\n  \"servers\": [";
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const auto& s = servers[i];
    j << (i ? "," : "") << "\n    {\"server\": " << s.server << ", \"busy_s\": " << s.busy_s
      << ", \"idle_s\": " << s.idle_s << ", \"write_s\": " << s.write_s
      << ", \"bytes_received\": " << s.bytes_received << ", \"bytes_written\": " << s.bytes_written
      << ", \"MBps\": " << s.write_mbps() << ", \"peak_record_bytes\": " << s.peak_record_bytes
      << ", \"peak_rss_bytes\": " << s.peak_rss_bytes << "}";
  }
  j << "\n  ]\n}\n";
  return j.str();
}

void Report::write_json(const std::string& path) const {
  std::ofstream out(path);
  out << to_json();
  if (!out) {
    throw ep::Error(ep::ErrorKind::kIo, "xios_lite::Report::write_json", -1,
                    "cannot write '" + path + "'");
  }
}

}  // namespace xios_lite
