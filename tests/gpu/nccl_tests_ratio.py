"""nccl_tests_ratio.py — per-size comparison of sets of nccl-tests logs taken in one session with
the runs alternating: A = the reference (stock NCCL), B = the candidate (weft through the shim)
and optionally C = the control (the shim loaded with WEFT_DISABLE=1: NCCL serves every call, so
C/A is what noise and the shim's pass-through read as). Per size the median time of each set out
of place and in place, B/A and C/A, B's #wrong, and a verdict line: the largest B/A and how many
sizes are slower than both the limit and the control (B/A > max(limit, C/A)).
tools/compare_nccl.sh and tests/gpu/shim_device.sh print it.

  python3 nccl_tests_ratio.py [--name NAME] [--limit 1.03] [--served LOG]... [--launch MODE]
                             A.log... -- B.log... [-- C.log...]
  python3 nccl_tests_ratio.py --medians A.log...     (size, out-of-place us, in-place us)

--served: a weft run's log with the shim's WEFT_REPORT tables (an untimed run: the report's
bookkeeping costs every call some host time). Each size then says who served it (the algorithm,
or NCCL), and the verdict how many of the slow sizes weft served. --launch: only the report's rows
of that launch mode (eager, graph, registered, registered-graph) count: nccl-tests -G warms up
with eager calls before it captures, so a graph run's report holds eager rows too, and those may
be served where the captured calls are not.

A log may also be a PyTorch benchmark's (tests/gpu/torch_graph.py): the same row shape, out of
place only.
"""
import re
import statistics
import sys

# the launch modes a WEFT_REPORT row names (weft_launch_name, ir/weft_ir.h)
LAUNCHES = ("eager", "graph", "registered", "registered-graph")

# a WEFT_REPORT row of calls weft served: "... weft REPORT   allgather  graph  20  4096 .. 8192
# weft 'NAME'" (shim/report.c): its launch mode, sizes and algorithm
REPORT_WEFT = re.compile(
    r"weft REPORT\s+\S+\s+(\S+)\s+\d+\s+(\d+)(?:\s+\.\.\s+(\d+))?\s+weft '([^']*)'")


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
            r = {}
            if num(p[5]) is not None and num(p[7]) is not None:
                r["oop"] = (num(p[5]), num(p[7]), num(p[8]))
            if len(p) >= 13 and num(p[9]) is not None:
                r["ip"] = (num(p[9]), num(p[11]), num(p[12]))
            if r:
                out[int(p[0])] = r
    return out


def served_ranges(paths, launch=None):
    """[(lo, hi, algorithm)] of the sizes weft served in the logs' WEFT_REPORT tables (only
    calls of launch mode `launch` when given), or None when they hold no report at all."""
    out, seen = [], False
    for p in paths:
        with open(p, errors="replace") as f:
            for line in f:
                if " weft REPORT " in line:
                    seen = True
                m = REPORT_WEFT.search(line)
                if m and (launch is None or m.group(1) == launch):
                    lo = int(m.group(2))
                    out.append((lo, int(m.group(3)) if m.group(3) else lo, m.group(4)))
    return out if seen else None


def served_by(ranges, size):
    """The algorithm that served calls of size bytes, or "NCCL"."""
    for lo, hi, name in ranges:
        if lo <= size <= hi:
            return name
    return "NCCL"


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


def ratio(x, y):
    return x / y if x is not None and y else None


def compare(name, limit, a, b, c, served=None):
    """The table and the verdict line; returns (worst B/A or None, sizes above, sizes, #wrong B).
    served: served_ranges() of an untimed weft run, or None."""
    sizes = sorted(set().union(*a, *b)) if a and b else []
    head = "| size | NCCL us | weft us | weft/NCCL |"
    if c:
        head += " control/NCCL |"
    head += " NCCL in-place us | weft in-place us | weft/NCCL in-place |"
    if c:
        head += " control/NCCL in-place |"
    head += " weft #wrong | runs |"
    if served is not None:
        head += " served by |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    worst, above, total, wrong_a, wrong_b, ctl, above_weft = None, 0, 0, 0, 0, [], 0
    for s in sizes:
        ta, na = med(a, s, "oop", 0)
        tb, nb = med(b, s, "oop", 0)
        ia, ib = med(a, s, "ip", 0)[0], med(b, s, "ip", 0)[0]
        if (ta is None or tb is None) and (ia is None or ib is None):
            continue
        if ta is None:
            na, nb = med(a, s, "ip", 0)[1], med(b, s, "ip", 0)[1]
        tc, nc = med(c, s, "oop", 0) if c else (None, 0)
        ic, nic = med(c, s, "ip", 0) if c else (None, 0)
        nc = nc or nic
        ro, ri = ratio(tb, ta), ratio(ib, ia)
        co, ci = ratio(tc, ta), ratio(ic, ia)
        ctl += [x for x in (co, ci) if x is not None and s > 0]
        wb, wa = wrong(b, s), wrong(a, s) + (wrong(c, s) if c else 0)
        wrong_b += wb
        wrong_a += wa
        slow = False
        # a zero-byte call goes to NCCL before any lookup; its ~0.01 us are not a speed
        if s > 0:
            total += 1
        for r, cr, where in ((ro, co, "out of place"), (ri, ci, "in place")) if s > 0 else ():
            if r is None:
                continue
            # beyond the limit and beyond what NCCL itself read through the idle shim
            if r > max(limit, cr if cr is not None else 0.0):
                slow = True
            if worst is None or r > worst[0]:
                worst = (r, s, where, cr)
        above += slow
        by = served_by(served, s) if served is not None and s > 0 else None
        above_weft += slow and by is not None and by != "NCCL"
        line = f"| {human(s)} | {fmt(ta, '.2f')} | {fmt(tb, '.2f')} | {fmt(ro, '.3f')} |"
        if c:
            line += f" {fmt(co, '.3f')} |"
        line += f" {fmt(ia, '.2f')} | {fmt(ib, '.2f')} | {fmt(ri, '.3f')} |"
        if c:
            line += f" {fmt(ci, '.3f')} |"
        runs = f"{na}/{nb}/{nc}" if c else f"{na}/{nb}"
        line += f" {wb}{' slower' if slow else ''} | {runs} |"
        if served is not None:
            line += f" {by or '-'} |"
        print(line)
    label = f"verdict {name}" if name else "verdict"
    if worst is None:
        print(f"{label}: no size in both sets of logs")
        return None, 0, 0, wrong_b
    spread = f"; control {min(ctl):.3f}-{max(ctl):.3f}" if ctl else ""
    wc = f" at control {worst[3]:.3f}" if worst[3] is not None else ""
    of_weft = f" ({above_weft} of them served by weft)" if served is not None else ""
    print(f"{label}: max weft/NCCL {worst[0]:.3f} ({human(worst[1])}, {worst[2]}{wc}); "
          f"{above} of {total} sizes slower than {limit:g}{' and the control' if c else ''}"
          f"{of_weft}{spread}; "
          f"#wrong {wrong_b} (weft), {wrong_a} (NCCL)")
    return worst[0], above, total, wrong_b


def main(argv):
    name, limit, served_logs, launch = "", 1.03, [], None
    while argv and argv[0] in ("--name", "--limit", "--served", "--launch"):
        if len(argv) < 2:
            sys.exit(__doc__)
        if argv[0] == "--name":
            name = argv[1]
        elif argv[0] == "--served":
            served_logs.append(argv[1])
        elif argv[0] == "--launch":
            launch = argv[1]
            if launch not in LAUNCHES:
                sys.exit(f"nccl_tests_ratio: --launch {launch}: expected one of {', '.join(LAUNCHES)}")
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
    groups, cur = [], []
    for x in argv:
        if x == "--":
            groups.append(cur)
            cur = []
        else:
            cur.append(x)
    groups.append(cur)
    if len(groups) not in (2, 3):
        sys.exit(__doc__)
    a = [rows(p) for p in groups[0]]
    b = [rows(p) for p in groups[1]]
    c = [rows(p) for p in groups[2]] if len(groups) == 3 else []
    served = served_ranges(served_logs, launch) if served_logs else None
    worst, _, _, _ = compare(name, limit, a, b, c, served)
    return 0 if worst is not None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
