// XIOS field expressions ("@tas - 273.15", "sqrt(@u*@u + @v*@v)",
// "@a > 0 ? @a : 0"): compiled once into a small stack program and
// evaluated point by point on the client, at each sampling step, before
// the temporal operation (as XIOS does).
//
// Grammar (lowest precedence first):
//   expr    := cond
//   cond    := compare ('?' expr ':' expr)?
//   compare := sum (('==' | '/=' | '!=' | '<' | '>' | '<=' | '>=') sum)?
//   sum     := product (('+' | '-') product)*
//   product := power (('*' | '/') power)*
//   power   := unary ('^' unary)?            (right-associative)
//   unary   := '-' unary | primary
//   primary := number | '$' variable id | '@'? field id | 'this'
//            | function '(' expr [',' expr] ')' | '(' expr ')'
// Functions: abs exp log log10 sqrt sin cos tan asin acos atan sinh cosh
// tanh (one argument), min max (two). Comparisons give 1 or 0.
// "$rho0" is the value of the context's <variable id="rho0"> (its
// <variable_definition>, a number), a constant of the expression, as in
// XIOS.
//
// An operand is a field's value at the sampling step. "@a" and "a" are
// the same at the timestep frequency; in the expression of a field whose
// freq_op is longer (some steps, or months and years), "@a" is a's own
// temporal operation over each window of freq_op and "a" its value at the
// window's last step, as in XIOS (the engine folds the windows, see
// client_engine.hpp). An operand lives on the expression's points: its
// grid, a twin of it (same_points), or through one axis zoom or
// reduce_axis of its field (operand_transform). "@a" and
// "a" are therefore distinct operands. A point is missing in the result
// when it is missing in an operand (masked, or the operand's
// default_value/NaN when that field detects missing values, or no valid
// sample in a window). A NaN that is not missing is a value, as in the
// temporal operations: it propagates through arithmetic, the functions,
// min and max (whichever argument it is); a comparison with it is false
// (IEEE), so "@a == @a ? @a : 0" is how an expression replaces it.
//
// Thread safety: an Expression is immutable after compile(); evaluate()
// may run on any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "xios_lite/config.hpp"

namespace xios_lite {

class Expression {
 public:
  /// Compiles `text`; on failure returns false and sets `error`. Operand
  /// names (field ids, "this") are listed by operands() in order of first
  /// use, a name once with '@' and once without when written both ways.
  /// `variables`: the context's <variable>s, for "$name".
  bool compile(const std::string& text, std::string& error,
               const std::vector<Attribute>& variables = {});
  [[nodiscard]] const std::vector<std::string>& operands() const { return names_; }
  /// Per operand: written with '@'.
  [[nodiscard]] const std::vector<bool>& operand_at() const { return at_; }
  /// Whether an operand is written with '@'.
  [[nodiscard]] bool uses_at() const { return uses_at_; }
  /// The evaluation stack it needs (at most kMaxDepth).
  [[nodiscard]] int stack_depth() const { return depth_; }
  static constexpr int kMaxDepth = 64;

  /// Evaluates at `points` points: operand k's values in `inputs[k]`,
  /// `missing[k]` (may be empty) marks its missing points. Results go to
  /// `out`; a point missing in an operand becomes `fill`.
  void evaluate(std::span<const std::span<const double>> inputs,
                std::span<const std::vector<std::uint8_t>> missing, double fill,
                std::span<double> out) const;

  /// One point (inputs by operand).
  [[nodiscard]] double evaluate_point(std::span<const double> operands) const;

 private:
  enum class Op : std::uint8_t {
    kConst,
    kOperand,
    kNeg,
    kAdd,
    kSub,
    kMul,
    kDiv,
    kPow,
    kEq,
    kNe,
    kLt,
    kGt,
    kLe,
    kGe,
    kCond,
    kFunc1,
    kMin,
    kMax
  };
  struct Step {
    Op op = Op::kConst;
    double value = 0;  // kConst
    int index = 0;     // kOperand: operand; kFunc1: function
  };
  friend class ExpressionParser;
  std::vector<Step> program_;
  std::vector<std::string> names_;
  std::vector<bool> at_;  // per operand: written with '@'
  bool uses_at_ = false;
  int depth_ = 0;  // stack depth needed
};

/// Whether the '@' operator in field `field`'s expression reduces its
/// operands over windows: the expression uses '@' and the field's freq_op
/// is longer than one timestep (months and years count, at the calendar's
/// real month lengths). The windows are the periods of freq_op (see
/// temporal::Periods). Needs the calendar.
[[nodiscard]] bool has_at_windows(const Config& cfg, int field);

/// Whether grids `a` and `b` hold the same points in the same order: the
/// same grid, or grids whose members are the same axes and scalars and
/// "twin" domains, two domains of one global size that are not windows of
/// another (NEMO's grid_T and grid_T_inner: one with the model's halo,
/// one without). Each client's blocks of two twins must then be equal
/// (checked at close_definition, see twin_operands). When both grids have
/// a domain, their scalars are left out of the comparison: a scalar is one
/// value per point (NEMO's vertical sums, domain + reduce_axis scalar,
/// hold the points of the domain alone).
[[nodiscard]] bool same_points(const Config& cfg, int a, int b);

/// An expression operand on a twin of the expression's domain.
struct TwinOperand {
  int field = -1;    ///< the expression's field
  int operand = -1;  ///< the operand's data field
  int domain = -1;   ///< the expression's domain
  int twin = -1;     ///< the operand's domain
};
/// Every operand on a twin domain of its expression's, in the fields that
/// have expressions (complete definitions).
[[nodiscard]] std::vector<TwinOperand> twin_operands(const Config& cfg);

/// How an expression reads an operand whose field_ref changes the grid:
/// the levels its axis zoom keeps (zoom_axis / extract_axis), or the
/// reduction of its axis to a scalar (reduce_axis). Each client holds every
/// level of its points, so both are computed on the client before the
/// expression. `active` false: the operand's own values.
struct OperandTransform {
  bool active = false;
  std::vector<int> levels;              ///< levels of the data field kept, in order
  Reduction reduce = Reduction::kNone;  ///< reduce_axis over the levels kept (all when empty)
};
/// The transformation from `operand`'s data field (the end of its
/// field_ref chain) to `operand`: each change of grid along the chain is an
/// axis zoom or extract (to an axis or a scalar), a duplicate_scalar of a
/// 2-D field or a reduce_axis, on twin domains; the selections compose
/// and a reduce_axis ends the chain (NEMO's toce_e3t_vsum300: a zoom to
/// the first levels, then their sum). nullopt otherwise.
[[nodiscard]] std::optional<OperandTransform> operand_transform(const Config& cfg, int operand);

/// Resolves every field's expression (operands, grids, checks); part of
/// complete_definitions. Throws ep::Error naming the field; a field no file
/// uses that fails is left out (leave_out) instead.
void resolve_expressions(Config& cfg);

/// The fields some file needs: those the files name, and what they read
/// through field_ref and expressions.
[[nodiscard]] std::vector<bool> fields_in_use(const Config& cfg);

/// Leaves out field `f`, which no file uses, for `why` (FieldDef::unusable):
/// a warning, no expression, no grid.
void leave_out(Config& cfg, FieldDef& f, const std::string& why);

/// Runs `check` on field `i` as XIOS solves fields: where some file uses
/// the field (`used[i]`, from fields_in_use) its ep::Error propagates; a
/// field no file uses is left out instead (leave_out, with the error's
/// message as the warning).
void check_or_leave_out(Config& cfg, const std::vector<bool>& used, std::size_t i,
                        const std::function<void()>& check);

}  // namespace xios_lite
