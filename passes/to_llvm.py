"""dq-to-llvm: the pipeline from dq ops on tensors to the LLVM dialect, ready for the JIT."""

from __future__ import annotations

from . import Pipeline

# Memrefs, arith, func and cf to the LLVM dialect (also the tail of bench.py's upstream pipeline).
MEMREF_TO_LLVM = [
    "expand-strided-metadata",
    "finalize-memref-to-llvm",
    "convert-arith-to-llvm",
    "convert-func-to-llvm",
    "convert-cf-to-llvm",
    "reconcile-unrealized-casts",
]

PIPELINE = Pipeline(
    "dq-to-llvm",
    "Lower dq ops on tensors to the LLVM dialect (linalg, bufferization, loops, LLVM)",
    ",".join(
        [
            "dq-to-linalg",
            "dq-byte-storage",
            "canonicalize",
            "dq-fold-nibble-casts",
            "eliminate-empty-tensors",
            "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}",
            "dq-emit-c-interface",
            "func.func(convert-linalg-to-loops)",
            "dq-strip-mine-blocks",
            "dq-nontemporal-stores",
            "lower-affine",
            "convert-scf-to-cf",
            "arith-expand{include-bf16=true include-f8e8m0=true include-f4e2m1=true}",
            "convert-vector-to-llvm",
            "dq-nontemporal-bf16-as-i16",
        ]
        + MEMREF_TO_LLVM
    ),
)
