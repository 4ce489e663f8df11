"""The results folder: one JSON record per (run, cell), every raw tool output beside it.

Layout (everything a report is made from; report.py reads nothing else):
    machine.json                the machine and versions (machine.py)
    plan.json                   the plan, price schedule and utility parameters
    sessions.json               each session that ran into the folder (run.py --resume adds one)
    raw/APP/GUEST-VARIANT/runN.json       the record of one run of one cell (below), written
                                          atomically as soon as the cell ends
    raw/APP/GUEST-VARIANT/runN/...        raw outputs of the tools, as the driver gave them
    figures.csv, profit.csv     flat tables of every figure and profit (analysis.py)
    report.md, *.png            the report (report.py)

A record: {"app", "guest", "variant", "run", "status": "ok" | "not run" | "failed",
"reason", "interrupted" (true: the cell was cut off, resume.py runs it again), "loadavg"
({"start", "end"}: the host's 1-minute load average), "started_utc", "wall_s" (the run's
wall time, boot and teardown included), "info" (driver's start() result),
"phases": {"many": figures, "single": figures}}.
"""
import glob
import json
import os
import shutil


class Results:
    def __init__(self, path):
        self.path = os.path.abspath(path)
        os.makedirs(self.path, exist_ok=True)

    def write_json(self, relpath, obj):
        full = os.path.join(self.path, relpath)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        tmp = full + ".tmp"
        with open(tmp, "w") as f:
            json.dump(obj, f, indent=1, sort_keys=True, default=str)
            f.write("\n")
        os.replace(tmp, full)
        return full

    def read_json(self, relpath):
        with open(os.path.join(self.path, relpath)) as f:
            return json.load(f)

    def cell_dir(self, cell, run):
        """Where the driver puts this run's raw outputs (created)."""
        d = os.path.join(self.path, "raw", cell.app, cell.key, f"run{run}")
        os.makedirs(d, exist_ok=True)
        return d

    def record_path(self, cell, run):
        return os.path.join(self.path, "raw", cell.app, cell.key, f"run{run}.json")

    def read_record(self, cell, run):
        """The record of (cell, run), or None if there is none (or it cannot be read)."""
        try:
            with open(self.record_path(cell, run)) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def clear_run(self, cell, run):
        """Removes what an earlier, unfinished attempt at (cell, run) left: its raw outputs and
        record (run.py --resume runs it again from nothing)."""
        shutil.rmtree(os.path.join(self.path, "raw", cell.app, cell.key, f"run{run}"),
                      ignore_errors=True)
        if os.path.exists(self.record_path(cell, run)):
            os.remove(self.record_path(cell, run))

    def write_record(self, cell, run, record):
        record = dict(record, app=cell.app, guest=cell.guest, variant=cell.variant, run=run)
        record["phases"] = {p: self._keep_raw(cell, run, f) for p, f in
                            record.get("phases", {}).items()}
        return self.write_json(os.path.relpath(self.record_path(cell, run), self.path), record)

    def _keep_raw(self, cell, run, figures):
        """Copies raw files the driver left outside the results folder into it; stores paths
        relative to the results folder."""
        raw = {}
        for name, path in (figures.get("raw") or {}).items():
            if not os.path.exists(path):
                continue
            if not os.path.abspath(path).startswith(self.path + os.sep):
                dest = os.path.join(self.cell_dir(cell, run), os.path.basename(path))
                shutil.copy(path, dest)
                path = dest
            raw[name] = os.path.relpath(path, self.path)
        return dict(figures, raw=raw)

    def records(self):
        """Every record, sorted by app, guest, variant, run."""
        out = []
        for path in glob.glob(os.path.join(self.path, "raw", "*", "*", "run*.json")):
            with open(path) as f:
                out.append(json.load(f))
        return sorted(out, key=lambda r: (r["app"], r["guest"], r["variant"]["name"], r["run"]))
