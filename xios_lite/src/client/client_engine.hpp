// The client's core: expressions and temporal operations for every output
// variable over the client's blocks, the check that every field is sent when
// it is due, and the hand-off of finished records to a sink.
//
// Records are named by their output period (record k of a variable is its
// period k, see Periods), never by how many records were sent before, so a
// record can only ever hold data of its own period. A variable samples its
// field as XIOS's temporal filter does: the first value sent in each slot
// of its freq_op and freq_offset (temporal::SamplingSlots; every step when
// freq_op is one step). A field is due when a slot one of its output
// variables needs ends without that sample: every slot of an average,
// minimum, maximum or accumulate; the last slot of the period of an
// instant; for a once variable, some step of the file's first period; and
// every step an expression that reads it is due. When a due field was not
// sent (or the steps were skipped by update_calendar), that period's record
// of the variable goes to the sink as missing for this client's points, and
// the slot's last step is reported.
//
// Expressions (XIOS's expr) are evaluated at the end of each step from the
// values their fields were sent with in that step, before the temporal
// operation, as XIOS does. In the expression of a field whose freq_op is
// longer than a step, "@a" is a's own operation (a's `operation`, sampled
// at a's freq_op) over each window of freq_op from the start (F steps, or
// the calendar's months and years), "a" its value at the window's last
// step: the expression is computed at the last step of each window, a
// sample for the field's own operation. A window in which a step did not
// bring every "@" operand (not sent, or skipped) is not computed: the
// field's record of that period is missing, as for a field not sent. An
// operand on a twin domain keeps its own mask; an operand through an axis
// zoom or reduce_axis is transformed here first. A variable whose grid
// reduces its field's grid (reduce_axis, reduce_domain) is reduced on the
// servers before its
// temporal operation: the engine then sends every sample (an instant at each
// sampling step, its period being one sampling interval) and the servers
// do the rest.
//
// A record that the values of one send complete on their own (the period
// ends at this step and holds no other sample: an instant, or an average,
// minimum, maximum or accumulate sampled once per period, with every point
// valid) goes to a sink that takes records at send straight from the
// model's values, inside send(): no copy into the accumulator, and the sink
// has copied the values before send() returns, so the model may overwrite
// its array at once. Every other record waits for the end of the step.
// When every record ending at this step went out so, the sink is told
// (records_complete) and sends them at once: the transfer overlaps the
// model's computation instead of the next step's output calls.
//
// In ep mode each thread has its own engine over its one block; in funneled
// and synchronous modes the master thread's engine holds the blocks of all
// threads of its process. Thread safety: one thread per engine.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "config/expression.hpp"
#include "layout.hpp"
#include "record_sink.hpp"
#include "temporal/temporal.hpp"

namespace xios_lite::client {

/// A due field that was not sent.
struct MissedField {
  int field = 0;
  std::int64_t step = 0;
  int gvar = 0;      ///< the first output variable that needed it
  int operand = -1;  ///< an expression's operand that was not sent (-1: none)
};

class ClientEngine {
 public:
  /// `blocks[d]`: this engine's blocks of domain d (possibly empty ones);
  /// `masks[d]`: per block, nj x ni entries (1 valid, 0 masked) or empty (all valid);
  /// `layouts[d]`: per block, how the model's arrays hold it (empty: every
  /// array is its block).
  ClientEngine(const Config& cfg, std::vector<std::vector<Block>> blocks,
               std::vector<std::vector<std::vector<std::uint8_t>>> masks,
               std::vector<std::vector<DataLayout>> layouts, RecordSink& sink);

  /// Step `step` begins: ends the current step (`step` - 1 or earlier; the
  /// steps in between were skipped) and hands its finished records to the
  /// sink. Returns the due fields that were not sent.
  std::vector<MissedField> begin_step(std::int64_t step);
  /// Values of this engine's blocks of `field`'s domain, one part per block
  /// (nk levels of the block as its layout holds them), in the current step.
  void send(int field, std::span<const std::span<const double>> parts);
  /// The run ends after the current step: ends it as begin_step does.
  /// Periods not over yet are not written.
  std::vector<MissedField> finish();

  /// "field 'sst' was due at step 5 and was not sent (file 'hist', variable
  /// 'sst'); ..." for the first of `missed` and how many more there are.
  [[nodiscard]] std::string describe(const std::vector<MissedField>& missed) const;

 private:
  struct Variable {
    int gvar = 0;
    int field = 0;  // the field whose values it takes (OutputVariable::source)
    Operation op = Operation::kInstant;
    // When the field is sampled: the first value sent in each slot of its
    // freq_op and freq_offset (see SamplingSlots).
    temporal::SamplingSlots slots;
    std::int64_t slot_taken = -1;  // the last slot whose sample was taken
    std::vector<LocalBlock> blocks;
    temporal::Accumulator acc;
    temporal::Periods periods;
    bool centred_time = false;
    std::int64_t period = 0;      // the period holding the current step
    std::int64_t spoiled_at = 0;  // first step of the period that was due and not sent
    bool sent = false;            // sent in the current step
    bool once_done = false;       // a once variable's record went out
    bool handed_over = false;     // this period's record went out at send (see above)
    // A variable the servers reduce: every sample is a record of its own
    // (record k: slot k's sample), an instant.
    bool per_sample = false;
  };
  // An expression field: its values this step, computed from its operands'.
  struct Computed {
    int field = 0;
    Expression expr;
    std::vector<int> operands;  // data fields, one per operand of expr
    std::vector<double> values;
    bool ready = false;  // computed in the current step
    // Per operand: an axis zoom or reduce_axis read on the client
    // (operand_transform), and its result in this step.
    std::vector<OperandTransform> transforms;
    std::vector<std::vector<double>> transformed;
    // XIOS's '@' over windows (has_at_windows): the periods of the
    // field's freq_op (a number of steps, or months and years at the
    // calendar's lengths). Each '@' operand's own temporal operation over
    // the window, sampled at the operand's own freq_op and freq_offset, in
    // windows[k]; the expression is computed at the window's last step
    // only, when every step of it brought the '@' operands it samples.
    std::optional<temporal::Periods> window_periods;
    std::vector<temporal::Accumulator>
        windows;  // per operand (empty ones for operands without '@')
    std::vector<temporal::SamplingSlots> operand_slots;  // per operand: its own sampling
    std::int64_t window_index = -1;                      // the window the accumulators hold
    std::int64_t window_samples = 0;                     // its steps that brought their operands
    int window_missed = -1;                              // an '@' operand not sent in it (-1: none)
  };
  // A field an expression reads: its values in the current step.
  struct Kept {
    std::vector<double> values;
    bool sent = false;
  };

  void end_step(std::int64_t step, bool began, std::vector<MissedField>& missed);
  void skip_steps(Variable& v, std::int64_t from, std::int64_t to,
                  std::vector<MissedField>& missed);
  void close_period(Variable& v);
  [[nodiscard]] records::RecordTime record_time(const Variable& v) const;
  /// The values sent now are the whole record of v's current period.
  [[nodiscard]] bool completes_record(const Variable& v) const;
  /// Every record ending at the current step went out at send.
  [[nodiscard]] bool step_records_out() const;
  void emit_once(Variable& v, std::int64_t step, bool missing);
  /// `as_sent`: the parts are the model's arrays (their blocks' layouts),
  /// else the blocks themselves (computed values).
  void feed(int field, std::span<const std::span<const double>> parts, bool as_sent);
  /// The layout of block `b` of `domain` (null: the block itself).
  [[nodiscard]] const DataLayout* layout_of(std::size_t domain, std::size_t b) const;
  void compute_expressions();
  /// compute_expressions for an expression with '@' over a window.
  void compute_window(Computed& c);
  /// Marks in `gone` the points `operand`'s mask hides when its domain is
  /// a twin of expression `field`'s (the field's own mask is its
  /// variables' business); `gone` empty or one entry per point.
  void mask_twin(int field, int operand, std::vector<std::uint8_t>& gone) const;
  /// Operand k of `c` through its transformation (c.transforms[k]): the
  /// data's levels picked or reduced on each point of the expression's
  /// blocks; its missing points (masked, or missing at every level) in `gone`.
  const std::vector<double>& transform_operand(Computed& c, std::size_t k,
                                               const std::vector<double>& data,
                                               std::vector<std::uint8_t>& gone) const;
  /// `field`'s values in the current step (sent, or computed), null when none.
  [[nodiscard]] const std::vector<double>* current(int field) const;
  /// A value of v's field sent at `step` is a sample: the first in its
  /// slot, and in the output period that holds the slot's end (a slot that
  /// straddles two periods takes its sample in the later one).
  [[nodiscard]] bool takes_sample(const Variable& v, std::int64_t step) const;
  /// The last step of record `k` of `v` (its period's, or its slot k's).
  [[nodiscard]] std::int64_t last_step(const Variable& v, std::int64_t k) const;
  /// v's record lost a sample at `step`: a slot it needs ends there and its
  /// sample was not taken.
  [[nodiscard]] bool due(const Variable& v, std::int64_t step) const;
  /// The last slot of v's current period (the one an instant writes).
  [[nodiscard]] std::int64_t last_slot_of_period(const Variable& v) const;
  [[nodiscard]] int missing_operand(int field) const;
  [[nodiscard]] std::vector<std::span<const double>> parts_of(
      int field, const std::vector<double>& values) const;

  const Config& cfg_;
  RecordSink& sink_;
  std::vector<std::vector<Block>> blocks_;
  std::vector<std::vector<std::vector<std::uint8_t>>> masks_;  // [domain][block], LocalBlock::mask
  std::vector<std::vector<DataLayout>> layouts_;               // [domain][block], may be empty
  std::vector<Variable> vars_;
  std::vector<std::vector<int>> vars_of_field_;
  std::vector<Computed> computed_;           // in evaluation order (operands first)
  std::vector<int> computed_of_field_;       // field -> index into computed_, -1
  std::vector<std::unique_ptr<Kept>> kept_;  // per field: kept when an expression reads it
  std::int64_t step_ = 0;                    // the current step (0: none yet)
};

}  // namespace xios_lite::client
