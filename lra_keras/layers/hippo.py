"""HiPPO-LegS matrices and their normal-plus-low-rank form (numpy, init only).

These are initial values, computed once in `build`; nothing here runs
inside `call`.

References:
- HiPPO: https://arxiv.org/abs/2008.07669
- S4 (NPLR form of LegS, eq. 6 and appendix C): https://arxiv.org/abs/2111.00396
- S4D (diagonal initialisations lin / inv / legs): https://arxiv.org/abs/2206.11893
"""

import numpy as np

INITS = ("legs", "lin", "inv")


def legs(state_dim):
    """HiPPO-LegS transition (A, B), with the sign that makes A stable.

    A[n, k] = -sqrt(2n+1) sqrt(2k+1) for n > k, -(n+1) for n == k, else 0;
    B[n] = sqrt(2n+1).
    """
    q = np.arange(state_dim, dtype=np.float64)
    r = np.sqrt(2 * q + 1)
    a = r[:, None] * r[None, :]
    a = np.tril(a) - np.diag(q)
    return -a, r.copy()


def legs_nplr(state_dim):
    """LegS as normal minus rank 1, diagonalised, one of each conjugate pair.

    A = S - P P^T with S normal; S = V diag(Lambda) V^*. Returns the
    `state_dim // 2` eigenvalues with negative imaginary part and, in that
    eigenbasis, P and B (complex128 arrays of shape (state_dim // 2,)).
    A real system with this spectrum is recovered with `2 * Re(...)`.
    """
    if state_dim < 2 or state_dim % 2:
        raise ValueError(
            "`state_dim` must be even and >= 2. Received: "
            f"state_dim={state_dim}"
        )
    a, b = legs(state_dim)
    p = np.sqrt(0.5 + np.arange(state_dim))
    s = a + np.outer(p, p)  # normal: -1/2 I + skew-symmetric
    lambda_real = np.mean(np.diag(s))
    lambda_imag, v = np.linalg.eigh(s * -1j)
    order = np.argsort(lambda_imag)
    lambda_imag, v = lambda_imag[order], v[:, order]
    half = state_dim // 2
    lam = lambda_real + 1j * lambda_imag[:half]
    v = v[:, :half]
    v_inv = v.conj().T
    return lam, v_inv @ p.astype(np.complex128), v_inv @ b.astype(np.complex128)


def diagonal_init(init, state_dim):
    """Diagonal A (and B) of S4D's initialisations, `state_dim // 2` modes.

    - "lin" (S4D-Lin): A_n = -1/2 + i pi n, B_n = 1.
    - "inv" (S4D-Inv): A_n = -1/2 + i (N / pi) (N / (2n + 1) - 1), B_n = 1.
    - "legs" (S4D-LegS): the eigenvalues of LegS's normal part and B in
      their eigenbasis (the diagonal of the S4 NPLR form).

    Returns:
        (A, B): complex128 arrays of shape (state_dim // 2,).
    """
    if init not in INITS:
        raise ValueError(
            f"`init` must be one of {INITS}. Received: init={init!r}"
        )
    half = state_dim // 2
    n = np.arange(half, dtype=np.float64)
    if init == "lin":
        a = -0.5 + 1j * np.pi * n
    elif init == "inv":
        a = -0.5 + 1j * (state_dim / np.pi) * (state_dim / (2 * n + 1) - 1)
    else:
        a, _, b = legs_nplr(state_dim)
        return a, b
    return a, np.ones(half, dtype=np.complex128)
