#include "expression.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <set>
#include <string_view>
#include <utility>

#include "netcdf/domain_names.hpp"
#include "xml_tree.hpp"

namespace xios_lite {

// Recursive descent over the grammar of expression.hpp, emitting a postfix program.
class ExpressionParser {
 public:
  ExpressionParser(const std::string& text, Expression& out,
                   const std::vector<Attribute>& variables)
      : text_(text), out_(out), variables_(variables) {}

  bool run(std::string& error) {
    try {
      expr();
      skip();
      if (at_ != text_.size()) {
        throw Bad("unexpected '" + text_.substr(at_, 1) + "' at character " +
                  std::to_string(at_ + 1));
      }
    } catch (const Bad& b) {
      error = b.what;
      return false;
    }
    if (out_.program_.empty()) {
      error = "empty expression";
      return false;
    }
    return true;
  }

 private:
  struct Bad {
    // A constructor, not an aggregate: Bad("...") compiles with every
    // compiler the project builds with (Clang has no parenthesised
    // aggregate initialisation before version 16).
    explicit Bad(std::string text) : what(std::move(text)) {}
    std::string what;
  };
  using Op = Expression::Op;

  static constexpr std::array<const char*, 13> kFunctions{"abs",  "exp",  "log", "log10", "sqrt",
                                                          "sin",  "cos",  "tan", "asin",  "acos",
                                                          "atan", "sinh", "cosh"};

  void skip() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_])) != 0) ++at_;
  }
  bool accept(const char* token) {
    skip();
    const std::string t(token);
    if (text_.compare(at_, t.size(), t) == 0) {
      at_ += t.size();
      return true;
    }
    return false;
  }
  void expect(const char* token) {
    if (!accept(token)) {
      throw Bad(std::string("expected '") + token + "' at character " + std::to_string(at_ + 1));
    }
  }
  void emit(Op op, double value = 0, int index = 0) {
    out_.program_.push_back({op, value, index});
    // Stack depth: operands and constants push, binary operators pop one,
    // the conditional pops two.
    if (op == Op::kConst || op == Op::kOperand) {
      ++depth_;
      out_.depth_ = std::max(out_.depth_, depth_);
    } else if (op == Op::kCond) {
      depth_ -= 2;
    } else if (op != Op::kNeg && op != Op::kFunc1) {
      --depth_;
    }
  }

  void expr() { cond(); }
  void cond() {
    compare();
    if (accept("?")) {
      expr();
      expect(":");
      expr();
      emit(Op::kCond);
    }
  }
  void compare() {
    sum();
    static const std::array<std::pair<const char*, Op>, 7> kOps{{{"==", Op::kEq},
                                                                 {"/=", Op::kNe},
                                                                 {"!=", Op::kNe},
                                                                 {"<=", Op::kLe},
                                                                 {">=", Op::kGe},
                                                                 {"<", Op::kLt},
                                                                 {">", Op::kGt}}};
    for (const auto& [token, op] : kOps) {
      if (accept(token)) {
        sum();
        emit(op);
        return;
      }
    }
  }
  void sum() { left_associative(&ExpressionParser::product, {{"+", Op::kAdd}, {"-", Op::kSub}}); }
  void product() { left_associative(&ExpressionParser::power, {{"*", Op::kMul}, {"/", Op::kDiv}}); }
  // One level of left-associative binary operators: operand (op operand)*.
  void left_associative(void (ExpressionParser::*operand)(),
                        std::initializer_list<std::pair<const char*, Op>> operators) {
    (this->*operand)();
    for (;;) {
      const auto* matched = std::find_if(operators.begin(), operators.end(),
                                         [&](const auto& o) { return accept_operator(o.first); });
      if (matched == operators.end()) return;
      (this->*operand)();
      emit(matched->second);
    }
  }
  // accept() for a binary operator, which is not the start of a comparison:
  // the "/" of "/=" (Fortran's not-equal) belongs to compare().
  bool accept_operator(const char* token) {
    const std::size_t before = at_;
    if (!accept(token)) return false;
    if (std::string_view(token) == "/" && at_ < text_.size() && text_[at_] == '=') {
      at_ = before;
      return false;
    }
    return true;
  }
  void power() {
    unary();
    if (accept("^")) {
      power();
      emit(Op::kPow);
    }
  }
  void unary() {
    if (accept("-")) {
      unary();
      emit(Op::kNeg);
      return;
    }
    if (accept("+")) {
      unary();
      return;
    }
    primary();
  }
  void primary() {
    skip();
    if (at_ >= text_.size()) {
      throw Bad("the expression ends too early");
    }
    const char c = text_[at_];
    if (accept("(")) {
      expr();
      expect(")");
      return;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '.') {
      char* end = nullptr;
      const double v = std::strtod(text_.c_str() + at_, &end);
      if (end == text_.c_str() + at_) {
        throw Bad("bad number at character " + std::to_string(at_ + 1));
      }
      at_ = static_cast<std::size_t>(end - text_.c_str());
      emit(Op::kConst, v);
      return;
    }
    if (accept("$")) {
      variable();
      return;
    }
    const bool at_sign = accept("@");
    skip();
    const std::string name = identifier("a field, a number or a function");
    if (!at_sign) {
      if (accept("(")) {
        function(name);
        return;
      }
    }
    out_.uses_at_ = out_.uses_at_ || at_sign;
    // "@a" and "a" differ over a freq_op longer than a timestep (the
    // window's operation, the window's last value): one operand each.
    int index = 0;
    while (index < static_cast<int>(out_.names_.size()) &&
           (out_.names_[static_cast<std::size_t>(index)] != name ||
            out_.at_[static_cast<std::size_t>(index)] != at_sign)) {
      ++index;
    }
    if (index == static_cast<int>(out_.names_.size())) {
      out_.names_.push_back(name);
      out_.at_.push_back(at_sign);
    }
    emit(Op::kOperand, 0, index);
  }
  // The name (letters, digits, '_') at the cursor; throws naming what was
  // `expected` where there is none.
  std::string identifier(const char* expected) {
    const std::size_t start = at_;
    while (at_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[at_])) != 0 || text_[at_] == '_')) {
      ++at_;
    }
    if (at_ == start) {
      throw Bad(std::string("expected ") + expected + " at character " + std::to_string(start + 1));
    }
    return text_.substr(start, at_ - start);
  }
  // "$name": the context's <variable id="name">, a number.
  void variable() {
    const std::string name = identifier("a variable name after '$'");
    const auto it = std::find_if(variables_.begin(), variables_.end(),
                                 [&](const Attribute& a) { return a.name == name; });
    if (it == variables_.end()) {
      throw Bad("unknown variable '$" + name + "' (no <variable id=\"" + name +
                "\"> in the context's <variable_definition>)");
    }
    using T = Attribute::Type;
    if (it->type == T::kString || it->type == T::kBool) {
      throw Bad("variable '$" + name + "' is not a number (its type is " +
                (it->type == T::kString ? "string" : "bool") + ")");
    }
    emit(Op::kConst, std::strtod(it->value.c_str(), nullptr));
  }
  void function(const std::string& name) {
    if (name == "min" || name == "max") {
      expr();
      expect(",");
      expr();
      expect(")");
      emit(name == "min" ? Op::kMin : Op::kMax);
      return;
    }
    for (std::size_t f = 0; f < kFunctions.size(); ++f) {
      if (name == kFunctions[f]) {
        expr();
        expect(")");
        emit(Op::kFunc1, 0, static_cast<int>(f));
        return;
      }
    }
    if (name == "tanh") {
      expr();
      expect(")");
      emit(Op::kFunc1, 0, static_cast<int>(kFunctions.size()));
      return;
    }
    throw Bad("unknown function '" + name +
              "' (abs exp log log10 sqrt sin cos tan asin acos atan sinh cosh tanh min max)");
  }

  const std::string& text_;
  Expression& out_;
  const std::vector<Attribute>& variables_;
  std::size_t at_ = 0;
  int depth_ = 0;
};

bool Expression::compile(const std::string& text, std::string& error,
                         const std::vector<Attribute>& variables) {
  program_.clear();
  names_.clear();
  at_.clear();
  uses_at_ = false;
  depth_ = 0;
  ExpressionParser p(text, *this, variables);
  return p.run(error);
}

namespace {
double apply1(int f, double x) {
  switch (f) {
    case 0:
      return std::fabs(x);
    case 1:
      return std::exp(x);
    case 2:
      return std::log(x);
    case 3:
      return std::log10(x);
    case 4:
      return std::sqrt(x);
    case 5:
      return std::sin(x);
    case 6:
      return std::cos(x);
    case 7:
      return std::tan(x);
    case 8:
      return std::asin(x);
    case 9:
      return std::acos(x);
    case 10:
      return std::atan(x);
    case 11:
      return std::sinh(x);
    case 12:
      return std::cosh(x);
    default:
      return std::tanh(x);
  }
}
}  // namespace

double Expression::evaluate_point(std::span<const double> operands) const {
  double stack[kMaxDepth];
  int top = 0;
  for (const Step& s : program_) {
    switch (s.op) {
      case Op::kConst:
        stack[top++] = s.value;
        break;
      case Op::kOperand:
        stack[top++] = operands[static_cast<std::size_t>(s.index)];
        break;
      case Op::kNeg:
        stack[top - 1] = -stack[top - 1];
        break;
      case Op::kFunc1:
        stack[top - 1] = apply1(s.index, stack[top - 1]);
        break;
      case Op::kCond:
        top -= 2;
        stack[top - 1] = stack[top - 1] != 0.0 ? stack[top] : stack[top + 1];
        break;
      default: {
        const double b = stack[--top];
        double& a = stack[top - 1];
        switch (s.op) {
          case Op::kAdd:
            a = a + b;
            break;
          case Op::kSub:
            a = a - b;
            break;
          case Op::kMul:
            a = a * b;
            break;
          case Op::kDiv:
            a = a / b;
            break;
          case Op::kPow:
            a = std::pow(a, b);
            break;
          case Op::kEq:
            a = a == b ? 1.0 : 0.0;
            break;
          case Op::kNe:
            a = a != b ? 1.0 : 0.0;
            break;
          case Op::kLt:
            a = a < b ? 1.0 : 0.0;
            break;
          case Op::kGt:
            a = a > b ? 1.0 : 0.0;
            break;
          case Op::kLe:
            a = a <= b ? 1.0 : 0.0;
            break;
          case Op::kGe:
            a = a >= b ? 1.0 : 0.0;
            break;
          // NaN propagates, whichever argument it is (std::min and
          // std::max keep or drop it by its place), as in the temporal
          // operations; a NaN meant as missing never gets here (the
          // operand's detect_missing_value makes the point missing).
          case Op::kMin:
            a = (b < a || std::isnan(b)) ? b : a;
            break;
          case Op::kMax:
            a = (a < b || std::isnan(b)) ? b : a;
            break;
          default:
            break;
        }
      }
    }
  }
  return stack[0];
}

void Expression::evaluate(std::span<const std::span<const double>> inputs,
                          std::span<const std::vector<std::uint8_t>> missing, double fill,
                          std::span<double> out) const {
  std::vector<double> point(names_.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    bool gone = false;
    for (std::size_t k = 0; k < names_.size(); ++k) {
      point[k] = inputs[k][i];
      gone = gone || (k < missing.size() && !missing[k].empty() && missing[k][i] != 0);
    }
    out[i] = gone ? fill : evaluate_point(point);
  }
}

// The fields some file needs: those the files name, and what they read
// through field_ref and expressions (operands by name, unknown ones left
// for the checks below).
std::vector<bool> fields_in_use(const Config& cfg) {
  std::vector<bool> used(cfg.fields.size(), false);
  std::function<void(int)> need = [&](int i) {
    if (i < 0 || used[static_cast<std::size_t>(i)]) return;
    used[static_cast<std::size_t>(i)] = true;
    const FieldDef& f = cfg.fields[static_cast<std::size_t>(i)];
    need(f.source_field);
    Expression e;
    std::string error;
    if (!f.expr.empty() && e.compile(f.expr, error, cfg.variables)) {
      for (const std::string& name : e.operands()) {
        need(name == "this" ? f.source_field : cfg.find_field(name));
      }
    }
  };
  for (const std::vector<FileDef>* files : {&cfg.files, &cfg.inputs}) {
    for (const FileDef& file : *files) {
      for (const OutputVariable& v : file.variables) need(v.field);
    }
  }
  return used;
}

void leave_out(Config& cfg, FieldDef& f, const std::string& why) {
  if (f.unusable.empty()) {
    f.unusable = why;
    cfg.warnings.push_back(why + " (no file uses the field: it is left out)");
  }
  f.expr.clear();
  f.expr_operands.clear();
  f.grid = -1;
}

void check_or_leave_out(Config& cfg, const std::vector<bool>& used, std::size_t i,
                        const std::function<void()>& check) {
  if (used[i]) {
    check();
    return;
  }
  try {
    check();
  } catch (const ep::Error& error) {
    leave_out(cfg, cfg.fields[i], config::message_of(error));
  }
}

namespace {

// The field whose values `field` takes: the end of its field_ref chain.
// A cycle of references stops after every field (it is refused later, by name).
int data_of(const Config& cfg, int field) {
  for (std::size_t n = 0;
       n < cfg.fields.size() && cfg.fields[static_cast<std::size_t>(field)].expr.empty() &&
       cfg.fields[static_cast<std::size_t>(field)].source_field >= 0;
       ++n) {
    field = cfg.fields[static_cast<std::size_t>(field)].source_field;
  }
  return field;
}

// What the '@' operator over windows (see has_at_windows) needs: a freq_op
// of months or years, or a whole number of timesteps; '@' operands whose operation has a
// value per window (once has one for the whole run), sampled at a fixed
// freq_op of their own (XIOS samples them at their freq_op and offset
// inside each window); no expression reading such a field, whose values
// exist at window ends only; and the variables of such a field sampled at
// window ends. As XIOS, which solves only what files use, a field no file
// uses that fails these checks is left out with a warning (NEMO's monthly
// sums of transformed operands, uocetr_vsum_op, and the expressions over
// its strait windows), as is a field no file uses that reads one left out.
void check_field_windows(const Config& cfg, std::size_t i);
void check_variable_windows(const Config& cfg);

void check_windows(Config& cfg, const std::vector<bool>& used) {
  for (std::size_t i = 0; i < cfg.fields.size(); ++i) {
    if (!cfg.fields[i].unusable.empty()) continue;
    check_or_leave_out(cfg, used, i, [&] { check_field_windows(cfg, i); });
  }
  for (bool again = true; again;) {
    again = false;
    for (std::size_t i = 0; i < cfg.fields.size(); ++i) {
      FieldDef& f = cfg.fields[i];
      if (used[i] || !f.unusable.empty()) continue;
      const auto left_out = [&](int r) {
        return r >= 0 && !cfg.fields[static_cast<std::size_t>(r)].unusable.empty();
      };
      const auto it = std::find_if(f.expr_operands.begin(), f.expr_operands.end(), left_out);
      const int r = it != f.expr_operands.end() ? *it : f.source_field;
      if (left_out(r)) {
        leave_out(cfg, f,
                  f.where +
                      (it != f.expr_operands.end() ? " attribute expr" : " attribute field_ref") +
                      ": field '" + cfg.fields[static_cast<std::size_t>(r)].id + "' is left out");
        again = true;
      }
    }
  }
  check_variable_windows(cfg);
}

void check_field_windows(const Config& cfg, std::size_t i) {
  const std::int64_t ts = cfg.calendar.timestep_seconds();
  {
    const FieldDef& f = cfg.fields[i];
    if (f.expr.empty()) return;
    Expression e;
    std::string error;
    (void)e.compile(f.expr, error, cfg.variables);  // compiled above
    for (std::size_t k = 0; k < f.expr_operands.size(); ++k) {
      const int data = data_of(cfg, f.expr_operands[k]);
      if (has_at_windows(cfg, data)) {
        config::fail_at(f.where, "expr",
                        "unsupported XIOS feature (operand '" + e.operands()[k] + "' of '" +
                            f.expr + "' is computed once per freq_op " +
                            to_string(cfg.fields[static_cast<std::size_t>(data)].freq_op) +
                            " by its own @ operator)");
      }
    }
    if (!e.uses_at() || f.freq_op.is_calendar_dependent()) {
      // A month or a year: windows of the calendar's real lengths.
    } else if (cfg.calendar.fixed_seconds(f.freq_op) % ts != 0) {
      config::fail_at(f.where, "freq_op",
                      "value '" + to_string(f.freq_op) +
                          "' out of range (not a whole number of timesteps of " +
                          std::to_string(ts) + " s: the @ operator of '" + f.expr +
                          "' reduces its operands over windows of freq_op)");
    }
    if (!has_at_windows(cfg, static_cast<int>(i))) return;
    for (std::size_t k = 0; k < f.expr_operands.size(); ++k) {
      const std::optional<OperandTransform> t = operand_transform(cfg, f.expr_operands[k]);
      if (t && t->active) {
        config::fail_at(f.where, "expr",
                        "unsupported XIOS feature (operand '" + e.operands()[k] + "' of '" +
                            f.expr +
                            "' is a zoom_axis or reduce_axis of its field, inside the "
                            "windows of freq_op " +
                            to_string(f.freq_op) + ")");
      }
      if (!e.operand_at()[k]) continue;
      const FieldDef& of = cfg.fields[static_cast<std::size_t>(f.expr_operands[k])];
      const std::string what =
          "'@" + e.operands()[k] + "' over freq_op " + to_string(f.freq_op) + ": field '" + of.id;
      if (of.operation == Operation::kOnce) {
        config::fail_at(f.where, "expr",
                        "unsupported XIOS feature (" + what +
                            "' has operation once, one value for the whole run)");
      }
      if (of.freq_op.is_calendar_dependent()) {
        config::fail_at(f.where, "expr",
                        "unsupported XIOS feature (" + what + "' is sampled every " +
                            to_string(of.freq_op) +
                            " inside each window; a month or a year is not a fixed sampling)");
      }
    }
  }
}

void check_variable_windows(const Config& cfg) {
  const std::int64_t ts = cfg.calendar.timestep_seconds();
  for (const FileDef& file : cfg.files) {
    for (const OutputVariable& v : file.variables) {
      const int data = data_of(cfg, v.field);
      if (!has_at_windows(cfg, data)) continue;
      const FieldDef& d = cfg.fields[static_cast<std::size_t>(data)];
      const std::string why = "' out of range (field '" + d.id + "' is computed once per freq_op " +
                              to_string(d.freq_op) +
                              " by its @ operator: sample it at a multiple of that)";
      if (d.freq_op.is_calendar_dependent()) {
        // Windows of months or years: the variable samples at their ends.
        if (v.freq_op != d.freq_op) {
          config::fail_at(v.where, "freq_op", "value '" + to_string(v.freq_op) + why);
        }
        if (v.freq_offset.is_set()) {
          config::fail_at(v.where, "freq_offset", "value '" + to_string(v.freq_offset) + why);
        }
        continue;
      }
      const std::int64_t w = cfg.calendar.fixed_seconds(d.freq_op) / ts;
      for (auto [attr, freq] :
           {std::pair{"freq_op", &v.freq_op}, std::pair{"freq_offset", &v.freq_offset}}) {
        if (freq->is_calendar_dependent() || cfg.calendar.fixed_seconds(*freq) % (w * ts) != 0) {
          config::fail_at(v.where, attr, "value '" + to_string(*freq) + why);
        }
      }
    }
  }
}

}  // namespace

namespace {
// Two domains holding the same global points (netcdf::same_global_points).
// The clients' blocks, equal domain by domain and covering both, settle a
// size the model has not given yet (check at close_definition,
// twin_operands).
bool twin_domains(const Config& cfg, int a, int b) { return netcdf::same_global_points(cfg, a, b); }
}  // namespace

bool same_points(const Config& cfg, int a, int b) {
  if (a == b) return true;
  const GridDef& gx = cfg.grids[static_cast<std::size_t>(a)];
  const GridDef& gy = cfg.grids[static_cast<std::size_t>(b)];
  // On a domain, a scalar is one value per point: NEMO's vertical sums
  // (domain + reduce_axis scalar) hold the points of the domain alone.
  const auto members = [&](const GridDef& g, const GridDef& other) {
    std::vector<GridDef::Member> out;
    for (const GridDef::Member& m : g.members) {
      const bool drop =
          m.kind == GridDef::Member::Kind::kScalar && g.domain >= 0 && other.domain >= 0;
      if (!drop) out.push_back(m);
    }
    return out;
  };
  const std::vector<GridDef::Member> xm = members(gx, gy);
  const std::vector<GridDef::Member> ym = members(gy, gx);
  if (xm.size() != ym.size()) return false;
  for (std::size_t m = 0; m < xm.size(); ++m) {
    const GridDef::Member& p = xm[m];
    const GridDef::Member& q = ym[m];
    // Scalars: one value each; two made by the same reduction agree.
    const auto same_scalar = [&] {
      const ScalarDef& u = cfg.scalars[static_cast<std::size_t>(p.index)];
      const ScalarDef& v = cfg.scalars[static_cast<std::size_t>(q.index)];
      return p.index == q.index || (u.from_axis == v.from_axis && u.from_domain == v.from_domain);
    };
    bool same = p.kind == q.kind;
    if (same && p.kind == GridDef::Member::Kind::kDomain) {
      same = twin_domains(cfg, p.index, q.index);
    } else if (same && p.kind == GridDef::Member::Kind::kScalar) {
      same = same_scalar();
    } else {
      same = same && p.index == q.index;
    }
    if (!same) return false;
  }
  return true;
}

std::vector<TwinOperand> twin_operands(const Config& cfg) {
  std::vector<TwinOperand> out;
  for (std::size_t i = 0; i < cfg.fields.size(); ++i) {
    const FieldDef& f = cfg.fields[i];
    if (f.expr.empty() || f.grid < 0) continue;
    const int domain = cfg.grids[static_cast<std::size_t>(f.grid)].domain;
    for (const int op : f.expr_operands) {
      const int data = data_of(cfg, op);
      const int grid = cfg.fields[static_cast<std::size_t>(data)].grid;
      const int twin = grid < 0 ? -1 : cfg.grids[static_cast<std::size_t>(grid)].domain;
      if (twin >= 0 && domain >= 0 && twin != domain) {
        out.push_back({static_cast<int>(i), data, domain, twin});
      }
    }
  }
  return out;
}

namespace {

// One change of grid, from grid `from` to grid `to`: see operand_transform.
std::optional<OperandTransform> grid_step(const Config& cfg, int from, int to) {
  OperandTransform t;
  if (to == from || to < 0 || from < 0 || same_points(cfg, to, from)) {
    return t;
  }
  const GridDef& a = cfg.grids[static_cast<std::size_t>(to)];
  const GridDef& b = cfg.grids[static_cast<std::size_t>(from)];
  if (a.domain < 0 || b.domain < 0 || !twin_domains(cfg, a.domain, b.domain) || a.axis2 >= 0 ||
      b.axis2 >= 0) {
    return std::nullopt;
  }
  const auto count = [](const GridDef& g, GridDef::Member::Kind kind) {
    return std::count_if(g.members.begin(), g.members.end(),
                         [&](const GridDef::Member& m) { return m.kind == kind; });
  };
  if (b.axis < 0) {
    // duplicate_scalar (NEMO's straits): the 2-D data on every level of the axis.
    if (a.axis < 0 || !cfg.axes[static_cast<std::size_t>(a.axis)].from_scalar ||
        count(a, GridDef::Member::Kind::kScalar) != 0 || cfg.levels(from) != 1) {
      return std::nullopt;
    }
    t.active = true;
    t.levels.assign(static_cast<std::size_t>(cfg.levels(to)), 0);
    return t;
  }
  if (a.axis >= 0) {
    // A zoom of the data's axis: compose the selections down to it.
    if (count(a, GridDef::Member::Kind::kScalar) != 0) return std::nullopt;
    std::vector<int> levels(static_cast<std::size_t>(cfg.levels(to)));
    for (std::size_t k = 0; k < levels.size(); ++k) levels[k] = static_cast<int>(k);
    int axis = a.axis;
    while (axis != b.axis) {
      const AxisDef& x = cfg.axes[static_cast<std::size_t>(axis)];
      if (x.source < 0 || x.from_domain != Reduction::kNone) return std::nullopt;
      if (!x.index.empty()) {
        for (int& l : levels) l = x.index[static_cast<std::size_t>(l)];
      }
      axis = x.source;
    }
    t.active = true;
    t.levels = std::move(levels);
    return t;
  }
  // A reduce_axis, or an extract_axis (NEMO's grid_T_SFC): one scalar in
  // place of the data's axis.
  if (count(a, GridDef::Member::Kind::kScalar) != 1) return std::nullopt;
  for (const GridDef::Member& m : a.members) {
    if (m.kind == GridDef::Member::Kind::kScalar) {
      const ScalarDef& scalar = cfg.scalars[static_cast<std::size_t>(m.index)];
      if (scalar.extract_level >= 0 && scalar.extract_level < cfg.levels(from)) {
        t.active = true;
        t.levels = {scalar.extract_level};
        return t;
      }
      t.reduce = scalar.from_axis;
    }
  }
  if (t.reduce == Reduction::kNone) return std::nullopt;
  t.active = true;
  return t;
}

}  // namespace

std::optional<OperandTransform> operand_transform(const Config& cfg, int operand) {
  const int data = data_of(cfg, operand);
  // The grids along the field_ref chain, from the data's to the operand's;
  // each change of grid is one step, composed in turn: selections of
  // levels compose, a reduction ends the chain (nothing may follow it).
  std::vector<int> grids;
  for (int f = operand;; f = cfg.fields[static_cast<std::size_t>(f)].source_field) {
    const int g = cfg.fields[static_cast<std::size_t>(f)].grid;
    if (grids.empty() || grids.back() != g) grids.push_back(g);
    if (f == data) break;
  }
  std::reverse(grids.begin(), grids.end());
  OperandTransform t;
  const int from = grids.front();
  if (from < 0) return t;
  std::vector<int> levels(static_cast<std::size_t>(cfg.levels(from)));
  for (std::size_t k = 0; k < levels.size(); ++k) levels[k] = static_cast<int>(k);
  for (std::size_t g = 1; g < grids.size(); ++g) {
    const std::optional<OperandTransform> step = grid_step(cfg, grids[g - 1], grids[g]);
    if (!step) return std::nullopt;
    if (!step->active) continue;
    if (t.reduce != Reduction::kNone) return std::nullopt;
    t.active = true;
    if (step->reduce != Reduction::kNone) {
      t.reduce = step->reduce;
      continue;
    }
    std::vector<int> kept;
    kept.reserve(step->levels.size());
    for (const int l : step->levels) {
      if (l < 0 || static_cast<std::size_t>(l) >= levels.size()) return std::nullopt;
      kept.push_back(levels[static_cast<std::size_t>(l)]);
    }
    levels = std::move(kept);
  }
  if (t.active) t.levels = std::move(levels);
  return t;
}

bool has_at_windows(const Config& cfg, int field) {
  const FieldDef& f = cfg.fields[static_cast<std::size_t>(field)];
  if (f.expr.empty()) {
    return false;
  }
  Expression e;
  std::string error;
  if (!e.compile(f.expr, error, cfg.variables) || !e.uses_at()) {
    return false;
  }
  return f.freq_op.is_calendar_dependent() ||
         cfg.calendar.fixed_seconds(f.freq_op) > cfg.calendar.timestep_seconds();
}

namespace {
// The grid of the points operand `op` gives its expression: its own when
// it transforms its data (operand_transform), else its data's.
int points_grid(const Config& cfg, int op) {
  const std::optional<OperandTransform> t = operand_transform(cfg, op);
  return t && t->active ? cfg.fields[static_cast<std::size_t>(op)].grid
                        : cfg.fields[static_cast<std::size_t>(data_of(cfg, op))].grid;
}
void resolve_operands(Config& cfg, FieldDef& f);
void resolve_grids(Config& cfg, const std::vector<bool>& used);
}  // namespace

void resolve_expressions(Config& cfg) {
  // XIOS tolerates a definition no file uses, even with a broken
  // reference: its expression is dropped with a warning (Config::warnings),
  // where a used one is an error.
  const std::vector<bool> used = fields_in_use(cfg);
  for (std::size_t i = 0; i < cfg.fields.size(); ++i) {
    FieldDef& f = cfg.fields[i];
    if (f.expr.empty() || used[i]) continue;
    Expression e;
    std::string error;
    bool broken = !e.compile(f.expr, error, cfg.variables);
    for (const std::string& name : broken ? std::vector<std::string>{} : e.operands()) {
      if (name != "this" && cfg.find_field(name) < 0) {
        broken = true;
        error = "unknown field '" + name + "'";
      }
    }
    if (broken) {
      cfg.warnings.push_back(f.where + " attribute expr: '" + f.expr + "': " + error +
                             " (no file uses the field: its expression is left out)");
      f.expr.clear();
      f.expr_operands.clear();
    }
  }
  // Operands and grids, then a check for cycles through expressions. A
  // field no file uses that fails a check is left out with a warning.
  for (std::size_t i = 0; i < cfg.fields.size(); ++i) {
    check_or_leave_out(cfg, used, i, [&] { resolve_operands(cfg, cfg.fields[i]); });
  }
  resolve_grids(cfg, used);
  check_windows(cfg, used);
}

namespace {

void resolve_operands(Config& cfg, FieldDef& f) {
  {
    if (f.expr.empty()) {
      return;
    }
    Expression e;
    std::string error;
    if (!e.compile(f.expr, error, cfg.variables)) {
      config::fail_at(f.where, "expr", "'" + f.expr + "': " + error);
    }
    if (e.stack_depth() > Expression::kMaxDepth) {
      config::fail_at(f.where, "expr", "'" + f.expr + "': nested too deeply");
    }
    f.expr_operands.clear();
    for (const std::string& name : e.operands()) {
      int field = -1;
      if (name == "this") {
        field = f.source_field;
        if (field < 0) {
          config::fail_at(f.where, "expr", "'this' needs a field_ref on the field");
        }
      } else {
        field = cfg.find_field(name);
        if (field < 0) {
          config::fail_at(f.where, "expr", "'" + f.expr + "': unknown field '" + name + "'");
        }
      }
      if (!cfg.fields[static_cast<std::size_t>(field)].unusable.empty()) {
        config::fail_at(f.where, "expr",
                        "'" + f.expr + "': operand '" + name + "' is left out: " +
                            cfg.fields[static_cast<std::size_t>(field)].unusable);
      }
      f.expr_operands.push_back(field);
    }
  }
}

// The grid of an expression: its own, else its first operand's (in
// dependency order: an operand may itself be an expression). The fields
// files use first, so that a field no file uses, left out, is never one
// of theirs.
void resolve_grids(Config& cfg, const std::vector<bool>& used) {
  std::vector<int> state(cfg.fields.size(), 0);  // 0 new, 1 visiting, 2 done
  std::function<void(int)> visit = [&](int i) {
    FieldDef& f = cfg.fields[static_cast<std::size_t>(i)];
    if (state[static_cast<std::size_t>(i)] == 2) return;
    if (!f.unusable.empty()) {
      state[static_cast<std::size_t>(i)] = 2;
      config::fail_at(f.where, "grid_ref", "left out: " + f.unusable);
    }
    if (state[static_cast<std::size_t>(i)] == 1) {
      config::fail_at(f.where, "expr", "expressions refer to each other in a cycle");
    }
    state[static_cast<std::size_t>(i)] = 1;
    for (const int op : f.expr_operands) {
      // An operand's values: the end of its field_ref chain, read through
      // one axis zoom or reduce_axis at most.
      const int data = data_of(cfg, op);
      if (data != i && !cfg.fields[static_cast<std::size_t>(data)].expr.empty()) {
        visit(data);  // its grid first
      }
      if (cfg.fields[static_cast<std::size_t>(data)].grid < 0) {
        config::fail_at(f.where, "expr",
                        "operand '" + cfg.fields[static_cast<std::size_t>(op)].id +
                            "' has no grid (field '" +
                            cfg.fields[static_cast<std::size_t>(data)].id + "' gives none)");
      }
      if (!operand_transform(cfg, op)) {
        config::fail_at(
            f.where, "expr",
            "unsupported XIOS feature (operand '" + cfg.fields[static_cast<std::size_t>(op)].id +
                "' is on grid '" +
                cfg.grids[static_cast<std::size_t>(cfg.fields[static_cast<std::size_t>(op)].grid)]
                    .id +
                "', a transformation of field '" + cfg.fields[static_cast<std::size_t>(data)].id +
                "''s grid other than one zoom_axis, extract_axis or reduce_axis)");
      }
      if (data == i) {
        config::fail_at(f.where, "expr", "expressions refer to each other in a cycle");
      }
      visit(data);
      if (f.grid < 0) {
        f.grid = points_grid(cfg, op);
      }
    }
    if (!f.expr.empty() && f.expr_operands.empty() && f.grid < 0) {
      config::fail_at(f.where, "grid_ref", "an expression without fields needs a grid_ref");
    }
    for (const int op : f.expr_operands) {
      const int grid = points_grid(cfg, op);
      if (!same_points(cfg, grid, f.grid)) {
        config::fail_at(
            f.where, "expr",
            "operand '" + cfg.fields[static_cast<std::size_t>(op)].id + "' is on grid '" +
                cfg.grids[static_cast<std::size_t>(grid)].id + "', the expression on grid '" +
                cfg.grids[static_cast<std::size_t>(f.grid)].id +
                "' (operands share the expression's points: its grid, or one whose domain is a "
                "twin of its domain, of the same global size, and the same axes; a scalar beside a "
                "domain adds no points)");
      }
    }
    state[static_cast<std::size_t>(i)] = 2;
  };
  for (const bool pass_used : {true, false}) {
    for (std::size_t i = 0; i < cfg.fields.size(); ++i) {
      if (used[i] != pass_used || state[i] == 2) continue;
      check_or_leave_out(cfg, used, i, [&] { visit(static_cast<int>(i)); });
      // A failure part way leaves fields "visiting": those are left out too.
      for (std::size_t k = 0; k < state.size(); ++k) {
        if (state[k] == 1) {
          state[k] = 2;
          if (!used[k]) leave_out(cfg, cfg.fields[k], cfg.fields[i].unusable);
        }
      }
    }
  }
}

}  // namespace

}  // namespace xios_lite
