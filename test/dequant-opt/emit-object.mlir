// Ahead-of-time: --emit=object writes a native object and a C header beside it; a C program
// (test/c/main.c) links the object and checks the kernels' numbers.
// REQUIRES: cc
// RUN: rm -rf %t && mkdir -p %t
// RUN: dequant-opt %S/../c/kernels.mlir --emit=object -o %t/kernels.o
// RUN: FileCheck %s --check-prefix=HEADER < %t/kernels.h
// RUN: cc -no-pie -I %t %S/../c/main.c %t/kernels.o -o %t/c-test
// RUN: %t/c-test | FileCheck %s --check-prefix=EXE
// RUN: not dequant-opt %S/../c/kernels.mlir --emit=object 2>&1 | FileCheck %s --check-prefix=NOOUT
// The header comes too when the passes given already lower to LLVM (it is made from the input's
// signatures), at --header's path when given:
// RUN: dequant-opt %S/../c/kernels.mlir --dq-to-llvm --emit=object -o %t/lowered.o --header %t/named.h
// RUN: FileCheck %s --check-prefix=HEADER < %t/named.h
// A header that cannot be written is an error line, and no object is left behind:
// RUN: not dequant-opt %S/../c/kernels.mlir --emit=object -o %t/orphan.o --header %t/missing/k.h 2>&1 | FileCheck %s --check-prefix=BADHEADER
// RUN: not ls %t/orphan.o
// --header without --emit=object is an error, not ignored:
// RUN: not dequant-opt %S/../c/kernels.mlir --header %t/x.h 2>&1 | FileCheck %s --check-prefix=HEADERONLY
// An input already in the LLVM dialect has no tensor signatures: the object, and a note.
// RUN: dequant-opt %S/../c/kernels.mlir --dq-to-llvm -o %t/llvm.mlir
// RUN: dequant-opt %t/llvm.mlir --emit=object -o %t/llvm.o 2>&1 | FileCheck %s --check-prefix=NOHEADER

// HEADER: typedef struct { int8_t *allocated; int8_t *aligned; int64_t offset; int64_t sizes[2]; int64_t strides[2]; } dq_memref_2d_i8;
// HEADER: typedef struct { float *allocated; float *aligned; int64_t offset; } dq_memref_0d_f32;
// HEADER: Two entry points per kernel, same arguments, same values: _mlir_ciface_<name> stores through
// HEADER: /* per_axis(i8[?x?], f32[?], i8[?]) */
// HEADER-NEXT: void _mlir_ciface_per_axis(dq_memref_2d_f32 *result0, dq_memref_2d_i8 *arg0, dq_memref_1d_f32 *arg1, dq_memref_1d_i8 *arg2);
// HEADER-NEXT: void _mlir_ciface_per_axis_nt(dq_memref_2d_f32 *result0, dq_memref_2d_i8 *arg0, dq_memref_1d_f32 *arg1, dq_memref_1d_i8 *arg2); /* non-temporal stores */
// HEADER: void _mlir_ciface_blocked_i4(dq_memref_2d_f32 *result0, dq_memref_2d_i8 *arg0, dq_memref_2d_f32 *arg1);
// HEADER: void _mlir_ciface_pmx_int4(dq_memref_2d_f32 *result0, dq_memref_2d_i16 *arg0, dq_memref_0d_f32 *arg1);
// HEADER: void dequant_report_error(int64_t code);

// EXE: dequant C test: 420 checks, 0 failures

// NOOUT: error: --emit=object needs -o FILE
// BADHEADER: dequant-opt: error: cannot write the header '{{.*}}missing/k.h': No such file or directory
// HEADERONLY: dequant-opt: error: --header is written with --emit=object only
// NOHEADER: dequant-opt: note: no C header written: the input has no tensor-level public function
