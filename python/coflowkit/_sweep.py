"""ck.sweep: many runs, each a configuration, on local processes or Ray tasks; one DataFrame
back in which every row carries its configuration."""

from __future__ import annotations

import itertools
import os
from typing import Any, Callable, Iterable, Mapping, Sequence, Union

import pandas as pd

Config = Mapping[str, Any]
RunFn = Union[str, Callable[..., Any]]


def grid(**axes: Any) -> list[dict[str, Any]]:
    """Every combination of the axes: `grid(scheduler=["varys", "aalo"], queues=[5, 10])`
    gives four configurations. A value that is not a list or tuple is one fixed value."""
    keys = list(axes)
    values = [v if isinstance(v, (list, tuple)) else [v] for v in axes.values()]
    return [dict(zip(keys, combo)) for combo in itertools.product(*values)]


def _sim_rows(config: Config) -> list[dict[str, Any]]:
    from ._sim import sim

    kw = dict(config)
    kw.setdefault("jobs", 1)  # the sweep is the parallelism; one core per run
    res = sim(kw.pop("trace", None), **kw)
    return res.summary.to_dict("records")


def _shuffle_rows(config: Config) -> list[dict[str, Any]]:
    from .shuffle import sim

    report = sim(**config)
    # Scalars and small records; the utilization series (lists) stay out of the table.
    flat = pd.json_normalize(report).to_dict("records")[0]
    return [{k: v for k, v in flat.items() if not isinstance(v, (list, dict))}]


def _rows(fn: RunFn, config: Config) -> list[dict[str, Any]]:
    if fn == "sim":
        return _sim_rows(config)
    if fn == "shuffle":
        return _shuffle_rows(config)
    if callable(fn):
        out = fn(**config)
        if isinstance(out, pd.DataFrame):
            return out.to_dict("records")
        if isinstance(out, Mapping):
            return [dict(out)]
        return [dict(r) for r in out]
    raise ValueError(f"fn: expected 'sim', 'shuffle' or a function, got {fn!r}")


def _run_one(fn: RunFn, index: int, config: Config, errors: str) -> list[dict[str, Any]]:
    """One configuration's rows, each with the configuration in front (a worker's task)."""
    cfg = {k: _config_value(v) for k, v in config.items()}
    try:
        rows = _rows(fn, config)
    except Exception as e:  # noqa: BLE001 - recorded or re-raised as asked
        if errors == "raise":
            raise
        rows = [{"error": f"{type(e).__name__}: {e}"}]
    out = []
    for r in rows:
        row: dict[str, Any] = {"run": index}
        for k, v in cfg.items():
            row[k if k not in r else f"config.{k}"] = v
        row.update(r)
        out.append(row)
    return out


def _config_value(v: Any) -> Any:
    """A configuration value as a table cell: a Trace by its name, lists as text."""
    name = getattr(v, "name", None)
    if isinstance(name, str) and hasattr(v, "num_flows"):
        return name
    if isinstance(v, (list, tuple)):
        return ",".join(map(str, v))
    return v


def sweep(
    configs: Iterable[Config],
    fn: RunFn = "sim",
    backend: str = "local",
    workers: int | None = None,
    errors: str = "raise",
    ray_address: str | None = None,
) -> pd.DataFrame:
    """Run every configuration and return all rows as one DataFrame.

    `fn="sim"`: each configuration is `ck.sim`'s keywords plus an optional `trace` (a path,
    "fb", or a Trace); one row per scheduler (the summary columns). `fn="shuffle"`: each is
    `ck.shuffle.sim`'s keywords; one row per run. Or a function taking the configuration as
    keywords and returning a dict, a list of dicts or a DataFrame (it must be importable by
    the workers: defined in a module, not in `__main__` of a notebook, for `local`).

    `backend="local"`: `workers` processes on this machine (default: the cores).
    `backend="ray"`: one Ray task per configuration, on the cluster `ray.init` joined (or
    `ray_address`; a local Ray is started when none is). `errors="record"` puts a failed run's
    message in an `error` column instead of raising.

    Every row starts with `run` (the configuration's index) and the configuration's keys
    (a key that is also a result column is renamed `config.KEY`).
    """
    configs = [dict(c) for c in configs]
    if errors not in ("raise", "record"):
        raise ValueError("errors: 'raise' or 'record'")
    if not configs:
        return pd.DataFrame()
    if backend == "local":
        results = _local(fn, configs, workers, errors)
    elif backend == "ray":
        results = _ray(fn, configs, errors, ray_address)
    else:
        raise ValueError(f"backend: 'local' or 'ray', got {backend!r}")
    return pd.DataFrame([row for rows in results for row in rows])


def _local(fn: RunFn, configs: Sequence[Config], workers: int | None, errors: str) -> list[Any]:
    import concurrent.futures as cf
    import multiprocessing as mp

    n = workers or os.cpu_count() or 1
    # spawn: the workers start clean (no copy of a parent's threads or Ray state).
    with cf.ProcessPoolExecutor(max_workers=n, mp_context=mp.get_context("spawn")) as pool:
        futs = [pool.submit(_run_one, fn, i, c, errors) for i, c in enumerate(configs)]
        return [f.result() for f in futs]


def _ray(fn: RunFn, configs: Sequence[Config], errors: str, address: str | None) -> list[Any]:
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    task = ray.remote(num_cpus=1)(_run_one)
    return ray.get([task.remote(fn, i, c, errors) for i, c in enumerate(configs)])
