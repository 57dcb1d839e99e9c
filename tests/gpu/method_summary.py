"""method_summary.py — the summary of tests/gpu/measure_method.sh: NCCL's time as nccl-tests,
weft_bench's new method and its method before measure it; what each suspected cause costs
NCCL (weft_bench --diagnose, ratios to NCCL alone on a fresh communicator); interleaved against
blocked; the shim's cost on calls it hands to NCCL; and the shipped comparison's verdicts.

  python3 method_summary.py --logs DIR [--colls "all_reduce all_gather ..."]
"""
import glob
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccl_tests_ratio  # noqa: E402  (the nccl-tests log reader)


def human(n):
    return nccl_tests_ratio.human(n)


def diag_rows(path):
    """(size -> {variant: (time us, host us, ratio to nccl.fresh)}, size -> (new, old) NCCL/weft,
    [placement and summary comment lines])."""
    rows, nw, notes = {}, {}, []
    if not os.path.exists(path):
        return rows, nw, notes
    with open(path, errors="replace") as f:
        for line in f:
            p = line.split()
            if line.startswith("# rank") or line.startswith("# libnccl"):
                notes.append(line.rstrip())
            if len(p) < 5 or not p[0].isdigit():
                continue
            try:
                if p[1] == "nccl/weft":
                    nw[int(p[0])] = (float(p[2]), float(p[3]))
                else:
                    rows.setdefault(int(p[0]), {})[p[1]] = (float(p[2]), float(p[3]), float(p[4]))
            except ValueError:
                pass
    return rows, nw, notes


def med(v):
    v = [x for x in v if x is not None]
    return statistics.median(v) if v else None


def f(x, spec=".2f"):
    return "-" if x is None else format(x, spec)


def main(argv):
    logs, colls = None, "all_reduce all_gather reduce_scatter alltoall broadcast"
    while argv:
        if argv[0] == "--logs" and len(argv) > 1:
            logs = argv[1]
        elif argv[0] == "--colls" and len(argv) > 1:
            colls = argv[1]
        else:
            sys.exit(__doc__)
        argv = argv[2:]
    if logs is None:
        sys.exit(__doc__)
    colls = colls.split()
    cmp_dir = os.path.join(logs, "compare")

    print("\n== 1. NCCL's time per call (us) as each tool measures it, same session")
    print("   stock: nccl-tests without weft (median of the pairs); new: weft_bench nccl.fresh "
          "(nccl-tests' method, NCCL's own communicator); before: weft_bench's method before "
          "(events, no sync call, weft's communicator, right after weft)")
    print(f"{'coll':<15}{'size':>9} {'stock':>8} {'new':>8} {'new/st':>7} {'before':>8} "
          f"{'bef/st':>7}  {'shim w/N':>8} {'bench w/N':>9} {'bef w/N':>8}")
    agree = {}
    for c in colls:
        stock = [nccl_tests_ratio.rows(p)
                 for p in sorted(glob.glob(os.path.join(cmp_dir, f"{c}.eager.stock.*.log")))]
        weft = [nccl_tests_ratio.rows(p)
                for p in sorted(glob.glob(os.path.join(cmp_dir, f"{c}.eager.weft.*.log")))]
        rows, nw, _ = diag_rows(os.path.join(logs, f"diag.{c}.log"))
        worst = None
        for s in sorted(set(rows) | set().union(*stock) if stock else set(rows)):
            st = nccl_tests_ratio.med(stock, s, "oop", 0)[0] if stock else None
            wt = nccl_tests_ratio.med(weft, s, "oop", 0)[0] if weft else None
            d = rows.get(s, {})
            new = d.get("nccl.fresh", (None,))[0]
            old = d.get("nccl.old", (None,))[0]
            r_new = new / st if new and st else None
            r_old = old / st if old and st else None
            shim = wt / st if wt and st else None
            bench = 1 / nw[s][0] if s in nw and nw[s][0] else None
            before = 1 / nw[s][1] if s in nw and nw[s][1] else None
            if r_new is not None and (worst is None or abs(r_new - 1) > abs(worst[0] - 1)):
                worst = (r_new, s)
            print(f"{c:<15}{human(s):>9} {f(st):>8} {f(new):>8} {f(r_new, '.3f'):>7} "
                  f"{f(old):>8} {f(r_old, '.3f'):>7}  {f(shim, '.3f'):>8} {f(bench, '.3f'):>9} "
                  f"{f(before, '.3f'):>8}")
        agree[c] = worst
    print("   (w/N: weft time / NCCL time; shim: nccl-tests through libweft_nccl.so over stock; "
          "bench: weft_bench new method; bef: weft_bench before)")
    print("\n== 2. weft_bench's NCCL (new method) against nccl-tests stock: largest deviation")
    for c in colls:
        w = agree.get(c)
        print(f"   {c:<15} " + ("no data" if w is None else
                                f"{w[0]:.3f} at {human(w[1])} ({'within' if abs(w[0] - 1) <= 0.03 else 'OUTSIDE'} 3%)"))

    print("\n== 3. causes: NCCL's time in each setup / nccl.fresh's (median over sizes [min, max])")
    variants = ["nccl.cudamalloc", "nccl.events", "nccl.window", "nccl.devcomm", "nccl.captured",
                "nccl.1call", "nccl.weftcomm", "nccl.old", "weft", "weft.old"]
    print(f"{'variant':<16}" + "".join(f"{c:>22}" for c in colls))
    for v in variants:
        cells = []
        for c in colls:
            rows, _, _ = diag_rows(os.path.join(logs, f"diag.{c}.log"))
            r = [rows[s][v][2] for s in rows if v in rows[s]]
            cells.append(f"{med(r):.3f} [{min(r):.2f},{max(r):.2f}]" if r else "-")
        print(f"{v:<16}" + "".join(f"{x:>22}" for x in cells))
    hosts = []
    for c in colls:
        rows, _, _ = diag_rows(os.path.join(logs, f"diag.{c}.log"))
        small = [s for s in rows if s <= 65536 and "nccl.fresh" in rows[s]]
        if small:
            t = med([rows[s]["nccl.fresh"][0] for s in small])
            h = med([rows[s]["nccl.fresh"][1] for s in small])
            hosts.append(f"{c} {h:.2f}/{t:.2f}")
    print("   host enqueue / time per call, NCCL alone, sizes <= 64 KB (rank 0, us; equal means the "
          "host sets the pace): " + ", ".join(hosts))

    print("\n== 4. interleaved against blocked (ratio to nccl.fresh, median over sizes)")
    for c in ("broadcast", "alltoall"):
        a, _, _ = diag_rows(os.path.join(logs, f"diag.{c}.log"))
        b, _, notes = diag_rows(os.path.join(logs, f"diag.blocked.{c}.log"))
        if not b:
            print(f"   {c}: not run")
            continue
        out = []
        for v in ("nccl.weftcomm", "weft", "nccl.old"):
            ra = med([a[s][v][2] for s in a if v in a[s]])
            rb = med([b[s][v][2] for s in b if v in b[s]])
            out.append(f"{v} {f(ra, '.3f')} / {f(rb, '.3f')}")
        print(f"   {c}: " + "; ".join(out) + " (interleaved / blocked)")

    print("\n== 5. the shim's cost on calls it hands to NCCL (shim_overhead; host +us per call, "
          "device and wall ratios shim/direct; the control runs without the shim)")
    for name in ("no_shim", "shim"):
        path = os.path.join(logs, f"overhead.{name}.log")
        if not os.path.exists(path):
            print(f"   {name}: not run")
            continue
        per = {}
        with open(path, errors="replace") as fh:
            for line in fh:
                p = [x.strip() for x in line.split("|")]
                if len(p) >= 12 and p[1] in ("allreduce", "reducescatter", "sendrecv"):
                    try:
                        per.setdefault(p[1], []).append((float(p[5]), float(p[8]), float(p[11])))
                    except ValueError:
                        pass
        for op, v in per.items():
            print(f"   {name:<8} {op:<14} host +us {med([x[0] for x in v]):+.3f} "
                  f"[{min(x[0] for x in v):+.3f},{max(x[0] for x in v):+.3f}]  device "
                  f"{med([x[1] for x in v]):.3f}  wall {med([x[2] for x in v]):.3f}")

    print("\n== 6. the shipped comparison (tools/compare_nccl.sh, eager, weft/NCCL)")
    for p in sorted(glob.glob(os.path.join(cmp_dir, "*.ratio"))):
        with open(p, errors="replace") as fh:
            for line in fh:
                if line.startswith("verdict"):
                    print("   " + line.rstrip())
    notes = diag_rows(os.path.join(logs, f"diag.{colls[0]}.log"))[2] if colls else []
    if notes:
        print("\n== placement (weft_bench, " + colls[0] + ")")
        for n in notes:
            print("   " + n)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
