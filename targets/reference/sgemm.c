/*
 * sgemm.c - the reference target's f32 matrix multiply engine, used by
 * matmul, gemm, conv2d (after im2col), conv_transpose2d and, for integer
 * valued operands, by qconv2d and qmatmul (quill_ref_sgemm_i32).
 *
 * The loop nest is the Goto/BLIS one, in portable C11 (no intrinsics):
 *
 *   for jc in N step NC:              B block [kb x nb], packed into NR-wide
 *     for pc in K step KC:            micro-panels (k-major, zero padded)
 *       pack B[pc.., jc..] -> Bp
 *       for ic in M step MC:          A block [mb x kb], packed into MR-tall
 *         pack A[ic.., pc..] -> Ap    micro-panels (k-major, zero padded)
 *         for jr in nb step NR:       micro-panel of Bp stays in L1
 *           for ir in mb step MR:
 *             tile[MR x NR] = Ap[ir] * Bp[jr]      (micro-kernel)
 *             C[ic+ir.., jc+jr..] (+)= tile        (clipped at the edges)
 *
 * The micro-kernel keeps its MR x NR accumulators in a local array with
 * compile-time bounds; fully unrolled, the compiler keeps them in vector
 * registers and turns the j loop into SIMD multiplies and adds:
 *
 *   for k < kb:  acc[i][j] += Ap[k][i] * Bp[k][j]   (i < MR, j < NR)
 *
 * MR x NR is 8 x 8 for SSE2 (measured best among 4x8, 6x8, 8x8, 4x16 and
 * 6x16 with GCC 12: about 35 GFLOP/s on a 2.6 GHz AVX-512 Xeon, whose SSE2
 * peak without FMA is 41.6) and 6 x 16 when the compiler targets AVX
 * (-march with AVX or AVX-512).
 * Packing goes through row and column strides, so transposed operands cost
 * nothing extra. Each element of C is the sum of its K-block partial sums
 * in block order, each block summed in k order, with separate multiplies
 * and adds (ISO C forbids contracting them into FMAs), so the result does
 * not depend on the tile position.
 *
 * Fewer than 4 rows (an FC layer at batch 1) skip packing: each row of C
 * is an axpy along B's rows, or, for a transposed B, dot products summed
 * in 8 interleaved lanes.
 *
 * quill_ref_sgemm_i32 runs the same engine on floats that hold integers:
 * as long as every partial sum over a K block stays within 2^24 in
 * magnitude, f32 arithmetic is exact, so each block's tile converts to
 * int32 exactly and is added to the int32 C (wrapping modulo 2^32). The
 * caller picks the block length from the operands' largest magnitudes.
 */
#include <string.h>

#include "targets/reference/kernels.h"
#include "targets/reference/sgemm_order.h"

#if defined(__AVX__)
enum { MR = 6, NR = 16 };
#else
enum { MR = 8, NR = 8 };
#endif
enum { KC = QUILL_REF_SGEMM_KC, MC = 96, NC = 4096 };

/* Fully unroll a loop with constant bounds (the micro-kernel's). */
#if defined(__clang__)
#define UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define UNROLL _Pragma("GCC unroll 32")
#else
#define UNROLL
#endif

static size_t min_sz(size_t a, size_t b) { return a < b ? a : b; }
static size_t round_up(size_t a, size_t m) { return (a + m - 1) / m * m; }

/* tile[MR][NR] = a[kb][MR]^T * b[kb][NR]. */
static void micro_kernel(size_t kb, const float *restrict a,
                         const float *restrict b, float *restrict tile) {
  float acc[MR][NR];
  UNROLL for (int i = 0; i < MR; i++)
    UNROLL for (int j = 0; j < NR; j++)
      acc[i][j] = 0.0f;
  for (size_t k = 0; k < kb; k++) {
    UNROLL for (int i = 0; i < MR; i++) {
      const float ai = a[i];
      UNROLL for (int j = 0; j < NR; j++)
        acc[i][j] += ai * b[j];
    }
    a += MR;
    b += NR;
  }
  UNROLL for (int i = 0; i < MR; i++)
    UNROLL for (int j = 0; j < NR; j++)
      tile[i * NR + j] = acc[i][j];
}

/* Pack B(k, j), k < kb, j < nb (B(k,j) = b[k*rsb + j*csb]) into NR-wide
 * micro-panels: panel jr at bp + jr*kb holds [kb][NR], zero padded. The
 * loops follow B's memory order (rows for csb == 1, else columns). */
static void pack_b(const float *b, ptrdiff_t rsb, ptrdiff_t csb, size_t kb,
                   size_t nb, float *restrict bp) {
  if (csb == 1) {
    for (size_t k = 0; k < kb; k++)
      quill_ref_pack_b_row(bp, kb, nb, k, b + (ptrdiff_t)k * rsb);
    return;
  }
  for (size_t jr = 0; jr < nb; jr += NR) {
    float *panel = bp + jr * kb;
    size_t w = min_sz(NR, nb - jr);
    for (size_t j = 0; j < NR; j++) {
      const float *src = b + (ptrdiff_t)(jr + j) * csb;
      for (size_t k = 0; k < kb; k++)
        panel[k * NR + j] = j < w ? src[(ptrdiff_t)k * rsb] : 0.0f;
    }
  }
}

size_t quill_ref_packed_b_size(size_t K, size_t N) {
  return round_up(N, NR) * K;
}

void quill_ref_pack_b_row(float *restrict bp, size_t K, size_t N, size_t k,
                          const float *restrict row) {
  size_t jr = 0;
  for (; jr + NR <= N; jr += NR)
    memcpy(bp + jr * K + k * NR, row + jr, NR * sizeof(float));
  if (jr < N) {
    float *dst = bp + jr * K + k * NR;
    size_t j = 0;
    for (; jr + j < N; j++)
      dst[j] = row[jr + j];
    for (; j < NR; j++)
      dst[j] = 0.0f;
  }
}

/* Pack A(i, k), i < mb, k < kb into MR-tall micro-panels: panel ir at
 * ap + ir*kb holds [kb][MR], zero padded. */
static void pack_a(const float *a, ptrdiff_t rsa, ptrdiff_t csa, size_t mb,
                   size_t kb, float *restrict ap) {
  for (size_t ir = 0; ir < mb; ir += MR) {
    float *panel = ap + ir * kb;
    for (size_t i = 0; i < MR; i++) {
      if (ir + i >= mb) {
        for (size_t k = 0; k < kb; k++)
          panel[k * MR + i] = 0.0f;
        continue;
      }
      const float *src = a + (ptrdiff_t)(ir + i) * rsa;
      for (size_t k = 0; k < kb; k++)
        panel[k * MR + i] = src[(ptrdiff_t)k * csa];
    }
  }
}

/* Where the tiles go: f32 C or int32 C (exactly one non-NULL). */
typedef struct gemm_out {
  float *f;
  int32_t *i;
  size_t ldc;
} gemm_out;

/* C[r0.., c0..] (+)= tile, clipped to rows x cols. */
static void store_tile(const gemm_out *o, size_t r0, size_t c0, size_t rows,
                       size_t cols, const float *tile, bool add) {
  for (size_t i = 0; i < rows; i++) {
    const float *t = tile + i * NR;
    if (o->f) {
      float *c = o->f + (r0 + i) * o->ldc + c0;
      if (add)
        for (size_t j = 0; j < cols; j++)
          c[j] += t[j];
      else
        memcpy(c, t, cols * sizeof(float));
    } else {
      int32_t *c = o->i + (r0 + i) * o->ldc + c0;
      for (size_t j = 0; j < cols; j++) {
        uint32_t v = (uint32_t)(int32_t)t[j]; /* exact: |t| <= 2^24 */
        if (add)
          v += (uint32_t)c[j]; /* wraps modulo 2^32 */
        c[j] = (int32_t)v;
      }
    }
  }
}

/* C (+)= A * B for a few rows of A (M < SMALL_M), where packing would
 * waste most of the MR-tall micro-kernel: per row and K block, either
 * axpy along B's rows (B row-major) or dot products along k in LANES
 * independent partial sums (B transposed, e.g. gemm's trans_b), then the
 * row goes to C as one tile. row holds N floats. */
enum { SMALL_M = QUILL_REF_SGEMM_SMALL_M, LANES = QUILL_REF_SGEMM_LANES };
_Static_assert(LANES == 8, "the lane reduction below adds 8 lanes");

static void gemm_small_m(size_t M, size_t N, size_t K, const float *A,
                         ptrdiff_t rsa, ptrdiff_t csa, const float *B,
                         ptrdiff_t rsb, ptrdiff_t csb, const gemm_out *o,
                         bool accumulate, size_t kc, float *restrict row) {
  for (size_t i = 0; i < M; i++)
    for (size_t pc = 0; pc < K; pc += kc) {
      size_t kb = min_sz(kc, K - pc);
      const float *a = A + (ptrdiff_t)i * rsa + (ptrdiff_t)pc * csa;
      const float *b = B + (ptrdiff_t)pc * rsb;
      if (csb == 1) {
        memset(row, 0, N * sizeof(float));
        for (size_t k = 0; k < kb; k++) {
          const float ak = a[(ptrdiff_t)k * csa];
          const float *restrict bk = b + (ptrdiff_t)k * rsb;
          for (size_t j = 0; j < N; j++)
            row[j] += ak * bk[j];
        }
      } else {
        for (size_t j = 0; j < N; j++) {
          const float *bj = b + (ptrdiff_t)j * csb;
          float lane[LANES] = {0};
          size_t k = 0;
          if (csa == 1 && rsb == 1) /* both contiguous along k */
            for (; k + LANES <= kb; k += LANES)
              UNROLL for (int t = 0; t < LANES; t++)
                lane[t] += a[k + t] * bj[k + t];
          for (; k + LANES <= kb; k += LANES)
            UNROLL for (int t = 0; t < LANES; t++)
              lane[t] += a[(ptrdiff_t)(k + t) * csa] *
                         bj[(ptrdiff_t)(k + t) * rsb];
          for (int t = 0; k < kb; k++, t++)
            lane[t] += a[(ptrdiff_t)k * csa] * bj[(ptrdiff_t)k * rsb];
          row[j] = ((lane[0] + lane[1]) + (lane[2] + lane[3])) +
                   ((lane[4] + lane[5]) + (lane[6] + lane[7]));
        }
      }
      store_tile(o, i, 0, 1, N, row, accumulate || pc > 0);
    }
}

/* The driver. B is either strided (B(k,j) = B[k*rsb + j*csb]) or, if
 * packed_b, the whole of B pre-packed by quill_ref_pack_b_row (the K-block
 * [pc, pc+kb) of panel jr is then contiguous at B + jr*K + pc*NR). */
static quill_status gemm_run(quill_context *ctx, size_t M, size_t N, size_t K,
                             const float *A, ptrdiff_t rsa, ptrdiff_t csa,
                             const float *B, ptrdiff_t rsb, ptrdiff_t csb,
                             bool packed_b, const gemm_out *o, bool accumulate,
                             size_t kc_max) {
  if (M == 0 || N == 0)
    return QUILL_OK;
  if (K == 0) {
    if (!accumulate)
      for (size_t i = 0; i < M; i++) {
        if (o->f)
          memset(o->f + i * o->ldc, 0, N * sizeof(float));
        else
          memset(o->i + i * o->ldc, 0, N * sizeof(int32_t));
      }
    return QUILL_OK;
  }
  size_t kc = min_sz(KC, kc_max ? kc_max : 1);
  if (M < SMALL_M && !packed_b) {
    float *row = quill_alloc(ctx, N * sizeof(float));
    if (!row)
      return QUILL_ERR_NOMEM;
    gemm_small_m(M, N, K, A, rsa, csa, B, rsb, csb, o, accumulate, kc, row);
    quill_free(ctx, row, N * sizeof(float));
    return QUILL_OK;
  }
  size_t kmax = min_sz(K, kc);
  size_t bsz = packed_b ? 0 : round_up(min_sz(N, NC), NR) * kmax;
  size_t asz = round_up(min_sz(M, MC), MR) * kmax;
  float *Bp = bsz ? quill_alloc(ctx, bsz * sizeof(float)) : NULL;
  float *Ap = quill_alloc(ctx, asz * sizeof(float));
  if ((bsz && !Bp) || !Ap) {
    quill_free(ctx, Bp, bsz * sizeof(float));
    quill_free(ctx, Ap, asz * sizeof(float));
    return QUILL_ERR_NOMEM;
  }
  float tile[MR * NR];
  for (size_t jc = 0; jc < N; jc += NC) {
    size_t nb = min_sz(NC, N - jc);
    for (size_t pc = 0; pc < K; pc += kc) {
      size_t kb = min_sz(kc, K - pc);
      bool add = accumulate || pc > 0;
      if (!packed_b)
        pack_b(B + (ptrdiff_t)pc * rsb + (ptrdiff_t)jc * csb, rsb, csb, kb,
               nb, Bp);
      for (size_t ic = 0; ic < M; ic += MC) {
        size_t mb = min_sz(MC, M - ic);
        pack_a(A + (ptrdiff_t)ic * rsa + (ptrdiff_t)pc * csa, rsa, csa, mb, kb,
               Ap);
        for (size_t jr = 0; jr < nb; jr += NR)
          for (size_t ir = 0; ir < mb; ir += MR) {
            const float *bpanel =
                packed_b ? B + (jc + jr) * K + pc * NR : Bp + jr * kb;
            micro_kernel(kb, Ap + ir * kb, bpanel, tile);
            store_tile(o, ic + ir, jc + jr, min_sz(MR, mb - ir),
                       min_sz(NR, nb - jr), tile, add);
          }
      }
    }
  }
  quill_free(ctx, Bp, bsz * sizeof(float));
  quill_free(ctx, Ap, asz * sizeof(float));
  return QUILL_OK;
}

quill_status quill_ref_sgemm(quill_context *ctx, size_t M, size_t N, size_t K,
                             const float *A, ptrdiff_t rsa, ptrdiff_t csa,
                             const float *B, ptrdiff_t rsb, ptrdiff_t csb,
                             float *C, size_t ldc, bool accumulate) {
  gemm_out o = {C, NULL, ldc};
  return gemm_run(ctx, M, N, K, A, rsa, csa, B, rsb, csb, false, &o,
                  accumulate, KC);
}

quill_status quill_ref_sgemm_packed(quill_context *ctx, size_t M, size_t N,
                                    size_t K, const float *A, ptrdiff_t rsa,
                                    ptrdiff_t csa, const float *Bp, float *C,
                                    size_t ldc, bool accumulate) {
  gemm_out o = {C, NULL, ldc};
  return gemm_run(ctx, M, N, K, A, rsa, csa, Bp, 0, 0, true, &o, accumulate,
                  KC);
}

quill_status quill_ref_sgemm_i32(quill_context *ctx, size_t M, size_t N,
                                 size_t K, const float *A, ptrdiff_t rsa,
                                 ptrdiff_t csa, const float *B, ptrdiff_t rsb,
                                 ptrdiff_t csb, int32_t *C, size_t ldc,
                                 bool accumulate, size_t kc_max) {
  gemm_out o = {NULL, C, ldc};
  return gemm_run(ctx, M, N, K, A, rsa, csa, B, rsb, csb, false, &o,
                  accumulate, kc_max);
}

quill_status quill_ref_sgemm_packed_i32(quill_context *ctx, size_t M,
                                        size_t N, size_t K, const float *A,
                                        ptrdiff_t rsa, ptrdiff_t csa,
                                        const float *Bp, int32_t *C,
                                        size_t ldc, bool accumulate,
                                        size_t kc_max) {
  gemm_out o = {NULL, C, ldc};
  return gemm_run(ctx, M, N, K, A, rsa, csa, Bp, 0, 0, true, &o, accumulate,
                  kc_max);
}

size_t quill_ref_exact_block(double max_a, double max_b) {
  double p = max_a * max_b;
  if (p <= 0)
    return SIZE_MAX;
  double n = 16777216.0 / p; /* 2^24: every partial sum is exact in f32 */
  return n >= (double)KC ? KC : (size_t)n;
}
