// RUN: dequant-opt %s --allow-unregistered-dialect --split-input-file --torch-onnx-to-dq-iree | FileCheck %s

// torch-onnx-to-dq-iree (passes/torch_onnx_to_dq_iree.py): a DequantizeLinear whose form IREE
// lowers itself (8/16/32-bit integers per tensor or per axis, float8 per tensor) stays IREE's,
// unless it is weight-only or every use is an operand of a large MatMul (at least 32 rows and
// 65,536 elements of B per matrix; on a module tagged AVX-512 VNNI, a MatMul dq's integer kernel
// takes from 2^19 multiply-adds); every other node becomes dq as torch-onnx-to-dq makes it.

// A QDQ pair on the activation and int8 per-channel weights feeding one MatMul of 32 rows and
// 256 x 256 weights: IREE would turn them into an integer contraction, slower there than dq's
// float route, so both become dq.
// CHECK-LABEL: func.func @qdq_matmul_becomes_dq
// CHECK-NOT: "onnx.DequantizeLinear"
// CHECK: dq.onnx_dequantize_linear
// CHECK-SAME: (tensor<32x256xui8>, tensor<f32>, tensor<ui8>) -> tensor<32x256xf32>
// CHECK: dq.onnx_dequantize_linear
// CHECK-SAME: {axis = 1 : i64} : (tensor<256x256xi8>, tensor<256xf32>) -> tensor<256x256xf32>
// CHECK: "onnx.MatMul"
func.func @qdq_matmul_becomes_dq(%xq: !torch.vtensor<[32,256],ui8>, %s: !torch.vtensor<[],f32>, %z: !torch.vtensor<[],ui8>, %ws: !torch.vtensor<[256],f32>) -> !torch.vtensor<[32,256],f32> {
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<256x256xsi8>} : () -> !torch.vtensor<[256,256],si8>
  %x = "torch.operator"(%xq, %s, %z) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[32,256],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[32,256],f32>
  %wf = "torch.operator"(%w, %ws) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[256,256],si8>, !torch.vtensor<[256],f32>) -> !torch.vtensor<[256,256],f32>
  %y = "torch.operator"(%x, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[32,256],f32>, !torch.vtensor<[256,256],f32>) -> !torch.vtensor<[32,256],f32>
  "func.return"(%y) : (!torch.vtensor<[32,256],f32>) -> ()
}

// -----

// The same with 16 rows: IREE's integer contraction is the faster route, so both stay.
// CHECK-LABEL: func.func @qdq_matmul_of_few_rows_stays
// CHECK-COUNT-2: "onnx.DequantizeLinear"
// CHECK-NOT: dq.onnx_dequantize_linear
func.func @qdq_matmul_of_few_rows_stays(%xq: !torch.vtensor<[16,256],ui8>, %s: !torch.vtensor<[],f32>, %z: !torch.vtensor<[],ui8>, %ws: !torch.vtensor<[256],f32>) -> !torch.vtensor<[16,256],f32> {
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<256x256xsi8>} : () -> !torch.vtensor<[256,256],si8>
  %x = "torch.operator"(%xq, %s, %z) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[16,256],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[16,256],f32>
  %wf = "torch.operator"(%w, %ws) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[256,256],si8>, !torch.vtensor<[256],f32>) -> !torch.vtensor<[256,256],f32>
  %y = "torch.operator"(%x, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[16,256],f32>, !torch.vtensor<[256,256],f32>) -> !torch.vtensor<[16,256],f32>
  "func.return"(%y) : (!torch.vtensor<[16,256],f32>) -> ()
}

// -----

// 32 rows of 128 x 128 weights: too small for dq's product to pay for its dispatch; both stay.
// CHECK-LABEL: func.func @qdq_matmul_of_small_weights_stays
// CHECK-COUNT-2: "onnx.DequantizeLinear"
// CHECK-NOT: dq.onnx_dequantize_linear
func.func @qdq_matmul_of_small_weights_stays(%xq: !torch.vtensor<[32,128],ui8>, %s: !torch.vtensor<[],f32>, %z: !torch.vtensor<[],ui8>, %ws: !torch.vtensor<[128],f32>) -> !torch.vtensor<[32,128],f32> {
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<128x128xsi8>} : () -> !torch.vtensor<[128,128],si8>
  %x = "torch.operator"(%xq, %s, %z) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[32,128],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[32,128],f32>
  %wf = "torch.operator"(%w, %ws) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[128,128],si8>, !torch.vtensor<[128],f32>) -> !torch.vtensor<[128,128],f32>
  %y = "torch.operator"(%x, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[32,128],f32>, !torch.vtensor<[128,128],f32>) -> !torch.vtensor<[32,128],f32>
  "func.return"(%y) : (!torch.vtensor<[32,128],f32>) -> ()
}

// -----

// On a module tagged AVX-512 VNNI the 16 rows of 256 x 256 weights take dq's integer kernel
// (65,536 x 16 multiply-adds, at least MIN_INTEGER_MACS), so both become dq.
// CHECK-LABEL: func.func @vnni_qdq_matmul_of_few_rows_becomes_dq
// CHECK-NOT: "onnx.DequantizeLinear"
// CHECK: dq.onnx_dequantize_linear
// CHECK-SAME: (tensor<16x256xui8>, tensor<f32>, tensor<ui8>) -> tensor<16x256xf32>
// CHECK: dq.onnx_dequantize_linear
// CHECK-SAME: {axis = 1 : i64} : (tensor<256x256xi8>, tensor<256xf32>) -> tensor<256x256xf32>
module attributes {dq.avx512vnni} {
func.func @vnni_qdq_matmul_of_few_rows_becomes_dq(%xq: !torch.vtensor<[16,256],ui8>) -> !torch.vtensor<[16,256],f32> {
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<128> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %ws = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<256xf32>} : () -> !torch.vtensor<[256],f32>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<256x256xsi8>} : () -> !torch.vtensor<[256,256],si8>
  %x = "torch.operator"(%xq, %s, %z) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[16,256],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[16,256],f32>
  %wf = "torch.operator"(%w, %ws) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[256,256],si8>, !torch.vtensor<[256],f32>) -> !torch.vtensor<[256,256],f32>
  %y = "torch.operator"(%x, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[16,256],f32>, !torch.vtensor<[256,256],f32>) -> !torch.vtensor<[16,256],f32>
  "func.return"(%y) : (!torch.vtensor<[16,256],f32>) -> ()
}
}

// -----

// The same on a module tagged AVX2 alone (an AVX2 host: dq's vpmaddwd kernel, passes/kernels/qdq_avx2.py).
// CHECK-LABEL: func.func @avx2_qdq_matmul_of_few_rows_becomes_dq
// CHECK-NOT: "onnx.DequantizeLinear"
// CHECK: dq.onnx_dequantize_linear
// CHECK-SAME: (tensor<16x256xui8>, tensor<f32>, tensor<ui8>) -> tensor<16x256xf32>
// CHECK: dq.onnx_dequantize_linear
// CHECK-SAME: {axis = 1 : i64} : (tensor<256x256xi8>, tensor<256xf32>) -> tensor<256x256xf32>
module attributes {dq.avx2} {
func.func @avx2_qdq_matmul_of_few_rows_becomes_dq(%xq: !torch.vtensor<[16,256],ui8>) -> !torch.vtensor<[16,256],f32> {
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<128> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %ws = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<256xf32>} : () -> !torch.vtensor<[256],f32>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<256x256xsi8>} : () -> !torch.vtensor<[256,256],si8>
  %x = "torch.operator"(%xq, %s, %z) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[16,256],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[16,256],f32>
  %wf = "torch.operator"(%w, %ws) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[256,256],si8>, !torch.vtensor<[256],f32>) -> !torch.vtensor<[256,256],f32>
  %y = "torch.operator"(%x, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[16,256],f32>, !torch.vtensor<[256,256],f32>) -> !torch.vtensor<[16,256],f32>
  "func.return"(%y) : (!torch.vtensor<[16,256],f32>) -> ()
}
}

// -----

// 16 rows of 272 x 256 weights tagged AVX2: K = 272 is a multiple of the VNNI kernel's 4 and of
// the AVX2 kernel's 16, so the AVX2 kernel takes it and both become dq; with K = 260 (a multiple
// of 4 only) it refuses, the MatMul is judged by MIN_ROWS as on an untagged module, and both stay.
// CHECK-LABEL: func.func @avx2_qdq_matmul_k_272_becomes_dq
// CHECK-COUNT-2: dq.onnx_dequantize_linear
// CHECK-LABEL: func.func @avx2_qdq_matmul_k_260_stays
// CHECK-COUNT-2: "onnx.DequantizeLinear"
// CHECK-NOT: dq.onnx_dequantize_linear
module attributes {dq.avx2} {
func.func @avx2_qdq_matmul_k_272_becomes_dq(%xq: !torch.vtensor<[16,272],ui8>) -> !torch.vtensor<[16,256],f32> {
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<128> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %ws = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<256xf32>} : () -> !torch.vtensor<[256],f32>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<272x256xsi8>} : () -> !torch.vtensor<[272,256],si8>
  %x = "torch.operator"(%xq, %s, %z) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[16,272],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[16,272],f32>
  %wf = "torch.operator"(%w, %ws) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[272,256],si8>, !torch.vtensor<[256],f32>) -> !torch.vtensor<[272,256],f32>
  %y = "torch.operator"(%x, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[16,272],f32>, !torch.vtensor<[272,256],f32>) -> !torch.vtensor<[16,256],f32>
  "func.return"(%y) : (!torch.vtensor<[16,256],f32>) -> ()
}
func.func @avx2_qdq_matmul_k_260_stays(%xq: !torch.vtensor<[16,260],ui8>) -> !torch.vtensor<[16,256],f32> {
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<128> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %ws = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<256xf32>} : () -> !torch.vtensor<[256],f32>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<260x256xsi8>} : () -> !torch.vtensor<[260,256],si8>
  %x = "torch.operator"(%xq, %s, %z) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[16,260],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[16,260],f32>
  %wf = "torch.operator"(%w, %ws) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[260,256],si8>, !torch.vtensor<[256],f32>) -> !torch.vtensor<[260,256],f32>
  %y = "torch.operator"(%x, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[16,260],f32>, !torch.vtensor<[260,256],f32>) -> !torch.vtensor<[16,256],f32>
  "func.return"(%y) : (!torch.vtensor<[16,256],f32>) -> ()
}
}

// -----

// The same with 4 rows (262,144 multiply-adds): too few for the kernel's dispatch to pay; both stay.
// CHECK-LABEL: func.func @vnni_qdq_matmul_of_little_work_stays
// CHECK-COUNT-2: "onnx.DequantizeLinear"
// CHECK-NOT: dq.onnx_dequantize_linear
module attributes {dq.avx512vnni} {
func.func @vnni_qdq_matmul_of_little_work_stays(%xq: !torch.vtensor<[4,256],ui8>) -> !torch.vtensor<[4,256],f32> {
  %s = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.5> : tensor<f32>} : () -> !torch.vtensor<[],f32>
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<128> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %ws = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<256xf32>} : () -> !torch.vtensor<[256],f32>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<256x256xsi8>} : () -> !torch.vtensor<[256,256],si8>
  %x = "torch.operator"(%xq, %s, %z) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[4,256],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[4,256],f32>
  %wf = "torch.operator"(%w, %ws) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[256,256],si8>, !torch.vtensor<[256],f32>) -> !torch.vtensor<[256,256],f32>
  %y = "torch.operator"(%x, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[4,256],f32>, !torch.vtensor<[256,256],f32>) -> !torch.vtensor<[4,256],f32>
  "func.return"(%y) : (!torch.vtensor<[4,256],f32>) -> ()
}
}

// -----

// 16 rows on a VNNI module, but a scale given at run time (a function argument): dq's integer
// kernel needs constants, so the float route's thresholds apply and both stay.
// CHECK-LABEL: func.func @vnni_qdq_matmul_of_runtime_scale_stays
// CHECK-COUNT-2: "onnx.DequantizeLinear"
// CHECK-NOT: dq.onnx_dequantize_linear
module attributes {dq.avx512vnni} {
func.func @vnni_qdq_matmul_of_runtime_scale_stays(%xq: !torch.vtensor<[16,256],ui8>, %s: !torch.vtensor<[],f32>) -> !torch.vtensor<[16,256],f32> {
  %z = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<128> : tensor<ui8>} : () -> !torch.vtensor<[],ui8>
  %ws = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<0.25> : tensor<256xf32>} : () -> !torch.vtensor<[256],f32>
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<256x256xsi8>} : () -> !torch.vtensor<[256,256],si8>
  %x = "torch.operator"(%xq, %s, %z) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[16,256],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[16,256],f32>
  %wf = "torch.operator"(%w, %ws) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[256,256],si8>, !torch.vtensor<[256],f32>) -> !torch.vtensor<[256,256],f32>
  %y = "torch.operator"(%x, %wf) <{name = "onnx.MatMul"}> : (!torch.vtensor<[16,256],f32>, !torch.vtensor<[256,256],f32>) -> !torch.vtensor<[16,256],f32>
  "func.return"(%y) : (!torch.vtensor<[16,256],f32>) -> ()
}
}

// -----

// The same QDQ pair feeding a Conv: IREE's integer convolution is the faster route, so both
// stay IREE's.
// CHECK-LABEL: func.func @qdq_conv_stays
// CHECK-COUNT-2: "onnx.DequantizeLinear"
// CHECK-NOT: dq.onnx_dequantize_linear
func.func @qdq_conv_stays(%xq: !torch.vtensor<[1,4,5,5],ui8>, %s: !torch.vtensor<[],f32>, %z: !torch.vtensor<[],ui8>, %ws: !torch.vtensor<[8],f32>) -> !torch.vtensor<[1,8,3,3],f32> {
  %w = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense<3> : tensor<8x4x3x3xsi8>} : () -> !torch.vtensor<[8,4,3,3],si8>
  %x = "torch.operator"(%xq, %s, %z) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[1,4,5,5],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[1,4,5,5],f32>
  %wf = "torch.operator"(%w, %ws) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[8,4,3,3],si8>, !torch.vtensor<[8],f32>) -> !torch.vtensor<[8,4,3,3],f32>
  %y = "torch.operator"(%x, %wf) <{name = "onnx.Conv"}> : (!torch.vtensor<[1,4,5,5],f32>, !torch.vtensor<[8,4,3,3],f32>) -> !torch.vtensor<[1,8,3,3],f32>
  "func.return"(%y) : (!torch.vtensor<[1,8,3,3],f32>) -> ()
}

// -----

// An activation read by a MatMul and by another op (a residual Add) stays IREE's.
// CHECK-LABEL: func.func @shared_activation_stays
// CHECK: "onnx.DequantizeLinear"
// CHECK-NOT: dq.onnx_dequantize_linear
func.func @shared_activation_stays(%xq: !torch.vtensor<[32,256],ui8>, %s: !torch.vtensor<[],f32>, %z: !torch.vtensor<[],ui8>, %w: !torch.vtensor<[256,256],f32>) -> !torch.vtensor<[32,256],f32> {
  %x = "torch.operator"(%xq, %s, %z) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[32,256],ui8>, !torch.vtensor<[],f32>, !torch.vtensor<[],ui8>) -> !torch.vtensor<[32,256],f32>
  %m = "torch.operator"(%x, %w) <{name = "onnx.MatMul"}> : (!torch.vtensor<[32,256],f32>, !torch.vtensor<[256,256],f32>) -> !torch.vtensor<[32,256],f32>
  %y = "torch.operator"(%m, %x) <{name = "onnx.Add"}> : (!torch.vtensor<[32,256],f32>, !torch.vtensor<[32,256],f32>) -> !torch.vtensor<[32,256],f32>
  "func.return"(%y) : (!torch.vtensor<[32,256],f32>) -> ()
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

// Forms IREE cannot lower become dq: blocked int4 (blocked along the axis its bytes pack: read
// through the blocks' view, no floordiv), uint16, float8 per axis. int32 per axis (a QDQ model's
// bias) stays.
// CHECK-LABEL: func.func @what_iree_cannot_lower
// CHECK: tensor.expand_shape {{.*}} : tensor<8x4xi4> into tensor<8x2x2xi4>
// CHECK: dq.dequantize
// CHECK-SAME: (tensor<8x2x2xi4>, tensor<8x2xf32>) -> tensor<8x2x2xf32>
// CHECK-COUNT-2: dq.onnx_dequantize_linear
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

// -----

// A "MatMul" of one operand (not ONNX's: stage fuzz seed 99 made it) is no large MatMul: the
// int8 DequantizeLinear per tensor it reads stays IREE's, with no internal error.
// CHECK-LABEL: func.func @matmul_of_one_operand
// CHECK: "onnx.DequantizeLinear"
// CHECK: "onnx.MatMul"
func.func @matmul_of_one_operand(%x: !torch.vtensor<[64,256],si8>, %s: !torch.vtensor<[],f32>) -> !torch.vtensor<[64,256],f32> {
  %0 = "torch.operator"(%x, %s) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[64,256],si8>, !torch.vtensor<[],f32>) -> !torch.vtensor<[64,256],f32>
  %1 = "torch.operator"(%0) <{name = "onnx.MatMul"}> : (!torch.vtensor<[64,256],f32>) -> !torch.vtensor<[64,256],f32>
  "func.return"(%1) : (!torch.vtensor<[64,256],f32>) -> ()
}
