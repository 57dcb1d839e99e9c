#!/usr/bin/env python3
# gpu_compare.py — compares a GPU trace with the CUDA-event times gpu_trace measured around each
# launch, and traced with untraced runs. Prints per size (bytes): calls, median kernel time from
# the trace (first CTA in to last CTA out), the busiest tb's summed step time, their ratio (the
# 10% criterion), the event time of the same calls, and, given untraced event files, the event
# time without tracing and the ratio.
# usage: gpu_compare.py TRACE_GLOB_PREFIX EVENTS_PREFIX [UNTRACED_EVENTS_PREFIX]
import glob
import json
import statistics
import sys


def events(prefix):
    ev = {}
    for f in sorted(glob.glob(prefix + '.rank*.txt')):
        for line in open(f):
            w = line.split()
            # call SEQ rank R bytes B event_us T served NAME
            ev[(int(w[1]), int(w[3]))] = (int(w[5]), float(w[7]), w[9])
    return ev


def main():
    tr_prefix, ev_prefix = sys.argv[1], sys.argv[2]
    off = events(sys.argv[3]) if len(sys.argv) > 3 else {}
    ev = events(ev_prefix)
    calls, tbsum = {}, {}
    for f in sorted(glob.glob(tr_prefix + '.rank*.json')):
        doc = json.load(open(f))
        for e in doc['traceEvents']:
            if e.get('ph') != 'X':
                continue
            a = e['args']
            if e['cat'] == 'weft.call':
                calls[(a['call'], a['rank'])] = e['dur']
            elif e['cat'] == 'weft.step':
                k = (a['call'], e['pid'], e['tid'])
                tbsum[k] = tbsum.get(k, 0.0) + e['dur']
    busiest = {}
    for (c, r, tb), s in tbsum.items():
        busiest[(c, r)] = max(busiest.get((c, r), 0.0), s)
    rows = {}
    worst = 1.0
    for (c, r), kern in sorted(calls.items()):
        if (c, r) not in ev:
            continue
        b, evt, served = ev[(c, r)]
        ratio = busiest.get((c, r), 0.0) / kern if kern > 0 else 1.0
        worst = min(worst, ratio)
        row = rows.setdefault(b, {'k': [], 'b': [], 'r': [], 'e': [], 'o': []})
        row['k'].append(kern)
        row['b'].append(busiest.get((c, r), 0.0))
        row['r'].append(ratio)
        row['e'].append(evt)
        if (c, r) in off:
            row['o'].append(off[(c, r)][1])
    print("%12s %6s %12s %12s %9s %12s %12s %9s" % ("bytes", "calls", "kernel us", "tb sum us",
          "sum/kern", "event us", "untraced us", "on/off"))
    med = statistics.median
    for b in sorted(rows):
        x = rows[b]
        o = "%12.3f %9.3f" % (med(x['o']), med(x['e']) / med(x['o'])) if x['o'] else "%12s %9s" % ("-", "-")
        print("%12d %6d %12.3f %12.3f %9.3f %12.3f %s" % (b, len(x['k']), med(x['k']), med(x['b']),
              min(x['r']), med(x['e']), o))
    print("smallest busiest-tb-sum / kernel over every call and rank: %.3f (%s)" %
          (worst, "within 10%" if worst >= 0.9 else "NOT within 10%"))
    return 0 if worst >= 0.9 and rows else 1


if __name__ == '__main__':
    sys.exit(main())
