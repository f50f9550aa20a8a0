"""dq-to-llvm: the pipeline from dq ops on tensors to the LLVM dialect, ready for the JIT."""

from __future__ import annotations

from . import Pipeline

# Memrefs, arith, func and cf to the LLVM dialect (also the tail of the benchmark's upstream pipeline).
MEMREF_TO_LLVM = [
    "expand-strided-metadata",
    "lower-affine",  # the index arithmetic of reshaped views
    "finalize-memref-to-llvm",
    "convert-arith-to-llvm",
    "convert-func-to-llvm",
    "convert-cf-to-llvm",
    "reconcile-unrealized-casts",
]

# bf16 arithmetic and conversions other than f32 <-> bf16 would become calls to compiler-rt
# (__truncsfbf2, ...) that a CPU without AVX512-BF16 needs and the JIT cannot find: compute them
# in f32, rounded to bf16 after each op, then expand the f32 <-> bf16 conversions into integer
# operations.
FLOATS_TO_SUPPORTED = [
    "dq-bf16-in-f32",
    "arith-expand{include-bf16=true include-f8e8m0=true include-f4e2m1=true}",
]

WIDEN_SCALES_ONCE = "dq-widen-scales-once"  # an f16/bf16 scale the rows share, widened to f32 once per call
NONTEMPORAL_ENTRIES = "dq-nontemporal-entries"  # <name>_nt beside <name>: the caller picks one per call

LOWERING = (
    [
        "dq-packed-arguments",
        "dq-to-linalg",
        "dq-check-lowerable",
        "dq-storage-abi",
        "canonicalize",
        "dq-fold-nibble-casts",
        "eliminate-empty-tensors",
        "one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}",
        "dq-free-temporaries",  # the temporaries bufferization allocates, freed
        "dq-emit-c-interface",
        "dq-copies-to-loops",
        NONTEMPORAL_ENTRIES,
        WIDEN_SCALES_ONCE,
        "dq-target-features",  # the host's permutes: dq-vectorize's per-tile tables
        "dq-vectorize",  # transform schedules: every generic of <name>_nt, bf16 and packed ones of <name>
        "func.func(convert-linalg-to-loops)",  # the rest, and the partial tiles
        "canonicalize",
        "cse",
        "loop-invariant-code-motion",
        "dq-strip-mine-blocks",  # for LLVM's loop vectorizer
        "lower-affine",
        "convert-scf-to-cf",
    ]
    + FLOATS_TO_SUPPORTED
    + ["convert-vector-to-llvm", "dq-bf16-vectors-as-i16"]
    + MEMREF_TO_LLVM[:-1]
    + ["convert-ub-to-llvm", MEMREF_TO_LLVM[-1]]  # ub.poison: the vector transfers' padding
)

PIPELINES = (
    Pipeline(
        "dq-to-llvm",
        "Lower dq ops on tensors to the LLVM dialect (linalg, bufferization, loops, LLVM)",
        ",".join(LOWERING),
    ),
)

# dq-to-llvm without the `_nt` entry points: the numpy API's first compile (Kernel's
# nontemporal_source), the `_nt` entries compiled by dq-to-llvm when a call first needs them
WITHOUT_NONTEMPORAL = ",".join(e for e in LOWERING if e != NONTEMPORAL_ENTRIES)
