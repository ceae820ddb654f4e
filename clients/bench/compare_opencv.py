#!/usr/bin/env python3
"""framecl against OpenCV's T-API on the same OpenCL device, from one framecl-bench run.

framecl-bench --json J --dump D writes each case's input frame, its output and its
times (GPU time from profiling events, and wall time per call from enqueue to
clFinish). This script runs OpenCV's equivalent of each case on the same input, as
UMat calls on OpenCV's OpenCL device with the same semantics (border, rounding,
output type), timed the same way: wall time per call, ending with cv2.ocl.finish().
It checks OpenCV's output against framecl's (a fast wrong frame is not a result) and
prints a markdown table with the ratio.

Exit status 1 if any output differs from OpenCV's by more than the case allows (the
differences docs/filters.md documents: OpenCV's rounding of exact halves and its
fixed-point weights), 0 otherwise.

    framecl-bench --tune --json bench.json --dump frames/ ...
    compare_opencv.py bench.json [--runs 20] [--markdown out.md] [--check-only]
"""

import argparse
import json
import statistics
import sys
import time

import cv2
import numpy as np

import isp_reference

# framecl-bench's default border, and OpenCV's name for it.
REPLICATE = cv2.BORDER_REPLICATE

# Pixel formats as framecl-bench describes them: channels and rows per frame.
CHANNELS = {"R8": 1, "ABGR8888": 4}

# Bayer formats of 16-bit words and their bits (docs/filters.md, "Bayer formats"); the
# bits above are ignored, as framecl ignores them.
BAYER_WORDS = {f"S{order}{bits}": bits for order in ("RGGB", "BGGR", "GRBG", "GBRG") for bits in (10, 12)}


def parse_shape(text):
    """'R8 1920x1080' -> ('R8', 1920, 1080)."""
    fourcc, size = text.split()
    width, height = (int(v) for v in size.split("x"))
    return fourcc, width, height


def load_frame(path, shape):
    """A packed frame as a numpy array: HxW (R8, Bayer words), HxWx4 (ABGR8888, ABGR16161616),
    (3H/2)xW (NV12), or Hx(5W/4) bytes (SRGGB10P)."""
    fourcc, width, height = parse_shape(shape)
    if fourcc == "SRGGB10P":  # the packed bytes, 5 per 4 samples
        return np.fromfile(path, dtype=np.uint8).reshape(height, width * 5 // 4)
    if fourcc in BAYER_WORDS:
        return np.fromfile(path, dtype="<u2").reshape(height, width) & ((1 << BAYER_WORDS[fourcc]) - 1)
    if fourcc == "ABGR16161616":
        return np.fromfile(path, dtype="<u2").reshape(height, width, 4)
    data = np.fromfile(path, dtype=np.uint8)
    if fourcc == "NV12":
        return data.reshape(height * 3 // 2, width)
    channels = CHANNELS[fourcc]
    frame = data.reshape(height, width, channels)
    return frame[:, :, 0] if channels == 1 else frame


def sobel_l1(src, dst, scratch, size):
    """framecl's sobel magnitude l1: min(|gx| + |gy|, 255), gx and gy at 16 bits."""
    gx, gy, ax, ay = scratch
    cv2.Sobel(src, cv2.CV_16S, 1, 0, dst=gx, ksize=3, borderType=REPLICATE)
    cv2.Sobel(src, cv2.CV_16S, 0, 1, dst=gy, ksize=3, borderType=REPLICATE)
    cv2.convertScaleAbs(gx, dst=ax)
    cv2.convertScaleAbs(gy, dst=ay)
    cv2.add(ax, ay, dst=dst)  # saturating: min(min(|gx|, 255) + min(|gy|, 255), 255)


def luma_from_16(src, expected):
    """The output pixels of an NV12 frame whose Y code is at least 16."""
    height, width = expected.shape[:2]
    return src[:height, :width] >= 16


def block_rects(width, height, block):
    """Each block's (x0, y0, x1, y1), row-major: those at the right and bottom edges cut short."""
    return [(x, y, min(x + block, width), min(y + block, height))
            for y in range(0, height, block) for x in range(0, width, block)]


def blockmatch_scratch(block, search):
    """framecl-bench's blockmatch case runs on frames B (its input) and A (the previous
    frame, "previous_file"). The scratch: A, A padded by `search` (replicated) on the
    device, each block's search window there (the block grown by `search` on each side),
    and one CV_32F result of (2 search + 1)^2 per block, ROIs of one UMat read back at once."""
    def make(src, m):
        previous = load_frame(m["previous_file"], m["input"])
        side = 2 * search + 1
        rects = block_rects(src.shape[1], src.shape[0], block)
        padded = cv2.UMat(src.shape[0] + 2 * search, src.shape[1] + 2 * search, cv2.CV_8UC1)
        results = cv2.UMat(side * len(rects), side, cv2.CV_32FC1)
        return dict(block=block, search=search, rects=rects, previous=cv2.UMat(previous), padded=padded,
                    host_padded=cv2.copyMakeBorder(previous, search, search, search, search, REPLICATE),
                    windows=[cv2.UMat(padded, (y0, y1 + 2 * search), (x0, x1 + 2 * search))
                             for x0, y0, x1, y1 in rects],
                    results=results,
                    result_rois=[cv2.UMat(results, (i * side, (i + 1) * side), (0, side)) for i in range(len(rects))])
    return make


def blockmatch_run(src, dst, s, size):
    """One matchTemplate TM_SQDIFF per block of B in its window of A, padded by the search
    range: result (ox, oy) is the candidate dx = search - ox, dy = search - oy, which
    compares B(x, y) with A(x - dx, y - dy)."""
    r = s["search"]
    cv2.copyMakeBorder(s["previous"], r, r, r, r, REPLICATE, dst=s["padded"])  # into the windows' UMat
    for (x0, y0, x1, y1), window, result in zip(s["rects"], s["windows"], s["result_rois"]):
        cv2.matchTemplate(window, cv2.UMat(src, (y0, y1), (x0, x1)), cv2.TM_SQDIFF, result=result)


def blockmatch_output(src, dst, s):
    """framecl's blockmatch output from blockmatch_run's costs: per block (dx, dy as int8,
    min(cost, 65535) as uint16 little-endian) of the least cost, then the least |dx| + |dy|,
    then the least dy, then the least dx. TM_SQDIFF's CV_32F is exact in OpenCV's direct
    OpenCL kernel for templates below 18x18 (sums of integers below 2^24), not where it
    derives it from correlations (on the CPU: off by 1 at 16x16; larger templates): the
    candidates within a rounding error of the least are costed again exactly, in int64,
    and the tie rule picks among them."""
    block, r = s["block"], s["search"]
    side = 2 * r + 1
    costs = s["results"].get().reshape(-1, side, side)
    padded = s["host_padded"].astype(np.int64)
    height, width = src.shape
    out = np.zeros(((height + block - 1) // block, (width + block - 1) // block, 4), dtype=np.uint8)
    for (x0, y0, x1, y1), found in zip(s["rects"], costs):
        template = src[y0:y1, x0:x1].astype(np.int64)
        near = found <= found.min() + 0.5 + 1e-5 * template.size * 255 ** 2
        best = min((int(((template - padded[y0 + oy:y1 + oy, x0 + ox:x1 + ox]) ** 2).sum()),
                    abs(r - ox) + abs(r - oy), r - oy, r - ox) for oy, ox in zip(*np.nonzero(near)))
        cost, _, dy, dx = best
        cost = min(cost, 65535)
        out[y0 // block, x0 // block] = (dx & 0xff, dy & 0xff, cost & 0xff, cost >> 8)
    return out


def demosaic_scratch(src, m):
    """cvtColor's RGB output, 16 bits a channel."""
    return cv2.UMat(src.shape[0], src.shape[1], cv2.CV_16UC3)


def demosaic_output(bits):
    """framecl's ABGR16161616 from cvtColor's RGB of `bits` bits: each channel widened to 16
    by repeating its high bits (docs/filters.md, "`demosaic`: Bayer to RGB"), alpha 65535."""
    def output(src, dst, s):
        rgb = s.get().astype(np.uint32)
        wide = (rgb << (16 - bits)) | (rgb >> (2 * bits - 16))
        alpha = np.full(rgb.shape[:2] + (1,), 65535, dtype=np.uint32)
        return np.concatenate([wide, alpha], axis=2).astype(np.uint16)
    return output


def inside_outer_pixel(src, expected):
    """Every pixel but the frame's outer one, where OpenCV's demosaicing has borders of its own."""
    mask = np.zeros(expected.shape, dtype=bool)
    mask[1:-1, 1:-1] = True
    return mask


# framecl-bench's camera ISP case (clients/bench/bench_cases.cpp).
ISP = dict(black_level=64, gains=(1.9, 1.0, 1.6),
           matrix=(1.78, -0.62, -0.16, -0.24, 1.51, -0.27, 0.03, -0.58, 1.55))


def isp_words(src, m):
    """OpenCV reads no MIPI CSI-2 RAW10: its chain starts from the unpacked 16-bit words."""
    _, width, height = parse_shape(m["input"])
    return isp_reference.unpack_raw10(src, width, height)


def isp_check(src, expected, m):
    """framecl's NV12 and statistics against the CPU reference chain (isp_reference.py):
    (whether they differ, what was found)."""
    _, width, height = parse_shape(m["input"])
    nv12, stats = isp_reference.chain(src, width, height, ISP["black_level"], ISP["gains"], ISP["matrix"])
    got = np.fromfile(m["statistics_file"], dtype="<u4") if "statistics_file" in m else None
    output_differs = int((nv12 != expected).sum())
    stats_equal = got is not None and np.array_equal(got, stats)
    text = ("framecl's NV12 " + ("equals" if output_differs == 0 else f"differs in {output_differs} bytes from")
            + " the CPU reference, its statistics " + ("equal it" if stats_equal else "DIFFER")
            + "; OpenCV's against the reference chain with bilinear demosaicing: ")
    return output_differs > 0 or not stats_equal, text


def isp_baseline(src, m):
    """What OpenCV's chain computes, exactly: the reference chain with bilinear demosaicing."""
    _, width, height = parse_shape(m["input"])
    return isp_reference.chain(src, width, height, ISP["black_level"], ISP["gains"], ISP["matrix"],
                               method="bilinear")[0]


def isp_scratch(src, m):
    """The gains as a CV_32F mosaic of the integer factors over 2^14, the matrix with the
    widening to 16 bits and the 0..1 range folded in, BT.709 limited-range YCbCr as a 3x4
    matrix of 8-bit codes, and the chain's intermediates."""
    _, width, height = parse_shape(m["input"])
    stretch = 1023 / (1023 - ISP["black_level"])
    factors = np.array([isp_reference.lround(g * stretch * 16384) / 16384 for g in ISP["gains"]], dtype=np.float32)
    kr, kb = 0.2126, 0.0722
    kg = 1 - kr - kb
    ys, cs = 219 / 255, 224 / 255
    yuv = np.array([[kr * ys, kg * ys, kb * ys, 16],
                    [-kr / (2 * (1 - kb)) * cs, -kg / (2 * (1 - kb)) * cs, cs / 2, 128],
                    [cs / 2, -kg / (2 * (1 - kr)) * cs, -kb / (2 * (1 - kr)) * cs, 128]], dtype=np.float32)
    return dict(gains=cv2.UMat(factors[isp_reference.colours(height, width)]),
                matrix=np.array(ISP["matrix"], dtype=np.float32).reshape(3, 3) / 1023, yuv=yuv,
                uv=cv2.UMat(height // 2, width // 2, cv2.CV_8UC2), y=cv2.UMat(height, width, cv2.CV_8UC1),
                half=(width // 2, height // 2))


def isp_run(src, dst, s, size):
    """levels (subtract, multiply by the gains' mosaic, min), cvtColor COLOR_BayerBG2RGB on
    16 bits, transform by the matrix into floats in 0..1, the sRGB curve (pow, its linear
    toe by compare and copyTo), convertScaleAbs to 8 bits, transform to YCbCr, the Y
    channel, and Cb and Cr averaged over 2x2 blocks (resize INTER_AREA), interleaved."""
    levelled = cv2.min(cv2.multiply(cv2.subtract(src, ISP["black_level"]), s["gains"], dtype=cv2.CV_16U), 1023)
    rgb = cv2.cvtColor(levelled, cv2.COLOR_BayerBG2RGB)
    four = lambda v: (v, v, v, v)  # a scalar for every channel
    linear = cv2.min(cv2.max(cv2.transform(cv2.multiply(rgb, four(1.0), dtype=cv2.CV_32F), s["matrix"]), four(0.0)),
                     four(1.0))
    encoded = cv2.addWeighted(cv2.pow(linear, 1 / 2.4), 1.055 * 255, linear, 0, -0.055 * 255)
    cv2.copyTo(cv2.multiply(linear, four(12.92 * 255)), cv2.compare(linear, four(0.0031308), cv2.CMP_LE), encoded)
    ycbcr = cv2.transform(cv2.convertScaleAbs(encoded), s["yuv"])
    cv2.extractChannel(ycbcr, 0, s["y"])
    cv2.mixChannels([cv2.resize(ycbcr, s["half"], interpolation=cv2.INTER_AREA)], [s["uv"]],
                    [1, 0, 2, 1])


def inside_outer_nv12(src, expected):
    """An NV12 frame's Y but the outer pixel, and the Cb and Cr of the 2x2 blocks that hold
    none of it: OpenCV's demosaicing treats the outer pixel its own way."""
    mask = np.zeros(expected.shape, dtype=bool)
    height = expected.shape[0] * 2 // 3
    mask[1:height - 1, 1:-1] = True
    mask[height + 1:-1, 2:-2] = True
    return mask


def isp_output(src, dst, s):
    y = s["y"].get()
    return np.concatenate([y, s["uv"].get().reshape(y.shape[0] // 2, y.shape[1])])


def epsilon_reference(plane, radius, threshold):
    """docs/filters.md's epsilon filter with the replicate border: the mean of the window's
    pixels within `threshold` of the centre, halves rounded up, in integers."""
    height, width = plane.shape
    padded = np.pad(plane.astype(np.int32), radius, mode="edge")
    centre = plane.astype(np.int32)
    total = np.zeros_like(centre)
    count = np.zeros_like(centre)
    for dy in range(2 * radius + 1):
        for dx in range(2 * radius + 1):
            p = padded[dy:dy + height, dx:dx + width]
            near = np.abs(p - centre) <= threshold
            total += np.where(near, p, 0)
            count += near
    return ((2 * total + count) // (2 * count)).astype(np.uint8)


def edges_reference(src, m):
    """The shipped edges (ABGR8888) and denoise-edges (NV12) pipelines from docs/filters.md:
    luma (299 R + 587 G + 114 B + 500) / 1000, or NV12's Y plane; epsilon radius 4,
    threshold 20; Sobel magnitude min(|gx| + |gy|, 255), borders replicated."""
    _, width, height = parse_shape(m["input"])
    if src.ndim == 3:
        rgb = src[:, :, :3].astype(np.int32)
        luma = ((299 * rgb[:, :, 0] + 587 * rgb[:, :, 1] + 114 * rgb[:, :, 2] + 500) // 1000).astype(np.uint8)
    else:
        luma = src[:height]
    smooth = epsilon_reference(luma, 4, 20)
    gx = cv2.Sobel(smooth, cv2.CV_16S, 1, 0, ksize=3, borderType=REPLICATE)
    gy = cv2.Sobel(smooth, cv2.CV_16S, 0, 1, ksize=3, borderType=REPLICATE)
    return np.minimum(np.abs(gx.astype(np.int32)) + np.abs(gy.astype(np.int32)), 255).astype(np.uint8)


def keys_taps(in_size, out_size, a):
    """Bicubic's taps along one axis (docs/filters.md): per output coordinate its 4 input
    indices, replicated at the edges, and Keys' weights of coefficient a, in double."""
    x = (np.arange(out_size) + 0.5) * in_size / out_size
    t = (x - 0.5) - np.floor(x - 0.5)
    first = np.floor(x - 1.5).astype(np.int64)
    indices = np.clip(first[:, None] + np.arange(4)[None, :], 0, in_size - 1)
    d = np.abs(np.stack([1 + t, t, 1 - t, 2 - t], axis=1))
    near = (a + 2) * d ** 3 - (a + 3) * d ** 2 + 1
    far = a * d ** 3 - 5 * a * d ** 2 + 8 * a * d - 4 * a
    return indices, np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def camera_prep_reference(src, m):
    """The shipped camera-prep pipeline from docs/filters.md: NV12 to RGB by BT.709 limited
    range in double, rounded halves up and saturated, alpha 255; then bicubic (a = -0.5,
    replicated border) to the output's size in double, rounded and saturated. The kernels
    are each within 1 of their reference, so the chain is within 2."""
    _, width, height = parse_shape(m["input"])
    _, out_width, out_height = parse_shape(m["output"])
    luma = (src[:height].astype(np.float64) - 16) * 255 / 219
    chroma = src[height:].reshape(height // 2, width // 2, 2).repeat(2, axis=0).repeat(2, axis=1)
    cb = (chroma[:, :, 0].astype(np.float64) - 128) * 255 / 224
    cr = (chroma[:, :, 1].astype(np.float64) - 128) * 255 / 224
    kr, kb = 0.2126, 0.0722
    r = luma + 2 * (1 - kr) * cr
    b = luma + 2 * (1 - kb) * cb
    g = (luma - kr * r - kb * b) / (1 - kr - kb)
    alpha = np.full_like(luma, 255.0)
    rgba = np.clip(np.floor(np.stack([r, g, b, alpha], axis=2) + 0.5), 0, 255)
    rows, row_weights = keys_taps(height, out_height, -0.5)
    columns, column_weights = keys_taps(width, out_width, -0.5)
    passed = np.einsum("oj,ojxc->oxc", row_weights, rgba[rows])
    scaled = np.einsum("oi,yoic->yoc", column_weights, passed[:, columns])
    return np.clip(np.floor(scaled + 0.5), 0, 255).astype(np.uint8)


# Cases OpenCV has no calls for, checked against a reference written here, each with the
# largest difference per byte that docs/filters.md allows.
REFERENCES = {"edges ABGR8888": (edges_reference, 0), "denoise-edges NV12": (edges_reference, 0),
              "camera-prep NV12 to 960x540 ABGR8888": (camera_prep_reference, 2)}


def binomial(n):
    row = [1]
    for _ in range(n - 1):
        row = [a + b for a, b in zip([0] + row, row + [0])]
    return np.array(row, dtype=np.float32)


# Each framecl-bench case: how OpenCV computes the same output from a UMat input into a
# UMat output of the given (width, height), and the largest difference per byte allowed
# (docs/filters.md). `scratch` makes what a call needs besides its input and output, once,
# from the input frame and framecl-bench's measurement; `output` reads OpenCV's result
# where it is not the output UMat; `compared` picks the output pixels where both define
# the same result. `runs` and `warmup` cut the timed calls of a slow case.
def opencv_cases():
    b5 = binomial(5)
    b9 = binomial(9)
    return {
        "copy": dict(
            run=lambda src, dst, s, size: cv2.copyTo(src, None, dst=dst), tolerance=0,
            note="copyTo"),
        "color nv12_to_abgr": dict(
            run=lambda src, dst, s, size: cv2.cvtColor(src, cv2.COLOR_YUV2RGBA_NV12, dst=dst), tolerance=2,
            compared=luma_from_16,
            note="cvtColor COLOR_YUV2RGBA_NV12 (BT.601 limited; OpenCV's fixed-point coefficients); "
                 "pixels of Y < 16 left out: OpenCV clamps Y - 16 at 0 first, framecl does not (docs/filters.md)"),
        "box 3x3": dict(
            run=lambda src, dst, s, size: cv2.blur(src, (3, 3), dst=dst, borderType=REPLICATE), tolerance=1,
            note="blur 3x3 (OpenCV may round exact halves down)"),
        "box 15x15": dict(
            run=lambda src, dst, s, size: cv2.blur(src, (15, 15), dst=dst, borderType=REPLICATE), tolerance=1,
            note="blur 15x15 (OpenCV may round exact halves down)"),
        "box 31x31": dict(
            run=lambda src, dst, s, size: cv2.blur(src, (31, 31), dst=dst, borderType=REPLICATE), tolerance=1,
            note="blur 31x31 (OpenCV may round exact halves down)"),
        "sobel magnitude l1": dict(
            run=sobel_l1, tolerance=0, scratch=lambda src, m: [cv2.UMat(*src.shape, cv2.CV_16SC1) for _ in range(2)]
            + [cv2.UMat(*src.shape, cv2.CV_8UC1) for _ in range(2)],
            note="Sobel dx and dy (CV_16S), convertScaleAbs, add"),
        "bicubic R8 to half size": dict(
            run=lambda src, dst, s, size: cv2.resize(src, size, dst=dst, interpolation=cv2.INTER_CUBIC),
            tolerance=2, note="resize INTER_CUBIC (a = -0.75; OpenCV's fixed-point weights)"),
        "bicubic ABGR8888 to double size": dict(
            run=lambda src, dst, s, size: cv2.resize(src, size, dst=dst, interpolation=cv2.INTER_CUBIC),
            tolerance=2, note="resize INTER_CUBIC (a = -0.75; OpenCV's fixed-point weights)"),
        "convolve 5x5": dict(
            run=lambda src, dst, s, size: cv2.filter2D(src, -1, np.outer(b5, b5) / 256.0, dst=dst, borderType=REPLICATE),
            tolerance=1, note="filter2D, the 5x5 binomial / 256"),
        "convolve 9+9 separable": dict(
            run=lambda src, dst, s, size: cv2.sepFilter2D(src, -1, b9, b9 / 65536.0, dst=dst, borderType=REPLICATE),
            tolerance=1, note="sepFilter2D, the 9-tap binomial pair / 65536"),
        "demosaic bilinear SRGGB10": dict(
            run=lambda src, dst, s, size: cv2.cvtColor(src, cv2.COLOR_BayerBG2RGB, dst=s), scratch=demosaic_scratch,
            output=demosaic_output(10), compared=inside_outer_pixel, tolerance=0,
            note="cvtColor COLOR_BayerBG2RGB (OpenCV's name for RGGB) on 16 bits; the outer pixel left out"),
        "camera ISP SRGGB10P to NV12, statistics": dict(
            input=isp_words, check=isp_check, baseline=isp_baseline, run=isp_run, scratch=isp_scratch,
            output=isp_output, compared=inside_outer_nv12, tolerance=1,
            note="OpenCV's chain from the unpacked words (it reads no RAW10): " + " ".join(isp_run.__doc__.split())
                 + " Bilinear: OpenCV has no Malvar-He-Cutler. Its rounding differs from framecl's integers by 1 "
                   "at most; the outer pixel left out"),
        "blockmatch b16 r8 ssd": dict(
            run=blockmatch_run, scratch=blockmatch_scratch(16, 8), output=blockmatch_output, tolerance=0,
            runs=3, warmup=1,
            note="copyMakeBorder BORDER_REPLICATE by 8, then matchTemplate TM_SQDIFF per 16x16 block (one call "
                 "each: OpenCV has no batched form; its speed is not the target), median of 3 frames after 1; "
                 "the argmin and tie rule on the host, untimed"),
    }


def time_calls(call, runs, warmup=3):
    """Median wall time of `call`, in ns, each call ended by cv2.ocl.finish()."""
    for _ in range(warmup):
        call()
        cv2.ocl.finish()
    times = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        call()
        cv2.ocl.finish()
        times.append(time.perf_counter_ns() - start)
    return statistics.median_low(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench_json", help="framecl-bench --json output, run with --dump")
    parser.add_argument("--runs", type=int, default=20, help="timed OpenCV calls per case")
    parser.add_argument("--markdown", help="write the table here as well as to stdout")
    parser.add_argument("--check-only", action="store_true", help="check the outputs; time nothing")
    args = parser.parse_args()

    with open(args.bench_json) as f:
        bench = json.load(f)
    cv2.ocl.setUseOpenCL(True)
    device = cv2.ocl.Device.getDefault()
    opencv_device = f"{device.name()} ({device.vendorName()}, {device.OpenCLVersion()})" if cv2.ocl.haveOpenCL() \
        else "no OpenCL device: OpenCV runs on the CPU"
    cases = opencv_cases()

    rows = []
    wrong = 0
    for m in bench["measurements"]:
        if "output_file" not in m:
            continue
        # A pipeline case runs unfused and fused: each row says which.
        work = m["filter"] + (f" ({m['variant']})" if "stages" in m else "")
        case = cases.get(m["filter"])
        if case is None:
            verdict = "–"
            if m["filter"] in REFERENCES:
                src = load_frame(m["input_file"], m["input"])
                got = load_frame(m["output_file"], m["output"])
                reference, tolerance = REFERENCES[m["filter"]]
                differences = np.abs(got.astype(np.int32) - reference(src, m).astype(np.int32))
                differing = int((differences > tolerance).sum())
                wrong += 1 if differing else 0
                verdict = ("equal to the reference" if differences.max() == 0 else
                           f"within {int(differences.max())} of the reference") if differing == 0 else \
                    f"{differing} of {got.size} bytes differ from the reference by more than {tolerance} — WRONG"
            rows.append(f"| {work} | {m['input']} | {m['median_ns'] / 1e6:.3f} | "
                        f"{m['wall_median_ns'] / 1e6:.3f} | – | – | {verdict} | OpenCV has no equivalent |")
            continue
        src = load_frame(m["input_file"], m["input"])
        expected = load_frame(m["output_file"], m["output"])
        checked = ""  # framecl's output against a CPU reference, where the case has one
        if "check" in case:
            differs, checked = case["check"](src, expected, m)
            wrong += 1 if differs else 0
            expected = case["baseline"](src, m)  # what OpenCV's calls compute
        usrc = cv2.UMat(case["input"](src, m) if "input" in case else src)
        udst = cv2.UMat(expected.shape[0], expected.shape[1], cv2.CV_8UC1 if expected.ndim == 2 else cv2.CV_8UC4) \
            if expected.dtype == np.uint8 else None
        scratch = case["scratch"](src, m) if "scratch" in case else None
        size = (expected.shape[1], expected.shape[0])
        call = lambda: case["run"](usrc, udst, scratch, size)
        call()
        cv2.ocl.finish()
        got = case["output"](src, udst, scratch) if "output" in case else udst.get()
        difference = np.abs(got.astype(np.int32) - expected.astype(np.int32))
        if "compared" in case:  # the pixels where the two define the same result
            difference = difference[case["compared"](src, expected)]
        largest = int(difference.max())
        differing = int((difference > 0).sum())
        ok = largest <= case["tolerance"]
        wrong += 0 if ok else 1
        verdict = checked + ("equal" if differing == 0 else
                   f"within {largest}: {differing} of {difference.size} bytes differ "
                   f"({100 * differing / difference.size:.3f}%)") + ("" if ok else f" — OVER ±{case['tolerance']}")
        if args.check_only:
            rows.append(f"| {work} | {m['input']} | – | – | – | – | {verdict} | {case['note']} |")
            continue
        opencv_ns = time_calls(call, case.get("runs", args.runs), case.get("warmup", 3))
        rows.append(f"| {work} | {m['input']} | {m['median_ns'] / 1e6:.3f} | "
                    f"{m['wall_median_ns'] / 1e6:.3f} | {opencv_ns / 1e6:.3f} | "
                    f"{opencv_ns / m['wall_median_ns']:.1f}x | {verdict} | {case['note']} |")

    text = (f"framecl: {bench['device']} (`{bench['command']}`). OpenCV {cv2.__version__} T-API on "
            f"{opencv_device}, median of {args.runs} calls after 3, wall time each ending with "
            f"cv2.ocl.finish(). framecl's wall time is measured the same way (enqueue to clFinish), "
            f"next to its GPU time from profiling events; the ratio is OpenCV's wall time over framecl's.\n\n"
            "| work | input | framecl GPU ms | framecl wall ms | OpenCV wall ms | OpenCV / framecl | "
            "outputs (framecl vs OpenCV) | OpenCV's calls |\n"
            "| --- | --- | ---: | ---: | ---: | ---: | --- | --- |\n" + "\n".join(rows) + "\n")
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    if wrong:
        print(f"compare_opencv: {wrong} case(s) differ from OpenCV past their tolerance", file=sys.stderr)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
