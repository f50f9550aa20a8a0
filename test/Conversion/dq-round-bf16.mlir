// RUN: dequant-opt %s --dq-round-bf16 | FileCheck %s

// dq-round-bf16 (passes/round_bf16.py): before each f32 -> bf16 truncf, the f32 value is rounded to
// the nearest bf16 (ties to even) on its bits, NaN kept, so the truncf is exact (IREE drops it).

// CHECK-LABEL: func.func @scalar
// CHECK-SAME: (%[[X:[^:]+]]: f32)
// CHECK: %[[B:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK: %[[C16:.*]] = arith.constant 16 : i32
// CHECK: %[[S:.*]] = arith.shrui %[[B]], %[[C16]] : i32
// CHECK: %[[C1:.*]] = arith.constant 1 : i32
// CHECK: %[[L:.*]] = arith.andi %[[S]], %[[C1]] : i32
// CHECK: %[[HALF:.*]] = arith.constant 32767 : i32
// CHECK: %[[A:.*]] = arith.addi %[[B]], %[[HALF]] : i32
// CHECK: %[[A2:.*]] = arith.addi %[[A]], %[[L]] : i32
// CHECK: %[[MASK:.*]] = arith.constant -65536 : i32
// CHECK: %[[R:.*]] = arith.andi %[[A2]], %[[MASK]] : i32
// CHECK: %[[NAN:.*]] = arith.cmpf uno, %[[X]], %[[X]] : f32
// CHECK: %[[F:.*]] = arith.bitcast %[[R]] : i32 to f32
// CHECK: %[[V:.*]] = arith.select %[[NAN]], %[[X]], %[[F]] : f32
// CHECK: %[[T:.*]] = arith.truncf %[[V]] : f32 to bf16
// CHECK: return %[[T]]
func.func @scalar(%x: f32) -> bf16 {
  %t = arith.truncf %x : f32 to bf16
  return %t : bf16
}

// A vector is rounded lane by lane; other truncf ops are left as they are.
// CHECK-LABEL: func.func @others
// CHECK: arith.bitcast %{{.*}} : vector<4xf32> to vector<4xi32>
// CHECK: arith.truncf %{{.*}} : vector<4xf32> to vector<4xbf16>
// CHECK-NOT: arith.bitcast
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK-NEXT: arith.truncf %{{.*}} : f64 to bf16
func.func @others(%v: vector<4xf32>, %x: f32, %d: f64) -> (vector<4xbf16>, f16, bf16) {
  %a = arith.truncf %v : vector<4xf32> to vector<4xbf16>
  %b = arith.truncf %x : f32 to f16
  %c = arith.truncf %d : f64 to bf16
  return %a, %b, %c : vector<4xbf16>, f16, bf16
}
