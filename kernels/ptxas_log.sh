#!/bin/sh
# Compiler launcher of the probe variants: runs the nvcc command given after the log path and keeps
# its stderr (ptxas -v: registers, stack, shared memory per architecture) in the log for check_ptxas.cmake.
log="$1"
shift
"$@" 2>"$log.part"
rc=$?
# The build log shows only what is not ptxas's per-function report.
grep -v -e '^ptxas info' -e 'bytes stack frame' "$log.part" >&2
mv "$log.part" "$log"
exit $rc
