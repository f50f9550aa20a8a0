/* Links the object `dequant-opt test/c/kernels.mlir --emit=object` writes, runs its kernels on
   fixed data through the generated header, and checks every number against values computed by
   hand from the specs. Exit status 0 when all match. */
#include <stdio.h>
#include <stdlib.h>

#include "kernels.h"

static int failures = 0, checks = 0, reported = 0;
static int64_t last_code = 0;

/* The kernels call this for each run-time shape check they fail (kernels.h). */
void dequant_report_error(int64_t code) {
  ++reported;
  last_code = code;
}

static void expect(const char *kernel, const float *got, const float *want, int n) {
  for (int i = 0; i < n; ++i, ++checks)
    if (got[i] != want[i]) {
      printf("%s[%d]: got %g, want %g\n", kernel, i, got[i], want[i]);
      ++failures;
    }
}

/* per_axis and per_axis_nt on an R x C array: both must give the values computed by hand. */
static void both_entry_points(int R, int C) {
  int8_t *x = malloc((size_t)R * C), *z = malloc((size_t)R);
  float *s = malloc(sizeof(float) * R), *want = malloc(sizeof(float) * R * C);
  for (int i = 0; i < R * C; ++i) x[i] = (int8_t)(i * 7 - 100);
  for (int r = 0; r < R; ++r) {
    s[r] = 0.25f * (float)(r + 1);
    z[r] = (int8_t)(r - 1);
  }
  for (int i = 0; i < R * C; ++i) want[i] = (float)(x[i] - z[i / C]) * s[i / C];
  dq_memref_2d_i8 xd = {x, x, 0, {R, C}, {C, 1}};
  dq_memref_1d_f32 sd = {s, s, 0, {R}, {1}};
  dq_memref_1d_i8 zd = {z, z, 0, {R}, {1}};
  dq_memref_2d_f32 plain, nt;
  _mlir_ciface_per_axis(&plain, &xd, &sd, &zd);
  _mlir_ciface_per_axis_nt(&nt, &xd, &sd, &zd);
  expect("per_axis", plain.aligned + plain.offset, want, R * C);
  expect("per_axis_nt", nt.aligned + nt.offset, want, R * C);
  free(plain.allocated);
  free(nt.allocated);
  free(x), free(z), free(s), free(want);
}

int main(void) {
  /* ONNX per-axis (axis 0): y = (x - z[row]) * s[row]. */
  int8_t x[6] = {1, -2, 3, 4, 5, -6};
  float s[2] = {0.5f, 2.0f};
  int8_t z[2] = {1, -1};
  dq_memref_2d_i8 xd = {x, x, 0, {2, 3}, {3, 1}};
  dq_memref_1d_f32 sd = {s, s, 0, {2}, {1}};
  dq_memref_1d_i8 zd = {z, z, 0, {2}, {1}};
  dq_memref_2d_f32 y;
  _mlir_ciface_per_axis(&y, &xd, &sd, &zd);
  const float want_axis[6] = {0.0f, -1.5f, 1.0f, 10.0f, 12.0f, -10.0f};
  if (y.sizes[0] != 2 || y.sizes[1] != 3) { printf("per_axis: wrong shape\n"); return 1; }
  expect("per_axis", y.aligned + y.offset, want_axis, 6);
  free(y.allocated);

  /* ONNX int4 blocked (block 2 along axis 1), one value per byte: y = x * s[row][col / 2]. */
  int8_t x4[8] = {-8, 7, 1, -1, 2, 3, -4, 0};
  float s4[4] = {1.0f, 0.5f, 2.0f, 0.25f};
  dq_memref_2d_i8 x4d = {x4, x4, 0, {2, 4}, {4, 1}};
  dq_memref_2d_f32 s4d = {s4, s4, 0, {2, 2}, {2, 1}};
  _mlir_ciface_blocked_i4(&y, &x4d, &s4d);
  const float want_blocked[8] = {-8.0f, 7.0f, 0.5f, -0.5f, 4.0f, 6.0f, -1.0f, 0.0f};
  expect("blocked_i4", y.aligned + y.offset, want_blocked, 8);
  free(y.allocated);

  /* OpenPPL int4x4: nibble k of X[0][c] is row k, value nibble - 8, times 0.5.
     0x4321 -> 1,2,3,4 -> -7,-6,-5,-4; 0xF80F -> 15,0,8,15 -> 7,-8,0,7. */
  int16_t xp[2] = {0x4321, (int16_t)0xF80F};
  float sp = 0.5f;
  dq_memref_2d_i16 xpd = {xp, xp, 0, {1, 2}, {2, 1}};
  dq_memref_0d_f32 spd = {&sp, &sp, 0};
  _mlir_ciface_pmx_int4(&y, &xpd, &spd);
  const float want_pmx[8] = {-3.5f, 3.5f, -3.0f, -4.0f, -2.5f, 0.0f, -2.0f, 3.5f};
  if (y.sizes[0] != 4 || y.sizes[1] != 2) { printf("pmx_int4: wrong shape\n"); return 1; }
  expect("pmx_int4", y.aligned + y.offset, want_pmx, 8);
  free(y.allocated);

  /* ONNX int4 packed (element 2i in the low nibble of byte i): 3x5 elements 0, 1, ..., 7, -8, ..., -2
     in 8 bytes, times 0.5. */
  uint8_t xq[8] = {0x10, 0x32, 0x54, 0x76, 0x98, 0xBA, 0xDC, 0x0E};
  float sq = 0.5f;
  dq_memref_2d_u8 xqd = {xq, xq, 0, {3, 5}, {5, 1}};
  dq_memref_0d_f32 sqd = {&sq, &sq, 0};
  _mlir_ciface_packed_i4(&y, &xqd, &sqd);
  float want_packed[15];
  for (int i = 0; i < 15; ++i) want_packed[i] = 0.5f * (float)(i < 8 ? i : i - 16);
  if (y.sizes[0] != 3 || y.sizes[1] != 5) { printf("packed_i4: wrong shape\n"); return 1; }
  expect("packed_i4", y.aligned + y.offset, want_packed, 15);
  free(y.allocated);

  /* A scale of the wrong length: reported through dequant_report_error, nothing is read past it. */
  float s_short[1] = {1.0f};
  dq_memref_1d_f32 sd_short = {s_short, s_short, 0, {1}, {1}};
  _mlir_ciface_per_axis(&y, &xd, &sd_short, &zd);
  ++checks;
  if (reported != 1 || dequant_error_operand_dim(last_code) != 0 || dequant_error_output_dim(last_code) != 0 ||
      (last_code >> 40) != 1) {
    printf("per_axis with a short scale: %d reports, last code %lld (%s)\n", reported, (long long)last_code,
           dequant_error_operand(last_code));
    ++failures;
  }
  free(y.allocated);

  /* The non-temporal entry point computes the same values: rows of 37 (two whole tiles of 16 and
     a partial one; rows not 16-byte aligned) and of 40 (16-byte aligned rows). */
  both_entry_points(3, 37);
  both_entry_points(2, 40);

  printf("dequant C test: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
