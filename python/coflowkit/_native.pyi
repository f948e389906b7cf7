"""Type stubs of the Rust extension (coflowkit._native)."""

from os import PathLike
from typing import Any, Optional, Union

import pandas as pd

__version__: str

class CoflowkitError(ValueError):
    """Bad input or a failed run; the message is the coflowkit command's (file:line: field ...)."""

class Trace:
    """A coflow trace: immutable, shared without copies, pickled as its text."""

    @property
    def name(self) -> str: ...
    @property
    def ports(self) -> int: ...
    @property
    def num_flows(self) -> int: ...
    @property
    def total_bytes(self) -> float: ...
    def __len__(self) -> int: ...
    def flows(self) -> pd.DataFrame:
        """One row per flow: coflow, src, dst, bytes, arrival_s."""
    def coflows(self) -> pd.DataFrame:
        """One row per coflow: id, arrival_s, flows, bytes, length_bytes, deadline_s, weight."""
    def head(self, n: int) -> Trace:
        """The first n coflows by arrival."""
    def to_text(self, format: str = "benchmark") -> str: ...
    def write(self, path: Union[str, bytes, PathLike[str], PathLike[bytes]], format: str = "benchmark") -> None: ...

def read_trace(path: Union[str, bytes, PathLike[str], PathLike[bytes]], max_flows: int = 33554432) -> Trace: ...
def parse_trace(text: str, name: str = "<string>", max_flows: int = 33554432) -> Trace: ...
def bundled_trace(name: str = "fb") -> Trace: ...
def gen_fb(
    coflows: int = 5260,
    load: float = 1.0,
    ports: Optional[int] = None,
    seed: int = 1,
    base: Optional[Trace] = None,
) -> Trace: ...
def gen_custom(
    coflows: int = 500,
    ports: int = 150,
    classes: Optional[list[str]] = None,
    mean_interarrival_ms: float = 1000.0,
    seed: int = 1,
) -> Trace: ...
def sim(trace: Trace, **flags: Any) -> str:
    """`coflowkit sim --json` on a trace: the JSON text."""
def sim_flags() -> list[tuple[str, str]]: ...
def shuffle_sim(**flags: Any) -> str:
    """`coflowkit shuffle sim --json`: the JSON text."""
def shuffle_flags() -> list[tuple[str, str]]: ...

class Client:
    """A client of the real system (coordinator address, this host's daemon, token)."""
    def __init__(self, coordinator: str, daemon: str, token: str) -> None: ...
    def register(self, name: str = "", priority: int = 0, weight: float = 0.0) -> int: ...
    def put(self, coflow: int, data_id: str, data: bytes) -> int: ...
    def broadcast(
        self,
        coflow: int,
        data_id: str,
        data: bytes,
        block_bytes: int = 0,
        priority: int = 0,
        mechanism: str = "",
    ) -> int: ...
    def get(self, coflow: int, data_id: str) -> bytes: ...
    def unregister(self, coflow: int) -> None: ...
