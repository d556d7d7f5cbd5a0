// The table kernel: the recurrence, the certified rounding and the stores
// of SinCosBatch::F32, and its vectorised anchors (docs/numerics.md, "The
// table fast path").
//
// Contract: exact_sincos.cc includes this file once per instruction set,
// each time inside its own namespace, with PE_KERNEL_LANES set to the
// doubles of that set's vector: 8 for AVX-512 (x86-64-v4), 4 for AVX2
// (x86-64-v3), 2 for SSE2 (baseline). Each inclusion defines that
// namespace's
//   RunTile(...)  rows [first, first + count) of a tile of frequencies;
//   Anchors(...)  (sin, cos) of every frequency at one position;
// compiled entirely for that instruction set, under a target pragma that
// this file pushes and pops (Highway's "-inl.h" pattern): its templates may
// then use the set's intrinsics, which a template compiled for baseline
// x86-64 and inlined into a target wrapper cannot. It uses, from the
// including file, Frequency, FastF64AbsErr, the constants kPio2*, k2OverPi,
// kTile, kMaxLanes, kStepErr, kRoundSlack, FixRow, float_midpoint.h,
// <immintrin.h> and PE_VECTOR_INLINE; it undefines PE_KERNEL_LANES at its
// end. No include guard, on purpose.

#if PE_KERNEL_LANES == 8
#define PE_KERNEL_TARGET "arch=x86-64-v4"
#elif PE_KERNEL_LANES == 4
#define PE_KERNEL_TARGET "arch=x86-64-v3"
#elif PE_KERNEL_LANES != 2
#error "PE_KERNEL_LANES must be 8, 4 or 2"
#endif
// _Pragma with the target's string expanded first (# alone would not).
#define PE_KERNEL_PRAGMA_TEXT(x) _Pragma(#x)
#define PE_KERNEL_PRAGMA(x) PE_KERNEL_PRAGMA_TEXT(x)
#ifdef PE_KERNEL_TARGET
#if defined(__clang__)
PE_KERNEL_PRAGMA(clang attribute push(__attribute__((target(PE_KERNEL_TARGET))), apply_to = function))
#else
PE_KERNEL_PRAGMA(GCC push_options)
PE_KERNEL_PRAGMA(GCC target(PE_KERNEL_TARGET))
#endif
#endif

// W frequencies side by side in one register (GCC vector extensions): W = 8
// for AVX-512 (zmm), 4 for AVX2 (ymm), 2 for SSE2 (xmm); the same values on
// each, since every accepted value is the correctly rounded one.
template <int W>
struct Lanes {
  typedef double D __attribute__((vector_size(8 * W)));  // W doubles
  typedef float F __attribute__((vector_size(4 * W)));   // W floats
  typedef float F2 __attribute__((vector_size(8 * W)));  // 2W floats
  typedef int I __attribute__((vector_size(4 * W)));     // W lane masks
  typedef long long L __attribute__((vector_size(8 * W)));  // W int64
};

template <int W>
PE_VECTOR_INLINE typename Lanes<W>::D Load(const double* p) {
  typename Lanes<W>::D v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <int W>
PE_VECTOR_INLINE typename Lanes<W>::D Splat(double x) {
  // Every lane x: a broadcast (0 + x would be an addition, not x for -0).
  if constexpr (W == 8)
    return typename Lanes<W>::D{x, x, x, x, x, x, x, x};
  else if constexpr (W == 4)
    return typename Lanes<W>::D{x, x, x, x};
  else
    return typename Lanes<W>::D{x, x};
}

// (0, 1, ..., W - 1): lane numbers.
template <int W>
PE_VECTOR_INLINE typename Lanes<W>::I Iota() {
  if constexpr (W == 8)
    return typename Lanes<W>::I{0, 1, 2, 3, 4, 5, 6, 7};
  else if constexpr (W == 4)
    return typename Lanes<W>::I{0, 1, 2, 3};
  else
    return typename Lanes<W>::I{0, 1};
}

// (a0, b0, a1, b1, ...): sin and cos side by side, the paper's layout.
template <int W>
PE_VECTOR_INLINE typename Lanes<W>::F2 Interleave(typename Lanes<W>::F a, typename Lanes<W>::F b) {
  if constexpr (W == 8)
    return __builtin_shufflevector(a, b, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
  else if constexpr (W == 4)
    return __builtin_shufflevector(a, b, 0, 4, 1, 5, 2, 6, 3, 7);
  else
    return __builtin_shufflevector(a, b, 0, 2, 1, 3);
}

// ---- Anchors, W frequencies at a time --------------------------------------
//
// The same evaluation as FastSinCos (θ = pos·ω as a double-double, reduced
// by π/2 in three parts, then sin and cos of the reduced r = x + y with its
// tail), vectorised: a tile's anchors cost about a twentieth of W calls of
// FastSinCos, which were a quarter of the table time.
//  - Products that must be exact use Dekker's TwoProd (Veltkamp splitting),
//    made of plain multiplications and additions, on every x86-64 level:
//    exact with or without fma contraction (each partial product is exact)
//    once the products whose rounding they capture are kept rounded
//    (Rounded).
//  - sin and cos of r use the kernel polynomials of fdlibm (k_sin.c and
//    k_cos.c, Sun Microsystems 1993; the coefficients are the bit patterns
//    below), whose approximation error on |x| <= π/4 is below 2^-58 and
//    whose evaluation keeps the result within 1 ulp, the same bound as
//    glibc's sincos that FastSinCos uses, with the same 4x margin in the
//    anchor bound (docs/numerics.md). tests/core/schemes/sinusoid_f64fast_test.cc
//    checks these anchors against MPFR directly.

// fdlibm's sin kernel: sin(x + y) ≈ x + x^3·(S1 + x^2·S2 + ... + x^10·S6).
constexpr double kS1 = -0x1.5555555555549p-3, kS2 = 0x1.111111110f8a6p-7, kS3 = -0x1.a01a019c161d5p-13,
                 kS4 = 0x1.71de357b1fe7dp-19, kS5 = -0x1.ae5e68a2b9cebp-26, kS6 = 0x1.5d93a5acfd57cp-33;
// fdlibm's cos kernel: cos(x + y) ≈ 1 - x^2/2 + x^4·(C1 + x^2·C2 + ... + x^10·C6).
constexpr double kC1 = 0x1.555555555554cp-5, kC2 = -0x1.6c16c16c15177p-10, kC3 = 0x1.a01a019cb1590p-16,
                 kC4 = -0x1.27e4f809c52adp-22, kC5 = 0x1.1ee9ebdb4b1c4p-29, kC6 = -0x1.8fae9be8838d4p-37;

// x as computed, rounded: the error-free transformations below need a
// product's rounded value, and with fp contraction on (GCC's default), the
// compiler may fuse a product into each addition that uses it instead (an
// fma per use), which breaks their algebra. An empty asm that may change x
// in memory makes the value opaque (a memory operand, because clang checks
// a register constraint's vector size before it knows the target: a few
// stores and loads per anchor, nothing beside its arithmetic).
template <typename V>
PE_VECTOR_INLINE V Rounded(V x) {
  asm("" : "+m"(x));
  return x;
}

// a = hi + lo exactly, each half with at most 26 significant bits
// (Veltkamp; |a| < 2^995).
template <int W>
PE_VECTOR_INLINE void Split(typename Lanes<W>::D a, typename Lanes<W>::D* hi, typename Lanes<W>::D* lo) {
  const typename Lanes<W>::D t = Rounded(a * 134217729.0);  // 2^27 + 1
  *hi = t - (t - a);
  *lo = a - *hi;
}

// The rounding error of a·b given its split halves: a·b = p + e exactly.
template <int W>
PE_VECTOR_INLINE typename Lanes<W>::D ProdErr(typename Lanes<W>::D p, typename Lanes<W>::D ah,
                                              typename Lanes<W>::D al, typename Lanes<W>::D bh,
                                              typename Lanes<W>::D bl) {
  return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
}

// (s, c) = (sin, cos)(pos·ω) for W frequencies ω = w_hi + w_lo, within
// |y|·2^-50 + err each; `err` gets the largest err of the lanes (|θ|·2^-98 +
// 2^-1000, as FastSinCos).
template <int W>
PE_VECTOR_INLINE void AnchorLanes(std::int64_t pos, const double* w_hi, const double* w_lo, double* s_out,
                                  double* c_out, double* err) {
  using V = typename Lanes<W>::D;
  using VL = typename Lanes<W>::L;
  const double pd = static_cast<double>(pos);  // exact: |pos| <= 2^40
  const V p = Splat<W>(pd);
  const V hi = Load<W>(w_hi), lo = Load<W>(w_lo);
  // θ = p·ω: t = p·hi exactly as th + tl, plus p·lo.
  V ph, pl, hh, hl;
  Split<W>(p, &ph, &pl);
  Split<W>(hi, &hh, &hl);
  V th = Rounded(p * hi);
  V tl = ProdErr<W>(th, ph, pl, hh, hl) + p * lo;
  {  // renormalise (TwoSum) so that th carries the leading bits
    const V sum = th + tl, bb = sum - th;
    tl = (th - (sum - bb)) + (tl - bb);
    th = sum;
  }
  // k = nearest integer to θ·2/π, by the 1.5·2^52 trick (|θ·2/π| < 2^51:
  // |θ| <= kMaxExactAngle = 2^50, checked when a table is planned);
  // its low bits are k mod 4, the quadrant.
  constexpr double kMagic = 0x1.8p52;
  V km = th * k2OverPi + kMagic;
  VL bits;
  std::memcpy(&bits, &km, sizeof bits);
  const V k = km - kMagic;
  // r = θ - k·(hi + mid + lo), with k·hi and k·mid as exact products.
  V kh, kl;
  Split<W>(k, &kh, &kl);
  V h_hh, h_hl, m_hh, m_hl;  // the halves of π/2's hi and mid parts
  Split<W>(Splat<W>(kPio2Hi), &h_hh, &h_hl);
  Split<W>(Splat<W>(kPio2Mid), &m_hh, &m_hl);
  const V ah = Rounded(k * kPio2Hi);
  const V al = ProdErr<W>(ah, kh, kl, h_hh, h_hl);
  const V bh = Rounded(k * kPio2Mid);
  const V bl = ProdErr<W>(bh, kh, kl, m_hh, m_hl);
  V sh, sl;
  {  // TwoSum(th, -ah)
    const V sum = th - ah, bb = sum - th;
    sl = (th - (sum - bb)) + (-ah - bb);
    sh = sum;
  }
  const V rest = tl - al - bh - bl - k * kPio2Lo;
  V x, y;
  {  // TwoSum(sh, sl + rest)
    const V b = sl + rest;
    const V sum = sh + b, bb = sum - sh;
    y = (sh - (sum - bb)) + (b - bb);
    x = sum;
  }
  // k can be one off the nearest integer: θ·2/π rounds with an error of up
  // to |θ|·2^-52.4 (0.06 at |θ| = 2^50), so |x| can exceed π/4 by a few
  // tenths, where fdlibm's polynomials are not accurate. One step of π/2
  // brings x back: x ∓ hi is exact (Sterbenz: π/4 < |x| < π), the mid and lo
  // parts go to the tail y (an error near 2^-107).
  VL adj;  // +1 where x > π/4, -1 where x < -π/4, else 0
  {
    constexpr double kPio4 = 0x1.921fb54442d18p-1;
    const VL up = x > kPio4, down = x < -kPio4;  // -1 where true
    adj = down - up;
    const VL hi_bits = __builtin_bit_cast(VL, Splat<W>(kPio2Hi)), mid_bits = __builtin_bit_cast(VL, Splat<W>(kPio2Mid)),
             lo_bits = __builtin_bit_cast(VL, Splat<W>(kPio2Lo)), sign = __builtin_bit_cast(VL, Splat<W>(-0.0)) & down;
    // ±(hi, mid, lo) where adjusted, 0 elsewhere.
    const V dh = __builtin_bit_cast(V, (hi_bits & (up | down)) ^ sign);
    const V dm = __builtin_bit_cast(V, (mid_bits & (up | down)) ^ sign);
    const V dl = __builtin_bit_cast(V, (lo_bits & (up | down)) ^ sign);
    x = x - dh;
    y = (y - dm) - dl;
  }
  // fdlibm's kernels for sin(x + y) and cos(x + y).
  const V z = x * x, w = z * z;
  const V sr = kS2 + z * (kS3 + z * kS4) + z * w * (kS5 + z * kS6);
  const V v = z * x;
  const V sin_r = x - ((z * (0.5 * y - v * sr) - y) - v * kS1);
  const V cr = z * (kC1 + z * (kC2 + z * kC3)) + w * w * (kC4 + z * (kC5 + z * kC6));
  const V hz = 0.5 * z, one_hz = 1.0 - hz;
  const V cos_r = one_hz + (((1.0 - one_hz) - hz) + (z * cr - x * y));
  // Quadrant q: (sin, cos)(θ) = (s, c), (c, -s), (-s, -c), (-c, s).
  const VL q = (bits + adj) & 3;
  const VL swap = (q & 1) != 0;  // -1 where q is odd
  VL sv, cv;
  std::memcpy(&sv, &sin_r, sizeof sv);
  std::memcpy(&cv, &cos_r, sizeof cv);
  VL so = (sv & ~swap) | (cv & swap), co = (cv & ~swap) | (sv & swap);
  so ^= (q & 2) << 62;        // sin negated for q = 2, 3
  co ^= ((q + 1) & 2) << 62;  // cos negated for q = 1, 2
  std::memcpy(s_out, &so, sizeof so);
  std::memcpy(c_out, &co, sizeof co);
  // Error bound: FastSinCos's, the lanes' largest.
  const V theta = p * hi;
  for (int i = 0; i < W; ++i) *err = std::max(*err, FastF64AbsErr(theta[i]));
}

// How a strip's row is stored: sin and cos interleaved in one run of 2W
// floats (the paper's layout), in two runs of W (the concatenated layouts),
// or entry by entry (any stride, partial strips, sins without cos).
enum class StripStore { kInterleaved, kSplit, kGeneric };

template <int W, typename VInt>
PE_VECTOR_INLINE unsigned LaneBits(VInt v) {
  unsigned bits = 0;
  for (int i = 0; i < W; ++i) bits |= (v[i] != 0 ? 1u : 0u) << i;
  return bits;
}

// The XOR of the bit patterns of a and b, lane by lane: a lane may hold a
// float32 tie between a and b when it has a bit outside
// kBelowFloatMidpointBits (float_midpoint.h, MayStraddleFloatMidpoint).
template <int W>
PE_VECTOR_INLINE typename Lanes<W>::L MidpointBits(typename Lanes<W>::D a, typename Lanes<W>::D b) {
  return __builtin_bit_cast(typename Lanes<W>::L, a) ^ __builtin_bit_cast(typename Lanes<W>::L, b);
}

// any | MidpointBits(a, b): the fast pass's accumulated test. AVX-512 does it in one ternary-logic
// instruction; GCC's generic form (also right) took three, reassociating
// the ORs of a strip's sin and cos.
template <int W>
PE_VECTOR_INLINE typename Lanes<W>::L OrMidpointBits(typename Lanes<W>::L any, typename Lanes<W>::D a,
                                                     typename Lanes<W>::D b) {
#if PE_KERNEL_LANES == 8
  if constexpr (W == 8) {
    constexpr int kAOrBXorC = 0xF6;  // truth table of a | (b ^ c)
    return reinterpret_cast<typename Lanes<W>::L>(_mm512_ternarylogic_epi64(
        reinterpret_cast<__m512i>(any), reinterpret_cast<__m512i>(a), reinterpret_cast<__m512i>(b), kAOrBXorC));
  }
#endif
  return any | MidpointBits<W>(a, b);
}

// Rounds W sins and W coss to float32 and stores them interleaved (2W
// floats at p). With AVX-512, GCC's generic form zero-extended each
// rounded half before the one permutation: two needless instructions in
// a loop of about fifteen.
template <int W>
PE_VECTOR_INLINE void StoreRoundedInterleaved(float* p, typename Lanes<W>::D s, typename Lanes<W>::D c) {
#if PE_KERNEL_LANES == 8
  if constexpr (W == 8) {
    const __m512i pick = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    using VF = typename Lanes<W>::F;  // (GCC's _mm512_cvtpd_ps warns of its own undefined operand)
    const __m512 fs = _mm512_castps256_ps512(reinterpret_cast<__m256>(__builtin_convertvector(s, VF)));
    const __m512 fc = _mm512_castps256_ps512(reinterpret_cast<__m256>(__builtin_convertvector(c, VF)));
    _mm512_storeu_ps(p, _mm512_permutex2var_ps(fs, pick, fc));
    return;
  }
#endif
  using VF = typename Lanes<W>::F;
  const auto both = Interleave<W>(__builtin_convertvector(s, VF), __builtin_convertvector(c, VF));
  std::memcpy(p, &both, sizeof both);
}

// Rows [0, rows) of a pass for kStrips strips of up to 8 frequencies each
// (side by side: two strips give two independent recurrences, which hides the
// latency of each), whose (s, c) at the pass's first row are in s_io, c_io:
// round with the certified interval test, store, step by angle addition.
// bound[r·kMaxLanes ...] is the error bound of row r for every frequency of
// the tile (the largest anchor bound plus the recurrence's growth), a whole
// vector of it, so the test reads one load per row. kCheck = false is the
// fast pass: it only ORs the test results, and returns the strips where one
// failed (bit j for strip j), leaving their s_io, c_io as they were; the
// caller re-runs the rows of each such strip alone with kCheck = true, which
// fixes each failed row (the recurrence is deterministic, so both passes see
// the same values). The other strips' (s, c) after the last row go back to
// s_io, c_io. `lanes` and `n_cos` count the frequencies (and cos columns) of
// the whole group; only the generic store has lanes that carry no sin or no
// cos (partial strips), and only it masks them out of the test.
template <int W, int kStrips, StripStore kStore, bool kCheck>
PE_VECTOR_INLINE unsigned RunStrip(const Frequency* freq, double* s_io, double* c_io,
                               const double* bound, const double* cw_p, const double* sw_p,
                               std::size_t lanes, std::size_t n_cos, std::int64_t pos0,
                               std::int64_t rows, float* sin_out, float* cos_out, std::size_t ld,
                               std::size_t step) {
  using V = typename Lanes<W>::D;
  using VF = typename Lanes<W>::F;
  using VI = typename Lanes<W>::I;
  using VL = typename Lanes<W>::L;
  constexpr std::size_t kLanes = W;
  constexpr bool kPartial = kStore == StripStore::kGeneric;
  V s[kStrips], c[kStrips], cw[kStrips], sw[kStrips];
  VI lane_s[kStrips] = {}, lane_c[kStrips] = {};  // -1 where the lane carries a sin / a cos
  VL any[kStrips];
  for (int j = 0; j < kStrips; ++j) {
    const std::size_t o = static_cast<std::size_t>(j) * kLanes;
    s[j] = Load<W>(s_io + o);
    c[j] = Load<W>(c_io + o);
    cw[j] = Load<W>(cw_p + o);
    sw[j] = Load<W>(sw_p + o);
    const VI lane = Iota<W>() + static_cast<int>(o);
    lane_s[j] = lane < static_cast<int>(lanes);
    lane_c[j] = lane < static_cast<int>(n_cos);
    any[j] = VL{};
  }
  for (std::int64_t r = 0; r < rows; ++r) {
    float* so = sin_out + static_cast<std::size_t>(r) * ld;
    float* co = cos_out + static_cast<std::size_t>(r) * ld;
    const V b = Load<W>(bound + r * kMaxLanes);  // the row's bound in every lane
#pragma GCC unroll 2
    for (int j = 0; j < kStrips; ++j) {
      VF hs, hc;  // the correctly rounded values when the test passes
      VI bad_s, bad_c;
      if constexpr (kCheck) {
        // When y - B and y + B round alike, that float is the correctly
        // rounded value.
        hs = __builtin_convertvector(s[j] + b, VF);
        hc = __builtin_convertvector(c[j] + b, VF);
        bad_s = __builtin_convertvector(s[j] - b, VF) != hs;
        bad_c = __builtin_convertvector(c[j] - b, VF) != hc;
        if constexpr (kPartial) {
          bad_s &= lane_s[j];
          bad_c &= lane_c[j];
        }
      } else if constexpr (kPartial) {
        // Only whether any lane fails (float_midpoint.h): the XORs of the
        // patterns of y - B and y + B, ORed up; the rounded y is stored.
        // (The lane masks widened to the 64-bit lanes of the patterns.)
        any[j] |= MidpointBits<W>(s[j] - b, s[j] + b) & __builtin_convertvector(lane_s[j], VL);
        any[j] |= MidpointBits<W>(c[j] - b, c[j] + b) & __builtin_convertvector(lane_c[j], VL);
        hs = __builtin_convertvector(s[j], VF);
        hc = __builtin_convertvector(c[j], VF);
      } else {
        any[j] = OrMidpointBits<W>(OrMidpointBits<W>(any[j], s[j] - b, s[j] + b), c[j] - b, c[j] + b);
        if constexpr (kStore != StripStore::kInterleaved) {
          hs = __builtin_convertvector(s[j], VF);
          hc = __builtin_convertvector(c[j], VF);
        }
      }
      const std::size_t o = static_cast<std::size_t>(j) * kLanes * step;
      if constexpr (kStore == StripStore::kInterleaved && !kCheck) {
        StoreRoundedInterleaved<W>(so + o, s[j], c[j]);
      } else if constexpr (kStore == StripStore::kInterleaved) {
        const auto both = Interleave<W>(hs, hc);
        std::memcpy(so + o, &both, sizeof both);
      } else if constexpr (kStore == StripStore::kSplit) {
        std::memcpy(so + o, &hs, sizeof hs);
        std::memcpy(co + o, &hc, sizeof hc);
      } else {
        const std::size_t base = static_cast<std::size_t>(j) * kLanes;
        for (std::size_t i = 0; i < kLanes && base + i < lanes; ++i) so[o + i * step] = hs[i];
        for (std::size_t i = 0; i < kLanes && base + i < n_cos; ++i) co[o + i * step] = hc[i];
      }
      if constexpr (kCheck) {
        const unsigned bs = LaneBits<W>(bad_s), bc = LaneBits<W>(bad_c);
        if (bs | bc)
          FixRow(freq + j * kLanes, pos0 + r, bs, bc, kLanes, so + o, co + o, step);
      }
      const V ns = s[j] * cw[j] + c[j] * sw[j];  // angle addition (fma-contracted
      c[j] = c[j] * cw[j] - s[j] * sw[j];          // or not: both within kStepErr)
      s[j] = ns;
    }
  }
  unsigned failed = 0;
  for (int j = 0; j < kStrips; ++j) {
    if (!kCheck && LaneBits<W>(any[j] & ~kBelowFloatMidpointBits) != 0) {
      failed |= 1u << j;
      continue;
    }
    std::memcpy(s_io + j * kLanes, &s[j], sizeof s[j]);
    std::memcpy(c_io + j * kLanes, &c[j], sizeof c[j]);
  }
  return failed;
}

// Rows per pass over a tile's strips: a strip keeps (s, c) in registers for
// this many rows, and the rows' output (at most kPassRows · 2 KiB for
// d_model 512) stays in L1 until every strip has filled it.
constexpr std::int64_t kPassRows = 16;

// One tile of frequencies [0, n) over rows [first, first + count): every
// kAnchorRows rows, anchor each frequency with the checked evaluation, then
// produce the rows kPassRows at a time, strip by strip. Compiled for
// AVX-512, AVX2+FMA and baseline x86-64, picked at load time; all three give
// the same values (every accepted value is the correctly rounded one).
template <int W, int kStrips>
PE_VECTOR_INLINE void RunTileImpl(const Frequency* freq, const double* freq_hi, const double* freq_lo,
                                  const double* cos_w, const double* sin_w,
                                  std::size_t n, std::size_t n_cos, std::int64_t first,
                                  std::int64_t count, float* sin_out, float* cos_out,
                                  std::size_t ld, std::size_t step) {
  constexpr std::size_t kLanes = W;
  // Padded to whole strips; padding lanes rotate (1, 0) by 0 and are never
  // stored or checked.
  alignas(64) double s[kTile], c[kTile], cw[kTile], sw[kTile], w_hi[kTile], w_lo[kTile];
  alignas(64) double bound[kPassRows * kMaxLanes];
  const std::size_t padded = (n + kLanes - 1) / kLanes * kLanes;
  for (std::size_t i = 0; i < padded; ++i) {
    cw[i] = i < n ? cos_w[i] : 1.0;
    sw[i] = i < n ? sin_w[i] : 0.0;
    w_hi[i] = i < n ? freq_hi[i] : 0.0;  // ω = 0: (sin, cos) = (0, 1)
    w_lo[i] = i < n ? freq_lo[i] : 0.0;
  }
  // Growth of the error per row: kStepErr when cos ω, sin ω are within
  // 2^-50 relative; their absolute term |ω|·2^-98 (large ω: bases below 1,
  // docs/numerics.md "Domain") adds at most twice that to the Euclidean norm.
  double w_max = 0;
  for (std::size_t i = 0; i < n; ++i) w_max = std::max(w_max, std::fabs(freq_hi[i]));
  const double step_err = kStepErr + 2 * FastF64AbsErr(w_max);
  const bool interleaved = step == 2 && cos_out == sin_out + 1;
  for (std::int64_t r0 = 0; r0 < count; r0 += SinCosBatch::kAnchorRows) {
    const std::int64_t anchored = std::min(SinCosBatch::kAnchorRows, count - r0);
    // Anchors: the checked double evaluation (vectorised); component error below
    // |y|·2^-50 + err with |y| <= 1, so Euclidean error below 1.5·(2^-50 +
    // err). One bound serves the tile: the largest err of its frequencies.
    double max_err = 0;
    for (std::size_t i = 0; i < padded; i += kLanes)
      AnchorLanes<W>(first + r0, w_hi + i, w_lo + i, s + i, c + i, &max_err);
    const double e0 = 1.5 * (0x1p-50 + max_err) + kRoundSlack;
    for (std::int64_t k0 = 0; k0 < anchored; k0 += kPassRows) {
      const std::int64_t rows = std::min(kPassRows, anchored - k0);
      const std::int64_t pos0 = first + r0 + k0;
      // B_k = E0 + k·2^-49 for the pass's rows k = k0 .. k0 + rows - 1, each
      // repeated for a whole vector (a plain load for the strips; GCC built
      // a broadcast of a loaded scalar lane by lane).
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::size_t l = 0; l < kMaxLanes; ++l)
          bound[r * kMaxLanes + l] = e0 + static_cast<double>(k0 + r) * step_err;
      const std::size_t row0 = static_cast<std::size_t>(r0 + k0);
      // kStrips strips at a time while that many full strips remain.
      for (std::size_t i0 = 0; i0 < n;) {
        const bool full = i0 + kStrips * kLanes <= n_cos;
        const std::size_t width = full ? kStrips * kLanes : kLanes;
        const std::size_t lanes = std::min(width, n - i0);
        const std::size_t nc = n_cos > i0 ? std::min(lanes, n_cos - i0) : 0;
        float* so = sin_out + row0 * ld + i0 * step;
        float* co = cos_out + row0 * ld + i0 * step;
        // The fast pass over the group; then each strip where the test
        // failed anywhere again alone, with per-row checks.
#define PE_STRIPS(kind, strips)                                                                          \
  if (const unsigned failed = RunStrip<W, strips, kind, false>(freq + i0, s + i0, c + i0, bound, cw + i0,  \
                                                               sw + i0, lanes, nc, pos0, rows, so, co, ld, \
                                                               step))                                      \
    for (std::size_t j = 0; j < static_cast<std::size_t>(strips); ++j)                                    \
      if ((failed >> j) & 1u) {                                                                           \
        const std::size_t at = i0 + j * kLanes;                                                           \
        RunStrip<W, 1, kind, true>(freq + at, s + at, c + at, bound, cw + at, sw + at,                    \
                                   std::min(kLanes, lanes - j * kLanes),                                  \
                                   nc > j * kLanes ? std::min(kLanes, nc - j * kLanes) : 0, pos0, rows,   \
                                   so + j * kLanes * step, co + j * kLanes * step, ld, step);             \
      }
        if (full && interleaved) {
          PE_STRIPS(StripStore::kInterleaved, kStrips);
        } else if (full && step == 1) {
          PE_STRIPS(StripStore::kSplit, kStrips);
        } else if (full) {
          PE_STRIPS(StripStore::kGeneric, kStrips);
        } else if (lanes == kLanes && nc == kLanes && interleaved) {
          PE_STRIPS(StripStore::kInterleaved, 1);
        } else {
          PE_STRIPS(StripStore::kGeneric, 1);
        }
#undef PE_STRIPS
        i0 += width;
      }
    }
  }
}

// All frequencies' (sin, cos) at one position by AnchorLanes, W at a time;
// the last group through zero-padded copies.
template <int W>
PE_VECTOR_INLINE void AnchorsImpl(std::int64_t pos, const double* w_hi, const double* w_lo, std::size_t n,
                                  double* s, double* c) {
  double err = 0;
  std::size_t i = 0;
  for (; i + W <= n; i += W) AnchorLanes<W>(pos, w_hi + i, w_lo + i, s + i, c + i, &err);
  if (i < n) {
    alignas(64) double h[W] = {}, l[W] = {}, ts[W], tc[W];
    for (std::size_t j = 0; i + j < n; ++j) {
      h[j] = w_hi[i + j];
      l[j] = w_lo[i + j];
    }
    AnchorLanes<W>(pos, h, l, ts, tc, &err);
    for (std::size_t j = 0; i + j < n; ++j) {
      s[i + j] = ts[j];
      c[i + j] = tc[j];
    }
  }
}


// Two strips side by side on every instruction set, to hide the latency of
// each recurrence (one AVX-512 strip took 17% longer; four spilled
// registers: 20% longer).
void RunTile(const Frequency* freq, const double* freq_hi, const double* freq_lo, const double* cos_w,
             const double* sin_w, std::size_t n, std::size_t n_cos, std::int64_t first, std::int64_t count,
             float* sin_out, float* cos_out, std::size_t ld, std::size_t step) {
  RunTileImpl<PE_KERNEL_LANES, 2>(freq, freq_hi, freq_lo, cos_w, sin_w, n, n_cos, first, count, sin_out,
                                  cos_out, ld, step);
}

void Anchors(std::int64_t pos, const double* w_hi, const double* w_lo, std::size_t n, double* s, double* c) {
  AnchorsImpl<PE_KERNEL_LANES>(pos, w_hi, w_lo, n, s, c);
}

#ifdef PE_KERNEL_TARGET
#if defined(__clang__)
PE_KERNEL_PRAGMA(clang attribute pop)
#else
PE_KERNEL_PRAGMA(GCC pop_options)
#endif
#undef PE_KERNEL_TARGET
#endif
#undef PE_KERNEL_PRAGMA
#undef PE_KERNEL_PRAGMA_TEXT
#undef PE_KERNEL_LANES
