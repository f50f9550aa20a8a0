// Input that is not MLIR text, or that would exhaust the parser's stack, and outputs that cannot
// be written: one `dequant-opt: error:` line and exit status 1, never a traceback or a signal.
// RUN: rm -rf %t && mkdir -p %t

// Not UTF-8 (a file, and stdin).
// RUN: printf '\377\376 func' > %t/binary.mlir
// RUN: not dequant-opt %t/binary.mlir 2>&1 | FileCheck %s --check-prefix=UTF8
// RUN: not dequant-opt < %t/binary.mlir 2>&1 | FileCheck %s --check-prefix=UTF8-STDIN
// UTF8: dequant-opt: error: {{.*}}binary.mlir is not UTF-8 text (byte 0xff at offset 0)
// UTF8-STDIN: dequant-opt: error: <stdin> is not UTF-8 text (byte 0xff at offset 0)

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
