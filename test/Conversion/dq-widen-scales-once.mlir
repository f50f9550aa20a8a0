// RUN: dequant-opt %s --dq-widen-scales-once --split-input-file | FileCheck %s

// An f16 scale every row reads alike (a per-axis scale along the last dim) is widened to an f32
// temporary by a generic of its own, before the dequantize's generic, which reads the temporary
// at the scale's position and map, without its arith.extf; the temporary is freed after it.

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: func.func @per_axis_f16
// CHECK-SAME: (%[[X:.*]]: memref<?x?xi8>, %[[S:.*]]: memref<?xf16>, %[[Z:.*]]: memref<?xi8>, %[[Y:.*]]: memref<?x?xf16>)
// CHECK: %[[N:.*]] = memref.dim %[[S]], %{{.*}} : memref<?xf16>
// CHECK: %[[W:.*]] = memref.alloc(%[[N]]) {alignment = 64 : i64} : memref<?xf32>
// CHECK: linalg.generic {{.*}} ins(%[[S]] : memref<?xf16>) outs(%[[W]] : memref<?xf32>)
// CHECK-NEXT: ^bb0(%[[SV:.*]]: f16, %{{.*}}: f32):
// CHECK-NEXT: %[[SF:.*]] = arith.extf %[[SV]] : f16 to f32
// CHECK-NEXT: linalg.yield %[[SF]] : f32
// CHECK: linalg.generic {{.*}} ins(%[[X]], %[[W]], %[[Z]] : memref<?x?xi8>, memref<?xf32>, memref<?xi8>) outs(%[[Y]] : memref<?x?xf16>)
// CHECK-NEXT: ^bb0(%[[XV:.*]]: i8, %[[WV:.*]]: f32, %[[ZV:.*]]: i8, %{{.*}}: f16):
// CHECK-NOT: arith.extf
// CHECK: %[[D:.*]] = arith.sitofp
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[D]], %[[WV]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.truncf %[[P]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[R]] : f16
// CHECK: memref.dealloc %[[W]] : memref<?xf32>
func.func @per_axis_f16(%x: memref<?x?xi8>, %s: memref<?xf16>, %z: memref<?xi8>, %y: memref<?x?xf16>) {
  linalg.generic {indexing_maps = [#id, #col, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s, %z : memref<?x?xi8>, memref<?xf16>, memref<?xi8>) outs(%y : memref<?x?xf16>) {
  ^bb0(%xv: i8, %sv: f16, %zv: i8, %out: f16):
    %a = arith.extsi %xv : i8 to i32
    %b = arith.extsi %zv : i8 to i32
    %d = arith.subi %a, %b : i32
    %f = arith.sitofp %d : i32 to f32
    %sf = arith.extf %sv : f16 to f32
    %p = arith.mulf %f, %sf : f32
    %r = arith.truncf %p : f32 to f16
    linalg.yield %r : f16
  }
  return
}

// -----

// A bf16 scale too, in a function with cached stores; rows over two dims (d0, d1), one dynamic.

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#last3 = affine_map<(d0, d1, d2) -> (d2)>

// CHECK-LABEL: func.func @per_axis_bf16_3d
// CHECK: %[[W:.*]] = memref.alloc
// CHECK-SAME: memref<64xf32>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[W]] : memref<2x?x64xi8>, memref<64xf32>)
// CHECK-NOT: arith.extf
// CHECK: memref.dealloc %[[W]]
func.func @per_axis_bf16_3d(%x: memref<2x?x64xi8>, %s: memref<64xbf16>, %y: memref<2x?x64xbf16>) {
  linalg.generic {indexing_maps = [#id3, #last3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x, %s : memref<2x?x64xi8>, memref<64xbf16>) outs(%y : memref<2x?x64xbf16>) {
  ^bb0(%xv: i8, %sv: bf16, %out: bf16):
    %f = arith.sitofp %xv : i8 to f32
    %sf = arith.extf %sv : bf16 to f32
    %p = arith.mulf %f, %sf : f32
    %r = arith.truncf %p : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}

// -----

// Left alone: a bf16 scale in a non-temporal entry (measured slower there), a static row count
// under 16, a scale read per row (d0), a blocked scale, a scale used by other ops than its
// widening, and an f32 scale.

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
#blk = affine_map<(d0, d1) -> (d0, d1 floordiv 32)>

// CHECK-LABEL: func.func @bf16_nontemporal
// CHECK-NOT: memref.alloc
// CHECK: arith.extf %{{.*}} : bf16 to f32
func.func @bf16_nontemporal(%x: memref<?x?xi8>, %s: memref<?xbf16>, %y: memref<?x?xbf16>) attributes {dq.nontemporal} {
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<?x?xi8>, memref<?xbf16>) outs(%y : memref<?x?xbf16>) {
  ^bb0(%xv: i8, %sv: bf16, %out: bf16):
    %f = arith.sitofp %xv : i8 to f32
    %sf = arith.extf %sv : bf16 to f32
    %p = arith.mulf %f, %sf : f32
    %r = arith.truncf %p : f32 to bf16
    linalg.yield %r : bf16
  }
  return
}

// CHECK-LABEL: func.func @few_static_rows
// CHECK-NOT: memref.alloc
// CHECK: arith.extf %{{.*}} : f16 to f32
func.func @few_static_rows(%x: memref<15x?xi8>, %s: memref<?xf16>, %y: memref<15x?xf16>) {
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<15x?xi8>, memref<?xf16>) outs(%y : memref<15x?xf16>) {
  ^bb0(%xv: i8, %sv: f16, %out: f16):
    %f = arith.sitofp %xv : i8 to f32
    %sf = arith.extf %sv : f16 to f32
    %p = arith.mulf %f, %sf : f32
    %r = arith.truncf %p : f32 to f16
    linalg.yield %r : f16
  }
  return
}

// CHECK-LABEL: func.func @per_row
// CHECK-NOT: memref.alloc
// CHECK: arith.extf %{{.*}} : f16 to f32
func.func @per_row(%x: memref<?x?xi8>, %s: memref<?xf16>, %y: memref<?x?xf16>) {
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<?x?xi8>, memref<?xf16>) outs(%y : memref<?x?xf16>) {
  ^bb0(%xv: i8, %sv: f16, %out: f16):
    %f = arith.sitofp %xv : i8 to f32
    %sf = arith.extf %sv : f16 to f32
    %p = arith.mulf %f, %sf : f32
    %r = arith.truncf %p : f32 to f16
    linalg.yield %r : f16
  }
  return
}

// CHECK-LABEL: func.func @blocked
// CHECK-NOT: memref.alloc
// CHECK: arith.extf %{{.*}} : f16 to f32
func.func @blocked(%x: memref<?x?xi8>, %s: memref<?x?xf16>, %y: memref<?x?xf16>) {
  linalg.generic {indexing_maps = [#id, #blk, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<?x?xi8>, memref<?x?xf16>) outs(%y : memref<?x?xf16>) {
  ^bb0(%xv: i8, %sv: f16, %out: f16):
    %f = arith.sitofp %xv : i8 to f32
    %sf = arith.extf %sv : f16 to f32
    %p = arith.mulf %f, %sf : f32
    %r = arith.truncf %p : f32 to f16
    linalg.yield %r : f16
  }
  return
}

// CHECK-LABEL: func.func @other_use
// CHECK-NOT: memref.alloc
// CHECK: arith.extf %{{.*}} : f16 to f32
func.func @other_use(%x: memref<?x?xi8>, %s: memref<?xf16>, %y: memref<?x?xf16>) {
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<?x?xi8>, memref<?xf16>) outs(%y : memref<?x?xf16>) {
  ^bb0(%xv: i8, %sv: f16, %out: f16):
    %f = arith.sitofp %xv : i8 to f32
    %sf = arith.extf %sv : f16 to f32
    %p = arith.mulf %f, %sf : f32
    %r = arith.truncf %p : f32 to f16
    %m = arith.maximumf %r, %sv : f16
    linalg.yield %m : f16
  }
  return
}

// CHECK-LABEL: func.func @f32_scale
// CHECK-NOT: memref.alloc
// CHECK: return
func.func @f32_scale(%x: memref<?x?xi8>, %s: memref<?xf32>, %y: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : memref<?x?xi8>, memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%xv: i8, %sv: f32, %out: f32):
    %f = arith.sitofp %xv : i8 to f32
    %p = arith.mulf %f, %sv : f32
    linalg.yield %p : f32
  }
  return
}
