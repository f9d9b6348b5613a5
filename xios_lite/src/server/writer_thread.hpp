// The server's writer thread: the only thread of a server process that
// calls NetCDF. Complete records arrive from the receiving thread through a
// queue; the writer puts each file's records back in canonical order (record
// by record, variables in configuration order) and writes them, so receiving
// the next records overlaps writing these.
//
// multiple_file files hold this server process's rows (serial NetCDF-4, one
// file per server process); one_file files are shared by all server
// processes (parallel NetCDF-4 over `servers_comm`, every write collective:
// all server processes write the same records in the same order, each its
// own rows).
//
// A write error is the file's own: that file takes no more records (they
// are counted as lost and reported, file by file), the other files go on
// being written; error() gives the first failure for the clients. A
// one_file file fails on every server process together (OutputFiles agrees
// after each write), so they all count the same records lost.
//
// Thread safety: push() and error() may be called by any receiving thread
// while the writer runs; finish() once, after every receiving thread is
// done, and incomplete_report() after finish().
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "netcdf/output_files.hpp"
#include "record_buffer.hpp"
#include "server_process.hpp"

namespace xios_lite::server {

/// The lock every NetCDF call of a server process takes: NetCDF-C (and
/// HDF5 beneath it) is not thread-safe, and a process serving several
/// contexts at once (serve_contexts) runs one writer thread per context.
/// Held for one call at a time (a record's write, the files' closing, the
/// input's reading), so the contexts' writers interleave. A call on a
/// one_file file is collective over the server processes while it holds
/// the lock: only one context with such files may be served at a time
/// (serve_contexts refuses a second), so a lock holder waiting in a
/// collective waits only for other processes' holders of calls that end
/// on their own (serial writes) or for the same collective.
std::mutex& netcdf_lock();

struct WriterStats {
  double write_s = 0;
  double bytes_written = 0;
};

class WriterThread {
 public:
  WriterThread(const Config& cfg, const ServerProcess& process, MPI_Comm servers_comm,
               std::atomic<std::size_t>& bytes_in_flight);
  ~WriterThread();

  void push(std::unique_ptr<RecordBuffer> record);
  /// The first write error ("" while none). The file it happened in takes
  /// no more records; the other files go on.
  [[nodiscard]] std::string error() const;
  /// Writes what remains, closes every file and joins. Returns the statistics.
  WriterStats finish();
  /// After finish(): the records written with missing points (at most
  /// `limit` lines, then how many more) and, per file that failed, the
  /// records not written; "" when none.
  [[nodiscard]] std::string incomplete_report(std::size_t limit = 8) const;

 private:
  struct FileOrder {
    int next_record = 0;
    int next_pos = 0;
    std::map<std::pair<int, int>, std::unique_ptr<RecordBuffer>> pending;  // (record, pos)
    bool failed = false;  // a write of this file failed: its records are dropped
    int lost_first = -1;  // the records dropped (each counted once, however many variables)
    int lost_last = -1;
    std::size_t lost = 0;
  };
  static constexpr std::size_t kKeptLines = 64;
  void run();
  void accept(std::unique_ptr<RecordBuffer> record);
  void write_ready(int file, bool flush_all);
  void write(const RecordBuffer& r);
  void set_error(const std::string& e);

  const Config& cfg_;
  std::vector<netcdf::VariableSlot> table_;
  std::atomic<std::size_t>& in_flight_;
  netcdf::OutputFiles local_files_;
  netcdf::OutputFiles shared_files_;
  std::vector<FileOrder> order_;
  WriterStats stats_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::unique_ptr<RecordBuffer>> queue_;
  bool done_ = false;
  std::string error_;
  // Written by the writer thread only, read after finish().
  std::vector<std::string> incomplete_;  // the first kKeptLines lines, in the order written
  std::size_t incomplete_count_ = 0;
  std::thread thread_;
};

}  // namespace xios_lite::server
