// Tests of search/src/worker_pool.cpp: every task index runs once whatever the thread count, and the
// first failure reaches the caller after the workers stop.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "../../search/src/worker_pool.hpp"

using tbcheck::search::detail::run_on_workers;

TEST_CASE("run_on_workers runs each task once on any number of threads", "[search][workers]") {
  for (int jobs : {0, 1, 2, 8}) {
    INFO("jobs " << jobs);
    std::vector<std::atomic<int>> ran(37);
    run_on_workers(ran.size(), jobs, [&](size_t k) { ran[k]++; });
    for (const auto& r : ran) CHECK(r.load() == 1);
  }
  run_on_workers(0, 4, [](size_t) { FAIL("no task to run"); });
}

TEST_CASE("run_on_workers rethrows the first failure and stops taking tasks", "[search][workers]") {
  std::atomic<int> started{0};
  CHECK_THROWS_WITH(run_on_workers(1000, 2,
                                   [&](size_t k) {
                                     started++;
                                     if (k == 3) throw std::runtime_error("task 3 failed");
                                     // Tasks take a little while, so the other worker cannot finish all of
                                     // them before the failure is seen (a race the test must not depend on).
                                     std::this_thread::sleep_for(std::chrono::microseconds(500));
                                   }),
                    "task 3 failed");
  CHECK(started.load() < 1000);
}
