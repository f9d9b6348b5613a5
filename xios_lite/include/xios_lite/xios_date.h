/* Dates and durations as XIOS's Fortran and C interfaces have them
 * (xios_date, xios_duration): what the Fortran module xios_date_mod
 * (fortran/xios/xios_date.f90) binds to, and usable from C.
 *
 * A date is six whole numbers; a duration seven reals (XIOS's own layout), so
 * that 0.5 * xios_hour is a duration. Calendar arithmetic (adding months,
 * the day of the year, the length of a year, seconds since the time origin)
 * uses the calling thread's current context's calendar, as in XIOS; a call
 * that needs one when there is none fails with EP_ERR_ARGUMENT.
 *
 * Errors: every function returns EP_OK (0) or an EP_ERR_* code (ep/ep.h),
 * with the calling thread's message in ep_last_error(). Threads: every
 * function reads only its arguments and the calling thread's current
 * calendar, so threads call them at once freely. */
#ifndef XIOS_LITE_XIOS_DATE_H
#define XIOS_LITE_XIOS_DATE_H

#ifdef __cplusplus
extern "C" {
#endif

/* A C interface keeps C's naming (snake_case types). */
/* NOLINTBEGIN(readability-identifier-naming) */

/** A date (XIOS's xios_date): month 1..months of the year, day 1..days of
 *  the month, hour, minute and second from 0. */
typedef struct xios_lite_date {
  int year;
  int month;
  int day;
  int hour;
  int minute;
  int second;
} xios_lite_date;

/** A duration (XIOS's xios_duration): a sum of years, months, days, hours,
 *  minutes, seconds and timesteps, each any real number. */
typedef struct xios_lite_duration {
  double year;
  double month;
  double day;
  double hour;
  double minute;
  double second;
  double timestep;
} xios_lite_duration;

/* ---- with the current calendar ---- */

/** *out = date + dur: the months (years at the calendar's months per year)
 *  first, the day clamped to the new month's length (31 January + 1 month is
 *  28 or 29 February), then days (at the calendar's day length), hours,
 *  minutes, seconds and timesteps (at the calendar's timestep), rounded to
 *  the nearest second. A whole number of months is required (after the
 *  years): 0.5 month has no length; EP_ERR_ARGUMENT otherwise, and for an
 *  invalid date. */
int xios_lite_date_add_duration(const xios_lite_date* date, const xios_lite_duration* dur,
                                xios_lite_date* out);
/** *out = date - dur (date + (-dur)). */
int xios_lite_date_sub_duration(const xios_lite_date* date, const xios_lite_duration* dur,
                                xios_lite_date* out);
/** *out = date1 - date2 as days, hours, minutes and seconds (each with the
 *  sign of the difference; no months or years), so that
 *  date2 + (date1 - date2) == date1. */
int xios_lite_date_sub(const xios_lite_date* date1, const xios_lite_date* date2,
                       xios_lite_duration* out);
/** Seconds from the current calendar's time origin to `date` (XIOS's
 *  xios_date_convert_to_seconds). */
int xios_lite_date_convert_to_seconds(const xios_lite_date* date, long long* out);
/** Seconds from 1 January 00:00:00 of the date's year. */
int xios_lite_date_get_second_of_year(const xios_lite_date* date, long long* out);
/** Days (a real number) from 1 January 00:00:00: 0 on 1 January at
 *  midnight, 31.5 on 1 February at noon. */
int xios_lite_date_get_day_of_year(const xios_lite_date* date, double* out);
/** Second of the year over the year's length, in [0, 1). */
int xios_lite_date_get_fraction_of_year(const xios_lite_date* date, double* out);
/** Seconds since midnight. */
int xios_lite_date_get_second_of_day(const xios_lite_date* date, long long* out);
/** Second of the day over the day's length, in [0, 1). */
int xios_lite_date_get_fraction_of_day(const xios_lite_date* date, double* out);
/** Length of `year` in seconds in the current calendar. */
int xios_lite_get_year_length_in_seconds(int year, long long* out);
/** Length of a day in seconds in the current calendar (86400 but in a
 *  user_defined calendar). */
int xios_lite_get_day_length_in_seconds(long long* out);
/** Reads "YYYY-MM-DD hh:mm:ss" (later fields optional, a "+ <duration>"
 *  offset allowed as in the configuration) as a date valid in the current
 *  calendar. */
int xios_lite_date_convert_from_string(const char* text, xios_lite_date* out);

/* ---- without a calendar ---- */

/** Orders two dates field by field (year first): *order is -1, 0 or 1 as
 *  date1 is before, the same as or after date2. For valid dates this is the
 *  calendar's order in every calendar, so no calendar is needed. */
int xios_lite_date_compare(const xios_lite_date* date1, const xios_lite_date* date2, int* order);
/** *equal = 1 when every component of the two durations is equal (XIOS
 *  compares durations component by component: 1 day /= 24 hours). */
int xios_lite_duration_equal(const xios_lite_duration* dur1, const xios_lite_duration* dur2,
                             int* equal);
/** Writes "YYYY-MM-DD hh:mm:ss" and a NUL into `text` of `size` bytes;
 *  EP_ERR_COUNT (and nothing written) when it does not fit. */
int xios_lite_date_convert_to_string(const xios_lite_date* date, char* text, int size);
/** Writes XIOS's form of a duration, "1y 2mo 1.5d 6h 30mi 10s 2ts" (the
 *  non-zero components, "0s" for none), and a NUL; EP_ERR_COUNT when it does
 *  not fit. */
int xios_lite_duration_convert_to_string(const xios_lite_duration* dur, char* text, int size);
/** Reads a duration as XIOS writes it: numbers (real, signed) each followed
 *  by a unit y, mo, d, h, mi, s or ts, with or without spaces ("1d12h",
 *  "0.5h", "1y 2mo"); a unit given twice adds up. EP_ERR_ARGUMENT for
 *  anything else. */
int xios_lite_duration_convert_from_string(const char* text, xios_lite_duration* out);

/* NOLINTEND(readability-identifier-naming) */

#ifdef __cplusplus
}
#endif

#endif /* XIOS_LITE_XIOS_DATE_H */
