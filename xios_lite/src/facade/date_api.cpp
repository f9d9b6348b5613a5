// The C functions of xios_lite/xios_date.h: XIOS's date and duration
// arithmetic over xios_lite's Calendar, in the calling thread's current
// calendar (calendar_source.hpp). Durations carry real components (XIOS's
// layout); they become a whole number of months and a number of seconds
// only when added to a date, where the calendar gives a day, a timestep and
// a year their lengths.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "c_codes.hpp"
#include "ep/error.hpp"
#include "facade/calendar_source.hpp"
#include "text.hpp"
#include "xios_lite/xios_date.h"

namespace xios_lite {
namespace {

constexpr const char* kLibrary = "xios_lite";

[[noreturn]] void fail_argument(const char* call, const std::string& detail) {
  throw ep::Error(ep::ErrorKind::kArgument, call, -1, detail);
}

void require(const void* pointer, const char* call, const char* name) {
  if (pointer == nullptr) fail_argument(call, std::string(name) + " is a null pointer");
}

// The current calendar, or why there is none.
const Calendar& calendar_for(const char* call) {
  const Calendar* cal = facade::current_calendar();
  if (cal == nullptr) {
    fail_argument(call,
                  "no calendar: date arithmetic uses the current context's calendar, and this "
                  "thread has none yet (define the context's calendar first)");
  }
  return *cal;
}

Date to_date(const xios_lite_date& d) {
  return Date{d.year, d.month, d.day, d.hour, d.minute, d.second};
}

xios_lite_date to_c(const Date& d) {
  return xios_lite_date{d.year, d.month, d.day, d.hour, d.minute, d.second};
}

// `d` as a Date valid in `cal`: XIOS silently clamps an invalid date into
// range, which hides a model's mistake; here it is refused.
Date valid_date(const xios_lite_date* d, const Calendar& cal, const char* call) {
  require(d, call, "date");
  const Date date = to_date(*d);
  if (!cal.is_valid(date)) {
    fail_argument(call, "date " + format_date(date) + " is not a valid " +
                            std::string(to_string(cal.type())) + " date");
  }
  return date;
}

// A duration's months (years at the calendar's months per year), which must
// be whole, and its other components in seconds, rounded to the nearest.
Frequency resolve(const xios_lite_duration& dur, const Calendar& cal, const char* call) {
  const double months = dur.year * cal.months_per_year() + dur.month;
  const double seconds = dur.day * static_cast<double>(cal.day_length()) + dur.hour * 3600.0 +
                         dur.minute * 60.0 + dur.second +
                         dur.timestep * static_cast<double>(cal.timestep_seconds());
  // Beyond 2^62 seconds (or months) nothing is representable as a date.
  constexpr double kLimit = 4.0e18;
  if (!std::isfinite(months) || !std::isfinite(seconds) || std::fabs(months) > kLimit ||
      std::fabs(seconds) > kLimit) {
    fail_argument(call, "duration out of range");
  }
  const double whole_months = std::round(months);
  // A tolerance for sums such as 0.1y + 0.2y: a month has no fixed length, so
  // a true fraction of one cannot be added.
  if (std::fabs(months - whole_months) > 1e-9 * std::max(1.0, std::fabs(months))) {
    fail_argument(call, "a duration of " + std::to_string(months) +
                            " months has no length in this calendar: only whole months "
                            "(and years of whole months) can be added to a date");
  }
  Frequency f;
  f.months = static_cast<std::int64_t>(whole_months);
  f.seconds = std::llround(seconds);
  return f;
}

xios_lite_date add(const xios_lite_date* date, const xios_lite_duration* dur, double sign,
                   const char* call) {
  const Calendar& cal = calendar_for(call);
  const Date from = valid_date(date, cal, call);
  require(dur, call, "duration");
  xios_lite_duration d = *dur;
  for (double* c : {&d.year, &d.month, &d.day, &d.hour, &d.minute, &d.second, &d.timestep}) {
    *c *= sign;
  }
  return to_c(cal.add(from, resolve(d, cal, call)));
}

// Writes `text` and a NUL into `out` of `size` bytes, or says it does not fit.
void copy_out(std::string_view text, char* out, int size, const char* call) {
  require(out, call, "text");
  if (size < 0 || static_cast<std::size_t>(size) <= text.size()) {
    throw ep::Error(
        ep::ErrorKind::kCount, call, -1,
        "a buffer of " + std::to_string(size) + " characters is too short for " + quote(text));
  }
  std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
}

// A duration component as XIOS writes it: the shortest text that reads back
// as the same double ("1.5", "3600", "1e+20").
std::string number(double v) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc{} ? std::string(buf, end) : std::string("nan");
}

// A C query of one date (xios_date_get_*, xios_date_convert_to_seconds):
// *out = value(calendar, date), with the date valid in the current calendar.
template <class Out, class Value>
int date_query(const char* call, const xios_lite_date* date, Out* out, Value value) {
  return c_api::guarded(kLibrary, [&] {
    require(out, call, "out");
    const Calendar& cal = calendar_for(call);
    *out = value(cal, valid_date(date, cal, call));
  });
}

}  // namespace
}  // namespace xios_lite

using xios_lite::Calendar;
using xios_lite::Date;

extern "C" {

int xios_lite_date_add_duration(const xios_lite_date* date, const xios_lite_duration* dur,
                                xios_lite_date* out) {
  return xios_lite::c_api::guarded(xios_lite::kLibrary, [&] {
    constexpr const char* kCall = "xios_date_add_duration";
    xios_lite::require(out, kCall, "out");
    *out = xios_lite::add(date, dur, 1.0, kCall);
  });
}

int xios_lite_date_sub_duration(const xios_lite_date* date, const xios_lite_duration* dur,
                                xios_lite_date* out) {
  return xios_lite::c_api::guarded(xios_lite::kLibrary, [&] {
    constexpr const char* kCall = "xios_date_sub_duration";
    xios_lite::require(out, kCall, "out");
    *out = xios_lite::add(date, dur, -1.0, kCall);
  });
}

int xios_lite_date_sub(const xios_lite_date* date1, const xios_lite_date* date2,
                       xios_lite_duration* out) {
  return xios_lite::c_api::guarded(xios_lite::kLibrary, [&] {
    constexpr const char* kCall = "xios_date_sub";
    xios_lite::require(out, kCall, "out");
    const Calendar& cal = xios_lite::calendar_for(kCall);
    const Date a = xios_lite::valid_date(date1, cal, kCall);
    const Date b = xios_lite::valid_date(date2, cal, kCall);
    const std::int64_t diff = cal.seconds_since_start(a) - cal.seconds_since_start(b);
    // Every component with the difference's sign, so that the parts add up.
    const std::int64_t magnitude = diff < 0 ? -diff : diff;
    const double sign = diff < 0 ? -1.0 : 1.0;
    const std::int64_t day = magnitude / cal.day_length();
    const std::int64_t in_day = magnitude % cal.day_length();
    const std::int64_t hour = in_day / 3600;
    const std::int64_t minute = in_day % 3600 / 60;
    const std::int64_t second = in_day % 60;
    *out = xios_lite_duration{0.0,
                              0.0,
                              sign * static_cast<double>(day),
                              sign * static_cast<double>(hour),
                              sign * static_cast<double>(minute),
                              sign * static_cast<double>(second),
                              0.0};
  });
}

int xios_lite_date_convert_to_seconds(const xios_lite_date* date, long long* out) {
  return xios_lite::date_query(
      "xios_date_convert_to_seconds", date, out, [](const Calendar& cal, const Date& d) {
        // The facade's origin (the context's time_origin), measured on the
        // calendar's own axis like the date.
        return cal.seconds_since_start(d) -
               cal.seconds_since_start(xios_lite::facade::current_time_origin());
      });
}

int xios_lite_date_get_second_of_year(const xios_lite_date* date, long long* out) {
  return xios_lite::date_query(
      "xios_date_get_second_of_year", date, out,
      [](const Calendar& cal, const Date& d) { return cal.second_of_year(d); });
}

int xios_lite_date_get_day_of_year(const xios_lite_date* date, double* out) {
  return xios_lite::date_query(
      "xios_date_get_day_of_year", date, out, [](const Calendar& cal, const Date& d) {
        return static_cast<double>(cal.second_of_year(d)) / static_cast<double>(cal.day_length());
      });
}

int xios_lite_date_get_fraction_of_year(const xios_lite_date* date, double* out) {
  return xios_lite::date_query("xios_date_get_fraction_of_year", date, out,
                               [](const Calendar& cal, const Date& d) {
                                 return static_cast<double>(cal.second_of_year(d)) /
                                        static_cast<double>(cal.year_length(d.year));
                               });
}

int xios_lite_date_get_second_of_day(const xios_lite_date* date, long long* out) {
  return xios_lite::date_query("xios_date_get_second_of_day", date, out,
                               [](const Calendar& /*cal*/, const Date& d) {
                                 return static_cast<long long>(d.hour) * 3600 +
                                        static_cast<long long>(d.minute) * 60 + d.second;
                               });
}

int xios_lite_date_get_fraction_of_day(const xios_lite_date* date, double* out) {
  return xios_lite::date_query(
      "xios_date_get_fraction_of_day", date, out, [](const Calendar& cal, const Date& d) {
        const double s = static_cast<double>(d.hour) * 3600.0 + d.minute * 60.0 + d.second;
        return s / static_cast<double>(cal.day_length());
      });
}

int xios_lite_get_year_length_in_seconds(int year, long long* out) {
  return xios_lite::c_api::guarded(xios_lite::kLibrary, [&] {
    constexpr const char* kCall = "xios_get_year_length_in_seconds";
    xios_lite::require(out, kCall, "out");
    *out = xios_lite::calendar_for(kCall).year_length(year);
  });
}

int xios_lite_get_day_length_in_seconds(long long* out) {
  return xios_lite::c_api::guarded(xios_lite::kLibrary, [&] {
    constexpr const char* kCall = "xios_get_day_length_in_seconds";
    xios_lite::require(out, kCall, "out");
    *out = xios_lite::calendar_for(kCall).day_length();
  });
}

int xios_lite_date_convert_from_string(const char* text, xios_lite_date* out) {
  return xios_lite::c_api::guarded(xios_lite::kLibrary, [&] {
    constexpr const char* kCall = "xios_date_convert_from_string";
    xios_lite::require(text, kCall, "text");
    xios_lite::require(out, kCall, "out");
    const Calendar& cal = xios_lite::calendar_for(kCall);
    Date d;
    if (const std::string why = xios_lite::parse_date(text, cal, d); !why.empty()) {
      xios_lite::fail_argument(kCall, why);
    }
    *out = xios_lite::to_c(d);
  });
}

int xios_lite_date_compare(const xios_lite_date* date1, const xios_lite_date* date2, int* order) {
  return xios_lite::c_api::guarded(xios_lite::kLibrary, [&] {
    constexpr const char* kCall = "xios_date_compare";
    xios_lite::require(date1, kCall, "date1");
    xios_lite::require(date2, kCall, "date2");
    xios_lite::require(order, kCall, "order");
    const int a[] = {date1->year, date1->month,  date1->day,
                     date1->hour, date1->minute, date1->second};
    const int b[] = {date2->year, date2->month,  date2->day,
                     date2->hour, date2->minute, date2->second};
    const auto c = std::lexicographical_compare_three_way(std::begin(a), std::end(a), std::begin(b),
                                                          std::end(b));
    *order = c < 0 ? -1 : (c > 0 ? 1 : 0);
  });
}

int xios_lite_duration_equal(const xios_lite_duration* dur1, const xios_lite_duration* dur2,
                             int* equal) {
  return xios_lite::c_api::guarded(xios_lite::kLibrary, [&] {
    constexpr const char* kCall = "xios_duration_eq";
    xios_lite::require(dur1, kCall, "dur1");
    xios_lite::require(dur2, kCall, "dur2");
    xios_lite::require(equal, kCall, "equal");
    *equal = dur1->year == dur2->year && dur1->month == dur2->month && dur1->day == dur2->day &&
                     dur1->hour == dur2->hour && dur1->minute == dur2->minute &&
                     dur1->second == dur2->second && dur1->timestep == dur2->timestep
                 ? 1
                 : 0;
  });
}

int xios_lite_date_convert_to_string(const xios_lite_date* date, char* text, int size) {
  return xios_lite::c_api::guarded(xios_lite::kLibrary, [&] {
    constexpr const char* kCall = "xios_date_convert_to_string";
    xios_lite::require(date, kCall, "date");
    xios_lite::copy_out(xios_lite::format_date(xios_lite::to_date(*date)), text, size, kCall);
  });
}

int xios_lite_duration_convert_to_string(const xios_lite_duration* dur, char* text, int size) {
  return xios_lite::c_api::guarded(xios_lite::kLibrary, [&] {
    constexpr const char* kCall = "xios_duration_convert_to_string";
    xios_lite::require(dur, kCall, "duration");
    const std::pair<double, const char*> parts[] = {
        {dur->year, "y"},    {dur->month, "mo"}, {dur->day, "d"},      {dur->hour, "h"},
        {dur->minute, "mi"}, {dur->second, "s"}, {dur->timestep, "ts"}};
    std::string out;
    for (const auto& [value, unit] : parts) {
      if (value != 0.0) {
        // Appended piece by piece: GCC 12 warns (-Wrestrict) on "x" + std::string.
        if (!out.empty()) out.push_back(' ');
        out += xios_lite::number(value);
        out += unit;
      }
    }
    xios_lite::copy_out(out.empty() ? std::string("0s") : out, text, size, kCall);
  });
}

int xios_lite_duration_convert_from_string(const char* text, xios_lite_duration* out) {
  return xios_lite::c_api::guarded(xios_lite::kLibrary, [&] {
    constexpr const char* kCall = "xios_duration_convert_from_string";
    xios_lite::require(text, kCall, "text");
    xios_lite::require(out, kCall, "out");
    // Two-letter units first, so that "mo" and "mi" are not read as others.
    struct Unit {
      std::string_view name;
      double xios_lite_duration::*field;
    };
    static constexpr Unit kUnits[] = {
        {"ts", &xios_lite_duration::timestep}, {"mo", &xios_lite_duration::month},
        {"mi", &xios_lite_duration::minute},   {"y", &xios_lite_duration::year},
        {"d", &xios_lite_duration::day},       {"h", &xios_lite_duration::hour},
        {"s", &xios_lite_duration::second}};
    const std::string_view all = xios_lite::trim(text);
    std::string_view rest = all;
    const std::string bad = xios_lite::quote(all) +
                            " is not a duration such as 1d, 0.5h or 1y 2mo (units y, mo, d, h, "
                            "mi, s, ts)";
    if (rest.empty()) xios_lite::fail_argument(kCall, bad);
    xios_lite_duration d{};
    while (!rest.empty()) {
      // from_chars takes no leading '+'.
      std::string_view number = rest;
      if (number.front() == '+') number.remove_prefix(1);
      double v = 0.0;
      const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
      if (ec != std::errc{} || end == number.data() || !std::isfinite(v)) {
        xios_lite::fail_argument(kCall, bad);
      }
      rest = xios_lite::trim(rest.substr(static_cast<std::size_t>(end - rest.data())));
      const auto* unit = std::find_if(std::begin(kUnits), std::end(kUnits),
                                      [&](const Unit& u) { return rest.starts_with(u.name); });
      if (unit == std::end(kUnits)) xios_lite::fail_argument(kCall, bad);
      d.*(unit->field) += v;
      rest = xios_lite::trim(rest.substr(unit->name.size()));
    }
    *out = d;
  });
}

}  // extern "C"
