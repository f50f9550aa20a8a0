"""What the kernels' bodies share (issue 44: the outer loops written once): `Hoisted`, a body's
constants made once at the top of its block, with `tail_rows` (the last rows of a row loop by
tiles of the powers of two below a full tile), and `each_block` (the rows x blocks nest of the
dispatches that quantize x).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, math, scf, vector


def _index(v: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), v)


class Hoisted:
    """A kernel body's constants, made once each at the top of the block being built (they are
    used in several regions)."""

    def __init__(self):
        self.top = ir.InsertionPoint.at_block_begin(ir.InsertionPoint.current.block)
        self.c = {}

    def _constant(self, key, make) -> ir.Value:
        if key not in self.c:
            with self.top:
                self.c[key] = make()
        return self.c[key]

    def const(self, v: int) -> ir.Value:
        return self._constant(v, lambda: _index(v))

    def splat(self, t: ir.VectorType, attr: ir.Attribute, key) -> ir.Value:
        """A vector constant of type t, every element `attr` (made once per `key`)."""
        return self._constant(("splat", key), lambda: arith.constant(t, ir.DenseElementsAttr.get_splat(t, attr)))

    def scalar(self, t: ir.Type, value) -> ir.Value:
        """A scalar constant of type t (an integer or float type)."""
        return self._constant(("scalar", str(t), value), lambda: arith.constant(t, value))

    def tail_rows(self, at, m, most: int, tile) -> None:
        """`tile(r0, rows)` over the rows from `at` to `m` (fewer than `most`): by tiles of the
        powers of two below `most`, largest first, at most one each."""
        for rows in [1 << i for i in range(most.bit_length()) if 1 << i < most][::-1]:
            fits = arith.cmpi(arith.CmpIPredicate.ule, arith.addi(at, self.const(rows)), m)
            branch = scf.IfOp(fits, [ir.IndexType.get()], has_else=True)
            with ir.InsertionPoint(branch.then_block):
                tile(at, rows)
                scf.YieldOp([arith.addi(at, self.const(rows))])
            with ir.InsertionPoint(branch.else_block):
                scf.YieldOp([at])
            at = branch.results[0]


def each_block(x, m, k: int, block: int, width: int, const, body) -> None:
    """For each row r < m of x [M, K] and block kb of `block` values: `body(r, kb, k0, amax)` in
    the block's loop, k0 = kb * block and amax = max |x| over the block (in vectors of `width`)."""
    f32 = ir.F32Type.get()
    vf = ir.VectorType.get([width], f32)
    zero = arith.constant(vf, ir.DenseElementsAttr.get_splat(vf, ir.FloatAttr.get_f32(0.0)))
    rows = scf.ForOp(const(0), m, const(1))
    with ir.InsertionPoint(rows.body):
        r = rows.induction_variable
        blocks = scf.ForOp(const(0), const(k // block), const(1))
        with ir.InsertionPoint(blocks.body):
            kb = blocks.induction_variable
            k0 = arith.muli(kb, const(block))
            most = scf.ForOp(const(0), const(block), const(width), [zero])
            with ir.InsertionPoint(most.body):
                part = vector.load(vf, x, [r, arith.addi(k0, most.induction_variable)])
                scf.YieldOp([arith.maximumf(most.inner_iter_args[0], math.absf(part))])
            body(r, kb, k0, vector.reduction(f32, vector.CombiningKind.MAXIMUMF, most.results[0]))
            scf.YieldOp([])
        scf.YieldOp([])
