"""Results of `coflowkit sim`: the JSON document of `--json`, as DataFrames.

`ck.sim` and `ck.load_results` build the same object from the same document, so results of
runs made elsewhere (a Slurm array over `coflowkit sim --json`) read exactly like local ones.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable, Union

import pandas as pd

# The columns of `coflowkit sim --csv`, in its order; the JSON adds fct_spread.
COFLOW_COLUMNS = [
    "scheduler",
    "id",
    "arrival_s",
    "finish_s",
    "cct_s",
    "isolated_cct_s",
    "bytes",
    "flows",
    "length_bytes",
    "bin",
    "deadline_s",
    "met_deadline",
    "avg_fct_s",
    "fct_spread",
]

PathLike = Union[str, "os.PathLike[str]"]


class Results:
    """One `coflowkit sim` run (or several files of them): per-coflow and per-scheduler rows.

    `coflows`: one row per (scheduler, coflow), the columns of `coflowkit sim --csv` plus
    `fct_spread`. `summary`: one row per scheduler, the `summary` object of `--json` flattened
    (nested fields as `avg_cct_by_bin_s.SN`). `docs`: the JSON documents themselves.
    """

    def __init__(self, docs: list[dict[str, Any]], sources: list[str] | None = None):
        self.docs = docs
        self.sources = sources
        self._coflows: pd.DataFrame | None = None
        self._summary: pd.DataFrame | None = None

    @property
    def baseline(self) -> str:
        return self.docs[0]["baseline"]

    @property
    def schedulers(self) -> list[str]:
        return [r["scheduler"] for d in self.docs for r in d["results"]]

    def _source_cols(self, i: int) -> dict[str, Any]:
        return {"source": self.sources[i]} if self.sources and len(self.docs) > 1 else {}

    @property
    def coflows(self) -> pd.DataFrame:
        if self._coflows is None:
            frames = []
            for i, d in enumerate(self.docs):
                for r in d["results"]:
                    f = pd.DataFrame.from_records(r["coflows"])
                    f.insert(0, "scheduler", r["scheduler"])
                    for k, v in self._source_cols(i).items():
                        f.insert(0, k, v)
                    frames.append(f)
            df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
            for c in COFLOW_COLUMNS:
                if c not in df.columns:
                    df[c] = None
            lead = [c for c in ("source",) if c in df.columns]
            rest = [c for c in df.columns if c not in COFLOW_COLUMNS and c not in lead]
            self._coflows = df[lead + COFLOW_COLUMNS + rest]
        return self._coflows

    @property
    def summary(self) -> pd.DataFrame:
        if self._summary is None:
            rows = []
            for i, d in enumerate(self.docs):
                for r in d["results"]:
                    rows.append({**self._source_cols(i), "scheduler": r["scheduler"], **r["summary"]})
            self._summary = pd.json_normalize(rows)
        return self._summary

    def plot_cdf(self, ax: Any = None, log: bool = True, title: str | None = None) -> Any:
        """The CCT CDF of every scheduler (matplotlib), as `coflowkit sim --plot` draws it.
        Returns the figure."""
        import matplotlib.pyplot as plt

        if ax is None:
            fig, ax = plt.subplots(figsize=(7, 4.5))
        else:
            fig = ax.figure
        df = self.coflows
        keys = ["source", "scheduler"] if "source" in df.columns else ["scheduler"]
        for key, g in df.groupby(keys, sort=False):
            cct = g["cct_s"].sort_values().to_numpy()
            y = (pd.RangeIndex(1, len(cct) + 1) / len(cct)).to_numpy()
            label = " ".join(map(str, key)) if isinstance(key, tuple) else str(key)
            ax.step(cct, y, where="post", label=label)
        if log:
            ax.set_xscale("log")
        ax.set_xlabel("CCT (s)")
        ax.set_ylabel("fraction of coflows")
        ax.set_ylim(0, 1.0)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="lower right", fontsize="small")
        ax.set_title(title or self.docs[0].get("trace", ""))
        return fig

    def to_polars(self) -> dict[str, Any]:
        """`{"coflows": ..., "summary": ...}` as polars DataFrames (needs polars)."""
        from ._polars import to_polars

        return {"coflows": to_polars(self.coflows), "summary": to_polars(self.summary)}

    def to_json(self, path: PathLike) -> None:
        """Write the (first) document as `coflowkit sim --json` would."""
        Path(path).write_text(json.dumps(self.docs[0]))

    def __repr__(self) -> str:
        return f"<Results {', '.join(self.schedulers)} on {self.docs[0].get('trace')}>"


def load_results(paths: PathLike | Iterable[PathLike]) -> Results:
    """Results from files written by `coflowkit sim --json` (one path, a glob pattern, or a
    list). Several files give one Results whose rows carry a `source` column (the file)."""
    import glob as _glob

    if isinstance(paths, (str, os.PathLike)):
        p = os.fspath(paths)
        files = sorted(_glob.glob(p)) if any(ch in p for ch in "*?[") else [p]
    else:
        files = [os.fspath(p) for p in paths]
    if not files:
        raise FileNotFoundError(f"no result files match {paths!r}")
    docs = [_read_doc(f) for f in files]
    return Results(docs, sources=files)


# Largest results file read (bytes): `sim --json` of the bundled trace under every scheduler
# is a few MB; /dev/zero used to be read until MemoryError.
MAX_RESULTS_BYTES = 1 << 30


def _read_doc(f: str) -> Any:
    """One `--json` document, read with a bound; errors name the file."""
    import stat

    from ._native import CoflowkitError

    mode = os.stat(f).st_mode
    if stat.S_ISDIR(mode):
        raise CoflowkitError(f"{f}: a directory, not a results file")
    if stat.S_ISCHR(mode):
        raise CoflowkitError(f"{f}: a character device, not a results file (it would never end)")
    with open(f, "rb") as fh:
        data = fh.read(MAX_RESULTS_BYTES + 1)
    if len(data) > MAX_RESULTS_BYTES:
        raise CoflowkitError(f"{f}: larger than the limit of {MAX_RESULTS_BYTES} bytes for a results file")
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise CoflowkitError(f"{f}: not a JSON document of `coflowkit sim --json`: {e}") from e
    except RecursionError as e:
        # Python's reader recurses per level (about 1,000 deep); a results file nests 4.
        raise CoflowkitError(
            f"{f}: JSON nested too deeply to read (a results file of `coflowkit sim --json` "
            "nests 4 levels)"
        ) from e
    _check_doc(f, doc)
    return doc


def _check_doc(f: str, doc: Any) -> None:
    """That `doc` has what `Results` reads, so a file that is not a results file fails at load
    (naming the file and the field), not later when a property is first read."""
    from ._native import CoflowkitError

    def bad(what: str) -> CoflowkitError:
        return CoflowkitError(f"{f}: not a results file of `coflowkit sim --json`: {what}")

    def kind(v: Any) -> str:
        return {dict: "an object", list: "an array", str: "a string"}.get(type(v), type(v).__name__)

    if not isinstance(doc, dict):
        raise bad(f"the document is {kind(doc)}, not an object")
    for key, want in (("baseline", str), ("results", list)):
        if key not in doc:
            raise bad(f"missing field `{key}`")
        if not isinstance(doc[key], want):
            raise bad(f"field `{key}` is {kind(doc[key])}, not {kind(want())}")
    for i, r in enumerate(doc["results"]):
        where = f"results[{i}]"
        if not isinstance(r, dict):
            raise bad(f"`{where}` is {kind(r)}, not an object")
        for key, want in (("scheduler", str), ("summary", dict), ("coflows", list)):
            if key not in r:
                raise bad(f"missing field `{where}.{key}`")
            if not isinstance(r[key], want):
                raise bad(f"field `{where}.{key}` is {kind(r[key])}, not {kind(want())}")
        for j, c in enumerate(r["coflows"]):
            if not isinstance(c, dict):
                raise bad(f"`{where}.coflows[{j}]` is {kind(c)}, not an object")
