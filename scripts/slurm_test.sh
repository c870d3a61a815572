#!/usr/bin/env bash
# The campaign and sharding test on a real Slurm: a one-node cluster on localhost in a temp
# folder, a sim-oracle campaign with one task cancelled and resumed, then distinguish over 4 array tasks.
#
# Usage (as root on Debian; installs slurm-wlm and munge when missing): scripts/slurm_test.sh [tbcheck]
# With --no-install first (as ctest runs it, label "slurm"): skipped (exit 77) when Slurm, munge or
# root is missing, instead of installing.
# Nothing under /etc is changed: munged, slurmctld and slurmd run from a temp folder on their own
# socket and ports, and are stopped (by their pid files) and the folder removed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
t_start=$(date +%s)
say() { echo "== slurm_test: $*"; }
fail() { echo "slurm_test: FAIL: $*" >&2; exit 1; }

# --- packages and the binary ---------------------------------------------------------------------
install=1
if [ "${1:-}" = --no-install ]; then install=0; shift; fi
skip() { echo "slurm_test: SKIPPED: $*"; exit 77; }
if [ $install -eq 0 ]; then
  for tool in slurmctld slurmd munged sbatch jq; do command -v "$tool" >/dev/null || skip "$tool is not installed"; done
  [ "$(id -u)" -eq 0 ] || skip "not root (the one-node cluster's daemons run as root)"
fi
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null || ! command -v sbatch >/dev/null; then
  [ "$(id -u)" -eq 0 ] || fail "slurm-wlm and munge are missing and installing them needs root"
  say "installing slurm-wlm and munge"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi
for tool in jq python3; do command -v "$tool" >/dev/null || fail "$tool is needed"; done
tbcheck="${1:-${TBCHECK_BIN:-$repo/build/cli/tbcheck}}"
if [ ! -x "$tbcheck" ]; then
  say "building tbcheck"
  scripts/deps.sh
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTBCHECK_WITH_CUDA=OFF >/dev/null
  cmake --build build -j"$(nproc)" --target tbcheck >/dev/null
  tbcheck="$repo/build/cli/tbcheck"
fi
tbcheck=$(readlink -f "$tbcheck")
# slurmd runs jobs as the submitting user: root here, so the daemons run as root too.
[ "$(id -u)" -eq 0 ] || fail "run as root (the one-node cluster's daemons run as root)"

# --- a one-node cluster in a temp folder -----------------------------------------------------------
tmp=$(mktemp -d /tmp/tbcheck-slurm.XXXXXX)
chmod 755 "$tmp"
stop_all() {
  local rc=$?
  for f in slurmd slurmctld munged; do
    if [ -s "$tmp/$f.pid" ]; then kill "$(cat "$tmp/$f.pid")" 2>/dev/null || true; fi
  done
  sleep 1
  for f in slurmd slurmctld munged; do
    if [ -s "$tmp/$f.pid" ]; then kill -9 "$(cat "$tmp/$f.pid")" 2>/dev/null || true; fi
  done
  if [ $rc -ne 0 ]; then
    echo "--- slurmctld log (tail) ---" >&2; tail -20 "$tmp/slurmctld.log" 2>/dev/null >&2 || true
    echo "--- slurmd log (tail) ---" >&2; tail -20 "$tmp/slurmd.log" 2>/dev/null >&2 || true
  fi
  [ -n "${KEEP_SLURM_TEST:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
  exit $rc
}
trap stop_all EXIT

free_port() {
  local p
  for p in $(shuf -i 20000-40000 -n 50); do
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
  fail "no free port"
}
ctld_port=$(free_port); slurmd_port=$(free_port)
[ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$((ctld_port + 1))

mkdir -p "$tmp/munge" "$tmp/ctld" "$tmp/spool"
chmod 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
munged --force --socket="$tmp/munge/munge.socket" --key-file="$tmp/munge/munge.key" \
  --pid-file="$tmp/munged.pid" --log-file="$tmp/munged.log" --seed-file="$tmp/munge/munge.seed"
cpus=8  # more slots than cores: the tasks mostly wait (config_overrides lets the node claim them)
cat >"$tmp/slurm.conf" <<EOF
ClusterName=tbchecktest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/munge.socket
StateSaveLocation=$tmp/ctld
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
KillWait=2
SlurmdParameters=config_overrides
MaxArraySize=1001
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$tmp/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N localhost
for _ in $(seq 60); do
  state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 1
done
[ "$state" = idle ] || fail "the node did not come up (state '$state')"
say "one-node cluster up (slurmctld :$ctld_port, slurmd :$slurmd_port) after $(( $(date +%s) - t_start )) s"

wait_job() {  # until no task of job $1 is in the queue
  for _ in $(seq 600); do
    [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
    sleep 1
  done
  fail "job $1 did not finish in 10 minutes"
}

# --- the campaign --------------------------------------------------------------------------------
work="$tmp/work"
mkdir -p "$work/hw"
c="$work/c1"
# A wrapper the tasks run instead of tbcheck: every run waits a little (so that tasks overlap), and
# the case chosen to be cancelled waits long while the flag file exists.
slow_case=$(jq -r .id "$(ls "$repo"/corpus/synth/*.json | sed -n 4p)")
cat >"$work/tbcheck-slow" <<EOF
#!/bin/bash
if [ -e "$work/slow.flag" ] && [[ " \$* " == *" $slow_case "* ]]; then sleep 120; fi
sleep 0.2
exec "$tbcheck" "\$@"
EOF
chmod +x "$work/tbcheck-slow"
touch "$work/slow.flag"
"$tbcheck" campaign plan --cases corpus/synth corpus/paper --device rtx3090 --oracle sim:alg1 --repeat 2 \
  --tbcheck "$work/tbcheck-slow" --out "$c"
tasks=$(jq '[.devices[].tasks[]] | length' "$c/manifest.json")
cases=$(jq '[.devices[].tasks[].cases[]] | length' "$c/manifest.json")
[ "$tasks" -ge 50 ] || fail "the campaign has $tasks tasks, fewer than 50"
slow_task=$(jq --arg id "$slow_case" '.devices[0].tasks[] | select(.cases[].id == $id) | .index' "$c/manifest.json")
say "planned $tasks tasks ($cases cases); task $slow_task ($slow_case) will be cancelled mid-run"

job=$(sbatch --parsable "$c/rtx3090.sbatch")
job=${job%%;*}
for _ in $(seq 120); do [ -e "$c/state/rtx3090/$slow_task.started" ] && break; sleep 0.5; done
[ -e "$c/state/rtx3090/$slow_task.started" ] || fail "task $slow_task never started"
scancel "${job}_${slow_task}"
wait_job "$job"

set +e
"$tbcheck" campaign status "$c" --json >"$work/status1.json"
status_rc=$?
set -e
[ $status_rc -eq 1 ] || fail "status after the cancel exited $status_rc, expected 1 (incomplete)"
failed=$(jq -c '[.tasks[] | select(.state != "done") | {task, state}]' "$work/status1.json")
[ "$failed" = "[{\"task\":$slow_task,\"state\":\"failed\"}]" ] || fail "after the cancel expected task $slow_task failed alone, got $failed"
[ ! -e "$c/results/rtx3090/$slow_case.sim-alg1.json" ] || fail "the cancelled task left a result"
"$tbcheck" campaign status "$c" || true
# Every result now, to show later that resume overwrote none.
(cd "$c/results/rtx3090" && sha256sum -- * | sort) >"$work/before.sha"
(cd "$c/results/rtx3090" && stat -c '%n %i %Y' -- * | sort) >"$work/before.stat"

rm "$work/slow.flag"
"$tbcheck" campaign resume "$c" | tee "$work/resume.txt"
grep -q -- "--array=$slow_task " "$work/resume.txt" || fail "resume did not resubmit exactly task $slow_task"
job2=$(sed -n 's/.*submitted job \([0-9]*\).*/\1/p' "$work/resume.txt")
wait_job "$job2"
"$tbcheck" campaign status "$c" || fail "status after resume: campaign incomplete"
"$tbcheck" campaign resume "$c" | grep -q "nothing to resubmit" || fail "a second resume resubmitted something"

# Exactly one result per case, the earlier ones untouched, no temporaries anywhere.
expected=$(jq -r '.devices[].tasks[].cases[].result' "$c/manifest.json" | sort)
present=$(ls -A "$c/results/rtx3090" | sort)
[ "$expected" = "$present" ] || fail "results differ from one per case: $(diff <(echo "$expected") <(echo "$present") | head -5)"
[ "$(echo "$present" | wc -l)" -eq "$cases" ] || fail "not $cases results"
(cd "$c/results/rtx3090" && sha256sum -- $(cut -d' ' -f3 "$work/before.sha") | sort) | diff - "$work/before.sha" \
  || fail "a result was rewritten"
(cd "$c/results/rtx3090" && stat -c '%n %i %Y' -- $(cut -d' ' -f1 "$work/before.stat") | sort) | diff - "$work/before.stat" \
  || fail "a result file was replaced"
leftover=$(find "$work" \( -name '*tbcheck-tmp*' -o -name '*.tmp*' -o -name '*.part' \) -print)
[ -z "$leftover" ] || fail "temporaries left: $leftover"

"$tbcheck" campaign collect "$c" --to "$work/hw" | tee "$work/collect.txt"
[ "$(ls "$work/hw/rtx3090" | wc -l)" -eq "$cases" ] || fail "collect did not copy $cases results"
"$tbcheck" campaign collect "$c" --to "$work/hw" | grep -q "collected 0 new, $cases already there, 0 conflicting" \
  || fail "a second collect was not a no-op"
say "campaign: $tasks tasks, one cancelled and resumed, $cases results collected, none overwritten"

# --- distinguish over 4 array tasks, merged, against one run ---------------------------------------
hyps="round-robin,most-room,olmedo,alg1,alg1-literal,alg1-natural-order"
opts=(--device rtx3090 -H "$hyps" --timeout 30 --pair-budget 120 --jobs 1)
mkdir -p "$work/shards" "$work/merged" "$work/single"
cat >"$work/shards.sbatch" <<EOF
#!/bin/bash
#SBATCH --job-name=tbcheck-shards
#SBATCH --array=1-4
#SBATCH --output=$work/shards/%a.out
mkdir -p "$work/shards/\$SLURM_ARRAY_TASK_ID"
exec "$tbcheck" distinguish ${opts[*]} --shard "\$SLURM_ARRAY_TASK_ID/4" --out "$work/shards/\$SLURM_ARRAY_TASK_ID"
EOF
t_shard=$(date +%s)
sjob=$(sbatch --parsable "$work/shards.sbatch")
sjob=${sjob%%;*}
wait_job "$sjob"
for i in 1 2 3 4; do [ -s "$work/shards/$i/shard.json" ] || { cat "$work/shards/$i.out" >&2; fail "shard $i wrote no shard.json"; }; done
t_single=$(date +%s)
"$tbcheck" distinguish "${opts[@]}" --out "$work/single" --json >"$work/single.json"
t_done=$(date +%s)
"$tbcheck" merge "$work"/shards/[1-4] --out "$work/merged" --json >"$work/merged.json"
"$tbcheck" merge "$work"/shards/[1-4] --out "$work/merged"
# Identical but for the timing fields (solver and wall seconds), which no two runs share.
strip='del(.pairs[]?.solver_seconds, .pairs[]?.wall_seconds, .pairs[]?.case.solver_seconds, .solver_seconds)'
diff <(jq -S "$strip" "$work/single.json") <(jq -S "$strip" "$work/merged.json") || fail "merged pair table differs from the single run"
[ "$(ls "$work/single")" = "$(ls "$work/merged")" ] || fail "merged corpus holds other files than the single run"
for f in "$work"/single/*.json; do
  # Byte for byte once the timing line goes: the same JSON text, in the same layout.
  cmp <(grep -v '"solver_seconds":' "$f") <(grep -v '"solver_seconds":' "$work/merged/$(basename "$f")") \
    || fail "$(basename "$f") differs between the merged and the single run"
done
npairs=$(jq '.pairs | length' "$work/single.json")
nsep=$(ls "$work/single" | wc -l)
say "distinguish: $npairs pairs over 4 array tasks ($((t_single - t_shard)) s) merged = one run ($((t_done - t_single)) s): $nsep cases, table equal but for timing"
say "PASS in $(( $(date +%s) - t_start )) s"
