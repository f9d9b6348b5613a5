#include "input_store.hpp"

#include <span>

#include "transport/wire_codec.hpp"

namespace xios_lite::server {

InputStore::InputStore(const Config& cfg, const std::vector<records::RowRange>& rows) {
  for (const FileDef& f : cfg.inputs) {
    for (const OutputVariable& v : f.variables) {
      Variable var;
      const FieldDef& field = cfg.fields[static_cast<std::size_t>(v.field)];
      const int domain = cfg.domain_of_field(v.field);
      const DomainDef& d = cfg.domains[static_cast<std::size_t>(domain)];
      var.shape = {netcdf::input_path(f), v.name, cfg.levels(field.grid), d.nj_glo, d.ni_glo};
      var.rows = rows[static_cast<std::size_t>(domain)];
      if (var.rows.nj > 0) {
        var.error = netcdf::read_input(var.shape, 0, -1, var.rows.jbegin, var.rows.nj, 0, d.ni_glo,
                                       var.data);
      }
      vars_.push_back(std::move(var));
    }
  }
}

std::vector<std::byte> InputStore::answer(const transport::EventHeader& h) const {
  transport::EventHeader reply = h;
  reply.magic_kind = transport::make_magic_kind(transport::EventKind::kReadReply);
  const auto fail = [&](const std::string& text) {
    reply.flags = 1;
    transport::WireWriter out;
    out.put(reply);
    out.put(text);
    return out.take();
  };
  if (h.var >= vars_.size()) {
    return fail("no input variable " + std::to_string(h.var));
  }
  const Variable& v = vars_[h.var];
  if (!v.error.empty()) {
    return fail(v.error);
  }
  const int ni_glo = v.shape.ni_glo;
  if (h.nk != v.shape.nk || h.jbegin < v.rows.jbegin ||
      h.jbegin + h.nj > v.rows.jbegin + v.rows.nj || h.ibegin < 0 || h.ni < 0 ||
      h.ibegin + h.ni > ni_glo) {
    return fail("the request for rows [" + std::to_string(h.jbegin) + ", " +
                std::to_string(h.jbegin + h.nj) + ") of variable '" + v.shape.variable +
                "' is outside this server's rows");
  }
  const int record = v.data.timeless ? 0 : static_cast<int>(h.record);
  if (record >= v.data.records) {
    return fail("the input file '" + v.shape.path + "' holds " + std::to_string(v.data.records) +
                " record(s) of variable '" + v.shape.variable + "': record " +
                std::to_string(h.record) + " does not exist");
  }
  reply.flags = 0;
  std::vector<std::byte> bytes(sizeof reply + h.points() * sizeof(double));
  transport::WireWriter out(bytes);  // the values straight into the message
  out.put(reply);
  const auto ni = static_cast<std::size_t>(h.ni);
  for (int k = 0; k < h.nk; ++k) {
    for (int j = h.jbegin; j < h.jbegin + h.nj; ++j) {
      const std::size_t from =
          ((static_cast<std::size_t>(record) * static_cast<std::size_t>(v.shape.nk) +
            static_cast<std::size_t>(k)) *
               static_cast<std::size_t>(v.rows.nj) +
           static_cast<std::size_t>(j - v.rows.jbegin)) *
              static_cast<std::size_t>(ni_glo) +
          static_cast<std::size_t>(h.ibegin);
      out.put_raw(std::span<const double>(v.data.values.data() + from, ni));
    }
  }
  return bytes;
}

}  // namespace xios_lite::server
