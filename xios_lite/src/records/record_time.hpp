// The time of one output record, as the client's engine makes it, the
// events carry it (transport/event.hpp: record, time, bound_lo, bound_hi)
// and the files write it (the time axis and its bounds).
#pragma once

namespace xios_lite::records {

/// One record: its number, which is the index of its output period (period
/// k covers (boundary(k), boundary(k+1)]), never a count of records sent;
/// its time and the bounds of its period, in seconds since the calendar
/// start.
struct RecordTime {
  int record = 0;
  double time = 0;
  double lo = 0;
  double hi = 0;
};

}  // namespace xios_lite::records
