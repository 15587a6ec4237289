#!/usr/bin/env python3
"""Writes the StableHLO portable artifacts the MLIR bytecode reader is tested on, and next to
each one what jaxlib itself reads from it, so the C test compares the reader against an
independent reading.

Run with the venv that has jax/jaxlib 0.10.2:

  /work/main/build/venv/bin/python scripts/stablehlo_artifacts.py tests/stablehlo/artifacts

For each program NAME it writes NAME.mlirbc (stablehlo.serialize_portable_artifact at target
1.16.3, or jax.export's mlir_module_serialized) and NAME.facts: jaxlib's
deserialize_portable_artifact of the same bytes, walked in pre-order, one line per op:

  <two spaces per depth><op name> operands=<n> regions=<n> -> <result types, ", "-separated>

and one line per block with arguments: <indent>^bb(<argument types>). Names are the StableHLO
ones jaxlib gives back (stablehlo.add, func.func, func.return); the C test maps vhlo.add_v1 and
friends to them by VHLO's naming rule.
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

TARGET = "1.16.3"


def f32(*shape):
    return jnp.ones(shape, jnp.float32)


def programs():
    """(name, function, example arguments)."""
    big = np.arange(600, dtype=np.float32).reshape(20, 30) / 7.0
    bools = np.array([True, False, True, True, False, False, True, False, True, True, False],
                     dtype=bool)

    def elementwise(x, y):
        return jnp.tanh(x) * jnp.exp(y) - x / (y + 1.0), jnp.maximum(x, y) > 0.5

    def dot(a, b):
        return jnp.dot(a, b), jnp.einsum("bij,bjk->bik", a[None], b[None])

    def reduce(x):
        return jnp.sum(x, axis=1), jnp.max(x), jnp.argmax(x, axis=0)

    def while_loop(x):
        return lax.fori_loop(0, 10, lambda i, v: v * 1.5 + i, x)

    def cond(p, x):
        return lax.cond(p > 0, lambda v: v + 1.0, lambda v: v * 2.0, x)

    def case(i, x):
        return lax.switch(i, [lambda v: v + 1.0, lambda v: v - 1.0, jnp.sin], x)

    def scatter_gather(x, idx, upd):
        return x.at[idx].add(upd), x[idx], jnp.take(x, idx, axis=0)

    def sort(x, y):
        return jnp.sort(x), jnp.argsort(y), lax.sort((x, y), num_keys=1)

    def conv(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME", rhs_dilation=(1, 1),
                                        dimension_numbers=("NHWC", "HWIO", "NHWC"))

    def linalg(a):
        s = a @ a.T + 4.0 * jnp.eye(4, dtype=a.dtype)
        return jnp.linalg.cholesky(s), jnp.linalg.qr(a)[1]

    def large_constant(x):
        # all-equal numpy arrays become splat constants (dense<true> : tensor<9xi1>)
        return (x + jnp.asarray(big), jnp.asarray(bools), jnp.asarray(np.ones(9, bool)),
                jnp.asarray(np.full((3, 4), 2.5, np.float32)))

    def mixed_types(x):
        h = x.astype(jnp.bfloat16) * jnp.bfloat16(3.0)
        q = x.astype(jnp.float8_e4m3fn)
        r = x.astype(jnp.float8_e5m2)
        c = lax.complex(x, x * 2.0)
        u = x.astype(jnp.uint8) + jnp.uint8(200)
        i = jnp.int64(1) if jax.config.jax_enable_x64 else jnp.int32(-7)
        return h, q, r, c, u, x.astype(jnp.int32) * i, x.astype(jnp.float16)

    def rng_iota(key):
        bits = lax.rng_bit_generator(jnp.zeros((4,), jnp.uint32), (3, 4), dtype=jnp.uint32,
                                     algorithm=lax.RandomAlgorithm.RNG_PHILOX)
        return jax.random.uniform(key, (3, 4)), lax.iota(jnp.int32, 5), bits

    return [
        ("elementwise", elementwise, (f32(2, 3), f32(2, 3))),
        ("dot", dot, (f32(3, 4), f32(4, 5))),
        ("reduce", reduce, (f32(4, 6),)),
        ("while_loop", while_loop, (f32(3),)),
        ("cond", cond, (jnp.float32(1.0), f32(2))),
        ("case", case, (jnp.int32(1), f32(2))),
        ("scatter_gather", scatter_gather, (f32(5, 3), jnp.array([0, 2, 2], jnp.int32), f32(3, 3))),
        ("sort", sort, (f32(7), f32(7))),
        ("conv", conv, (f32(1, 6, 6, 2), f32(3, 3, 2, 4))),
        ("linalg", linalg, (f32(4, 4),)),
        ("large_constant", large_constant, (f32(20, 30),)),
        ("mixed_types", mixed_types, (f32(4),)),
        ("rng_iota", rng_iota, (jax.random.key_data(jax.random.key(0)),)),
    ]


def facts(data):
    """What jaxlib reads from the artifact: its ops in pre-order with result types."""
    lines = []
    with ir.Context() as ctx:
        stablehlo.register_dialect(ctx)
        module = stablehlo.deserialize_portable_artifact(ctx, data)

        def walk(op, depth):
            op = op.operation
            types = ", ".join(str(r.type) for r in op.results)
            lines.append("%s%s operands=%d regions=%d -> %s" % (
                "  " * depth, op.name, len(op.operands), len(op.regions), types))
            for region in op.regions:
                for block in region.blocks:
                    if len(block.arguments):
                        lines.append("%s^bb(%s)" % ("  " * (depth + 1), ", ".join(
                            str(a.type) for a in block.arguments)))
                    for inner in block.operations:
                        walk(inner, depth + 1)

        walk(module.operation, 0)
    return "\n".join(lines) + "\n"


def strip_sdy(module):
    """Drops Shardy's sharding-rule attributes, which VHLO cannot carry (JAX attaches them to
    custom calls such as LAPACK's; serializing would fail on them)."""
    def visit(op):
        op = op.operation
        for name in [a if isinstance(a, str) else a.name for a in op.attributes]:
            if name.startswith("sdy."):
                del op.attributes[name]
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    visit(inner)
    with module.context:
        visit(module.operation)
    return module


def write(outdir, name, data):
    with open(os.path.join(outdir, name + ".mlirbc"), "wb") as f:
        f.write(data)
    with open(os.path.join(outdir, name + ".facts"), "w") as f:
        f.write(facts(data))
    print("%-16s %6d bytes" % (name, len(data)), flush=True)


RESOURCE_MODULE = """
module @m {
  func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %c = stablehlo.constant {cxla.blob = dense_resource<blob1> : tensor<4xf32>} dense<1.0> : tensor<4xf32>
    %0 = stablehlo.add %arg0, %c : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000000803F000000400000404000008040"
    }
  }
#-}
"""


def resource_artifact(outdir):
    """VHLO cannot carry dense_resource constants (serializing one fails), so JAX never writes
    them into a portable artifact; plain MLIR bytecode of StableHLO can. This one has a
    dense_resource blob (1, 2, 3, 4 as f32) in a discardable attribute, so the resource
    sections and their alignment get read. No facts: jaxlib's deserializer only takes VHLO."""
    import io
    from jax._src.interpreters import mlir as jax_mlir
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(RESOURCE_MODULE)
        out = io.BytesIO()
        module.operation.write_bytecode(out)
    with open(os.path.join(outdir, "resource.mlirbc"), "wb") as f:
        f.write(out.getvalue())
    print("%-16s %6d bytes" % ("resource", len(out.getvalue())), flush=True)


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "tests/stablehlo/artifacts"
    os.makedirs(outdir, exist_ok=True)
    for name, fn, args in programs():
        module = strip_sdy(jax.jit(fn).lower(*args).compiler_ir("stablehlo"))
        write(outdir, name, stablehlo.serialize_portable_artifact(module, TARGET))
    # older targets write older bytecode: 0.9.0 -> bytecode 0 (no properties: attributes in
    # the op's dictionary), 0.12.0 -> 3 (use-list orders), 0.14.0 -> 4 (elided block-arg locs)
    fn = lambda x, y: (jnp.sum(jnp.tanh(x) @ y, axis=0), lax.fori_loop(0, 3, lambda i, v: v * 2.0, x))
    module = jax.jit(fn).lower(f32(3, 4), f32(4, 5)).compiler_ir("stablehlo")
    for target in ("0.9.0", "0.12.0", "0.14.0"):
        write(outdir, "target_" + target.replace(".", "_"),
              stablehlo.serialize_portable_artifact(module, target))
    # jax.export's serialized module: the same format, written by jax itself
    exp = jax.export.export(jax.jit(lambda x, y: (x @ y).sum(0)))(f32(2, 3), f32(3, 2))
    write(outdir, "export", bytes(exp.mlir_module_serialized))
    # shape-polymorphic: dynamic dimensions (tensor<?x3xf32>), dynamic ops, shape assertions
    b, = jax.export.symbolic_shape("b")
    exp = jax.export.export(jax.jit(lambda x: jnp.sum(x * 2.0, axis=0) + x.shape[0]))(
        jax.ShapeDtypeStruct((b, 3), jnp.float32))
    write(outdir, "export_poly", bytes(exp.mlir_module_serialized))
    resource_artifact(outdir)


main()
