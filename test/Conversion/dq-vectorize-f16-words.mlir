// RUN: dequant-opt %s --dq-vectorize --split-input-file | FileCheck %s

// An f16 output in a non-temporal entry on an AVX-512BW host (`f16_words`): the converted tile's
// words pass through an empty inline asm, one per 512 bits, so that the store keeps its
// non-temporal hint on AVX512-FP16 CPUs (LLVM folds a plain bitcast back into an f16 store, which
// it selects as `vmovaps`).
// CHECK-LABEL: func.func @f16_nontemporal
// CHECK:         %[[H:.*]] = arith.truncf %{{.*}} : vector<{{[0-9]+}}xf32> to vector<[[N:[0-9]+]]xf16>
// CHECK:         %[[W:.*]] = arith.bitcast %[[H]] : vector<[[N]]xf16> to vector<[[N]]xi16>
// CHECK:         llvm.inline_asm "", "=v,0" %{{.*}} : (vector<{{8|16|32}}xi16>) -> vector<{{8|16|32}}xi16>
// CHECK:         %[[Y:.*]] = arith.bitcast %{{.*}} : vector<[[N]]xi16> to vector<[[N]]xf16>
// CHECK:         vector.store %[[Y]], %{{.*}} {{{.*}}nontemporal = true}
#x = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d1)>
module attributes {dq.avx512bw} {
  func.func @f16_nontemporal(%x: memref<?x?xi8>, %s: memref<?xf32>, %y: memref<?x?xf16>) attributes {dq.nontemporal} {
    linalg.generic {indexing_maps = [#x, #c, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?xf32>) outs(%y : memref<?x?xf16>) {
    ^bb0(%a: i8, %b: f32, %o: f16):
      %v = arith.sitofp %a : i8 to f32
      %r = arith.mulf %v, %b : f32
      %h = arith.truncf %r : f32 to f16
      linalg.yield %h : f16
    }
    return
  }
}

// -----

// The cached entry (no dq.nontemporal): the conversion stored as it is.
// CHECK-LABEL: func.func @f16_plain
// CHECK-NOT:     llvm.inline_asm
// CHECK:         return
#x = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d1)>
module attributes {dq.avx512bw} {
  func.func @f16_plain(%x: memref<?x?xi8>, %s: memref<?xf32>, %y: memref<?x?xf16>) {
    linalg.generic {indexing_maps = [#x, #c, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?xf32>) outs(%y : memref<?x?xf16>) {
    ^bb0(%a: i8, %b: f32, %o: f16):
      %v = arith.sitofp %a : i8 to f32
      %r = arith.mulf %v, %b : f32
      %h = arith.truncf %r : f32 to f16
      linalg.yield %h : f16
    }
    return
  }
}
