// Depthwise QDQ convolutions through dequant-iree for llvm-cpu (dequant.depthwise, after
// dequant.qdq_convs): each becomes the sum of its k * k terms, a Slice of the padded input times
// the tap's per-channel weights ([C, 1, 1] constants), summed six terms at a time, then the
// bias. Stride 1 slices the padded input itself; stride 2 first splits it into its four phases
// (padded to even dims, Reshape, Transpose), so each term is a unit-stride Slice of one phase.
// That is the route for a CPU whose tags dq's int8 kernels do not take (x86-64: no AVX2 known);
// for one with AVX2 (haswell) each is one dispatch of dq's depthwise kernel (AVX2 below).
// REQUIRES: iree
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/depthwise_conv.py %t/m.onnx
// RUN: %python -m dequant.iree %t/m.onnx --emit-mlir -q -o %t/cpu.mlir -- --iree-llvmcpu-target-cpu=x86-64
// RUN: FileCheck %s < %t/cpu.mlir
// RUN: %python -m dequant.iree %t/m.onnx --emit-mlir -q -o %t/avx2.mlir -- --iree-llvmcpu-target-cpu=haswell
// RUN: FileCheck %s --check-prefix=AVX2 < %t/avx2.mlir
// A GPU target keeps the Convs.
// RUN: %python -m dequant.iree %t/m.onnx --target vulkan-spirv --emit-mlir -q -o %t/gpu.mlir
// RUN: FileCheck %s --check-prefix=GPU < %t/gpu.mlir

// CHECK-LABEL: func.func @g(
// CHECK-NOT: onnx.Conv
// 3 x 3, stride 1, pads 1: 9 x 9 -> 11 x 11, nine 9 x 9 slices.
// CHECK: %[[P1:.*]] = "torch.operator"(%{{.*}}, %{{.*}}) <{name = "onnx.Pad"}> : {{.*}} -> !torch.vtensor<[1,8,11,11],f32>
// CHECK-COUNT-9: "torch.operator"(%[[P1]], %{{.*}}, %{{.*}}, %{{.*}}) <{name = "onnx.Slice"}> : {{.*}} -> !torch.vtensor<[1,8,9,9],f32>
// The terms in order of the kernel's rows, summed six at a time, then the groups' sums, then the bias.
// CHECK: %[[T0:.*]] = "torch.operator"(%{{.*}}, %{{.*}}) <{name = "onnx.Mul"}> : (!torch.vtensor<[1,8,9,9],f32>, !torch.vtensor<[8,1,1],f32>)
// CHECK: %[[T1:.*]] = "torch.operator"(%{{.*}}, %{{.*}}) <{name = "onnx.Mul"}> : (!torch.vtensor<[1,8,9,9],f32>, !torch.vtensor<[8,1,1],f32>)
// CHECK: %[[T2:.*]] = "torch.operator"(%{{.*}}, %{{.*}}) <{name = "onnx.Mul"}> : (!torch.vtensor<[1,8,9,9],f32>, !torch.vtensor<[8,1,1],f32>)
// CHECK: %[[T3:.*]] = "torch.operator"(%{{.*}}, %{{.*}}) <{name = "onnx.Mul"}> : (!torch.vtensor<[1,8,9,9],f32>, !torch.vtensor<[8,1,1],f32>)
// CHECK: %[[T4:.*]] = "torch.operator"(%{{.*}}, %{{.*}}) <{name = "onnx.Mul"}> : (!torch.vtensor<[1,8,9,9],f32>, !torch.vtensor<[8,1,1],f32>)
// CHECK: %[[T5:.*]] = "torch.operator"(%{{.*}}, %{{.*}}) <{name = "onnx.Mul"}> : (!torch.vtensor<[1,8,9,9],f32>, !torch.vtensor<[8,1,1],f32>)
// CHECK: %[[T6:.*]] = "torch.operator"(%{{.*}}, %{{.*}}) <{name = "onnx.Mul"}> : (!torch.vtensor<[1,8,9,9],f32>, !torch.vtensor<[8,1,1],f32>)
// CHECK: %[[T7:.*]] = "torch.operator"(%{{.*}}, %{{.*}}) <{name = "onnx.Mul"}> : (!torch.vtensor<[1,8,9,9],f32>, !torch.vtensor<[8,1,1],f32>)
// CHECK: %[[T8:.*]] = "torch.operator"(%{{.*}}, %{{.*}}) <{name = "onnx.Mul"}> : (!torch.vtensor<[1,8,9,9],f32>, !torch.vtensor<[8,1,1],f32>)
// CHECK: %[[A1:.*]] = "torch.operator"(%[[T0]], %[[T1]]) <{name = "onnx.Add"}>
// CHECK: %[[A2:.*]] = "torch.operator"(%[[A1]], %[[T2]]) <{name = "onnx.Add"}>
// CHECK: %[[A3:.*]] = "torch.operator"(%[[A2]], %[[T3]]) <{name = "onnx.Add"}>
// CHECK: %[[A4:.*]] = "torch.operator"(%[[A3]], %[[T4]]) <{name = "onnx.Add"}>
// CHECK: %[[A5:.*]] = "torch.operator"(%[[A4]], %[[T5]]) <{name = "onnx.Add"}>
// CHECK: %[[A6:.*]] = "torch.operator"(%[[T6]], %[[T7]]) <{name = "onnx.Add"}>
// CHECK: %[[A7:.*]] = "torch.operator"(%[[A6]], %[[T8]]) <{name = "onnx.Add"}>
// CHECK: %[[A8:.*]] = "torch.operator"(%[[A5]], %[[A7]]) <{name = "onnx.Add"}>
// CHECK: "torch.operator"(%[[A8]], %{{.*}}) <{name = "onnx.Add"}> : (!torch.vtensor<[1,8,9,9],f32>, !torch.vtensor<[8,1,1],f32>)
// 5 x 5, stride 2, pads 2: 9 x 9 -> 13 x 13, one more row and column -> four 7 x 7 phases,
// twenty-five 5 x 5 slices.
// CHECK: <{name = "onnx.Clip"}>
// CHECK: %[[P2:.*]] = "torch.operator"(%{{.*}}, %{{.*}}) <{name = "onnx.Pad"}> : {{.*}} -> !torch.vtensor<[1,8,14,14],f32>
// CHECK: %[[R:.*]] = "torch.operator"(%[[P2]], %{{.*}}) <{name = "onnx.Reshape"}> : {{.*}} -> !torch.vtensor<[1,8,7,2,7,2],f32>
// CHECK: %[[PH:.*]] = "torch.operator"(%[[R]]) <{name = "onnx.Transpose"}> {torch.onnx.perm = [0 : si64, 3 : si64, 5 : si64, 1 : si64, 2 : si64, 4 : si64]} : {{.*}} -> !torch.vtensor<[1,2,2,8,7,7],f32>
// CHECK-COUNT-25: "torch.operator"(%[[PH]], %{{.*}}, %{{.*}}, %{{.*}}) <{name = "onnx.Slice"}> : {{.*}} -> !torch.vtensor<[1,1,1,8,5,5],f32>
// CHECK-COUNT-25: <{name = "onnx.Mul"}> : (!torch.vtensor<[1,8,5,5],f32>, !torch.vtensor<[8,1,1],f32>)
// CHECK: <{name = "onnx.Add"}> : (!torch.vtensor<[1,8,5,5],f32>, !torch.vtensor<[8,1,1],f32>)
// CHECK: return

// The codes NHWC (the input quantized into them by one dispatch of dq's quantize kernel,
// passes/kernels/nhwc_quantize.py), each convolution one dispatch of dq's depthwise kernel
// (passes/kernels/depthwise.py) reading its padding as the code zx (no Pad), the first's NHWC
// result read by the second without a transpose (the two cancelled: an Identity).
// AVX2-LABEL: func.func @g(
// AVX2-NOT: onnx.Conv
// AVX2-NOT: onnx.Pad
// AVX2-NOT: onnx.Transpose
// AVX2: "flow.dispatch"({{.*}}) {entry_points = [@dq_quantize_nhwc_u8_n1_c8_h9_w9_rcp::
// AVX2-SAME: -> tensor<9x72xi8>
// AVX2: %[[Y1:.*]] = "flow.dispatch"({{.*}}) {entry_points = [@dq_depthwise_u8_qu8_n1_h9_w9_c8_k3x3_s1x1_p1x1x1x1_b_rcp_bd::
// AVX2-SAME: -> tensor<1x9x9x8xi8>
// AVX2: %[[T1:.*]] = "torch_c.from_builtin_tensor"(%[[Y1]]) : (tensor<1x9x9x8xi8>) -> !torch.vtensor<[1,9,9,8],ui8>
// AVX2: %[[SAME:.*]] = "torch.operator"(%[[T1]]) <{name = "onnx.Identity"}>
// AVX2-NOT: onnx.Pad
// AVX2: "flow.dispatch"({{.*}}) {entry_points = [@dq_depthwise_u8_qu8_n1_h9_w9_c8_k5x5_s2x2_p2x2x2x2_b_rcp_bd::
// AVX2-SAME: -> tensor<1x5x5x8xi8>
// AVX2-NOT: onnx.Slice

// GPU-LABEL: func.func @g(
// GPU: <{name = "onnx.Conv"}> {{.*}}torch.onnx.group = 8 : si64
// GPU: <{name = "onnx.Conv"}> {{.*}}torch.onnx.group = 8 : si64
