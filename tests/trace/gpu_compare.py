#!/usr/bin/env python3
# gpu_compare.py — what gpu_trace_check.sh measured: for each traced run, per message size, the
# kernel time from the trace (first CTA in to last CTA out), the busiest tb's summed step time
# and their smallest ratio over calls and ranks (the 10% criterion), the CUDA-event time of the
# same calls; then the cost of tracing: median event time per size of the base binary (no
# instrumentation), the instrumented one untraced and traced, from alternating processes.
# usage: gpu_compare.py OUT TRACED_RUN...   (exit 1 when a ratio is below 0.9)
import glob
import json
import os
import statistics
import sys


def events(prefix):
    ev = {}
    for f in sorted(glob.glob(prefix + '.rank*.txt')):
        for line in open(f):
            w = line.split()
            ev[(int(w[1]), int(w[3]))] = (int(w[5]), float(w[7]), w[9])
    return ev


def traced(out, name):
    calls, tbsum, tbspan = {}, {}, {}
    for f in sorted(glob.glob(os.path.join(out, name + '.rank*.json'))):
        for e in json.load(open(f))['traceEvents']:
            if e.get('ph') != 'X':
                continue
            a = e['args']
            if e['cat'] == 'weft.call':
                calls[(a['call'], a['rank'])] = (e['dur'], a['algorithm'])
            elif e['cat'] == 'weft.step':
                k = (a['call'], e['pid'], e['tid'])
                tbsum[k] = tbsum.get(k, 0.0) + e['dur']
                lo, hi = tbspan.get(k, (e['ts'], e['ts'] + e['dur']))
                tbspan[k] = (min(lo, e['ts']), max(hi, e['ts'] + e['dur']))
    # The busiest tb per call and rank, and its span (first step in to last step out): the
    # kernel time minus that span is CTA start skew and exit; the span minus the sum is the
    # time between the tb's steps.
    busiest, bspan = {}, {}
    for (c, r, tb), s in tbsum.items():
        if s >= busiest.get((c, r), -1.0):
            busiest[(c, r)] = s
            lo, hi = tbspan[(c, r, tb)]
            bspan[(c, r)] = hi - lo
    ev = events(os.path.join(out, name + '_ev'))
    rows, worst = {}, None
    for (c, r), (kern, algo) in sorted(calls.items()):
        b = ev.get((c, r), (None, float('nan'), '-'))
        ratio = busiest.get((c, r), 0.0) / kern if kern > 0 else 1.0
        worst = ratio if worst is None else min(worst, ratio)
        x = rows.setdefault((b[0], algo), {'k': [], 's': [], 'p': [], 'r': [], 'e': []})
        x['k'].append(kern)
        x['s'].append(busiest.get((c, r), 0.0))
        x['p'].append(bspan.get((c, r), 0.0))
        x['r'].append(ratio)
        x['e'].append(b[1])
    print("== %s: %d calls x ranks traced" % (name, len(calls)))
    print("%11s  %-28s %5s %10s %10s %10s %9s %9s %10s" % ("bytes", "algorithm", "n",
          "kernel us", "tb span us", "tb sum us", "min ratio", "sum/sum", "event us"))
    med = statistics.median
    for (b, algo) in sorted(rows, key=lambda k: (k[0] or 0, k[1])):
        x = rows[(b, algo)]
        # sum/sum: all calls' busiest-tb step time over all their kernel time, for this size
        agg = sum(x['s']) / sum(x['k']) if sum(x['k']) > 0 else 1.0
        print("%11s  %-28s %5d %10.3f %10.3f %10.3f %9.3f %9.3f %10.3f" % (b, algo, len(x['k']),
              med(x['k']), med(x['p']), med(x['s']), min(x['r']), agg, med(x['e'])))
    if worst is None:
        print("no calls traced")
        return False
    print("smallest busiest-tb-sum / kernel time: %.3f (%s)" % (worst, "within 10%" if worst >= 0.9
          else "NOT within 10%"))
    return worst >= 0.9


def cost(out):
    series = {}
    for kind in ('base', 'off', 'on'):
        for f in sorted(glob.glob(os.path.join(out, kind + '[0-9]_ev.rank*.txt'))):
            for line in open(f):
                w = line.split()
                series.setdefault(kind, {}).setdefault(int(w[5]), []).append(float(w[7]))
    if 'off' not in series:
        return
    med = statistics.median
    print("== the cost of tracing: median CUDA-event time per call (us), alternating processes")
    print("%11s %10s %10s %10s %9s %9s" % ("bytes", "base", "off", "on", "off/base", "on/off"))
    for b in sorted(series['off']):
        base = med(series['base'][b]) if 'base' in series and b in series['base'] else None
        off = med(series['off'][b])
        on = med(series['on'][b]) if b in series.get('on', {}) else None
        print("%11d %10s %10.3f %10s %9s %9s" % (b, "%.3f" % base if base else "-", off,
              "%.3f" % on if on else "-", "%.3f" % (off / base) if base else "-",
              "%.3f" % (on / off) if on else "-"))


def main():
    out = sys.argv[1]
    ok = True
    for name in sys.argv[2:]:
        ok = traced(out, name) and ok
    cost(out)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
