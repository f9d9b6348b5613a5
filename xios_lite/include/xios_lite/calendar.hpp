// Model time: calendars (gregorian, noleap, 360_day), dates and the output
// frequencies of the configuration ("1ts", "6h", "1d", "1mo").
//
// Time inside xios_lite is counted in seconds since the calendar's start
// date; a Frequency turns into period boundaries on that axis. Month and year
// frequencies depend on the calendar (a gregorian February is 28 or 29 days),
// so boundaries always come from Calendar::boundary().
//
// Everything here is a pure value type: thread-safe, no MPI.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace xios_lite {

enum class CalendarType { kGregorian, kNoLeap, k360Day };

/// "gregorian" / "noleap" / "360_day" (the CF calendar attribute values).
[[nodiscard]] std::string_view to_string(CalendarType type) noexcept;

struct Date {
  int year = 2000;
  int month = 1;  ///< 1..12
  int day = 1;    ///< 1..days in month
  int hour = 0;
  int minute = 0;
  int second = 0;
  friend bool operator==(const Date&, const Date&) = default;
};

/// "2000-01-01 00:00:00" (the form used in CF units and in the config).
[[nodiscard]] std::string format_date(const Date& date);
/// "20000101": the form of split file names.
[[nodiscard]] std::string format_date_compact(const Date& date);

/// A frequency as XIOS writes it: a positive count and a unit.
struct Frequency {
  enum class Unit { kTimestep, kSecond, kMinute, kHour, kDay, kMonth, kYear };
  std::int64_t count = 0;  ///< 0: unset (for optional frequencies such as split_freq)
  Unit unit = Unit::kTimestep;

  [[nodiscard]] bool is_set() const noexcept { return count > 0; }
  /// Whether the length depends on the calendar (months, years).
  [[nodiscard]] bool is_calendar_dependent() const noexcept {
    return unit == Unit::kMonth || unit == Unit::kYear;
  }
  friend bool operator==(const Frequency&, const Frequency&) = default;
};

/// Parses "1ts", "30s", "15mi", "6h", "1d", "1mo", "1y". Returns false (and
/// leaves `out` alone) for anything else, including a zero or negative count.
[[nodiscard]] bool parse_frequency(std::string_view text, Frequency& out);
[[nodiscard]] std::string to_string(const Frequency& freq);

class Calendar {
 public:
  Calendar() = default;
  /// `timestep_seconds` > 0. Throws ep::Error(kArgument) for an invalid start date.
  Calendar(CalendarType type, Date start, std::int64_t timestep_seconds);

  [[nodiscard]] CalendarType type() const noexcept { return type_; }
  [[nodiscard]] const Date& start() const noexcept { return start_; }
  [[nodiscard]] std::int64_t timestep_seconds() const noexcept { return timestep_; }

  [[nodiscard]] int days_in_month(int year, int month) const;
  [[nodiscard]] bool is_valid(const Date& date) const;

  /// Seconds from the start date to `date` (negative before the start).
  [[nodiscard]] std::int64_t seconds_since_start(const Date& date) const;
  [[nodiscard]] Date date_at(std::int64_t seconds_since_start) const;
  /// Time of timestep `step` (step 0 is the start date).
  [[nodiscard]] std::int64_t time_of_step(std::int64_t step) const noexcept {
    return step * timestep_;
  }

  /// End of the k-th period of `freq` counted from the start: start + k * freq,
  /// in seconds since the start (k >= 0).
  [[nodiscard]] std::int64_t boundary(const Frequency& freq, std::int64_t k) const;

 private:
  [[nodiscard]] std::int64_t days_from_epoch(int year, int month, int day) const;

  CalendarType type_ = CalendarType::kGregorian;
  Date start_;
  std::int64_t timestep_ = 1;
};

}  // namespace xios_lite
