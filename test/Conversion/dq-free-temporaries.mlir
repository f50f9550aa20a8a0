// RUN: dequant-opt %s --dq-free-temporaries --split-input-file | FileCheck %s

// A temporary read only in its block (an unpacked zero point) is freed before the block's
// terminator, after its last use; through an scf.if that yields it, too.
// CHECK-LABEL: func.func @temporary
// CHECK: %[[T:.*]] = memref.alloc
// CHECK: %[[R:.*]] = scf.if
// CHECK:   scf.yield %[[T]]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[R]] :
// CHECK-NEXT: ^bb0
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[T]] : memref<?xi8>
// CHECK-NEXT: return
func.func @temporary(%x: memref<?x?xi8>, %z: memref<?xi8>, %y: memref<?x?xi8>, %c: i1) -> memref<?x?xi8> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %z, %c0 : memref<?xi8>
  %t = memref.alloc(%n) : memref<?xi8>
  %r = scf.if %c -> memref<?xi8> {
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%z : memref<?xi8>) outs(%t : memref<?xi8>) {
    ^bb0(%a: i8, %o: i8):
      linalg.yield %a : i8
    }
    scf.yield %t : memref<?xi8>
  } else {
    scf.yield %z : memref<?xi8>
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %r : memref<?x?xi8>, memref<?xi8>) outs(%y : memref<?x?xi8>) {
  ^bb0(%a: i8, %b: i8, %o: i8):
    %s = arith.subi %a, %b : i8
    linalg.yield %s : i8
  }
  return %y : memref<?x?xi8>
}

// -----

// A buffer that leaves its block (returned, stored, or passed to a call) is not freed here.
// CHECK-LABEL: func.func @escapes
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func private @use(memref<4xi8>)
func.func @escapes(%p: memref<1xmemref<4xi8>>) -> memref<4xi8> {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<4xi8>
  %b = memref.alloc() : memref<4xi8>
  %c = memref.alloc() : memref<4xi8>
  %v = memref.cast %b : memref<4xi8> to memref<4xi8>
  memref.store %v, %p[%c0] : memref<1xmemref<4xi8>>
  func.call @use(%c) : (memref<4xi8>) -> ()
  return %a : memref<4xi8>
}
