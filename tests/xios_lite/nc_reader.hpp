// Reads of the NetCDF files the xios_lite tests write, for their checks: each
// opens the file, reads one thing and closes it again. Absent things are
// answered with a marker value (documented per function), never an exception.
//
// Thread safety: NetCDF-C is not thread-safe; call from one thread.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

namespace xios_test {

/// Reads a whole double variable (an empty vector and a test failure when absent).
std::vector<double> read_var(const std::string& path, const std::string& var);
/// A text attribute ("" when absent); var "" for a global one.
std::string text_att(const std::string& path, const std::string& var, const std::string& name);
/// One expected text attribute: its variable ("" for a global one), name and value.
struct TextAtt {
  std::string var;
  std::string name;
  std::string value;
};
/// Expects each attribute of `atts` in `path` (a failure names the variable and attribute).
void expect_text_atts(const std::string& path, std::initializer_list<TextAtt> atts);
/// A numeric attribute as a double (NaN when absent); var "" for a global one.
double double_att(const std::string& path, const std::string& var, const std::string& name);
/// A variable's NetCDF type (NC_DOUBLE, NC_FLOAT, ...; -1 when absent).
int var_type(const std::string& path, const std::string& var);
/// A variable's chunk extents (empty when absent or contiguous).
std::vector<std::size_t> var_chunks(const std::string& path, const std::string& var);
/// The names of a variable's dimensions, slowest first (empty when absent).
std::vector<std::string> var_dims(const std::string& path, const std::string& var);
/// Length of a dimension (-1 when absent).
long dim_len(const std::string& path, const std::string& dim);
bool file_exists(const std::string& path);

}  // namespace xios_test
