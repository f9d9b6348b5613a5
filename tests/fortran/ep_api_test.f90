! Every call of ep_mod's endpoint API from OpenMP threads, each an EP rank:
! point-to-point with statuses, probes and matched messages, the wait/test
! family, every collective and its nonblocking form (MPI_IN_PLACE included),
! dup/split/compare, intercommunicators (with two processes or more),
! Cartesian and distributed-graph topologies with the neighbour collectives,
! and the error paths (bad rank, tag, count, root, handle, a non-contiguous
! section): each value is checked exactly. Rank 0 prints
! "fortran ep api exact" when no endpoint found a difference; the exit
! status is non-zero otherwise.
!
! With the argument "abort", one endpoint sends to a rank that does not
! exist without ierr: the program must stop with "error 1: ep::send: ep rank 0: destination ..."
! (ctest checks the message and the non-zero exit).
module ep_api_checks
  use mpi
  use ep_mod
  use ep_test_program, only: expect
  implicit none
  private
  public :: run_all, abort_path

contains

  !> Every check on this thread's endpoint.
  subroutine run_all(comm)
    type(ep_comm), intent(inout) :: comm
    integer :: rank, n, world_rank, nprocs, ierr
    call ep_comm_rank(comm, rank)
    call ep_comm_size(comm, n)
    call MPI_Comm_rank(MPI_COMM_WORLD, world_rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call point_to_point()
    call completion()
    call collectives()
    call nonblocking_collectives()
    call communicators()
    if (nprocs >= 2) call intercommunicators()
    call cartesian()
    call graph()
    call errors()
    call ep_barrier(comm)

  contains

    ! The rank `d` steps from this one, around the ring.
    integer function ring(d)
      integer, intent(in) :: d
      ring = modulo(rank + d, n)
    end function ring

    subroutine point_to_point()
      real(8) :: a(3, 2), b(3, 2)
      real(4) :: c(2, 2, 2)
      logical :: la(4), lb(4)
      integer :: x, y, st(MPI_STATUS_SIZE), cnt, k
      integer, allocatable :: v(:)
      type(ep_request) :: req, reqs(2)
      type(ep_message) :: msg
      logical :: flag

      ! send / recv of a rank-2 real(8) array around the ring (eager sizes).
      a = reshape([(rank * 10d0 + k, k = 1, 6)], [3, 2])
      call ep_send(a, 6, MPI_REAL8, ring(1), 11, comm, ierr)
      call expect(ierr == EP_OK, 'ep_send')
      b = -1
      call ep_recv(b, 6, MPI_REAL8, ring(-1), 11, comm, st, ierr)
      call expect(ierr == EP_OK, 'ep_recv')
      call expect(all(b == reshape([(ring(-1) * 10d0 + k, k = 1, 6)], [3, 2])), 'ep_recv values')
      call expect(st(MPI_SOURCE) == ring(-1) .and. st(MPI_TAG) == 11, 'ep_recv status')
      call ep_get_count(st, MPI_REAL8, cnt, ierr)
      call expect(ierr == EP_OK .and. cnt == 6, 'ep_get_count')
      call MPI_Get_count(st, MPI_REAL8, cnt, ierr)
      call expect(cnt == 6, 'MPI_Get_count of an ep status')

      ! ssend against a posted irecv; a scalar buffer; MPI_ANY_SOURCE, MPI_ANY_TAG.
      y = -1
      call ep_irecv(y, 1, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, req)
      x = 100 + rank
      call ep_ssend(x, 1, MPI_INTEGER, ring(1), 12, comm, ierr)
      call expect(ierr == EP_OK, 'ep_ssend')
      call ep_wait(req, st, ierr)
      call expect(ierr == EP_OK .and. y == 100 + ring(-1), 'ep_irecv any source value')
      call expect(st(MPI_SOURCE) == ring(-1) .and. st(MPI_TAG) == 12, 'ep_wait status')

      ! issend + isend, completed by ep_waitall with statuses.
      x = 200 + rank
      y = -1
      call ep_irecv(y, 1, MPI_INTEGER, ring(-1), 13, comm, reqs(1))
      call ep_issend(x, 1, MPI_INTEGER, ring(1), 13, comm, reqs(2))
      block
        integer :: sts(MPI_STATUS_SIZE, 2)
        call ep_waitall(2, reqs, sts, ierr)
        call expect(ierr == EP_OK .and. y == 200 + ring(-1), 'ep_issend / ep_waitall')
        call expect(sts(MPI_SOURCE, 1) == ring(-1) .and. sts(MPI_TAG, 1) == 13, &
                    'ep_waitall statuses')
      end block

      ! sendrecv of logicals, sendrecv_replace of a rank-3 real(4) array.
      la = [(mod(rank + k, 2) == 0, k = 1, 4)]
      lb = .false.
      call ep_sendrecv(la, 4, MPI_LOGICAL, ring(1), 14, lb, 4, MPI_LOGICAL, ring(-1), 14, comm, &
                       st, ierr)
      call expect(ierr == EP_OK .and. all(lb .eqv. [(mod(ring(-1) + k, 2) == 0, k = 1, 4)]), &
                  'ep_sendrecv logical')
      c = real(rank, 4)
      call ep_sendrecv_replace(c, 8, MPI_REAL4, ring(1), 15, ring(-1), 15, comm, st, ierr)
      call expect(ierr == EP_OK .and. all(c == real(ring(-1), 4)), 'ep_sendrecv_replace')

      ! probe then receive what it announced (count from the status).
      allocate(v(rank + 1))
      v = rank
      call ep_isend(v, rank + 1, MPI_INTEGER, ring(1), 16, comm, req)
      call ep_probe(MPI_ANY_SOURCE, 16, comm, st, ierr)
      call ep_get_count(st, MPI_INTEGER, cnt)
      call expect(ierr == EP_OK .and. st(MPI_SOURCE) == ring(-1) .and. cnt == ring(-1) + 1, &
                  'ep_probe')
      block
        integer :: got(cnt)
        call ep_recv(got, cnt, MPI_INTEGER, st(MPI_SOURCE), 16, comm, MPI_STATUS_IGNORE)
        call expect(all(got == ring(-1)), 'ep_recv after ep_probe')
      end block
      call ep_wait(req)

      ! iprobe until the message is there.
      call ep_isend(v, rank + 1, MPI_INTEGER, ring(1), 17, comm, req)
      flag = .false.
      do while (.not. flag)
        call ep_iprobe(ring(-1), 17, comm, flag, st, ierr)
      end do
      call ep_get_count(st, MPI_INTEGER, cnt)
      call expect(ierr == EP_OK .and. cnt == ring(-1) + 1, 'ep_iprobe')
      block
        integer :: got(cnt)
        call ep_recv(got, cnt, MPI_INTEGER, ring(-1), 17, comm, st)
        call expect(all(got == ring(-1)), 'ep_recv after ep_iprobe')
      end block
      call ep_wait(req)

      ! mprobe / mrecv and improbe / imrecv.
      call ep_isend(v, rank + 1, MPI_INTEGER, ring(1), 18, comm, req)
      call ep_mprobe(ring(-1), 18, comm, msg, st, ierr)
      call ep_get_count(st, MPI_INTEGER, cnt)
      call expect(ierr == EP_OK .and. cnt == ring(-1) + 1, 'ep_mprobe')
      block
        integer :: got(cnt)
        call ep_mrecv(got, cnt, MPI_INTEGER, msg, st, ierr)
        call expect(ierr == EP_OK .and. all(got == ring(-1)), 'ep_mrecv')
      end block
      call ep_wait(req)
      call ep_isend(v, rank + 1, MPI_INTEGER, ring(1), 19, comm, req)
      flag = .false.
      do while (.not. flag)
        call ep_improbe(ring(-1), 19, comm, flag, msg, st, ierr)
      end do
      call ep_get_count(st, MPI_INTEGER, cnt)
      block
        integer :: got(cnt)
        type(ep_request) :: r2
        call ep_imrecv(got, cnt, MPI_INTEGER, msg, r2, ierr)
        call ep_wait(r2, st, ierr)
        call expect(ierr == EP_OK .and. all(got == ring(-1)) .and. st(MPI_SOURCE) == ring(-1), &
                    'ep_improbe / ep_imrecv')
      end block
      call ep_wait(req)

      ! MPI_PROC_NULL: nothing moves, the status says so.
      x = 7
      call ep_send(x, 1, MPI_INTEGER, MPI_PROC_NULL, 0, comm, ierr)
      call expect(ierr == EP_OK, 'ep_send to MPI_PROC_NULL')
      call ep_recv(x, 1, MPI_INTEGER, MPI_PROC_NULL, 0, comm, st, ierr)
      call expect(ierr == EP_OK .and. x == 7 .and. st(MPI_SOURCE) == MPI_PROC_NULL, &
                  'ep_recv from MPI_PROC_NULL')
    end subroutine point_to_point

    subroutine completion()
      integer :: x(3), y(3), st(MPI_STATUS_SIZE), idx, k
      integer :: outcount, indices(3), statuses(MPI_STATUS_SIZE, 3), seen(3)
      type(ep_request) :: reqs(3)
      logical :: flag

      ! test until done.
      x = rank
      call ep_irecv(y(1), 1, MPI_INTEGER, ring(-1), 21, comm, reqs(1))
      call ep_isend(x(1), 1, MPI_INTEGER, ring(1), 21, comm, reqs(2))
      flag = .false.
      do while (.not. flag)
        call ep_test(reqs(1), flag, st, ierr)
      end do
      call expect(ierr == EP_OK .and. y(1) == ring(-1) .and. st(MPI_TAG) == 21, 'ep_test')
      call ep_wait(reqs(2))

      ! waitany over three receives, then testany, then testall.
      y = -1
      do k = 1, 3
        call ep_irecv(y(k), 1, MPI_INTEGER, ring(-1), 30 + k, comm, reqs(k))
      end do
      do k = 1, 3
        x(k) = rank * 10 + k
        call ep_send(x(k), 1, MPI_INTEGER, ring(1), 30 + k, comm)
      end do
      call ep_waitany(3, reqs, idx, st, ierr)
      call expect(ierr == EP_OK .and. idx >= 1 .and. idx <= 3, 'ep_waitany index')
      call expect(st(MPI_TAG) == 30 + idx .and. y(idx) == ring(-1) * 10 + idx, 'ep_waitany status')
      flag = .false.
      do while (.not. flag)
        call ep_testany(3, reqs, idx, flag, st, ierr)
      end do
      call expect(ierr == EP_OK .and. idx >= 1 .and. idx <= 3, 'ep_testany')
      flag = .false.
      do while (.not. flag)
        call ep_testall(3, reqs, flag, MPI_STATUSES_IGNORE, ierr)
      end do
      call expect(all(y == [(ring(-1) * 10 + k, k = 1, 3)]), 'ep_testall values')
      call ep_waitany(3, reqs, idx, st, ierr)
      call expect(ierr == EP_OK .and. idx == MPI_UNDEFINED, 'ep_waitany of null requests')

      ! waitsome and testsome until all three are in: each index once, its
      ! status and value matching it.
      y = -1
      do k = 1, 3
        call ep_irecv(y(k), 1, MPI_INTEGER, ring(-1), 40 + k, comm, reqs(k))
      end do
      do k = 3, 1, -1
        x(k) = rank * 10 + k
        call ep_send(x(k), 1, MPI_INTEGER, ring(1), 40 + k, comm)
      end do
      seen = 0
      call ep_waitsome(3, reqs, outcount, indices, statuses, ierr)
      call expect(ierr == EP_OK .and. outcount >= 1 .and. outcount <= 3, 'ep_waitsome outcount')
      call note_some('ep_waitsome', outcount, indices, statuses, y, seen)
      do while (sum(seen) < 3)
        call ep_testsome(3, reqs, outcount, indices, statuses, ierr)
        call expect(ierr == EP_OK .and. outcount >= 0 .and. outcount <= 3, 'ep_testsome outcount')
        if (ierr /= EP_OK .or. outcount == MPI_UNDEFINED) exit  ! reported; never spin
        call note_some('ep_testsome', outcount, indices, statuses, y, seen)
      end do
      call expect(all(seen == 1) .and. all(y == [(ring(-1) * 10 + k, k = 1, 3)]), &
                  'ep_waitsome/ep_testsome: each request once, with its value')
      call ep_testsome(3, reqs, outcount, indices, statuses, ierr)
      call expect(ierr == EP_OK .and. outcount == MPI_UNDEFINED, 'ep_testsome of null requests')

      ! cancel a receive that nothing will match: completes as cancelled; a
      ! second cancel of the (now null) request is an error in ierr.
      call ep_irecv(y(1), 1, MPI_INTEGER, ring(-1), 49, comm, reqs(1))
      call ep_cancel(reqs(1), ierr)
      call expect(ierr == EP_OK, 'ep_cancel')
      call ep_wait(reqs(1), st, ierr)
      call ep_test_cancelled(st, flag, ierr)
      call expect(ierr == EP_OK .and. flag, 'ep_test_cancelled of a cancelled receive')
      call ep_cancel(reqs(1), ierr)
      call expect(ierr == EP_ERR_REQUEST, 'ep_cancel of a null request: EP_ERR_REQUEST')
      call ep_barrier(comm, ierr)
    end subroutine completion

    ! Counts the requests a waitsome/testsome reported (seen) and checks each
    ! one's status and value.
    subroutine note_some(what, outcount, indices, statuses, y, seen)
      character(len=*), intent(in) :: what
      integer, intent(in) :: outcount, indices(:), statuses(:, :), y(:)
      integer, intent(inout) :: seen(:)
      integer :: j, i
      if (outcount == MPI_UNDEFINED) return
      do j = 1, outcount
        i = indices(j)
        if (i < 1 .or. i > 3) then
          call expect(.false., what // ' index')
          cycle
        end if
        seen(i) = seen(i) + 1
        call expect(statuses(MPI_TAG, j) == 40 + i .and. y(i) == ring(-1) * 10 + i, &
                    what // ' status')
      end do
    end subroutine note_some

    subroutine collectives()
      integer :: j, k, x, iv(n), big(n * 3), counts(n), displs(n), tot
      real(8) :: r(2), rs(2)
      logical :: l
      integer, allocatable :: gv(:), sv(:)
      integer :: types(n), sc(n), sd(n), rcnt(n), rd(n)

      call ep_barrier(comm, ierr)
      call expect(ierr == EP_OK, 'ep_barrier')

      iv = 0
      if (rank == n - 1) iv = [(k * 3, k = 1, n)]
      call ep_bcast(iv, n, MPI_INTEGER, n - 1, comm, ierr)
      call expect(ierr == EP_OK .and. all(iv == [(k * 3, k = 1, n)]), 'ep_bcast')

      r = [real(rank, 8), 1d0]
      rs = -1
      call ep_reduce(r, rs, 2, MPI_REAL8, MPI_SUM, 0, comm, ierr)
      if (rank == 0) call expect(all(rs == [n * (n - 1) / 2d0, real(n, 8)]), 'ep_reduce')
      r = [real(rank, 8), 1d0]
      if (rank == 0) then
        call ep_reduce(MPI_IN_PLACE, r, 2, MPI_REAL8, MPI_MAX, 0, comm, ierr)
        call expect(ierr == EP_OK .and. all(r == [real(n - 1, 8), 1d0]), 'ep_reduce in place')
      else
        call ep_reduce(r, rs, 2, MPI_REAL8, MPI_MAX, 0, comm, ierr)
      end if

      x = rank + 1
      call ep_allreduce(MPI_IN_PLACE, x, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
      call expect(ierr == EP_OK .and. x == n * (n + 1) / 2, 'ep_allreduce in place scalar')
      l = rank /= 0
      call ep_allreduce(MPI_IN_PLACE, l, 1, MPI_LOGICAL, MPI_LOR, comm, ierr)
      call expect(l .eqv. (n > 1), 'ep_allreduce logical')

      ! gather / scatter of rank-numbered blocks of 3.
      x = rank
      call ep_gather([rank, rank, rank], 3, MPI_INTEGER, big, 3, MPI_INTEGER, 0, comm, ierr)
      if (rank == 0) call expect(all(big == [((k, j = 1, 3), k = 0, n - 1)]), 'ep_gather')
      big = [((k * 2, j = 1, 3), k = 0, n - 1)]
      block
        integer :: mine(3)
        call ep_scatter(big, 3, MPI_INTEGER, mine, 3, MPI_INTEGER, n - 1, comm, ierr)
        call expect(ierr == EP_OK .and. all(mine == 2 * rank), 'ep_scatter')
      end block

      ! gatherv / scatterv / allgatherv: rank k has k+1 elements.
      counts = [(k + 1, k = 0, n - 1)]
      displs = [(k * (k + 1) / 2, k = 0, n - 1)]
      tot = n * (n + 1) / 2
      allocate(gv(tot), sv(rank + 1))
      sv = rank
      gv = -1
      call ep_gatherv(sv, rank + 1, MPI_INTEGER, gv, counts, displs, MPI_INTEGER, 0, comm, ierr)
      if (rank == 0) call expect(all(gv == [((k, j = 0, k), k = 0, n - 1)]), 'ep_gatherv')
      gv = [((k + 5, j = 0, k), k = 0, n - 1)]
      sv = -1
      call ep_scatterv(gv, counts, displs, MPI_INTEGER, sv, rank + 1, MPI_INTEGER, 0, comm, ierr)
      call expect(all(sv == rank + 5), 'ep_scatterv')
      sv = rank
      gv = -1
      call ep_allgatherv(sv, rank + 1, MPI_INTEGER, gv, counts, displs, MPI_INTEGER, comm, ierr)
      call expect(all(gv == [((k, j = 0, k), k = 0, n - 1)]), 'ep_allgatherv')

      ! allgather, in place too.
      iv = -1
      call ep_allgather(rank * 7, 1, MPI_INTEGER, iv, 1, MPI_INTEGER, comm, ierr)
      call expect(ierr == EP_OK .and. all(iv == [(k * 7, k = 0, n - 1)]), 'ep_allgather')
      iv = -1
      iv(rank + 1) = rank * 9
      call ep_allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, iv, 1, MPI_INTEGER, comm, ierr)
      call expect(ierr == EP_OK .and. all(iv == [(k * 9, k = 0, n - 1)]), 'ep_allgather in place')

      ! alltoall: block j to rank j holds 100*rank + j; in place too.
      block
        integer :: s(n), t(n)
        s = [(100 * rank + k, k = 0, n - 1)]
        call ep_alltoall(s, 1, MPI_INTEGER, t, 1, MPI_INTEGER, comm, ierr)
        call expect(all(t == [(100 * k + rank, k = 0, n - 1)]), 'ep_alltoall')
        call ep_alltoall(MPI_IN_PLACE, 1, MPI_INTEGER, s, 1, MPI_INTEGER, comm, ierr)
        call expect(all(s == [(100 * k + rank, k = 0, n - 1)]), 'ep_alltoall in place')
      end block

      ! alltoallv: rank r sends j+1 copies of r to rank j; alltoallw the same in bytes.
      sc = [(k + 1, k = 0, n - 1)]
      sd = [(k * (k + 1) / 2, k = 0, n - 1)]
      rcnt = rank + 1
      rd = [(k * (rank + 1), k = 0, n - 1)]
      deallocate(gv, sv)
      allocate(sv(tot), gv(n * (rank + 1)))
      sv = rank
      gv = -1
      call ep_alltoallv(sv, sc, sd, MPI_INTEGER, gv, rcnt, rd, MPI_INTEGER, comm, ierr)
      call expect(all(gv == [((k, j = 0, rank), k = 0, n - 1)]), 'ep_alltoallv')
      types = MPI_INTEGER
      gv = -1
      call ep_alltoallw(sv, sc, sd * 4, types, gv, rcnt, rd * 4, types, comm, ierr)
      call expect(ierr == EP_OK .and. all(gv == [((k, j = 0, rank), k = 0, n - 1)]), &
                  'ep_alltoallw')

      ! reduce_scatter(_block): element i of every contribution is rank + i.
      deallocate(sv, gv)
      allocate(sv(tot), gv(rank + 1))
      sv = [(j, j = 1, tot)]
      call ep_reduce_scatter(sv, gv, counts, MPI_INTEGER, MPI_SUM, comm, ierr)
      call expect(all(gv == [(n * (displs(rank + 1) + j), j = 1, rank + 1)]), 'ep_reduce_scatter')
      block
        integer :: blk(2 * n), mine(2)
        blk = [(j, j = 1, 2 * n)]
        call ep_reduce_scatter_block(blk, mine, 2, MPI_INTEGER, MPI_SUM, comm, ierr)
        call expect(all(mine == [n * (2 * rank + 1), n * (2 * rank + 2)]), &
                    'ep_reduce_scatter_block')
      end block

      ! scan / exscan.
      x = -1
      call ep_scan(rank + 1, x, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
      call expect(x == (rank + 1) * (rank + 2) / 2, 'ep_scan')
      x = -1
      call ep_exscan(rank + 1, x, 1, MPI_INTEGER, MPI_SUM, comm, ierr)
      if (rank > 0) call expect(x == rank * (rank + 1) / 2, 'ep_exscan')
      if (rank == 0) call expect(x == -1, 'ep_exscan leaves rank 0')
    end subroutine collectives

    subroutine nonblocking_collectives()
      ! Every send buffer is a variable that outlives its request (never an
      ! expression: its temporary would be gone before the request completes).
      type(ep_request) :: req(16)
      integer :: iv(n), x, y, k, s(n), t(n), gat(n), sct, ag(n), agv(n), a2a(n), s2(n)
      integer :: counts(n), displs(n), a2v(n), w2(n), types(n), rs1, scn, exs, one, two, mine
      real(8) :: red, myval
      iv = 0
      if (rank == 0) iv = [(k + 1, k = 0, n - 1)]
      call ep_ibarrier(comm, req(1), ierr)
      call ep_ibcast(iv, n, MPI_INTEGER, 0, comm, req(2), ierr)
      red = -1
      myval = real(rank, 8)
      call ep_ireduce(myval, red, 1, MPI_REAL8, MPI_SUM, 0, comm, req(3), ierr)
      x = rank
      call ep_iallreduce(MPI_IN_PLACE, x, 1, MPI_INTEGER, MPI_MAX, comm, req(4), ierr)
      gat = -1
      call ep_igather(rank, 1, MPI_INTEGER, gat, 1, MPI_INTEGER, n - 1, comm, req(5), ierr)
      s = [(k * 4, k = 0, n - 1)]
      call ep_iscatter(s, 1, MPI_INTEGER, sct, 1, MPI_INTEGER, 0, comm, req(6), ierr)
      mine = rank + 50
      call ep_iallgather(mine, 1, MPI_INTEGER, ag, 1, MPI_INTEGER, comm, req(7), ierr)
      counts = 1
      displs = [(n - 1 - k, k = 0, n - 1)]
      call ep_iallgatherv(rank, 1, MPI_INTEGER, agv, counts, displs, MPI_INTEGER, comm, req(8), &
                          ierr)
      t = [(1000 * rank + k, k = 0, n - 1)]
      call ep_ialltoall(t, 1, MPI_INTEGER, a2a, 1, MPI_INTEGER, comm, req(9), ierr)
      displs = [(k, k = 0, n - 1)]
      call ep_ialltoallv(t, counts, displs, MPI_INTEGER, a2v, counts, displs, MPI_INTEGER, comm, &
                         req(10), ierr)
      types = MPI_INTEGER
      call ep_ialltoallw(t, counts, displs * 4, types, w2, counts, displs * 4, types, comm, &
                         req(11), ierr)
      s2 = [(k, k = 1, n)]
      call ep_ireduce_scatter(s2, y, counts, MPI_INTEGER, MPI_SUM, comm, req(12), ierr)
      call ep_ireduce_scatter_block(s2, rs1, 1, MPI_INTEGER, MPI_SUM, comm, req(13), ierr)
      one = 1
      two = 2
      call ep_iscan(one, scn, 1, MPI_INTEGER, MPI_SUM, comm, req(14), ierr)
      exs = -1
      call ep_iexscan(two, exs, 1, MPI_INTEGER, MPI_SUM, comm, req(15), ierr)
      call ep_waitall(req(1:15), ierr)
      call expect(ierr == EP_OK, 'nonblocking collectives complete')
      call expect(all(iv == [(k + 1, k = 0, n - 1)]), 'ep_ibcast')
      if (rank == 0) call expect(red == n * (n - 1) / 2d0, 'ep_ireduce')
      call expect(x == n - 1, 'ep_iallreduce in place')
      if (rank == n - 1) call expect(all(gat == [(k, k = 0, n - 1)]), 'ep_igather')
      call expect(sct == 4 * rank, 'ep_iscatter')
      call expect(all(ag == [(k + 50, k = 0, n - 1)]), 'ep_iallgather')
      call expect(all(agv == [(n - 1 - k, k = 0, n - 1)]), 'ep_iallgatherv')
      call expect(all(a2a == [(1000 * k + rank, k = 0, n - 1)]), 'ep_ialltoall')
      call expect(all(a2v == [(1000 * k + rank, k = 0, n - 1)]), 'ep_ialltoallv')
      call expect(all(w2 == [(1000 * k + rank, k = 0, n - 1)]), 'ep_ialltoallw')
      call expect(y == n * (rank + 1), 'ep_ireduce_scatter')
      call expect(rs1 == n * (rank + 1), 'ep_ireduce_scatter_block')
      call expect(scn == rank + 1, 'ep_iscan')
      if (rank > 0) call expect(exs == 2 * rank, 'ep_iexscan')
      ! igatherv / iscatterv
      counts = 1
      displs = [(k, k = 0, n - 1)]
      gat = -1
      mine = rank * 3
      call ep_igatherv(mine, 1, MPI_INTEGER, gat, counts, displs, MPI_INTEGER, 0, comm, req(1), &
                       ierr)
      s = [(k * 5, k = 0, n - 1)]
      x = -1
      call ep_iscatterv(s, counts, displs, MPI_INTEGER, x, 1, MPI_INTEGER, 0, comm, req(2), ierr)
      call ep_waitall(req(1:2), ierr)
      if (rank == 0) call expect(all(gat == [(3 * k, k = 0, n - 1)]), 'ep_igatherv')
      call expect(ierr == EP_OK .and. x == 5 * rank, 'ep_iscatterv')
    end subroutine nonblocking_collectives

    subroutine communicators()
      type(ep_comm) :: d, half, none
      integer :: res, r2, s2, x, color
      call ep_comm_dup(comm, d, ierr)
      call expect(ierr == EP_OK, 'ep_comm_dup')
      call ep_comm_compare(comm, comm, res, ierr)
      call expect(res == MPI_IDENT, 'ep_comm_compare ident')
      call ep_comm_compare(comm, d, res, ierr)
      call expect(res == MPI_CONGRUENT, 'ep_comm_compare congruent')
      ! split in two, reversed: the new rank counts down.
      color = mod(rank, 2)
      call ep_comm_split(d, color, -rank, half, ierr)
      call ep_comm_rank(half, r2)
      call ep_comm_size(half, s2)
      call expect(s2 == (n + 1 - color) / 2, 'ep_comm_split size')
      call expect(r2 == s2 - 1 - rank / 2, 'ep_comm_split rank by key')
      x = rank
      call ep_allreduce(MPI_IN_PLACE, x, 1, MPI_INTEGER, MPI_MIN, half, ierr)
      call expect(x == color, 'ep_allreduce on a split')
      call ep_comm_split(d, merge(0, MPI_UNDEFINED, rank == 0), 0, none, ierr)
      call expect(ierr == EP_OK, 'ep_comm_split undefined')
      if (rank /= 0) call expect(ep_is_null(none), 'ep_comm_split MPI_UNDEFINED gives a null handle')
      if (rank == 0) call ep_comm_free(none)
      call ep_comm_free(half, ierr)
      call ep_comm_free(d, ierr)
      call expect(ierr == EP_OK .and. ep_is_null(d), 'ep_comm_free')
    end subroutine communicators

    ! Two groups on disjoint processes: even and odd process ranks.
    subroutine intercommunicators()
      type(ep_comm) :: local, inter, merged
      integer :: color, remote, lrank, x, y, res, msize, mrank, lsize
      logical :: flag
      color = mod(world_rank, 2)
      call ep_comm_split(comm, color, rank, local, ierr)
      call ep_comm_rank(local, lrank)
      call ep_comm_size(local, lsize)
      call ep_intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 77, inter, ierr)
      call expect(ierr == EP_OK, 'ep_intercomm_create')
      call ep_comm_test_inter(inter, flag, ierr)
      call expect(flag, 'ep_comm_test_inter')
      call ep_comm_remote_size(inter, remote, ierr)
      call expect(ierr == EP_OK .and. remote + lsize == n, 'ep_comm_remote_size')
      ! point-to-point across: local rank 0 of each group to remote 0.
      if (lrank == 0) then
        call ep_sendrecv(color + 10, 1, MPI_INTEGER, 0, 5, y, 1, MPI_INTEGER, 0, 5, inter, &
                         MPI_STATUS_IGNORE, ierr)
        call expect(ierr == EP_OK .and. y == 11 - color, 'ep_sendrecv across an intercommunicator')
      end if
      call ep_barrier(inter, ierr)
      x = 1
      call ep_allreduce(x, y, 1, MPI_INTEGER, MPI_SUM, inter, ierr)
      call expect(ierr == EP_OK .and. y == remote, 'ep_allreduce on an intercommunicator')
      call ep_intercomm_merge(inter, color == 1, merged, ierr)
      call ep_comm_size(merged, msize)
      call ep_comm_rank(merged, mrank)
      call expect(ierr == EP_OK .and. msize == n, 'ep_intercomm_merge size')
      if (color == 0) call expect(mrank == lrank, 'ep_intercomm_merge: the low group first')
      if (color == 1) call expect(mrank == remote + lrank, 'ep_intercomm_merge: the high group last')
      call ep_comm_compare(inter, comm, res)
      call expect(res == MPI_UNEQUAL, 'ep_comm_compare inter/intra')
      call ep_comm_free(merged)
      call ep_comm_free(inter)
      call ep_comm_free(local)
    end subroutine intercommunicators

    subroutine cartesian()
      type(ep_comm) :: cart, row
      integer :: dims(2), coords(2), c2(2), nd, src, dst, kind, r, rsize, k
      logical :: periods(2)
      integer :: nb(4), out(4), j
      ! Bound to a persistent request: written by the library between start
      ! and wait, which the compiler must not assume it knows (MPI's rule).
      integer, asynchronous :: pnb(4), pout(4)
      type(ep_request) :: req, preq
      dims = 0
      call ep_dims_create(n, 2, dims, ierr)
      call expect(ierr == EP_OK .and. product(dims) == n .and. dims(1) >= dims(2), 'ep_dims_create')
      call ep_cart_create(comm, 2, dims, [.true., .false.], .false., cart, ierr)
      call expect(ierr == EP_OK, 'ep_cart_create')
      call ep_topo_test(cart, kind)
      call expect(kind == MPI_CART, 'ep_topo_test cart')
      call ep_topo_test(comm, kind)
      call expect(kind == MPI_UNDEFINED, 'ep_topo_test none')
      call ep_cartdim_get(cart, nd)
      call expect(nd == 2, 'ep_cartdim_get')
      call ep_cart_get(cart, 2, c2, periods, coords, ierr)
      call expect(all(c2 == dims) .and. periods(1) .and. .not. periods(2), 'ep_cart_get')
      call expect(all(coords == [rank / dims(2), mod(rank, dims(2))]), 'ep_cart_get coords')
      call ep_cart_coords(cart, n - 1, 2, c2, ierr)
      call expect(all(c2 == dims - 1), 'ep_cart_coords')
      call ep_cart_rank(cart, [dims(1), 0], r, ierr)   ! wraps in the periodic dimension
      call expect(ierr == EP_OK .and. r == 0, 'ep_cart_rank periodic')
      call ep_cart_shift(cart, 0, 1, src, dst, ierr)
      call expect(src == modulo(rank - dims(2), n) .and. dst == modulo(rank + dims(2), n), &
                  'ep_cart_shift periodic')
      call ep_cart_shift(cart, 1, 1, src, dst, ierr)
      if (coords(2) == 0) call expect(src == MPI_PROC_NULL, 'ep_cart_shift edge')
      if (coords(2) == dims(2) - 1) call expect(dst == MPI_PROC_NULL, 'ep_cart_shift edge')
      call ep_cart_sub(cart, [.false., .true.], row, ierr)
      call ep_comm_size(row, rsize)
      call ep_comm_rank(row, r)
      call expect(ierr == EP_OK .and. rsize == dims(2) .and. r == coords(2), 'ep_cart_sub')
      call ep_comm_free(row)
      ! neighbour allgather: slots -1/+1 of dimension 0 then of dimension 1.
      nb = -7
      call ep_neighbor_allgather(rank, 1, MPI_INTEGER, nb, 1, MPI_INTEGER, cart, ierr)
      call expect(ierr == EP_OK, 'ep_neighbor_allgather')
      call ep_cart_shift(cart, 0, 1, src, dst)
      call expect(nb(1) == src .and. nb(2) == dst, 'ep_neighbor_allgather periodic slots')
      call ep_cart_shift(cart, 1, 1, src, dst)
      call expect(nb(3) == merge(-7, src, src == MPI_PROC_NULL) .and. &
                  nb(4) == merge(-7, dst, dst == MPI_PROC_NULL), 'ep_neighbor_allgather edge slots')
      out = [(rank * 10 + k, k = 1, 4)]   ! a variable: it outlives the request
      nb = -7
      call ep_ineighbor_alltoall(out, 1, MPI_INTEGER, nb, 1, MPI_INTEGER, cart, req, ierr)
      call ep_wait(req, ierr)
      call ep_cart_shift(cart, 0, 1, src, dst)
      ! the block sent towards +1 lands in the receiver's -1 slot
      call expect(ierr == EP_OK .and. nb(1) == src * 10 + 2 .or. dims(1) <= 2, &
                  'ep_ineighbor_alltoall')
      ! The persistent form: two rounds with new data, the request kept between them.
      call ep_neighbor_alltoall_init(pout, 1, MPI_INTEGER, pnb, 1, MPI_INTEGER, cart, &
                                     MPI_INFO_NULL, preq, ierr)
      call expect(ierr == EP_OK, 'ep_neighbor_alltoall_init')
      do k = 1, 2
        pout = [(rank * 10 + j + 100 * k, j = 1, 4)]
        pnb = -7
        call ep_start(preq, ierr)
        call expect(ierr == EP_OK, 'ep_start')
        call ep_wait(preq, ierr)
        call expect(ierr == EP_OK .and. (pnb(1) == src * 10 + 2 + 100 * k .or. dims(1) <= 2), &
                    'ep_neighbor_alltoall_init round')
      end do
      call ep_request_free(preq, ierr)
      call expect(ierr == EP_OK, 'ep_request_free')
      call ep_comm_free(cart)
    end subroutine cartesian

    ! A directed ring: each rank hears from rank-1 and talks to rank+1.
    subroutine graph()
      type(ep_comm) :: g, gw
      integer :: indeg, outdeg, srcs(1), dsts(1), sw(1), dw(1), kind, x(2)
      integer :: cnt(1), dsp(1), types(1)
      integer(MPI_ADDRESS_KIND) :: adsp(1)
      logical :: weighted
      type(ep_request) :: req
      call ep_dist_graph_create_adjacent(comm, 1, [ring(-1)], MPI_UNWEIGHTED, 1, [ring(1)], &
                                         MPI_UNWEIGHTED, MPI_INFO_NULL, .false., g, ierr)
      call expect(ierr == EP_OK, 'ep_dist_graph_create_adjacent')
      call ep_topo_test(g, kind)
      call expect(kind == MPI_DIST_GRAPH, 'ep_topo_test graph')
      call ep_dist_graph_neighbors_count(g, indeg, outdeg, weighted, ierr)
      call expect(indeg == 1 .and. outdeg == 1 .and. .not. weighted, &
                  'ep_dist_graph_neighbors_count')
      call ep_dist_graph_neighbors(g, 1, srcs, MPI_UNWEIGHTED, 1, dsts, MPI_UNWEIGHTED, ierr)
      call expect(ierr == EP_OK .and. srcs(1) == ring(-1) .and. dsts(1) == ring(1), &
                  'ep_dist_graph_neighbors')
      call ep_dist_graph_create_adjacent(comm, 1, [ring(-1)], [3], 1, [ring(1)], [3], &
                                         MPI_INFO_NULL, .true., gw, ierr)
      call ep_dist_graph_neighbors_count(gw, indeg, outdeg, weighted, ierr)
      call expect(weighted, 'ep_dist_graph_create_adjacent weighted')
      call ep_dist_graph_neighbors(gw, 1, srcs, sw, 1, dsts, dw, ierr)
      call expect(sw(1) == 3 .and. dw(1) == 3, 'ep_dist_graph_neighbors weights')
      call ep_comm_free(gw)
      cnt = 2
      dsp = 0
      types = MPI_INTEGER
      adsp = 0
      x = -1
      call ep_neighbor_allgatherv([rank, rank], 2, MPI_INTEGER, x, cnt, dsp, MPI_INTEGER, g, ierr)
      call expect(ierr == EP_OK .and. all(x == ring(-1)), 'ep_neighbor_allgatherv')
      x = -1
      call ep_neighbor_alltoall([rank + 1, 0], 1, MPI_INTEGER, x, 1, MPI_INTEGER, g, ierr)
      call expect(x(1) == ring(-1) + 1, 'ep_neighbor_alltoall')
      x = -1
      call ep_neighbor_alltoallv([rank, 2 * rank], cnt, dsp, MPI_INTEGER, x, cnt, dsp, &
                                 MPI_INTEGER, g, ierr)
      call expect(all(x == [ring(-1), 2 * ring(-1)]), 'ep_neighbor_alltoallv')
      x = -1
      call ep_neighbor_alltoallw([rank, 3], cnt, adsp, types, x, cnt, adsp, types, g, ierr)
      call expect(ierr == EP_OK .and. all(x == [ring(-1), 3]), 'ep_neighbor_alltoallw')
      block
        integer :: y(2), w(2), rank_five(2), rank_four(2), k
        integer, asynchronous :: z(2), two_ranks(2)  ! also the persistent request's buffers
        type(ep_request) :: reqs(3)
        two_ranks = rank
        rank_five = [rank, 5]
        rank_four = [rank, 4]
        call ep_ineighbor_allgather(rank, 1, MPI_INTEGER, y, 1, MPI_INTEGER, g, reqs(1), ierr)
        call ep_ineighbor_allgatherv(two_ranks, 2, MPI_INTEGER, z, cnt, dsp, MPI_INTEGER, g, &
                                     reqs(2), ierr)
        call ep_ineighbor_alltoallv(rank_five, cnt, dsp, MPI_INTEGER, w, cnt, dsp, MPI_INTEGER, &
                                    g, reqs(3), ierr)
        call ep_waitall(reqs, ierr)
        call expect(ierr == EP_OK .and. y(1) == ring(-1) .and. all(z == ring(-1)) .and. &
                    all(w == [ring(-1), 5]), 'ep_ineighbor_allgather(v) / alltoallv')
        call ep_ineighbor_alltoallw(rank_four, cnt, adsp, types, w, cnt, adsp, types, g, req, ierr)
        call ep_wait(req, ierr)
        call expect(ierr == EP_OK .and. all(w == [ring(-1), 4]), 'ep_ineighbor_alltoallw')
        ! The persistent allgatherv: two rounds with new data in the same variables.
        call ep_neighbor_allgatherv_init(two_ranks, 2, MPI_INTEGER, z, cnt, dsp, MPI_INTEGER, g, &
                                         MPI_INFO_NULL, req, ierr)
        call expect(ierr == EP_OK, 'ep_neighbor_allgatherv_init')
        do k = 1, 2
          two_ranks = rank + 100 * k
          z = -1
          call ep_start(req, ierr)
          call ep_wait(req, ierr)
          call expect(ierr == EP_OK .and. all(z == ring(-1) + 100 * k), &
                      'ep_neighbor_allgatherv_init round')
        end do
        call ep_request_free(req, ierr)
      end block
      call ep_comm_free(g)
    end subroutine graph

    ! Bad input: the code, and a message naming the call and the EP rank.
    subroutine errors()
      character(len=EP_MAX_ERROR_STRING) :: msg
      character(len=32) :: me
      integer :: x, v(10)
      type(ep_comm) :: nullc
      type(ep_request) :: reqs(1)
      write (me, '(a, i0)') 'ep rank ', rank
      x = 1
      call ep_send(x, 1, MPI_INTEGER, n, 0, comm, ierr)
      msg = ep_last_error()
      call expect(ierr == EP_ERR_RANK .and. index(msg, 'ep::send') > 0 .and. &
                  index(msg, trim(me)) > 0, 'bad rank: ' // trim(msg))
      call ep_recv(x, 1, MPI_INTEGER, 0, -5, comm, MPI_STATUS_IGNORE, ierr)
      msg = ep_last_error()
      call expect(ierr == EP_ERR_TAG .and. index(msg, 'ep::recv') > 0 .and. index(msg, '-5') > 0, &
                  'bad tag: ' // trim(msg))
      call ep_isend(x, -1, MPI_INTEGER, 0, 0, comm, reqs(1), ierr)
      msg = ep_last_error()
      call expect(ierr == EP_ERR_COUNT .and. index(msg, 'ep::isend') > 0, 'bad count: ' // trim(msg))
      v = 0
      call ep_isend(v(1:10:2), 5, MPI_INTEGER, 0, 0, comm, reqs(1), ierr)
      msg = ep_last_error()
      call expect(ierr == EP_ERR_ARGUMENT .and. index(msg, 'non-contiguous') > 0 .and. &
                  index(msg, trim(me)) > 0, 'non-contiguous section: ' // trim(msg))
      call ep_bcast(x, 1, MPI_INTEGER, n + 3, comm, ierr)
      msg = ep_last_error()
      call expect(ierr == EP_ERR_RANK .and. index(msg, 'bcast') > 0, 'bad root: ' // trim(msg))
      call ep_barrier(nullc, ierr)
      msg = ep_last_error()
      call expect(ierr == EP_ERR_ARGUMENT .and. index(msg, 'null endpoint handle') > 0, &
                  'null handle: ' // trim(msg))
      call ep_waitall(-1, reqs, MPI_STATUSES_IGNORE, ierr)
      call expect(ierr == EP_ERR_COUNT, 'ep_waitall negative count')
      call ep_comm_remote_size(comm, x, ierr)
      call expect(ierr == EP_ERR_ARGUMENT, 'ep_comm_remote_size of an intracommunicator')
      ! every endpoint gets through the bad calls: nothing is left waiting
      call ep_barrier(comm, ierr)
      call expect(ierr == EP_OK, 'barrier after the errors')
    end subroutine errors

  end subroutine run_all

  !> The abort path: EP rank 0 sends to a rank that does not exist, without ierr.
  subroutine abort_path(comm)
    type(ep_comm), intent(in) :: comm
    integer :: rank, n, x
    call ep_comm_rank(comm, rank)
    call ep_comm_size(comm, n)
    x = 0
    if (rank == 0) call ep_send(x, 1, MPI_INTEGER, n + 1, 0, comm)
  end subroutine abort_path

end module ep_api_checks

program ep_api_test
  use ep_mod, only: ep_comm
  use ep_api_checks
  use ep_test_program
  implicit none
  character(len=16) :: mode

  mode = ''
  if (command_argument_count() > 0) call get_command_argument(1, mode)
  if (mode == 'abort') then
    call run_checks(stop_on_a_bad_rank, 'fortran ep api abort')
  else
    call run_checks(run_all, 'fortran ep api')
  end if

contains

  ! The abort path (it stops the job: nothing to count).
  subroutine stop_on_a_bad_rank(comm)
    type(ep_comm), intent(inout) :: comm
    call abort_path(comm)
  end subroutine stop_on_a_bad_rank

end program ep_api_test
