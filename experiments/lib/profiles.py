"""profiles.py - the instruction profile of each measured window, for
summarize.py and report.py.

A profiled boot (experiments/testbed/run --profile) leaves PHASE/profile.raw
(the TCG plugin's per-window counts), raw/kallsyms.txt and, per cell,
raw/<cell>.maps (every process's executable mappings at the window's end)
and raw/<cell>.snap (whose "window" line is the window's index).
experiments/profiler/attribute.py turns one window into
raw/<cell>.profile.json: instructions in total, in the NIC set
(experiments/profiler/components.conf) and per component, and the top
functions.
"""
import glob, json, os, subprocess, sys

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
ATTRIBUTE = os.path.join(TOP, "experiments", "profiler", "attribute.py")


def _window(snap):
    with open(snap) as f:
        for line in f:
            k, v = line.split()
            if k == "window":
                return int(v)
    return None


def attribute_run(raw):
    """Write <cell>.profile.json for every cell of a profiled boot that has
    none yet. A profiled boot whose window cannot be attributed is an error."""
    prof_raw = os.path.join(os.path.dirname(os.path.normpath(raw)), "profile.raw")
    if not os.path.exists(prof_raw):
        return
    kallsyms = os.path.join(raw, "kallsyms.txt")
    todo = []
    for maps in sorted(glob.glob(os.path.join(raw, "*.maps"))):
        cell = maps[:-5]
        if os.path.exists(cell + ".profile.json") or not os.path.exists(cell + ".snap"):
            continue
        w = _window(cell + ".snap")
        if w is None:
            raise ValueError("%s.snap: no window index" % cell)
        todo.append((w, cell, maps))
    if not todo:
        return
    lst = os.path.join(raw, "windows.lst")
    with open(lst, "w") as f:
        for w, cell, maps in todo:
            f.write("%d %s %s\n" % (w, os.path.basename(cell), os.path.basename(maps)))
    subprocess.run([sys.executable, ATTRIBUTE, "--raw", prof_raw, "--kallsyms", kallsyms,
                    "--batch", lst, "--out-dir", raw], check=True, stdout=subprocess.DEVNULL)
    os.unlink(lst)


def load(path):
    """A window's profile: total, nic, software instructions, components."""
    with open(path) as f:
        p = json.load(f)
    return {"total": p["total_insns"], "nic": p["nic_insns"],
            "software": p["software_insns"], "components": p.get("components", {}),
            "top": p.get("top_functions", []), "plugin_total": p.get("plugin_total_insns")}
