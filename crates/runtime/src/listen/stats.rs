//! What a listener counts: accept errors, connections refused by the limits, connections
//! closed by a timeout, and those open now.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct ListenStats {
    pub accept_errors: AtomicU64,
    pub refused_server_limit: AtomicU64,
    pub refused_peer_limit: AtomicU64,
    pub refused_descriptors: AtomicU64,
    pub timed_out: AtomicU64,
    pub open: AtomicU64,
}

impl ListenStats {
    pub(crate) fn bump(c: &AtomicU64) {
        c.fetch_add(1, Ordering::Relaxed);
    }
}

/// Prometheus lines for these listeners, one metric family at a time, each sample labelled
/// `listener="NAME"`.
pub fn render(listeners: &[(&str, &ListenStats)], out: &mut String) {
    type Pick = fn(&ListenStats) -> &AtomicU64;
    let families: [(&str, &str, &str, &str, Pick); 6] = [
        (
            "accept_errors_total",
            "counter",
            "Failed accepts (such as EMFILE), each followed by a back-off",
            "",
            |s| &s.accept_errors,
        ),
        (
            "connections_refused_total",
            "counter",
            "Connections closed at accept by a connection limit",
            ",reason=\"server_limit\"",
            |s| &s.refused_server_limit,
        ),
        (
            "connections_refused_total",
            "counter",
            "",
            ",reason=\"peer_limit\"",
            |s| &s.refused_peer_limit,
        ),
        (
            "connections_refused_total",
            "counter",
            "",
            ",reason=\"descriptors\"",
            |s| &s.refused_descriptors,
        ),
        (
            "connections_timed_out_total",
            "counter",
            "Connections closed by a handshake or idle timeout",
            "",
            |s| &s.timed_out,
        ),
        (
            "connections_open",
            "gauge",
            "Connections open now",
            "",
            |s| &s.open,
        ),
    ];
    for (name, kind, help, extra, pick) in families {
        if !help.is_empty() {
            let _ = writeln!(
                out,
                "# HELP coflowkit_{name} {help}\n# TYPE coflowkit_{name} {kind}"
            );
        }
        for (l, s) in listeners {
            let v = pick(s).load(Ordering::Relaxed);
            let _ = writeln!(out, "coflowkit_{name}{{listener=\"{l}\"{extra}}} {v}");
        }
    }
}
