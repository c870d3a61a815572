// The worker pool of search (worker_pool.hpp): an atomic next-task counter shared by plain threads, the
// first failure kept and rethrown on the caller's thread once every worker has stopped.
#include "worker_pool.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "tbcheck/model/stop.hpp"

namespace tbcheck::search::detail {

void run_on_workers(size_t tasks, int jobs, const std::function<void(size_t)>& task) {
  std::atomic<size_t> next{0};
  std::mutex failed;
  std::exception_ptr failure;  // the first exception of any worker
  auto work = [&] {
    for (size_t k = next++; k < tasks; k = next++) {
      try {
        model::throw_if_stopped();  // a stop ends the pool at the next task of every worker
        task(k);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failed);
        if (!failure) failure = std::current_exception();
        next = tasks;  // the others stop after their current task
      }
    }
  };
  const size_t n = std::min(tasks, static_cast<size_t>(std::max(1, jobs)));
  if (n <= 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (size_t t = 0; t < n; ++t) pool.emplace_back(work);
    for (auto& t : pool) t.join();
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace tbcheck::search::detail
