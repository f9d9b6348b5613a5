// The C interface of the kernels (collectives/collectives.h): each function
// wraps the C++ kernel with collectives::EpComm over the endpoint, and
// guarded() turns what it throws into a code and the thread's message.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "collectives/allreduce.hpp"
#include "collectives/collectives.h"
#include "collectives/communicator.hpp"
#include "collectives/ep_comm.hpp"
#include "collectives/halo.hpp"
#include "collectives/solvers/cg.hpp"
#include "collectives/solvers/gcr.hpp"
#include "collectives/transpose.hpp"
#include "ep/c_handle.hpp"
#include "ep/c_shim.hpp"
#include "ep/error.hpp"

struct collectives_halo_s {
  collectives::HaloPlan<collectives::EpComm> plan;
};

struct collectives_transpose_s {
  collectives::TransposePlan<collectives::EpComm, double> plan;
};

namespace {

template <typename Body>
int guarded(Body&& body) noexcept {
  return ep::c_api::guarded("collectives", std::forward<Body>(body));
}

[[noreturn]] void fail(ep::ErrorKind kind, const char* call, int rank, const std::string& what) {
  throw ep::Error(kind, call, rank, what);
}

// The endpoint behind `comm`, wrapped (not owned) for the kernels.
collectives::EpComm endpoint(ep_comm_t comm, const char* call) {
  if (comm == nullptr) fail(ep::ErrorKind::kArgument, call, -1, "null endpoint handle");
  if (!comm->inter.is_null()) {
    fail(ep::ErrorKind::kArgument, call, comm->inter.rank(),
         "an intercommunicator handle, where this call takes an intracommunicator");
  }
  return collectives::EpComm(comm->comm);
}

template <typename T>
void check_out(T* out, const char* call, int rank) {
  if (out == nullptr) fail(ep::ErrorKind::kArgument, call, rank, "null output pointer");
}

collectives::AllreduceOptions allreduce_options(int algorithm, int radix, const char* call,
                                                int rank) {
  using collectives::AllreduceAlgorithm;
  // The C constants are the enumerators' values.
  static_assert(COLLECTIVES_ALLREDUCE_LIBRARY == static_cast<int>(AllreduceAlgorithm::kLibrary) &&
                COLLECTIVES_ALLREDUCE_RECURSIVE_DOUBLING ==
                    static_cast<int>(AllreduceAlgorithm::kRecursiveDoubling) &&
                COLLECTIVES_ALLREDUCE_RECURSIVE_K ==
                    static_cast<int>(AllreduceAlgorithm::kRecursiveK));
  if (algorithm < COLLECTIVES_ALLREDUCE_LIBRARY || algorithm > COLLECTIVES_ALLREDUCE_RECURSIVE_K) {
    fail(ep::ErrorKind::kArgument, call, rank,
         "allreduce algorithm " + std::to_string(algorithm) + " is not 0, 1 or 2");
  }
  collectives::AllreduceOptions options;
  options.algorithm = static_cast<AllreduceAlgorithm>(algorithm);
  if (options.algorithm == AllreduceAlgorithm::kRecursiveK) options.radix = radix;
  return options;
}

// The element type behind a C or Fortran datatype handle of one of the
// four types the kernels are instantiated for.
enum class Element { kDouble, kFloat, kInt, kLongLong, kOther };
Element element_of(MPI_Datatype t) {
  if (t == MPI_DOUBLE || t == MPI_REAL8 || t == MPI_DOUBLE_PRECISION) return Element::kDouble;
  if (t == MPI_FLOAT || t == MPI_REAL4 || t == MPI_REAL) return Element::kFloat;
  if (t == MPI_INT || t == MPI_INTEGER || t == MPI_INTEGER4) return Element::kInt;
  if (t == MPI_LONG_LONG || t == MPI_INTEGER8) return Element::kLongLong;
  return Element::kOther;
}

template <typename T>
std::span<T> elements(void* p, int count) {
  return {static_cast<T*>(p), static_cast<std::size_t>(count)};
}

// A domain as the C calls give it: ni x nj cells split px x py, periodic
// along x and y when non-zero.
struct Domain {
  int ni, nj, px, py, periodic_x, periodic_y;
};

collectives::Decomposition decomposition(const Domain& d, const char* call, int rank) {
  if (d.ni < 1 || d.nj < 1 || d.px < 1 || d.py < 1) {
    fail(ep::ErrorKind::kArgument, call, rank,
         "domain " + std::to_string(d.ni) + " x " + std::to_string(d.nj) + " split " +
             std::to_string(d.px) + " x " + std::to_string(d.py) + ": every value must be >= 1");
  }
  return collectives::Decomposition::even(d.ni, d.nj, d.px, d.py, d.periodic_x != 0,
                                          d.periodic_y != 0);
}

// Copies a solve's result out (and the solution when there is room).
void report(const collectives::solvers::SolveResult& r, collectives_solve_result_t* out,
            double* solution, long long capacity, const char* call, int rank) {
  out->iterations = r.iterations;
  out->converged = r.converged ? 1 : 0;
  out->initial_residual = r.residuals.empty() ? 0.0 : r.residuals.front();
  out->final_residual = r.residuals.empty() ? 0.0 : r.residuals.back();
  out->true_residual = r.true_residual;
  out->nx = r.nx;
  out->ny = r.ny;
  out->nz = r.nz;
  out->x0 = r.x0;
  out->y0 = r.y0;
  if (solution == nullptr) return;
  if (capacity < static_cast<long long>(r.solution.size())) {
    fail(ep::ErrorKind::kCount, call, rank,
         "room for " + std::to_string(capacity) + " values, the solution has " +
             std::to_string(r.solution.size()));
  }
  std::copy(r.solution.begin(), r.solution.end(), solution);
}

// The global sums of a solve through allreduce `algorithm` (allreduce_options).
collectives::solvers::AlgorithmGlobalSum global_sum(int algorithm, int radix, const char* call,
                                                    int rank) {
  return collectives::solvers::AlgorithmGlobalSum{allreduce_options(algorithm, radix, call, rank)};
}

// A solve of the C interface: on the endpoint of `comm`, with `result`
// checked, runs solve(endpoint, problem) on a Problem of `domain` and
// `levels` (the rest for `solve` to set) and reports what it returns.
template <typename Problem, typename Solve>
int solve_call(ep_comm_t comm, const char* call, const Domain& domain, int levels,
               collectives_solve_result_t* result, double* solution, long long capacity,
               Solve solve) {
  return guarded([&] {
    const collectives::EpComm c = endpoint(comm, call);
    check_out(result, call, c.rank());
    Problem problem;
    problem.decomposition = decomposition(domain, call, c.rank());
    problem.levels = levels;
    report(solve(c, problem), result, solution, capacity, call, c.rank());
  });
}

// A plan of the C interface: *plan is NULL until make(endpoint of `comm`)
// has returned the kernel plan, which *plan then holds.
template <typename Handle, typename Make>
int create_call(ep_comm_t comm, const char* call, Handle** plan, Make make) {
  if (plan != nullptr) *plan = nullptr;
  return guarded([&] {
    const collectives::EpComm c = endpoint(comm, call);
    check_out(plan, call, c.rank());
    auto made = std::make_unique<Handle>(Handle{make(c)});
    *plan = made.release();
  });
}

// The kernel plan behind the C handle `plan` (a halo or transposition plan).
template <typename Handle>
auto& plan_of(Handle* plan, const char* call) {
  if (plan == nullptr) fail(ep::ErrorKind::kArgument, call, -1, "null plan");
  return plan->plan;
}

// A transposition of the C interface: grid space `in` to spectral space
// `out` (`forward`), or back.
int transpose(collectives_transpose_t plan, const char* call, bool forward, const double* in,
              double* out) {
  return guarded([&] {
    auto& p = plan_of(plan, call);
    const collectives::Space from =
        forward ? collectives::Space::kGrid : collectives::Space::kSpectral;
    const collectives::Space to =
        forward ? collectives::Space::kSpectral : collectives::Space::kGrid;
    const std::span<const double> source{in, p.local_size(from)};
    const std::span<double> target{out, p.local_size(to)};
    if (forward) {
      p.forward(source, target);
    } else {
      p.backward(source, target);
    }
  });
}

// Frees the plan `*plan` (a null plan is a no-op, a null pointer an error)
// and sets *plan to NULL.
template <typename Plan>
void free_plan(Plan** plan, const char* call) {
  if (plan == nullptr) fail(ep::ErrorKind::kArgument, call, -1, "null pointer");
  const std::unique_ptr<Plan> owned(*plan);
  *plan = nullptr;
}

}  // namespace

extern "C" {

int collectives_allreduce(ep_comm_t comm, void* inout, int count, MPI_Datatype datatype, MPI_Op op,
                          int algorithm, int radix) {
  return guarded([&] {
    constexpr const char* kCall = "collectives_allreduce";
    const collectives::EpComm c = endpoint(comm, kCall);
    if (count < 0) {
      fail(ep::ErrorKind::kCount, kCall, c.rank(),
           "count " + std::to_string(count) + " is negative");
    }
    if (count > 0 && inout == nullptr)
      fail(ep::ErrorKind::kArgument, kCall, c.rank(), "null buffer");
    const collectives::AllreduceOptions options =
        allreduce_options(algorithm, radix, kCall, c.rank());
    switch (element_of(datatype)) {
      case Element::kDouble:
        collectives::allreduce(c, elements<double>(inout, count), op, options);
        return;
      case Element::kFloat:
        collectives::allreduce(c, elements<float>(inout, count), op, options);
        return;
      case Element::kInt:
        collectives::allreduce(c, elements<int>(inout, count), op, options);
        return;
      case Element::kLongLong:
        collectives::allreduce(c, elements<long long>(inout, count), op, options);
        return;
      case Element::kOther:
        break;
    }
    fail(ep::ErrorKind::kArgument, kCall, c.rank(),
         "datatype not double, float, int or long long (nor their Fortran handles)");
  });
}

int collectives_halo_create(ep_comm_t comm, int ni, int nj, int px, int py, int periodic_x,
                            int periodic_y, int width, int stencil, int algorithm, const int* land,
                            collectives_halo_t* plan) {
  constexpr const char* kCall = "collectives_halo_create";
  return create_call(comm, kCall, plan, [&](const collectives::EpComm& c) {
    collectives::HaloSpec spec;
    spec.decomposition = decomposition({ni, nj, px, py, periodic_x, periodic_y}, kCall, c.rank());
    spec.width = width;
    if (stencil == COLLECTIVES_STENCIL_FIVE_POINT) {
      spec.stencil = collectives::Stencil::kFivePoint;
    } else if (stencil == COLLECTIVES_STENCIL_NINE_POINT) {
      spec.stencil = collectives::Stencil::kNinePoint;
    } else {
      fail(ep::ErrorKind::kArgument, kCall, c.rank(),
           "stencil " + std::to_string(stencil) + " is not 5 or 9");
    }
    if (algorithm < COLLECTIVES_HALO_TWO_SWEEP || algorithm > COLLECTIVES_HALO_SPLIT) {
      fail(ep::ErrorKind::kArgument, kCall, c.rank(),
           "halo algorithm " + std::to_string(algorithm) + " is not 0..3");
    }
    spec.algorithm = static_cast<collectives::HaloAlgorithm>(algorithm);
    if (land != nullptr) {
      const auto cells = static_cast<std::size_t>(ni) * static_cast<std::size_t>(nj);
      spec.land_cells.resize(cells);
      for (std::size_t i = 0; i < cells; ++i) spec.land_cells[i] = land[i] != 0 ? 1 : 0;
    }
    return collectives::HaloPlan<collectives::EpComm>(c, spec);
  });
}

int collectives_halo_local(collectives_halo_t plan, int* nx, int* ny, int* x0, int* y0,
                           int* takes_part) {
  return guarded([&] {
    constexpr const char* kCall = "collectives_halo_local";
    auto& p = plan_of(plan, kCall);
    check_out(nx, kCall, -1);
    check_out(ny, kCall, -1);
    check_out(x0, kCall, -1);
    check_out(y0, kCall, -1);
    check_out(takes_part, kCall, -1);
    const bool part = p.takes_part();
    *nx = part ? p.nx() : 0;
    *ny = part ? p.ny() : 0;
    *x0 = p.x0();
    *y0 = p.y0();
    *takes_part = part ? 1 : 0;
  });
}

int collectives_halo_exchange(collectives_halo_t plan, void* field, int levels,
                              MPI_Datatype datatype) {
  return guarded([&] {
    constexpr const char* kCall = "collectives_halo_exchange";
    auto& p = plan_of(plan, kCall);
    int bytes = 0;
    if (MPI_Type_size(datatype, &bytes) != MPI_SUCCESS || bytes < 1 || bytes > 16) {
      fail(ep::ErrorKind::kArgument, kCall, -1,
           "datatype of " + std::to_string(bytes) + " bytes: elements of 1 to 16 bytes");
    }
    if (levels < 1) {
      fail(ep::ErrorKind::kArgument, kCall, -1, "levels " + std::to_string(levels) + " < 1");
    }
    collectives::HaloField f;
    f.data = static_cast<std::byte*>(field);
    f.elements = p.field_elements(levels);
    f.element_bytes = static_cast<std::size_t>(bytes);
    f.levels = levels;
    if (f.elements > 0 && field == nullptr) fail(ep::ErrorKind::kArgument, kCall, -1, "null field");
    p.exchange({f});
  });
}

int collectives_halo_free(collectives_halo_t* plan) {
  return guarded([&] { free_plan(plan, "collectives_halo_free"); });
}

int collectives_transpose_create(ep_comm_t comm, int nx, int ny, int nz, int cx, int cy,
                                 collectives_transpose_t* plan) {
  return create_call(comm, "collectives_transpose_create", plan, [&](const collectives::EpComm& c) {
    return collectives::TransposePlan<collectives::EpComm, double>(
        c, collectives::TransposeShape{nx, ny, nz, cx, cy});
  });
}

int collectives_transpose_box(collectives_transpose_t plan, int space, int* lo, int* n) {
  return guarded([&] {
    constexpr const char* kCall = "collectives_transpose_box";
    auto& p = plan_of(plan, kCall);
    check_out(lo, kCall, -1);
    check_out(n, kCall, -1);
    if (space < COLLECTIVES_SPACE_GRID || space > COLLECTIVES_SPACE_SPECTRAL) {
      fail(ep::ErrorKind::kArgument, kCall, -1, "space " + std::to_string(space) + " is not 0..3");
    }
    const collectives::Box box = p.box(static_cast<collectives::Space>(space));
    std::copy(box.lo.begin(), box.lo.end(), lo);
    std::copy(box.n.begin(), box.n.end(), n);
  });
}

int collectives_transpose_forward(collectives_transpose_t plan, const double* grid,
                                  double* spectral) {
  return transpose(plan, "collectives_transpose_forward", true, grid, spectral);
}

int collectives_transpose_backward(collectives_transpose_t plan, const double* spectral,
                                   double* grid) {
  return transpose(plan, "collectives_transpose_backward", false, spectral, grid);
}

int collectives_transpose_free(collectives_transpose_t* plan) {
  return guarded([&] { free_plan(plan, "collectives_transpose_free"); });
}

int collectives_gcr_solve(ep_comm_t comm, int ni, int nj, int px, int py, int periodic_x,
                          int periodic_y, int levels, double alpha, double cx, double cy, double cz,
                          int restart, int max_iterations, double tolerance,
                          int allreduce_algorithm, int radix, collectives_solve_result_t* result,
                          double* solution, long long capacity) {
  constexpr const char* kCall = "collectives_gcr_solve";
  return solve_call<collectives::solvers::HelmholtzProblem>(
      comm, kCall, {ni, nj, px, py, periodic_x, periodic_y}, levels, result, solution, capacity,
      [&](const collectives::EpComm& c, collectives::solvers::HelmholtzProblem& problem) {
        problem.alpha = alpha;
        problem.cx = cx;
        problem.cy = cy;
        problem.cz = cz;
        collectives::solvers::GcrOptions options;
        options.restart = restart;
        options.max_iterations = max_iterations;
        options.tolerance = tolerance;
        return collectives::solvers::gcr(c, problem, options,
                                         global_sum(allreduce_algorithm, radix, kCall, c.rank()));
      });
}

int collectives_cg_solve(ep_comm_t comm, int ni, int nj, int px, int py, int levels,
                         int preconditioner, int max_iterations, double tolerance,
                         int allreduce_algorithm, int radix, collectives_solve_result_t* result,
                         double* solution, long long capacity) {
  constexpr const char* kCall = "collectives_cg_solve";
  return solve_call<collectives::solvers::PoissonProblem>(
      comm, kCall, {ni, nj, px, py, 0, 0}, levels, result, solution, capacity,
      [&](const collectives::EpComm& c, const collectives::solvers::PoissonProblem& problem) {
        collectives::solvers::CgOptions options;
        if (preconditioner < COLLECTIVES_CG_NONE ||
            preconditioner > COLLECTIVES_CG_SYMMETRIC_GAUSS_SEIDEL) {
          fail(ep::ErrorKind::kArgument, kCall, c.rank(),
               "preconditioner " + std::to_string(preconditioner) + " is not 0..2");
        }
        options.preconditioner =
            static_cast<collectives::solvers::CgPreconditioner>(preconditioner);
        options.max_iterations = max_iterations;
        options.tolerance = tolerance;
        return collectives::solvers::cg(c, problem, options,
                                        global_sum(allreduce_algorithm, radix, kCall, c.rank()));
      });
}

}  // extern "C"
