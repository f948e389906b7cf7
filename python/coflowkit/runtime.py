"""A client of the real system: a `coflowkit coordinator` and one `coflowkit daemon` per host.

    from coflowkit.runtime import Client
    c = Client("10.0.0.1:7000", "10.0.0.2:7001", token)   # coordinator, this host's daemon
    coflow = c.register(name="model")
    c.broadcast(coflow, "weights", data)        # on the sender's host (Cornet, many receivers)
    data = Client(...).get(coflow, "weights")   # on every receiver's host
    c.unregister(coflow)                        # when all are done

The calls are the Rust client's (`coflowkit_runtime::Client`), blocking, the GIL released;
errors raise `coflowkit.CoflowkitError` with the runtime's message.
"""

from ._native import Client

__all__ = ["Client"]
