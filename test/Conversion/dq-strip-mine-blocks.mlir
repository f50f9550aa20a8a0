// RUN: dequant-opt --dq-strip-mine-blocks %s | FileCheck %s

// dq-strip-mine-blocks splits an innermost loop read through `d0 floordiv c` into whole blocks
// (an inner loop of constant trip count c, the block index hoisted) and one loop for the
// partial last block, which keeps the per-element floordiv.

#block32 = affine_map<(d0) -> (d0 floordiv 32)>
#block16 = affine_map<(d0) -> (d0 floordiv 16)>

// CHECK-LABEL: func.func @blocked
// CHECK-SAME: (%[[X:.*]]: memref<?x?xi8>, %[[S:.*]]: memref<?x?xf32>, %[[Y:.*]]: memref<?x?xf32>)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK:   %[[C32:.*]] = arith.constant 32 : index
// CHECK:   %[[NB:.*]] = arith.divui %[[N:.*]], %[[C32]] : index
// CHECK:   %[[FULL:.*]] = arith.muli %[[NB]], %[[C32]] : index
// CHECK:   scf.for %[[JB:.*]] = %{{.*}} to %[[FULL]] step %[[C32]] {
// CHECK:     %[[K:.*]] = arith.divui %[[JB]], %[[C32]] : index
// CHECK:     %[[END:.*]] = arith.addi %[[JB]], %[[C32]] : index
// CHECK:     scf.for %[[J:.*]] = %[[JB]] to %[[END]] step %{{.*}} {
// CHECK-NOT:   affine.apply
// CHECK:       memref.load %[[X]][%[[I]], %[[J]]]
// CHECK:       memref.load %[[S]][%[[I]], %[[K]]]
// CHECK:       memref.store %{{.*}}, %[[Y]][%[[I]], %[[J]]]
// CHECK:     }
// CHECK:   }
// CHECK:   scf.for %[[T:.*]] = %[[FULL]] to %[[N]] step %{{.*}} {
// CHECK:     %[[TK:.*]] = affine.apply #{{.*}}(%[[T]])
// CHECK:     memref.load %[[S]][%[[I]], %[[TK]]]
// CHECK:   }
// CHECK: }
func.func @blocked(%x: memref<?x?xi8>, %s: memref<?x?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %x, %c0 : memref<?x?xi8>
  %n = memref.dim %x, %c1 : memref<?x?xi8>
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %v = memref.load %x[%i, %j] : memref<?x?xi8>
      %k = affine.apply #block32(%j)
      %sc = memref.load %s[%i, %k] : memref<?x?xf32>
      %w = arith.sitofp %v : i8 to f32
      %r = arith.mulf %w, %sc : f32
      memref.store %r, %y[%i, %j] : memref<?x?xf32>
    }
  }
  return
}

// Two block sizes on one loop: left alone.
// CHECK-LABEL: func.func @two_sizes
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: scf.for
// CHECK: affine.apply
// CHECK: affine.apply
func.func @two_sizes(%x: memref<?xi8>, %s: memref<?xf32>, %t: memref<?xf32>, %y: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xi8>
  scf.for %i = %c0 to %c1 step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %a = affine.apply #block32(%j)
      %b = affine.apply #block16(%j)
      %u = memref.load %s[%a] : memref<?xf32>
      %v = memref.load %t[%b] : memref<?xf32>
      %r = arith.addf %u, %v : f32
      memref.store %r, %y[%i, %j] : memref<?x?xf32>
    }
  }
  return
}
