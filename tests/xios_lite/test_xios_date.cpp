// The date and duration functions of xios_lite/xios_date.h, against values
// worked out by hand in the gregorian, julian, noleap, all_leap, 360_day and
// a user_defined calendar. The calling thread's calendar comes from the
// test-only source of date_test_calendar.hpp. No MPI.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "date_test_calendar.hpp"
#include "ep/ep.h"
#include "xios_lite/xios_date.h"

namespace {

xios_lite_date date(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  return xios_lite_date{y, mo, d, h, mi, s};
}

xios_lite_duration duration(double y, double mo, double d, double h, double mi, double s,
                            double ts = 0.0) {
  return xios_lite_duration{y, mo, d, h, mi, s, ts};
}

std::string text(const xios_lite_date& d) {
  char buf[32];
  EXPECT_EQ(xios_lite_date_convert_to_string(&d, buf, sizeof buf), EP_OK);
  return buf;
}

std::string text(const xios_lite_duration& d) {
  char buf[128];
  EXPECT_EQ(xios_lite_duration_convert_to_string(&d, buf, sizeof buf), EP_OK);
  return buf;
}

// date + dur as text ("" and the message in the failure when it fails).
std::string plus(const xios_lite_date& d, const xios_lite_duration& dur) {
  xios_lite_date out{};
  const int rc = xios_lite_date_add_duration(&d, &dur, &out);
  EXPECT_EQ(rc, EP_OK) << ep_last_error();
  return rc == EP_OK ? text(out) : "";
}

void use(const char* type, xios_lite_date start = date(2000, 1, 1), int timestep = 1800) {
  ASSERT_EQ(xios_lite_date_test_set_calendar(type, &start, timestep, nullptr), EP_OK)
      << ep_last_error();
}

long long year_length(int year) {
  long long out = -1;
  EXPECT_EQ(xios_lite_get_year_length_in_seconds(year, &out), EP_OK) << ep_last_error();
  return out;
}

long long second_of_year(const xios_lite_date& d) {
  long long out = -1;
  EXPECT_EQ(xios_lite_date_get_second_of_year(&d, &out), EP_OK) << ep_last_error();
  return out;
}

class XiosDate : public ::testing::Test {
 protected:
  void TearDown() override { xios_lite_date_test_clear_calendar(); }
};

TEST_F(XiosDate, GregorianMonthsClampToFebruaryOfLeapYears) {
  use("gregorian");
  const auto month = duration(0, 1, 0, 0, 0, 0);
  EXPECT_EQ(plus(date(2000, 1, 31), month), "2000-02-29 00:00:00");  // 2000: leap (400)
  EXPECT_EQ(plus(date(1900, 1, 31), month), "1900-02-28 00:00:00");  // 1900: not (100)
  EXPECT_EQ(plus(date(2004, 1, 31, 6), month), "2004-02-29 06:00:00");
  EXPECT_EQ(plus(date(2001, 1, 31), month), "2001-02-28 00:00:00");
  EXPECT_EQ(plus(date(2000, 12, 15), month), "2001-01-15 00:00:00");
  EXPECT_EQ(plus(date(2000, 2, 28, 12), duration(0, 0, 1, 0, 0, 0)), "2000-02-29 12:00:00");
  EXPECT_EQ(plus(date(2001, 2, 28, 12), duration(0, 0, 1, 0, 0, 0)), "2001-03-01 12:00:00");
  // A year is twelve months: 29 February + 1 year is 28 February.
  EXPECT_EQ(plus(date(2000, 2, 29), duration(1, 0, 0, 0, 0, 0)), "2001-02-28 00:00:00");
  EXPECT_EQ(plus(date(2000, 1, 15), duration(0.5, 0, 0, 0, 0, 0)), "2000-07-15 00:00:00");
}

TEST_F(XiosDate, SubtractingGoesBackAndCrossesYears) {
  use("gregorian");
  xios_lite_date out{};
  const auto start = date(2000, 1, 1);
  const auto hours = duration(0, 0, 0, 2.5, 0, 0);
  ASSERT_EQ(xios_lite_date_sub_duration(&start, &hours, &out), EP_OK) << ep_last_error();
  EXPECT_EQ(text(out), "1999-12-31 21:30:00");
  const auto month = duration(0, 1, 0, 0, 0, 0);
  const auto march = date(2000, 3, 31);
  ASSERT_EQ(xios_lite_date_sub_duration(&march, &month, &out), EP_OK);
  EXPECT_EQ(text(out), "2000-02-29 00:00:00");
}

TEST_F(XiosDate, RealComponentsAndTimesteps) {
  use("gregorian", date(2000, 1, 1), 1800);
  // 0.5 h, 1.5 d, 3 timesteps of 1800 s, -90 s.
  EXPECT_EQ(plus(date(2000, 1, 1), duration(0, 0, 0, 0.5, 0, 0)), "2000-01-01 00:30:00");
  EXPECT_EQ(plus(date(2000, 1, 1), duration(0, 0, 1.5, 0, 0, 0)), "2000-01-02 12:00:00");
  EXPECT_EQ(plus(date(2000, 1, 1), duration(0, 0, 0, 0, 0, 0, 3)), "2000-01-01 01:30:00");
  EXPECT_EQ(plus(date(2000, 1, 1), duration(0, 0, 0, 0, 0, -90)), "1999-12-31 23:58:30");
  // XIOS's test: 3 * (dtime + dtime) with dtime = 0.5 * (3600 s + 1 ts).
  EXPECT_EQ(plus(date(2000, 1, 1), duration(0, 0, 0, 0, 0, 3 * 3600.0, 3)), "2000-01-01 04:30:00");
}

TEST_F(XiosDate, AFractionOfAMonthIsRefused) {
  use("gregorian");
  const auto d = date(2000, 1, 1);
  const auto dur = duration(0, 1.5, 0, 0, 0, 0);
  xios_lite_date out = date(1, 1, 1);
  EXPECT_EQ(xios_lite_date_add_duration(&d, &dur, &out), EP_ERR_ARGUMENT);
  EXPECT_NE(std::string(ep_last_error()).find("1.5"), std::string::npos) << ep_last_error();
  EXPECT_NE(std::string(ep_last_error()).find("months"), std::string::npos) << ep_last_error();
  EXPECT_EQ(text(out), "0001-01-01 00:00:00");  // untouched
}

TEST_F(XiosDate, NoCalendarNoInvalidDate) {
  const auto d = date(2000, 1, 1);
  long long s = 0;
  EXPECT_EQ(xios_lite_date_convert_to_seconds(&d, &s), EP_ERR_ARGUMENT);
  EXPECT_NE(std::string(ep_last_error()).find("no calendar"), std::string::npos) << ep_last_error();
  EXPECT_EQ(xios_lite_get_day_length_in_seconds(&s), EP_ERR_ARGUMENT);
  use("gregorian");
  const auto bad = date(2001, 2, 29);
  EXPECT_EQ(xios_lite_date_get_second_of_year(&bad, &s), EP_ERR_ARGUMENT);
  EXPECT_NE(std::string(ep_last_error()).find("2001-02-29 00:00:00 is not a valid gregorian"),
            std::string::npos)
      << ep_last_error();
  const auto late = date(2000, 1, 1, 24);
  EXPECT_EQ(xios_lite_date_get_second_of_day(&late, &s), EP_ERR_ARGUMENT);
}

TEST_F(XiosDate, YearAndDayLengths) {
  use("gregorian");
  EXPECT_EQ(year_length(2000), 366LL * 86400);
  EXPECT_EQ(year_length(1900), 365LL * 86400);
  EXPECT_EQ(year_length(2001), 365LL * 86400);
  EXPECT_EQ(year_length(2004), 366LL * 86400);
  use("julian");
  EXPECT_EQ(year_length(1900), 366LL * 86400);  // every fourth year
  use("noleap");
  EXPECT_EQ(year_length(2000), 365LL * 86400);
  use("all_leap");
  EXPECT_EQ(year_length(2001), 366LL * 86400);
  use("360_day");
  EXPECT_EQ(year_length(2000), 360LL * 86400);
  long long day = 0;
  ASSERT_EQ(xios_lite_get_day_length_in_seconds(&day), EP_OK);
  EXPECT_EQ(day, 86400);
}

TEST_F(XiosDate, PositionInTheYearAndTheDay) {
  use("gregorian");
  EXPECT_EQ(second_of_year(date(2000, 1, 1)), 0);
  EXPECT_EQ(second_of_year(date(2000, 3, 1)), (31 + 29) * 86400LL);
  EXPECT_EQ(second_of_year(date(2001, 3, 1)), (31 + 28) * 86400LL);
  EXPECT_EQ(second_of_year(date(2000, 12, 31, 23, 59, 59)), 366 * 86400LL - 1);
  double v = -1;
  const auto feb = date(2000, 2, 1, 12);
  ASSERT_EQ(xios_lite_date_get_day_of_year(&feb, &v), EP_OK);
  EXPECT_DOUBLE_EQ(v, 31.5);
  const auto july = date(2000, 7, 2);  // 182 + 1 days into a 366-day year: half
  ASSERT_EQ(xios_lite_date_get_fraction_of_year(&july, &v), EP_OK);
  EXPECT_DOUBLE_EQ(v, 183.0 / 366.0);
  const auto t = date(2000, 5, 5, 13, 25, 10);
  long long s = 0;
  ASSERT_EQ(xios_lite_date_get_second_of_day(&t, &s), EP_OK);
  EXPECT_EQ(s, 13 * 3600 + 25 * 60 + 10);
  const auto noon = date(2000, 5, 5, 18);
  ASSERT_EQ(xios_lite_date_get_fraction_of_day(&noon, &v), EP_OK);
  EXPECT_DOUBLE_EQ(v, 0.75);

  use("noleap");
  EXPECT_EQ(second_of_year(date(2000, 3, 1)), (31 + 28) * 86400LL);
  ASSERT_EQ(xios_lite_date_get_fraction_of_year(&july, &v), EP_OK);
  EXPECT_DOUBLE_EQ(v, 182.0 / 365.0);  // 181 days to 1 July, + 1
  use("360_day");
  EXPECT_EQ(second_of_year(date(2000, 3, 1)), 60 * 86400LL);
  const auto mid = date(2000, 7, 1);  // half a 360-day year
  ASSERT_EQ(xios_lite_date_get_fraction_of_year(&mid, &v), EP_OK);
  EXPECT_DOUBLE_EQ(v, 0.5);
}

TEST_F(XiosDate, SecondsSinceTheTimeOrigin) {
  const auto start = date(2000, 1, 1);
  const auto origin = date(1999, 12, 31);
  ASSERT_EQ(xios_lite_date_test_set_calendar("gregorian", &start, 3600, &origin), EP_OK);
  long long s = 0;
  const auto march = date(2000, 3, 1);
  ASSERT_EQ(xios_lite_date_convert_to_seconds(&march, &s), EP_OK) << ep_last_error();
  EXPECT_EQ(s, (1 + 31 + 29) * 86400LL);
  const auto before = date(1999, 12, 30, 23);
  ASSERT_EQ(xios_lite_date_convert_to_seconds(&before, &s), EP_OK);
  EXPECT_EQ(s, -3600);
  ASSERT_EQ(xios_lite_date_test_set_calendar("noleap", &start, 3600, &origin), EP_OK);
  ASSERT_EQ(xios_lite_date_convert_to_seconds(&march, &s), EP_OK);
  EXPECT_EQ(s, (1 + 31 + 28) * 86400LL);
}

TEST_F(XiosDate, OtherCalendars) {
  use("noleap");
  EXPECT_EQ(plus(date(2000, 1, 31), duration(0, 1, 0, 0, 0, 0)), "2000-02-28 00:00:00");
  EXPECT_EQ(plus(date(2000, 2, 28), duration(0, 0, 1, 0, 0, 0)), "2000-03-01 00:00:00");
  use("all_leap");
  EXPECT_EQ(plus(date(2001, 2, 28), duration(0, 0, 1, 0, 0, 0)), "2001-02-29 00:00:00");
  use("360_day");
  EXPECT_EQ(plus(date(2000, 1, 30), duration(0, 1, 0, 0, 0, 0)), "2000-02-30 00:00:00");
  EXPECT_EQ(plus(date(2000, 12, 30), duration(0, 0, 1, 0, 0, 0)), "2001-01-01 00:00:00");
  EXPECT_EQ(plus(date(2000, 5, 10), duration(1, 0, 0, 0, 0, 0)), "2001-05-10 00:00:00");
  use("julian");
  EXPECT_EQ(plus(date(1900, 2, 28), duration(0, 0, 1, 0, 0, 0)), "1900-02-29 00:00:00");
  // A user_defined year of two months of 10 and 20 days of 3000 s.
  const int months[] = {10, 20};
  const auto start = date(1, 1, 1);
  ASSERT_EQ(xios_lite_date_test_set_user_calendar(3000, months, 2, &start, 600), EP_OK)
      << ep_last_error();
  EXPECT_EQ(year_length(5), 30 * 3000LL);
  EXPECT_EQ(plus(date(1, 1, 10), duration(0, 0, 1, 0, 0, 0)), "0001-02-01 00:00:00");
  EXPECT_EQ(plus(date(1, 2, 20), duration(0, 0, 0, 0, 0, 0, 5)), "0002-01-01 00:00:00");
  EXPECT_EQ(second_of_year(date(1, 2, 1)), 10 * 3000LL);
  long long day = 0;
  ASSERT_EQ(xios_lite_get_day_length_in_seconds(&day), EP_OK);
  EXPECT_EQ(day, 3000);
}

TEST_F(XiosDate, DateMinusDate) {
  use("gregorian");
  const auto a = date(2000, 3, 1);
  const auto b = date(2000, 2, 28, 12, 30, 15);
  xios_lite_duration d{};
  ASSERT_EQ(xios_lite_date_sub(&a, &b, &d), EP_OK) << ep_last_error();
  EXPECT_EQ(text(d), "1d 11h 29mi 45s");  // 29 February is there
  EXPECT_EQ(plus(b, d), "2000-03-01 00:00:00");
  ASSERT_EQ(xios_lite_date_sub(&b, &a, &d), EP_OK);
  EXPECT_EQ(text(d), "-1d -11h -29mi -45s");
  ASSERT_EQ(xios_lite_date_sub(&a, &a, &d), EP_OK);
  EXPECT_EQ(text(d), "0s");
}

TEST_F(XiosDate, ComparisonsNeedNoCalendar) {
  int order = 7;
  const auto a = date(2000, 1, 31, 23, 59, 59);
  const auto b = date(2000, 2, 1);
  ASSERT_EQ(xios_lite_date_compare(&a, &b, &order), EP_OK);
  EXPECT_EQ(order, -1);
  ASSERT_EQ(xios_lite_date_compare(&b, &a, &order), EP_OK);
  EXPECT_EQ(order, 1);
  ASSERT_EQ(xios_lite_date_compare(&a, &a, &order), EP_OK);
  EXPECT_EQ(order, 0);
  const auto older = date(1999, 12, 31, 23, 59, 59);
  ASSERT_EQ(xios_lite_date_compare(&older, &b, &order), EP_OK);
  EXPECT_EQ(order, -1);
  int equal = 7;
  const auto day = duration(0, 0, 1, 0, 0, 0);
  const auto hours = duration(0, 0, 0, 24, 0, 0);
  ASSERT_EQ(xios_lite_duration_equal(&day, &hours, &equal), EP_OK);
  EXPECT_EQ(equal, 0);  // component by component, as XIOS
  ASSERT_EQ(xios_lite_duration_equal(&day, &day, &equal), EP_OK);
  EXPECT_EQ(equal, 1);
}

TEST_F(XiosDate, Strings) {
  EXPECT_EQ(text(date(2000, 1, 1)), "2000-01-01 00:00:00");
  EXPECT_EQ(text(date(12345, 6, 7, 8, 9, 10)), "12345-06-07 08:09:10");
  char small[19];  // one short of the NUL
  const auto d = date(2000, 1, 1);
  EXPECT_EQ(xios_lite_date_convert_to_string(&d, small, sizeof small), EP_ERR_COUNT);
  EXPECT_EQ(text(duration(1, 2, 1.5, 6, 30, 10, 2)), "1y 2mo 1.5d 6h 30mi 10s 2ts");
  EXPECT_EQ(text(duration(0, 0, 0, 0, 0, 0)), "0s");
  EXPECT_EQ(text(duration(0, 0, 0, 0, 0, -3600)), "-3600s");

  xios_lite_duration dur{};
  ASSERT_EQ(xios_lite_duration_convert_from_string("1d12h", &dur), EP_OK) << ep_last_error();
  EXPECT_EQ(text(dur), "1d 12h");
  ASSERT_EQ(xios_lite_duration_convert_from_string(" 1y 2mo 0.5h 3 ts ", &dur), EP_OK);
  EXPECT_EQ(text(dur), "1y 2mo 0.5h 3ts");
  ASSERT_EQ(xios_lite_duration_convert_from_string("-30mi 1mi", &dur), EP_OK);
  EXPECT_EQ(text(dur), "-29mi");
  for (const char* bad : {"", "1x", "1d2", "d", "1 d 2 q"}) {
    EXPECT_EQ(xios_lite_duration_convert_from_string(bad, &dur), EP_ERR_ARGUMENT) << bad;
  }

  xios_lite_date out{};
  EXPECT_EQ(xios_lite_date_convert_from_string("2000-02-29 06:00:00", &out), EP_ERR_ARGUMENT);
  use("gregorian");
  ASSERT_EQ(xios_lite_date_convert_from_string("2000-02-29 06:00:00", &out), EP_OK)
      << ep_last_error();
  EXPECT_EQ(text(out), "2000-02-29 06:00:00");
  ASSERT_EQ(xios_lite_date_convert_from_string("2000-02-28 + 1d", &out), EP_OK);
  EXPECT_EQ(text(out), "2000-02-29 00:00:00");
  use("noleap");
  EXPECT_EQ(xios_lite_date_convert_from_string("2000-02-29 06:00:00", &out), EP_ERR_ARGUMENT);
  EXPECT_EQ(xios_lite_date_convert_from_string("yesterday", &out), EP_ERR_ARGUMENT);
}

// Each thread computes in its own current calendar, as each model thread in
// its own context: a noleap thread and a gregorian one at once.
TEST_F(XiosDate, EachThreadItsOwnCalendar) {
  long long lengths[2] = {0, 0};
  auto run = [&lengths](int i, const char* type) {
    const auto start = date(2000, 1, 1);
    if (xios_lite_date_test_set_calendar(type, &start, 60, nullptr) != EP_OK) return;
    for (int k = 0; k < 1000; ++k) {
      long long n = 0;
      if (xios_lite_get_year_length_in_seconds(2000, &n) != EP_OK || (k > 0 && n != lengths[i])) {
        lengths[i] = -1;
        return;
      }
      lengths[i] = n;
    }
    xios_lite_date_test_clear_calendar();
  };
  std::thread a(run, 0, "noleap");
  std::thread b(run, 1, "gregorian");
  a.join();
  b.join();
  EXPECT_EQ(lengths[0], 365LL * 86400);
  EXPECT_EQ(lengths[1], 366LL * 86400);
  long long n = 0;
  EXPECT_EQ(xios_lite_get_year_length_in_seconds(2000, &n), EP_ERR_ARGUMENT);  // none here
}

}  // namespace
