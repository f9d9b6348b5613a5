// The typed layer (ep/typed.hpp): every overload once, on whatever shape the
// test runs in, with the results checked against values computed here. Each
// typed call forwards to the void* / count / MPI_Datatype form, so these
// tests check the forwarding (datatype, counts, roles of the spans), not the
// algorithms underneath (the collective and point-to-point suites do that).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "ep/ep.hpp"
#include "ep_test.hpp"

namespace {

// A user struct with a registered datatype (two ints, no padding).
struct Pair {
  std::int32_t first;
  std::int32_t second;
};

MPI_Datatype pair_type() {
  static const MPI_Datatype type = [] {
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Type_contiguous(2, MPI_INT32_T, &t);
    MPI_Type_commit(&t);
    return t;  // lives until MPI_Finalize, like the builtins
  }();
  return type;
}

}  // namespace

template <>
struct common::datatype_traits<Pair> {
  static MPI_Datatype get() { return pair_type(); }
};

namespace {

constexpr int kTag = 11;
constexpr int kElems = 5;

// Element i of what EP rank `rank` contributes.
int value(int rank, int i) { return 1000 * rank + i; }

std::vector<int> values_of(int rank, int n = kElems) {
  std::vector<int> v(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = value(rank, i);
  return v;
}

TEST(TypedLayer, DatatypesOfBuiltinsAndRegisteredTypes) {
  EXPECT_EQ(ep::datatype_of<int>(), MPI_INT);
  EXPECT_EQ(ep::datatype_of<const double>(), MPI_DOUBLE);
  EXPECT_EQ(ep::datatype_of<unsigned long long>(), MPI_UNSIGNED_LONG_LONG);
  EXPECT_EQ(ep::datatype_of<std::complex<double>>(), MPI_CXX_DOUBLE_COMPLEX);
  EXPECT_EQ(ep::datatype_of<bool>(), MPI_CXX_BOOL);
  EXPECT_EQ(ep::datatype_of<std::byte>(), MPI_BYTE);
  EXPECT_EQ(ep::datatype_of<Pair>(), pair_type());
  static_assert(ep::HasDatatype<float>);
  static_assert(ep::HasDatatype<Pair>);
  static_assert(!ep::HasDatatype<std::vector<int>>);
}

// send / recv / isend / irecv / sendrecv around a ring, with a user type.
TEST(TypedLayer, PointToPointRing) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    const int right = (c.rank() + 1) % n;
    const int left = (c.rank() + n - 1) % n;
    const std::vector<int> mine = values_of(c.rank());
    const std::vector<int> expected = values_of(left);

    // isend + recv: a blocking send to oneself (one endpoint) would wait for
    // its own receive.
    std::vector<int> got(kElems, -1);
    ep::Request out = ep::isend(c, std::span<const int>(mine), right, kTag);
    const ep::Status st = ep::recv(c, std::span<int>(got), left, kTag);
    ep::wait(out);
    EXPECT_EQ(got, expected);
    EXPECT_EQ(st.source, left);
    EXPECT_EQ(st.tag, kTag);
    EXPECT_EQ(st.count(MPI_INT), kElems);

    // irecv + send (with several endpoints; with one, send to oneself is an
    // eager message, which completes at once).
    std::vector<int> again(kElems, -1);
    ep::Request in = ep::irecv(c, std::span<int>(again), left, kTag + 1);
    ep::send(c, std::span<const int>(mine), right, kTag + 1);
    EXPECT_EQ(ep::wait(in).source, left);
    EXPECT_EQ(again, expected);

    // sendrecv with different element types on the two sides: a user struct.
    const std::vector<Pair> pairs{{c.rank(), 1}, {c.rank(), 2}};
    std::vector<Pair> from_left(2, Pair{-1, -1});
    const ep::Status both = ep::sendrecv(c, std::span<const Pair>(pairs), right, kTag + 2,
                                         std::span<Pair>(from_left), left, kTag + 2);
    EXPECT_EQ(both.source, left);
    EXPECT_EQ(both.bytes, 2 * sizeof(Pair));
    for (int k = 0; k < 2; ++k) {
      EXPECT_EQ(from_left[static_cast<std::size_t>(k)].first, left);
      EXPECT_EQ(from_left[static_cast<std::size_t>(k)].second, k + 1);
    }
  });
}

TEST(TypedLayer, BcastAndReductions) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    const int root = n - 1;

    std::vector<double> data(3, -1.0);
    if (c.rank() == root) data = {0.5, 1.5, 2.5};
    ep::bcast(c, std::span<double>(data), root);
    EXPECT_EQ(data, (std::vector<double>{0.5, 1.5, 2.5}));

    // Value-returning allreduce.
    EXPECT_EQ(ep::allreduce(c, c.rank() + 1, MPI_SUM), n * (n + 1) / 2);
    EXPECT_EQ(ep::allreduce(c, static_cast<long long>(c.rank()), MPI_MAX), n - 1);

    // In-place span allreduce and send/recv span allreduce.
    std::vector<int> in_place = values_of(c.rank());
    ep::allreduce(c, std::span<int>(in_place), MPI_SUM);
    const std::vector<int> mine = values_of(c.rank());
    std::vector<int> summed(kElems, -1);
    ep::allreduce(c, std::span<const int>(mine), std::span<int>(summed), MPI_SUM);
    std::vector<int> expected(kElems, 0);
    for (int r = 0; r < n; ++r) {
      for (int i = 0; i < kElems; ++i) expected[static_cast<std::size_t>(i)] += value(r, i);
    }
    EXPECT_EQ(in_place, expected);
    EXPECT_EQ(summed, expected);

    // Reduce to the root: the receive span matters there only.
    std::vector<int> reduced(c.rank() == root ? kElems : 0, -1);
    ep::reduce(c, std::span<const int>(mine), std::span<int>(reduced), MPI_SUM, root);
    if (c.rank() == root) {
      EXPECT_EQ(reduced, expected);
    }

    // Layout-independent options pass through (same value for integers).
    EXPECT_EQ(ep::allreduce(c, 2, MPI_PROD, ep::ReduceOptions{.layout_independent = true}),
              n < 31 ? (1 << n) : 0);
  });
}

TEST(TypedLayer, GatherFamily) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    const int root = 0;
    const std::vector<int> mine = values_of(c.rank(), 2);
    std::vector<int> everything;
    for (int r = 0; r < n; ++r) {
      const std::vector<int> block = values_of(r, 2);
      everything.insert(everything.end(), block.begin(), block.end());
    }

    // Value-returning allgather, of a user struct.
    const std::vector<Pair> pairs = ep::allgather(c, Pair{c.rank(), -c.rank()});
    EXPECT_EQ(pairs.size(), static_cast<std::size_t>(n));
    for (int r = 0; r < n && r < static_cast<int>(pairs.size()); ++r) {
      EXPECT_EQ(pairs[static_cast<std::size_t>(r)].first, r);
      EXPECT_EQ(pairs[static_cast<std::size_t>(r)].second, -r);
    }

    std::vector<int> all(everything.size(), -1);
    ep::allgather(c, std::span<const int>(mine), std::span<int>(all));
    EXPECT_EQ(all, everything);

    std::vector<int> at_root(c.rank() == root ? everything.size() : 0, -1);
    ep::gather(c, std::span<const int>(mine), std::span<int>(at_root), root);
    if (c.rank() == root) {
      EXPECT_EQ(at_root, everything);
    }

    // Scatter back what was gathered: every endpoint gets its own block.
    std::vector<int> back(2, -1);
    ep::scatter(c, std::span<const int>(at_root), std::span<int>(back), root);
    EXPECT_EQ(back, mine);
  });
}

TEST(TypedLayer, Alltoalls) {
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int n = c.size();
    const int me = c.rank();
    // Block for EP rank d: two ints naming (me, d).
    std::vector<int> send;
    for (int d = 0; d < n; ++d) send.insert(send.end(), {me * 100 + d, -(me * 100 + d)});
    std::vector<int> recv(send.size(), -1);
    ep::alltoall(c, std::span<const int>(send), std::span<int>(recv));
    for (int s = 0; s < n; ++s) {
      EXPECT_EQ(recv[static_cast<std::size_t>(2 * s)], s * 100 + me);
      EXPECT_EQ(recv[static_cast<std::size_t>(2 * s + 1)], -(s * 100 + me));
    }

    // Uneven blocks not a multiple of size(): an ep::Error(kCount), on every
    // endpoint alike (checked before any communication).
    if (n > 1) {
      const std::vector<int> ragged(static_cast<std::size_t>(n + 1), 0);
      std::vector<int> sink(ragged.size(), 0);
      EXPECT_THROW(ep::alltoall(c, std::span<const int>(ragged), std::span<int>(sink)), ep::Error);
    }

    // Alltoallv: rank s sends s + 1 elements to everybody.
    const auto un = static_cast<std::size_t>(n);
    std::vector<int> sendcounts(un, me + 1);
    std::vector<int> sdispls(un);
    for (int d = 0; d < n; ++d) sdispls[static_cast<std::size_t>(d)] = d * (me + 1);
    std::vector<int> vsend(un * static_cast<std::size_t>(me + 1));
    for (std::size_t k = 0; k < vsend.size(); ++k) vsend[k] = me * 1000 + static_cast<int>(k);
    std::vector<int> recvcounts(un);
    std::vector<int> rdispls(un);
    int total = 0;
    for (int s = 0; s < n; ++s) {
      recvcounts[static_cast<std::size_t>(s)] = s + 1;
      rdispls[static_cast<std::size_t>(s)] = total;
      total += s + 1;
    }
    std::vector<int> vrecv(static_cast<std::size_t>(total), -1);
    ep::alltoallv(c, std::span<const int>(vsend), std::span<const int>(sendcounts),
                  std::span<const int>(sdispls), std::span<int>(vrecv),
                  std::span<const int>(recvcounts), std::span<const int>(rdispls));
    for (int s = 0; s < n; ++s) {
      for (int k = 0; k <= s; ++k) {
        EXPECT_EQ(vrecv[static_cast<std::size_t>(rdispls[static_cast<std::size_t>(s)] + k)],
                  s * 1000 + me * (s + 1) + k)
            << "from " << s << " element " << k;
      }
    }
  });
}

// The point-to-point spans and the intercommunicator collectives' spans on
// an InterCommunicator: even processes against odd ones, every endpoint to
// every remote endpoint, raw bytes as std::byte.
TEST(TypedLayer, IntercommunicatorSpans) {
  if (ep_test::world_size() < 2) GTEST_SKIP() << "needs two processes for disjoint groups";
  ep_test::run_endpoints([](ep::Communicator& c) {
    const int side = c.process_rank() % 2;
    ep::Communicator group = ep::split(c, side, c.rank());
    // Group rank 0 of each side lives on process `side` (ranks are process-major).
    ep::InterCommunicator inter = ep::create_intercomm(group, 0, MPI_COMM_WORLD, 1 - side, kTag);
    const int me = inter.rank();
    const int nr = inter.remote_size();
    const auto encode = [](int from_side, int from, int to) {
      return 10000 * from_side + 100 * from + to;
    };

    // isend to every remote endpoint, recv from each by rank.
    std::vector<std::vector<int>> out;
    std::vector<ep::Request> sends;
    for (int j = 0; j < nr; ++j) out.push_back({encode(side, me, j), -encode(side, me, j)});
    for (int j = 0; j < nr; ++j) {
      sends.push_back(
          ep::isend(inter, std::span<const int>(out[static_cast<std::size_t>(j)]), j, kTag));
    }
    for (int j = 0; j < nr; ++j) {
      std::vector<int> in(2, 0);
      const ep::Status st = ep::recv(inter, std::span<int>(in), j, kTag);
      EXPECT_EQ(st.source, j);
      EXPECT_EQ(in, (std::vector<int>{encode(1 - side, j, me), -encode(1 - side, j, me)}));
    }
    ep::wait_all(sends);

    // irecv + send of raw bytes, and sendrecv, between the endpoints of equal
    // rank in both groups (the smaller group's size of them).
    if (me < std::min(inter.size(), nr)) {
      const std::vector<std::byte> bytes(3, std::byte{static_cast<unsigned char>(side + 1)});
      std::vector<std::byte> got(3, std::byte{0});
      ep::Request in = ep::irecv(inter, std::span<std::byte>(got), me, kTag + 1);
      ep::send(inter, std::span<const std::byte>(bytes), me, kTag + 1);
      EXPECT_EQ(ep::wait(in).bytes, 3U);
      EXPECT_EQ(got, std::vector<std::byte>(3, std::byte{static_cast<unsigned char>(2 - side)}));
      const std::vector<double> mine{side + 0.5};
      std::vector<double> theirs{-1.0};
      const ep::Status st = ep::sendrecv(inter, std::span<const double>(mine), me, kTag + 2,
                                         std::span<double>(theirs), me, kTag + 2);
      EXPECT_EQ(st.source, me);
      EXPECT_EQ(theirs[0], 1 - side + 0.5);
    }

    // bcast from side 0's rank 0 to side 1.
    std::vector<int> data(3, -1);
    if (side == 0) {
      if (me == 0) data = {7, 8, 9};
      ep::bcast(inter, std::span<int>(data), me == 0 ? MPI_ROOT : MPI_PROC_NULL);
    } else {
      ep::bcast(inter, std::span<int>(data), 0);
      EXPECT_EQ(data, (std::vector<int>{7, 8, 9}));
    }

    // allreduce: the other group's contributions.
    const std::vector<long long> contribution{side * 1000LL + me, 1};
    std::vector<long long> reduced(2, -1);
    ep::allreduce(inter, std::span<const long long>(contribution), std::span<long long>(reduced),
                  MPI_SUM);
    EXPECT_EQ(reduced,
              (std::vector<long long>{(1 - side) * 1000LL * nr + nr * (nr - 1LL) / 2, nr}));
    EXPECT_EQ(ep::allreduce(inter, me, MPI_MAX), nr - 1);

    inter.free();
    group.free();
  });
}

}  // namespace
