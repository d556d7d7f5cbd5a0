// ParallelFor: each index runs exactly once, work really runs beside the
// caller, the workers are reused across calls, and an exception in any task
// reaches the caller after every task has finished.
#include "core/base/parallel_for.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace pe {
namespace {

TEST(ParallelFor, EachIndexRunsOnceOnSeveralThreads) {
  for (int n : {0, 1, 2, 3, 5}) {
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(n));
    std::mutex mu;
    std::set<std::thread::id> ids;
    ParallelFor(n, [&](int k) {
      ++runs[static_cast<std::size_t>(k)];
      std::lock_guard<std::mutex> lock(mu);
      ids.insert(std::this_thread::get_id());
    });
    for (int k = 0; k < n; ++k) EXPECT_EQ(runs[static_cast<std::size_t>(k)], 1) << "n=" << n << " k=" << k;
    EXPECT_EQ(ids.size(), static_cast<std::size_t>(n)) << "n=" << n;  // one thread per task
  }
}

TEST(ParallelFor, WorkersAreReused) {
  std::set<std::thread::id> first, second;
  std::mutex mu;
  ParallelFor(3, [&](int) { std::lock_guard<std::mutex> l(mu); first.insert(std::this_thread::get_id()); });
  ParallelFor(3, [&](int) { std::lock_guard<std::mutex> l(mu); second.insert(std::this_thread::get_id()); });
  EXPECT_EQ(first, second);
}

TEST(ParallelFor, AnExceptionReachesTheCallerAfterAllTasks) {
  std::atomic<int> done{0};
  EXPECT_THROW(ParallelFor(3,
                           [&](int k) {
                             if (k == 0) throw std::runtime_error("task 0");
                             ++done;
                           }),
               std::runtime_error);
  EXPECT_EQ(done, 2);
  // The pool still works afterwards.
  std::atomic<int> again{0};
  ParallelFor(3, [&](int) { ++again; });
  EXPECT_EQ(again, 3);
}

// A ParallelFor inside a task runs its tasks on that thread, in order,
// instead of waiting for the busy pool.
TEST(ParallelFor, NestedCallsRunOnTheCallingThread) {
  std::mutex mu;
  std::vector<std::pair<int, int>> order;
  ParallelFor(2, [&](int outer) {
    const auto self = std::this_thread::get_id();
    ParallelFor(3, [&](int inner) {
      EXPECT_EQ(std::this_thread::get_id(), self);
      std::lock_guard<std::mutex> lock(mu);
      order.emplace_back(outer, inner);
    });
  });
  ASSERT_EQ(order.size(), 6u);
  for (int outer : {0, 1}) {
    std::vector<int> inners;
    for (const auto& [o, i] : order)
      if (o == outer) inners.push_back(i);
    EXPECT_EQ(inners, (std::vector<int>{0, 1, 2})) << "outer " << outer;
  }
}

// Back-to-back calls of changing width, so that idle workers (not needed by
// a narrow call) are still waking while the next, wider call starts: every
// index of every call must still run exactly once.
TEST(ParallelFor, RapidCallsOfChangingWidthRunEachIndexOnce) {
  const int widths[] = {5, 2, 4, 1, 3, 2};
  for (int it = 0; it < 3000; ++it) {
    const int n = widths[it % 6];
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(n));
    ParallelFor(n, [&](int k) { ++runs[static_cast<std::size_t>(k)]; });
    for (int k = 0; k < n; ++k) ASSERT_EQ(runs[static_cast<std::size_t>(k)], 1) << "call " << it << " k=" << k;
  }
}

}  // namespace
}  // namespace pe
