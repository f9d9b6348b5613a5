// What a model sets at run time, before close_definition, with the names
// of XIOS's xios_set_domain_attr, xios_set_axis_attr, xios_define_calendar
// and xios_set_timestep (Client::set_domain_attr, set_axis_attr,
// define_calendar, set_timestep; the C and Fortran interfaces take the same
// names).
//
// Domains: the global sizes (ni_glo, nj_glo) and the type are the same on
// every client; ibegin/ni/jbegin/nj are this client's block, and the
// coordinate, bounds, area and mask arrays this block's values, as in XIOS:
//
//   lonvalue_1d   ni values      (rectilinear)   latvalue_1d   nj values
//   lonvalue_2d   ni x nj        (curvilinear)   latvalue_2d   ni x nj
//   bounds_lon_1d 2 x ni         (vertex fastest) bounds_lat_1d 2 x nj
//   bounds_lon_2d nvertex x ni x nj               bounds_lat_2d nvertex x ni x nj
//   area          ni x nj        mask (mask_1d / mask_2d)       ni x nj
//
// (i fastest everywhere; a Fortran array a(ni, nj) as it is). At
// close_definition the clients' pieces are assembled into the global
// arrays; clients that give a global value must agree, and pieces of the
// same coordinate from two clients must match (close_definition throws
// naming the clients otherwise). A value set by the model replaces the
// configuration's.
//
// Axes and the calendar are global: every client that sets them sets the
// same values (XIOS's model calls them on every process).
//
// Pure value types: thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xios_lite {

struct DomainAttributes {
  std::optional<int> ni_glo;
  std::optional<int> nj_glo;
  std::optional<int> ibegin;
  std::optional<int> ni;
  std::optional<int> jbegin;
  std::optional<int> nj;
  std::optional<std::string> type;  ///< "rectilinear" or "curvilinear"
  std::vector<double> lonvalue_1d;
  std::vector<double> latvalue_1d;
  std::vector<double> lonvalue_2d;
  std::vector<double> latvalue_2d;
  std::optional<int> nvertex;
  std::vector<double> bounds_lon_1d;
  std::vector<double> bounds_lat_1d;
  std::vector<double> bounds_lon_2d;
  std::vector<double> bounds_lat_2d;
  std::vector<double> area;
  std::vector<bool> mask;  ///< ni x nj of the block, false: masked (mask_1d / mask_2d)
  /// How the model's array holds the block (XIOS's data_* attributes): a
  /// 2-D array of data_ni x data_nj starting at (data_ibegin, data_jbegin)
  /// relative to the block's first point (negative: a halo), or with
  /// data_dim 1 a 1-D array of data_ni values over the block's points (i
  /// fastest) from data_ibegin. data_i_index / data_j_index (0-based, from
  /// data_ibegin / data_jbegin) name the point of each value of a
  /// compressed array (data_n_index of them: the array holds that many
  /// values per level). Unset: the array is the block itself. Values
  /// outside the block are ignored; points no value gives are missing.
  std::optional<int> data_dim;
  std::optional<int> data_ibegin;
  std::optional<int> data_ni;
  std::optional<int> data_jbegin;
  std::optional<int> data_nj;
  std::optional<int> data_n_index;
  std::vector<int> data_i_index;
  std::vector<int> data_j_index;
};

struct AxisAttributes {
  std::optional<int> n_glo;
  std::vector<double> value;   ///< n_glo values
  std::vector<double> bounds;  ///< 2 x n_glo (lower, upper per level)
  std::optional<std::string> name;
  std::optional<std::string> unit;
  std::optional<std::string> positive;  ///< "up" or "down"
  std::optional<std::string> long_name;
  std::optional<std::string> standard_name;
  /// This client's part of a distributed axis (begin, n: global, 0-based),
  /// taken where the axis stands alone in a grid (set_axis_attr refuses it
  /// elsewhere); how the model's array holds it (data_begin relative to
  /// begin, data_n values, or data_index naming the level of each value) is
  /// refused. Unset: the client sends the whole axis.
  std::optional<int> begin;
  std::optional<int> n;
  std::optional<int> data_begin;
  std::optional<int> data_n;
  std::vector<int> data_index;
};

/// XIOS's xios_define_calendar: type ("Gregorian", "NoLeap", "D360",
/// "AllLeap", "Julian", "user_defined", or the CF names), the start date
/// and the time origin ("2012-03-01 15:00:00", an offset "+ 1d" allowed),
/// the timestep (a duration: "1800s", "1h"), and for user_defined the day
/// length and the month lengths.
struct CalendarAttributes {
  std::optional<std::string> type;
  std::optional<std::string> start_date;
  std::optional<std::string> time_origin;
  std::optional<std::string> timestep;
  std::optional<std::int64_t> day_length;
  std::vector<int> month_lengths;
};

}  // namespace xios_lite
