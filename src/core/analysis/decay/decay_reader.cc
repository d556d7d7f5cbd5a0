#include "core/analysis/decay/decay_reader.h"

namespace pe::decay_detail {
namespace {

// Rows 0-7 of an 8 x 8 block of floats (row i at s + i * stride) as its
// 8 columns: out[c] holds column c's 8 values.
__attribute__((target("avx2"))) inline void Transpose8(const float* s, std::int64_t stride, __m256 out[8],
                                                       __m256i& top) {
  const __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + stride), r2 = _mm256_loadu_ps(s + 2 * stride),
               r3 = _mm256_loadu_ps(s + 3 * stride), r4 = _mm256_loadu_ps(s + 4 * stride),
               r5 = _mm256_loadu_ps(s + 5 * stride), r6 = _mm256_loadu_ps(s + 6 * stride),
               r7 = _mm256_loadu_ps(s + 7 * stride);
  // The largest exponent field seen: all ones only for a NaN or infinity.
  const __m256i exponent = _mm256_set1_epi32(0x7f800000);
#define PE_TOP(v) top = _mm256_max_epu32(top, _mm256_and_si256(_mm256_castps_si256(v), exponent))
  PE_TOP(r0), PE_TOP(r1), PE_TOP(r2), PE_TOP(r3), PE_TOP(r4), PE_TOP(r5), PE_TOP(r6), PE_TOP(r7);
#undef PE_TOP
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
  const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
  const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  // Column c: rows 0-3 from u[c % 4] (low half for c < 4), rows 4-7 from u[4 + c % 4].
  out[0] = _mm256_permute2f128_ps(u0, u4, 0x20), out[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  out[2] = _mm256_permute2f128_ps(u2, u6, 0x20), out[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  out[4] = _mm256_permute2f128_ps(u0, u4, 0x31), out[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  out[6] = _mm256_permute2f128_ps(u2, u6, 0x31), out[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// Columns [j0, j0 + w) of `count` row-major rows of `cols` floats into a
// column-major panel (value (r, c) at dst[c * ld + r]), on AVX2, in tiles
// of 16 rows across all w columns:
// - each tile's rows are read once, start to end (walking the rows once per
//   8 columns met every row's page again for each 8 columns: a TLB miss
//   each time), the next tiles' rows prefetched 16 rows ahead (a row is its
//   own 4 KiB page, where the hardware streamer stops);
// - each 8 × 8 block is transposed in registers; a column's 16 values of
//   a tile are one whole 64-byte line of the panel, stored by streaming
//   stores (the panel, larger than the caches, is not read back before
//   the FFTs: a normal store would first read each line from memory).
//   Rows before the first line boundary go one by one; the last rows (and
//   all rows when a panel's columns cannot start lines: ld not a multiple
//   of 16) as 8-row tiles with normal stores, then one by one.
// The same values, moved. Returns whether every value moved is finite, so
// that the reader needs no second pass over the rows.
__attribute__((target("avx2"))) bool ScatterF32Avx2(const float* x, std::int64_t count, std::int64_t cols,
                                                    std::int64_t j0, std::int64_t w, float* dst, std::int64_t ld) {
  constexpr std::int64_t kAhead = 16;
  const std::int64_t w8 = w / 8 * 8;
  __m256i top = _mm256_setzero_si256();
  std::uint32_t bad_tail = 0;
  auto one = [&](std::int64_t i, std::int64_t c) {
    const float v = x[i * cols + j0 + c];
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    bad_tail |= (bits & 0x7f800000u) == 0x7f800000u;
    dst[c * ld + i] = v;
  };
  auto prefetch = [&](std::int64_t r, std::int64_t rows) {
    const std::int64_t last = std::min(count, r + kAhead + rows);
    for (std::int64_t p = r + kAhead; p < last; ++p) {
      const float* row = x + p * cols + j0;
      for (std::int64_t o = 0; o < w; o += 16) _mm_prefetch(reinterpret_cast<const char*>(row + o), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(row + w - 1), _MM_HINT_T0);
    }
  };
  // Whole panel lines from row `lead` on: dst + r is 64-byte aligned for
  // every column when ld is a multiple of 16 floats.
  const auto address = reinterpret_cast<std::uintptr_t>(dst);
  const bool lines = ld % 16 == 0 && address % 4 == 0;
  const std::int64_t lead = lines ? static_cast<std::int64_t>((16 - address / 4 % 16) % 16) : 0;
  std::int64_t r = 0;
  for (; r < std::min(lead, count); ++r)
    for (std::int64_t c = 0; c < w; ++c) one(r, c);
  if (lines) {
    for (; r + 16 <= count; r += 16) {
      prefetch(r, 16);
      __m256 lo[8], hi[8];
      for (std::int64_t c0 = 0; c0 < w8; c0 += 8) {
        const float* s = x + r * cols + j0 + c0;
        Transpose8(s, cols, lo, top);
        Transpose8(s + 8 * cols, cols, hi, top);
        for (int c = 0; c < 8; ++c) {
          float* d = dst + (c0 + c) * ld + r;
          _mm256_stream_ps(d, lo[c]);
          _mm256_stream_ps(d + 8, hi[c]);
        }
      }
      for (std::int64_t c = w8; c < w; ++c)
        for (std::int64_t i = r; i < r + 16; ++i) one(i, c);
    }
    _mm_sfence();  // the streamed lines before any other thread reads the panel
  }
  for (; r + 8 <= count; r += 8) {  // rows [r, r + 8) with normal stores
    prefetch(r, 8);
    __m256 col[8];
    for (std::int64_t c0 = 0; c0 < w8; c0 += 8) {
      Transpose8(x + r * cols + j0 + c0, cols, col, top);
      for (int c = 0; c < 8; ++c) _mm256_storeu_ps(dst + (c0 + c) * ld + r, col[c]);
    }
    for (std::int64_t c = w8; c < w; ++c)
      for (std::int64_t i = r; i < r + 8; ++i) one(i, c);
  }
  for (; r < count; ++r)
    for (std::int64_t c = 0; c < w; ++c) one(r, c);
  const __m256i bad = _mm256_cmpeq_epi32(top, _mm256_set1_epi32(0x7f800000));
  return _mm256_testz_si256(bad, bad) && bad_tail == 0;
}

}  // namespace

std::int64_t NormalizeRows(double* x, std::int64_t rows, std::int64_t cols) {
  std::int64_t zero = 0;
  for (std::int64_t p = 0; p < rows; ++p) {
    double* row = x + p * cols;
    double ss = 0;
    for (std::int64_t j = 0; j < cols; ++j) ss += row[j] * row[j];
    if (ss == 0) {
      ++zero;
      continue;
    }
    const double inv = 1.0 / std::sqrt(ss);
    for (std::int64_t j = 0; j < cols; ++j) row[j] *= inv;
  }
  return zero;
}

bool ScatterFloats(const float* x, std::int64_t count, std::int64_t cols, std::int64_t j0, std::int64_t w,
                   float* dst, std::int64_t ld) {
  const bool avx2 = cpu::Allows(cpu::Isa::kAvx2);
  if (avx2) return ScatterF32Avx2(x, count, cols, j0, w, dst, ld);
  Scatter(x, count, cols, j0, w, nullptr, dst, ld);
  for (std::int64_t c = 0; c < w; ++c)
    for (std::int64_t r = 0; r < count; ++r)
      if (!std::isfinite(dst[c * ld + r])) return false;
  return true;
}

}  // namespace pe::decay_detail
