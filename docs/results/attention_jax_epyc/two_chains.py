"""Whether XLA's CPU runtime overlaps two independent chains of work in a
loop body: a forward pass of blockwise attention (no gradient) over 32
blocks of (2 rows, 512 queries, 1024 keys, depth 32), written three
ways in plain JAX:

- `single`: one block a loop step;
- `dual`: two independent blocks a loop step (half the steps);
- `dual_batched`: the two blocks as one of 4 rows a loop step.

Medians of 15 calls of each:

    python docs/results/attention_jax_epyc/two_chains.py
    taskset -c 0 python docs/results/attention_jax_epyc/two_chains.py
"""

import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

G, R, C, L, D = 32, 2, 512, 1024, 32
rng = np.random.default_rng(0)
q = jnp.asarray(rng.normal(size=(G, R, C, D)).astype("f4"))
kt = jnp.asarray(rng.normal(size=(G, R, D, L)).astype("f4"))
v = jnp.asarray(rng.normal(size=(G, R, L, D)).astype("f4"))


def block(qb, ktb, vb):
    s = qb @ ktb
    m = s.max(-1, keepdims=True)
    p = jnp.exp(s - m)
    return (p @ vb) / p.sum(-1, keepdims=True)


@jax.jit
def single(q, kt, v):
    def body(i, out):
        return out.at[i].set(block(q[i], kt[i], v[i]))
    return lax.fori_loop(0, G, body, jnp.zeros_like(q))


@jax.jit
def dual(q, kt, v):
    h = G // 2

    def body(i, out):
        a = block(q[i], kt[i], v[i])
        b = block(q[i + h], kt[i + h], v[i + h])
        return out.at[i].set(a).at[i + h].set(b)
    return lax.fori_loop(0, h, body, jnp.zeros_like(q))


@jax.jit
def dual_batched(q, kt, v):
    h = G // 2
    q2, kt2, v2 = (jnp.concatenate([x[:h], x[h:]], 1) for x in (q, kt, v))

    def body(i, out):
        return out.at[i].set(block(q2[i], kt2[i], v2[i]))
    return lax.fori_loop(0, h, body, jnp.zeros_like(q2))


fs = dict(single=single, dual=dual, dual_batched=dual_batched)
print(float(jnp.max(jnp.abs(single(q, kt, v) - dual(q, kt, v)))))
for f in fs.values():
    f(q, kt, v).block_until_ready()
ts = {n: [] for n in fs}
for r in range(15):
    for n, f in fs.items():
        s = time.perf_counter()
        f(q, kt, v).block_until_ready()
        ts[n].append(time.perf_counter() - s)
for n in ts:
    print(n, "%.1f ms" % (1e3 * np.median(ts[n])))
