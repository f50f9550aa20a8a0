// RUN: dequant-opt %s --dq-vectorize --split-input-file | FileCheck %s

// A bf16 output in a non-temporal entry on an AVX512_BF16 host, its rows split into whole lines
// (`_lines`): the line generic is versioned on its scales. A scan of the scales it reads (the
// columns of the rest, extended to f32) checks each is zero or normal and finite: exponent field
// not all ones (255), and not zero unless the magnitude bits (2147483647) are. Then every product
// of an integer and such a scale is 0, normal or infinite, and the tiles round by vcvtne2ps2bf16
// untested (its words through an empty inline asm, so the store keeps its non-temporal hint); any
// other scale takes the tested tiles (vfpclassps per 16 lanes, then a branch).
// CHECK-LABEL: func.func @bf16_plain_scales
// CHECK:       %[[PLAIN:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %true) -> (i1) {
// CHECK:         %[[S:.*]] = memref.load %[[SCALES:.*]][%{{.*}}] : memref<?xbf16, strided<[1], offset: ?>>
// CHECK:         %[[F:.*]] = arith.extf %[[S]] : bf16 to f32
// CHECK:         %[[BITS:.*]] = arith.bitcast %[[F]] : f32 to i32
// CHECK:         %[[E0:.*]] = arith.shrui %[[BITS]], %c23_i32 : i32
// CHECK:         %[[E:.*]] = arith.andi %[[E0]], %c255_i32 : i32
// CHECK:         %[[FINITE:.*]] = arith.cmpi ne, %[[E]], %c255_i32 : i32
// CHECK:         %[[NORMAL:.*]] = arith.cmpi ne, %[[E]], %c0_i32 : i32
// CHECK:         %[[MAG:.*]] = arith.andi %[[BITS]], %c2147483647_i32 : i32
// CHECK:         %[[ZERO:.*]] = arith.cmpi eq, %[[MAG]], %c0_i32 : i32
// CHECK:         %[[NZ:.*]] = arith.ori %[[NORMAL]], %[[ZERO]] : i1
// CHECK:         %[[OK:.*]] = arith.andi %[[FINITE]], %[[NZ]] : i1
// CHECK:         %[[NEXT:.*]] = arith.andi %[[ACC]], %[[OK]] : i1
// CHECK:         scf.yield %[[NEXT]] : i1
// CHECK:       }
// CHECK:       scf.if %[[PLAIN]] {
// CHECK-NOT:     fpclass
// CHECK:         %[[V:.*]] = arith.mulf %{{.*}}, %{{.*}} : vector<32xf32>
// CHECK-NOT:     fpclass
// CHECK:         %[[C:.*]] = llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"
// CHECK:         %[[W:.*]] = arith.bitcast %[[C]] : vector<32xbf16> to vector<32xi16>
// CHECK:         %[[KEPT:.*]] = llvm.inline_asm "", "=v,0" %[[W]] : (vector<32xi16>) -> vector<32xi16>
// CHECK:         %[[Y:.*]] = arith.bitcast %[[KEPT]] : vector<32xi16> to vector<32xbf16>
// CHECK:         vector.store %[[Y]], %{{.*}} {alignment = 64 : i64, nontemporal = true}
// CHECK:       } else {
// CHECK:         llvm.call_intrinsic "llvm.x86.avx512.fpclass.ps.512"
// CHECK:         scf.if %{{.*}} -> (vector<32xi16>) {
// CHECK:         llvm.call_intrinsic "llvm.x86.avx512bf16.cvtne2ps2bf16.512"
// CHECK:         vector.store %{{.*}} {alignment = 64 : i64, nontemporal = true}
#x = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d1)>
module attributes {dq.avx512bw, dq.avx512bf16} {
  func.func @bf16_plain_scales(%x: memref<?x?xi8>, %s: memref<?xbf16>, %y: memref<?x?xbf16>) attributes {dq.nontemporal} {
    linalg.generic {indexing_maps = [#x, #c, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?xbf16>) outs(%y : memref<?x?xbf16>) {
    ^bb0(%a: i8, %b: bf16, %o: bf16):
      %v = arith.sitofp %a : i8 to f32
      %w = arith.extf %b : bf16 to f32
      %r = arith.mulf %v, %w : f32
      %h = arith.truncf %r : f32 to bf16
      linalg.yield %h : bf16
    }
    return
  }
}

// -----

// Not versioned: a float x (its products can be subnormal whatever the scale), and a scale read
// at every element (as large as the output: the scan would double the bytes read).
// CHECK-LABEL: func.func @bf16_float_x
// CHECK-NOT:   2147483647
// CHECK-NOT:   inline_asm
// CHECK-LABEL: func.func @bf16_full_scale
// CHECK-NOT:   2147483647
// CHECK-NOT:   inline_asm
#x = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d1)>
module attributes {dq.avx512bw, dq.avx512bf16} {
  func.func @bf16_float_x(%x: memref<?x?xf8E4M3FN>, %s: memref<?xbf16>, %y: memref<?x?xbf16>) attributes {dq.nontemporal} {
    linalg.generic {indexing_maps = [#x, #c, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xf8E4M3FN>, memref<?xbf16>) outs(%y : memref<?x?xbf16>) {
    ^bb0(%a: f8E4M3FN, %b: bf16, %o: bf16):
      %v = arith.extf %a : f8E4M3FN to f32
      %w = arith.extf %b : bf16 to f32
      %r = arith.mulf %v, %w : f32
      %h = arith.truncf %r : f32 to bf16
      linalg.yield %h : bf16
    }
    return
  }
  func.func @bf16_full_scale(%x: memref<?x?xi8>, %s: memref<?x?xbf16>, %y: memref<?x?xbf16>) attributes {dq.nontemporal} {
    linalg.generic {indexing_maps = [#x, #x, #x], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?x?xbf16>) outs(%y : memref<?x?xbf16>) {
    ^bb0(%a: i8, %b: bf16, %o: bf16):
      %v = arith.sitofp %a : i8 to f32
      %w = arith.extf %b : bf16 to f32
      %r = arith.mulf %v, %w : f32
      %h = arith.truncf %r : f32 to bf16
      linalg.yield %h : bf16
    }
    return
  }
}
