// Input that is not MLIR text, or that would exhaust the parser's stack, and outputs that cannot
// be written: one `dequant-opt: error:` line and exit status 1, never a traceback or a signal.
// RUN: rm -rf %t && mkdir -p %t

// Not UTF-8 (a file, and stdin).
// RUN: printf '\377\376 func' > %t/binary.mlir
// RUN: not dequant-opt %t/binary.mlir 2>&1 | FileCheck %s --check-prefix=UTF8
// RUN: not dequant-opt < %t/binary.mlir 2>&1 | FileCheck %s --check-prefix=UTF8-STDIN
// UTF8: dequant-opt: error: {{.*}}binary.mlir is not UTF-8 text (byte 0xff at offset 0); dequant-opt reads MLIR text (an ONNX model goes to dequant-import-onnx for dq IR, or to dequant-iree to compile it through IREE)
// UTF8-STDIN: dequant-opt: error: <stdin> is not UTF-8 text (byte 0xff at offset 0); {{.*}}dequant-import-onnx{{.*}}dequant-iree

// An ONNX model (a protobuf: ir_version 8, then bytes) names the tools that take one.
// RUN: printf '\010\010\022\003\377\000\001' > %t/model.onnx
// RUN: not dequant-opt %t/model.onnx 2>&1 | FileCheck %s --check-prefix=ONNX
// ONNX: dequant-opt: error: [[MODEL:.*model.onnx]] is an ONNX model and dequant-opt reads MLIR text: `dequant-import-onnx [[MODEL]]` imports it as dq IR, `dequant-iree [[MODEL]] -o model.vmfb` compiles it through IREE

// 5,000 nested regions and 20,000 nested brackets in a dense<...> (each crashed the parser).
// RUN: %python -c "n = 5000; print('func.func @f() {' + 'scf.execute_region {' * n + 'scf.yield' + '}' * n + 'return }')" > %t/regions.mlir
// RUN: not dequant-opt %t/regions.mlir 2>&1 | FileCheck %s --check-prefix=REGIONS
// RUN: %python -c "n = 20000; print('func.func @f() { %%c = arith.constant dense<' + '[' * n + '1' + ']' * n + '> : tensor<1xi32> return }')" > %t/brackets.mlir
// RUN: not dequant-opt %t/brackets.mlir 2>&1 | FileCheck %s --check-prefix=BRACKETS
// REGIONS: dequant-opt: error: {{.*}}regions.mlir nests regions, brackets, parentheses or angle brackets 5001 deep; at most 1000 is accepted
// BRACKETS: dequant-opt: error: {{.*}}brackets.mlir nests regions, brackets, parentheses or angle brackets 20002 deep; at most 1000 is accepted

// -o into a directory that does not exist.
// RUN: not dequant-opt %s -o %t/missing/out.mlir 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: dequant-opt: error: cannot write '{{.*}}missing/out.mlir': No such file or directory

// None of them printed a traceback.
// RUN: not dequant-opt %t/binary.mlir 2>&1 | FileCheck %s --check-prefix=NO-TRACE --implicit-check-not=Traceback
// NO-TRACE: error:
func.func @f(%x: tensor<8xi8>, %s: tensor<f32>) -> tensor<8xf32> {
  %y = "dq.onnx_dequantize_linear"(%x, %s) : (tensor<8xi8>, tensor<f32>) -> tensor<8xf32>
  return %y : tensor<8xf32>
}
