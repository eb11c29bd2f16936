"""Image-processing kernels: uint8 and float images, 2-D loops."""

from __future__ import annotations

import math

import numpy as np

from common import Case, rng


def convolve3x3(img, kernel, out):
    """'Valid'-style 3x3 correlation of a float64 image into `out` (border left 0)."""
    h, w = img.shape
    for i in range(1, h - 1):
        for j in range(1, w - 1):
            acc = 0.0
            for di in range(3):
                for dj in range(3):
                    acc += kernel[di, dj] * img[i + di - 1, j + dj - 1]
            out[i, j] = acc
    return out


def gaussian_blur_f32(img):
    """Separable [1 2 1]/4 blur of a float32 image with clamped edges; returns a new
    float32 image (all arithmetic in float32, as NumPy does it)."""
    h = img.shape[0]
    w = img.shape[1]
    tmp = np.empty_like(img)
    out = np.empty_like(img)
    for i in range(h):
        for j in range(w):
            jl = j - 1 if j > 0 else 0
            jr = j + 1 if j < w - 1 else w - 1
            tmp[i, j] = 0.25 * img[i, jl] + 0.5 * img[i, j] + 0.25 * img[i, jr]
    for i in range(h):
        iu = max(i - 1, 0)
        id_ = min(i + 1, h - 1)
        for j in range(w):
            out[i, j] = 0.25 * tmp[iu, j] + 0.5 * tmp[i, j] + 0.25 * tmp[id_, j]
    return out


def histogram_u8(img):
    """256-bin histogram of a uint8 image; returns (counts, mean intensity)."""
    hist = np.zeros(256, dtype=np.int64)
    rows, cols = img.shape
    for r in range(rows):
        for c in range(cols):
            hist[img[r, c]] += 1
    total = 0
    for v in range(256):
        total += v * hist[v]
    return hist, total / (rows * cols)


def otsu_many(images):
    """Otsu thresholds of a stack of uint8 images (histogram, then threshold)."""
    n = images.shape[0]
    h = images.shape[1]
    w = images.shape[2]
    out = np.zeros(n, dtype=np.int64)
    hist = np.zeros(256, dtype=np.int64)
    for k in range(n):
        for v in range(256):
            hist[v] = 0
        for i in range(h):
            for j in range(w):
                hist[images[k, i, j]] += 1
        total = h * w
        sum_all = 0.0
        for v in range(256):
            sum_all += v * hist[v]
        best_t = 0
        best_var = -1.0
        w0 = 0
        sum0 = 0.0
        for t in range(256):
            w0 += hist[t]
            if w0 == 0:
                continue
            w1 = total - w0
            if w1 == 0:
                break
            sum0 += t * hist[t]
            m0 = sum0 / w0
            m1 = (sum_all - sum0) / w1
            var = w0 * w1 * (m0 - m1) ** 2
            if var > best_var:
                best_var = var
                best_t = t
        out[k] = best_t
    return out


def binary_erosion(mask):
    """3x3 binary erosion of a 0/1 uint8 mask (outside the image counts as 0)."""
    h, w = mask.shape
    out = np.zeros((h, w), dtype=np.uint8)
    for i in range(1, h - 1):
        for j in range(1, w - 1):
            keep = 1
            for di in range(-1, 2):
                for dj in range(-1, 2):
                    if mask[i + di, j + dj] == 0:
                        keep = 0
                        break
                if keep == 0:
                    break
            out[i, j] = keep
    return out


def bilinear_resize(img, new_h, new_w):
    """Bilinear resampling of a float32 image (align-corners convention)."""
    h, w = img.shape
    out = np.zeros((new_h, new_w), dtype=np.float32)
    sy = (h - 1) / (new_h - 1)
    sx = (w - 1) / (new_w - 1)
    for i in range(new_h):
        y = i * sy
        y0 = int(y)
        if y0 >= h - 1:
            y0 = h - 2
        fy = y - y0
        for j in range(new_w):
            x = j * sx
            x0 = int(math.floor(x))
            if x0 >= w - 1:
                x0 = w - 2
            fx = x - x0
            top = img[y0, x0] * (1.0 - fx) + img[y0, x0 + 1] * fx
            bot = img[y0 + 1, x0] * (1.0 - fx) + img[y0 + 1, x0 + 1] * fx
            out[i, j] = top * (1.0 - fy) + bot * fy
    return out


def sobel_magnitude(img):
    """Sobel gradient magnitude of a uint8 image, clipped into a uint8 image."""
    h = img.shape[0]
    w = img.shape[1]
    out = np.zeros((h, w), dtype=np.uint8)
    for y in range(1, h - 1):
        for x in range(1, w - 1):
            p00 = int(img[y - 1, x - 1])
            p01 = int(img[y - 1, x])
            p02 = int(img[y - 1, x + 1])
            p10 = int(img[y, x - 1])
            p12 = int(img[y, x + 1])
            p20 = int(img[y + 1, x - 1])
            p21 = int(img[y + 1, x])
            p22 = int(img[y + 1, x + 1])
            gx = (p02 + 2 * p12 + p22) - (p00 + 2 * p10 + p20)
            gy = (p20 + 2 * p21 + p22) - (p00 + 2 * p01 + p02)
            mag = math.sqrt(gx * gx + gy * gy)
            out[y, x] = min(255, int(mag))
    return out


def rgb_to_gray(rgb, gray):
    """ITU-R 601 luma of an (h, w, 3) uint8 image into a uint8 image, rounded."""
    h, w, _ = rgb.shape
    for i in range(h):
        for j in range(w):
            y = 0.299 * rgb[i, j, 0] + 0.587 * rgb[i, j, 1] + 0.114 * rgb[i, j, 2]
            gray[i, j] = int(y + 0.5)
    return gray


# -- inputs --------------------------------------------------------------------------


def _smooth_image(seed, h, w):
    g = rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = 120 + 80 * np.sin(x / 17.0) * np.cos(y / 23.0)
    return np.clip(base + g.normal(0, 20, (h, w)), 0, 255)


def _conv_args():
    img = _smooth_image(201, 128, 128)
    kernel = np.array([[0.0625, 0.125, 0.0625], [0.125, 0.25, 0.125], [0.0625, 0.125, 0.0625]])
    kernel[1, 1] += 0.5  # a sharpened blur
    return img, kernel, np.zeros_like(img)


def _u8_image(seed, h, w):
    return _smooth_image(seed, h, w).astype(np.uint8)


def _erosion_args():
    img = _u8_image(203, 200, 200)
    return ((img > 110).astype(np.uint8),)


def _resize_args():
    img = _smooth_image(204, 120, 160).astype(np.float32) / np.float32(255.0)
    return img, 200, 260


def _otsu_many_args():
    return (np.stack([_u8_image(210 + k, 64, 64) for k in range(24)]),)


def _gray_args():
    g = rng(206)
    rgb = g.integers(0, 256, (160, 200, 3), dtype=np.uint8)
    return rgb, np.zeros((160, 200), dtype=np.uint8)


CASES = [
    Case("convolve3x3", convolve3x3, _conv_args, "image"),
    Case("gaussian_blur_f32", gaussian_blur_f32, lambda: (_smooth_image(205, 200, 240).astype(np.float32),), "image"),
    Case("histogram_u8", histogram_u8, lambda: (_u8_image(202, 400, 400),), "image"),
    Case("otsu_many", otsu_many, _otsu_many_args, "image"),
    Case("binary_erosion", binary_erosion, _erosion_args, "image"),
    Case("bilinear_resize", bilinear_resize, _resize_args, "image"),
    Case("sobel_magnitude", sobel_magnitude, lambda: (_u8_image(207, 200, 200),), "image"),
    Case("rgb_to_gray", rgb_to_gray, _gray_args, "image"),
]
