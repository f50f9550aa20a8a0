// RUN: dequant-opt --dq-vectorize %s | FileCheck %s

// dq-vectorize tiles each generic writing a result (rows by 1, columns by T), peels the column
// loop into whole tiles and one partial tile, and vectorizes the whole tiles with upstream's
// transforms. In a function tagged dq.nontemporal (an `_nt` entry point) every such generic is
// first versioned on its output's alignment: 16-byte-aligned rows store with vector stores
// declared 16-byte aligned and non-temporal, others non-temporal with the element's alignment.
// Elsewhere only 16-bit float outputs, packed data, blocks along the columns and operands shared
// by the rows (tiles of 4 rows) are vectorized here; the rest is left to convert-linalg-to-loops
// and LLVM's loop vectorizer. The tag is consumed. The partial tiles become loops LLVM compiles
// lean: one vector per iteration, no remainder unrolled by a run-time trip count.
// CHECK-DAG: #[[IL:.*]] = #llvm.loop_interleave<count = 1 : i64>
// CHECK-DAG: #[[UR:.*]] = #llvm.loop_unroll<runtimeDisable = true>
// CHECK: #[[LEAN:.*]] = #llvm.loop_annotation<interleave = #[[IL]], unroll = #[[UR]]>

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
#row = affine_map<(d0, d1) -> (d0)>
#blk = affine_map<(d0, d1) -> (d0, d1 floordiv 32)>
#x3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#s3 = affine_map<(d0, d1, d2) -> (d0, d1 floordiv 16)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#c3 = affine_map<(d0, d1, d2) -> (d2)>
#t3 = affine_map<(d0, d1, d2) -> ()>

// CHECK-LABEL: func.func @per_axis_nt
// CHECK-SAME: (%[[X:.*]]: memref<?x?xi8>, %[[S:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CHECK-NOT: dq.nontemporal
// CHECK: %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK: %[[PREM:.*]] = arith.remui %[[PTR]], %[[C16:.*]] : index
// CHECK: %[[PALIGNED:.*]] = arith.cmpi eq, %[[PREM]], %{{.*}} : index
// CHECK: %[[N:.*]] = memref.dim %[[Y]], %{{.*}} : memref<?x?xf32>
// CHECK: %[[ROW:.*]] = arith.muli %[[N]], %{{.*}} : index
// CHECK: %[[RREM:.*]] = arith.remui %[[ROW]], %[[C16]] : index
// CHECK: %[[RALIGNED:.*]] = arith.cmpi eq, %[[RREM]], %{{.*}} : index
// CHECK: %[[ALIGNED:.*]] = arith.andi %[[PALIGNED]], %[[RALIGNED]] : i1
// CHECK: scf.if %[[ALIGNED]] {
// CHECK:   scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:     %[[WHOLE:.*]] = affine.apply #{{.*}}()[%[[COLS:.*]]]
// CHECK:     scf.for %[[J:.*]] = %{{.*}} to %[[WHOLE]] step %[[C16]] {
// CHECK:       %[[XT:.*]] = memref.subview %[[X]][%[[I]], %[[J]]] [1, 16] [1, 1]
// CHECK:       %[[ST:.*]] = memref.subview %[[S]][%[[J]]] [16] [1]
// CHECK:       %[[YT:.*]] = memref.subview %[[Y]][%[[I]], %[[J]]] [1, 16] [1, 1]
// CHECK:       %[[XV:.*]] = vector.load %{{.*}} : memref<16xi8, {{.*}}>, vector<16xi8>
// CHECK:       %[[SV:.*]] = vector.load %[[ST]][%{{.*}}] : memref<16xf32, {{.*}}>, vector<16xf32>
// CHECK:       %[[W:.*]] = arith.sitofp %[[XV]] : vector<16xi8> to vector<16xf32>
// CHECK:       %[[R:.*]] = arith.mulf %[[W]], %[[SV]] : vector<16xf32>
// CHECK:       vector.store %[[R]], %{{.*}} {alignment = 16 : i64, nontemporal = true} : memref<16xf32, {{.*}}>, vector<16xf32>
// CHECK:     }
// CHECK:     scf.for %{{.*}} = %[[WHOLE]] to %[[COLS]] step %[[C16]] {
// CHECK:       scf.for
// CHECK:         memref.store %{{.*}} : memref<1x?xf32, {{.*}}>
// CHECK:       } {loop_annotation = #[[LEAN]]}
// CHECK:     }
// CHECK:   }
// CHECK: } else {
// CHECK:   vector.store %{{.*}} {nontemporal = true} : memref<16xf32, {{.*}}>, vector<16xf32>
// CHECK:   scf.for
// CHECK:     memref.store
// CHECK:   } {loop_annotation = #[[LEAN]]}
// CHECK: }
// CHECK: return
func.func @per_axis_nt(%x: memref<?x?xi8>, %s: memref<?xf32>, %y: memref<?x?xf32>) attributes {dq.nontemporal} {
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %w = arith.sitofp %a : i8 to f32
    %r = arith.mulf %w, %b : f32
    linalg.yield %r : f32
  }
  return
}

// The same generic with cached stores: split at the last whole column tile; the first part in
// tiles of 4 rows by 16 columns, the scale loaded once per tile and shared by its rows (one load
// per row of x, one store per row of y); the partial rows (one generic) and the partial columns
// of every row (one generic) are left to LLVM.
// CHECK-LABEL: func.func @per_axis
// CHECK-SAME: (%[[X:.*]]: memref<?x?xi8>, %[[S:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CHECK:   %[[COLS:.*]] = memref.dim %[[Y]], %{{.*}} : memref<?x?xf32>
// CHECK:   %[[TILES:.*]] = arith.divui %[[COLS]], %[[C16:.*]] : index
// CHECK:   %[[SPLIT:.*]] = arith.muli %[[TILES]], %[[C16]] : index
// CHECK:   %[[W:.*]] = affine.min #{{.*}}()[%[[SPLIT]], %{{.*}}]
// CHECK:   %[[XA:.*]] = memref.subview %[[X]][0, 0] [%[[ROWS:.*]], %[[W]]] [1, 1]
// CHECK:   %[[WHOLE_ROWS:.*]] = affine.apply #{{.*}}()[%[[ROWS]]]
// CHECK:   scf.for %[[I:.*]] = %{{.*}} to %[[WHOLE_ROWS]] step %[[C4:.*]] {
// CHECK:     %[[XR:.*]] = memref.subview %[[XA]][%[[I]], 0] [4, %[[W]]] [1, 1]
// CHECK:     scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %[[C16]] {
// CHECK:       %[[XT:.*]] = memref.subview %[[XR]][0, %[[J]]] [4, 16] [1, 1]
// CHECK:       %[[ST:.*]] = memref.subview %{{.*}}[%[[J]]] [16] [1]
// CHECK:       %[[YT:.*]] = memref.subview %{{.*}}[0, %[[J]]] [4, 16] [1, 1]
// CHECK-COUNT-4: vector.load %[[XT]][%{{.*}}, %{{.*}}] : memref<4x16xi8, {{.*}}>, vector<16xi8>
// CHECK:       %[[SV:.*]] = vector.load %[[ST]][%{{.*}}] : memref<16xf32, {{.*}}>, vector<16xf32>
// CHECK-NOT:   vector.load
// CHECK-COUNT-4: arith.mulf %{{.*}}, %[[SV]] : vector<16xf32>
// CHECK-NOT:   nontemporal
// CHECK-COUNT-4: vector.store %{{.*}}, %[[YT]][%{{.*}}, %{{.*}}] : memref<4x16xf32, {{.*}}>, vector<16xf32>
// CHECK:     }
// CHECK-NOT:   linalg.generic
// CHECK:   }
// CHECK:   scf.for %{{.*}} = %[[WHOLE_ROWS]] to %[[ROWS]] step %[[C4]] {
// CHECK:     scf.for
// CHECK:       memref.store %{{.*}} : memref<?x?xf32, {{.*}}>
// CHECK:     } {loop_annotation = #[[LEAN]]}
// CHECK:   }
// CHECK:   %[[YB:.*]] = memref.subview %[[Y]][0, %[[W]]] [%[[ROWS]], %{{.*}}] [1, 1]
// CHECK:   scf.for
// CHECK:     memref.store %{{.*}}, %[[YB]][%{{.*}}, %{{.*}}] : memref<?x?xf32, {{.*}}>
// CHECK:   } {loop_annotation = #[[LEAN]]}
// CHECK: return
func.func @per_axis(%x: memref<?x?xi8>, %s: memref<?xf32>, %y: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %w = arith.sitofp %a : i8 to f32
    %r = arith.mulf %w, %b : f32
    linalg.yield %r : f32
  }
  return
}

// A zero point shared by the rows is loaded and widened once per tile (`unroll_rows` makes an op
// whose operands are the same in every row once): 4 + 1 widenings, 4 subtractions.
// CHECK-LABEL: func.func @per_axis_zero_point
// CHECK:     scf.for %{{.*}} step %[[C16:.*]] {
// CHECK-COUNT-4: vector.load %{{.*}} : memref<4x16xi8, {{.*}}>, vector<16xi8>
// CHECK:       %[[Z:.*]] = vector.load %{{.*}} : memref<16xi8, {{.*}}>, vector<16xi8>
// CHECK-COUNT-4: arith.extui %{{.*}} : vector<16xi8> to vector<16xi32>
// CHECK:       %[[ZW:.*]] = arith.extui %[[Z]] : vector<16xi8> to vector<16xi32>
// CHECK-NOT:   arith.extui
// CHECK-COUNT-4: arith.subi %{{.*}}, %[[ZW]] : vector<16xi32>
// CHECK-NOT:   arith.extui
// CHECK:       vector.store
func.func @per_axis_zero_point(%x: memref<?x?xi8>, %s: memref<?xf32>, %z: memref<?xi8>, %y: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#id, #col, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s, %z : memref<?x?xi8>, memref<?xf32>, memref<?xi8>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: i8, %b: f32, %c: i8, %o: f32):
    %wa = arith.extui %a : i8 to i32
    %wc = arith.extui %c : i8 to i32
    %d = arith.subi %wa, %wc : i32
    %f = arith.sitofp %d : i32 to f32
    %r = arith.mulf %f, %b : f32
    linalg.yield %r : f32
  }
  return
}

// A static dim of 4 before the columns (rank 3): its tiles are whole without a row peel; the
// partial columns of every row stay one generic (its output has 4 rows too: not the empty
// remainder of a row tile, which is erased).
// CHECK-LABEL: func.func @per_axis_rank3
// CHECK:   scf.for
// CHECK:     scf.for
// CHECK-COUNT-4: vector.store %{{.*}} : memref<4x16xf32, {{.*}}>, vector<16xf32>
// CHECK-NOT: linalg.generic
// CHECK:   }
// CHECK:   scf.for
// CHECK:     memref.store %{{.*}} : memref<?x4x?xf32, {{.*}}>
// CHECK:   } {loop_annotation = #[[LEAN]]}
// CHECK: return
func.func @per_axis_rank3(%x: memref<?x4x?xi8>, %s: memref<?xf32>, %y: memref<?x4x?xf32>) {
  linalg.generic {indexing_maps = [#id3, #c3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s : memref<?x4x?xi8>, memref<?xf32>) outs(%y : memref<?x4x?xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %w = arith.sitofp %a : i8 to f32
    %r = arith.mulf %w, %b : f32
    linalg.yield %r : f32
  }
  return
}

// Every operand read per row (a per-tensor scale, or a scale per row): nothing is shared by the
// rows, and an f32 output with cached stores is left to LLVM.
// CHECK-LABEL: func.func @per_row
// CHECK-NEXT: linalg.generic
// CHECK-NOT: vector.
// CHECK: return
func.func @per_row(%x: memref<?x?xi8>, %s: memref<?xf32>, %y: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %w = arith.sitofp %a : i8 to f32
    %r = arith.mulf %w, %b : f32
    linalg.yield %r : f32
  }
  return
}

// Fewer static rows than a row tile: rows one by one, left to LLVM.
// CHECK-LABEL: func.func @per_axis_two_rows
// CHECK-NEXT: linalg.generic
// CHECK-NOT: vector.
// CHECK: return
func.func @per_axis_two_rows(%x: memref<2x?xi8>, %s: memref<?xf32>, %y: memref<2x?xf32>) {
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<2x?xi8>, memref<?xf32>) outs(%y : memref<2x?xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %w = arith.sitofp %a : i8 to f32
    %r = arith.mulf %w, %b : f32
    linalg.yield %r : f32
  }
  return
}

// A static row count that is a multiple of 4: whole row tiles only (no row loop is peeled), as
// a static column count that is a multiple of 16 has no partial column tile.
// CHECK-LABEL: func.func @per_axis_static
// CHECK:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C4:.*]] {
// CHECK:       scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C16:.*]] {
// CHECK-COUNT-4: vector.store %{{.*}} : memref<4x16xf32, {{.*}}>, vector<16xf32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @per_axis_static(%x: memref<8x64xi8>, %s: memref<64xf32>, %y: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<8x64xi8>, memref<64xf32>) outs(%y : memref<8x64xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %w = arith.sitofp %a : i8 to f32
    %r = arith.mulf %w, %b : f32
    linalg.yield %r : f32
  }
  return
}

// Static sizes that are not multiples of the tile: split at column 32, one whole row tile.
// CHECK-LABEL: func.func @per_axis_static_partial
// CHECK:   memref.subview %{{.*}}[0, 0] [6, 32] [1, 1]
// CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-COUNT-4: vector.store %{{.*}} : memref<4x16xf32, {{.*}}>, vector<16xf32>
// CHECK:   scf.for
// CHECK:     memref.store %{{.*}} : memref<2x32xf32, {{.*}}>
// CHECK:   } {loop_annotation = #[[LEAN]]}
// CHECK:   scf.for
// CHECK:     memref.store %{{.*}} : memref<6x8xf32, {{.*}}>
// CHECK:   } {loop_annotation = #[[LEAN]]}
// CHECK: return
func.func @per_axis_static_partial(%x: memref<6x40xi8>, %s: memref<40xf32>, %y: memref<6x40xf32>) {
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<6x40xi8>, memref<40xf32>) outs(%y : memref<6x40xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %w = arith.sitofp %a : i8 to f32
    %r = arith.mulf %w, %b : f32
    linalg.yield %r : f32
  }
  return
}

// Blocks of 32 along the columns, non-temporal stores: a tile is one line of output (16 of the
// block's elements, a divisor of it), its scale one load and a broadcast.
// CHECK-LABEL: func.func @blocked_nt
// CHECK-SAME: (%[[X:.*]]: memref<?x?xi8>, %[[S:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CHECK: scf.if
// CHECK:   scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:     scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %[[C16:.*]] {
// CHECK:       %[[K:.*]] = affine.apply #{{.*}}(%[[J]])
// CHECK:       %[[ST:.*]] = memref.subview %[[S]][%[[I]], %[[K]]] [1, 1] [1, 1]
// CHECK:       %[[XV:.*]] = vector.load %{{.*}} : memref<16xi8, {{.*}}>, vector<16xi8>
// CHECK:       %[[SC:.*]] = memref.load %[[ST]][%{{.*}}, %{{.*}}]
// CHECK:       %[[SB:.*]] = vector.broadcast %[[SC]] : f32 to vector<16xf32>
// CHECK:       %[[W:.*]] = arith.sitofp %[[XV]] : vector<16xi8> to vector<16xf32>
// CHECK:       %[[R:.*]] = arith.mulf %[[W]], %[[SB]] : vector<16xf32>
// CHECK:       vector.store %[[R]], %{{.*}} {alignment = 16 : i64, nontemporal = true} : memref<16xf32, {{.*}}>, vector<16xf32>
// CHECK: } else {
// CHECK:       vector.store %{{.*}} {nontemporal = true} : memref<16xf32, {{.*}}>, vector<16xf32>
func.func @blocked_nt(%x: memref<?x?xi8>, %s: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {dq.nontemporal} {
  linalg.generic {indexing_maps = [#id, #blk, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %w = arith.sitofp %a : i8 to f32
    %r = arith.mulf %w, %b : f32
    linalg.yield %r : f32
  }
  return
}

// The same blocks with cached stores (not an `_nt` entry): vectorized here too (LLVM's loop
// vectorizer, after dq-strip-mine-blocks, vectorized across blocks with gathers and scatters).
// CHECK-LABEL: func.func @blocked
// CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C32:.*]] {
// CHECK:       %[[SC:.*]] = memref.load
// CHECK:       %[[SB:.*]] = vector.broadcast %[[SC]] : f32 to vector<32xf32>
// CHECK:       %[[R:.*]] = arith.mulf %{{.*}}, %[[SB]] : vector<32xf32>
// CHECK-NOT:   nontemporal
// CHECK:       vector.store %[[R]], %{{.*}} : memref<32xf32, {{.*}}>, vector<32xf32>
// CHECK: return
func.func @blocked(%x: memref<?x?xi8>, %s: memref<?x?xf32>, %y: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#id, #blk, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %w = arith.sitofp %a : i8 to f32
    %r = arith.mulf %w, %b : f32
    linalg.yield %r : f32
  }
  return
}

// Packed 4-bit data read in place (dq-to-linalg's [rows, bytes, 2] generic; blocks of 32
// elements are 16 bytes): a tile is one block, 16 bytes with both fields of each (packed tiles
// are up to 256 bytes of output, a divisor of the block), computed as one vector of 32 in the
// elements' order. The fields are cut from the 16 bytes (the low nibble masked, the high one
// shifted down: `fields_in_bytes`), interleaved, widened once, and stored contiguous (cached
// stores: this function is not an `_nt` entry).
// CHECK-LABEL: func.func @packed
// CHECK-SAME: (%[[X:.*]]: memref<?x?xi8>, %[[S:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?x2xf32>)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:   scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %[[C16:.*]] {
// CHECK:     %[[YT:.*]] = memref.subview %[[Y]][%[[I]], %[[J]], 0] [1, 16, 2] [1, 1, 1]
// CHECK:     %[[BYTES:.*]] = vector.load %{{.*}} : memref<16xi8, {{.*}}>, vector<16xi8>
// CHECK:     %[[SC:.*]] = memref.load
// CHECK:     %[[SB:.*]] = vector.broadcast %[[SC]] : f32 to vector<32xf32>
// CHECK:     %[[C4:.*]] = arith.constant dense<4> : vector<16xi8>
// CHECK:     %[[HIGH:.*]] = arith.shrui %[[BYTES]], %[[C4]] : vector<16xi8>
// CHECK:     %[[M15:.*]] = arith.constant dense<15> : vector<16xi8>
// CHECK:     %[[LOW:.*]] = arith.andi %[[BYTES]], %[[M15]] : vector<16xi8>
// CHECK:     %[[BOTH:.*]] = vector.interleave %[[LOW]], %[[HIGH]] : vector<16xi8> -> vector<32xi8>
// CHECK:     %[[W:.*]] = arith.extui %[[BOTH]] : vector<32xi8> to vector<32xi32>
// CHECK-NOT: vector.shuffle
// CHECK:     %[[V:.*]] = arith.uitofp %[[W]] : vector<32xi32> to vector<32xf32>
// CHECK:     %[[R:.*]] = arith.mulf %[[V]], %[[SB]] : vector<32xf32>
// CHECK:     %[[FLAT:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<16x2xf32, {{.*}}> into memref<32xf32, {{.*}}>
// CHECK:     vector.store %[[R]], %[[FLAT]][%{{.*}}] : memref<32xf32, {{.*}}>, vector<32xf32>
// CHECK:   }
// CHECK:   scf.for
// CHECK:     scf.for
// CHECK:       memref.store
// CHECK:     } {loop_annotation = #[[LEAN]]}
func.func @packed(%x: memref<?x?xi8>, %s: memref<?x?xf32>, %y: memref<?x?x2xf32>) {
  %c4 = arith.constant 4 : i32
  %c15 = arith.constant 15 : i32
  linalg.generic {indexing_maps = [#x3, #s3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?x?xf32>) outs(%y : memref<?x?x2xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %k = linalg.index 2 : index
    %ki = arith.index_cast %k : index to i32
    %sh = arith.muli %ki, %c4 : i32
    %w = arith.extui %a : i8 to i32
    %f = arith.shrui %w, %sh : i32
    %n = arith.andi %f, %c15 : i32
    %v = arith.uitofp %n : i32 to f32
    %r = arith.mulf %v, %b : f32
    linalg.yield %r : f32
  }
  return
}

// Signed packed fields (dq-to-linalg's `(extui(b) << (28 - 4 * k)) >>s 28`): the low nibble
// sign-extended in its byte (shifted up, then arithmetically down), the high one shifted down.
// CHECK-LABEL: func.func @packed_signed
// CHECK:     %[[BYTES:.*]] = vector.load %{{.*}} : memref<16xi8, {{.*}}>, vector<16xi8>
// CHECK:     %[[C4:.*]] = arith.constant dense<4> : vector<16xi8>
// CHECK:     %[[UP:.*]] = arith.shli %[[BYTES]], %[[C4]] : vector<16xi8>
// CHECK:     %[[LOW:.*]] = arith.shrsi %[[UP]], %[[C4]] : vector<16xi8>
// CHECK:     %[[HIGH:.*]] = arith.shrsi %[[BYTES]], %[[C4]] : vector<16xi8>
// CHECK:     %[[BOTH:.*]] = vector.interleave %[[LOW]], %[[HIGH]] : vector<16xi8> -> vector<32xi8>
// CHECK:     %[[W:.*]] = arith.extsi %[[BOTH]] : vector<32xi8> to vector<32xi32>
// CHECK:     arith.sitofp %[[W]] : vector<32xi32> to vector<32xf32>
// CHECK:     vector.store
func.func @packed_signed(%x: memref<?x?xi8>, %s: memref<?x?xf32>, %y: memref<?x?x2xf32>) {
  %c4 = arith.constant 4 : i32
  %c28 = arith.constant 28 : i32
  linalg.generic {indexing_maps = [#x3, #s3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?x?xf32>) outs(%y : memref<?x?x2xf32>) {
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

// Four 2-bit fields per byte: cut from the bytes, then interleaved in the elements' order
// (fields 0 and 2, 1 and 3, then those two).
// CHECK-LABEL: func.func @packed_uint2
// CHECK:     %[[BYTES:.*]] = vector.load %{{.*}} : memref<16xi8, {{.*}}>, vector<16xi8>
// CHECK:     %[[S1:.*]] = arith.shrui %[[BYTES]], %{{.*}} : vector<16xi8>
// CHECK:     %[[S2:.*]] = arith.shrui %[[BYTES]], %{{.*}} : vector<16xi8>
// CHECK:     %[[F3:.*]] = arith.shrui %[[BYTES]], %{{.*}} : vector<16xi8>
// CHECK:     %[[F0:.*]] = arith.andi %[[BYTES]], %[[M:.*]] : vector<16xi8>
// CHECK:     %[[F1:.*]] = arith.andi %[[S1]], %[[M]] : vector<16xi8>
// CHECK:     %[[F2:.*]] = arith.andi %[[S2]], %[[M]] : vector<16xi8>
// CHECK:     %[[E:.*]] = vector.interleave %[[F0]], %[[F2]] : vector<16xi8> -> vector<32xi8>
// CHECK:     %[[O:.*]] = vector.interleave %[[F1]], %[[F3]] : vector<16xi8> -> vector<32xi8>
// CHECK:     %[[ALL:.*]] = vector.interleave %[[E]], %[[O]] : vector<32xi8> -> vector<64xi8>
// CHECK:     arith.extui %[[ALL]] : vector<64xi8> to vector<64xi32>
func.func @packed_uint2(%x: memref<?x?xi8>, %s: memref<?x?xf32>, %y: memref<?x?x4xf32>) {
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  linalg.generic {indexing_maps = [#x3, #s3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?x?xf32>) outs(%y : memref<?x?x4xf32>) {
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

// A packed 4-bit float: its decode (tagged dq.lookup with the 8 magnitudes by code & 7; here a
// stand-in, uitofp) becomes a table lookup on the code (tagged dq.lookup_code): each lane's
// magnitude extracted from the table at its code & 7, the code's bit 3 moved to the sign bit.
// CHECK-LABEL: func.func @float4_lookup
// CHECK:     %[[CODE:.*]] = arith.extui %{{.*}} {dq.lookup_code} : vector<32xi8> to vector<32xi32>
// CHECK:     %[[TABLE:.*]] = arith.constant dense<[0.000000e+00, 5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 6.000000e+00]> : vector<8xf32>
// CHECK:     %[[LANES:.*]] = arith.andi %[[CODE]], %{{.*}} : vector<32xi32>
// CHECK:     %[[L0:.*]] = vector.extract %[[LANES]][0] : i32 from vector<32xi32>
// CHECK:     %[[I0:.*]] = arith.index_cast %[[L0]] : i32 to index
// CHECK:     %[[M0:.*]] = vector.extract %[[TABLE]][%[[I0]]] : f32 from vector<8xf32>
// CHECK:     %[[MAG:.*]] = vector.from_elements %[[M0]], %{{.*}} : vector<32xf32>
// CHECK:     %[[SIGN:.*]] = arith.shli %{{.*}}, %{{.*}} : vector<32xi32>
// CHECK:     %[[BITS:.*]] = arith.bitcast %[[MAG]] : vector<32xf32> to vector<32xi32>
// CHECK:     %[[SIGNED:.*]] = arith.ori %[[BITS]], %[[SIGN]] : vector<32xi32>
// CHECK:     %[[VALUE:.*]] = arith.bitcast %[[SIGNED]] : vector<32xi32> to vector<32xf32>
// CHECK:     %[[R:.*]] = arith.mulf %[[VALUE]], %{{.*}} : vector<32xf32>
// CHECK:     vector.store %[[R]], %{{.*}} : memref<32xf32, {{.*}}>, vector<32xf32>
func.func @float4_lookup(%x: memref<?x?xi8>, %s: memref<?x?xf32>, %y: memref<?x?x2xf32>) {
  %c4 = arith.constant 4 : i32
  %c15 = arith.constant 15 : i32
  linalg.generic {indexing_maps = [#x3, #s3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?x?xf32>) outs(%y : memref<?x?x2xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %k = linalg.index 2 : index
    %ki = arith.index_cast %k : index to i32
    %sh = arith.muli %ki, %c4 : i32
    %w = arith.extui %a : i8 to i32
    %f = arith.shrui %w, %sh : i32
    %n = arith.andi %f, %c15 {dq.lookup_code} : i32
    %v = arith.uitofp %n {dq.lookup = dense<[0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]> : vector<8xf32>} : i32 to f32
    %r = arith.mulf %v, %b : f32
    linalg.yield %r : f32
  }
  return
}

// Without blocks a packed tile is 256 bytes of output (PACKED_TILE_BYTES): 32 bytes, 64 lanes,
// with cached stores; in an `_nt` entry one line (8 bytes, 16 lanes), as every non-temporal tile.
// CHECK-LABEL: func.func @packed_per_tensor
// CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C32:.*]] {
// CHECK:     vector.load %{{.*}} : memref<32xi8, {{.*}}>, vector<32xi8>
// CHECK:     vector.interleave %{{.*}}, %{{.*}} : vector<32xi8> -> vector<64xi8>
// CHECK-NOT: nontemporal
// CHECK:     vector.store %{{.*}}, %{{.*}} : memref<64xf32, {{.*}}>, vector<64xf32>
// CHECK-LABEL: func.func @packed_per_tensor_nt
// CHECK:     vector.load %{{.*}} : memref<8xi8, {{.*}}>, vector<8xi8>
// CHECK:     vector.interleave %{{.*}}, %{{.*}} : vector<8xi8> -> vector<16xi8>
// CHECK:     vector.store %{{.*}} {alignment = 16 : i64, nontemporal = true} : memref<16xf32, {{.*}}>, vector<16xf32>
func.func @packed_per_tensor(%x: memref<?x?xi8>, %s: memref<f32>, %y: memref<?x?x2xf32>) {
  %c4 = arith.constant 4 : i32
  %c15 = arith.constant 15 : i32
  linalg.generic {indexing_maps = [#x3, #t3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<f32>) outs(%y : memref<?x?x2xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %k = linalg.index 2 : index
    %ki = arith.index_cast %k : index to i32
    %sh = arith.muli %ki, %c4 : i32
    %w = arith.extui %a : i8 to i32
    %f = arith.shrui %w, %sh : i32
    %n = arith.andi %f, %c15 : i32
    %v = arith.uitofp %n : i32 to f32
    %r = arith.mulf %v, %b : f32
    linalg.yield %r : f32
  }
  return
}
func.func @packed_per_tensor_nt(%x: memref<?x?xi8>, %s: memref<f32>, %y: memref<?x?x2xf32>) attributes {dq.nontemporal} {
  %c4 = arith.constant 4 : i32
  %c15 = arith.constant 15 : i32
  linalg.generic {indexing_maps = [#x3, #t3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<f32>) outs(%y : memref<?x?x2xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %k = linalg.index 2 : index
    %ki = arith.index_cast %k : index to i32
    %sh = arith.muli %ki, %c4 : i32
    %w = arith.extui %a : i8 to i32
    %f = arith.shrui %w, %sh : i32
    %n = arith.andi %f, %c15 : i32
    %v = arith.uitofp %n : i32 to f32
    %r = arith.mulf %v, %b : f32
    linalg.yield %r : f32
  }
  return
}

// A bf16 output with cached stores: vectorized here (LLVM's vectorizer scalarizes its rounding),
// rows one by one (the rounding steps work on one row's vector; 4-row tiles measured slower).
// CHECK-LABEL: func.func @bf16
// CHECK: memref.subview %{{.*}}[%{{.*}}, %{{.*}}] [1, 32] [1, 1]
// CHECK: arith.mulf %{{.*}}, %{{.*}} : vector<32xbf16>
// CHECK: vector.store %{{.*}} : memref<32xbf16, {{.*}}>, vector<32xbf16>
// CHECK-NOT: nontemporal
// CHECK: return
func.func @bf16(%x: memref<?x?xi8>, %s: memref<?xbf16>, %y: memref<?x?xbf16>) {
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?xbf16>) outs(%y : memref<?x?xbf16>) {
  ^bb0(%a: i8, %b: bf16, %o: bf16):
    %w = arith.sitofp %a : i8 to bf16
    %r = arith.mulf %w, %b : bf16
    linalg.yield %r : bf16
  }
  return
}

// A temporary another generic reads (a packed zero point unpacked first) is not a result: left
// alone, while the generic reading it is vectorized.
// CHECK-LABEL: func.func @temporary_nt
// CHECK: memref.alloc
// CHECK-NEXT: linalg.generic
// CHECK-SAME: outs(%{{.*}} : memref<?xf32>)
// CHECK: vector.store %{{.*}} {alignment = 16 : i64, nontemporal = true}
func.func @temporary_nt(%x: memref<?x?xi8>, %s: memref<?xi8>, %y: memref<?x?xf32>) attributes {dq.nontemporal} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %s, %c0 : memref<?xi8>
  %t = memref.alloc(%n) : memref<?xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%s : memref<?xi8>) outs(%t : memref<?xf32>) {
  ^bb0(%a: i8, %o: f32):
    %w = arith.sitofp %a : i8 to f32
    linalg.yield %w : f32
  }
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %t : memref<?x?xi8>, memref<?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %w = arith.sitofp %a : i8 to f32
    %r = arith.mulf %w, %b : f32
    linalg.yield %r : f32
  }
  return
}

// A bf16 output in an `_nt` entry: inside the 16-byte-aligned version, rows whose bytes are whole
// lines are split at the first line boundary (numpy's outputs start 16 bytes past one): the
// columns before it (at most one line's) are left to LLVM, the rest is tiled with every store
// declared 64-byte aligned: one 64-byte non-temporal store per tile.
// CHECK-LABEL: func.func @bf16_lines_nt
// CHECK-SAME: (%[[X:.*]]: memref<?x?xi8>, %[[S:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?x?xbf16>)
// CHECK: scf.if %{{.*}} {
// CHECK:   %[[N:.*]] = memref.dim %[[Y]], %{{.*}} : memref<?x?xbf16>
// CHECK:   %[[ROW:.*]] = arith.muli %[[N]], %[[C2:.*]] : index
// CHECK:   %[[REM:.*]] = arith.remui %[[ROW]], %[[C64:.*]] : index
// CHECK:   %[[WHOLE:.*]] = arith.cmpi eq, %[[REM]], %{{.*}} : index
// CHECK:   %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK:   %[[PAST:.*]] = arith.remui %[[P]], %[[C64]] : index
// CHECK:   %[[TO:.*]] = arith.subi %[[C64]], %[[PAST]] : index
// CHECK:   %[[TOB:.*]] = arith.remui %[[TO]], %[[C64]] : index
// CHECK:   %[[K0:.*]] = arith.divui %[[TOB]], %[[C2]] : index
// CHECK:   %[[K:.*]] = arith.minui %[[K0]], %[[N]] : index
// CHECK:   scf.if %[[WHOLE]] {
// CHECK:     %[[REST:.*]] = arith.subi %[[N]], %[[K]] : index
// CHECK:     %[[XP:.*]] = memref.subview %[[X]][0, 0] [%{{.*}}, %[[K]]] [1, 1]
// CHECK:     %[[SP:.*]] = memref.subview %[[S]][0] [%[[K]]] [1]
// CHECK:     %[[YP:.*]] = memref.subview %[[Y]][0, 0] [%{{.*}}, %[[K]]] [1, 1]
// CHECK:     linalg.generic {{.*}} ins(%[[XP]], %[[SP]] : {{.*}}) outs(%[[YP]] : {{.*}})
// CHECK:     %[[XR:.*]] = memref.subview %[[X]][0, %[[K]]] [%{{.*}}, %[[REST]]] [1, 1]
// CHECK:     %[[SR:.*]] = memref.subview %[[S]][%[[K]]] [%[[REST]]] [1]
// CHECK:     %[[YR:.*]] = memref.subview %[[Y]][0, %[[K]]] [%{{.*}}, %[[REST]]] [1, 1]
// CHECK:     scf.for
// CHECK:       scf.for
// CHECK:         vector.store %{{.*}} {alignment = 64 : i64, nontemporal = true} : memref<32xbf16, {{.*}}>, vector<32xbf16>
// CHECK:   } else {
// CHECK:         vector.store %{{.*}} {alignment = 16 : i64, nontemporal = true} : memref<32xbf16, {{.*}}>, vector<32xbf16>
// CHECK: } else {
// CHECK:       vector.store %{{.*}} {nontemporal = true} : memref<32xbf16, {{.*}}>, vector<32xbf16>
func.func @bf16_lines_nt(%x: memref<?x?xi8>, %s: memref<?xf32>, %y: memref<?x?xbf16>) attributes {dq.nontemporal} {
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?xf32>) outs(%y : memref<?x?xbf16>) {
  ^bb0(%a: i8, %b: f32, %o: bf16):
    %w = arith.sitofp %a : i8 to f32
    %r = arith.mulf %w, %b : f32
    %h = arith.truncf %r : f32 to bf16
    linalg.yield %h : bf16
  }
  return
}

// A temporary read packed, as a packed zero point is unpacked ([rows, bytes, 2] into i8 values):
// vectorized with cached stores (read back at once), even in an `_nt` entry, where the generic
// reading it stores non-temporal.
// CHECK-LABEL: func.func @packed_temporary_nt
// CHECK: %[[T:.*]] = memref.alloc
// CHECK: %[[BOTH:.*]] = vector.interleave %{{.*}}, %{{.*}} : vector<32xi8> -> vector<64xi8>
// CHECK-NOT: nontemporal
// CHECK: vector.store %{{.*}} : memref<64xi8, {{.*}}>, vector<64xi8>
// CHECK: vector.store %{{.*}} {alignment = 16 : i64, nontemporal = true}
func.func @packed_temporary_nt(%x: memref<?x?xi8>, %zb: memref<?x?xi8>, %y: memref<?x?xf32>) attributes {dq.nontemporal} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : i32
  %c15 = arith.constant 15 : i32
  %r = memref.dim %zb, %c0 : memref<?x?xi8>
  %n = memref.dim %zb, %c1 : memref<?x?xi8>
  %t = memref.alloc(%r, %n) : memref<?x?x2xi8>
  linalg.generic {indexing_maps = [#x3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%zb : memref<?x?xi8>) outs(%t : memref<?x?x2xi8>) {
  ^bb0(%a: i8, %o: i8):
    %k = linalg.index 2 : index
    %ki = arith.index_cast %k : index to i32
    %sh = arith.muli %ki, %c4 : i32
    %w = arith.extui %a : i8 to i32
    %f = arith.shrui %w, %sh : i32
    %v = arith.andi %f, %c15 : i32
    %b = arith.trunci %v : i32 to i8
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

// The same temporary filled inside an scf.if, as dq-to-linalg fills a packed zero point whose
// rows may not be whole bytes: still a temporary (the if's result is traced to the buffer), so
// its stores stay cached and its tiles one line (fuzzed kernels once wrote it non-temporal).
// CHECK-LABEL: func.func @packed_temporary_if_nt
// CHECK: %[[T:.*]] = memref.alloc
// CHECK: scf.if %{{.*}} -> (memref<?x?x2xi8>) {
// CHECK-NOT: nontemporal
// CHECK: vector.store %{{.*}}, %{{[^ ]*}}[%{{[^ ]*}}] : memref<64xi8, {{.*}}>, vector<64xi8>
// CHECK-NOT: nontemporal
// CHECK: scf.yield %[[T]]
// CHECK: vector.store %{{.*}} {alignment = 16 : i64, nontemporal = true} : memref<16xf32
func.func @packed_temporary_if_nt(%x: memref<?x?xi8>, %zb: memref<?x?xi8>, %y: memref<?x?xf32>, %whole: i1) attributes {dq.nontemporal} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : i32
  %c15 = arith.constant 15 : i32
  %r = memref.dim %zb, %c0 : memref<?x?xi8>
  %n = memref.dim %zb, %c1 : memref<?x?xi8>
  %t = memref.alloc(%r, %n) : memref<?x?x2xi8>
  %filled = scf.if %whole -> (memref<?x?x2xi8>) {
    linalg.generic {indexing_maps = [#x3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%zb : memref<?x?xi8>) outs(%t : memref<?x?x2xi8>) {
    ^bb0(%a: i8, %o: i8):
      %k = linalg.index 2 : index
      %ki = arith.index_cast %k : index to i32
      %sh = arith.muli %ki, %c4 : i32
      %w = arith.extui %a : i8 to i32
      %f = arith.shrui %w, %sh : i32
      %v = arith.andi %f, %c15 : i32
      %b = arith.trunci %v : i32 to i8
      linalg.yield %b : i8
    }
    scf.yield %t : memref<?x?x2xi8>
  } else {
    scf.yield %t : memref<?x?x2xi8>
  }
  %tv = memref.collapse_shape %filled [[0], [1, 2]] : memref<?x?x2xi8> into memref<?x?xi8>
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

// Left to LLVM even in an `_nt` entry: a read at a computed index (a gather), columns fewer
// than one tile, and an operand of higher rank than the loops (a 1x1x1 scale read at (0, 0, 0)
// by two loops: not a projected permutation, which the vectorizer requires; found by fuzzing).
// CHECK-LABEL: func.func @gather_nt
// CHECK-NOT: vector.
// CHECK-LABEL: func.func @narrow_nt
// CHECK-NOT: vector.
// CHECK-LABEL: func.func @rank3_scale_nt
// CHECK-NOT: vector.
// CHECK: return
func.func @gather_nt(%x: memref<?xi8>, %y: memref<?xf32>) attributes {dq.nontemporal} {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%y : memref<?xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %v = memref.load %x[%i] : memref<?xi8>
    %w = arith.sitofp %v : i8 to f32
    linalg.yield %w : f32
  }
  return
}
func.func @narrow_nt(%x: memref<4x8xi8>, %y: memref<4x8xf32>) attributes {dq.nontemporal} {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : memref<4x8xi8>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: i8, %o: f32):
    %w = arith.sitofp %a : i8 to f32
    linalg.yield %w : f32
  }
  return
}
func.func @rank3_scale_nt(%x: memref<?x?xi8>, %s: memref<1x1x1xbf16>, %y: memref<?x?xbf16>) attributes {dq.nontemporal} {
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (0, 0, 0)>, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<1x1x1xbf16>) outs(%y : memref<?x?xbf16>) {
  ^bb0(%a: i8, %b: bf16, %o: bf16):
    %w = arith.sitofp %a : i8 to bf16
    %r = arith.mulf %w, %b : bf16
    linalg.yield %r : bf16
  }
  return
}

// A block longer than any tile (block_size 2^63 - 1 is valid ONNX): the tile is the largest
// divisor of the block within a tile's output, found without enumerating the block's divisors
// (that loop ran for ever; found by fuzzing): 7 within a line (non-temporal), 127 within 512
// bytes (cached stores).
// CHECK-LABEL: func.func @huge_block_nt
// CHECK: vector.store %{{.*}} : memref<7xf32, {{.*}}>, vector<7xf32>
func.func @huge_block_nt(%x: memref<?x?xi8>, %s: memref<?x1xf32>, %y: memref<?x?xf32>) attributes {dq.nontemporal} {
  linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0, d1 floordiv 9223372036854775807)>, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?x1xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %w = arith.sitofp %a : i8 to f32
    %r = arith.mulf %w, %b : f32
    linalg.yield %r : f32
  }
  return
}

// A 4-bit field sign-extended from its byte (dq-fold-nibble-casts' `(extsi(b) << 28) >>s 28`) is
// sign-extended within the byte, then widened: in code left to LLVM and in vectorized tiles.
// CHECK-LABEL: func.func @nibble_per_tensor
// CHECK:   linalg.generic
// CHECK:   ^bb0(%[[B:.*]]: i8, %{{.*}}: f32):
// CHECK:     %[[C4:.*]] = arith.constant 4 : i8
// CHECK:     %[[L:.*]] = arith.shli %[[B]], %[[C4]] : i8
// CHECK:     %[[R:.*]] = arith.shrsi %[[L]], %[[C4]] : i8
// CHECK:     %[[W:.*]] = arith.extsi %[[R]] : i8 to i32
// CHECK:     arith.sitofp %[[W]] : i32 to f32
// CHECK-NOT: i32
// CHECK: return
func.func @nibble_per_tensor(%x: memref<?x?xi8>, %s: f32, %y: memref<?x?xf32>) {
  %c28 = arith.constant 28 : i32
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : memref<?x?xi8>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: i8, %o: f32):
    %w = arith.extsi %a : i8 to i32
    %l = arith.shli %w, %c28 : i32
    %r = arith.shrsi %l, %c28 : i32
    %f = arith.sitofp %r : i32 to f32
    %m = arith.mulf %f, %s : f32
    linalg.yield %m : f32
  }
  return
}

// CHECK-LABEL: func.func @nibble_blocked
// CHECK:   %[[C4:.*]] = arith.constant dense<4> : vector<32xi8>
// CHECK:   %[[L:.*]] = arith.shli %{{.*}}, %[[C4]] : vector<32xi8>
// CHECK:   %[[R:.*]] = arith.shrsi %[[L]], %[[C4]] : vector<32xi8>
// CHECK:   arith.extsi %[[R]] : vector<32xi8> to vector<32xi32>
// CHECK: return
func.func @nibble_blocked(%x: memref<?x?xi8>, %s: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %c28 = arith.constant 28 : i32
  linalg.generic {indexing_maps = [#id, #blk, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %w = arith.extsi %a : i8 to i32
    %l = arith.shli %w, %c28 : i32
    %r = arith.shrsi %l, %c28 : i32
    %f = arith.sitofp %r : i32 to f32
    %m = arith.mulf %f, %b : f32
    linalg.yield %m : f32
  }
  return
}

// Non-temporal tiles (one line each) take the byte form too, as do the partial tiles.
// CHECK-LABEL: func.func @nibble_blocked_nt
// CHECK:   arith.shli %{{.*}} : vector<16xi8>
// CHECK:   arith.shrsi %{{.*}} : vector<16xi8>
// CHECK:   arith.extsi %{{.*}} : vector<16xi8> to vector<16xi32>
// CHECK:   vector.store %{{.*}} {alignment = 16 : i64, nontemporal = true}
// CHECK:   scf.for
// CHECK:     memref.store
// CHECK:   } {loop_annotation = #[[LEAN]]}
// CHECK:     arith.shli %{{.*}} : i8
// CHECK: return
func.func @nibble_blocked_nt(%x: memref<?x?xi8>, %s: memref<?x?xf32>, %y: memref<?x?xf32>) attributes {dq.nontemporal} {
  %c28 = arith.constant 28 : i32
  linalg.generic {indexing_maps = [#id, #blk, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %s : memref<?x?xi8>, memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%a: i8, %b: f32, %o: f32):
    %w = arith.extsi %a : i8 to i32
    %l = arith.shli %w, %c28 : i32
    %r = arith.shrsi %l, %c28 : i32
    %f = arith.sitofp %r : i32 to f32
    %m = arith.mulf %f, %b : f32
    linalg.yield %m : f32
  }
  return
}
