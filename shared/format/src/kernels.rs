//! Numeric kernels of the encoder: symmetric int8 quantization and the int8 × int8 dot
//! products that carry almost all of a forward pass's work.
//!
//! Three implementations of the same arithmetic (results are bit-identical, integer sums):
//! - a portable one written so that LLVM auto-vectorises it (SSE2 on x86_64, NEON on
//!   aarch64, plain scalar elsewhere);
//! - on x86_64, the same code compiled a second time with AVX2 enabled and picked at run
//!   time when the CPU has it (build-time embedding of documents);
//! - on wasm32 built with `-C target-feature=+simd128`, explicit `core::arch::wasm32`
//!   code: sign-extend i8x16 to two i16x8 and `i32x4.dot_i16x8_s` (query time at the edge).

/// Quantizes `src` symmetrically to int8 in `dst` and returns the scale, so that
/// `src[i] ≈ dst[i] as f32 * scale`. The scale is `max|src| / 127`; an all-zero (or
/// non-finite) row gets scale 0 and zeros.
pub fn quantize_row(src: &[f32], dst: &mut [i8]) -> f32 {
    let max = src.iter().fold(0f32, |m, v| m.max(v.abs()));
    if max == 0.0 || !max.is_finite() {
        dst.iter_mut().for_each(|d| *d = 0);
        return 0.0;
    }
    let inv = 127.0 / max;
    for (d, s) in dst.iter_mut().zip(src) {
        let v = s * inv;
        // Round half away from zero; `as` saturates, and |v| <= 127 anyway.
        *d = (v + 0.5f32.copysign(v)) as i8;
    }
    max / 127.0
}

/// Quantizes `src` symmetrically to integers in `-qmax..=qmax` (`qmax` ≤ 32767) stored as
/// i16 in `dst`, and returns the scale (`src[i] ≈ dst[i] as f32 * scale`).
pub fn quantize_row_i16(src: &[f32], dst: &mut [i16], qmax: i16) -> f32 {
    let max = src.iter().fold(0f32, |m, v| m.max(v.abs()));
    if max == 0.0 || !max.is_finite() {
        dst.iter_mut().for_each(|d| *d = 0);
        return 0.0;
    }
    let q = qmax as f32;
    let inv = q / max;
    for (d, s) in dst.iter_mut().zip(src) {
        let v = s * inv;
        *d = (v + 0.5f32.copysign(v)) as i16;
    }
    max / q
}

/// The largest activation magnitude for [`dot4_i16_i8`] over rows of length `k` such that
/// no i32 sum can overflow: `k · qmax · 127 < 2³¹`.
pub fn i16_activation_limit(k: usize) -> i16 {
    (i32::MAX as usize / (127 * k.max(1))).min(i16::MAX as usize) as i16
}

/// [`dot4_i16_i8`] for two rows `x0`, `x1` at once (same length): each weight vector loaded
/// and widened once serves both tokens. Returns `[dots of x0, dots of x1]`.
#[inline]
pub fn dot4x2_i16_i8(x0: &[i16], x1: &[i16], w: [&[i8]; 4]) -> [[i32; 4]; 2] {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        simd128::dot4x2_i16(x0, x1, w)
    }
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above; the check is cached).
            return unsafe { avx2::dot4x2_i16(x0, x1, w) };
        }
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        [
            portable::dot4_i16(x0, w),
            portable::dot4_i16(&x1[..x0.len()], w),
        ]
    }
}

/// Dot products of one i16 row `x` (from [`quantize_row_i16`] with
/// [`i16_activation_limit`]) with four int8 rows `w[0..4]` (each at least as long as `x`).
#[inline]
pub fn dot4_i16_i8(x: &[i16], w: [&[i8]; 4]) -> [i32; 4] {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        simd128::dot4_i16(x, w)
    }
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above; the check is cached).
            return unsafe { avx2::dot4_i16(x, w) };
        }
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        portable::dot4_i16(x, w)
    }
}

/// Dot products of one int8 row `x` with four int8 rows `w[0..4]` (each at least as long
/// as `x`), as exact i32 sums.
#[inline]
pub fn dot4_i8(x: &[i8], w: [&[i8]; 4]) -> [i32; 4] {
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        simd128::dot4(x, w)
    }
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above; the check is cached).
            return unsafe { avx2::dot4(x, w) };
        }
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        portable::dot4(x, w)
    }
}

/// Dot product of two int8 rows (the shorter length counts), as an exact i32 sum.
#[inline]
pub fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    portable::dot(a, b)
}

/// f32 dot product, written to auto-vectorise (eight independent partial sums).
#[inline]
pub fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; 8];
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        s += x * y;
    }
    s
}

/// e^x for x ≤ 0 (softmax after subtracting the max; GELU's erf), branch-free so that loops
/// over it vectorise, unlike calls to libm. Range reduction x = k·ln2 + r with |r| ≤ ln2/2
/// (k rounded with the 1.5·2²³ trick), e^r by its degree-6 Taylor polynomial (truncation
/// error < 1.2e-7 relative, about one f32 ulp), and 2^k put straight into the exponent bits.
/// Inputs below −87 give ~0 (as e^-87 ≈ 1.6e-38 is).
#[inline(always)]
pub fn exp_nonpositive(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    const LN2_HI: f32 = 0.693_145_75; // ln 2 split so that k·LN2_HI is exact
    const LN2_LO: f32 = 1.428_606_8e-6;
    const ROUND: f32 = 12_582_912.0; // 1.5 · 2^23
    let x = x.clamp(-87.0, 0.0);
    let k = (x * LOG2E + ROUND) - ROUND;
    let r = (x - k * LN2_HI) - k * LN2_LO;
    let p = 1.0
        + r * (1.0
            + r * (1.0 / 2.0
                + r * (1.0 / 6.0 + r * (1.0 / 24.0 + r * (1.0 / 120.0 + r * (1.0 / 720.0))))));
    p * f32::from_bits(((k as i32 + 127) as u32) << 23)
}

/// erf(x), Abramowitz & Stegun formula 7.1.26 (absolute error ≤ 1.5e-7 in exact arithmetic,
/// < 1e-6 as evaluated in f32: tested against libm), with the vectorisable
/// [`exp_nonpositive`]. Used for BERT's exact-form GELU.
#[inline(always)]
pub fn erf(x: f32) -> f32 {
    const P: f32 = 0.327_591_1;
    const A: [f32; 5] = [
        0.254_829_6,
        -0.284_496_74,
        1.421_413_7,
        -1.453_152,
        1.061_405_4,
    ];
    let ax = x.abs();
    let t = 1.0 / (1.0 + P * ax);
    let poly = t * (A[0] + t * (A[1] + t * (A[2] + t * (A[3] + t * A[4]))));
    let y = 1.0 - poly * exp_nonpositive(-ax * ax);
    y.copysign(x)
}

/// `y[i] += a * x[i]`, auto-vectorised.
#[inline]
pub fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}

/// Runs `f` with the best vector code this CPU supports. On x86_64 with AVX2 and FMA the
/// closure body is compiled a second time with both enabled (see [`with_best_isa`]'s
/// callers: they pass generic, `#[inline(always)]` code).
#[inline]
pub fn with_best_isa<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(all(target_arch = "x86_64", not(target_feature = "avx2")))]
    {
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU was just checked to support AVX2 and FMA.
            return unsafe { run_avx2(f) };
        }
    }
    f()
}

#[cfg(all(target_arch = "x86_64", not(target_feature = "avx2")))]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

pub(crate) mod portable {
    #[cfg_attr(
        all(target_arch = "wasm32", target_feature = "simd128"),
        allow(dead_code)
    )]
    /// See [`super::dot4_i8`]. Plain loops over equal-length slices: LLVM turns the
    /// widening multiply-add into `pmaddwd` / `vpmaddwd` on x86_64.
    #[inline(always)]
    pub fn dot4(x: &[i8], w: [&[i8]; 4]) -> [i32; 4] {
        let n = x.len();
        let (w0, w1, w2, w3) = (&w[0][..n], &w[1][..n], &w[2][..n], &w[3][..n]);
        let mut acc = [0i32; 4];
        for i in 0..n {
            let xi = x[i] as i16;
            // i8 * i8 fits in i16 except (-128)², which quantize_row never produces.
            acc[0] += (xi * w0[i] as i16) as i32;
            acc[1] += (xi * w1[i] as i16) as i32;
            acc[2] += (xi * w2[i] as i16) as i32;
            acc[3] += (xi * w3[i] as i16) as i32;
        }
        acc
    }

    #[inline(always)]
    #[cfg_attr(
        all(target_arch = "wasm32", target_feature = "simd128"),
        allow(dead_code)
    )]
    pub fn dot4_i16(x: &[i16], w: [&[i8]; 4]) -> [i32; 4] {
        let n = x.len();
        let (w0, w1, w2, w3) = (&w[0][..n], &w[1][..n], &w[2][..n], &w[3][..n]);
        let mut acc = [0i32; 4];
        for i in 0..n {
            let xi = x[i] as i32;
            acc[0] += xi * w0[i] as i32;
            acc[1] += xi * w1[i] as i32;
            acc[2] += xi * w2[i] as i32;
            acc[3] += xi * w3[i] as i32;
        }
        acc
    }

    #[inline(always)]
    pub fn dot(a: &[i8], b: &[i8]) -> i32 {
        let n = a.len().min(b.len());
        let (a, b) = (&a[..n], &b[..n]);
        let mut acc = 0i32;
        for i in 0..n {
            acc += (a[i] as i16 * b[i] as i16) as i32;
        }
        acc
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    use std::arch::x86_64::*;

    #[inline]
    #[target_feature(enable = "avx2")]
    fn hsum(v: __m256i) -> i32 {
        let s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
        _mm_cvtsi128_si32(s)
    }

    /// See [`super::dot4_i8`]: 16 int8 lanes at a time, sign-extended to i16x16 and
    /// multiplied-and-pair-summed into i32x8 accumulators by `vpmaddwd`.
    #[target_feature(enable = "avx2")]
    pub fn dot4(x: &[i8], w: [&[i8]; 4]) -> [i32; 4] {
        let n = x.len();
        let rows = [&w[0][..n], &w[1][..n], &w[2][..n], &w[3][..n]];
        let full = n / 16 * 16;
        let mut acc = [_mm256_setzero_si256(); 4];
        let mut i = 0;
        while i < full {
            // SAFETY: i + 16 <= n and every row holds n bytes; the loads are unaligned loads.
            let xv = _mm256_cvtepi8_epi16(unsafe {
                _mm_loadu_si128(x.as_ptr().add(i) as *const __m128i)
            });
            for r in 0..4 {
                let wv = _mm256_cvtepi8_epi16(unsafe {
                    _mm_loadu_si128(rows[r].as_ptr().add(i) as *const __m128i)
                });
                acc[r] = _mm256_add_epi32(acc[r], _mm256_madd_epi16(xv, wv));
            }
            i += 16;
        }
        let mut out = [hsum(acc[0]), hsum(acc[1]), hsum(acc[2]), hsum(acc[3])];
        for j in full..n {
            let xj = x[j] as i32;
            for r in 0..4 {
                out[r] += xj * rows[r][j] as i32;
            }
        }
        out
    }

    /// See [`super::dot4x2_i16_i8`]: as [`dot4_i16`] for two token rows, 8 accumulators.
    #[target_feature(enable = "avx2")]
    pub fn dot4x2_i16(x0: &[i16], x1: &[i16], w: [&[i8]; 4]) -> [[i32; 4]; 2] {
        let n = x0.len();
        let x1 = &x1[..n];
        let rows = [&w[0][..n], &w[1][..n], &w[2][..n], &w[3][..n]];
        let full = n / 16 * 16;
        let mut a0 = [_mm256_setzero_si256(); 4];
        let mut a1 = [_mm256_setzero_si256(); 4];
        let mut i = 0;
        while i < full {
            // SAFETY: i + 16 <= n and every row holds n values; the loads are unaligned loads.
            let xv0 = unsafe { _mm256_loadu_si256(x0.as_ptr().add(i) as *const __m256i) };
            let xv1 = unsafe { _mm256_loadu_si256(x1.as_ptr().add(i) as *const __m256i) };
            for r in 0..4 {
                let wv = _mm256_cvtepi8_epi16(unsafe {
                    _mm_loadu_si128(rows[r].as_ptr().add(i) as *const __m128i)
                });
                a0[r] = _mm256_add_epi32(a0[r], _mm256_madd_epi16(xv0, wv));
                a1[r] = _mm256_add_epi32(a1[r], _mm256_madd_epi16(xv1, wv));
            }
            i += 16;
        }
        let mut out = [
            [hsum(a0[0]), hsum(a0[1]), hsum(a0[2]), hsum(a0[3])],
            [hsum(a1[0]), hsum(a1[1]), hsum(a1[2]), hsum(a1[3])],
        ];
        for j in full..n {
            for r in 0..4 {
                out[0][r] += x0[j] as i32 * rows[r][j] as i32;
                out[1][r] += x1[j] as i32 * rows[r][j] as i32;
            }
        }
        out
    }

    /// See [`super::dot4_i16_i8`]: 16 i16 lanes of `x` against 16 int8 weights sign-extended
    /// to i16, multiplied-and-pair-summed by `vpmaddwd`.
    #[target_feature(enable = "avx2")]
    pub fn dot4_i16(x: &[i16], w: [&[i8]; 4]) -> [i32; 4] {
        let n = x.len();
        let rows = [&w[0][..n], &w[1][..n], &w[2][..n], &w[3][..n]];
        let full = n / 16 * 16;
        let mut acc = [_mm256_setzero_si256(); 4];
        let mut i = 0;
        while i < full {
            // SAFETY: i + 16 <= n and every row holds n values; the loads are unaligned loads.
            let xv = unsafe { _mm256_loadu_si256(x.as_ptr().add(i) as *const __m256i) };
            for r in 0..4 {
                let wv = _mm256_cvtepi8_epi16(unsafe {
                    _mm_loadu_si128(rows[r].as_ptr().add(i) as *const __m128i)
                });
                acc[r] = _mm256_add_epi32(acc[r], _mm256_madd_epi16(xv, wv));
            }
            i += 16;
        }
        let mut out = [hsum(acc[0]), hsum(acc[1]), hsum(acc[2]), hsum(acc[3])];
        for j in full..n {
            let xj = x[j] as i32;
            for r in 0..4 {
                out[r] += xj * rows[r][j] as i32;
            }
        }
        out
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
pub(crate) mod simd128 {
    use core::arch::wasm32::*;

    #[inline(always)]
    fn hsum(v: v128) -> i32 {
        i32x4_extract_lane::<0>(v)
            + i32x4_extract_lane::<1>(v)
            + i32x4_extract_lane::<2>(v)
            + i32x4_extract_lane::<3>(v)
    }

    /// See [`super::dot4_i8`]: 16 int8 lanes at a time, sign-extended to two i16x8 halves
    /// and multiplied-and-pair-summed into i32x4 accumulators by `i32x4.dot_i16x8_s`.
    #[inline(always)]
    pub fn dot4(x: &[i8], w: [&[i8]; 4]) -> [i32; 4] {
        let n = x.len();
        let rows = [&w[0][..n], &w[1][..n], &w[2][..n], &w[3][..n]];
        let full = n / 16 * 16;
        let mut acc = [i32x4_splat(0); 4];
        let mut i = 0;
        while i < full {
            // SAFETY: i + 16 <= n and every row holds n bytes; v128_load is an unaligned load.
            let xv = unsafe { v128_load(x.as_ptr().add(i) as *const v128) };
            let xl = i16x8_extend_low_i8x16(xv);
            let xh = i16x8_extend_high_i8x16(xv);
            for r in 0..4 {
                let wv = unsafe { v128_load(rows[r].as_ptr().add(i) as *const v128) };
                let p = i32x4_add(
                    i32x4_dot_i16x8(xl, i16x8_extend_low_i8x16(wv)),
                    i32x4_dot_i16x8(xh, i16x8_extend_high_i8x16(wv)),
                );
                acc[r] = i32x4_add(acc[r], p);
            }
            i += 16;
        }
        let mut out = [hsum(acc[0]), hsum(acc[1]), hsum(acc[2]), hsum(acc[3])];
        for j in full..n {
            let xj = x[j] as i32;
            for r in 0..4 {
                out[r] += xj * rows[r][j] as i32;
            }
        }
        out
    }

    /// See [`super::dot4x2_i16_i8`]: as [`dot4_i16`] for two token rows, 8 accumulators.
    #[inline(always)]
    pub fn dot4x2_i16(x0: &[i16], x1: &[i16], w: [&[i8]; 4]) -> [[i32; 4]; 2] {
        let n = x0.len();
        let x1 = &x1[..n];
        let rows = [&w[0][..n], &w[1][..n], &w[2][..n], &w[3][..n]];
        let full = n / 16 * 16;
        let mut a0 = [i32x4_splat(0); 4];
        let mut a1 = [i32x4_splat(0); 4];
        let mut i = 0;
        while i < full {
            // SAFETY: i + 16 <= n and every row holds n values; v128_load is an unaligned load.
            let (x0l, x0h, x1l, x1h) = unsafe {
                (
                    v128_load(x0.as_ptr().add(i) as *const v128),
                    v128_load(x0.as_ptr().add(i + 8) as *const v128),
                    v128_load(x1.as_ptr().add(i) as *const v128),
                    v128_load(x1.as_ptr().add(i + 8) as *const v128),
                )
            };
            for r in 0..4 {
                let wv = unsafe { v128_load(rows[r].as_ptr().add(i) as *const v128) };
                let (wl, wh) = (i16x8_extend_low_i8x16(wv), i16x8_extend_high_i8x16(wv));
                a0[r] = i32x4_add(
                    a0[r],
                    i32x4_add(i32x4_dot_i16x8(x0l, wl), i32x4_dot_i16x8(x0h, wh)),
                );
                a1[r] = i32x4_add(
                    a1[r],
                    i32x4_add(i32x4_dot_i16x8(x1l, wl), i32x4_dot_i16x8(x1h, wh)),
                );
            }
            i += 16;
        }
        let mut out = [
            [hsum(a0[0]), hsum(a0[1]), hsum(a0[2]), hsum(a0[3])],
            [hsum(a1[0]), hsum(a1[1]), hsum(a1[2]), hsum(a1[3])],
        ];
        for j in full..n {
            for r in 0..4 {
                out[0][r] += x0[j] as i32 * rows[r][j] as i32;
                out[1][r] += x1[j] as i32 * rows[r][j] as i32;
            }
        }
        out
    }

    /// See [`super::dot4_i16_i8`]: two i16x8 loads of `x` per 16 int8 weights, which are
    /// sign-extended to two i16x8 halves; `i32x4.dot_i16x8_s` multiplies and pair-sums.
    #[inline(always)]
    pub fn dot4_i16(x: &[i16], w: [&[i8]; 4]) -> [i32; 4] {
        let n = x.len();
        let rows = [&w[0][..n], &w[1][..n], &w[2][..n], &w[3][..n]];
        let full = n / 16 * 16;
        let mut acc = [i32x4_splat(0); 4];
        let mut i = 0;
        while i < full {
            // SAFETY: i + 16 <= n and every row holds n values; v128_load is an unaligned load.
            let xl = unsafe { v128_load(x.as_ptr().add(i) as *const v128) };
            let xh = unsafe { v128_load(x.as_ptr().add(i + 8) as *const v128) };
            for r in 0..4 {
                let wv = unsafe { v128_load(rows[r].as_ptr().add(i) as *const v128) };
                let p = i32x4_add(
                    i32x4_dot_i16x8(xl, i16x8_extend_low_i8x16(wv)),
                    i32x4_dot_i16x8(xh, i16x8_extend_high_i8x16(wv)),
                );
                acc[r] = i32x4_add(acc[r], p);
            }
            i += 16;
        }
        let mut out = [hsum(acc[0]), hsum(acc[1]), hsum(acc[2]), hsum(acc[3])];
        for j in full..n {
            let xj = x[j] as i32;
            for r in 0..4 {
                out[r] += xj * rows[r][j] as i32;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pseudo_random(n: usize, seed: u32) -> Vec<f32> {
        let mut s = seed.wrapping_mul(2654435761).wrapping_add(1);
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 17;
                s ^= s << 5;
                (s as f32 / u32::MAX as f32) * 2.0 - 1.0
            })
            .collect()
    }

    #[test]
    fn quantize_row_round_trips_within_half_a_step() {
        let src = pseudo_random(100, 7);
        let mut q = vec![0i8; 100];
        let scale = quantize_row(&src, &mut q);
        for (s, q) in src.iter().zip(&q) {
            assert!((s - *q as f32 * scale).abs() <= scale * 0.5 + 1e-7);
        }
        assert!(q.iter().any(|v| v.abs() == 127));
        assert_eq!(quantize_row(&[0.0; 4], &mut q[..4]), 0.0);
    }

    #[test]
    fn dot4_matches_naive_sums_including_tails() {
        for n in [0usize, 1, 15, 16, 17, 384, 1536 + 5] {
            let mut rows: Vec<Vec<i8>> = Vec::new();
            for seed in 0..5 {
                let f = pseudo_random(n, seed + 1);
                let mut q = vec![0i8; n];
                quantize_row(&f, &mut q);
                rows.push(q);
            }
            let x = &rows[0];
            let got = dot4_i8(x, [&rows[1], &rows[2], &rows[3], &rows[4]]);
            for r in 0..4 {
                let want: i32 = x
                    .iter()
                    .zip(&rows[r + 1])
                    .map(|(a, b)| *a as i32 * *b as i32)
                    .sum();
                assert_eq!(got[r], want, "n={n} r={r}");
                assert_eq!(dot_i8(x, &rows[r + 1]), want);
            }
            let portable = portable::dot4(x, [&rows[1], &rows[2], &rows[3], &rows[4]]);
            assert_eq!(portable, got);
        }
    }

    #[test]
    fn dot4_i16_matches_naive_sums_and_cannot_overflow() {
        for n in [0usize, 1, 15, 16, 17, 384, 1536 + 5] {
            let qmax = i16_activation_limit(n);
            let mut x = vec![0i16; n];
            quantize_row_i16(&pseudo_random(n, 9), &mut x, qmax);
            // Worst case for overflow: every product at its extreme.
            let worst_x = vec![qmax; n];
            let worst_w = vec![127i8; n];
            let mut rows: Vec<Vec<i8>> = Vec::new();
            for seed in 0..4 {
                let mut q = vec![0i8; n];
                quantize_row(&pseudo_random(n, seed + 20), &mut q);
                rows.push(q);
            }
            let got = dot4_i16_i8(&x, [&rows[0], &rows[1], &rows[2], &rows[3]]);
            for r in 0..4 {
                let want: i64 = x
                    .iter()
                    .zip(&rows[r])
                    .map(|(a, b)| *a as i64 * *b as i64)
                    .sum();
                assert_eq!(got[r] as i64, want, "n={n} r={r}");
            }
            assert_eq!(
                portable::dot4_i16(&x, [&rows[0], &rows[1], &rows[2], &rows[3]]),
                got
            );
            let mut x1 = vec![0i16; n];
            quantize_row_i16(&pseudo_random(n, 10), &mut x1, qmax);
            let pair = dot4x2_i16_i8(&x, &x1, [&rows[0], &rows[1], &rows[2], &rows[3]]);
            assert_eq!(pair[0], got);
            assert_eq!(
                pair[1],
                dot4_i16_i8(&x1, [&rows[0], &rows[1], &rows[2], &rows[3]])
            );
            let worst = dot4_i16_i8(&worst_x, [&worst_w, &worst_w, &worst_w, &worst_w]);
            assert_eq!(worst[0] as i64, n as i64 * qmax as i64 * 127);
        }
    }

    #[test]
    fn exp_and_erf_match_libm() {
        let mut worst_exp = 0f32;
        let mut worst_erf = 0f32;
        for i in 0..=200_000 {
            let x = -90.0 + 90.0 * i as f32 / 200_000.0;
            let want = libm::expf(x);
            worst_exp =
                worst_exp.max((exp_nonpositive(x) - want).abs() / want.max(f32::MIN_POSITIVE));
            let z = -6.0 + 12.0 * i as f32 / 200_000.0;
            worst_erf = worst_erf.max((erf(z) - libm::erff(z)).abs());
        }
        // e^x below -87 is clamped (values < 1.7e-38): relative error is only checked above.
        let mut worst_exp_in_range = 0f32;
        for i in 0..=100_000 {
            let x = -87.0 * i as f32 / 100_000.0;
            let want = libm::expf(x);
            worst_exp_in_range = worst_exp_in_range.max((exp_nonpositive(x) - want).abs() / want);
        }
        assert!(
            worst_exp_in_range < 5e-7,
            "exp relative error {worst_exp_in_range}"
        );
        assert!(worst_exp.is_finite());
        // A&S 7.1.26 is 1.5e-7 in exact arithmetic; evaluated in f32 it measures ~5.6e-7.
        assert!(worst_erf < 1e-6, "erf absolute error {worst_erf}");
        assert_eq!(exp_nonpositive(0.0), 1.0);
        assert!(erf(0.0).abs() < 1e-6);
    }

    #[test]
    fn dot_f32_matches_naive() {
        let a = pseudo_random(37, 3);
        let b = pseudo_random(37, 4);
        let want: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot_f32(&a, &b) - want).abs() < 1e-5);
    }
}
