#!/bin/bash
# The Debian packages as an administrator meets them: builds the four .deb files (the package-deb
# target: cpack), runs lintian on each (no errors; warnings are printed), installs them all on this
# machine with dpkg -i (no systemd as PID 1 here: the maintainer scripts must cope), checks what
# landed (binaries, units, sysusers and tmpfiles, conffiles, man pages, bash completion, headers,
# the ntprof group), runs the installed collector and client together, then purges the packages
# and checks nothing of them is left. The machine is put back as it was, also when a step fails.
# Needs root (dpkg): exits 77 (skipped) without it or when ntprof packages are already installed.
#   deb_packages_test.sh BUILD_DIR
set -uo pipefail
build=$1
packages=(ntprofd ntprofctl ntprof-collector ntprof-dev)

[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (dpkg -i)"; exit 77; }
command -v systemd-analyze >/dev/null || { echo "FAIL: no systemd-analyze (Debian package systemd)"; exit 1; }
for p in "${packages[@]}"; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q installed; then
    echo "SKIP: $p is already installed on this machine; this test installs and purges its own"
    exit 77
  fi
done
lintian=$(command -v lintian) || { echo "FAIL: lintian not found: deploy/install-deps.sh installs it"; exit 1; }

work=$(mktemp -d)
group_existed=0
getent group ntprof >/dev/null && group_existed=1
collector_pid=""
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok:   $*"; }

# dpkg ARGS...: dpkg, waiting for the lock when another apt or dpkg holds it (a shared machine).
dpkg_waiting() {
  local out status
  for _ in $(seq 180); do
    out=$(dpkg "$@" 2>&1)
    status=$?
    if [ "$status" != 0 ] && grep -q "lock" <<<"$out"; then sleep 1; continue; fi
    printf '%s\n' "$out"
    return "$status"
  done
  echo "dpkg: the dpkg lock stayed taken for 3 minutes"
  return 1
}

cleanup() {
  [ -n "$collector_pid" ] && kill "$collector_pid" 2>/dev/null
  local installed=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -qv "not-installed" && installed+=("$p")
  done
  [ ${#installed[@]} -eq 0 ] || dpkg_waiting --purge "${installed[@]}" >/dev/null
  # The group is Debian-style left behind by postrm; this test made it, so it takes it back.
  [ "$group_existed" = 1 ] || ! getent group ntprof >/dev/null || groupdel ntprof
  rm -rf "$work"
}
trap cleanup EXIT

# --- build the packages
if ! cmake --build "$build" --target package-deb >"$work/cpack.log" 2>&1; then
  fail "the package-deb target failed:"; tail -30 "$work/cpack.log"; exit 1
fi
version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
debs=()
for p in "${packages[@]}"; do
  arch=$(dpkg --print-architecture)
  deb="$build/packages/${p}_${version}-1_${arch}.deb"
  if [ -f "$deb" ]; then debs+=("$deb"); else fail "no $deb (cpack made: $(ls "$build/packages"))"; fi
done
[ "$failures" = 0 ] || exit 1
ok "cpack built ${debs[*]##*/}"

# --- lintian (one run for the four: it starts slowly): errors fail, warnings are listed
"$lintian" --tag-display-limit 0 "${debs[@]}" >"$work/lintian.out" 2>&1
for p in "${packages[@]}"; do
  errors=$(grep -c "^E: $p: " "$work/lintian.out")
  warnings=$(grep -c "^W: $p: " "$work/lintian.out")
  if [ "$errors" = 0 ]; then
    ok "lintian $p: no errors, $warnings warnings"
  else
    fail "lintian $p: $errors errors"
  fi
  grep -E "^(E|W): $p: " "$work/lintian.out" | sed 's/^/      /'
done

# --- install
Depends() { dpkg-deb -f "$1" Depends; }
[ -n "$(Depends "${debs[0]}")" ] && ok "ntprofd Depends: $(Depends "${debs[0]}")" ||
  fail "ntprofd has no Depends (shlibdeps)"
if dpkg_waiting -i "${debs[@]}" >"$work/install.log" 2>&1; then
  ok "dpkg -i of the four packages (no systemd as PID 1 here)"
else
  fail "dpkg -i: $(cat "$work/install.log")"; exit 1
fi

# --- what landed
for bin in /usr/sbin/ntprofd /usr/bin/ntprofctl /usr/bin/ntprof-collector; do
  name=${bin##*/}
  if [ "$("$bin" --version 2>&1)" = "$name $version" ] && "$bin" --help >/dev/null 2>&1; then
    ok "$bin --version and --help"
  else
    fail "$bin --version says '$("$bin" --version 2>&1)'"
  fi
done
for unit in ntprofd ntprof-collector; do
  file=/lib/systemd/system/$unit.service
  exec_start=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$file" 2>/dev/null)
  if [ -x "$exec_start" ]; then
    ok "$file runs $exec_start"
  else
    fail "$file: ExecStart '$exec_start' is not an installed binary"
  fi
  if systemd-analyze verify "$file" >"$work/verify.out" 2>&1; then
    ok "systemd-analyze verify $file"
  else
    fail "systemd-analyze verify $file: $(cat "$work/verify.out")"
  fi
done
for f in /usr/lib/sysusers.d/ntprof.conf /usr/lib/tmpfiles.d/ntprofd.conf \
  /usr/share/man/man8/ntprofd.8.gz /usr/share/man/man1/ntprofctl.1.gz \
  /usr/share/man/man1/ntprof-collector.1.gz /usr/include/ntprof/ntprof_probe.h \
  /usr/share/doc/ntprofd/copyright /usr/share/doc/ntprofd/changelog.Debian.gz; do
  [ -f "$f" ] || fail "$f is missing"
done
getent group ntprof >/dev/null && ok "group ntprof exists" || fail "no group ntprof after install"
[ -d /var/lib/ntprofd ] && [ "$(stat -c %a /var/lib/ntprofd)" = 700 ] &&
  ok "tmpfiles made /var/lib/ntprofd (0700)" || fail "/var/lib/ntprofd missing or not 0700"
conffiles=$(dpkg-query -W -f='${Conffiles}\n' ntprofd ntprofctl ntprof-collector | awk 'NF {print $1}' | sort | tr '\n' ' ')
[ "$conffiles" = "/etc/default/ntprof-collector /etc/default/ntprofd /etc/ntprof/ntprofctl.conf /etc/ntprof/ntprofd.conf " ] &&
  ok "conffiles: $conffiles" || fail "conffiles are '$conffiles'"
if man -l /usr/share/man/man8/ntprofd.8.gz 2>/dev/null | grep -q "ntprofd record"; then
  ok "man ntprofd shows the record command"
else
  fail "man ntprofd has no 'ntprofd record' section"
fi
# Completion as bash runs it: COMP_WORDS for "ntprofctl report -o " and "ntprofd re".
completions=$(bash -c '
  source /usr/share/bash-completion/completions/ntprofctl
  COMP_WORDS=(ntprofctl report -o ""); COMP_CWORD=3; _ntprofctl; echo "${COMPREPLY[*]}"
  source /usr/share/bash-completion/completions/ntprofd
  COMP_WORDS=(ntprofd re); COMP_CWORD=1; _ntprofd; echo "${COMPREPLY[*]}"' 2>&1)
[ "$completions" = $'text json\nrecord' ] && ok "bash completion of ntprofctl and ntprofd" ||
  fail "bash completion gave '$completions'"
if echo '#include <ntprof/ntprof_probe.h>' | cc -fsyntax-only -x c - 2>"$work/cc.out"; then
  ok "<ntprof/ntprof_probe.h> compiles"
else
  fail "<ntprof/ntprof_probe.h> does not compile: $(cat "$work/cc.out")"
fi

# The installed collector and client together, as on the collector's machine (the unit cannot
# start without systemd as PID 1): the collector on the unit's own --listen, ntprofctl with no
# address from anywhere (no flag, environment or config line) must find it.
unit_listen=$(grep -o -- '--listen unix:[^ ]*' /lib/systemd/system/ntprof-collector.service | cut -d' ' -f2)
unit_socket=${unit_listen#unix:}
socket_dir_existed=0
[ -e "$(dirname "$unit_socket")" ] && socket_dir_existed=1
if [ -z "$unit_socket" ] || [ -e "$unit_socket" ]; then
  fail "the unit's listener '$unit_listen' is missing or already in use on this machine"
else
  /usr/bin/ntprof-collector --data-dir "$work/data" --listen "$unit_listen" \
    --metrics-listen "" >"$work/collector.log" 2>&1 &
  collector_pid=$!
  for _ in $(seq 50); do [ -S "$unit_socket" ] && break; sleep 0.2; done
  if env -u NTPROF_COLLECTOR HOME="$work" /usr/bin/ntprofctl status >"$work/status.out" 2>&1; then
    ok "installed ntprofctl status, given no address, answered on the unit's $unit_listen"
  else
    fail "ntprofctl status with no address: $(cat "$work/status.out") / collector: $(cat "$work/collector.log")"
  fi
  grep -q "serving on $unit_listen\$" "$work/collector.log" &&
    ok "the collector's log says: serving on $unit_listen" ||
    fail "the collector's log of its socket: $(grep serving "$work/collector.log")"
  kill "$collector_pid"; wait "$collector_pid" 2>/dev/null; collector_pid=""
  rm -f "$unit_socket"
  [ "$socket_dir_existed" = 1 ] || rmdir "$(dirname "$unit_socket")"
fi

# --- purge: nothing of the packages is left
dpkg-query -L "${packages[@]}" 2>/dev/null | sort -u >"$work/files"
if dpkg_waiting --purge "${packages[@]}" >"$work/purge.log" 2>&1; then
  ok "dpkg --purge of the four packages"
else
  fail "dpkg --purge: $(cat "$work/purge.log")"
fi
left=()
while read -r f; do
  # Directories other packages share (/usr/bin, /etc/default, /lib -> usr/lib, ...) stay;
  # ntprof's own must go.
  if [ -d "$f" ]; then
    [[ $f == *ntprof* ]] && left+=("$f/")
  elif [ -e "$f" ] || [ -L "$f" ]; then
    left+=("$f")
  fi
done <"$work/files"
for d in /var/lib/ntprofd /run/ntprofd /var/lib/ntprof-collector; do [ -e "$d" ] && left+=("$d"); done
if [ ${#left[@]} -eq 0 ]; then
  ok "nothing left after the purge ($(wc -l <"$work/files") paths checked)"
else
  fail "left after the purge: ${left[*]}"
fi

[ "$failures" = 0 ] && echo "the four packages build, pass lintian, install and purge cleanly"
exit "$failures"
