"""Random-number generators and hash functions on Python ints masked to 64 bits.

Results are Python ints (final states, checksums); intermediate products exceed 64
bits in CPython before the mask brings them back.
"""

from __future__ import annotations

import numpy as np

from common import Case, rng

MASK64 = 0xFFFF_FFFF_FFFF_FFFF


def lcg64(n, seed):
    """Knuth's MMIX LCG; returns the final state and an xor-fold of the high halves."""
    s = seed
    fold = 0
    for _ in range(n):
        s = (s * 6364136223846793005 + 1442695040888963407) & 0xFFFFFFFFFFFFFFFF
        fold ^= s >> 32
    return s, fold


def pcg32_fill(out, state, inc):
    """PCG32 (XSH RR) filling a uint32 array; returns the final state."""
    inc = (inc << 1 | 1) & 0xFFFF_FFFF_FFFF_FFFF
    for i in range(len(out)):
        old = state
        state = (old * 6364136223846793005 + inc) & 0xFFFF_FFFF_FFFF_FFFF
        xorshifted = (((old >> 18) ^ old) >> 27) & 0xFFFFFFFF
        rot = old >> 59
        out[i] = ((xorshifted >> rot) | (xorshifted << ((-rot) & 31))) & 0xFFFFFFFF
    return state


def xorshift64_sum(n, seed):
    """Marsaglia's xorshift64 (13, 7, 17); returns (state, sum of outputs mod 2**64,
    count of outputs with the top bit set)."""
    x = seed
    total = 0
    high = 0
    i = 0
    while i < n:
        x ^= (x << 13) & MASK64
        x ^= x >> 7
        x ^= (x << 17) & MASK64
        total = (total + x) & MASK64
        if x >> 63:
            high += 1
        i += 1
    return x, total, high


def splitmix64_uniform(out, seed):
    """SplitMix64 driving uniform doubles in [0, 1) (top 53 bits) into a float64
    array; returns the final state."""
    s = seed
    for i in range(out.shape[0]):
        s = (s + 0x9E3779B97F4A7C15) & MASK64
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        z = z ^ (z >> 31)
        out[i] = (z >> 11) * 2.0**-53
    return s


def fnv1a_64(data):
    """FNV-1a 64-bit hash of a uint8 buffer."""
    h = 0xCBF29CE484222325
    for i in range(len(data)):
        h ^= int(data[i])
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def fnv1a_rows(table, hashes):
    """FNV-1a 64-bit over the int32 values of each row of a table (each value as 4
    little-endian bytes), for a hash join; hashes go into an int64 array as signed
    values; returns the xor of all hashes."""
    rows, cols = table.shape
    acc = 0
    for r in range(rows):
        h = 0xCBF29CE484222325
        for c in range(cols):
            v = int(table[r, c]) & 0xFFFFFFFF
            for k in range(4):
                h ^= (v >> (8 * k)) & 0xFF
                h = (h * 0x100000001B3) & MASK64
        acc ^= h
        hashes[r] = h - (1 << 64) if h >= 1 << 63 else h
    return acc


def fmix64_all(keys):
    """MurmurHash3's 64-bit finaliser over int64 keys (taken as unsigned); returns the
    sum mod 2**64 and the number of hashes in the lower half."""
    acc = 0
    low = 0
    for i in range(keys.shape[0]):
        k = int(keys[i]) & MASK64
        k ^= k >> 33
        k = (k * 0xFF51AFD7ED558CCD) & MASK64
        k ^= k >> 33
        k = (k * 0xC4CEB9FE1A85EC53) & MASK64
        k ^= k >> 33
        acc = (acc + k) & MASK64
        if k < 0x8000000000000000:
            low += 1
    return acc, low


def hash_bucket_counts(keys, nbuckets):
    """Bucket occupancy of a multiplicative (Fibonacci) hash of int64 keys: how even is
    it? Returns (counts, the largest bucket)."""
    counts = np.zeros(nbuckets, dtype=np.int64)
    shift = 64 - (nbuckets.bit_length() - 1)
    for i in range(len(keys)):
        h = ((int(keys[i]) & MASK64) * 11400714819323198485) & MASK64
        counts[h >> shift] += 1
    biggest = 0
    for b in range(nbuckets):
        biggest = max(biggest, counts[b])
    return counts, biggest


# -- inputs --------------------------------------------------------------------------


def _bytes(seed, n):
    return rng(seed).integers(0, 256, n).astype(np.uint8)


CASES = [
    Case("lcg64", lcg64, lambda: (300000, 20240601), "rng_hash"),
    Case("pcg32_fill", pcg32_fill, lambda: (np.zeros(150000, dtype=np.uint32), 0x853C49E6748FEA9B, 0xDA3E39CB94B95BDB), "rng_hash"),
    Case("xorshift64_sum", xorshift64_sum, lambda: (200000, 88172645463325252), "rng_hash"),
    Case("splitmix64_uniform", splitmix64_uniform, lambda: (np.zeros(120000), 1234567), "rng_hash"),
    Case("fnv1a_64", fnv1a_64, lambda: (_bytes(901, 300000),), "rng_hash"),
    Case("fnv1a_rows", fnv1a_rows, lambda: (rng(902).integers(-(2**31), 2**31, (4000, 6)).astype(np.int32), np.zeros(4000, dtype=np.int64)), "rng_hash"),
    Case("fmix64_all", fmix64_all, lambda: (rng(903).integers(-(2**63), 2**63 - 1, 150000, dtype=np.int64),), "rng_hash"),
    Case("hash_bucket_counts", hash_bucket_counts, lambda: (rng(904).integers(0, 2**62, 200000, dtype=np.int64), 1024), "rng_hash"),
]
