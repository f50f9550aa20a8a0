// RUN: dequant-opt %s --dq-vectorize --split-input-file | FileCheck %s

// Packed fields by vpmultishiftqb (module tagged dq.avx512vbmi by dq-target-features on an
// AVX-512 VBMI host): an i32 tile of 16k lanes from whole qwords of packed bytes is made 16 lanes
// at a time. The qword holding the 16 fields is broadcast to 512 bits; one vpmultishiftqb puts
// the byte-wide window ending at field j's last bit in byte 3 of i32 lane j (control byte 4j + 3:
// bit offset 4j - 4 mod 64 for 4-bit fields, so lane 0 wraps to 60); one shift by 28 takes the
// field down, arithmetic for signed fields. No interleave, no widening. The tag is consumed.

#x3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#t3 = affine_map<(d0, d1, d2) -> ()>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// CHECK-LABEL: func.func @signed_int4
// CHECK-NOT: dq.avx512vbmi
// CHECK:     %[[BYTES:.*]] = vector.load %{{.*}} : memref<32xi8, {{.*}}>, vector<32xi8>
// CHECK:     %[[Q:.*]] = vector.bitcast %[[BYTES]] : vector<32xi8> to vector<4xi64>
// CHECK:     %[[CTRL:.*]] = arith.constant dense<[0, 0, 0, 60, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 8, {{.*}}, 0, 0, 0, 56]> : vector<64xi8>
// CHECK:     %[[Q0:.*]] = vector.extract %[[Q]][0] : i64 from vector<4xi64>
// CHECK:     %[[B0:.*]] = vector.broadcast %[[Q0]] : i64 to vector<8xi64>
// CHECK:     %[[D0:.*]] = vector.bitcast %[[B0]] : vector<8xi64> to vector<64xi8>
// CHECK:     %[[M0:.*]] = llvm.call_intrinsic "llvm.x86.avx512.pmultishift.qb.512"(%[[CTRL]], %[[D0]]) : (vector<64xi8>, vector<64xi8>) -> vector<64xi8>
// CHECK:     %[[W0:.*]] = vector.bitcast %[[M0]] : vector<64xi8> to vector<16xi32>
// CHECK:     %[[C28:.*]] = arith.constant dense<28> : vector<16xi32>
// CHECK:     %[[F0:.*]] = arith.shrsi %[[W0]], %[[C28]] : vector<16xi32>
// CHECK:     %[[Q1:.*]] = vector.extract %[[Q]][1] : i64 from vector<4xi64>
// CHECK:     llvm.call_intrinsic "llvm.x86.avx512.pmultishift.qb.512"(%[[CTRL]], %{{.*}})
// CHECK:     %[[Q3:.*]] = vector.extract %[[Q]][3] : i64 from vector<4xi64>
// CHECK:     llvm.call_intrinsic "llvm.x86.avx512.pmultishift.qb.512"(%[[CTRL]], %{{.*}})
// CHECK:     %[[F3:.*]] = arith.shrsi %{{.*}}, %[[C28]] : vector<16xi32>
// CHECK:     %[[F01:.*]] = vector.shuffle %[[F0]], %{{.*}} [0, 1, {{.*}}, 31] : vector<16xi32>, vector<16xi32>
// CHECK:     %[[F23:.*]] = vector.shuffle %{{.*}}, %[[F3]] [0, 1, {{.*}}, 31] : vector<16xi32>, vector<16xi32>
// CHECK:     %[[ALL:.*]] = vector.shuffle %[[F01]], %[[F23]] [0, 1, {{.*}}, 63] : vector<32xi32>, vector<32xi32>
// CHECK-NOT: vector.interleave
// CHECK:     arith.sitofp %[[ALL]] : vector<64xi32> to vector<64xf32>
module attributes {dq.avx512vbmi} {
  func.func @signed_int4(%x: memref<?x?xi8>, %s: memref<f32>, %y: memref<?x?x2xf32>) {
    %c4 = arith.constant 4 : i32
    %c28 = arith.constant 28 : i32
    linalg.generic {indexing_maps = [#x3, #t3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<f32>) outs(%y : memref<?x?x2xf32>) {
    ^bb0(%a: i8, %b: f32, %o: f32):
      %k = linalg.index 2 : index
      %ki = arith.index_cast %k : index to i32
      %sh = arith.muli %ki, %c4 : i32
      %up = arith.subi %c28, %sh : i32
      %w = arith.extui %a : i8 to i32
      %l = arith.shli %w, %up : i32
      %f = arith.shrsi %l, %c28 : i32
      %v = arith.sitofp %f : i32 to f32
      %r = arith.mulf %v, %b : f32
      linalg.yield %r : f32
    }
    return
  }
}

// -----

// Four unsigned 2-bit fields per byte: 16 lanes are half a qword, so lanes 16-31 read the same
// qword from bit 32 (a second control: offsets 26, 28, ..., 56), and the shift is logical, by 30.
// CHECK-LABEL: func.func @uint2
// CHECK:     %[[Q:.*]] = vector.bitcast %{{.*}} : vector<16xi8> to vector<2xi64>
// CHECK:     %[[LOW:.*]] = arith.constant dense<[0, 0, 0, 58, 0, 0, 0, 60, 0, 0, 0, 62, 0, 0, 0, 0, 0, 0, 0, 2, {{.*}}]> : vector<64xi8>
// CHECK:     %[[Q0:.*]] = vector.extract %[[Q]][0] : i64 from vector<2xi64>
// CHECK:     llvm.call_intrinsic "llvm.x86.avx512.pmultishift.qb.512"(%[[LOW]], %{{.*}})
// CHECK:     %[[C30:.*]] = arith.constant dense<30> : vector<16xi32>
// CHECK:     arith.shrui %{{.*}}, %[[C30]] : vector<16xi32>
// CHECK:     %[[HIGH:.*]] = arith.constant dense<[0, 0, 0, 26, 0, 0, 0, 28, {{.*}}, 0, 0, 0, 56]> : vector<64xi8>
// CHECK:     vector.extract %[[Q]][0] : i64 from vector<2xi64>
// CHECK:     llvm.call_intrinsic "llvm.x86.avx512.pmultishift.qb.512"(%[[HIGH]], %{{.*}})
// CHECK:     vector.extract %[[Q]][1] : i64 from vector<2xi64>
// CHECK:     llvm.call_intrinsic "llvm.x86.avx512.pmultishift.qb.512"(%[[LOW]], %{{.*}})
// CHECK:     llvm.call_intrinsic "llvm.x86.avx512.pmultishift.qb.512"(%[[HIGH]], %{{.*}})
// CHECK:     arith.uitofp %{{.*}} : vector<64xi32> to vector<64xf32>
#x3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#t3 = affine_map<(d0, d1, d2) -> ()>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module attributes {dq.avx512vbmi} {
  func.func @uint2(%x: memref<?x?xi8>, %s: memref<f32>, %y: memref<?x?x4xf32>) {
    %c2 = arith.constant 2 : i32
    %c3 = arith.constant 3 : i32
    linalg.generic {indexing_maps = [#x3, #t3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<f32>) outs(%y : memref<?x?x4xf32>) {
    ^bb0(%a: i8, %b: f32, %o: f32):
      %k = linalg.index 2 : index
      %ki = arith.index_cast %k : index to i32
      %sh = arith.muli %ki, %c2 : i32
      %w = arith.extui %a : i8 to i32
      %f = arith.shrui %w, %sh : i32
      %n = arith.andi %f, %c3 : i32
      %v = arith.uitofp %n : i32 to f32
      %r = arith.mulf %v, %b : f32
      linalg.yield %r : f32
    }
    return
  }
}

// -----

// Kept in bytes: a packed zero point unpacked to an i8 temporary (every use truncates: the byte
// form never leaves bytes), and a non-temporal tile of 2-bit fields (one line of f32 is 4 bytes,
// less than a qword). A non-temporal tile of 4-bit fields (8 bytes) takes vpmultishiftqb.
// CHECK-LABEL: func.func @temporary_nt
// CHECK:     vector.interleave %{{.*}}, %{{.*}} : vector<32xi8> -> vector<64xi8>
// CHECK-NOT: llvm.call_intrinsic
// CHECK:     vector.store %{{.*}} : memref<64xi8, {{.*}}>, vector<64xi8>
// CHECK-LABEL: func.func @int4_nt
// CHECK:     llvm.call_intrinsic "llvm.x86.avx512.pmultishift.qb.512"
// CHECK:     vector.store %{{.*}} {alignment = 16 : i64, nontemporal = true} : memref<16xf32, {{.*}}>, vector<16xf32>
// CHECK-LABEL: func.func @uint2_nt
// CHECK-NOT: llvm.call_intrinsic
// CHECK:     vector.interleave %{{.*}}, %{{.*}} : vector<4xi8> -> vector<8xi8>
// CHECK: return
#x3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#t3 = affine_map<(d0, d1, d2) -> ()>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#blk = affine_map<(d0, d1) -> (d0, d1 floordiv 32)>
module attributes {dq.avx512vbmi} {
  func.func @temporary_nt(%x: memref<?x?xi8>, %zb: memref<?x?xi8>, %y: memref<?x?xf32>) attributes {dq.nontemporal} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : i32
    %c28 = arith.constant 28 : i32
    %r = memref.dim %zb, %c0 : memref<?x?xi8>
    %n = memref.dim %zb, %c1 : memref<?x?xi8>
    %t = memref.alloc(%r, %n) : memref<?x?x2xi8>
    linalg.generic {indexing_maps = [#x3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%zb : memref<?x?xi8>) outs(%t : memref<?x?x2xi8>) {
    ^bb0(%a: i8, %o: i8):
      %k = linalg.index 2 : index
      %ki = arith.index_cast %k : index to i32
      %sh = arith.muli %ki, %c4 : i32
      %up = arith.subi %c28, %sh : i32
      %w = arith.extui %a : i8 to i32
      %l = arith.shli %w, %up : i32
      %f = arith.shrsi %l, %c28 : i32
      %b = arith.trunci %f : i32 to i8
      linalg.yield %b : i8
    }
    %tv = memref.collapse_shape %t [[0], [1, 2]] : memref<?x?x2xi8> into memref<?x?xi8>
    linalg.generic {indexing_maps = [#id, #blk, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %tv : memref<?x?xi8>, memref<?x?xi8>) outs(%y : memref<?x?xf32>) {
    ^bb0(%a: i8, %z: i8, %o: f32):
      %xa = arith.extsi %a : i8 to i32
      %za = arith.extsi %z : i8 to i32
      %d = arith.subi %xa, %za : i32
      %w = arith.sitofp %d : i32 to f32
      linalg.yield %w : f32
    }
    return
  }
  func.func @int4_nt(%x: memref<?x?xi8>, %s: memref<f32>, %y: memref<?x?x2xf32>) attributes {dq.nontemporal} {
    %c4 = arith.constant 4 : i32
    %c28 = arith.constant 28 : i32
    linalg.generic {indexing_maps = [#x3, #t3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<f32>) outs(%y : memref<?x?x2xf32>) {
    ^bb0(%a: i8, %b: f32, %o: f32):
      %k = linalg.index 2 : index
      %ki = arith.index_cast %k : index to i32
      %sh = arith.muli %ki, %c4 : i32
      %up = arith.subi %c28, %sh : i32
      %w = arith.extui %a : i8 to i32
      %l = arith.shli %w, %up : i32
      %f = arith.shrsi %l, %c28 : i32
      %v = arith.sitofp %f : i32 to f32
      %r = arith.mulf %v, %b : f32
      linalg.yield %r : f32
    }
    return
  }
  func.func @uint2_nt(%x: memref<?x?xi8>, %s: memref<f32>, %y: memref<?x?x4xf32>) attributes {dq.nontemporal} {
    %c2 = arith.constant 2 : i32
    %c3 = arith.constant 3 : i32
    linalg.generic {indexing_maps = [#x3, #t3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<f32>) outs(%y : memref<?x?x4xf32>) {
    ^bb0(%a: i8, %b: f32, %o: f32):
      %k = linalg.index 2 : index
      %ki = arith.index_cast %k : index to i32
      %sh = arith.muli %ki, %c2 : i32
      %w = arith.extui %a : i8 to i32
      %f = arith.shrui %w, %sh : i32
      %n = arith.andi %f, %c3 : i32
      %v = arith.uitofp %n : i32 to f32
      %r = arith.mulf %v, %b : f32
      linalg.yield %r : f32
    }
    return
  }
}
