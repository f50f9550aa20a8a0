// RUN: dequant-opt %s --dq-vectorize --split-input-file | FileCheck %s

// Non-temporal tiles are at most one line and divide the block. A prime block longer than one
// line's values divides into tiles of one element only: under the smallest tile (16 bytes), the
// generic is left to LLVM as the plan of a cached-store generic would be (tiling it by 1 once
// failed: "failed to peel the last iteration", the `_nt` entry of every such kernel).

#x = affine_map<(d0, d1) -> (d0, d1)>
#b = affine_map<(d0, d1) -> (d0, d1 floordiv 37)>

// CHECK-LABEL: func.func @f32_block_of_37_nt
// CHECK-SAME:  (%[[X:.*]]: memref<?x?xi8>, %[[S:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CHECK-NOT:   vector.
// CHECK:       linalg.generic {{.*}} ins(%[[X]], %[[S]] : memref<?x?xi8>, memref<?x?xf32>) outs(%[[Y]] : memref<?x?xf32>)
// CHECK-NOT:   vector.
// CHECK:       return
func.func @f32_block_of_37_nt(%x: memref<?x?xi8>, %s: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {dq.nontemporal} {
  linalg.generic {indexing_maps = [#x, #b, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %v = arith.sitofp %a : i8 to f32
    %r = arith.mulf %v, %b : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// 17 f16 values (34 bytes) fit one line: one tile per block, its stores non-temporal (element
// aligned: the tile is not a multiple of 16 bytes).
#x = affine_map<(d0, d1) -> (d0, d1)>
#b = affine_map<(d0, d1) -> (d0, d1 floordiv 17)>

// CHECK-LABEL: func.func @f16_block_of_17_nt
// CHECK:       scf.for %{{.*}} step %[[C17:.*]] {
// CHECK:         %[[XV:.*]] = vector.load %{{.*}} : memref<17xi8, {{.*}}>, vector<17xi8>
// CHECK:         vector.store %{{.*}} {nontemporal = true} : memref<17xf16, {{.*}}>, vector<17xf16>
// CHECK:       }
// CHECK-NOT:   linalg.generic
func.func @f16_block_of_17_nt(%x: memref<?x?xi8>, %s: memref<?x?xf16>, %y: memref<?x?xf16>) attributes {dq.nontemporal} {
  linalg.generic {indexing_maps = [#x, #b, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?x?xf16>) outs(%y : memref<?x?xf16>) {
  ^bb0(%a: i8, %b: f16, %o: f16):
    %v = arith.sitofp %a : i8 to f32
    %w = arith.extf %b : f16 to f32
    %r = arith.mulf %v, %w : f32
    %h = arith.truncf %r : f32 to f16
    linalg.yield %h : f16
  }
  return
}
