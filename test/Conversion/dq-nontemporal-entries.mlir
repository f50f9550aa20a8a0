// RUN: dequant-opt --dq-nontemporal-entries %s | FileCheck %s

// dq-nontemporal-entries adds `<name>_nt`, a copy tagged dq.nontemporal (its stores become
// non-temporal in dq-vectorize), after the module's functions, for each public function holding
// a linalg.generic: the caller picks the entry point per call. Private functions, functions
// without a generic, copies and functions whose `_nt` name is taken get none.

#id = affine_map<(d0) -> (d0)>

// CHECK-LABEL: func.func @kernel
// CHECK-SAME: (%{{.*}}: memref<?xi8>, %{{.*}}: memref<?xf32>) attributes {llvm.emit_c_interface} {
// CHECK-LABEL: func.func private @helper
// CHECK-LABEL: func.func @no_generic
// CHECK-LABEL: func.func @taken
// CHECK-LABEL: func.func @taken_nt
// CHECK-NOT: func.func @taken_nt
// CHECK-LABEL: func.func @kernel_nt
// CHECK-SAME: (%[[X:.*]]: memref<?xi8>, %[[Y:.*]]: memref<?xf32>) attributes {dq.nontemporal, llvm.emit_c_interface} {
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[X]] : memref<?xi8>) outs(%[[Y]] : memref<?xf32>)
// CHECK-NOT: func.func
func.func @kernel(%x: memref<?xi8>, %y: memref<?xf32>) attributes {llvm.emit_c_interface} {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : memref<?xi8>) outs(%y : memref<?xf32>) {
  ^bb0(%a: i8, %o: f32):
    %w = arith.sitofp %a : i8 to f32
    linalg.yield %w : f32
  }
  return
}
func.func private @helper(%x: memref<?xi8>, %y: memref<?xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : memref<?xi8>) outs(%y : memref<?xf32>) {
  ^bb0(%a: i8, %o: f32):
    %w = arith.sitofp %a : i8 to f32
    linalg.yield %w : f32
  }
  return
}
func.func @no_generic(%y: memref<?xf32>) {
  return
}
func.func @taken(%x: memref<?xi8>, %y: memref<?xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : memref<?xi8>) outs(%y : memref<?xf32>) {
  ^bb0(%a: i8, %o: f32):
    %w = arith.sitofp %a : i8 to f32
    linalg.yield %w : f32
  }
  return
}
func.func @taken_nt(%y: memref<?xf32>) {
  return
}
