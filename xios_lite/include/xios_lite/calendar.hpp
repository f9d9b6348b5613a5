// Model time: calendars, dates and durations as XIOS writes them.
//
// Calendars: gregorian (proleptic), julian, noleap (365_day), all_leap
// (366_day), 360_day and user_defined (a day length in seconds and the
// lengths of the months). Durations ("frequencies": output_freq, freq_op,
// timestep, ...) are sums of years, months, days, seconds and timesteps:
// "1ts", "6h", "1d", "1mo", "1y", "1d12h", "2h30mi".
//
// Time inside xios_lite is counted in seconds since the calendar's start
// date; a duration turns into period boundaries on that axis. Month and year
// durations depend on the calendar (a gregorian February is 28 or 29 days),
// and days on the day length, so boundaries always come from
// Calendar::boundary(). The time origin (XIOS's time_origin) only moves the
// zero of the time axis written in files.
//
// Everything here is a pure value type: thread-safe, no MPI.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace xios_lite {

enum class CalendarType { kGregorian, kNoLeap, k360Day, kJulian, kAllLeap, kUserDefined };

/// The CF calendar attribute value: "gregorian", "noleap", "360_day",
/// "julian", "all_leap", "user_defined".
[[nodiscard]] std::string_view to_string(CalendarType type) noexcept;
/// Parses a calendar type as XIOS (Gregorian, Julian, NoLeap, AllLeap,
/// D360, user_defined) or CF (gregorian, standard, proleptic_gregorian,
/// julian, noleap, 365_day, all_leap, 366_day, 360_day) writes it, in any
/// case. False for anything else.
[[nodiscard]] bool parse_calendar_type(std::string_view text, CalendarType& out);

struct Date {
  int year = 2000;
  int month = 1;  ///< 1..months in the year
  int day = 1;    ///< 1..days in month
  int hour = 0;
  int minute = 0;
  int second = 0;
  friend bool operator==(const Date&, const Date&) = default;
};

/// "2000-01-01 00:00:00" (the form used in CF units and in the config).
[[nodiscard]] std::string format_date(const Date& date);
/// "20000101": the default form of split file names.
[[nodiscard]] std::string format_date_compact(const Date& date);

/// A duration as XIOS writes it: a sum of years, months, days, seconds
/// (h, mi and s) and timesteps, each a whole number.
struct Frequency {
  std::int64_t years = 0;
  std::int64_t months = 0;
  std::int64_t days = 0;
  std::int64_t seconds = 0;
  std::int64_t timesteps = 0;

  /// Unset (all zero): for optional durations such as split_freq.
  [[nodiscard]] bool is_set() const noexcept {
    return years != 0 || months != 0 || days != 0 || seconds != 0 || timesteps != 0;
  }
  /// Whether the length depends on the date (months, years).
  [[nodiscard]] bool is_calendar_dependent() const noexcept { return years != 0 || months != 0; }
  friend bool operator==(const Frequency&, const Frequency&) = default;
};

/// Parses "1ts", "30s", "15mi", "6h", "1d", "1mo", "1y" and sums of them
/// ("1d12h", "1y6mo"). Returns false (and leaves `out` alone) for anything
/// else, including a zero or negative total; with `zero_allowed`, "0ts"
/// or "0s" gives the unset (zero) duration (an offset of none).
[[nodiscard]] bool parse_frequency(std::string_view text, Frequency& out,
                                   bool zero_allowed = false);
/// The canonical text: "6h", "1d12h", "1y6mo", "2ts".
[[nodiscard]] std::string to_string(const Frequency& freq);

/// A user_defined calendar: the day length and the month lengths (the year
/// is their sum).
struct UserCalendar {
  std::int64_t day_length = 86400;  ///< seconds
  std::vector<int> month_lengths;   ///< days of each month of the year
  friend bool operator==(const UserCalendar&, const UserCalendar&) = default;
};

class Calendar {
 public:
  Calendar() = default;
  /// `timestep_seconds` > 0. Throws ep::Error(kArgument) for an invalid
  /// start date or user calendar. The time origin starts as the start date.
  Calendar(CalendarType type, Date start, std::int64_t timestep_seconds, UserCalendar user = {});

  [[nodiscard]] CalendarType type() const noexcept { return type_; }
  [[nodiscard]] const Date& start() const noexcept { return start_; }
  [[nodiscard]] std::int64_t timestep_seconds() const noexcept { return timestep_; }
  [[nodiscard]] const UserCalendar& user() const noexcept { return user_; }
  [[nodiscard]] std::int64_t day_length() const noexcept { return user_.day_length; }
  [[nodiscard]] int months_per_year() const noexcept;

  /// The date the time axis counts from ("seconds since <origin>"); throws
  /// for an invalid date.
  void set_time_origin(const Date& origin);
  [[nodiscard]] const Date& time_origin() const noexcept { return origin_; }
  /// Seconds from the time origin to the start date (added to every time written).
  [[nodiscard]] std::int64_t origin_offset() const { return -seconds_since_start(origin_); }

  [[nodiscard]] int days_in_month(int year, int month) const;
  [[nodiscard]] bool is_valid(const Date& date) const;

  /// Seconds from the start date to `date` (negative before the start).
  [[nodiscard]] std::int64_t seconds_since_start(const Date& date) const;
  /// Seconds from 1 January 00:00:00 of `date`'s year to `date`.
  [[nodiscard]] std::int64_t second_of_year(const Date& date) const;
  /// Length of `year` in seconds (a leap year's is a day longer in the
  /// gregorian and julian calendars).
  [[nodiscard]] std::int64_t year_length(int year) const;
  [[nodiscard]] Date date_at(std::int64_t seconds_since_start) const;
  /// Time of timestep `step` (step 0 is the start date).
  [[nodiscard]] std::int64_t time_of_step(std::int64_t step) const noexcept {
    return step * timestep_;
  }

  /// `date` + `duration` (months and years first, clamping the day to the
  /// month's length, then days, seconds and timesteps).
  [[nodiscard]] Date add(const Date& date, const Frequency& duration) const;
  /// Seconds of a duration without months or years (days at the day length).
  [[nodiscard]] std::int64_t fixed_seconds(const Frequency& duration) const noexcept {
    return duration.days * user_.day_length + duration.seconds + duration.timesteps * timestep_;
  }

  /// End of the k-th period of `freq` counted from the start: start + k * freq,
  /// in seconds since the start (k >= 0).
  [[nodiscard]] std::int64_t boundary(const Frequency& freq, std::int64_t k) const;

 private:
  [[nodiscard]] std::int64_t days_from_epoch(int year, int month, int day) const;
  [[nodiscard]] std::int64_t absolute_seconds(const Date& d) const;
  [[nodiscard]] Date from_absolute(std::int64_t seconds) const;
  [[nodiscard]] Date add_months(const Date& d, std::int64_t months) const;

  CalendarType type_ = CalendarType::kGregorian;
  Date start_;
  Date origin_;
  std::int64_t timestep_ = 1;
  UserCalendar user_;
};

/// Parses a date as XIOS writes it: "YYYY[-MM[-DD[ hh[:mm[:ss]]]]]",
/// optionally followed by "+ <duration>" (time_origin = "2012-02-28
/// 15:00:00 + 1d"), in calendar `cal` (for the validity and the offset).
/// Returns "" and sets `out`, or says what is wrong.
[[nodiscard]] std::string parse_date(std::string_view text, const Calendar& cal, Date& out);

/// `date` in an XIOS split_freq_format: %y year, %mo month, %d day, %h
/// hour, %mi minute, %s second (zero-padded), %% a percent sign.
[[nodiscard]] std::string format_date_as(const Date& date, std::string_view format);

}  // namespace xios_lite
