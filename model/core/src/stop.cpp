// Stopping on SIGINT/SIGTERM/SIGHUP: the handler records the signal and wakes a watcher thread through
// a pipe; the watcher interrupts registered work and, after a grace period, ends the process itself.
#include "tbcheck/model/stop.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#include "tbcheck/model/io.hpp"

namespace tbcheck::model {
namespace {

std::atomic<int> g_signal{0};
std::atomic<bool> g_installed{false};
// request_stop_at_poll_for_test: polls left before g_pending_signal is raised (0: none pending).
std::atomic<long> g_polls_left{0};
std::atomic<int> g_pending_signal{0};
int g_wake[2] = {-1, -1};
int g_grace_ms = 600;

std::mutex g_scopes_mutex;
std::map<int, std::function<void()>> g_scopes;
int g_next_scope = 0;

void interrupt_all() {
  std::lock_guard<std::mutex> lock(g_scopes_mutex);
  for (auto& [slot, f] : g_scopes) f();
}

extern "C" void on_stop_signal(int sig) {
  const int saved_errno = errno;
  int expected = 0;
  if (!g_signal.compare_exchange_strong(expected, sig)) {
    // A second signal: the user does not want to wait for the clean stop. Only async-signal-safe calls here.
    remove_open_temporaries();
    ::signal(sig, SIG_DFL);
    ::raise(sig);  // delivered when the handler returns (the signal is blocked while it runs)
  }
  const char b = 1;
  if (g_wake[1] >= 0) (void)!::write(g_wake[1], &b, 1);
  errno = saved_errno;
}

// Waits for the first signal, then interrupts registered work again and again (a Z3 query registered
// just after an interrupt would otherwise run to its own timeout) until the grace period is over.
void watch() {
  char b = 0;
  ssize_t n = 0;
  while ((n = ::read(g_wake[0], &b, 1)) < 0 && errno == EINTR) {
  }
  const int sig = g_signal.load();
  if (n <= 0 || sig == 0) return;  // the pipe failed: no signal to act on, and none will come this way
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(g_grace_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    interrupt_all();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  end_by_signal(sig);
}

}  // namespace

int stop_signal() { return g_signal.load(std::memory_order_relaxed); }

void throw_if_stopped() {
  // One relaxed load when no test stop is pending: the loops poll this often.
  if (g_polls_left.load(std::memory_order_relaxed) > 0 && g_polls_left.fetch_sub(1) == 1) {
    int expected = 0;
    g_signal.compare_exchange_strong(expected, g_pending_signal.load());
  }
  if (const int sig = stop_signal()) throw Stopped{sig};
}

bool stop_handlers_installed() { return g_installed.load(); }

void install_stop_handlers(int grace_ms) {
  static std::once_flag once;
  std::call_once(once, [grace_ms] {
    g_grace_ms = grace_ms;
    // Test hook (as TBCHECK_TEST_WRITE_STALL_MS in io.cpp): a long grace shows whether the loops and the
    // Z3 interrupts stop the work themselves, rather than the watcher ending the process.
    if (const char* v = std::getenv("TBCHECK_TEST_STOP_GRACE_MS")) g_grace_ms = static_cast<int>(std::strtol(v, nullptr, 10));
    if (::pipe2(g_wake, O_CLOEXEC) != 0) return;  // without the watcher, the default actions stay
    g_installed = true;
    std::thread(watch).detach();
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      // An ignored signal stays ignored: nohup ignores SIGHUP, and a shell starts background jobs with
      // SIGINT ignored so that Ctrl-C at the terminal does not reach them.
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
      struct sigaction sa {};
      sa.sa_handler = on_stop_signal;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESTART;
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

void end_by_signal(int sig) {
  remove_open_temporaries();
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, nullptr);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
  ::raise(sig);
  ::_exit(128 + sig);  // not reached for the signals handled here; a fallback all the same
}

InterruptScope::InterruptScope(std::function<void()> interrupt) {
  if (stop_requested()) interrupt();
  std::lock_guard<std::mutex> lock(g_scopes_mutex);
  slot_ = g_next_scope++;
  g_scopes.emplace(slot_, std::move(interrupt));
}

InterruptScope::~InterruptScope() {
  std::lock_guard<std::mutex> lock(g_scopes_mutex);
  g_scopes.erase(slot_);
}

void request_stop_for_test(int sig) {
  g_polls_left.store(0);
  g_signal.store(sig);
}

void request_stop_at_poll_for_test(int sig, long polls) {
  g_pending_signal.store(sig);
  g_polls_left.store(polls < 1 ? 1 : polls);
}

}  // namespace tbcheck::model
