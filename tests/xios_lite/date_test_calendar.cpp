// A thread-local calendar standing for the current context's (see
// date_test_calendar.hpp): each test thread sets its own, as each model
// thread has its own current context.
#include "date_test_calendar.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "c_codes.hpp"
#include "ep/error.hpp"
#include "facade/calendar_source.hpp"

namespace {

thread_local std::optional<xios_lite::Calendar> t_calendar;

xios_lite::Date to_date(const xios_lite_date& d) {
  return xios_lite::Date{d.year, d.month, d.day, d.hour, d.minute, d.second};
}

}  // namespace

namespace xios_lite::facade {

const Calendar* current_calendar() noexcept { return t_calendar ? &*t_calendar : nullptr; }

Date current_time_origin() { return t_calendar ? t_calendar->time_origin() : Date{}; }

}  // namespace xios_lite::facade

extern "C" {

int xios_lite_date_test_set_calendar(const char* type, const xios_lite_date* start,
                                     int timestep_seconds, const xios_lite_date* origin) {
  return xios_lite::c_api::guarded("xios_lite", [&] {
    xios_lite::CalendarType t{};
    if (type == nullptr || start == nullptr || !xios_lite::parse_calendar_type(type, t)) {
      throw ep::Error(ep::ErrorKind::kArgument, "xios_lite_date_test_set_calendar", -1,
                      "unknown calendar type");
    }
    xios_lite::Calendar cal(t, to_date(*start), timestep_seconds);
    if (origin != nullptr) cal.set_time_origin(to_date(*origin));
    t_calendar = std::move(cal);
  });
}

int xios_lite_date_test_set_user_calendar(int day_length, const int* month_lengths, int n_months,
                                          const xios_lite_date* start, int timestep_seconds) {
  return xios_lite::c_api::guarded("xios_lite", [&] {
    if (start == nullptr || month_lengths == nullptr || n_months < 0) {
      throw ep::Error(ep::ErrorKind::kArgument, "xios_lite_date_test_set_user_calendar", -1,
                      "null or negative argument");
    }
    xios_lite::UserCalendar user;
    user.day_length = day_length;
    user.month_lengths.assign(month_lengths, month_lengths + n_months);
    t_calendar = xios_lite::Calendar(xios_lite::CalendarType::kUserDefined, to_date(*start),
                                     timestep_seconds, std::move(user));
  });
}

void xios_lite_date_test_clear_calendar(void) { t_calendar.reset(); }

}  // extern "C"
