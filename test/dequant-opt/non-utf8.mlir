// RUN: not dequant-opt %s --split-input-file 2>&1 | FileCheck %s
// RUN: not dequant-opt %S/Inputs/non-utf8-symbol.mlir --emit=object -o %t.o 2>&1 | FileCheck %s --check-prefix=SYMBOL
// RUN: not dequant-opt %S/Inputs/non-utf8-parse-error.mlir 2>&1 | FileCheck %s --check-prefix=PARSE

// MLIR strings may hold any bytes (`"\ff"`); reading one as Python text used to raise inside the
// bindings and end in a traceback (found by fuzzing). A string attribute a rule reads must be
// UTF-8; symbol names are shown with `\xNN` escapes.

// CHECK: non-utf8.mlir:[[@LINE+2]]:8: error: 'dq.pmx_dequantize_linear' op attribute 'quant_data_type' must be a string attribute (UTF-8)
func.func @f(%x: tensor<4x16xi16>, %s: tensor<f32>) -> tensor<16x16xf32> {
  %y = "dq.pmx_dequantize_linear"(%x, %s) {quant_data_type = "\ff", group_size = 0 : i64} : (tensor<4x16xi16>, tensor<f32>) -> tensor<16x16xf32>
  return %y : tensor<16x16xf32>
}

// SYMBOL: error: symbol '\xff' is not valid UTF-8
// PARSE: error: MLIR reported an error whose message is not valid UTF-8
