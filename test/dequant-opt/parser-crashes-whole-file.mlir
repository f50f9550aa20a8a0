// RUN: not dequant-opt %s 2>&1 | FileCheck %s
// RUN: not dequant-opt %S/Inputs/metadata-error-non-ascii.mlir 2>&1 | FileCheck %s --check-prefix=NONASCII

// Without --split-input-file, a file of ASCII text (a model's torch form) is read as its bytes,
// not decoded (python/cli.py): the guards (python/guards.py) find what MLIR 22's parser aborts on
// in them at the line and column they give in text. A file with other characters is decoded
// first: its columns count characters, not bytes (`é` below is two bytes).

func.func @f() {
  return
}

// CHECK: parser-crashes-whole-file.mlir:[[# @LINE + 2]]:38: error: unexpected character '$' in a file-metadata block
{-#
  dialect_resources: { builtin: { w: $ } }
#-}

// NONASCII: metadata-error-non-ascii.mlir:5:40: error: unexpected character '$' in a file-metadata block
