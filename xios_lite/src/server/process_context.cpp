#include "process_context.hpp"

#include <cstring>

#include "config/model_definitions.hpp"

namespace xios_lite::server {

ProcessContext::~ProcessContext() = default;

std::string ProcessContext::define(std::span<const std::byte> payload) {
  const std::lock_guard lock(mutex_);
  std::uint64_t digest = 0;
  if (payload.size() < sizeof digest) {
    return "client 0 sent malformed definitions";
  }
  std::memcpy(&digest, payload.data(), sizeof digest);
  if (assembly_ || !error_.empty()) {
    if (!error_.empty()) {
      return error_;
    }
    return digest == digest_ ? "" : "client 0 sent two different sets of definitions";
  }
  config::ModelDefinitions global;
  if (!config::unpack(payload.subspan(sizeof digest), global)) {
    error_ = "client 0 sent malformed definitions";
    return error_;
  }
  try {
    config::apply_global_definitions(cfg_, global);
  } catch (const std::exception& e) {
    error_ = std::string("the definitions the clients completed do not complete this server's: ") +
             e.what();
    return error_;
  }
  digest_ = digest_of(definition_text(cfg_));
  if (digest_ != digest) {
    error_ = "the definitions the clients completed differ from this server's once completed";
    return error_;
  }
  // Before this context's writer thread starts, and under the process's
  // NetCDF lock: another context's writer may be writing (serve_contexts).
  // Only with input files, so that a context without them never waits here
  // for another's collective write.
  if (cfg_.inputs.empty()) {
    inputs_ = std::make_unique<InputStore>(cfg_, process_.rows(cfg_));
  } else {
    const std::lock_guard netcdf(netcdf_lock());
    inputs_ = std::make_unique<InputStore>(cfg_, process_.rows(cfg_));
  }
  writer_ = std::make_unique<WriterThread>(cfg_, process_, servers_comm_, in_flight_);
  assembly_ = std::make_unique<RecordAssembly>(cfg_, process_, *writer_, in_flight_);
  assembly_ready_.store(assembly_.get(), std::memory_order_release);
  return "";
}

}  // namespace xios_lite::server
