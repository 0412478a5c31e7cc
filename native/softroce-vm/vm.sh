#!/bin/bash
# Usage: vm.sh 'shell command'
# Boots Debian's stock kernel under qemu with a Soft-RoCE device (rxe0 on eth0, IPv4 10.0.2.15),
# then runs the command with bash in a chroot of THIS machine's root filesystem (9p, read-only,
# with a tmpfs overlay for writes), in the current directory, which is shared read-write so
# build outputs (e.g. Maven target/) come back. Command output -> stdout; exit code = command's.
# Env: RXE_VM_ACCEL=tcg|kvm (tcg: software emulation works everywhere; kvm where the host allows it)
#      RXE_VM_MEM=MiB (4096)  RXE_VM_CPUS (2)
#      RXE_VM_TIMEOUT=seconds (3600)  RXE_VM_LOG=kernel console log file (/tmp/rxe-vm-console.log)
#      RXE_VM_TCG_THREAD=single|multi (single: see below; multi for timings, where busy-polling
#      peers on one TCG thread would take turns of milliseconds)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: $0 'command'" >&2; exit 2; }
KVER=${RXE_VM_KVER:-$(ls /lib/modules | grep -- '-amd64$' | sort -V | tail -1)}
ACCEL=${RXE_VM_ACCEL:-tcg}; MEM=${RXE_VM_MEM:-4096}; CPUS=${RXE_VM_CPUS:-2}
LOG=${RXE_VM_LOG:-/tmp/rxe-vm-console.log}
C=/var/tmp/rxe-vm; INITRD=$C/initrd-$KVER.gz; VMLINUX=$C/vmlinux-$KVER
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p $C

# Uncompressed kernel: qemu boots it via its PVH entry, skipping BIOS real mode + in-guest unxz (~5 s under TCG).
if [ ! -s "$VMLINUX" ]; then
  off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "/boot/vmlinuz-$KVER" | head -1 | cut -d: -f1)
  xz -dc --single-stream < <(tail -c +$((off+1)) "/boot/vmlinuz-$KVER") > "$VMLINUX.tmp"
  mv "$VMLINUX.tmp" "$VMLINUX"
fi

if [ ! -s "$INITRD" ] || [ "$HERE/guest-init.sh" -nt "$INITRD" ]; then
  d=$(mktemp -d); mkdir -p "$d"/{bin,proc,sys,dev,xfer,work,mnt/lower,mnt/rw,mnt/root,lib/modules}
  cp /bin/busybox "$d/bin/"; cp "$HERE/guest-init.sh" "$d/init"; chmod +x "$d/init"
  for m in virtio_pci virtio_net 9pnet_virtio 9p overlay crc32_generic crc32_pclmul rdma_rxe rdma_ucm; do
    modprobe -S "$KVER" --show-depends $m; done | awk '$1=="insmod" && !s[$2]++ {print $2}' |
  while read -r f; do cp "$f" "$d/lib/modules/"; basename "$f"; done > "$d/lib/modules/order"
  (cd "$d" && find . | cpio -o -H newc --quiet | gzip -1) > "$INITRD"; rm -rf "$d"
fi

X=$(mktemp -d /tmp/rxe-vm.XXXXXX)            # exchange dir: cmd in, rc out
trap 'rm -rf "$X"' EXIT
{ printf 'cd %q || exit 97\n' "$PWD"; printf '%s\n' "$*"; } > "$X/cmd"
printf '%s\n' "$PWD" > "$X/cwd"

# Under TCG, guest JVMs crashed now and then in JIT-compiled code (SIGSEGV with no fault address,
# 1 run in about 10): code the JIT patches while another vCPU runs it. Leaving AVX out of the CPU
# (QEMU 7.2 was the first to emulate it; JIT stubs use AVX2 when CPUID offers it) did not stop it;
# so all vCPUs run on one TCG thread (thread=single), and none runs code while another patches it.
case $ACCEL in
  kvm) CPU=host; ACCEL_OPTS=kvm ;;
  *) CPU=max,avx=off,avx2=off,fma=off,f16c=off,vaes=off,vpclmulqdq=off
     ACCEL_OPTS=$ACCEL,thread=${RXE_VM_TCG_THREAD:-single} ;;
esac
rc=0
timeout "${RXE_VM_TIMEOUT:-3600}" qemu-system-x86_64 -accel "$ACCEL_OPTS" -cpu $CPU -m "$MEM" -smp "$CPUS" \
  -nodefaults -no-user-config -display none -no-reboot \
  -kernel "$VMLINUX" -initrd "$INITRD" \
  -append "console=ttyS0 panic=-1 rdinit=/init" \
  -serial "file:$LOG" -chardev stdio,id=out,signal=off -serial chardev:out \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs local,path="$PWD",mount_tag=work,security_model=none,multidevs=remap \
  -virtfs local,path="$X",mount_tag=xfer,security_model=none \
  -netdev user,id=n0,restrict=on -device virtio-net-pci,netdev=n0 </dev/null || rc=$?
[ -s "$X/rc" ] && exit "$(cat "$X/rc")"
echo "rxe-vm: guest gave no exit code (qemu rc=$rc); see $LOG" >&2; exit 125
