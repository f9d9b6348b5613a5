// Calendars and frequencies. Day numbers: the gregorian calendar uses the
// proleptic civil-from-days conversion (exact for any year); noleap and
// 360_day are plain arithmetic on fixed month lengths.
#include "xios_lite/calendar.hpp"

#include <array>
#include <charconv>
#include <cstdio>

#include "ep/error.hpp"

namespace xios_lite {
namespace {

constexpr std::int64_t kSecondsPerDay = 86400;
constexpr std::array<int, 12> kNoLeapMonthDays{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) {
    --q;
  }
  return q;
}

bool is_gregorian_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// Days since 1970-01-01 of a proleptic gregorian date.
std::int64_t civil_to_days(std::int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = floor_div(y, 400);
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

Date days_to_civil(std::int64_t z) {
  z += 719468;
  const std::int64_t era = floor_div(z, 146097);
  const std::int64_t doe = z - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  Date d;
  d.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  d.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  d.year = static_cast<int>(yoe + era * 400 + (d.month <= 2 ? 1 : 0));
  return d;
}

std::int64_t seconds_of(Frequency::Unit unit) {
  switch (unit) {
    case Frequency::Unit::kSecond:
      return 1;
    case Frequency::Unit::kMinute:
      return 60;
    case Frequency::Unit::kHour:
      return 3600;
    case Frequency::Unit::kDay:
      return kSecondsPerDay;
    default:
      return 0;
  }
}

}  // namespace

std::string_view to_string(CalendarType type) noexcept {
  switch (type) {
    case CalendarType::kGregorian:
      return "gregorian";
    case CalendarType::kNoLeap:
      return "noleap";
    case CalendarType::k360Day:
      return "360_day";
  }
  return "gregorian";
}

std::string format_date(const Date& d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d", d.year, d.month, d.day, d.hour,
                d.minute, d.second);
  return buf;
}

std::string format_date_compact(const Date& d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d%02d%02d", d.year, d.month, d.day);
  return buf;
}

bool parse_frequency(std::string_view text, Frequency& out) {
  std::int64_t count = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (ec != std::errc{} || ptr == text.data() || count <= 0) {
    return false;
  }
  const std::string_view unit(ptr, static_cast<std::size_t>(text.data() + text.size() - ptr));
  Frequency f;
  f.count = count;
  if (unit == "ts") {
    f.unit = Frequency::Unit::kTimestep;
  } else if (unit == "s") {
    f.unit = Frequency::Unit::kSecond;
  } else if (unit == "mi") {
    f.unit = Frequency::Unit::kMinute;
  } else if (unit == "h") {
    f.unit = Frequency::Unit::kHour;
  } else if (unit == "d") {
    f.unit = Frequency::Unit::kDay;
  } else if (unit == "mo") {
    f.unit = Frequency::Unit::kMonth;
  } else if (unit == "y") {
    f.unit = Frequency::Unit::kYear;
  } else {
    return false;
  }
  out = f;
  return true;
}

std::string to_string(const Frequency& f) {
  static constexpr std::array<const char*, 7> kUnits{"ts", "s", "mi", "h", "d", "mo", "y"};
  return std::to_string(f.count) + kUnits[static_cast<std::size_t>(f.unit)];
}

Calendar::Calendar(CalendarType type, Date start, std::int64_t timestep_seconds)
    : type_(type), start_(start), timestep_(timestep_seconds) {
  if (!is_valid(start)) {
    throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::Calendar", -1,
                    "start date " + format_date(start) + " is not a valid " +
                        std::string(to_string(type)) + " date");
  }
  if (timestep_seconds <= 0) {
    throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::Calendar", -1,
                    "timestep " + std::to_string(timestep_seconds) + " s is not positive");
  }
}

int Calendar::days_in_month(int year, int month) const {
  switch (type_) {
    case CalendarType::k360Day:
      return 30;
    case CalendarType::kNoLeap:
      return kNoLeapMonthDays[static_cast<std::size_t>(month - 1)];
    case CalendarType::kGregorian:
      return month == 2 && is_gregorian_leap(year)
                 ? 29
                 : kNoLeapMonthDays[static_cast<std::size_t>(month - 1)];
  }
  return 30;
}

bool Calendar::is_valid(const Date& d) const {
  return d.month >= 1 && d.month <= 12 && d.day >= 1 && d.day <= days_in_month(d.year, d.month) &&
         d.hour >= 0 && d.hour < 24 && d.minute >= 0 && d.minute < 60 && d.second >= 0 &&
         d.second < 60;
}

std::int64_t Calendar::days_from_epoch(int year, int month, int day) const {
  switch (type_) {
    case CalendarType::kGregorian:
      return civil_to_days(year, month, day);
    case CalendarType::kNoLeap: {
      std::int64_t days = static_cast<std::int64_t>(year) * 365;
      for (int m = 1; m < month; ++m) {
        days += kNoLeapMonthDays[static_cast<std::size_t>(m - 1)];
      }
      return days + day - 1;
    }
    case CalendarType::k360Day:
      return static_cast<std::int64_t>(year) * 360 + std::int64_t{month - 1} * 30 + day - 1;
  }
  return 0;
}

std::int64_t Calendar::seconds_since_start(const Date& d) const {
  auto abs_seconds = [&](const Date& x) {
    return days_from_epoch(x.year, x.month, x.day) * kSecondsPerDay + std::int64_t{x.hour} * 3600 +
           std::int64_t{x.minute} * 60 + x.second;
  };
  return abs_seconds(d) - abs_seconds(start_);
}

Date Calendar::date_at(std::int64_t seconds) const {
  const std::int64_t total =
      days_from_epoch(start_.year, start_.month, start_.day) * kSecondsPerDay +
      std::int64_t{start_.hour} * 3600 + std::int64_t{start_.minute} * 60 + start_.second + seconds;
  const std::int64_t days = floor_div(total, kSecondsPerDay);
  const std::int64_t rem = total - days * kSecondsPerDay;
  Date d;
  switch (type_) {
    case CalendarType::kGregorian:
      d = days_to_civil(days);
      break;
    case CalendarType::kNoLeap: {
      d.year = static_cast<int>(floor_div(days, 365));
      std::int64_t doy = days - static_cast<std::int64_t>(d.year) * 365;
      d.month = 1;
      while (doy >= kNoLeapMonthDays[static_cast<std::size_t>(d.month - 1)]) {
        doy -= kNoLeapMonthDays[static_cast<std::size_t>(d.month - 1)];
        ++d.month;
      }
      d.day = static_cast<int>(doy) + 1;
      break;
    }
    case CalendarType::k360Day: {
      d.year = static_cast<int>(floor_div(days, 360));
      const std::int64_t doy = days - static_cast<std::int64_t>(d.year) * 360;
      d.month = static_cast<int>(doy / 30) + 1;
      d.day = static_cast<int>(doy % 30) + 1;
      break;
    }
  }
  d.hour = static_cast<int>(rem / 3600);
  d.minute = static_cast<int>((rem % 3600) / 60);
  d.second = static_cast<int>(rem % 60);
  return d;
}

std::int64_t Calendar::boundary(const Frequency& f, std::int64_t k) const {
  if (f.unit == Frequency::Unit::kTimestep) {
    return k * f.count * timestep_;
  }
  if (!f.is_calendar_dependent()) {
    return k * f.count * seconds_of(f.unit);
  }
  const std::int64_t months = k * f.count * (f.unit == Frequency::Unit::kYear ? 12 : 1);
  const std::int64_t m0 = start_.month - 1 + months;
  Date d = start_;
  d.year = static_cast<int>(start_.year + floor_div(m0, 12));
  d.month = static_cast<int>(m0 - floor_div(m0, 12) * 12) + 1;
  if (d.day > days_in_month(d.year, d.month)) {
    d.day = days_in_month(d.year, d.month);
  }
  return seconds_since_start(d);
}

}  // namespace xios_lite
