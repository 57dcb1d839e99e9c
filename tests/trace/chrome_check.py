#!/usr/bin/env python3
# chrome_check.py — checks, independently of weft's own reader, that trace files are valid Chrome
# trace event JSON that Perfetto's and chrome://tracing's importers take: strict JSON, object
# format with displayTimeUnit first and traceEvents last, ASCII without \u escapes, no arrays
# inside events, complete ("X") events with numeric ts/dur, names for every process and thread,
# step slices ordered and non-overlapping per thread and inside a call slice of their process.
# usage: chrome_check.py FILE...   (exit 0 ok, 1 a file is invalid)
import json
import sys


def bad_constant(name):
    raise ValueError("not JSON: " + name)


def ns(x):
    return int(round(x * 1000))


def check(path):
    errs = []
    raw = open(path, 'rb').read()
    try:
        text = raw.decode('ascii')
    except UnicodeDecodeError:
        return ["non-ASCII bytes"]
    if '\\u' in text:
        errs.append("\\u escape (Perfetto's importer does not decode them)")
    if not text.startswith('{"displayTimeUnit":'):
        errs.append("displayTimeUnit is not the first member (Perfetto reads it only there)")
    try:
        doc = json.loads(text, parse_constant=bad_constant)
    except ValueError as e:
        return errs + ["not JSON: %s" % e]
    if not isinstance(doc, dict):
        return errs + ["top level is not an object"]
    keys = list(doc.keys())
    if keys[-1:] != ['traceEvents']:
        errs.append("traceEvents is not the last member: %s" % keys)
    if set(keys) - {'displayTimeUnit', 'otherData', 'traceEvents'}:
        errs.append("members Perfetto's importer would stop at: %s" % keys)
    other = doc.get('otherData', {})
    if other.get('producer') != 'weft' or not str(other.get('time_base_ns', '')).isdigit():
        errs.append("otherData lacks producer weft / time_base_ns")
    evs = doc.get('traceEvents')
    if not isinstance(evs, list):
        return errs + ["traceEvents is not an array"]
    pnames, tnames = set(), set()
    slices, calls = {}, {}
    for i, e in enumerate(evs):
        where = "event %d" % i
        if not isinstance(e, dict):
            errs.append(where + ": not an object")
            continue
        for k, v in e.items():
            if isinstance(v, list):
                errs.append(where + ": array member %s" % k)
            if isinstance(v, dict):
                for k2, v2 in v.items():
                    if isinstance(v2, (list, dict)):
                        errs.append(where + ": nested member %s.%s" % (k, k2))
        ph = e.get('ph')
        if not isinstance(e.get('pid'), int) or not isinstance(e.get('tid'), int):
            errs.append(where + ": pid/tid not integers")
            continue
        if ph == 'M':
            n = e.get('name')
            if n == 'process_name':
                pnames.add(e['pid'])
            elif n == 'thread_name':
                tnames.add((e['pid'], e['tid']))
            elif n not in ('process_sort_index', 'thread_sort_index'):
                errs.append(where + ": unknown metadata %r" % n)
            if not isinstance(e.get('args'), dict):
                errs.append(where + ": metadata without args")
        elif ph == 'X':
            ts, dur = e.get('ts'), e.get('dur')
            if not isinstance(ts, (int, float)) or not isinstance(dur, (int, float)) or dur < 0:
                errs.append(where + ": ts/dur not numbers, or dur < 0")
                continue
            if not isinstance(e.get('name'), str) or not isinstance(e.get('args'), dict):
                errs.append(where + ": X without name or args")
                continue
            key = (e['pid'], e['tid'])
            if e.get('cat') == 'weft.call':
                calls.setdefault(e['pid'], {})[e['args'].get('call')] = (ns(ts), ns(ts) + ns(dur))
            elif e.get('cat') == 'weft.step':
                slices.setdefault(key, []).append((ns(ts), ns(ts) + ns(dur), e['args'].get('call'), i))
            else:
                errs.append(where + ": unknown category %r" % e.get('cat'))
        else:
            errs.append(where + ": phase %r" % ph)
    nslices = 0
    for key, sl in sorted(slices.items()):
        if key[0] not in pnames:
            errs.append("pid %d has no process_name" % key[0])
        if key not in tnames:
            errs.append("pid %d tid %d has no thread_name" % key)
        sl.sort()
        nslices += len(sl)
        for a, b in zip(sl, sl[1:]):
            if b[0] < a[1]:
                errs.append("pid %d tid %d: event %d starts before event %d ends" % (key + (b[3], a[3])))
                break
        for (t0, t1, call, i) in sl:
            span = calls.get(key[0], {}).get(call)
            if span is None or t0 < span[0] or t1 > span[1]:
                errs.append("pid %d tid %d: event %d outside its call slice" % (key + (i,)))
                break
    for pid in calls:
        if pid not in pnames:
            errs.append("pid %d has no process_name" % pid)
    if not errs:
        print("%s: ok: %d events, %d processes, %d threads with steps, %d step slices, %d call slices"
              % (path, len(evs), len(pnames), len(slices), nslices, sum(len(c) for c in calls.values())))
    return errs


def main():
    bad = 0
    for p in sys.argv[1:]:
        errs = check(p)
        for e in errs[:20]:
            print("%s: %s" % (p, e))
        bad |= bool(errs)
    return 1 if bad or len(sys.argv) < 2 else 0


if __name__ == '__main__':
    sys.exit(main())
