// Where the date and duration functions of xios_lite/xios_date.h find their
// calendar: XIOS does calendar arithmetic (date + 1 month, day of year, year
// length) in the calling thread's current context's calendar, so these two
// functions say which that is. The facade (the XIOS-compatible layer,
// xios_lite/src/facade/) defines them; a test may define them instead.
#pragma once

#include "xios_lite/calendar.hpp"

namespace xios_lite::facade {

/// The calling thread's current context's calendar (nullptr: none yet).
/// Thread-safe (thread-local current context).
const Calendar* current_calendar() noexcept;
/// Its time origin.
Date current_time_origin();

}  // namespace xios_lite::facade
