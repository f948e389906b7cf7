//! The per-message grant window (Eq. 3.8 and its variants) and its inverse: the largest
//! receiver backlog `rx_left` at which a message may take one more grant. The inverse lets a
//! receiver park a full message until its window grows, instead of re-checking every message
//! on every grant (windows only grow while `rx_left` shrinks, §3.4 point 2).

use super::config::{Rounding, Window};

/// Window of a message with `msg_rem` packets left when the receiver has `rx_left` left.
pub fn window(w: Window, rounding: Rounding, max_out: u64, msg_rem: u64, rx_left: u64) -> u64 {
    match w {
        Window::Unlimited => u64::MAX,
        Window::Const(c) => c as u64,
        Window::ProRata => {
            let num = max_out * msg_rem;
            let rx = rx_left.max(1);
            match rounding {
                Rounding::FloorMax1 => (num / rx).max(1),
                Rounding::Ceil => num.div_ceil(rx),
            }
        }
    }
}

/// GlobalSched's window (Eq. 3.14 with exponent `n`): `max_out x msg_rem / g x (rx_left / g)^n`,
/// rounded like Eq. 3.8, where `g` is the largest remaining backlog of any receiver (at least
/// `rx_left`: a receiver knows its own). With `g == rx_left` it is Eq. 3.8 (spec §12 item 11).
pub fn global_window(
    rounding: Rounding,
    max_out: u64,
    msg_rem: u64,
    rx_left: u64,
    g: u64,
    n: u32,
) -> u64 {
    let g = g.max(rx_left).max(1) as u128;
    let num = (max_out as u128 * msg_rem as u128).saturating_mul((rx_left as u128).pow(n));
    let den = g.pow(n + 1);
    let w = match rounding {
        Rounding::FloorMax1 => (num / den).max(1),
        Rounding::Ceil => num.div_ceil(den),
    };
    w.min(u64::MAX as u128) as u64
}

/// GlobalSched's eligibility threshold: the largest global maximum `g` at which a message with
/// `out` outstanding grants may take one more at backlog `rx_left` (`global_window > out`).
/// As `rx_left` only falls, the true threshold only falls too, so a stored one is an upper
/// bound: waking on it is safe, and a woken message is re-checked.
pub fn global_threshold(
    rounding: Rounding,
    max_out: u64,
    msg_rem: u64,
    rx_left: u64,
    out: u64,
    n: u32,
) -> u64 {
    if out == 0 {
        return u64::MAX; // every unfinished message gets at least 1
    }
    let num = (max_out as u128 * msg_rem as u128).saturating_mul((rx_left as u128).pow(n));
    // The largest g with g^(n+1) <= cap.
    let cap = match rounding {
        Rounding::FloorMax1 => num / (out as u128 + 1),
        Rounding::Ceil => num.saturating_sub(1) / out as u128,
    };
    let k = n + 1;
    // A floating-point estimate (exact roots are far cheaper than powf), then exact fixes.
    let c = cap as f64;
    let mut g = match k {
        2 => c.sqrt(),
        3 => c.cbrt(),
        4 => c.sqrt().sqrt(),
        _ => c.powf(1.0 / k as f64),
    } as u128;
    while g > 0 && g.checked_pow(k).is_none_or(|p| p > cap) {
        g -= 1;
    }
    while (g + 1).checked_pow(k).is_some_and(|p| p <= cap) {
        g += 1;
    }
    g.min(u64::MAX as u128) as u64
}

/// The eligibility threshold of a message holding `out` outstanding grants: it may take one
/// more grant iff the receiver's `rx_left <= threshold`. `None`: not until its own state changes.
pub fn threshold(
    w: Window,
    rounding: Rounding,
    max_out: u64,
    msg_rem: u64,
    out: u64,
) -> Option<u64> {
    match w {
        Window::Unlimited => Some(u64::MAX),
        Window::Const(c) => (out < c as u64).then_some(u64::MAX),
        Window::ProRata => {
            if out == 0 {
                return Some(u64::MAX); // both roundings give every unfinished message >= 1
            }
            let num = max_out * msg_rem;
            match rounding {
                // floor(num / rx) >= out + 1  <=>  rx <= num / (out + 1)
                Rounding::FloorMax1 => Some(num / (out + 1)),
                // ceil(num / rx) > out  <=>  rx * out < num  <=>  rx <= (num - 1) / out
                Rounding::Ceil => Some(num.saturating_sub(1) / out),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PR: Window = Window::ProRata;

    #[test]
    fn spec_window_checks_with_80_grants() {
        // Spec §12 item 10.
        assert_eq!(window(PR, Rounding::FloorMax1, 80, 500, 1000), 40);
        assert_eq!(window(PR, Rounding::FloorMax1, 80, 3, 10_000), 1);
        assert_eq!(window(PR, Rounding::Ceil, 80, 3, 10_000), 1);
        // A stalled message: its msg_rem stays, the receiver's total shrinks, its window grows.
        let w: Vec<u64> = [4000, 2000, 1000, 200]
            .iter()
            .map(|&rx| window(PR, Rounding::FloorMax1, 80, 100, rx))
            .collect();
        assert_eq!(w, vec![2, 4, 8, 40]);
    }

    #[test]
    fn eq_3_14_reduces_to_eq_3_8_for_the_slowest_receiver_and_scales_back_others() {
        // Spec §12 item 11: with g == rx_left, any exponent gives Eq. 3.8.
        for n in 1..=3 {
            for (rem, rx) in [(500, 1000), (3, 10_000), (100, 200), (7, 7)] {
                assert_eq!(
                    global_window(Rounding::FloorMax1, 80, rem, rx, rx, n),
                    window(PR, Rounding::FloorMax1, 80, rem, rx)
                );
            }
        }
        // A receiver with half the slowest one's backlog: Eq. 3.13 halves the window, the
        // quadratic scale back (n = 2) quarters Eq. 3.13's: 80 x 250/2000 x (1/2)^2 = 2.5.
        assert_eq!(window(PR, Rounding::FloorMax1, 80, 250, 1000), 20);
        assert_eq!(
            global_window(Rounding::FloorMax1, 80, 250, 1000, 2000, 1),
            5
        );
        assert_eq!(
            global_window(Rounding::FloorMax1, 80, 250, 1000, 2000, 2),
            2
        );
        assert_eq!(global_window(Rounding::Ceil, 80, 250, 1000, 2000, 2), 3);
        // A stale maximum below the receiver's own backlog counts as its own.
        assert_eq!(global_window(Rounding::FloorMax1, 80, 500, 1000, 10, 2), 40);
    }

    proptest! {
        #[test]
        fn global_threshold_inverts_global_window(
            max_out in 1u64..200, msg_rem in 1u64..500, extra in 0u64..5000, out in 0u64..100,
            g_extra in 0u64..20_000, ceil in any::<bool>(), n in 1u32..4,
        ) {
            let rounding = if ceil { Rounding::Ceil } else { Rounding::FloorMax1 };
            let rx = msg_rem + extra;
            let g = rx + g_extra;
            let eligible = out < global_window(rounding, max_out, msg_rem, rx, g, n);
            let by_threshold = g <= global_threshold(rounding, max_out, msg_rem, rx, out, n);
            prop_assert_eq!(eligible, by_threshold);
        }

        #[test]
        fn threshold_inverts_window(
            max_out in 1u64..200, msg_rem in 1u64..500, extra in 0u64..5000, out in 0u64..100,
            ceil in any::<bool>(), c in 1u32..20, kind in 0u8..3,
        ) {
            let rounding = if ceil { Rounding::Ceil } else { Rounding::FloorMax1 };
            let w = match kind { 0 => PR, 1 => Window::Const(c), _ => Window::Unlimited };
            let rx = msg_rem + extra;
            let eligible = out < window(w, rounding, max_out, msg_rem, rx);
            let by_threshold = threshold(w, rounding, max_out, msg_rem, out).is_some_and(|t| rx <= t);
            prop_assert_eq!(eligible, by_threshold);
        }
    }
}
