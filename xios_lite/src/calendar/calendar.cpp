// Calendars and durations. Day numbers: the gregorian calendar uses the
// proleptic civil-from-days conversion and the julian one the Julian Day
// Number (both exact for any year); the calendars with the same year every
// year (noleap, all_leap, 360_day, user_defined) are plain arithmetic on
// their month lengths.
#include "xios_lite/calendar.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <iterator>
#include <numeric>

#include "common/enum_names.hpp"
#include "ep/error.hpp"
#include "text.hpp"

namespace xios_lite {
namespace {

constexpr std::array<int, 12> kNoLeapMonthDays{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
constexpr std::array<int, 12> kAllLeapMonthDays{31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) {
    --q;
  }
  return q;
}

bool is_gregorian_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
bool is_julian_leap(int y) { return floor_div(y, 4) * 4 == y; }

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

// The Julian Day Number of a julian-calendar date, and back.
std::int64_t julian_to_days(std::int64_t y, int m, int d) {
  const std::int64_t a = (14 - m) / 12;
  const std::int64_t yy = y + 4800 - a;
  const std::int64_t mm = m + 12 * a - 3;
  return d + (153 * mm + 2) / 5 + 365 * yy + floor_div(yy, 4) - 32083;
}

Date days_to_julian(std::int64_t jdn) {
  const std::int64_t c = jdn + 32082;
  const std::int64_t d = floor_div(4 * c + 3, 1461);
  const std::int64_t e = c - floor_div(1461 * d, 4);
  const std::int64_t m = (5 * e + 2) / 153;
  Date out;
  out.day = static_cast<int>(e - (153 * m + 2) / 5 + 1);
  out.month = static_cast<int>(m + 3 - 12 * (m / 10));
  out.year = static_cast<int>(d - 4800 + m / 10);
  return out;
}

// Reads an unsigned whole number at `at`; false when there is none.
bool read_number(std::string_view text, std::size_t& at, std::int64_t& value) {
  const char* first = text.data() + at;
  const char* last = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc{} || ptr == first || value < 0) {
    return false;
  }
  at += static_cast<std::size_t>(ptr - first);
  return true;
}

// The CF name of each calendar (what to_string writes) and the other names
// parse_calendar_type accepts (all lower case).
constexpr auto kCalendarNames =
    common::enum_names<CalendarType>({{CalendarType::kGregorian, "gregorian"},
                                      {CalendarType::kNoLeap, "noleap"},
                                      {CalendarType::k360Day, "360_day"},
                                      {CalendarType::kJulian, "julian"},
                                      {CalendarType::kAllLeap, "all_leap"},
                                      {CalendarType::kUserDefined, "user_defined"}});
constexpr auto kCalendarAliases = std::to_array<common::EnumName<CalendarType>>(
    {{CalendarType::kGregorian, "standard"},
     {CalendarType::kGregorian, "proleptic_gregorian"},
     {CalendarType::kNoLeap, "365_day"},
     {CalendarType::kAllLeap, "allleap"},
     {CalendarType::kAllLeap, "366_day"},
     {CalendarType::k360Day, "d360"},
     {CalendarType::kUserDefined, "userdefined"}});

}  // namespace

std::string_view to_string(CalendarType type) noexcept {
  return common::enum_name(kCalendarNames, type, "gregorian");
}

bool parse_calendar_type(std::string_view text, CalendarType& out) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto type = common::enum_from_name(kCalendarNames, lower);
  if (!type) type = common::enum_from_name(kCalendarAliases, lower);
  if (type) out = *type;
  return type.has_value();
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

std::string format_date_as(const Date& d, std::string_view format) {
  std::string out;
  char buf[16];
  for (std::size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%' || i + 1 >= format.size()) {
      out.push_back(format[i]);
      continue;
    }
    const std::string_view rest = format.substr(i + 1);
    auto put = [&](const char* spec, int value, std::size_t skip) {
      std::snprintf(buf, sizeof buf, spec, value);
      out += buf;
      i += skip;
    };
    if (rest.rfind("mo", 0) == 0) {
      put("%02d", d.month, 2);
    } else if (rest.rfind("mi", 0) == 0) {
      put("%02d", d.minute, 2);
    } else if (rest[0] == 'y') {
      put("%04d", d.year, 1);
    } else if (rest[0] == 'd') {
      put("%02d", d.day, 1);
    } else if (rest[0] == 'h') {
      put("%02d", d.hour, 1);
    } else if (rest[0] == 's') {
      put("%02d", d.second, 1);
    } else if (rest[0] == '%') {
      out.push_back('%');
      ++i;
    } else {
      out.push_back('%');
    }
  }
  return out;
}

bool parse_frequency(std::string_view text, Frequency& out, bool zero_allowed) {
  // XIOS's units, each adding its count times a scale to one field; the
  // two-letter units first, so that "mo" and "mi" are not read as other units.
  struct Unit {
    std::string_view text;
    std::int64_t Frequency::*field;
    std::int64_t scale;
  };
  static constexpr Unit kUnits[] = {
      {"ts", &Frequency::timesteps, 1}, {"mo", &Frequency::months, 1},
      {"mi", &Frequency::seconds, 60},  {"y", &Frequency::years, 1},
      {"d", &Frequency::days, 1},       {"h", &Frequency::seconds, 3600},
      {"s", &Frequency::seconds, 1}};
  text = trim(text);
  Frequency f;
  std::size_t at = 0;
  if (text.empty()) {
    return false;
  }
  while (at < text.size()) {
    std::int64_t count = 0;
    if (!read_number(text, at, count)) {
      return false;
    }
    const std::string_view rest = text.substr(at);
    const auto* unit = std::find_if(std::begin(kUnits), std::end(kUnits),
                                    [&](const Unit& u) { return rest.starts_with(u.text); });
    if (unit == std::end(kUnits)) {
      return false;
    }
    f.*(unit->field) += unit->scale * count;
    at += unit->text.size();
  }
  if (!f.is_set() && !zero_allowed) {
    return false;
  }
  out = f;
  return true;
}

std::string to_string(const Frequency& f) {
  std::string out;
  auto add = [&out](std::int64_t n, const char* unit) {
    if (n != 0) {
      out += std::to_string(n) + unit;
    }
  };
  add(f.years, "y");
  add(f.months, "mo");
  add(f.days, "d");
  add(f.seconds / 3600, "h");
  add(f.seconds % 3600 / 60, "mi");
  add(f.seconds % 60, "s");
  add(f.timesteps, "ts");
  return out.empty() ? "0s" : out;
}

Calendar::Calendar(CalendarType type, Date start, std::int64_t timestep_seconds, UserCalendar user)
    : type_(type),
      start_(start),
      origin_(start),
      timestep_(timestep_seconds),
      user_(std::move(user)) {
  if (type_ == CalendarType::kUserDefined) {
    if (user_.day_length <= 0 || user_.month_lengths.empty() ||
        std::any_of(user_.month_lengths.begin(), user_.month_lengths.end(),
                    [](int m) { return m <= 0; })) {
      throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::Calendar", -1,
                      "a user_defined calendar needs a positive day_length and month_lengths "
                      "of at least one positive month");
    }
  } else {
    user_ = UserCalendar{};
  }
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

void Calendar::set_time_origin(const Date& origin) {
  if (!is_valid(origin)) {
    throw ep::Error(ep::ErrorKind::kArgument, "xios_lite::Calendar", -1,
                    "time origin " + format_date(origin) + " is not a valid " +
                        std::string(to_string(type_)) + " date");
  }
  origin_ = origin;
}

int Calendar::months_per_year() const noexcept {
  return type_ == CalendarType::kUserDefined ? static_cast<int>(user_.month_lengths.size()) : 12;
}

int Calendar::days_in_month(int year, int month) const {
  const auto m = static_cast<std::size_t>(month - 1);
  switch (type_) {
    case CalendarType::k360Day:
      return 30;
    case CalendarType::kNoLeap:
      return kNoLeapMonthDays[m];
    case CalendarType::kAllLeap:
      return kAllLeapMonthDays[m];
    case CalendarType::kGregorian:
      return month == 2 && is_gregorian_leap(year) ? 29 : kNoLeapMonthDays[m];
    case CalendarType::kJulian:
      return month == 2 && is_julian_leap(year) ? 29 : kNoLeapMonthDays[m];
    case CalendarType::kUserDefined:
      return user_.month_lengths[m];
  }
  return 30;
}

bool Calendar::is_valid(const Date& d) const {
  const std::int64_t in_day = static_cast<std::int64_t>(d.hour) * 3600 +
                              static_cast<std::int64_t>(d.minute) * 60 + d.second;
  return d.month >= 1 && d.month <= months_per_year() && d.day >= 1 &&
         d.day <= days_in_month(d.year, d.month) && d.hour >= 0 && d.minute >= 0 && d.minute < 60 &&
         d.second >= 0 && d.second < 60 && in_day < user_.day_length;
}

std::int64_t Calendar::days_from_epoch(int year, int month, int day) const {
  switch (type_) {
    case CalendarType::kGregorian:
      return civil_to_days(year, month, day);
    case CalendarType::kJulian:
      return julian_to_days(year, month, day);
    default: {
      // The same months every year.
      std::int64_t year_days = 0;
      std::int64_t before = 0;
      for (int m = 1; m <= months_per_year(); ++m) {
        year_days += days_in_month(0, m);
        before += m < month ? days_in_month(0, m) : 0;
      }
      return static_cast<std::int64_t>(year) * year_days + before + day - 1;
    }
  }
}

std::int64_t Calendar::absolute_seconds(const Date& d) const {
  return days_from_epoch(d.year, d.month, d.day) * user_.day_length +
         static_cast<std::int64_t>(d.hour) * 3600 + static_cast<std::int64_t>(d.minute) * 60 +
         d.second;
}

Date Calendar::from_absolute(std::int64_t total) const {
  const std::int64_t days = floor_div(total, user_.day_length);
  const std::int64_t rem = total - days * user_.day_length;
  Date d;
  switch (type_) {
    case CalendarType::kGregorian:
      d = days_to_civil(days);
      break;
    case CalendarType::kJulian:
      d = days_to_julian(days);
      break;
    default: {
      std::int64_t year_days = 0;
      for (int m = 1; m <= months_per_year(); ++m) {
        year_days += days_in_month(0, m);
      }
      d.year = static_cast<int>(floor_div(days, year_days));
      std::int64_t doy = days - static_cast<std::int64_t>(d.year) * year_days;
      d.month = 1;
      while (doy >= days_in_month(d.year, d.month)) {
        doy -= days_in_month(d.year, d.month);
        ++d.month;
      }
      d.day = static_cast<int>(doy) + 1;
      break;
    }
  }
  d.hour = static_cast<int>(rem / 3600);
  d.minute = static_cast<int>((rem % 3600) / 60);
  d.second = static_cast<int>(rem % 60);
  return d;
}

std::int64_t Calendar::seconds_since_start(const Date& d) const {
  return absolute_seconds(d) - absolute_seconds(start_);
}

std::int64_t Calendar::second_of_year(const Date& d) const {
  return absolute_seconds(d) - days_from_epoch(d.year, 1, 1) * user_.day_length;
}

std::int64_t Calendar::year_length(int year) const {
  return (days_from_epoch(year + 1, 1, 1) - days_from_epoch(year, 1, 1)) * user_.day_length;
}

Date Calendar::date_at(std::int64_t seconds) const {
  return from_absolute(absolute_seconds(start_) + seconds);
}

Date Calendar::add_months(const Date& from, std::int64_t months) const {
  const std::int64_t per_year = months_per_year();
  const std::int64_t m0 = from.month - 1 + months;
  Date d = from;
  d.year = static_cast<int>(from.year + floor_div(m0, per_year));
  d.month = static_cast<int>(m0 - floor_div(m0, per_year) * per_year) + 1;
  d.day = std::min(d.day, days_in_month(d.year, d.month));
  return d;
}

Date Calendar::add(const Date& date, const Frequency& f) const {
  const Date shifted = add_months(date, f.years * months_per_year() + f.months);
  return from_absolute(absolute_seconds(shifted) + fixed_seconds(f));
}

std::int64_t Calendar::boundary(const Frequency& f, std::int64_t k) const {
  std::int64_t t = 0;
  if (f.is_calendar_dependent()) {
    t = seconds_since_start(add_months(start_, k * (f.years * months_per_year() + f.months)));
  }
  return t + k * fixed_seconds(f);
}

std::string parse_date(std::string_view text, const Calendar& cal, Date& out) {
  std::string_view date_part = trim(text);
  std::string_view offset_part;
  if (const auto plus = date_part.find('+'); plus != std::string_view::npos) {
    offset_part = trim(date_part.substr(plus + 1));
    date_part = trim(date_part.substr(0, plus));
  }
  // YYYY[-MM[-DD[ hh[:mm[:ss]]]]]: each field after its separator.
  Date d;
  d.month = d.day = 1;
  int* fields[6] = {&d.year, &d.month, &d.day, &d.hour, &d.minute, &d.second};
  const char separators[6] = {'\0', '-', '-', ' ', ':', ':'};
  std::size_t at = 0;
  bool negative = !date_part.empty() && date_part[0] == '-';
  at = negative ? 1 : 0;
  for (int f = 0; f < 6; ++f) {
    if (f > 0) {
      if (at >= date_part.size()) {
        break;
      }
      if (date_part[at] != separators[f]) {
        return quote(text) + " is not a date YYYY-MM-DD hh:mm:ss";
      }
      ++at;
      while (f == 3 && at < date_part.size() && date_part[at] == ' ') ++at;
    }
    std::int64_t v = 0;
    if (!read_number(date_part, at, v) || v > 1000000) {
      return quote(text) + " is not a date YYYY-MM-DD hh:mm:ss";
    }
    *fields[f] = static_cast<int>(f == 0 && negative ? -v : v);
  }
  if (at != date_part.size()) {
    return quote(text) + " is not a date YYYY-MM-DD hh:mm:ss";
  }
  if (!cal.is_valid(d)) {
    return quote(text) + " out of range for a " + std::string(to_string(cal.type())) + " calendar";
  }
  if (!offset_part.empty()) {
    Frequency offset;
    if (!parse_frequency(offset_part, offset) || offset.timesteps != 0) {
      return quote(text) + ": bad offset " + quote(offset_part) +
             " (expected a duration such as 1d or 12h)";
    }
    d = cal.add(d, offset);
  }
  out = d;
  return "";
}

}  // namespace xios_lite
