#!/usr/bin/env bash
# The Perfetto system-backend tests and the fault tests with their workload under valgrind
# (issue 41; Debian's valgrind, not part of CI: 5-10 minutes of tests on a 2-core machine,
# after the build).
# The workload (`utrace-workload`, with the layer, the fault layer, the validation layer,
# the loader and Lavapipe in it) runs under memcheck through the harness's
# UTRACE_TEST_WRAPPER, its time limit lengthened by UTRACE_TEST_TIME_FACTOR; reports that
# are Mesa's, LLVM's, ld.so's, the loader's or the validation layer's own are suppressed by
# scripts/valgrind.supp (each entry says why it is not utrace's).
#
#   bash scripts/valgrind-tests.sh                  # both test targets
#   bash scripts/valgrind-tests.sh some_test_name   # a filter, passed to the test binaries
#   bash scripts/valgrind-tests.sh --report-only    # the last run's logs read again
#
# Environment: VALGRIND_LOGDIR (default target/valgrind; its logs are removed first),
# UTRACE_TEST_TIME_FACTOR (default 30: a workload may take 30 x 120 s), VALGRIND_EXTRA
# (more valgrind options, e.g. "--track-origins=yes" to see where an uninitialised value
# came from).
#
# valgrind's --error-exitcode is deliberately not used: a workload exiting with it would
# fail the tests' own assertions for the wrong reason. Instead every valgrind log is read
# afterwards. Test results and valgrind findings are reported separately: everything runs
# ~30x slower under valgrind, so assertions about timing may fail there, while the issue
# asks for valgrind to be clean. Exit status (valgrind's findings only, not the tests'):
#   0  every log complete and without unsuppressed errors
#   1  some log has unsuppressed errors, or its process died of a signal under valgrind
#   2  no errors, but a log is incomplete (its process was killed, e.g. at the time limit)
#      or there is no log at all
# Logs: $VALGRIND_LOGDIR/vg.<pid>.log (one per process; with --gen-suppressions=all, each
# error is followed by a ready-made suppression), tests.log (the tests' output, each line
# prefixed with the time it was read, used to tell which test each log belongs to).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v valgrind >/dev/null || { echo "valgrind-tests: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }

logdir=${VALGRIND_LOGDIR:-target/valgrind}
mkdir -p "$logdir"
logdir=$(cd "$logdir" && pwd)
factor=${UTRACE_TEST_TIME_FACTOR:-30}

if [[ "${1:-}" == --report-only ]]; then
  # Reads the logs of the last run again (after editing this report, say) without running.
  shift
  test_status=$(cat "$logdir/test-status" 2>/dev/null || echo 0)
else
  rm -f "$logdir"/vg.*.log "$logdir"/tests.log "$logdir"/test-status
  echo "valgrind-tests: building" >&2
  cargo build --locked -p utrace-layer -p utrace-fault-layer -p utrace-mini-traced -p utrace-perfetto-record -p utrace-cli
  cargo test --locked -p utrace-tests --no-run

  # --smc-check=all-non-file: llvmpipe runs code LLVM just compiled into anonymous memory.
  # --fair-sched=yes: valgrind runs one thread at a time; with its default lock a thread
  # that polls (utrace's traceq thread waiting out a semaphore the fault layer says never
  # signals: its VK_TIMEOUT comes back at once) kept the lock while the application's and
  # Lavapipe's threads starved, and the application's 10 s fence waits ran out.
  # --gen-suppressions=all: each report comes with its suppression, for
  # scripts/valgrind.supp (after checking whose it is). -s: the suppressions used, per log.
  # --num-callers=40: deep enough to see who called into the driver or the loader (the
  # application, the layer or the validation layer).
  wrapper="valgrind --trace-children=yes --fair-sched=yes --smc-check=all-non-file --num-callers=40"
  wrapper+=" --gen-suppressions=all -s --suppressions=$PWD/scripts/valgrind.supp"
  wrapper+=" --log-file=$logdir/vg.%p.log ${VALGRIND_EXTRA:-}"
  echo "valgrind-tests: UTRACE_TEST_WRAPPER=$wrapper" >&2
  echo "valgrind-tests: UTRACE_TEST_TIME_FACTOR=$factor; logs in $logdir" >&2

  started=$(date +%s)
  set +e
  UTRACE_TEST_WRAPPER="$wrapper" UTRACE_TEST_TIME_FACTOR="$factor" \
    cargo test --locked --no-fail-fast -p utrace-tests --test perfetto_system --test faults -- --test-threads=1 "$@" 2>&1 |
    while IFS= read -r line; do
      printf '%s\t%s\n' "$EPOCHREALTIME" "$line" >>"$logdir/tests.log"
      printf '%s\n' "$line"
    done
  test_status=${PIPESTATUS[0]}
  set -e
  echo "$test_status" >"$logdir/test-status"
  echo "valgrind-tests: the tests took $(( $(date +%s) - started )) s (cargo test exit status $test_status)" >&2
fi

python3 - "$logdir" "$test_status" <<'PY'
import glob, os, re, sys

logdir, test_status = sys.argv[1], int(sys.argv[2])

# The tests, in the order they finished: (time, target, name, result). With one test
# thread libtest prints "test NAME ... RESULT" as each one ends; the line is stamped when
# read, so a workload's log (last written when its process ended) belongs to the first
# test that ended after it.
tests = []
why = {}  # (target, test) -> the lines of its failure
failing = None
target = "?"
for raw in open(os.path.join(logdir, "tests.log"), errors="replace"):
    stamp, _, line = raw.rstrip("\n").partition("\t")
    m = re.match(r"\s+Running tests/(\S+)\.rs", line)
    if m:
        target = m.group(1)
        continue
    m = re.match(r"test (\S+) \.\.\. (ok|FAILED|ignored)", line)
    if m:
        tests.append((float(stamp), target, m.group(1), m.group(2)))
        continue
    # A failed test's message: its panic line and what follows, up to the backtrace.
    m = re.match(r"---- (\S+) stdout ----", line)
    if m:
        failing = (target, m.group(1))
        why.setdefault(failing, [])
        continue
    if failing and (line.startswith("stack backtrace:") or line.startswith("note: ")
                    or line.strip() == "failures:"):
        failing = None
    if failing and line.strip():
        why[failing].append(line)

def test_of(mtime):
    for t in tests:
        if mtime <= t[0] + 0.5:
            return f"{t[1]}::{t[2]}"
    return "(after the last test)"

HEADLINE = re.compile(
    r"(Invalid (read|write|free)|Mismatched free|Conditional jump or move depends on uninitialised"
    r"|Use of uninitialised value|Syscall param|Source and destination overlap"
    r"|Argument '.*' of function .* has a fishy value|Invalid alignment|realloc\(\) with size 0"
    r"|.*uninitialised|.*free\(\) / delete|.* (definitely|possibly) lost in loss record)")
OURS = re.compile(r"libVkLayer_utrace\.so|VkLayer_utrace::|utrace_layer|perfetto", re.I)
NOTES = re.compile(r"Process terminating with default action|the 'impossible' happened"
                   r"|unhandled instruction|unrecognised instruction|Valgrind's memory management: out of memory"
                   r"|client switching stacks|More than \d+ (total|different) errors")

total_errors = 0
incomplete = []
crashed = []  # logs whose process died of a signal under valgrind (a crash: SIGSEGV, SIGABRT)
logs = sorted(glob.glob(os.path.join(logdir, "vg.*.log")), key=os.path.getmtime)
print()
print("=== valgrind: per log ===")
for path in logs:
    lines = open(path, errors="replace").read().splitlines()
    pid = re.search(r"vg\.(\d+)\.log$", path).group(1)
    prefix = f"=={pid}== "
    body = [l[len(prefix):] for l in lines if l.startswith(prefix)]
    command = next((l[len("Command: "):] for l in body if l.startswith("Command: ")), "?")
    scenario = re.search(r"--scenario (\S+)", command)
    what = scenario.group(1) if scenario else os.path.basename(command.split(" ")[0])
    summary = next((l for l in reversed(body) if l.startswith("ERROR SUMMARY:")), None)
    errors = []  # (headline, frames), as reported while the process ran
    current = None
    for l in body:
        # Past this point come the heap summary and -s's list of the same errors again.
        if l.startswith("HEAP SUMMARY:") or l.startswith("ERROR SUMMARY:"):
            break
        if current is not None and (l.startswith("   at ") or l.startswith("   by ")
                                    or l.startswith(" Address ") or l.startswith(" Block ")
                                    or l.startswith(" Uninitialised value")):
            current[1].append(l.strip())
            continue
        current = None
        if HEADLINE.match(l) and not l.startswith(" "):
            current = (l, [])
            errors.append(current)
    used = [re.sub(r"\s+", " ", l.split("used_suppression:", 1)[1].strip())
            for l in lines if "used_suppression:" in l]
    notes = sorted({l for l in body if NOTES.search(l)})
    rel = os.path.basename(path)
    print(f"\n{rel}: {what} (test {test_of(os.path.getmtime(path))})")
    if summary is None:
        print("  INCOMPLETE: no ERROR SUMMARY (the process was killed before valgrind finished)")
        incomplete.append(rel)
        n = len(errors)
    else:
        print(f"  {summary}")
        n = int(re.match(r"ERROR SUMMARY: (\d+) errors", summary).group(1))
    total_errors += n
    for u in used:
        print(f"  suppressed: {u}")
    for note in notes:
        print(f"  note: {note}")
        if "Process terminating with default action" in note:
            crashed.append(rel)
    for headline, frames in errors:
        ours = any(OURS.search(f) for f in frames)
        print(f"  - {headline}{'   [THROUGH utrace / its Perfetto SDK]' if ours else ''}")
        # The error's stack (its first frames), then each further part (" Address ... is
        # inside a block alloc'd at", "Uninitialised value was created by") and its first.
        parts = [[]]
        for f in frames:
            if not f.startswith(("at ", "by ")):
                parts.append([f])
            else:
                parts[-1].append(f)
        for i, part in enumerate(parts):
            for f in part[: 8 if i == 0 else 5]:
                print(f"      {f}")
        shown = [f for part in parts for f in part[:8]]
        for f in frames:
            if OURS.search(f) and f not in shown:
                print(f"      ... {f}")
                break

print()
print("=== tests (under valgrind; timing assertions may fail for valgrind's slowness) ===")
for _, target, name, result in tests:
    print(f"  {result:7} {target}::{name}")
    for l in why.get((target, name), [])[:12]:
        print(f"            {l[:400]}")
if test_status != 0:
    print(f"  cargo test exit status {test_status}; see tests.log for the failures' messages")

print()
print("=== valgrind verdict ===")
print(f"  {len(logs)} logs, {total_errors} unsuppressed errors, {len(incomplete)} incomplete,"
      f" {len(crashed)} ended by a signal")
if total_errors or crashed:
    print("  NOT CLEAN: see the logs above (each error is followed by its suppression in the log)")
    sys.exit(1)
if incomplete or not logs:
    print("  no errors, but not every workload finished under valgrind: not a full verdict")
    sys.exit(2)
print("  clean")
PY
