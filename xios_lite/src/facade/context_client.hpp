// One thread's client of one XIOS context: the context's definitions as
// elements this thread edits until close_context_definition (XIOS's
// xios_add_child and xios_set_*_attr), what the model sets for the Client
// (domain blocks and coordinates, the array layout, axis values, the
// calendar), then the Client itself.
//
// Owned by the thread that made it (facade/session.cpp): not thread-safe,
// and it needs none.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ep/communicator.hpp"
#include "facade/facade.hpp"
#include "xios_lite/client.hpp"
#include "xios_lite/config.hpp"
#include "xios_lite/model_attributes.hpp"
#include "xios_lite/server.hpp"

namespace xios_lite::facade {

/// How the Client reaches the servers (or writes itself).
struct Connection {
  World world;
  Mode mode = Mode::kEndpoints;
  bool progress_thread = true;
  std::optional<int> tag;  ///< the handshake tag of a context opened at run time
  bool opened = false;     ///< `world` is the context's own (open_context): freed at finalise
};

class ContextClient {
 public:
  /// `root`: this thread's copy of the whole configuration (a <simulation>).
  /// `model_comm`: the model's communicator of a client per process
  /// (MPI_COMM_NULL for endpoints).
  ContextClient(std::string id, ep::Communicator comm, MPI_Comm model_comm,
                std::unique_ptr<config::Element> root, std::string config_path);
  ~ContextClient();
  ContextClient(const ContextClient&) = delete;
  ContextClient& operator=(const ContextClient&) = delete;

  [[nodiscard]] const std::string& id() const { return id_; }
  [[nodiscard]] const ep::Communicator& comm() const { return comm_; }
  [[nodiscard]] MPI_Comm model_comm() const { return model_comm_; }
  [[nodiscard]] bool closed() const { return client_ != nullptr; }
  [[nodiscard]] bool finalised() const { return finalised_; }
  /// Whether xios_close_context_definition failed (every later call says so).
  [[nodiscard]] bool refused() const { return !close_error_.empty(); }
  Handle* context_handle() { return &self_; }

  Handle* find(const std::string& kind, const std::string& id);
  Handle* add_child(const char* call, Handle* parent, const std::string& child_kind,
                    const std::string* id);
  void set(const char* call, Handle* h, const std::string& name, const Value& v);
  bool get(const char* call, Handle* h, const std::string& name, Value& v);
  bool defined(Handle* h, const std::string& name);

  void set_timestep(const Duration& d);
  [[nodiscard]] std::string calendar_type();
  /// The calendar as known now (the definitions' and the model's); nullptr
  /// when no type is known yet. Throws for definitions that do not parse.
  const Calendar* calendar();
  void set_calendar_date(const char* which, const DateValue& d);

  /// Parses the edited definitions, makes the Client through `link`, hands
  /// it what the model set and closes. Collective over the context's clients.
  void close(const Connection& link);
  /// The definitions as the servers parse them (this context and "xios").
  [[nodiscard]] std::string definitions_xml() const;
  [[nodiscard]] std::shared_ptr<const Config> parse_definitions() const;

  Client& client(const char* call);
  [[nodiscard]] bool field_is_active(const char* call, const std::string& id);
  bool variable(const std::string& name, Value& v);
  void finalise();

 private:
  [[nodiscard]] int rank() const { return comm_.rank(); }
  [[nodiscard]] config::Element* context_element() const;
  void require_open(const char* call) const;
  void check_not_refused(const char* call) const;
  void open_client(const Connection& link);
  Handle* handle_of(config::Element* e, const std::string& kind);
  bool set_model_attribute(const char* call, Handle* h, const std::string& name, const Value& v);
  bool get_model_attribute(Handle* h, const std::string& name, Value& v);
  void resolve_legacy_coordinates();

  std::string id_;
  ep::Communicator comm_;
  MPI_Comm model_comm_ = MPI_COMM_NULL;
  std::unique_ptr<config::Element> root_;
  std::string path_;
  Handle self_;
  std::map<config::Element*, std::unique_ptr<Handle>> handles_;
  int added_ = 0;  ///< elements added (names the added elements' origins)

  // What the model set for the Client, by domain / axis id.
  std::map<std::string, DomainAttributes> domains_;
  std::map<std::string, AxisAttributes> axes_;
  std::map<std::string, std::vector<double>> legacy_lon_;  ///< XIOS 1's lonvalue (ni or ni x nj)
  std::map<std::string, std::vector<double>> legacy_lat_;
  std::optional<CalendarAttributes> calendar_;
  std::optional<std::string> timestep_;
  std::optional<Calendar> calendar_now_;  ///< cache of calendar(), reset by every change

  std::map<std::string, int> data_n_index_;  ///< XIOS's data_n_index, checked at close
  std::unique_ptr<Client> client_;
  std::optional<World> opened_world_;  ///< a context opened at run time: its own World
  std::set<int> active_;               ///< fields a file writes (after close)
  bool finalised_ = false;
  std::string close_error_;  ///< the first line of a failed close's error
};

}  // namespace xios_lite::facade
