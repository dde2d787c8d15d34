"""The gated checks of the reference benchmarks: print, collect, verdict.

`reference_parity_dlr.py` and `reference_parity_rtf.py` print each check
as a row `(what, value, gate)` (gate None: printed, not gated) and exit 1
when any value is over its gate.
"""


def print_rows(rows, failed, where):
    """Prints `rows`; appends `(*where, what)` to `failed` for each row
    over its gate."""
    for what, value, gate in rows:
        if gate is None:
            print(f"  {what}: {value:.2e}")
            continue
        ok = value <= gate
        print(f"  {what}: {value:.2e} (gate {gate:.0e}) "
              f"{'ok' if ok else 'FAILED'}")
        if not ok:
            failed.append((*where, what))


def verdict(failed):
    """Prints the failed checks or "all gates passed"; the exit status."""
    if failed:
        print(f"\nFAILED: {failed}")
        return 1
    print("\nall gates passed")
    return 0
