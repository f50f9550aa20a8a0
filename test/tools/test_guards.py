"""python/guards.py reads a text given as its UTF-8 bytes (how dequant-opt reads a file of ASCII
text: a model's torch form) as it reads the text: the same problems at the same lines and
columns. ASCII bytes are read in place where only file-metadata blocks need reading; other
bytes are decoded first."""

from __future__ import annotations

import pytest

from dequant import guards

BLOCK = "func.func @f() {{\n  return\n}}\n{{-#\n  dialect_resources: {{ builtin: {{ {} }} }}\n#-}}\n"
TEXTS = {
    "clean": BLOCK.format('w: "0x0400000001020304", v: "0x08000000"'),
    "open-string": BLOCK.format('w: "0x08000000 '),
    "unknown-escape": BLOCK.format('w: "0x\\q08"'),
    "dollar": BLOCK.format("w: $"),
    "at-one": BLOCK.format("w: @1"),
    "dot": BLOCK.format("w: ."),
    "zero-alignment": BLOCK.format('w: "0x0000000001"'),
    "block-end-in-comment": "func.func @f() {\n  return\n}\n{-#\n  // #-}\n  dialect_resources: { builtin: { w: $ } }\n#-}\n",
    "block-start-in-string": 'func.func @f() attributes {s = "{-# $"} {\n  return\n}\n',
    "non-ascii-key": BLOCK.format('"\u00e9": $'),
    "non-ascii-comment": "// \u00e9\u00e9\n" + BLOCK.format("w: $"),
    "zero-point": "func.func @f(%x: tensor<2x4x!quant.uniform<i4:f32:{0:1, 1:2}, {{1.0:7, 0.03:300}, {1.0, 2.0}}>>) { return }\n"
    + BLOCK.format("w: $"),
    "iterators": "#m = affine_map<(d0) -> (d0)>\nfunc.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %y = linalg.generic {indexing_maps = [#m, #m], iterator_types = [1]} ins(%x : tensor<4xf32>) outs(%x : tensor<4xf32>) {\n"
    "  ^bb0(%a: f32, %b: f32):\n    linalg.yield %a : f32\n  } -> tensor<4xf32>\n  return %y : tensor<4xf32>\n}\n",
    "op-name": '%0 = "\\ff"() : () -> i8\n' + BLOCK.format("w: $"),
}


@pytest.mark.parametrize("name", TEXTS)
def test_bytes_are_read_as_the_text(name):
    text = TEXTS[name]
    assert guards.problems(text.encode()) == guards.problems(text)


def test_columns_count_characters():
    """`$` is the 40th character of its line, the 41st byte (`é` is two)."""
    (where, why), *_ = guards.problems(TEXTS["non-ascii-key"].encode())
    assert where == (5, 40) and why.startswith("unexpected character '$'")
    (where, _), *_ = guards.problems(TEXTS["dollar"].encode())
    assert where == (5, 38)
