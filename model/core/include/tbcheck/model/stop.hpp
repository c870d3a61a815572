// Stopping on request (SIGINT, SIGTERM, SIGHUP): a flag long loops poll, and a registry of interrupt
// callbacks through which work the loops cannot poll (a Z3 query in smt/) is cut short.
#pragma once
#include <functional>

namespace tbcheck::model {

// Thrown by throw_if_stopped. Deliberately not a std::exception: code that turns a failed step into an
// "unknown" result (catch (const std::exception&)) must not swallow a stop.
struct Stopped {
  int signal = 0;
};

// The signal that asked to stop, or 0.
int stop_signal();
inline bool stop_requested() { return stop_signal() != 0; }
// Throws Stopped once a stop was requested; called where a long loop can leave cleanly.
void throw_if_stopped();

// Installs the command's handlers for SIGINT, SIGTERM and SIGHUP (for the tbcheck command, not for an
// embedding program); a signal the process inherited as ignored (nohup, a background job) stays ignored. The handler only records the signal; a watcher thread then calls every
// registered interrupt, and if the process has not ended within `grace_ms` it removes the open
// temporaries and ends the process by the signal itself, so that a loop that never polls cannot keep it
// alive. A second signal ends the process at once. TBCHECK_TEST_STOP_GRACE_MS overrides `grace_ms` (a
// test hook).
void install_stop_handlers(int grace_ms = 600);
// Whether install_stop_handlers ran: without them (an embedding program, the in-process CLI fuzzer) a stop
// can only come from the program itself, and the command returns 128 + the signal instead of ending the process.
bool stop_handlers_installed();

// Removes this process's temporaries and ends it by `sig` with the default action, as a shell expects
// (exit status 128 + sig); what was completely written stays.
[[noreturn]] void end_by_signal(int sig);

// While alive, a requested stop calls `interrupt` (from the watcher thread, possibly repeatedly, until
// the scope ends): it must be thread-safe and must not block (Z3_interrupt is both). When a stop was
// requested before the scope began, it is called at once.
class InterruptScope {
 public:
  explicit InterruptScope(std::function<void()> interrupt);
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  int slot_ = -1;
};

// Test hook: behaves as if `sig` had arrived (0 clears the request and any pending one below).
void request_stop_for_test(int sig);
// Test hook: `sig` arrives at the `polls`-th throw_if_stopped from now (polls >= 1), so that a fuzzer stops a
// command at a point the input chooses, the same point on every run of that input.
void request_stop_at_poll_for_test(int sig, long polls);

}  // namespace tbcheck::model
