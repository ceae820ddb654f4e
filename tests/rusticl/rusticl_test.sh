#!/usr/bin/env bash
# framecl on Mesa's OpenCL: rusticl on llvmpipe, from Debian's mesa-opencl-icd, whose ICD
# scripts/install-deps keeps in a directory of its own (ICD_DIR) so that the rest of the
# suite, and the sanitizers, see PoCL alone. On it, framecld --list-devices says it
# times GPU work by the host's clock (rusticl 22.3 gives zero timestamps), the self-test
# passes (every filter in every variant on small frames against its CPU reference, each
# recording mode rusticl offers, the import paths, the fair scheduler), and a daemon
# streams copy frames that framecl-mock-camera verifies.
# Skips (77) where the ICD is not installed.
# Usage: rusticl_test.sh ICD_DIR (FRAMECL_DAEMON, FRAMECL_MOCK_CAMERA, FRAMECL_SOURCE_ROOT set)
set -euo pipefail
icd_dir=$1
if ! compgen -G "$icd_dir/*.icd" > /dev/null; then
    echo "SKIP: no OpenCL ICD in $icd_dir (scripts/install-deps installs rusticl's there)"
    exit 77
fi
export OCL_ICD_VENDORS=$icd_dir RUSTICL_ENABLE=llvmpipe
work=$(mktemp -d)
daemon=
cleanup() {
    [[ -n $daemon ]] && kill "$daemon" 2> /dev/null && wait "$daemon" 2> /dev/null
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAILED: $*" >&2; exit 1; }

cat > "$work/framecld.toml" <<TOML
[daemon]
kernel_dirs = ["$FRAMECL_SOURCE_ROOT/kernels"]
cache_dir = "$work/cache"
socket = "$work/framecl.sock"
buffer_socket = "$work/buffers.sock"
pipeline_dirs = []
TOML

echo "== framecld --list-devices"
"$FRAMECL_DAEMON" --config "$work/framecld.toml" --list-devices | tee "$work/devices.txt"
grep -q '^device 0: llvmpipe' "$work/devices.txt" || fail "rusticl's llvmpipe device is not listed"
grep -q 'timing: *host clock' "$work/devices.txt" || fail "--list-devices does not say the host's clock times GPU work"

echo "== framecld --self-test"
status=0
"$FRAMECL_DAEMON" --config "$work/framecld.toml" --self-test > "$work/self-test.txt" 2> "$work/self-test.log" ||
    status=$?
cat "$work/self-test.txt"
[[ $status -eq 0 ]] || { cat "$work/self-test.log"; fail "framecld --self-test exited $status"; }
grep -q '^  profiling timestamps *not offered' "$work/self-test.txt" ||
    fail "the self-test does not say rusticl's timestamps are not used"

echo "== framecl-mock-camera --pipeline copy --verify through framecld"
"$FRAMECL_DAEMON" --config "$work/framecld.toml" > "$work/framecld.log" 2>&1 &
daemon=$!
for _ in $(seq 600); do
    [[ -S $work/framecl.sock && -S $work/buffers.sock ]] && break
    kill -0 "$daemon" 2> /dev/null || { cat "$work/framecld.log"; fail "framecld exited at start"; }
    sleep 0.1
done
"$FRAMECL_MOCK_CAMERA" --socket "$work/framecl.sock" --pipeline copy --format NV12 --size 640x480 --fps 0 --frames 50 \
    --verify --timeout 120000 || { cat "$work/framecld.log"; fail "the copy stream did not verify"; }
grep -q 'timing: host clock' "$work/framecld.log" || { cat "$work/framecld.log"; fail "framecld's log does not say which clock it times with"; }
echo "rusticl: list-devices, self-test and a verified copy stream passed"
