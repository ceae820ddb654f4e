#!/usr/bin/env bash
# framecl's outputs against OpenCV's on the CI device (PoCL): framecl-bench runs each
# case that OpenCV has an equivalent for on random frames of odd sizes and dumps its
# frames, and compare_opencv.py --check-only runs OpenCV on the same inputs and fails
# where an output differs past what docs/filters.md says the two definitions allow.
# OpenCV is a reference written by others: this checks framecl's semantics (borders,
# anchors, rounding, the colour matrix, Keys' cubic, Bayer orders, blockmatch's tie rule), not only its
# kernels against framecl's own CPU references.
# Usage: compare_opencv_test.sh FRAMECL_BENCH PYTHON SCRIPT
set -euo pipefail
bench=$1 python=$2 script=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Even sides for NV12; no side a multiple of 4 or 16, so every kernel's edge paths run.
# camera-prep scales to its fixed 960x540: up, here.
# blockmatch runs on a random frame and the same moved (framecl-bench checks the motion
# itself, and exits 1 where it is wrong), compared here with matchTemplate per block.
"$bench" --sizes 138x66 --runs 1 --warmup 0 --no-extra-sizes \
    --filters copy,color,box,sobel,bicubic,convolve,demosaic,blockmatch \
    --plugin-dir "$FRAMECL_PLUGIN_DIR" --kernel-dir "$FRAMECL_SOURCE_ROOT/kernels" --cache-dir "$work/cache" \
    --dump "$work/frames" --json "$work/bench.json" --markdown "$work/bench.md"
"$python" "$script" "$work/bench.json" --check-only | tee "$work/bench-check.md"
# The shipped camera-prep pipeline (bicubic taking the NV12 conversion into its loads
# where fused), unfused and fused, each against the reference in compare_opencv.py.
for run in unfused fused; do
    grep -Eq "camera-prep NV12 to 960x540 ABGR8888 \($run defaults\) \| NV12 138x66 .* (equal to|within [12] of) the reference \|" \
        "$work/bench-check.md"
done
# The RAW stages and the camera ISP pipeline they chain into, at a width packed RAW10
# allows (a multiple of 4): the pipeline's NV12 and statistics are checked exactly
# against the CPU reference chain (clients/bench/isp_reference.py), OpenCV's chain against
# the same with bilinear demosaicing; the pipeline runs unfused and fused, and both are checked.
"$bench" --sizes 132x66 --runs 1 --warmup 0 --no-extra-sizes --filters bayer,demosaic,ccm,tone,color \
    --plugin-dir "$FRAMECL_PLUGIN_DIR" --kernel-dir "$FRAMECL_SOURCE_ROOT/kernels" --cache-dir "$work/cache" \
    --dump "$work/isp" --json "$work/isp.json" --markdown "$work/isp.md"
"$python" "$script" "$work/isp.json" --check-only | tee "$work/isp-check.md"
for run in unfused fused; do
    grep -q "camera ISP SRGGB10P to NV12, statistics ($run defaults) | SRGGB10P 132x66 .* framecl's NV12 equals the CPU reference, its statistics equal it" \
        "$work/isp-check.md"
done
# The shipped edges and denoise-edges pipelines (epsilon taking the luma conversion into
# its loads where fused), unfused and fused, each against the reference in
# compare_opencv.py.
"$bench" --sizes 138x66 --runs 1 --warmup 0 --no-extra-sizes --filters color,epsilon,sobel \
    --plugin-dir "$FRAMECL_PLUGIN_DIR" --kernel-dir "$FRAMECL_SOURCE_ROOT/kernels" --cache-dir "$work/cache" \
    --dump "$work/edges" --json "$work/edges.json" --markdown "$work/edges.md"
"$python" "$script" "$work/edges.json" --check-only | tee "$work/edges-check.md"
for pipeline in "edges ABGR8888" "denoise-edges NV12"; do
    for run in unfused fused; do
        grep -q "$pipeline ($run defaults) | .* 138x66 .* equal to the reference" "$work/edges-check.md"
    done
done
