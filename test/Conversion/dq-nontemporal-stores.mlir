// RUN: dequant-opt --dq-nontemporal-stores %s | FileCheck %s

// dq-nontemporal-stores versions an innermost loop on the bytes it streams (the output and the
// inputs read at the counter): from 48 MiB a vector loop of 64-byte non-temporal stores runs (a
// row loop peeled to a 64-byte boundary, its stores aligned; a block loop of constant trip count
// unaligned), else the original loop.

// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[X:.*]]: memref<?x?xi8>, %[[S:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: %[[BIG:.*]] = arith.cmpi uge, %{{.*}}, %c50331648 : index
// CHECK: %[[PTR:.*]] = memref.extract_aligned_pointer_as_index %[[Y]]
// CHECK: %[[ELEM:.*]] = arith.remui %[[PTR]], %{{.*}} : index
// CHECK: %[[WHOLE:.*]] = arith.cmpi eq, %[[ELEM]], %{{.*}} : index
// CHECK: %[[COND:.*]] = arith.andi %[[BIG]], %[[WHOLE]] : i1
// CHECK: scf.if %[[COND]] {
// CHECK:   %[[START:.*]] = arith.minui %{{.*}}, %[[N:.*]] : index
// CHECK:   scf.for %{{.*}} = %{{.*}} to %[[START]] step %{{.*}} {
// CHECK:     memref.store
// CHECK:   }
// CHECK:   %[[C16:.*]] = arith.constant 16 : index
// CHECK:   %[[VEND:.*]] = arith.addi %[[START]], %{{.*}} : index
// CHECK:   scf.for %[[J:.*]] = %[[START]] to %[[VEND]] step %[[C16]] {
// CHECK:     %[[V:.*]] = vector.load %[[X]][%[[I]], %[[J]]] : memref<?x?xi8>, vector<16xi8>
// CHECK:     %[[SV:.*]] = vector.load %[[S]][%[[J]]] : memref<?xf32>, vector<16xf32>
// CHECK:     %[[W:.*]] = arith.sitofp %[[V]] : vector<16xi8> to vector<16xf32>
// CHECK:     %[[R:.*]] = arith.mulf %[[W]], %[[SV]] : vector<16xf32>
// CHECK:     vector.store %[[R]], %[[Y]][%[[I]], %[[J]]] {alignment = 64 : i64, nontemporal = true} : memref<?x?xf32>, vector<16xf32>
// CHECK:   }
// CHECK:   scf.for %{{.*}} = %[[VEND]] to %[[N]] step %{{.*}} {
// CHECK:     memref.store
// CHECK:   }
// CHECK: } else {
// CHECK:   scf.for
// CHECK:     memref.store %{{.*}}, %[[Y]]
// CHECK-NOT: vector.
// CHECK: return
func.func @rows(%x: memref<?x?xi8>, %s: memref<?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %x, %c0 : memref<?x?xi8>
  %n = memref.dim %x, %c1 : memref<?x?xi8>
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xi8>
      %sc = memref.load %s[%j] : memref<?xf32>
      %w = arith.sitofp %v : i8 to f32
      %r = arith.mulf %w, %sc : f32
      memref.store %r, %y[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

// A block of 32 (dq-strip-mine-blocks' inner loop): no peel, unaligned stores, and the block's
// scale (a load that does not depend on the counter) broadcast.
// CHECK-LABEL: func.func @block
// CHECK-NOT: extract_aligned_pointer
// CHECK: scf.if
// CHECK:   %[[C32:.*]] = arith.constant 32 : index
// CHECK:   scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C32]] {
// CHECK:     vector.load %{{.*}} : memref<?xi8>, vector<32xi8>
// CHECK:     %[[SC:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<?xf16>
// CHECK:     %[[B:.*]] = vector.broadcast %[[SC]] : f16 to vector<32xf16>
// CHECK:     arith.mulf %{{.*}}, %[[B]] : vector<32xf16>
// CHECK:     vector.store %{{.*}} {nontemporal = true} : memref<?xf16>, vector<32xf16>
// CHECK: } else {
func.func @block(%x: memref<?xi8>, %s: memref<?xf16>, %y: memref<?xf16>, %jb: index, %k: index) {
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %end = arith.addi %jb, %c32 : index
  scf.for %j = %jb to %end step %c1 {
    %v = memref.load %x[%j] : memref<?xi8>
    %sc = memref.load %s[%k] : memref<?xf16>
    %w = arith.sitofp %v : i8 to f16
    %r = arith.mulf %w, %sc : f16
    memref.store %r, %y[%j] : memref<?xf16>
  }
  return
}

// Left alone: a static output under the threshold, a strided output, the counter used as a value.
// CHECK-LABEL: func.func @small_static
// CHECK-NOT: vector.
// CHECK-LABEL: func.func @strided
// CHECK-NOT: vector.
// CHECK-LABEL: func.func @counter_as_value
// CHECK-NOT: vector.
// CHECK: return
func.func @small_static(%x: memref<4x8xi8>, %y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %j = %c0 to %c8 step %c1 {
    %v = memref.load %x[%c0, %j] : memref<4x8xi8>
    %w = arith.sitofp %v : i8 to f32
    memref.store %w, %y[%c0, %j] : memref<4x8xf32>
  }
  return
}
func.func @strided(%x: memref<?xi8>, %y: memref<?xf32, strided<[?], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xi8>
  scf.for %j = %c0 to %n step %c1 {
    %v = memref.load %x[%j] : memref<?xi8>
    %w = arith.sitofp %v : i8 to f32
    memref.store %w, %y[%j] : memref<?xf32, strided<[?], offset: ?>>
  }
  return
}
func.func @counter_as_value(%y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %y, %c0 : memref<?xf32>
  scf.for %j = %c0 to %n step %c1 {
    %k = arith.index_cast %j : index to i32
    %w = arith.sitofp %k : i32 to f32
    memref.store %w, %y[%j] : memref<?xf32>
  }
  return
}

// Left alone too: a loop that reads the output it writes, and one holding an op with effects.
// CHECK-LABEL: func.func @reads_output
// CHECK-NOT: vector.
// CHECK-LABEL: func.func @effects
// CHECK-NOT: vector.
// CHECK: return
func.func @reads_output(%x: memref<?xi8>, %y: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xi8>
  scf.for %j = %c0 to %n step %c1 {
    %v = memref.load %x[%j] : memref<?xi8>
    %p = memref.load %y[%c0] : memref<?xf32>
    %w = arith.sitofp %v : i8 to f32
    %r = arith.addf %w, %p : f32
    memref.store %r, %y[%j] : memref<?xf32>
  }
  return
}
func.func @effects(%x: memref<?xi8>, %y: memref<?xf32>, %ok: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xi8>
  scf.for %j = %c0 to %n step %c1 {
    cf.assert %ok, "checked once per element"
    %v = memref.load %x[%j] : memref<?xi8>
    %w = arith.sitofp %v : i8 to f32
    memref.store %w, %y[%j] : memref<?xf32>
  }
  return
}
