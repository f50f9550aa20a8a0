// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq-iree | FileCheck %s

// torch-onnx-to-dq-iree (passes/torch_onnx_to_dq_iree.py): a DequantizeLinear whose form IREE
// lowers itself (8/16/32-bit integers per tensor or per axis, float8 per tensor) stays IREE's,
// unless it dequantizes constant integer weights read only by MatMuls whose A is no
// DequantizeLinear (weight-only quantization); every other node becomes dq as
// torch-onnx-to-dq makes it.

// A QDQ pair on the activation and int8 per-channel weights feeding one MatMul: IREE turns
// them into an integer contraction, so both stay.
// CHECK-LABEL: func.func @qdq_matmul_stays
// CHECK-COUNT-2: "onnx.DequantizeLinear"
// CHECK-NOT: dq.onnx_dequantize_linear
func.func @qdq_matmul_stays(%xq: !torch.vtensor<[2,4],ui8>, %s: !torch.vtensor<[],f32>, %z: !torch.vtensor<[],ui8>, %ws: !torch.vtensor<[8],f32>) -> !torch.vtensor<[2,8],f32> {
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<4x8xsi8>} : () -> !torch.vtensor<[4,8],si8>
  %x = "torch.operator"(%xq, %s, %z) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[2,4],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[2,4],f32>
  %wf = "torch.operator"(%w, %ws) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[4,8],si8>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[4,8],f32>
  %y = "torch.operator"(%x, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[2,4],f32>, !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[2,8],f32>
  "func.return"(%y) : (!torch.vtensor<[2,8],f32>) -> ()
}

// -----

// The same int8 weights with a float A (weight-only quantization): dq's MatMul forms read them
// quantized, so the weights' node becomes dq.
// CHECK-LABEL: func.func @weight_only_int8_becomes_dq
// CHECK-NOT: "onnx.DequantizeLinear"
// CHECK: dq.onnx_dequantize_linear
// CHECK-SAME: {axis = 1 : i64} : (tensor<4x8xi8>, tensor<8xf32>) -> tensor<4x8xf32>
func.func @weight_only_int8_becomes_dq(%x: !torch.vtensor<[2,4],f32>, %ws: !torch.vtensor<[8],f32>) -> !torch.vtensor<[2,8],f32> {
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<4x8xsi8>} : () -> !torch.vtensor<[4,8],si8>
  %wf = "torch.operator"(%w, %ws) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[4,8],si8>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[4,8],f32>
  %y = "torch.operator"(%x, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[2,4],f32>, !torch.vtensor<[4,8],f32>) -> !torch.vtensor<[2,8],f32>
  "func.return"(%y) : (!torch.vtensor<[2,8],f32>) -> ()
}

// -----

// Forms IREE cannot lower become dq: blocked int4, uint16, float8 per axis. int32 per axis
// (a QDQ model's bias) stays.
// CHECK-LABEL: func.func @what_iree_cannot_lower
// CHECK-COUNT-3: dq.onnx_dequantize_linear
// CHECK-NOT: dq.onnx_dequantize_linear
// CHECK: "onnx.DequantizeLinear"
// CHECK-SAME: -> !torch.vtensor<[8],f32>
func.func @what_iree_cannot_lower(%a: !torch.vtensor<[8,4],si4>, %as: !torch.vtensor<[8,2],f32>, %b: !torch.vtensor<[4],ui16>, %bs: !torch.vtensor<[],f32>,
                                  %c: !torch.vtensor<[4,3],f8E4M3FN>, %cs: !torch.vtensor<[4],f32>, %d: !torch.vtensor<[8],si32>, %ds: !torch.vtensor<[8],f32>)
    -> (!torch.vtensor<[8,4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4,3],f32>, !torch.vtensor<[8],f32>) {
  %0 = "torch.operator"(%a, %as) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64, torch.onnx.block_size = 2 : si64} : (!torch.vtensor<[8,4],si4>, !torch.vtensor<[8,2],f32>) -> !torch.vtensor<[8,4],f32>
  %1 = "torch.operator"(%b, %bs) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[4],ui16>, !torch.vtensor<[],f32>) -> !torch.vtensor<[4],f32>
  %2 = "torch.operator"(%c, %cs) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[4,3],f8E4M3FN>, !torch.vtensor<[4],f32>) -> !torch.vtensor<[4,3],f32>
  %3 = "torch.operator"(%d, %ds) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[8],si32>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[8],f32>
  "func.return"(%0, %1, %2, %3) : (!torch.vtensor<[8,4],f32>, !torch.vtensor<[4],f32>, !torch.vtensor<[4,3],f32>, !torch.vtensor<[8],f32>) -> ()
}
