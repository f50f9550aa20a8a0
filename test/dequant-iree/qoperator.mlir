// QOperator ops through dequant-iree (the pooling and dynamic int8 ones: qoperator-dynamic.mlir):
// each rewritten at the ONNX level into the QDQ form quantize_static writes (DequantizeLinear of
// each quantized input, the float op, QuantizeLinear of its result; python/formats/qoperator.py),
// which IREE's importer then reads.
// The inputs come from Inputs/qoperator.py (uint8 activations, int8 weights per output channel).
// REQUIRES: iree
// RUN: rm -rf %t && mkdir -p %t

// QLinearConv(x, sx, zx, w, sw, zw, sy, zy, B): w dequantized along its output channel, the int32
// bias with zero point 0 and scale sx * sw. (A GPU target: for llvm-cpu the QDQ convolution is
// then given to IREE in float, CONV-CPU below.)
// RUN: %python %S/Inputs/qoperator.py %t/conv.onnx QLinearConv
// RUN: %python -m dequant.iree %t/conv.onnx --target vulkan-spirv --emit-mlir -q -o %t/conv.mlir
// RUN: FileCheck %s --check-prefix=CONV < %t/conv.mlir
// CONV-LABEL: func.func @g(
// CONV-SAME: %[[X:.*]]: !torch.vtensor<[1,4,8,8],ui8>) -> !torch.vtensor<[1,8,8,8],ui8>
// CONV-NOT: onnx.QLinearConv
// CONV-DAG: %[[SX:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<sx> : tensor<f32>}
// CONV-DAG: %[[ZX:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<zx> : tensor<ui8>}
// CONV-DAG: %[[W:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<w> : tensor<8x4x3x3xsi8>}
// CONV-DAG: %[[SW:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<sw> : tensor<8xf32>}
// CONV-DAG: %[[ZW:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<zw> : tensor<8xsi8>}
// CONV-DAG: %[[SY:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<sy> : tensor<f32>}
// CONV-DAG: %[[ZY:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<zy> : tensor<ui8>}
// CONV-DAG: %[[B:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<b> : tensor<8xsi32>}
// CONV-DAG: %[[SB:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<[[SB_RES:bias_scale.*]]> : tensor<8xf32>}
// CONV-DAG: %[[ZB:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<{{bias_zero_point.*}}> : tensor<8xsi32>}
// CONV: %[[XF:.*]] = "torch.operator"(%[[X]], %[[SX]], %[[ZX]]) <{name = "onnx.DequantizeLinear"}> :
// CONV: %[[WF:.*]] = "torch.operator"(%[[W]], %[[SW]], %[[ZW]]) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64} : {{.*}} -> !torch.vtensor<[8,4,3,3],f32>
// CONV: %[[BF:.*]] = "torch.operator"(%[[B]], %[[SB]], %[[ZB]]) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64} : {{.*}} -> !torch.vtensor<[8],f32>
// CONV: %[[Y:.*]] = "torch.operator"(%[[XF]], %[[WF]], %[[BF]]) <{name = "onnx.Conv"}> {torch.onnx.pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]} : {{.*}} -> !torch.vtensor<[1,8,8,8],f32>
// CONV: %[[YQ:.*]] = "torch.operator"(%[[Y]], %[[SY]], %[[ZY]]) <{name = "onnx.QuantizeLinear"}> : {{.*}} -> !torch.vtensor<[1,8,8,8],ui8>
// CONV: return %[[YQ]]
// The bias scale is f32(0.02 * 0.01) = 0x3951B717 first (little endian after the 4-byte alignment).
// CONV: [[SB_RES]]: "0x0800000017B75139

// For llvm-cpu (dequant.qdq_convs): the weights and the bias become their f32 values, x's
// dequantize (a graph input: no QuantizeLinear before it) and y's quantize stay.
// RUN: %python -m dequant.iree %t/conv.onnx --emit-mlir -q -o %t/conv-cpu.mlir
// RUN: FileCheck %s --check-prefix=CONV-CPU < %t/conv-cpu.mlir
// CONV-CPU-LABEL: func.func @g(
// CONV-CPU-SAME: %[[X:.*]]: !torch.vtensor<[1,4,8,8],ui8>)
// CONV-CPU-DAG: %[[W:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<{{.*}}> : tensor<8x4x3x3xf32>}
// CONV-CPU-DAG: %[[B:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<{{.*}}> : tensor<8xf32>}
// CONV-CPU: %[[XF:.*]] = "torch.operator"(%[[X]], {{.*}}) <{name = "onnx.DequantizeLinear"}>
// CONV-CPU-NOT: onnx.DequantizeLinear
// CONV-CPU: %[[Y:.*]] = "torch.operator"(%[[XF]], %[[W]], %[[B]]) <{name = "onnx.Conv"}>
// CONV-CPU: "torch.operator"(%[[Y]], {{.*}}) <{name = "onnx.QuantizeLinear"}>

// QLinearMatMul: b per column, dequantized along its last axis.
// RUN: %python %S/Inputs/qoperator.py %t/matmul.onnx QLinearMatMul
// RUN: %python -m dequant.iree %t/matmul.onnx --emit-mlir -q -o %t/matmul.mlir
// RUN: FileCheck %s --check-prefix=MATMUL < %t/matmul.mlir
// MATMUL-LABEL: func.func @g(
// MATMUL-SAME: %[[X:.*]]: !torch.vtensor<[2,16],ui8>
// MATMUL-NOT: onnx.QLinearMatMul
// MATMUL: %[[XF:.*]] = "torch.operator"(%[[X]], {{.*}}) <{name = "onnx.DequantizeLinear"}> :
// MATMUL: %[[WF:.*]] = "torch.operator"({{.*}}) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 1 : si64} : (!torch.vtensor<[16,8],si8>, !torch.vtensor<[8],f32>, !torch.vtensor<[8],si8>) -> !torch.vtensor<[16,8],f32>
// MATMUL: %[[Y:.*]] = "torch.operator"(%[[XF]], %[[WF]]) <{name = "onnx.MatMul"}>
// MATMUL: "torch.operator"(%[[Y]], {{.*}}) <{name = "onnx.QuantizeLinear"}> : {{.*}} -> !torch.vtensor<[2,8],ui8>

// com.microsoft QGemm, transB = 1: b per row of B (its output column); the per-column int32
// bias C as f32(C) * (sa * sb), beta = alpha.
// RUN: %python %S/Inputs/qoperator.py %t/qgemm.onnx QGemm
// RUN: %python -m dequant.iree %t/qgemm.onnx --emit-mlir -q -o %t/qgemm.mlir
// RUN: FileCheck %s --check-prefix=QGEMM < %t/qgemm.mlir
// QGEMM-LABEL: func.func @g(
// QGEMM-NOT: onnx.QGemm
// QGEMM: %[[XF:.*]] = "torch.operator"({{.*}}) <{name = "onnx.DequantizeLinear"}> : (!torch.vtensor<[2,16],ui8>
// QGEMM: %[[WF:.*]] = "torch.operator"({{.*}}) <{name = "onnx.DequantizeLinear"}> {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[8,16],si8>
// QGEMM: %[[C:.*]] = "torch.operator"({{.*}}) <{name = "onnx.Cast"}> {torch.onnx.to = 1 : si64} : (!torch.vtensor<[8],si32>)
// QGEMM: %[[CF:.*]] = "torch.operator"(%[[C]], {{.*}}) <{name = "onnx.Mul"}>
// QGEMM: %[[Y:.*]] = "torch.operator"(%[[XF]], %[[WF]], %[[CF]]) <{name = "onnx.Gemm"}> {torch.onnx.alpha = 1.000000e+00 : f32, torch.onnx.beta = 1.000000e+00 : f32, torch.onnx.transB = 1 : si64}
// QGEMM: "torch.operator"(%[[Y]], {{.*}}) <{name = "onnx.QuantizeLinear"}> : {{.*}} -> !torch.vtensor<[2,8],ui8>

// com.microsoft QLinearAdd: each input with its own scale and zero point.
// RUN: %python %S/Inputs/qoperator.py %t/add.onnx QLinearAdd
// RUN: %python -m dequant.iree %t/add.onnx --emit-mlir -q -o %t/add.mlir
// RUN: FileCheck %s --check-prefix=ADD < %t/add.mlir
// ADD-LABEL: func.func @g(
// ADD-SAME: %[[A:[^:]*]]: !torch.vtensor<[1,4,8,8],ui8>, %[[B:[^:]*]]: !torch.vtensor<[1,4,8,8],ui8>
// ADD-NOT: onnx.QLinearAdd
// ADD-DAG: %[[SA:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<sx> :
// ADD-DAG: %[[SB:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<sx2> :
// ADD-DAG: %[[SY:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<sy> :
// ADD: %[[AF:.*]] = "torch.operator"(%[[A]], %[[SA]], {{.*}}) <{name = "onnx.DequantizeLinear"}>
// ADD: %[[BF:.*]] = "torch.operator"(%[[B]], %[[SB]], {{.*}}) <{name = "onnx.DequantizeLinear"}>
// ADD: %[[Y:.*]] = "torch.operator"(%[[AF]], %[[BF]]) <{name = "onnx.Add"}>
// ADD: "torch.operator"(%[[Y]], %[[SY]], {{.*}}) <{name = "onnx.QuantizeLinear"}>

// com.microsoft QLinearConcat(sy, zy, (x, s, z)...): the output's scale comes first.
// RUN: %python %S/Inputs/qoperator.py %t/concat.onnx QLinearConcat
// RUN: %python -m dequant.iree %t/concat.onnx --emit-mlir -q -o %t/concat.mlir
// RUN: FileCheck %s --check-prefix=CONCAT < %t/concat.mlir
// CONCAT-LABEL: func.func @g(
// CONCAT-SAME: %[[A:[^:]*]]: !torch.vtensor<[1,4,8,8],ui8>, %[[B:[^:]*]]: !torch.vtensor<[1,4,8,8],ui8>
// CONCAT-NOT: onnx.QLinearConcat
// CONCAT-DAG: %[[SY:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<sy> :
// CONCAT-DAG: %[[ZY:.*]] = "torch.operator"() <{name = "onnx.Constant"}> {torch.onnx.value = dense_resource<zy> :
// CONCAT: %[[AF:.*]] = "torch.operator"(%[[A]], {{.*}}) <{name = "onnx.DequantizeLinear"}>
// CONCAT: %[[BF:.*]] = "torch.operator"(%[[B]], {{.*}}) <{name = "onnx.DequantizeLinear"}>
// CONCAT: %[[Y:.*]] = "torch.operator"(%[[AF]], %[[BF]]) <{name = "onnx.Concat"}> {torch.onnx.axis = 1 : si64}
// CONCAT: "torch.operator"(%[[Y]], %[[SY]], %[[ZY]]) <{name = "onnx.QuantizeLinear"}> : {{.*}} -> !torch.vtensor<[1,8,8,8],ui8>
