#!/bin/bash
# build-image.sh - build the ntprof testbed guest: kernel, initramfs and an ext4 root image
# (Debian bookworm with one of Debian 12's kernels) that deploy/testbed/tb boots as two QEMU VMs.
#
#   build-image.sh [--kernel 6.1|6.12]   (default 6.1, or $NTPROF_TB_KERNEL)
#     6.1   linux-image-amd64, bookworm's own kernel
#     6.12  linux-image-6.12-amd64, the newer kernel Debian 12 ships in its security suite
#
# Outputs (under $NTPROF_TESTBED_DIR, default <repo>/build/testbed):
#   image-SERIES/vmlinuz initrd.img rootfs.img KVER id_ed25519(.pub) packages   (one set per kernel)
#   cache/   debootstrap tree + .deb cache + kernels (kept: a rebuild with the same packages takes seconds)
#
# Environment:
#   NTPROF_TESTBED_DIR  output directory (the repository itself may be read-only)
#   NTPROF_TESTBED_CACHE the cache/ above elsewhere (default $NTPROF_TESTBED_DIR/cache): one cache
#                       kept outside a clone serves every clone (tests/run.sh keeps it in
#                       /var/cache/ntprof-testbed: CI's fresh clones then skip the ~1.5 min debootstrap)
#   NTPROF_BUILD_DIR    where to look for built ntprof binaries (default <repo>/build); the Debian
#                       packages providing their shared libraries are added to the guest
#   EXTRA_PKGS          extra guest packages, comma or space separated
#   KVER                exact guest kernel version (default: what the series' meta-package depends on)
#   MIRROR              Debian mirror (default: the bookworm/main source of this machine's apt)
#   FORCE_DEBOOTSTRAP=1 redo the debootstrap tree (it is otherwise redone only when the mirror changes
#                       or a wanted package is not in it; packages dropped from the list stay until then)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
DIR=${NTPROF_TESTBED_DIR:-$REPO/build/testbed}
BUILD_DIR=${NTPROF_BUILD_DIR:-$REPO/build}
KERNEL=${NTPROF_TB_KERNEL:-6.1}
while [ $# -gt 0 ]; do
  case $1 in
    --kernel) KERNEL=${2:?--kernel needs 6.1 or 6.12}; shift ;;
    --kernel=*) KERNEL=${1#*=} ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-image: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
  shift
done
# the meta-package that names each series' current kernel
case $KERNEL in
  6.1) KMETA=linux-image-amd64 ;;
  6.12) KMETA=linux-image-6.12-amd64 ;;
  *) echo "build-image: --kernel must be 6.1 or 6.12 (got '$KERNEL')" >&2; exit 2 ;;
esac
IMG=$DIR/image-$KERNEL
CACHE=${NTPROF_TESTBED_CACHE:-$DIR/cache}
SUITE=bookworm
T0=$(date +%s)
log() { echo "[build-image +$(( $(date +%s) - T0 ))s] $*" >&2; }
die() { echo "build-image: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot)"
mkdir -p "$IMG" "$CACHE"
exec 9>"$CACHE/.lock"
flock -w 1800 9 || die "another build-image.sh holds $CACHE/.lock"

# ---- 1. build machine tools -------------------------------------------------------
missing=()
for c in debootstrap:debootstrap cpio:cpio mkfs.ext4:e2fsprogs qemu-system-x86_64:qemu-system-x86 \
         ssh:openssh-client ssh-keygen:openssh-client ss:iproute2 flock:util-linux gzip:gzip xz:xz-utils; do
  command -v "${c%%:*}" >/dev/null || missing+=("${c##*:}")
done
apt_updated=0
apt_update() { [ $apt_updated = 1 ] || { apt-get update -qq >&2; apt_updated=1; }; }
if [ ${#missing[@]} -gt 0 ]; then
  log "installing build machine packages: ${missing[*]}"
  apt_update
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
# package lists are needed for the look-ups below
case "$(apt-cache policy "$KMETA" 2>/dev/null)" in *"Candidate: "[0-9]*) ;; *) apt_update ;; esac

if [ -z "${MIRROR:-}" ]; then
  MIRROR=$(apt-cache policy 2>/dev/null | awk -v s="$SUITE/main" '$3==s && $2 ~ /^https?:/ && !m {print $2; m=1}')
fi
[ -n "$MIRROR" ] || die "no $SUITE/main source in this machine's apt configuration; set MIRROR="
log "mirror $MIRROR"

# ---- 2. kernel ----------------------------------------------------------------------
KVER=${KVER:-$(apt-cache depends "$KMETA" 2>/dev/null | sed -n 's/.*Depends: linux-image-\([0-9].*-amd64\)$/\1/p' | sed -n 1p)}
[ -n "$KVER" ] || KVER=$(ls -d "$CACHE"/kernel-"$KERNEL".*/lib/modules/* 2>/dev/null | sed -n '1s,.*/,,p')
[ -n "$KVER" ] || die "cannot tell the kernel version (apt-cache depends $KMETA); set KVER="
case $KVER in "$KERNEL".*) ;; *) die "KVER $KVER is not of the $KERNEL series" ;; esac
KSRC=$CACHE/kernel-$KVER
if [ ! -f "$KSRC/boot/vmlinuz-$KVER" ]; then
  log "downloading linux-image-$KVER"
  rm -rf "$CACHE/kdeb" && mkdir -p "$CACHE/kdeb"
  (cd "$CACHE/kdeb" && apt-get download -q -o APT::Sandbox::User=root "linux-image-$KVER" >&2)
  rm -rf "$KSRC" && mkdir -p "$KSRC"
  dpkg-deb -x "$CACHE"/kdeb/linux-image-"$KVER"_*.deb "$KSRC"
  rm -rf "$CACHE/kdeb"
fi
log "kernel $KVER"

# ---- 3. guest package list ------------------------------------------------------------
# tools of the bed itself
PKGS="kmod iproute2 iputils-ping procps nvme-cli fio rdma-core ibverbs-utils ibverbs-providers rdmacm-utils
      busybox-static dropbear-bin systemd systemd-sysv bpftrace bpftool strace less util-linux
      python3"   # python3: the user-space initiator test (tests/userspace/), SPDK's rpc.py
# run-time libraries of real SPDK (tests/spdk/real, built on this machine against Debian's DPDK),
# which the SPDK scenarios run in the VMs: v23.01.1's, and what v25.09 adds: librte-rcu23 (its
# nvmf_tgt and spdk_nvme_perf link it) and openssl (its env init loads /usr/lib/ssl/openssl.cnf and
# stops with "Failed to initialize OpenSSL" without it)
PKGS="$PKGS openssl libaio1 libbsd0 libfdt1 libnl-3-200 libnl-route-3-200 libnuma1 libuuid1 librte-bus-pci23
      librte-eal23 librte-ethdev23 librte-kvargs23 librte-mbuf23 librte-mempool-ring23 librte-mempool23
      librte-meter23 librte-net23 librte-pci23 librte-power23 librte-rcu23 librte-ring23 librte-telemetry23
      librte-timer23"
# run-time libraries of ntprofd / ntprofctl / ntprof-collector (built on this Debian 12 machine)
PKGS="$PKGS libbpf1 libelf1 zlib1g libgrpc++1.51 libgrpc29 libprotobuf32 libspdlog1.10 libfmt9
      libabsl20220623 libstdc++6 libcap2 libssl3 libc-ares2 libre2-9 libisal2"
# ... and whatever the binaries that are already built actually link
. "$HERE/linked-libraries.sh"
libs_of() {  # one dpkg -S for all of a binary's libraries (one per library took ~30 s a binary)
  local paths=() l
  while read -r l; do paths+=("$l" "$(readlink -f "$l")"); done < <(linked_libraries "$1")
  [ ${#paths[@]} -gt 0 ] || return 0
  { dpkg -S "${paths[@]}" 2>/dev/null || true; } | cut -d: -f1 | tr -d ' ' | tr ',' '\n' | sort -u
}
for b in $(ntprof_binaries "$BUILD_DIR"); do
  found=$(libs_of "$b" | tr '\n' ' ')
  log "$(basename "$b") links libraries from: $found"
  PKGS="$PKGS $found"
done
EXTRA_PKGS=${EXTRA_PKGS:-}
PKGS="$PKGS ${EXTRA_PKGS//,/ }"
# keep only names this machine's apt knows (a renamed library must not break the build)
mapfile -t asked < <(printf '%s\n' $PKGS | sort -u)
mapfile -t want < <(apt-cache policy "${asked[@]}" 2>/dev/null \
  | awk '/^[^ ].*:$/ {p=substr($0, 1, length($0)-1)} /^  Candidate: [0-9]/ {print p}' | sort -u)
for p in $(printf '%s\n' "${asked[@]}" "${want[@]}" | sort | uniq -u); do
  echo "build-image: warning: package $p is not in apt, skipped" >&2
done
PKGLIST=$(IFS=,; echo "${want[*]}")

# ---- 4. debootstrap (cached: redone when the mirror changes or a wanted package is missing) -------
ROOT=$CACHE/rootfs
STAMP="$SUITE $MIRROR"
redo=${FORCE_DEBOOTSTRAP:-0}
[ "$(cat "$CACHE/rootfs.stamp" 2>/dev/null)" = "$STAMP" ] || redo=1
if [ $redo = 0 ]; then
  installed=$(dpkg-query --admindir="$ROOT/var/lib/dpkg" -W -f '${Package} ${db:Status-Status}\n' 2>/dev/null \
              | awk '$2=="installed" {print $1}' | sort -u)
  absent=$(comm -23 <(printf '%s\n' "${want[@]}") <(echo "$installed") | tr '\n' ' ')
  [ -z "$absent" ] || { log "not in the cached tree: $absent"; redo=1; }
fi
if [ $redo = 1 ]; then
  log "debootstrap $SUITE minbase + ${#want[@]} packages (log: $CACHE/debootstrap.log)"
  rm -rf "$ROOT" "$CACHE/rootfs.stamp"
  mkdir -p "$ROOT" "$CACHE/debs"
  debootstrap --variant=minbase --include="$PKGLIST" --cache-dir="$CACHE/debs" \
      "$SUITE" "$ROOT" "$MIRROR" > "$CACHE/debootstrap.log" 2>&1 \
      || { tail -30 "$CACHE/debootstrap.log" >&2; die "debootstrap failed"; }
  rm -f "$ROOT"/var/cache/apt/archives/*.deb
  echo "$STAMP" > "$CACHE/rootfs.stamp"
  log "debootstrap done"
else
  log "debootstrap tree cached ($ROOT)"
fi

# ---- 5. kernel modules, guest scripts, configuration -------------------------------------
log "installing modules and guest files"
rm -rf "$ROOT/lib/modules"/*
mkdir -p "$ROOT/lib/modules"
cp -a "$KSRC/lib/modules/$KVER" "$ROOT/lib/modules/"
# a headless VM needs none of these (saves ~150 MB)
(cd "$ROOT/lib/modules/$KVER/kernel" && rm -rf sound drivers/gpu drivers/media drivers/net/wireless \
   drivers/staging drivers/bluetooth net/bluetooth drivers/iio drivers/hid drivers/input/touchscreen \
   drivers/isdn drivers/infiniband/hw drivers/net/ethernet drivers/scsi/lpfc drivers/scsi/qla2xxx)
cp "$KSRC/boot/config-$KVER" "$KSRC/boot/System.map-$KVER" "$ROOT/boot/" 2>/dev/null || true
chroot "$ROOT" depmod -a "$KVER"

G=$HERE/guest
install -m 0755 "$G/ntprof-tb-init"     "$ROOT/sbin/ntprof-tb-init"
install -m 0755 "$G/ntprof-tb-setup"    "$ROOT/usr/local/sbin/ntprof-tb-setup"
install -m 0755 "$G/ntprof-tb-poweroff" "$ROOT/usr/local/sbin/ntprof-tb-poweroff"
install -m 0644 "$G/ntprof-tb-setup.service" "$ROOT/etc/systemd/system/ntprof-tb-setup.service"
mkdir -p "$ROOT/etc/systemd/system/multi-user.target.wants"
ln -sf ../ntprof-tb-setup.service "$ROOT/etc/systemd/system/multi-user.target.wants/ntprof-tb-setup.service"
# units that only slow a systemd boot of a throw-away VM down, or touch the NVMe/RDMA setup tb does
for u in systemd-timesyncd.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer \
         e2scrub_reap.service fstrim.timer man-db.timer dpkg-db-backup.timer getty-static.service \
         getty@tty1.service nvmf-autoconnect.service nvmefc-boot-connections.service \
         systemd-binfmt.service proc-sys-fs-binfmt_misc.automount rdma-load-modules@.service \
         rdma-hw.target rdma-ndd.service iwpmd.service systemd-networkd-wait-online.service; do
  ln -sf /dev/null "$ROOT/etc/systemd/system/$u"
done
mkdir -p "$ROOT/etc/systemd/system/serial-getty@ttyS0.service.d"
printf '[Service]\nExecStart=\nExecStart=-/sbin/agetty --autologin root --noclear %%I 115200 linux\n' \
  > "$ROOT/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf"
printf 'blacklist floppy\nblacklist parport_pc\nblacklist ppdev\nblacklist pcspkr\nblacklist joydev\n' \
  > "$ROOT/etc/modprobe.d/ntprof-testbed.conf"
echo ntprof-testbed > "$ROOT/etc/hostname"
printf '127.0.0.1 localhost\n192.168.100.1 target\n192.168.100.2 host\n10.0.2.2 buildhost\n' > "$ROOT/etc/hosts"
printf '/dev/vda / ext4 rw,noatime 0 1\n' > "$ROOT/etc/fstab"
chroot "$ROOT" passwd -d root >/dev/null
mkdir -p "$ROOT/mnt/host" "$ROOT/root/.ssh" "$ROOT/etc/dropbear"
[ -f "$IMG/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C ntprof-testbed -f "$IMG/id_ed25519"
install -m 0600 "$IMG/id_ed25519.pub" "$ROOT/root/.ssh/authorized_keys"
chmod 700 "$ROOT/root/.ssh"
for t in ed25519 ecdsa; do
  [ -f "$ROOT/etc/dropbear/dropbear_${t}_host_key" ] \
    || chroot "$ROOT" dropbearkey -t $t -f /etc/dropbear/dropbear_${t}_host_key >/dev/null 2>&1
done
# shells over ssh: same PATH as the console
printf 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n' > "$ROOT/etc/profile.d/ntprof-tb.sh"

# ---- 6. initramfs: busybox + the modules that mount the root disk -------------------------
log "building initramfs"
IR=$CACHE/initramfs
rm -rf "$IR"; mkdir -p "$IR"/{bin,dev,proc,sys,newroot,lib/modules}
cp "$ROOT/bin/busybox" "$IR/bin/busybox"
for a in sh mount umount insmod switch_root sleep cat mkdir echo; do ln -s busybox "$IR/bin/$a"; done
: > "$IR/modules"
for m in $(chroot "$ROOT" modprobe -S "$KVER" --show-depends -a virtio_pci virtio_blk crc32c_generic ext4 \
             | awk '$1=="insmod" && !seen[$2]++ {print $2}'); do
  # busybox insmod loads plain .ko files only: 6.12's modules come xz-compressed
  b=$(basename "$m")
  case $b in
    *.ko.xz) xz -dc "$ROOT$m" > "$IR/lib/modules/${b%.xz}"; b=${b%.xz} ;;
    *.ko.zst) zstd -qdc "$ROOT$m" > "$IR/lib/modules/${b%.zst}"; b=${b%.zst} ;;
    *) cp "$ROOT$m" "$IR/lib/modules/" ;;
  esac
  echo "/lib/modules/$b" >> "$IR/modules"
done
install -m 0755 "$G/initramfs-init" "$IR/init"
(cd "$IR" && find . | cpio -o -H newc --quiet | gzip -1) > "$IMG/initrd.img.tmp"
mv "$IMG/initrd.img.tmp" "$IMG/initrd.img"
cp "$KSRC/boot/vmlinuz-$KVER" "$IMG/vmlinuz"

# ---- 7. ext4 image (mkfs -d: no loop mount needed) ----------------------------------------
log "building ext4 image"
used_mb=$(du -sm "$ROOT" | cut -f1)
size_mb=$(( used_mb + used_mb / 2 + 512 ))
rm -f "$IMG/rootfs.img.tmp"
truncate -s "${size_mb}M" "$IMG/rootfs.img.tmp"
mkfs.ext4 -q -F -L ntprof-tb -O ^metadata_csum,^has_journal -E root_owner=0:0 -d "$ROOT" "$IMG/rootfs.img.tmp"
mv "$IMG/rootfs.img.tmp" "$IMG/rootfs.img"
echo "$KVER" > "$IMG/KVER"
printf '%s\n' "${want[@]}" > "$IMG/packages"
linked_libraries $(ntprof_binaries "$BUILD_DIR") > "$IMG/libraries"  # what tb checks a build against
log "done: $IMG (root tree ${used_mb} MB, image ${size_mb} MB sparse, kernel $KVER)"
