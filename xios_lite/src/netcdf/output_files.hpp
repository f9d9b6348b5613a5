// The files of a configuration as records arrive: opens a new file at each
// split_freq period, writes the time axis once per record, syncs at
// sync_freq and closes at the end.
//
// Records must come in the canonical order of each file: record by record,
// and within a record the file's variables in configuration order (`once`
// variables only in record 0; every later split file gets them again when
// it is opened). The server's writer thread restores that order from
// whatever arrives; synchronous clients produce it directly.
//
// A write error is its file's own: the file takes no more records (each
// later one is counted as lost, for lost_report()), the other files go on.
// With a parallel communicator the writers agree after every write whether
// it failed anywhere (one MPI_Allreduce), so a failure seen by one process
// only stops the file on all of them together instead of leaving the
// others in the next collective write; they raise the failing process's
// text. A process that fails inside a collective call without returning
// cannot be helped here (the clients' finalise timeout reports it).
//
// Testing hook: XIOS_LITE_TEST_WRITE_FAILURE="<file id>:<writer>:<record>"
// makes that writer (its rank in the parallel communicator, else its
// server index) fail with EIO right after its write of that record of that
// file, as a write whose error is seen on return. Read once per OutputFiles.
//
// Thread safety and collectivity as NcFile: one thread per process; with a
// parallel communicator every call is collective over it.
#pragma once

#include <mpi.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nc_file.hpp"
#include "records/record_time.hpp"
#include "variable_layout.hpp"
#include "xios_lite/config.hpp"

namespace xios_lite::netcdf {

/// Where variable `gvar` of the global variable table lives.
struct VariableSlot {
  int file = 0;
  int pos = 0;  ///< position in the file's variable list
};

/// Variables of all files, file by file (the `var` of the wire header).
[[nodiscard]] std::vector<VariableSlot> variable_table(const Config& cfg);

/// One piece of a record to write: global indices, nk x nj x ni values held
/// elsewhere (an OutputBlock's, a record buffer's).
struct BlockView : BlockPlace {
  const double* data = nullptr;
};

using records::RecordTime;

/// Which part of the output a writer holds: its rows of every domain
/// (server processes: their endpoints' bands; clients of the synchronous
/// mode: every row), whether it holds the variables that need a whole
/// domain, and its index among the writers of multiple_file files.
struct WriterPart {
  std::vector<RowRange> source_rows;  ///< per domain of the configuration
  bool owner = true;
  int server = 0;   ///< multiple_file: the file-name suffix "_<server>" ...
  int servers = 1;  ///< ... when there are several (none with one)
};

/// The report's line for a file that failed: "file '<id>': <n> record(s)
/// not written after its write error (records <first> to <last>)".
[[nodiscard]] std::string lost_records_line(const std::string& file_id, std::size_t lost, int first,
                                            int last);

/// The file-name suffix of server `server` of `servers` in multiple_file
/// mode ("" with one server), zero-padded to `min_digits`.
[[nodiscard]] std::string server_suffix(int server, int servers, int min_digits);

class OutputFiles {
 public:
  /// `part`: what this writer holds; `comm`: MPI_COMM_NULL for serial
  /// (multiple_file) files, else the parallel communicator (one_file).
  OutputFiles(const Config& cfg, WriterPart part, MPI_Comm comm, int ep_rank);
  ~OutputFiles();

  /// Writes one record of variable `gvar` from `blocks` (with a parallel
  /// communicator every process passes the same number of blocks; empty
  /// ones are fine). Throws the write's ep::Error (with a parallel
  /// communicator: on every process, see above) once; later records of a
  /// file that failed are counted as lost and not written.
  void write(int gvar, const RecordTime& t, std::span<const BlockView> blocks);
  /// Per file that failed, its lost_records_line(), joined by "; " ("" when none).
  [[nodiscard]] std::string lost_report() const;
  /// Closes every open file (syncing it). Throws on a NetCDF error.
  void close_all();

  [[nodiscard]] double bytes_written() const noexcept { return bytes_written_; }
  /// Paths of every file opened so far, in order.
  [[nodiscard]] const std::vector<std::string>& paths() const noexcept { return paths_; }
  /// The rows of variable `gvar` this writer holds (its row dimension).
  [[nodiscard]] RowRange held(int gvar) const;
  /// The file name for split period `split` of file `file` (no split: -1).
  [[nodiscard]] std::string file_name(int file, std::int64_t split) const;

 private:
  struct FileState {
    std::unique_ptr<NcFile> nc;
    std::int64_t split = -1;     // split period of the open file
    int first_record = 0;        // global record number of local record 0
    int time_record = -1;        // last record whose time is written
    int timed_vars = 0;          // non-once variables of the file
    bool held = false;           // some variable has rows here (else no file)
    std::vector<RowRange> rows;  // per variable: the rows of its row dimension in this file
    int written_in_record = 0;   // of the current record
    std::int64_t next_sync = 0;  // boundary index of sync_freq
    bool failed = false;         // a write failed: no more records
    std::size_t lost = 0;        // records not written since (each counted once)
    int lost_first = -1;
    int lost_last = -1;
  };
  // A once variable's record, kept to be written into every later split file.
  struct OnceRecord {
    int gvar = 0;
    RecordTime time;
    std::vector<BlockView> views;             // their data point into `values`
    std::vector<std::vector<double>> values;  // one copy per view
  };
  void open(int file, std::int64_t split, int first_record);
  void finish_file(FileState& st);
  void write_blocks(FileState& st, int pos, int local_record, std::span<const BlockView> blocks);
  void write_record(int gvar, const RecordTime& t, std::span<const BlockView> blocks);
  // Collective with a parallel communicator: "" when no process failed,
  // else this process's own failure or the first failing process's.
  [[nodiscard]] std::string agree_on_failure(const std::string& mine, int file) const;
  void inject_failure(int file, int record) const;  // XIOS_LITE_TEST_WRITE_FAILURE

  const Config& cfg_;
  WriterPart part_;
  MPI_Comm comm_;
  int ep_rank_;
  std::vector<VariableSlot> table_;
  std::vector<FileState> files_;
  std::vector<OnceRecord> once_;  // in the order written
  std::vector<std::string> paths_;
  double bytes_written_ = 0;
  std::string inject_;  // XIOS_LITE_TEST_WRITE_FAILURE ("" when unset)
};

}  // namespace xios_lite::netcdf
