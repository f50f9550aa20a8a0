// Inputs MLIR 22's parser aborts on (an assertion, found by fuzzing) are refused before parsing,
// with an error at the construct (python/guards.py); everything else parses as before.
// RUN: not dequant-opt %s --split-input-file 2>&1 | FileCheck %s

// A sub-channel zero point outside [0, 2^w): 300 with 4-bit storage, and a negative one.
// CHECK: parser-crashes.mlir:[[# @LINE + 1]]:79: error: zero point 300 of a sub-channel !quant.uniform with 4-bit storage: MLIR 22's parser aborts on a zero point outside [0, 15]
func.func @big(%x: tensor<2x4x!quant.uniform<i4:f32:{0:1, 1:2}, {{1.0:7, 0.03:300}, {1.0, 2.0}}>>) {
  return
}

// -----

// CHECK: parser-crashes.mlir:[[# @LINE + 1]]:76: error: zero point -3 of a sub-channel !quant.uniform with 8-bit storage
func.func @negative(%x: tensor<2x4x!quant.uniform<i8:f32:{0:1, 1:2}, {{1.0:-3, 0.5}, {1.0, 2.0}}>>) {
  return
}

// -----

// Storage spelled as a builtin integer type (ui4, si8), which the parser takes too (found by
// fuzzing: the first guard only knew i/u).
// CHECK: parser-crashes.mlir:[[# @LINE + 1]]:84: error: zero point 300 of a sub-channel !quant.uniform with 4-bit storage
func.func @big_ui4(%x: tensor<2x4x!quant.uniform<ui4:f32:{0:1, 1:2}, {{1.0:7, 0.03:300}, {1.0, 2.0}}>>) {
  return
}

// -----

// CHECK: parser-crashes.mlir:[[# @LINE + 1]]:81: error: zero point -3 of a sub-channel !quant.uniform with 8-bit storage
func.func @negative_si8(%x: tensor<2x4x!quant.uniform<si8:f32:{0:1, 1:2}, {{1.0:-3, 0.5}, {1.0, 2.0}}>>) {
  return
}

// -----

// A zero point written in hexadecimal (found by fuzzing: 0x8000 read as 0 by the first guard).
// CHECK: parser-crashes.mlir:[[# @LINE + 1]]:82: error: zero point 32768 of a sub-channel !quant.uniform with 8-bit storage
func.func @hex_zero_point(%x: tensor<2x4x!quant.uniform<i8:f32:{0:1, 1:2}, {{1.0:0x8000, 0.5}, {1.0, 2.0}}>>) {
  return
}

// -----

// A linalg.generic whose iterator_types are not strings.
// CHECK: parser-crashes.mlir:[[# @LINE + 3]]:72: error: linalg.generic iterator_types element '1' is not a string: MLIR 22's parser aborts on it
#map = affine_map<(d0) -> (d0)>
func.func @iterators(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = linalg.generic {indexing_maps = [#map, #map], iterator_types = [1, 2]} ins(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// An op name that is not UTF-8 (generic form, unregistered dialects allowed): the Python bindings
// abort on any walk over it.
// CHECK: parser-crashes.mlir:[[# @LINE + 2]]:8: error: op name "\ff" is not valid UTF-8: the MLIR Python bindings abort on an op they cannot name
func.func @name(%b: tensor<8xi8>) -> tensor<4x4xf4E2M1FN> {
  %x = "\ff"(%b) : (tensor<8xi8>) -> tensor<4x4xf4E2M1FN>
  return %x : tensor<4x4xf4E2M1FN>
}

// -----

// A string left open in a file-metadata block (found by fuzzing, seed 137): the resource parser
// consumes the lexer's error token, which asserts.
// CHECK: parser-crashes.mlir:[[# @LINE + 5]]:38: error: string literal without a closing quote in a file-metadata block {-# ... #-}: MLIR 22's parser can abort on a token its lexer rejects there
func.func @resources() {
  return
}
{-#
  dialect_resources: { builtin: { w: "0x08000000 }
#-}

// -----

// An unknown escape in a string there (\q; the lexer takes \", \\, \n, \t and two hex digits)
// is the same lexer error token, and the same assertion.
// CHECK: parser-crashes.mlir:[[# @LINE + 5]]:41: error: unknown escape in a string literal in a file-metadata block {-# ... #-}: MLIR 22's parser can abort on a token its lexer rejects there
func.func @escape() {
  return
}
{-#
  dialect_resources: { builtin: { w: "0x\q08" } }
#-}

// -----

// Any token the lexer rejects there is the same error token: a character no token starts with
// (`$`), after a comment whose `#-}` ends no block.
// CHECK: parser-crashes.mlir:[[# @LINE + 6]]:38: error: unexpected character '$' in a file-metadata block {-# ... #-}: MLIR 22's parser can abort on a token its lexer rejects there
func.func @dollar() {
  return
}
{-#
  // #-}
  dialect_resources: { builtin: { w: $ } }
#-}

// -----

// A resource blob whose alignment (its first 4 bytes) is 0: the parser fails to allocate it and
// aborts ("LLVM ERROR: out of memory"; found by the stage fuzzer, seed 33). Alignment 8 parses.
// CHECK: parser-crashes.mlir:[[# @LINE + 5]]:38: error: a resource blob whose alignment (its first 4 bytes) is 0: MLIR 22's parser aborts on it
func.func @alignment_zero() {
  return
}
{-#
  dialect_resources: { builtin: { w: "0x000000000102" } }
#-}

// -----

// CHECK-LABEL: func.func @alignment_eight
func.func @alignment_eight() {
  return
}
{-#
  dialect_resources: { builtin: { w: "0x080000000102" } }
#-}

// -----

// In range, and per-axis / per-layer zero points (which the parser takes): parsed as usual.
// CHECK-LABEL: func.func @fine
// CHECK-LABEL: func.func @per_axis
func.func @fine(%x: tensor<2x4x!quant.uniform<u4:f32:{0:1, 1:2}, {{1.0:15, 0.5:0}, {1.0, 2.0}}>>) {
  return
}
func.func @per_axis(%x: tensor<2x4x!quant.uniform<i8:f32:1, {1.0:-3, 0.5:2, 0.25, 2.0:-128}>>) {
  return
}
