#!/usr/bin/env python3
"""jax_ragged_dot.py — jax.lax.ragged_dot and ragged_dot_general in each of their three modes, as
corpus files (tests/hlo/README.md) with jax's own results as OUTPUT.

    build/venv/bin/python scripts/jax_ragged_dot.py OUT_DIR

jax lowers ragged_dot for its CPU backend to a masked dense dot, and to the `ragged-dot`
instruction for the platforms that have one (TPU, GPU): the modules here are lowered with
lowering_platforms=("tpu",) so that they hold the instruction, and OUTPUT is what jax computes
on CPU (its dense masked form)."""
import os
import sys

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jax_survey import directive, literal, result_literal  # noqa: E402

R = np.random.default_rng(11)


def f32(*shape):
    return R.uniform(-2, 2, size=shape).astype(np.float32)


def dims(contract, batch, ragged, group):
    return lax.RaggedDotDimensionNumbers(dot_dimension_numbers=(contract, batch), lhs_ragged_dimensions=ragged,
                                         rhs_group_dimensions=group)


def general(dn, **kw):
    return lambda a, b, g: lax.ragged_dot_general(a, b, g, dn, **kw)


S32 = np.int32
CASES = {
    # non-contracting: rows of the lhs in groups of 3, 4 and 2 (the last row in none: zeros)
    "lax_ragged_dot": (lambda a, b, g: lax.ragged_dot(a, b, g), [f32(10, 4), f32(3, 4, 5), np.array([3, 4, 2], S32)]),
    # an empty group, and the groups covering every row
    "lax_ragged_dot_empty_group": (lambda a, b, g: lax.ragged_dot(a, b, g),
                                   [f32(7, 3), f32(4, 3, 2), np.array([2, 0, 5, 0], S32)]),
    # non-contracting with a batch dimension and one group_sizes row per batch element
    "lax_ragged_dot_general_batched": (general(dims(([2], [2]), ([0], [1]), [1], [0])),
                                       [f32(2, 6, 3), f32(3, 2, 3, 4), np.array([[1, 2, 3], [4, 0, 2]], S32)]),
    # contracting: the contracting dimension in groups; one result per group (a weight gradient)
    "lax_ragged_dot_general_contracting": (general(dims(([0], [0]), ([], []), [0], [])),
                                           [f32(9, 3), f32(9, 4), np.array([2, 4, 3], S32)]),
    # (batch mode, a plain dot, jax lowers as a dot: tests/hlo/ops/ragged_dot.hlo has it)
    # bf16 operands with an f32 result
    "lax_ragged_dot_bf16": (lambda a, b, g: lax.ragged_dot(a, b, g, preferred_element_type=jnp.float32),
                            [f32(6, 5).astype(jnp.bfloat16), f32(2, 5, 3).astype(jnp.bfloat16), np.array([4, 2], S32)]),
}


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name, (fn, args) in CASES.items():
        text = jax.jit(fn).trace(*args).lower(lowering_platforms=("tpu",)).as_text(dialect="hlo")
        assert "ragged-dot(" in text, name
        out = jax.jit(fn)(*args)
        head = ["// %s, lowered by scripts/jax_ragged_dot.py with jax %s (jax.jit(f).trace(*args).lower("
                "lowering_platforms=(\"tpu\",)).as_text(dialect=\"hlo\"), which keeps the ragged-dot instruction); "
                "OUTPUT is jax's own result on CPU." % (name, jax.__version__)]
        body = [text.rstrip(), ""]
        for a in args:
            body.append(directive("INPUT", literal(a)))
        body.append(directive("OUTPUT", result_literal(out)))
        body.append("// TOLERANCE: 2e-5 2e-6")
        with open(os.path.join(out_dir, name + ".hlo"), "w") as f:
            f.write("\n".join(head + body) + "\n")
        print(name)


if __name__ == "__main__":
    main()
