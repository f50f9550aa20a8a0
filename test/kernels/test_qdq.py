"""The exact integer kernel of QDQ MatMuls (passes/kernels/qdq.py, `QdqKernel`, AVX-512 VNNI;
passes/kernels/qdq_avx2.py, `QdqAvx2Kernel`, AVX2; passes/kernels/qdq_avxvnni.py,
`QdqAvxVnniKernel`, AVX-VNNI; passes/kernels/qdq_amx.py, `QdqAmxKernel`, AMX), alone: one module
per CPU (cascadelake; haswell, tagged `dq.avx2` as dq-target-features tags it; alderlake, tagged
`dq.avx2` and `dq.avxvnni`; sapphirerapids, tagged `dq.amxint8`, its direct forms), one QDQ MatMul per case, y = DQ(Q(x, sx,
zx)) @ DQ(wq, sw[, zw]) as quantize_static writes one, each one dispatch of the kernel reading xq
(IREE's QuantizeLinear writes it), against the model docs/semantics.md#the-integer-route-of-qdq-matmuls
states:

    d = sum_k (xq - zx) (wq - zw)   exact;   y = f32(sx * sw) * float(d)   in f32

bit for bit (xq by QuantizeLinear's rule: x / sx rounded half to even, + zx, saturated; sx =
2^-4, so x / sx is exact however it is computed), and within three roundings of the exact
product sx sw d in float64: |y - sx sw d| <= ((1 + U)^3 - 1) |sx sw d| (sx * sw, float(d) from
2^24, the product). Where the kernel computes the nodes after the MatMul too (its epilogues: a
bias Add, a QuantizeLinear, the bias as quantize_static writes it between two, an activation
between a DequantizeLinear and a QuantizeLinear after them, as a table of codes), those nodes are
onnx.reference's, run on that y.

The cases take the body's edges: 4 rows a tile and the tails of 2 and 1 (M = 1, 2, 3, 4, 7, 9,
16), K a multiple of 64 (x's row sums 64 bytes at a time; 32 with AVX-VNNI) and not (a tail of 4 to 60), int8 and
uint8 activations (uint8 read as int8 by flipping its top bit), int8 and uint8 weights per column
and per tensor with and without zero points, N of one workgroup (64 columns with VNNI, 32 with
AVX2 and AVX-VNNI) and of two, and N of no whole workgroup (passes/kernels/tail.py): 1, 8, 16, 24 (one
workgroup, its last group masked or whole), 40, 72, 100, 1000 (a partial last workgroup), each
with an epilogue; and M of several row groups (100, 70, 257: passes/iree_dispatch.py splits the
rows where the columns make few workgroups, 300 where they do not, 130 and 300 where the columns
alone would not split evenly in IREE's eights). The stage takes a QDQ MatMul from 2^19 multiply-adds, hence K's length.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from dequant.passes.kernels.qdq_avxvnni import WIDE_COLUMNS, WIDE_K, WIDE_ROWS

from . import harness
from .harness import U, Form, dispatches, needs_iree, save

from onnx import TensorProto, helper, numpy_helper  # noqa: E402 (after the harness: skipped without onnx)

pytestmark = needs_iree

SX = np.float32(2.0**-4)
ZX = {True: np.uint8(131), False: np.int8(-5)}  # by whether x is uint8


@dataclass(frozen=True)
class Case:
    """One QDQ MatMul: its weights (8-bit, signed or not, 0 per column / -1 per tensor, zero point
    or not, K, N, rows), whether x is uint8, and the nodes after it the kernel computes: None (y
    f32), "bias" (y + b), "q-u8"/"q-i8" (a QuantizeLinear of y), "bias-q-u8" (of y + b), "mid"
    (Q(DQ(Q(y)) + DQ(bq)), the bias as quantize_static writes it)."""

    form: Form
    unsigned_x: bool
    epilogue: str | None = None

    def __str__(self) -> str:
        return f"{'u8' if self.unsigned_x else 'i8'}x-{self.form}" + (f"-{self.epilogue}" if self.epilogue else "")


CASES = [
    Case(Form(8, True, 0, False, 1220, 64, rows=7), True),
    Case(Form(8, True, 0, True, 612, 128, rows=7), False),
    Case(Form(8, False, -1, True, 1024, 64, rows=9), True),
    Case(Form(8, False, 0, False, 4100, 64, rows=2), False),
    Case(Form(8, True, -1, True, 2048, 64, rows=4), True),
    Case(Form(8, True, 0, True, 8192, 64, rows=1), False),
    # N of no whole workgroup
    Case(Form(8, True, 0, False, 32768, 1, rows=16), True),
    Case(Form(8, False, -1, True, 9376, 8, rows=7), False, "q-i8"),
    Case(Form(8, True, 0, True, 32768, 16, rows=1), True, "bias"),
    Case(Form(8, True, 0, False, 7296, 24, rows=3), True, "mid"),
    Case(Form(8, True, 0, True, 832, 40, rows=16), False, "q-u8"),
    Case(Form(8, False, 0, False, 1056, 72, rows=7), True, "bias-q-u8"),
    Case(Form(8, True, -1, False, 1760, 100, rows=3), True),
    Case(Form(8, True, 0, False, 528, 1000, rows=1), True),
    Case(Form(8, True, 0, True, 528, 1000, rows=3), True, "mid"),
    # rows across workgroups (passes/iree_dispatch.py): groups of 32 rows and a short last one;
    # with a partial column workgroup; more groups than rows fill (the last ones empty)
    Case(Form(8, True, 0, False, 512, 16, rows=100), True, "q-u8"),
    Case(Form(8, False, 0, True, 512, 72, rows=70), False, "bias"),
    Case(Form(8, True, -1, True, 256, 64, rows=257), True),
    # two row groups from QdqKernel.APART_ROWS rows where the columns alone make the workgroups
    # (N = 300: 5 or 10 of them, the last partial): 160 rows and 140
    Case(Form(8, True, 0, False, 256, 300, rows=300), True, "q-u8"),
    # row groups that split evenly in IREE's eights (QdqKernel.RESERVATION): N = 768 on AVX2 (24
    # column workgroups) two of 96 rows and 34; N = 384 (12) four from APART_ROWS rows, 96 each
    # but the last's 12
    Case(Form(8, True, 0, False, 64, 768, rows=130), True),
    Case(Form(8, True, 0, False, 64, 384, rows=300), True, "q-u8"),
    # an activation after the QuantizeLinear, as a table of codes in the epilogue
    # (python/qdq_tables.py): uint8 codes to uint8, int8 to uint8, uint8 to int8 after the bias's
    # own pair; a partial last group (masked stores) and one row
    Case(Form(8, True, 0, False, 1056, 72, rows=7), True, "q-u8-HardSwish"),
    Case(Form(8, True, -1, True, 832, 40, rows=16), False, "q-i8-Sigmoid"),
    Case(Form(8, True, 0, False, 7296, 24, rows=3), True, "mid-Gelu"),
    Case(Form(8, False, 0, True, 8192, 72, rows=1), False, "q-u8-HardSwish"),
    # on AVX2, the sign-split form's one column workgroup (WIDE_COLUMNS, WIDE_K, WIDE_ROWS: more
    # than GROUPS column groups a tile, its codes packed GROUPS groups at a time): N = 144 (its
    # last block half empty), 100 (a partial last group) and 192 at the least rows; and 96
    # columns on one row fewer, and on K one step longer, as 3 workgroups
    Case(Form(8, True, 0, False, WIDE_K, 144, rows=300), True, "q-u8"),
    Case(Form(8, True, -1, False, 256, 100, rows=200), False, "q-u8-HardSwish"),
    Case(Form(8, True, 0, False, 64, 192, rows=WIDE_ROWS), True),
    Case(Form(8, True, 0, False, 64, 96, rows=WIDE_ROWS - 1), True, "bias-q-u8"),
    Case(Form(8, True, 0, False, WIDE_K + 16, 96, rows=WIDE_ROWS), True, "q-u8"),
]
# The AMX kernel's (passes/kernels/qdq_amx.py) edges, direct forms only (uint8 x, int8 weights
# without a zero point): 32-row tiles with VNNI rows after (M = 45, 64 + 7) or none (96); K steps
# of 64, 48 (K = 96) and 20 (1220); two column groups a pass, and one left (N = 40: three, the
# last masked; 1000: a partial last workgroup); the epilogues; row groups of 32 (100 rows).
AMX_CASES = [
    Case(Form(8, True, 0, False, 1024, 128, rows=45), True),
    Case(Form(8, True, -1, False, 96, 1000, rows=71), True, "q-u8"),
    Case(Form(8, True, 0, False, 1220, 40, rows=96), True, "mid"),
    Case(Form(8, True, 0, False, 1056, 72, rows=64), True, "q-u8-HardSwish"),
    Case(Form(8, True, 0, False, 2048, 16, rows=100), True, "bias-q-u8"),
]


def direct(c: Case) -> bool:
    return c.unsigned_x and c.form.signed and not c.form.zero_point


# per CPU: (its extra tags, its cases, why it skips the others): cascadelake every case but
# AMX's; haswell (the AVX2 kernel, K a multiple of 16) those it takes; alderlake (the AVX-VNNI
# kernel, K a multiple of 4) every case but AMX's; sapphirerapids the cases the AMX kernel takes
CPUS = {"cascadelake": ((), CASES, "a case for the AMX kernel (its 32-row tiles)"),
        "haswell": (("dq.avx2",), [c for c in CASES if c.form.k % 16 == 0], "a case the AVX2 kernel does not take (K not a multiple of 16)"),
        "alderlake": ((), CASES, "a case for the AMX kernel (its 32-row tiles)"),
        "sapphirerapids": ((), [c for c in CASES + AMX_CASES if direct(c)], "a case the AMX kernel does not take (not the direct form)")}  # fmt: skip


# an activation's output zero point, by the type of the codes before it (uint8 codes to int8, int8
# to uint8), near its type's lowest code: the activations below are mostly above 0
ACTIVATED = {"u8": np.int8(-120), "i8": np.uint8(0)}


def activated(epilogue: str | None) -> tuple:
    """(the epilogue before its activation, the activation's op type or None)."""
    base, _, act = (epilogue or "").rpartition("-")
    return (base, act) if act[:1].isupper() else (epilogue, None)


def after(i: int, epilogue: str | None, rng, k: int, n: int) -> tuple:
    """(nodes, initializers) reading MatMul i's y0<i> and writing y<i>, for `epilogue`; the
    output scales grow as y's spread, sqrt(K), so the codes spread over their range. An epilogue
    "<base>-<Activation>" is the base's, then DQ, the activation and Q (python/qdq_tables.py):
    uint8 codes to int8, int8 to uint8."""
    base, act = activated(epilogue)
    if act is not None:
        nodes, inits = after(i, base, rng, k, n)
        nodes[-1].output[0] = f"ya{i}"
        sy = next(numpy_helper.to_array(t) for t in inits if t.name == f"sy{i}")
        sa = np.float32(1 / 256) if act == "Sigmoid" else np.float32(1.2 * sy)  # Sigmoid's values in (0, 1), the others y's
        inits += [numpy_helper.from_array(sa, f"sa{i}"), numpy_helper.from_array(np.array(ACTIVATED["i8" if base == "q-i8" else "u8"]), f"za{i}")]
        nodes += [helper.make_node("DequantizeLinear", [f"ya{i}", f"sy{i}", f"zy{i}"], [f"yd{i}"]),
                  helper.make_node(act, [f"yd{i}"], [f"yf{i}"]),
                  helper.make_node("QuantizeLinear", [f"yf{i}", f"sa{i}", f"za{i}"], [f"y{i}"])]  # fmt: skip
        return nodes, inits
    if epilogue is None:
        return [helper.make_node("Identity", [f"y0{i}"], [f"y{i}"])], []
    b = [numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), f"b{i}")]
    sy = [numpy_helper.from_array(np.array(0.03 * np.sqrt(k), np.float32), f"sy{i}")]
    zy = {"u8": np.uint8(120), "i8": np.int8(-3)}
    q = lambda src, kind: (helper.make_node("QuantizeLinear", [src, f"sy{i}", f"zy{i}"], [f"y{i}"]), numpy_helper.from_array(np.array(zy[kind]), f"zy{i}"))  # noqa: E731
    if epilogue == "bias":
        return [helper.make_node("Add", [f"y0{i}", f"b{i}"], [f"y{i}"])], b
    if epilogue in ("q-u8", "q-i8"):
        node, z = q(f"y0{i}", epilogue[2:])
        return [node], sy + [z]
    if epilogue == "bias-q-u8":
        node, z = q(f"yb{i}", "u8")
        return [helper.make_node("Add", [f"y0{i}", f"b{i}"], [f"yb{i}"]), node], b + sy + [z]
    assert epilogue == "mid"
    node, z = q(f"yb{i}", "u8")
    inits = [numpy_helper.from_array(rng.integers(0, 256, size=n).astype(np.uint8), f"bq{i}"),
             numpy_helper.from_array(np.array(0.01, np.float32), f"sb{i}"), numpy_helper.from_array(np.array(100, np.uint8), f"zb{i}"),
             numpy_helper.from_array(np.array(0.04 * np.sqrt(k), np.float32), f"s0{i}"), numpy_helper.from_array(np.array(128, np.uint8), f"z0{i}")]  # fmt: skip
    nodes = [helper.make_node("QuantizeLinear", [f"y0{i}", f"s0{i}", f"z0{i}"], [f"y0q{i}"]),
             helper.make_node("DequantizeLinear", [f"y0q{i}", f"s0{i}", f"z0{i}"], [f"y0f{i}"]),
             helper.make_node("DequantizeLinear", [f"bq{i}", f"sb{i}", f"zb{i}"], [f"bf{i}"]),
             helper.make_node("Add", [f"y0f{i}", f"bf{i}"], [f"yb{i}"]), node]  # fmt: skip
    return nodes, inits + sy + [z]


def narrow(rng, k: int, n: int) -> np.ndarray:
    """int8 weights [K, N] as per-tensor quantization makes them (most well inside the range,
    |w[2i]| + |w[2i + 1]| <= 128 for most pairs of rows), with pairs at the range's ends planted
    (127 + 127, -128 + -128, 127 + -128: vpmaddubsw of x = 255 would saturate on each)."""
    w = np.clip(np.rint(rng.normal(0, 24, (k, n))), -128, 127).astype(np.int64)
    for row, col, a, b in ((0, 0, 127, 127), (k // 2, n - 1, -128, -128), (k - 2, n // 2, 127, -128)):
        w[row, col], w[row + 1, col] = a, b
    return w


def qdq_model(cases: list, path, seed: int = 0, weights_of=None) -> list:
    """One model, graph `g`, one QDQ MatMul per case on its own input x<i> [rows, K], then the
    case's epilogue: (wq, sw, zw, (nodes, initializers) after the MatMul) of each, wq, sw and zw
    as int64 [K, N], f32 [1, N] and int64 [1, N] (0 without a zero point). `weights_of(rng, k,
    n)`: the weights (else uniform over their type)."""
    rng = np.random.default_rng(seed)
    nodes, inits, inputs, outputs, weights = [], [], [], [], []
    for i, case in enumerate(cases):
        f, unsigned_x = case.form, case.unsigned_x
        dtype = np.int8 if f.signed else np.uint8
        info = np.iinfo(dtype)
        wq = rng.integers(info.min, info.max, (f.k, f.n), endpoint=True) if weights_of is None else weights_of(rng, f.k, f.n)
        shape = (f.n,) if f.block == 0 else ()
        sw = (rng.random(shape) * 0.01 + 0.001).astype(np.float32)
        zw = rng.integers(info.min // 8 + 16, info.max // 8, shape) if f.zero_point else np.zeros(shape, np.int64)
        inits += [numpy_helper.from_array(wq.astype(dtype), f"w{i}"), numpy_helper.from_array(sw, f"sw{i}"),
                  numpy_helper.from_array(np.array(SX), f"sx{i}"), numpy_helper.from_array(np.array(ZX[unsigned_x]), f"zx{i}")]  # fmt: skip
        if f.zero_point:
            inits.append(numpy_helper.from_array(zw.astype(dtype), f"zw{i}"))
        nodes += [helper.make_node("QuantizeLinear", [f"x{i}", f"sx{i}", f"zx{i}"], [f"xq{i}"]),
                  helper.make_node("DequantizeLinear", [f"xq{i}", f"sx{i}", f"zx{i}"], [f"xf{i}"]),
                  helper.make_node("DequantizeLinear", [f"w{i}", f"sw{i}"] + ([f"zw{i}"] if f.zero_point else []), [f"wf{i}"],
                                   **({"axis": 1} if f.block == 0 else {})),
                  helper.make_node("MatMul", [f"xf{i}", f"wf{i}"], [f"y0{i}" if case.epilogue else f"y{i}"])]  # fmt: skip
        rest = after(i, case.epilogue, rng, f.k, f.n)
        if case.epilogue:
            nodes += rest[0]
            inits += rest[1]
        out = {None: TensorProto.FLOAT, "bias": TensorProto.FLOAT, "q-i8": TensorProto.INT8, "q-u8-HardSwish": TensorProto.INT8, "mid-Gelu": TensorProto.INT8}.get(case.epilogue, TensorProto.UINT8)
        inputs.append(helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [f.rows, f.k]))
        outputs.append(helper.make_tensor_value_info(f"y{i}", out, [f.rows, f.n]))
        weights.append((wq, np.broadcast_to(sw, (1, f.n)), np.broadcast_to(zw, (1, f.n)).astype(np.int64), rest))
    save(path, nodes, inits, inputs, outputs)
    return weights


def kernel_name(case: Case, cpu: str) -> str:
    """The executable of the QDQ kernel for `case` (its name spells the epilogue, passes/kernels/qdq.py;
    a bias Add alone stays IREE's; each QuantizeLinear's scale here is one the requantize divides by
    its split reciprocal, passes/kernels/reciprocal.py)."""
    base, act = activated(case.epilogue)
    out = {None: "", "bias": "", "q-u8": "_qu8", "q-i8": "_qi8", "bias-q-u8": "_qu8_b", "mid": "_qu8_mu8_b"}[base] + ("_t" if act else "")
    out += "_rcp" if out else ""
    if out and cpu in ("haswell", "alderlake"):  # 8-lane bodies: every case's |y / sy| far below 2^30, no cap (qdq.py's `bounded`)
        out += "_bd"
    name = harness.kernel_name("qdq", case.form, unsigned_x=case.unsigned_x) + out
    kind = {"haswell": "avx2_", "alderlake": "avxvnni_", "sapphirerapids": "amx_"}.get(cpu, "")
    if cpu == "haswell" and case.form.signed and not case.form.zero_point:
        kind = "avx2s_"  # uniform int8 weights: the sign-split form (QdqAvx2SignKernel), not the direct vpmaddubsw one
        if case.form.n <= WIDE_COLUMNS and case.form.k <= WIDE_K and case.form.rows >= WIDE_ROWS:
            name += f"_w{-(-case.form.n // 32) * 32}"  # one column workgroup of whole 32-column blocks
    return name.replace("dq_matmul_qdq_", f"dq_matmul_qdq_{kind}")


@pytest.fixture(scope="module", params=list(CPUS))
def built(request, tmp_path_factory):
    cpu = request.param
    tags, cases, why = CPUS[cpu]
    check = dispatches(len(cases), [kernel_name(c, cpu) for c in cases])  # one each, no dequantize of x left
    weights, run = harness.built(tmp_path_factory, f"qdq-{cpu}", cpu, lambda path: qdq_model(cases, path), check, tags=tags)
    rng = np.random.default_rng(1)
    xs = [(rng.standard_normal((c.form.rows, c.form.k)) * 3).astype(np.float32) for c in cases]  # some codes saturate
    return cases, weights, xs, run(*xs), why


def epilogue_reference(i: int, rest: tuple, y: np.ndarray) -> np.ndarray:
    """onnx.reference's nodes after MatMul i, on the kernel's y."""
    import onnx
    from onnx.reference import ReferenceEvaluator

    nodes, inits = rest
    graph = helper.make_graph(nodes, "after", [helper.make_tensor_value_info(f"y0{i}", TensorProto.FLOAT, list(y.shape))],
                              [helper.make_tensor_value_info(f"y{i}", TensorProto.UNDEFINED, None)], inits)  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    with np.errstate(over="ignore", invalid="ignore"):  # the reference's Sigmoid computes both np.where branches
        return ReferenceEvaluator(onnx.ModelProto.FromString(model.SerializeToString())).run(None, {f"y0{i}": y})[0]


def reference(i: int, case: Case, weights: tuple, x: np.ndarray, got: np.ndarray) -> tuple:
    """(xq, its type's iinfo, d, y as the model's MatMul i and its epilogue compute it, got as that
    type): d = sum_k (xq - zx)(wq - zw) exact in int64, y = f32(sx * sw) * f32(d), then
    onnx.reference's nodes after it."""
    wq, sw, zw, rest = weights
    zx = int(ZX[case.unsigned_x])
    info = np.iinfo(ZX[case.unsigned_x].dtype)
    xq = np.clip(np.rint(x / SX).astype(np.int64) + zx, info.min, info.max)
    d = (xq - zx) @ (wq - zw)  # exact, int64
    s = SX * sw  # f32 x f32, rounded once
    y = s * d.astype(np.float32)
    want = y if case.epilogue is None else epilogue_reference(i, rest, y)
    if got.dtype == np.int8 and want.dtype == np.uint8:  # IREE's buffers are signless
        got = got.view(np.uint8)
    return xq, info, d, want, got


@pytest.mark.parametrize("case", CASES + AMX_CASES, ids=str)
def test_qdq_kernel_against_its_model(built, case):
    cases, weights, xs, got, why = built
    if case not in cases:
        pytest.skip(why)
    i = cases.index(case)
    xq, info, d, want, got = reference(i, case, weights[i], xs[i], got[i])
    sw = weights[i][1]
    saturated = (xq == info.min) | (xq == info.max)
    assert saturated.any() and not saturated.all()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want, err_msg=str(case))
    if case.epilogue is None:
        exact = np.float64(SX) * sw.astype(np.float64) * d
        assert (np.abs(got - exact) <= ((1 + U) ** 3 - 1) * np.abs(exact)).all(), str(case)
    elif case.epilogue != "bias":
        assert len(np.unique(got)) > 8, str(case)  # the requantized codes are not all one (saturated) value


# The AVX2 kernel's vpmaddubsw form (passes/kernels/qdq_avxvnni.py, QdqAvx2BytesKernel): int8
# weights without a zero point whose pairs mostly cannot saturate (`narrow`), the others through
# its fix steps; x mostly at the top of its range (255, or 127 read as 255). Per tensor and per
# column, a partial column workgroup (N = 40), epilogues, row groups (70 rows), uint8 and int8 x.
BYTES_CASES = [
    Case(Form(8, True, -1, False, 768, 96, rows=9), True),
    Case(Form(8, True, 0, False, 256, 40, rows=64), True, "q-u8"),
    Case(Form(8, True, -1, False, 512, 64, rows=70), True, "mid"),
    Case(Form(8, True, -1, False, 512, 64, rows=33), False),
    Case(Form(8, True, 0, False, 256, 40, rows=64), False, "q-i8"),
]


def avx2_form_results(tmp_path_factory, tag: str, cases: list, weights_of, named, xs: list) -> list:
    """`cases` in one module for haswell (tagged `dq.avx2`), weights by `weights_of`, each one
    dispatch of a kernel `named(name)` accepts (an AVX2 form of qdq_avxvnni.py), run on xs: per
    case (case, xq, its type's iinfo, want, got), as `reference` gives them."""

    def check(text: str, summary) -> None:
        names = harness.entry_points(text)
        assert summary.fused == len(cases) and len(names) == len(cases), names
        assert all(named(n) for n in names), names

    weights, run = harness.built(tmp_path_factory, tag, "haswell", lambda path: qdq_model(cases, path, weights_of=weights_of), check, tags=("dq.avx2",))
    out = []
    for i, (case, got) in enumerate(zip(cases, run(*xs))):
        xq, info, _, want, got = reference(i, case, weights[i], xs[i], got)
        out.append((case, xq, info, want, got))
    return out


def test_avx2_bytes_kernel_against_its_model(tmp_path_factory):
    """Each case takes the vpmaddubsw form with fix steps (`_f<n>`, n > 0, in its name) and gives
    the exact sums' results: x at the top of its range against the planted pairs would saturate
    vpmaddubsw's i16 sums without the split."""
    rng = np.random.default_rng(2)
    xs = [(rng.standard_normal((c.form.rows, c.form.k)) * 3 + 12).astype(np.float32) for c in BYTES_CASES]  # most codes 255
    named = lambda n: n.startswith("dq_matmul_qdq_avx2b_") and int(n.rsplit("_f", 1)[1]) > 0  # noqa: E731
    for case, xq, info, want, got in avx2_form_results(tmp_path_factory, "qdq-avx2-bytes", BYTES_CASES, narrow, named, xs):
        assert (xq == info.max).mean() > 0.5
        np.testing.assert_array_equal(got, want, err_msg=str(case))


def extremes(rng, k: int, n: int) -> np.ndarray:
    """int8 weights [K, N] uniform over the whole range, rows 0 and 1 all 127, rows 2 and 3 all
    -128, rows 4 and 5 127 and -128: with v = -128 (uint8 x = 0) and 127 the sign-split form's pair
    sums reach -32768 and 32512, its ends (QdqAvx2SignKernel)."""
    w = rng.integers(-128, 127, (k, n), endpoint=True)
    w[0:2], w[2:4], w[4], w[5] = 127, -128, 127, -128
    return w


# The AVX2 kernel's sign-split form (passes/kernels/qdq_avxvnni.py, QdqAvx2SignKernel): int8
# weights without a zero point of the whole range (`extremes`) against x at both ends of its range.
# K = 1040: a second chunk of 16 values of K (the stage's 16-byte step, under scf.if), 528 (K mod
# 32 = 16: that step in every chunk); per tensor and per column; a partial column workgroup (N =
# 40, 72); row groups (70 rows); epilogues; uint8 and int8 x.
SIGN_CASES = [
    Case(Form(8, True, 0, False, 1040, 72, rows=9), True),
    Case(Form(8, True, -1, False, 256, 40, rows=70), True, "q-u8"),
    Case(Form(8, True, 0, False, 528, 64, rows=16), False, "mid"),
    Case(Form(8, True, -1, False, 2048, 40, rows=7), False, "q-i8"),
]


def test_avx2_sign_kernel_against_its_model(tmp_path_factory):
    """Each case takes the sign-split form and gives the exact sums' results with every x at
    either end of its range (uint8 0 and 255, int8 -128 and 127)."""
    rng = np.random.default_rng(3)
    xs = [np.where(rng.random((c.form.rows, c.form.k)) < 0.5, -20.0, 20.0).astype(np.float32) for c in SIGN_CASES]  # every code at an end
    named = lambda n: n.startswith("dq_matmul_qdq_avx2s_")  # noqa: E731
    for case, xq, info, want, got in avx2_form_results(tmp_path_factory, "qdq-avx2-sign", SIGN_CASES, extremes, named, xs):
        assert ((xq == info.min) | (xq == info.max)).all()
        np.testing.assert_array_equal(got, want, err_msg=str(case))
