// --help lists the tool's options, every dq pass and the dq pipelines.
// RUN: dequant-opt --help | FileCheck %s

// CHECK: usage: dequant-opt
// CHECK-DAG: --pass-pipeline
// CHECK-DAG: --split-input-file
// CHECK-DAG: --verify-diagnostics
// CHECK-DAG: --mlir-print-ir-after-all
// CHECK: dq passes:
// CHECK-DAG: --dq-normalize {{.*}}canonical dq.dequantize
// CHECK-DAG: --dq-to-linalg {{.*}}linalg.generic
// CHECK-DAG: --dq-storage-abi {{.*}}sub-byte
// CHECK-DAG: --dq-emit-c-interface {{.*}}llvm.emit_c_interface
// CHECK-DAG: --torch-onnx-to-dq {{.*}}DequantizeLinear
// CHECK-DAG: --torch-onnx-dq-matmul {{.*}}MatMul
// CHECK-DAG: --dq-unpack-to-iree {{.*}}iree_tensor_ext.bitcast
// CHECK: dq pipelines:
// CHECK-DAG: --dq-to-llvm {{.*}}LLVM dialect
// CHECK-DAG: --torch-onnx-to-iree {{.*}}iree-compile
