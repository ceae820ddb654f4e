"""The camera ISP's stages on the CPU, in numpy, written from docs/filters.md: RGGB only,
as framecl-bench's pipeline case runs them (SRGGB10P in, NV12 out). Every stage is in
integers as the document defines it, so framecl's output must equal chain()'s exactly.
compare_opencv.py checks framecl-bench's dump of that case with it."""

import math

import numpy as np

# The colour of each position of an RGGB 2x2 block: 0 R, 1 G, 2 B.
RGGB = np.array([[0, 1], [1, 2]])


def lround(x):
    """C's lround: to the nearest integer, halves away from zero."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def unpack_raw10(packed, width, height):
    """MIPI CSI-2 RAW10 rows (4 samples in 5 bytes) to an HxW array of samples."""
    groups = packed.reshape(height, width // 4, 5).astype(np.uint16)
    low = groups[:, :, 4:5] >> (2 * np.arange(4, dtype=np.uint16)) & 3
    return ((groups[:, :, :4] << 2) | low).reshape(height, width)


def colours(height, width):
    return np.tile(RGGB, (height // 2, width // 2))


def levels(raw, max_code, black_level, gains):
    """`bayer`'s black level and gains: min(M, (max(v - black, 0) f_c + 2^13) >> 14)."""
    stretch = max_code / (max_code - float(black_level))
    factors = np.array([lround(gain * stretch * float(1 << 14)) for gain in gains], dtype=np.int64)
    above = np.maximum(raw.astype(np.int64) - black_level, 0)
    return np.minimum(max_code, (above * factors[colours(*raw.shape)] + (1 << 13)) >> 14)


def statistics(raw, max_code, black_level, saturation, bits):
    """`bayer`'s statistics of the samples before the gains, as framecl/statistics.h lays
    them out: sums[12][16][3], counts[12][16][3], histogram[256], all uint32."""
    height, width = raw.shape
    blocks_y, blocks_x = height // 2, width // 2
    zone_x = 16 * np.arange(blocks_x) // blocks_x
    zone_y = 12 * np.arange(blocks_y) // blocks_y
    zone = (zone_y[:, None] * 16 + zone_x[None, :]).repeat(2, axis=0).repeat(2, axis=1)
    above = np.maximum(raw.astype(np.int64) - black_level, 0)
    counted = raw < min(saturation, max_code)
    index = (zone * 3 + colours(height, width))[counted]
    sums = np.bincount(index, weights=above[counted], minlength=12 * 16 * 3).astype(np.uint64)
    counts = np.bincount(index, minlength=12 * 16 * 3)
    luma = (77 * above[0::2, 0::2] + 75 * (above[0::2, 1::2] + above[1::2, 0::2]) + 29 * above[1::2, 1::2]) >> bits
    histogram = np.bincount(luma.ravel(), minlength=256)
    return np.concatenate([sums, counts, histogram]).astype(np.uint32)


def demosaic(samples, bits, method):
    """`demosaic` of RGGB samples to ABGR16161616 (R, G, B, A words per pixel): `mhc` or
    `bilinear`, reflect101 outside the plane, each channel widened to 16 bits."""
    height, width = samples.shape
    p = np.pad(samples.astype(np.int64), 2, mode="reflect")  # numpy's reflect is reflect101

    def at(dx, dy):
        return p[2 + dy:2 + dy + height, 2 + dx:2 + dx + width]

    c = at(0, 0)
    n, s, w, e = at(0, -1), at(0, 1), at(-1, 0), at(1, 0)
    n2, s2, w2, e2 = at(0, -2), at(0, 2), at(-2, 0), at(2, 0)
    d = at(-1, -1) + at(1, -1) + at(-1, 1) + at(1, 1)
    if method == "mhc":
        g_at_rb = (8 * c + 4 * (n + s + w + e) - 2 * (n2 + s2 + w2 + e2) + 8) >> 4
        other_at_rb = (12 * c + 4 * d - 3 * (n2 + s2 + w2 + e2) + 8) >> 4
        horizontal_at_g = (10 * c + 8 * (w + e) - 2 * d - 2 * (w2 + e2) + (n2 + s2) + 8) >> 4
        vertical_at_g = (10 * c + 8 * (n + s) - 2 * d - 2 * (n2 + s2) + (w2 + e2) + 8) >> 4
    else:
        g_at_rb = (n + s + w + e + 2) >> 2
        other_at_rb = (d + 2) >> 2
        horizontal_at_g = (w + e + 1) >> 1
        vertical_at_g = (n + s + 1) >> 1
    max_code = (1 << bits) - 1
    g_at_rb, other_at_rb, horizontal_at_g, vertical_at_g = (
        np.clip(v, 0, max_code) for v in (g_at_rb, other_at_rb, horizontal_at_g, vertical_at_g))
    colour = colours(height, width)
    red_row = (np.arange(height) % 2 == 0)[:, None]
    r = np.select([colour == 0, colour == 2, red_row], [c, other_at_rb, horizontal_at_g], vertical_at_g)
    b = np.select([colour == 2, colour == 0, red_row], [c, other_at_rb, vertical_at_g], horizontal_at_g)
    g = np.where(colour == 1, c, g_at_rb)
    rgb = np.stack([r, g, b], axis=2)
    wide = (rgb << (16 - bits)) | (rgb >> (2 * bits - 16))
    return np.concatenate([wide, np.full((height, width, 1), 65535, dtype=np.int64)], axis=2)


def ccm(abgr, matrix, offsets=(0, 0, 0)):
    """`ccm`: weights and offsets in units of 2^-12, (sum + 2^11) >> 12 clamped; alpha copied."""
    weights = np.array([lround(v * 4096) for v in matrix], dtype=np.int64).reshape(3, 3)
    shifts = np.array([lround(v * 4096) for v in offsets], dtype=np.int64)
    rgb = abgr[:, :, :3] @ weights.T + shifts
    out = np.clip((rgb + (1 << 11)) >> 12, 0, 65535)
    return np.concatenate([out, abgr[:, :, 3:4]], axis=2)


def srgb(linear):
    return 12.92 * linear if linear <= 0.0031308 else 1.055 * math.pow(linear, 1.0 / 2.4) - 0.055


def tone(abgr):
    """`tone` with the sRGB curve's 4096-point table: ABGR16161616 to ABGR8888 bytes."""
    points = 4096
    table = np.array([lround(srgb(i / (points - 1)) * 65535.0) for i in range(points)], dtype=np.int64)
    v = abgr[:, :, :3]
    t = v * (points - 1)
    i, f = t // 65535, t % 65535
    w = (table[i] * (65535 - f) + table[np.minimum(i + 1, points - 1)] * f + 32767) // 65535
    codes = (255 * w + 32767) // 65535
    alpha = (255 * abgr[:, :, 3:4] + 32767) // 65535
    return np.concatenate([codes, alpha], axis=2).astype(np.uint8)


def abgr_to_nv12(abgr, matrix="bt709", full_range=False):
    """`color op = "abgr_to_nv12"`: Y per pixel, Cb and Cr per 2x2 block from its sums."""
    kr, kb = (0.2126, 0.0722) if matrix == "bt709" else (0.299, 0.114)
    kg = 1.0 - kr - kb
    y_scale = 1.0 if full_range else 219.0 / 255.0
    c_scale = 1.0 if full_range else 224.0 / 255.0

    def weights(*values):
        return np.array([lround(v * 65536.0) for v in values], dtype=np.int64)

    y_w = weights(kr * y_scale, kg * y_scale, kb * y_scale)
    u_w = weights(-kr / (2 * (1 - kb)) * c_scale, -kg / (2 * (1 - kb)) * c_scale, 0.5 * c_scale)
    v_w = weights(0.5 * c_scale, -kg / (2 * (1 - kr)) * c_scale, -kb / (2 * (1 - kr)) * c_scale)
    rgb = abgr[:, :, :3].astype(np.int64)
    y_offset = 0 if full_range else 16
    luma = np.clip((rgb @ y_w + (y_offset << 16) + (1 << 15)) >> 16, 0, 255)
    sums = rgb[0::2, 0::2] + rgb[0::2, 1::2] + rgb[1::2, 0::2] + rgb[1::2, 1::2]
    cb = np.clip((sums @ u_w + (128 << 18) + (1 << 17)) >> 18, 0, 255)
    cr = np.clip((sums @ v_w + (128 << 18) + (1 << 17)) >> 18, 0, 255)
    chroma = np.stack([cb, cr], axis=2).reshape(abgr.shape[0] // 2, abgr.shape[1])
    return np.concatenate([luma, chroma]).astype(np.uint8)


def chain(packed, width, height, black_level, gains, matrix, method="mhc"):
    """The camera-isp pipeline of framecl-bench's case on SRGGB10P bytes: NV12 (BT.709,
    limited range) as an (3H/2)xW array, and the statistics (saturation at M)."""
    raw = unpack_raw10(packed, width, height)
    stats = statistics(raw, 1023, black_level, 4095, 10)
    rgb = demosaic(levels(raw, 1023, black_level, gains), 10, method)
    return abgr_to_nv12(tone(ccm(rgb, matrix))), stats
