#!/bin/sh
# The command-line contract of ntprofd: help on stdout with exit 0, usage on stderr with exit 2 for
# bad flags. Does not need root (nothing is loaded).
NTPROFD=${1:?usage: ntprofd_cli_test.sh PATH_TO_NTPROFD}
fail=0
check() {  # check NAME EXPECTED_EXIT CMD... ; stdout/stderr kept in $out/$err
  name=$1; want=$2; shift 2
  out=$("$@" 2>/tmp/ntprofd_cli_err.$$); got=$?; err=$(cat /tmp/ntprofd_cli_err.$$)
  if [ "$got" != "$want" ]; then echo "FAIL $name: exit $got, want $want"; echo "$err"; fail=1; else echo "ok   $name"; fi
}
check "help" 0 "$NTPROFD" --help
echo "$out" | grep -q "SYNOPSIS" || { echo "FAIL help has no SYNOPSIS"; fail=1; }
# The command list has one summary line per command, not each command's whole manual page.
[ "$(echo "$out" | grep -c "SYNOPSIS")" = 1 ] || { echo "FAIL help repeats the commands' pages"; fail=1; }
echo "$out" | grep -Eq "^ +record +Record sampled NVMe-oF commands into a .ntp file$" ||
  { echo "FAIL help: no one-line summary of record"; fail=1; }
check "probe help" 0 "$NTPROFD" probe --help
echo "$out" | grep -q "EXIT STATUS" || { echo "FAIL probe help has no EXIT STATUS"; fail=1; }
check "record help" 0 "$NTPROFD" record --help
echo "$out" | grep -q -- "--sample-rate" || { echo "FAIL record help lacks --sample-rate"; fail=1; }
echo "$out" | grep -q "ntprofd record - record where" || { echo "FAIL record help lacks its NAME"; fail=1; }
check "unknown command" 2 "$NTPROFD" bogus
echo "$err" | grep -q "unknown command 'bogus'; the commands are probe, record, serve" ||
  { echo "FAIL unknown command: $err"; fail=1; }
# Salts out of range are refused, not clamped or wrapped (-d: a run that wrongly starts ends).
for salt in 18446744073709551616 -5 " 5" 5x; do
  check "record --salt '$salt'" 2 "$NTPROFD" record --role host -s 1 --salt "$salt" -d 0.1 \
    -o /tmp/ntprofd_cli_salt.$$
  echo "$err" | grep -q -- "--salt: $salt is not a whole number from 0 to 18446744073709551615" ||
    { echo "FAIL --salt '$salt': $err"; fail=1; }
done
rm -f /tmp/ntprofd_cli_salt.$$
# The largest salt is taken: the parse then stops at the missing -s, not at --salt.
check "record --salt 2^64-1" 2 "$NTPROFD" record --role host --salt 18446744073709551615 -o /tmp/x.ntp
echo "$err" | grep -q -- "--salt:" && { echo "FAIL --salt 2^64-1 refused: $err"; fail=1; }
check "serve negative --spool-max-bytes" 2 "$NTPROFD" serve --role host --spool-max-bytes -5
echo "$err" | grep -q -- "--spool-max-bytes: -5 is not a whole number" ||
  { echo "FAIL --spool-max-bytes -5: $err"; fail=1; }
check "no command" 2 "$NTPROFD"
check "unknown flag" 2 "$NTPROFD" --bogus
echo "$err" | grep -q "Usage" || { echo "FAIL unknown flag: no usage on stderr"; fail=1; }
[ -z "$out" ] || { echo "FAIL unknown flag wrote to stdout"; fail=1; }
check "probe unknown flag" 2 "$NTPROFD" probe --role host --bogus
check "probe bad role" 2 "$NTPROFD" probe --role initiator
check "record without -s" 2 "$NTPROFD" record --role host -o /tmp/x.ntp
check "record local without device" 2 "$NTPROFD" record --role host --transport local -s 1 -o /tmp/x.ntp
check "record local target" 2 "$NTPROFD" record --role target --transport local --device loop0 -s 1 -o /tmp/x.ntp
check "probe bad transport" 2 "$NTPROFD" probe --role host --transport fc
# rdma is a transport of both commands: never a flag error (exit 0 or 1 as the kernel allows)
"$NTPROFD" probe --role target --transport rdma --no-load >/dev/null 2>&1
[ $? -ne 2 ] && echo "ok   probe rdma accepted" || { echo "FAIL probe --transport rdma: exit 2"; fail=1; }
"$NTPROFD" record --role host --transport rdma -s 1 -d 0.1 -o /tmp/ntprofd_cli_rdma.$$ >/dev/null 2>&1
[ $? -ne 2 ] && echo "ok   record rdma accepted" || { echo "FAIL record --transport rdma: exit 2"; fail=1; }
rm -f /tmp/ntprofd_cli_rdma.$$
check "version" 0 "$NTPROFD" --version
rm -f /tmp/ntprofd_cli_err.$$
exit $fail
