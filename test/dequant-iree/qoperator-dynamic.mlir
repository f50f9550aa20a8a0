// QOperator pooling and dynamic int8 ops through dequant-iree (the others: qoperator.mlir; two
// files so that lit runs their chains of tools side by side): each rewritten at the ONNX level
// (python/formats/qoperator.py) or left standard for IREE's importer. The inputs come from
// Inputs/qoperator.py (uint8 activations, int8 weights per output channel).
// REQUIRES: iree
// RUN: rm -rf %t && mkdir -p %t

// com.microsoft QLinearGlobalAveragePool: channels_last dropped (0 is the float op's layout).
// RUN: %python %S/Inputs/qoperator.py %t/gap.onnx QLinearGlobalAveragePool
// RUN: %python -m dequant.iree %t/gap.onnx --emit-mlir -q -o %t/gap.mlir
// RUN: FileCheck %s --check-prefix=GAP < %t/gap.mlir
// GAP-LABEL: func.func @g(
// GAP-NOT: onnx.QLinearGlobalAveragePool
// GAP: %[[XF:.*]] = "torch.operator"({{.*}}) <{name = "onnx.DequantizeLinear"}>
// GAP: %[[Y:.*]] = "torch.operator"(%[[XF]]) <{name = "onnx.GlobalAveragePool"}> : {{.*}} -> !torch.vtensor<[1,4,1,1],f32>
// GAP: "torch.operator"(%[[Y]], {{.*}}) <{name = "onnx.QuantizeLinear"}> : {{.*}} -> !torch.vtensor<[1,4,1,1],ui8>

// com.microsoft DynamicQuantizeMatMul: DynamicQuantizeLinear (uint8), MatMulInteger with both zero
// points (exact int32 sums), then f32 times sa * sb, plus the float bias; which the stage then
// gives dq's dispatches (for haswell: the AVX2 kernel's sign-split form, its 8 columns one group of 8 lanes): x's
// range by row groups (2 rows: 2 workgroups), x quantized, the kernel reading xq, sx and zx (passes/dynamic_matmul.py), the bias IREE's Add.
// RUN: %python %S/Inputs/qoperator.py %t/dqmm.onnx DynamicQuantizeMatMul
// RUN: %python -m dequant.iree %t/dqmm.onnx --emit-mlir -q -o %t/dqmm.mlir -- --iree-llvmcpu-target-cpu=haswell
// RUN: FileCheck %s --check-prefix=DQMM < %t/dqmm.mlir
// DQMM-LABEL: func.func @g(
// DQMM-SAME: %[[X:.*]]: !torch.vtensor<[2,16],f32>
// DQMM-NOT: onnx.DynamicQuantizeMatMul
// DQMM-NOT: onnx.MatMulInteger
// DQMM-DAG: %[[BIAS:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<bias> :
// DQMM-DAG: %[[XB:.*]] = "torch_c.to_builtin_tensor"(%[[X]])
// DQMM: %[[P:.*]] = "flow.dispatch"(%{{.*}}, %[[XB]], %{{.*}}) {entry_points = [@dq_dynamic_range_k16_w2::
// DQMM: %[[Q:.*]]:3 = "flow.dispatch"(%{{.*}}, %[[XB]], %[[P]], %{{.*}}) {entry_points = [@dq_dynamic_quantize_k16_w2::
// DQMM: %[[D:.*]] = "flow.dispatch"(%{{.*}}, %[[Q]]#0, %[[Q]]#1, %[[Q]]#2, {{.*}}) {entry_points = [@dq_matmul_qdq_avx2s_u8_i8_k16_n8_dyn::
// DQMM-SAME: -> tensor<2x8xf32>
// DQMM: %[[Y:.*]] = "torch_c.from_builtin_tensor"(%[[D]])
// DQMM: %[[YB:.*]] = "torch.operator"(%[[Y]], %[[BIAS]]) <{name = "onnx.Add"}>
// DQMM: return %[[YB]]

// com.microsoft MatMulIntegerToFloat(A, B, sa, sb, za, zb): the same without the quantizing.
// RUN: %python %S/Inputs/qoperator.py %t/mmitf.onnx MatMulIntegerToFloat
// RUN: %python -m dequant.iree %t/mmitf.onnx --emit-mlir -q -o %t/mmitf.mlir
// RUN: FileCheck %s --check-prefix=MMITF < %t/mmitf.mlir
// MMITF-LABEL: func.func @g(
// MMITF-SAME: %[[X:.*]]: !torch.vtensor<[2,16],ui8>
// MMITF-NOT: onnx.MatMulIntegerToFloat
// MMITF-DAG: %[[SX:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<sx> :
// MMITF-DAG: %[[SW:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<sw> :
// MMITF-DAG: %[[ZX:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<zx> :
// MMITF-DAG: %[[ZW:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<zw> :
// MMITF: %[[D:.*]] = "torch.operator"(%[[X]], {{.*}}, %[[ZX]], %[[ZW]]) <{name = "onnx.MatMulInteger"}>
// MMITF: %[[DF:.*]] = "torch.operator"(%[[D]]) <{name = "onnx.Cast"}>
// MMITF: %[[S:.*]] = "torch.operator"(%[[SX]], %[[SW]]) <{name = "onnx.Mul"}>
// MMITF: %[[Y:.*]] = "torch.operator"(%[[DF]], %[[S]]) <{name = "onnx.Mul"}>
// MMITF: return %[[Y]]

// MatMulInteger and ConvInteger are standard ONNX that IREE lowers itself: left as they are.
// RUN: %python %S/Inputs/qoperator.py %t/mmi.onnx MatMulInteger
// RUN: %python -m dequant.iree %t/mmi.onnx --emit-mlir -q -o %t/mmi.mlir
// RUN: FileCheck %s --check-prefix=MMI < %t/mmi.mlir
// MMI-LABEL: func.func @g(
// MMI-NOT: onnx.DequantizeLinear
// MMI: %[[Y:.*]] = "torch.operator"({{.*}}) <{name = "onnx.MatMulInteger"}> : (!torch.vtensor<[2,16],ui8>, !torch.vtensor<[16,8],si8>, !torch.vtensor<[],ui8>, !torch.vtensor<[8],si8>) -> !torch.vtensor<[2,8],si32>
// MMI-NEXT: return %[[Y]]
// RUN: %python %S/Inputs/qoperator.py %t/ci.onnx ConvInteger
// RUN: %python -m dequant.iree %t/ci.onnx --emit-mlir -q -o %t/ci.mlir
// RUN: FileCheck %s --check-prefix=CI < %t/ci.mlir
// CI-LABEL: func.func @g(
// CI-NOT: onnx.DequantizeLinear
// CI: %[[Y:.*]] = "torch.operator"({{.*}}) <{name = "onnx.ConvInteger"}> : {{.*}} -> !torch.vtensor<[1,8,6,6],si32>
// CI-NEXT: return %[[Y]]
