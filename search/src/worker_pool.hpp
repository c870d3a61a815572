// Internal to search/: runs independent tasks on a few worker threads (distinguish_all's pairs), each
// task index once; the first exception stops the others after their current task and is rethrown.
#pragma once
#include <cstddef>
#include <functional>

namespace tbcheck::search::detail {

// Calls task(k) for every k in [0, tasks) on min(tasks, jobs) threads (jobs < 1 means 1; one thread
// runs on the caller's). Tasks are taken in index order; the caller sees the first exception any task threw.
void run_on_workers(size_t tasks, int jobs, const std::function<void(size_t)>& task);

}  // namespace tbcheck::search::detail
