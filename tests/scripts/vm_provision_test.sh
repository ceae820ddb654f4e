#!/usr/bin/env bash
# scripts/vm-provision puts the guest's kernel modules where no build tree's deletion
# takes them away: CI provisions a fresh tree on every run and deletes it afterwards, so
# a second tree provisioned after the first was deleted must succeed and leave the
# modules reachable, by path and by name (modules.dep), and a link that an earlier run
# left dangling there is replaced.
# The real script runs on build trees made here: a kernel version of the test's own
# under /lib/modules (removed at the end), a stand-in vgem.ko that kmod can read, a
# stand-in virtme-ng, and the Debian packages reported installed, so that nothing is
# downloaded and only the modules' placing is exercised. Exits 77 without root (or
# sudo without a password), or without kmod (scripts/vm-provision installs it) or objcopy.
# Usage: vm_provision_test.sh SCRIPTS_VM_PROVISION
set -euo pipefail
provision=$(realpath "${1:?usage: vm_provision_test.sh SCRIPTS_VM_PROVISION}")
PATH="$PATH:/usr/sbin:/sbin"

skip() {
  echo "SKIP: $*"
  exit 77
}
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo -n true 2>/dev/null || skip "needs root, or sudo without a password, to write /lib/modules"
  sudo="sudo"
fi
for tool in depmod modinfo; do
  command -v "$tool" >/dev/null || skip "$tool is not installed (kmod; scripts/vm-provision installs it)"
done
command -v objcopy >/dev/null || skip "objcopy is not installed (binutils)"

version="0.0.0-vm-provision-test-$$"
target="/lib/modules/$version"
had_lib_modules=false
if [ -e /lib/modules ]; then
  had_lib_modules=true
fi
work=$(mktemp -d)
cleanup() {
  $sudo rm -rf "$target"
  if [ "$had_lib_modules" = false ]; then
    $sudo rmdir /lib/modules 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# The packages step is not what this tests: every package is reported installed.
mkdir "$work/bin"
printf '#!/bin/sh\necho "install ok installed"\n' > "$work/bin/dpkg-query"
chmod +x "$work/bin/dpkg-query"

# What the download step leaves in BUILD_DIR/vm, and virtme-ng as if installed.
make_tree() {
  local vm="$1/vm" modules="$1/vm/kernel/lib/modules/$version"
  mkdir -p "$vm/kernel/boot" "$modules/kernel/drivers/gpu/drm/vgem" "$vm/venv/bin"
  : > "$vm/kernel/boot/vmlinuz-$version"
  printf 'name=vgem\0license=GPL\0' > "$work/modinfo"
  objcopy -I binary -O elf64-x86-64 -B i386:x86-64 --rename-section .data=.modinfo \
    "$work/modinfo" "$modules/kernel/drivers/gpu/drm/vgem/vgem.ko"
  echo kernel/drivers/gpu/drm/vgem/vgem.ko > "$modules/modules.order"
  : > "$modules/modules.builtin"
  : > "$modules/modules.builtin.modinfo"
  printf '#!/bin/sh\necho "virtme-ng (stand-in)"\n' > "$vm/venv/bin/vng"
  chmod +x "$vm/venv/bin/vng"
}

run_provision() {
  echo "--- scripts/vm-provision $1"
  if ! PATH="$work/bin:$PATH" "$provision" "$1" 2>&1; then
    echo "FAIL: scripts/vm-provision $1 failed"
    exit 1
  fi
}

# Where run-in-guest and the guest's modprobe look: /lib/modules/VERSION, through any link.
check_reachable() {
  if [ ! -e "$target/kernel/drivers/gpu/drm/vgem/vgem.ko" ]; then
    echo "FAIL: $target/kernel/drivers/gpu/drm/vgem/vgem.ko is missing $1"
    ls -l "$target" 2>&1 || true
    exit 1
  fi
  echo "ok: vgem.ko under $target $1"
}

# modprobe finds a module by name through modules.dep, which the kernel package leaves
# to its postinst.
check_indexed() {
  local found
  if ! found=$(modinfo -k "$version" -F filename vgem 2>&1) \
      || [ "$found" != "$target/kernel/drivers/gpu/drm/vgem/vgem.ko" ]; then
    echo "FAIL: modinfo -k $version vgem does not find it under $target $1: $found"
    exit 1
  fi
  echo "ok: modinfo -k $version vgem finds $found $1"
}

# CI's sequence: a tree provisioned, deleted, and the next one provisioned.
make_tree "$work/first"
run_provision "$work/first"
check_reachable "after the first tree's provisioning"
rm -rf "$work/first"
make_tree "$work/second"
run_provision "$work/second"
check_reachable "after the second tree's provisioning, the first deleted"
rm -rf "$work/second"
check_reachable "with both trees deleted"
check_indexed "with both trees deleted"

# A machine that an earlier provisioning left with a link into a deleted tree.
$sudo rm -rf "$target"
$sudo ln -s "$work/deleted/vm/kernel/lib/modules/$version" "$target"
make_tree "$work/third"
run_provision "$work/third"
rm -rf "$work/third"
check_reachable "where a dangling link was, its tree deleted"
check_indexed "where a dangling link was, its tree deleted"
echo "PASS"
