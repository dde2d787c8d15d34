"""HiPPO-LegS matrices and their normal-plus-low-rank form (numpy, init only).

These are initial values, computed once in `build`; nothing here runs
inside `call`.

References:
- HiPPO: https://arxiv.org/abs/2008.07669
- S4 (NPLR form of LegS, eq. 6 and appendix C): https://arxiv.org/abs/2111.00396
- S4D (diagonal initialisations lin / inv / legs): https://arxiv.org/abs/2206.11893
- S4D-DFouT (poles on the discrete Fourier grid): Solozabal et al. 2025,
  "Uncovering the Spectral Bias in Diagonal State Space Models",
  https://arxiv.org/abs/2508.20441 (see `dfout_poles` for what of it is
  followed)
"""

import numpy as np

INITS = ("legs", "lin", "inv")
# Initialisations placed in the discrete domain: they need each channel's
# step dt, so `diagonal_init` does not give them (see `dfout_poles`).
DISCRETE_INITS = ("dfout",)


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


def dfout_poles(state_dim, dt):
    """S4D-DFouT's continuous-time A, one row per channel, and its B.

    The discrete poles are placed on a discrete Fourier grid,
    `z_{h,n} = exp(-xi_h^2 + i (2 pi n / N + phi_h))` for the N/2 modes
    n = 0 .. N/2 - 1 (their conjugates are the other half), and mapped back
    through channel h's ZOH step, `A_{h,n} = log(z_{h,n}) / dt_h`, so that
    `exp(dt_h A_{h,n}) = z_{h,n}` exactly. The pole formula is the one
    quoted for Solozabal et al. 2025 (in the issue that asked for it, 16);
    neither that paper's method section nor its code was available
    offline (the stored copies hold its abstract and introduction; no
    stored repository holds the code), so two choices are this library's
    reading:
    - the decay: `xi_h^2 = dt_h / 2`, the per-step decay of S4D-Lin's real
      part -1/2 at the channel's step (so Re A = -1/2 as in S4D-Lin). The
      DLR code of "Never Train from Scratch" places its discrete poles the
      same way, `log Lambda_n = -dt_n / 2 + 2 pi i n / N` with dt_n drawn
      per mode (`Lambda_init="omega"`, IdoAmos/not-from-scratch
      src/models/sequence/ss/dss.py lines 456-460 at f919137), without the
      phase offsets;
    - the per-channel phase offset: `phi_h = 2 pi h / (N H)` for channel h
      of H, deterministic, so that the H N/2 poles of a layer tile the
      angles [0, pi) on the finer grid of spacing 2 pi / (N H).
    B is 1, as in S4D-Lin. Where S4D-Lin's angles `pi n dt` crowd the low
    frequencies (all below 0.32 pi at dt = 0.01, N = 64), these spread over
    the whole band.

    Args:
        state_dim: N, even.
        dt: array (H,) of the channels' initial steps.

    Returns:
        (A, B): complex128 arrays of shape (H, N/2) and (N/2,).
    """
    dt = np.asarray(dt, np.float64)
    if dt.ndim != 1 or not np.all(dt > 0):
        raise ValueError(
            f"`dt` must be a 1-D array of positive steps. Received: dt={dt!r}"
        )
    hidden = dt.shape[0]
    half = state_dim // 2
    n = np.arange(half, dtype=np.float64)
    phase = 2 * np.pi * np.arange(hidden) / (state_dim * hidden)
    angle = 2 * np.pi * n[None, :] / state_dim + phase[:, None]  # (H, N/2)
    log_z = -0.5 * dt[:, None] + 1j * angle
    return log_z / dt[:, None], np.ones(half, dtype=np.complex128)
