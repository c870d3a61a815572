#!/usr/bin/env bash
# Writes docs/cli.md (to standard output) from the built binary's --help, one section per command,
# so the reference cannot drift: tests/end_to_end/test_docs.cpp fails when docs/cli.md differs from this output.
# Usage: scripts/gen_cli_md.sh [build/cli/tbcheck] > docs/cli.md
set -euo pipefail
bin="${1:-build/cli/tbcheck}"
[ -x "$bin" ] || { echo "gen_cli_md.sh: $bin is not an executable (build first)" >&2; exit 2; }
# argv[0] is what CLI11 prints after "Usage:"; run as plain "tbcheck" so the text does not depend on the path.
# Help pages fit the terminal's width (COLUMNS); the reference is laid out for the default width, 100.
tb() { (unset COLUMNS; exec -a tbcheck "$bin" "$@"); }

commands=$(tb --help | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1}')

echo "# Command reference"
echo
echo "Generated from \`tbcheck --help\` and \`tbcheck <command> --help\` by \`scripts/gen_cli_md.sh\`; do not edit by"
echo "hand: \`scripts/gen_cli_md.sh build/cli/tbcheck > docs/cli.md\` after changing a command, and"
echo "\`tests/end_to_end/test_docs.cpp\` checks that it was done. Exit codes everywhere: 0 ok, 1 the command's check failed"
echo "(validate, check: a case's expectation contradicted; learn: nothing identified; run: a failed or unstable run),"
echo "2 bad input (the message names the file, flag or field and the reason)."
echo
for c in $commands; do echo "- [\`$c\`](#$c)"; done
echo
echo '```text'
tb --help
echo '```'
for c in $commands; do
  echo
  echo "## $c"
  echo
  echo '```text'
  tb "$c" --help
  echo '```'
done
