"""profiles.py - the instruction profile of each measured window, for
summarize.py and report.py.

A profiled boot (experiments/testbed/run --profile) leaves PHASE/profile.raw
(the TCG plugin's per-window counts), raw/kallsyms.txt and, per cell,
raw/<cell>.maps (every process's executable mappings at the window's end)
and raw/<cell>.snap (whose "window" line is the window's index).
experiments/profiler/attribute.py turns one window into
raw/<cell>.profile.json: instructions in total, in the NIC set
(experiments/profiler/components.conf) and per component, and the top
functions. After summarizing, run.sh compresses the raw files (.gz), which
this module unpacks again when a run is re-summarized.
"""
import glob, gzip, json, os, shutil, subprocess, sys, tempfile

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
ATTRIBUTE = os.path.join(TOP, "experiments", "profiler", "attribute.py")


def _window(snap):
    with open(snap) as f:
        for line in f:
            k, v = line.split()
            if k == "window":
                return int(v)
    return None


def _plain(path, tmp):
    """PATH, or its .gz (results keep the raw profile files compressed)
    unpacked into TMP."""
    if os.path.exists(path):
        return path
    if not os.path.exists(path + ".gz"):
        return None
    out = os.path.join(tmp, os.path.basename(path))
    with gzip.open(path + ".gz", "rb") as fi, open(out, "wb") as fo:
        shutil.copyfileobj(fi, fo)
    return out


def attribute_run(raw):
    """Write <cell>.profile.json for every cell of a profiled boot that has
    none yet. A profiled boot whose window cannot be attributed is an error."""
    with tempfile.TemporaryDirectory() as tmp:
        _attribute_run(raw, tmp)


def compress_run(raw):
    """gzip a profiled boot's raw profile, kallsyms and maps dumps."""
    boot = os.path.dirname(os.path.normpath(raw))
    for p in [os.path.join(boot, "profile.raw"), os.path.join(raw, "kallsyms.txt")] + \
            sorted(glob.glob(os.path.join(raw, "*.maps"))):
        if os.path.exists(p):
            with open(p, "rb") as fi, gzip.open(p + ".gz", "wb", 9) as fo:
                shutil.copyfileobj(fi, fo)
            os.unlink(p)


def _attribute_run(raw, tmp):
    prof_raw = _plain(os.path.join(os.path.dirname(os.path.normpath(raw)), "profile.raw"), tmp)
    if not prof_raw:
        return
    kallsyms = _plain(os.path.join(raw, "kallsyms.txt"), tmp)
    todo = []
    maps_files = {p[:-3] for p in glob.glob(os.path.join(raw, "*.maps.gz"))}
    maps_files |= set(glob.glob(os.path.join(raw, "*.maps")))
    for maps in sorted(maps_files):
        cell = maps[:-5]
        if os.path.exists(cell + ".profile.json") or not os.path.exists(cell + ".snap"):
            continue
        w = _window(cell + ".snap")
        if w is None:
            raise ValueError("%s.snap: no window index" % cell)
        todo.append((w, cell, _plain(maps, tmp)))
    if not todo:
        return
    lst = os.path.join(tmp, "windows.lst")
    with open(lst, "w") as f:
        for w, cell, maps in todo:
            f.write("%d %s %s\n" % (w, os.path.basename(cell), os.path.abspath(maps)))
    subprocess.run([sys.executable, ATTRIBUTE, "--raw", prof_raw, "--kallsyms", kallsyms,
                    "--batch", lst, "--out-dir", raw], check=True, stdout=subprocess.DEVNULL)


def load(path):
    """A window's profile: total, nic, software instructions, components."""
    with open(path) as f:
        p = json.load(f)
    return {"total": p["total_insns"], "nic": p["nic_insns"],
            "software": p["software_insns"], "components": p.get("components", {}),
            "top": p.get("top_functions", []), "plugin_total": p.get("plugin_total_insns"),
            "unclean": p.get("unclean", {})}
