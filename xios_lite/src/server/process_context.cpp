#include "process_context.hpp"

#include "config/model_definitions.hpp"
#include "transport/wire_codec.hpp"

namespace xios_lite::server {

ProcessContext::~ProcessContext() = default;

std::string ProcessContext::define(std::span<const std::byte> payload) {
  const std::lock_guard lock(mutex_);
  // The digest of client 0's definition_text, then config::pack of the
  // definitions it completed (client.cpp, close_definition).
  transport::WireReader in(payload, "xios_lite::server::define", -1);
  const auto malformed = [](const common::Error& e) {
    return std::string("client 0 sent malformed definitions (") + e.what() + ")";
  };
  std::uint64_t digest = 0;
  try {
    digest = in.get<std::uint64_t>();
  } catch (const common::Error& e) {
    return malformed(e);
  }
  if (assembly_ || !error_.empty()) {
    if (!error_.empty()) {
      return error_;
    }
    return digest == digest_ ? "" : "client 0 sent two different sets of definitions";
  }
  config::ModelDefinitions global;
  try {
    global = config::unpack(in.rest(), "xios_lite::server::define", -1);
  } catch (const common::Error& e) {
    error_ = malformed(e);
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
