// tbcheck: the command line. Thin by design: everything is in tbcheck_main (cli/tbcheck_main.cpp).
// Exit codes: 0 ok, 1 a hypothesis failed / cases disagree, 2 bad input, 3 internal error.
#include "tbcheck_main.hpp"

int main(int argc, char** argv) { return tbcheck::cli::tbcheck_main(argc, argv); }
