"""nccl_tests_ratio.py — per-size comparison of two sets of nccl-tests logs (A = reference,
B = candidate), taken in one session with the runs alternating: median out-of-place time of each
set, and the ratio B/A.

  python3 nccl_tests_ratio.py A.log... -- B.log...
"""
import statistics
import sys


def rows(path):
    """size -> (out-of-place time us, busbw GB/s) for every data row of one nccl-tests log."""
    out = {}
    with open(path, errors="replace") as f:
        for line in f:
            p = line.split()
            if len(p) >= 9 and p[0].isdigit():
                try:
                    out[int(p[0])] = (float(p[5]), float(p[7]))
                except ValueError:
                    pass
    return out


def human(n):
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:g} {unit}"
        n /= 1024


def main(argv):
    if "--" not in argv:
        sys.exit(__doc__)
    cut = argv.index("--")
    a = [rows(p) for p in argv[:cut]]
    b = [rows(p) for p in argv[cut + 1:]]
    sizes = sorted(set().union(*a, *b))
    print(f"| size | A time us | B time us | B/A time | A busbw | B busbw | runs A/B |")
    print(f"|---|---|---|---|---|---|---|")
    for s in sizes:
        ta = [r[s][0] for r in a if s in r]
        tb = [r[s][0] for r in b if s in r]
        ba = [r[s][1] for r in a if s in r]
        bb = [r[s][1] for r in b if s in r]
        if not ta or not tb:
            continue
        ma, mb = statistics.median(ta), statistics.median(tb)
        print(f"| {human(s)} | {ma:.2f} | {mb:.2f} | {mb / ma:.3f} | {statistics.median(ba):.1f} "
              f"| {statistics.median(bb):.1f} | {len(ta)}/{len(tb)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
