#!/bin/busybox sh
# /init of the guest's initramfs (built by vm.sh). Kernel messages and these notes go to ttyS0
# (the console log); the command's output goes to ttyS1 (vm.sh's stdout).
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
t() { echo "rxe-vm: [$(cut -d' ' -f1 /proc/uptime)s] $*"; }
t "init started"
for m in $(cat /lib/modules/order); do insmod /lib/modules/$m || t "insmod $m FAILED"; done
t "modules loaded"
o=trans=virtio,version=9p2000.L,msize=512000
mount -t 9p -o $o,ro,cache=loose hostroot /mnt/lower
mount -t tmpfs -o size=50% rw /mnt/rw; mkdir /mnt/rw/u /mnt/rw/w
mount -t overlay -o lowerdir=/mnt/lower,upperdir=/mnt/rw/u,workdir=/mnt/rw/w root /mnt/root
R=/mnt/root
mount -t proc proc $R/proc; mount -t sysfs sys $R/sys; mount -t devtmpfs dev $R/dev
mkdir -p $R/dev/pts $R/dev/shm; mount -t devpts devpts $R/dev/pts; mount -t tmpfs shm $R/dev/shm
for d in tmp run var/tmp mnt; do mount -t tmpfs tmp $R/$d; done; chmod 1777 $R/tmp $R/var/tmp
mkdir -p $R/run/rxe-vm; mount -t 9p -o $o,cache=none xfer $R/run/rxe-vm
CWD=$(cat $R/run/rxe-vm/cwd); mkdir -p "$R$CWD"; mount -t 9p -o $o,cache=none work "$R$CWD"
hostname rxe-vm
ip link set lo up; ip addr add 10.0.2.15/24 dev eth0; ip link set eth0 up
chroot $R rdma link add rxe0 type rxe netdev eth0 || t "rdma link add FAILED"
t "rxe0 created; running command"
stty -F /dev/ttyS1 raw -echo; ulimit -l unlimited
chroot $R /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  /bin/bash /run/rxe-vm/cmd </dev/null >/dev/ttyS1 2>&1
rc=$?
echo $rc > $R/run/rxe-vm/rc; sync
t "command exited with $rc; powering off"
poweroff -f
