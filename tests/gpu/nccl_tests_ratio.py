"""nccl_tests_ratio.py — per-size comparison of two sets of nccl-tests logs (A = reference,
B = candidate), taken in one session with the runs alternating: the median time of each set out
of place and in place, the ratios B/A, B's #wrong, and a verdict line (the largest ratio and how
many sizes exceed the limit). tools/compare_nccl.sh and tests/gpu/shim_device.sh print it.

  python3 nccl_tests_ratio.py [--name NAME] [--limit 1.02] A.log... -- B.log...
  python3 nccl_tests_ratio.py --medians A.log...     (size, out-of-place us, in-place us)
"""
import statistics
import sys


def num(s):
    try:
        return float(s)
    except ValueError:
        return None  # "N/A" (-c 0), a unit, anything else


def rows(path):
    """size -> {"oop": (time us, busbw, #wrong), "ip": (...)} for each data row of one log."""
    out = {}
    with open(path, errors="replace") as f:
        for line in f:
            p = line.split()
            # size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong
            if len(p) < 9 or not p[0].isdigit():
                continue
            t, bw = num(p[5]), num(p[7])
            if t is None or bw is None:
                continue
            r = {"oop": (t, bw, num(p[8]))}
            if len(p) >= 13 and num(p[9]) is not None:
                r["ip"] = (num(p[9]), num(p[11]), num(p[12]))
            out[int(p[0])] = r
    return out


def human(n):
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:g} {unit}"
        n /= 1024


def med(runs, size, mode, k):
    v = [r[size][mode][k] for r in runs if size in r and mode in r[size]]
    v = [x for x in v if x is not None]
    return (statistics.median(v), len(v)) if v else (None, 0)


def wrong(runs, size):
    w = 0
    for r in runs:
        for mode in ("oop", "ip"):
            x = r.get(size, {}).get(mode)
            if x and x[2]:
                w += int(x[2])
    return w


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def main(argv):
    name, limit = "", 1.02
    while argv and argv[0] in ("--name", "--limit"):
        if len(argv) < 2:
            sys.exit(__doc__)
        if argv[0] == "--name":
            name = argv[1]
        else:
            limit = float(argv[1])
        argv = argv[2:]
    if argv and argv[0] == "--medians":
        a = [rows(p) for p in argv[1:]]
        for s in sorted(set().union(*a)) if a else []:
            print(s, fmt(med(a, s, "oop", 0)[0], ".3f"), fmt(med(a, s, "ip", 0)[0], ".3f"))
        return 0
    if "--" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    a = [rows(p) for p in argv[:cut]]
    b = [rows(p) for p in argv[cut + 1:]]
    sizes = sorted(set().union(*a, *b)) if a and b else []
    print("| size | A us | B us | B/A | A in-place us | B in-place us | B/A in-place | B #wrong "
          "| runs A/B |")
    print("|---|---|---|---|---|---|---|---|---|")
    worst, above, total, wrong_a, wrong_b = None, 0, 0, 0, 0
    for s in sizes:
        ta, na = med(a, s, "oop", 0)
        tb, nb = med(b, s, "oop", 0)
        ia, _ = med(a, s, "ip", 0)
        ib, _ = med(b, s, "ip", 0)
        if ta is None or tb is None:
            continue
        total += 1
        ro = tb / ta if ta > 0 else None
        ri = ib / ia if ia and ib is not None else None
        wb, wa = wrong(b, s), wrong(a, s)
        wrong_b += wb
        wrong_a += wa
        here = [x for x in (ro, ri) if x is not None]
        worst_here = max(here) if here else None
        if worst_here is not None:
            if worst_here > limit:
                above += 1
            if worst is None or worst_here > worst[0]:
                worst = (worst_here, s, "out of place" if worst_here == ro else "in place")
        print(f"| {human(s)} | {ta:.2f} | {tb:.2f} | {fmt(ro, '.3f')} | {fmt(ia, '.2f')} "
              f"| {fmt(ib, '.2f')} | {fmt(ri, '.3f')} | {wb} | {na}/{nb} |")
    label = f"verdict {name}" if name else "verdict"
    if worst is None:
        print(f"{label}: no size in both sets of logs")
        return 1
    print(f"{label}: max B/A {worst[0]:.3f} ({human(worst[1])}, {worst[2]}); {above} of {total} "
          f"sizes above {limit:g}; #wrong {wrong_b} (B), {wrong_a} (A)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
