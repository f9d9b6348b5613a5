// Test-only definition of the calendar source of the date functions
// (xios_lite/src/facade/calendar_source.hpp): instead of a context's
// calendar, the calling thread's calendar is whatever the test set last.
// Linked only into the date tests (library xios_lite_date_test_calendar);
// the facade defines the real one.
#pragma once

#include "xios_lite/xios_date.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Makes the calling thread's calendar a `type` calendar ("gregorian",
 *  "noleap", "360_day", ... as the configuration names them) starting at
 *  `start` with a timestep of `timestep_seconds` and its time origin at
 *  `origin` (`start` when null). EP_ERR_ARGUMENT for an unknown type or an
 *  invalid date. */
int xios_lite_date_test_set_calendar(const char* type, const xios_lite_date* start,
                                     int timestep_seconds, const xios_lite_date* origin);
/** The same with a user_defined calendar of `n_months` months of the given
 *  lengths and a day of `day_length` seconds. */
int xios_lite_date_test_set_user_calendar(int day_length, const int* month_lengths, int n_months,
                                          const xios_lite_date* start, int timestep_seconds);
/** Leaves the calling thread without a calendar. */
void xios_lite_date_test_clear_calendar(void);

#ifdef __cplusplus
}
#endif
