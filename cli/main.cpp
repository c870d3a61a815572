// tbcheck: the command line. Thin by design: everything is in tbcheck_main (cli/tbcheck_main.cpp).
// Exit codes: 0 ok, 1 a hypothesis failed / cases disagree, 2 bad input, 3 internal error.
#include "tbcheck/model/stop.hpp"
#include "tbcheck_main.hpp"

int main(int argc, char** argv) {
  // SIGINT, SIGTERM and SIGHUP stop the command within a second, Z3 queries included (model/stop.hpp).
  // Installed here, not in tbcheck_main, so that the in-process CLI fuzzer keeps libFuzzer's handlers.
  tbcheck::model::install_stop_handlers();
  return tbcheck::cli::tbcheck_main(argc, argv);
}
