#!/usr/bin/env python3
"""caller-moves.py - how caller attribution moved each profiled cell of a run.

Usage: caller-moves.py RAWDIR [COMPONENT...]

RAWDIR is a profiled boot's raw folder (results/<exp>/<run>/icount/raw):
for every <cell>.profile.json with its <cell>.snap, prints instructions per
window IO (the snap's b_ios - a_ios) of nic, software and COMPONENT...
(default kernel-lib kernel-mm other) by symbol only and with the NIC-called
helpers moved (both from the same raw file, attribute.py's
components_symbol_only and components), and the plugin's episode counts.
A format-1 profile (no caller attribution) shows equal columns.
"""
import glob
import json
import os
import sys


def ios(snap):
    kv = {}
    with open(snap) as f:
        for line in f:
            p = line.split()
            if len(p) == 2:
                kv[p[0]] = p[1]
    return int(kv["b_ios"]) - int(kv["a_ios"])


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    raw = sys.argv[1]
    comps = sys.argv[2:] or ["kernel-lib", "kernel-mm", "other"]
    cols = ["nic", "software"] + comps
    print("%-36s %3s %6s  " % ("cell", "fmt", "ios") +
          "  ".join("%19s" % (c + " sym->caller") for c in cols) + "  episodes/committed/ab_switch")
    for pj in sorted(glob.glob(os.path.join(raw, "*.profile.json"))):
        cell = pj[:-len(".profile.json")]
        if not os.path.exists(cell + ".snap"):
            continue
        n = ios(cell + ".snap")
        with open(pj) as f:
            r = json.load(f)
        ca = r.get("caller_attribution", {})
        sym = r.get("components_symbol_only", r["components"])
        new = r["components"]
        vals = {"nic": (r.get("nic_own_insns", r["nic_insns"]), r["nic_insns"]),
                "software": (r.get("software_insns_symbol_only", r["software_insns"]),
                             r["software_insns"])}
        for c in comps:
            vals[c] = (sym.get(c, 0), new.get(c, 0))
        st = ca.get("plugin_stats") or {}
        print("%-36s %3s %6d  " % (os.path.basename(cell), ca.get("format", 1), n) +
              "  ".join("%9.0f->%-9.0f" % (vals[c][0] / n, vals[c][1] / n) for c in cols) +
              "  %s/%s/%s" % (st.get("episodes", "-"), st.get("committed", "-"),
                              st.get("ab_switch", "-")))


if __name__ == "__main__":
    main()
