//! What both text formats share: a `<ports> <coflows>` header, then one coflow per line, read
//! through a token cursor that knows where it is so that every error can name file, line and
//! field.

use std::collections::HashMap;

use super::error::{Field, TraceError, TraceErrorKind};
use crate::coflow::{Coflow, CoflowId, Trace};

/// Largest arrival time read (ms): every integer up to it is exact in an f64.
pub const MAX_EXACT_MS: f64 = 9_007_199_254_740_992.0;
/// Largest size read (MB): 2^33 MB is 2^53 bytes, the most an f64 counts exactly (8 PiB).
pub const MAX_MB: f64 = 8_589_934_592.0;

/// The tokens of one line and a read position. Field indices are 1-based, as a person counts.
pub(crate) struct Line<'a> {
    file: &'a str,
    pub number: usize,
    tokens: Vec<&'a str>,
    pos: usize,
}

impl<'a> Line<'a> {
    pub fn new(file: &'a str, number: usize, text: &'a str) -> Self {
        Line {
            file,
            number,
            tokens: text.split_whitespace().collect(),
            pos: 0,
        }
    }

    pub fn err(&self, kind: TraceErrorKind) -> TraceError {
        TraceError::new(self.file, self.number, kind)
    }

    /// The field the next token would be.
    pub fn next_field(&self, name: &str) -> Field {
        Field::new(self.pos + 1, name)
    }

    /// Fails with `Truncated` unless `needed` more tokens remain. Called right after reading a
    /// count, so that a short line blames the count that promised more.
    pub fn expect_remaining(
        &self,
        needed: usize,
        name: &str,
        announced_by: &Field,
        count: usize,
        what: &str,
    ) -> Result<(), TraceError> {
        let left = self.tokens.len() - self.pos;
        if left >= needed {
            return Ok(());
        }
        Err(self.err(TraceErrorKind::Truncated {
            field: Field::new(self.tokens.len() + 1, name),
            why: format!("; {announced_by} announced {count} {what}"),
        }))
    }

    /// The next token, not consumed.
    pub fn peek(&self) -> Option<&'a str> {
        self.tokens.get(self.pos).copied()
    }

    pub fn token(&mut self, name: &str) -> Result<(Field, &'a str), TraceError> {
        let field = self.next_field(name);
        match self.tokens.get(self.pos) {
            Some(t) => {
                self.pos += 1;
                Ok((field, t))
            }
            None => Err(self.err(TraceErrorKind::Truncated {
                field,
                why: String::new(),
            })),
        }
    }

    pub fn bad_number(&self, field: Field, text: &str, expected: &'static str) -> TraceError {
        self.err(TraceErrorKind::BadNumber {
            field,
            text: crate::echo::echo(text),
            expected,
        })
    }

    pub fn id(&mut self, name: &str) -> Result<(Field, CoflowId), TraceError> {
        let (field, text) = self.token(name)?;
        match text.parse() {
            Ok(v) => Ok((field, v)),
            Err(_) => Err(self.bad_number(field, text, "a non-negative integer id")),
        }
    }

    /// A count of mappers, reducers or flows: at least 1, since an empty coflow means nothing.
    pub fn count(&mut self, name: &str) -> Result<(Field, usize), TraceError> {
        let (field, text) = self.token(name)?;
        match text.parse::<usize>() {
            Ok(v) if v >= 1 => Ok((field, v)),
            _ => Err(self.bad_number(field, text, "a positive integer count")),
        }
    }

    pub fn ms(&mut self, name: &str) -> Result<(Field, f64), TraceError> {
        let (field, text) = self.token(name)?;
        match text.parse::<f64>() {
            // Above 2^53 ms (285,000 years) milliseconds are no longer exact.
            // The text is compared too: 2^53 + 1 and 2^53 + 0.5 parse to 2^53 (pass 33, B11).
            Ok(v)
                if v.is_finite() && (0.0..=MAX_EXACT_MS).contains(&v) && !text_above_2_53(text) =>
            {
                Ok((field, v))
            }
            _ => Err(self.bad_number(
                field,
                text,
                "a non-negative number of milliseconds up to 2^53",
            )),
        }
    }

    pub fn port(&mut self, name: &str, ports: u32) -> Result<(Field, u32), TraceError> {
        let (field, text) = self.token(name)?;
        self.port_of(field, text, ports)
    }

    pub fn port_of(
        &self,
        field: Field,
        text: &str,
        ports: u32,
    ) -> Result<(Field, u32), TraceError> {
        let port: u64 = text
            .parse()
            .map_err(|_| self.bad_number(field.clone(), text, "a port number"))?;
        if port >= u64::from(ports) {
            return Err(self.err(TraceErrorKind::PortOutOfRange { field, port, ports }));
        }
        Ok((field, port as u32))
    }

    /// A size in MB, 0 or from one byte (2^-20 MB) to [`MAX_MB`]. Zero is accepted in a flow (an empty flow is odd but
    /// harmless; a coflow of no bytes is refused by [`read_lines`]); `-0` reads as 0.
    /// Negative, NaN, infinite and larger sizes are refused: finite in MB is not enough (1e308
    /// MB is infinite in bytes), and past 2^53 bytes sizes are no longer exact.
    pub fn mb_of(&self, field: Field, text: &str) -> Result<f64, TraceError> {
        let mb: f64 = text
            .parse()
            .map_err(|_| self.bad_number(field.clone(), text, "a size in MB"))?;
        if !(0.0..=MAX_MB).contains(&mb) {
            return Err(self.err(TraceErrorKind::BadSize {
                field,
                text: crate::echo::echo(text),
            }));
        }
        if mb > 0.0 && mb * crate::units::MB < 1.0 {
            return Err(self.err(TraceErrorKind::SubByteSize {
                field,
                text: crate::echo::echo(text),
            }));
        }
        // -0 + 0 is +0: no negative zero reaches a division.
        Ok(mb + 0.0)
    }

    pub fn finish(&self) -> Result<(), TraceError> {
        match self.tokens.get(self.pos) {
            None => Ok(()),
            Some(t) => Err(self.err(TraceErrorKind::TrailingTokens {
                field: self.next_field("end of line"),
                token: crate::echo::echo(t),
            })),
        }
    }
}

/// How many flows the coflows read so far hold, and the most the trace may hold.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FlowBudget {
    pub used: u64,
    pub max: u64,
}

impl FlowBudget {
    /// Fails, blaming `field`, unless `flows` more (`None`: past u64) fit; `how` says where
    /// the count comes from (`30000 mappers x 30000 reducers`). Called before any flow is made.
    pub fn check(
        &self,
        line: &Line,
        field: &Field,
        flows: Option<u64>,
        how: impl FnOnce() -> String,
    ) -> Result<(), TraceError> {
        match flows.and_then(|f| f.checked_add(self.used)) {
            Some(total) if total <= self.max => Ok(()),
            _ => Err(line.err(TraceErrorKind::TooManyFlows {
                field: field.clone(),
                how: how(),
                flows,
                before: self.used,
                max: self.max,
            })),
        }
    }
}

/// Non-blank lines with their 1-based numbers. Blank lines carry no data and are skipped.
pub(crate) fn data_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty())
}

/// Reads the header, then every coflow line with `parse_line(line, ports)`, checking the coflow
/// count and unique ids. Coflows are then sorted by arrival, stably: the formats promise
/// ascending arrivals, but a file that breaks the promise is still unambiguous, so it is
/// reordered rather than refused (equal arrivals keep file order).
pub(crate) fn read_lines(
    text: &str,
    file: &str,
    max_flows: u64,
    mut parse_line: impl FnMut(&mut Line, u32, FlowBudget) -> Result<Coflow, TraceError>,
) -> Result<Trace, TraceError> {
    let mut budget = FlowBudget {
        used: 0,
        max: max_flows,
    };
    let mut lines = data_lines(text);
    let (header_no, header) = lines
        .next()
        .ok_or_else(|| TraceError::new(file, 0, TraceErrorKind::Empty))?;
    let (ports, expected) = parse_header(file, header_no, header)?;
    let mut coflows = Vec::with_capacity(expected.min(1 << 16));
    let mut first_line: HashMap<CoflowId, usize> = HashMap::new();
    for (number, text) in lines {
        let mut line = Line::new(file, number, text);
        if coflows.len() == expected {
            return Err(line.err(TraceErrorKind::TooManyCoflows { header: expected }));
        }
        let coflow = parse_line(&mut line, ports, budget)?;
        budget.used += coflow.flows.len() as u64;
        if coflow.bytes() <= 0.0 {
            // Its CCT would be 0, and every speed-up or slowdown with it 0/0.
            return Err(line.err(TraceErrorKind::EmptyCoflow {
                field: Field::new(1, "coflow id"),
                id: coflow.id,
            }));
        }
        if let Some(&first) = first_line.get(&coflow.id) {
            return Err(line.err(TraceErrorKind::DuplicateId {
                field: Field::new(1, "coflow id"),
                id: coflow.id,
                first_line: first,
            }));
        }
        first_line.insert(coflow.id, number);
        coflows.push(coflow);
    }
    if coflows.len() < expected {
        return Err(TraceError::new(
            file,
            header_no,
            TraceErrorKind::TooFewCoflows {
                header: expected,
                found: coflows.len(),
            },
        ));
    }
    coflows.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
    Ok(Trace { ports, coflows })
}

pub(crate) fn parse_header(
    file: &str,
    number: usize,
    text: &str,
) -> Result<(u32, usize), TraceError> {
    let bad = |why: String| TraceError::new(file, number, TraceErrorKind::BadHeader(why));
    let tokens: Vec<&str> = text.split_whitespace().collect();
    if tokens.len() != 2 {
        return Err(bad(format!(
            "`{}` has {} fields",
            crate::echo::echo(text.trim()),
            tokens.len()
        )));
    }
    let ports: u32 = match tokens[0].parse() {
        Ok(p) if p >= 1 => p,
        _ => {
            return Err(bad(format!(
                "field 1 (ports): `{}` is not a positive integer",
                crate::echo::echo(tokens[0])
            )))
        }
    };
    let coflows: usize = tokens[1].parse().map_err(|_| {
        bad(format!(
            "field 2 (coflow count): `{}` is not a non-negative integer",
            crate::echo::echo(tokens[1])
        ))
    })?;
    Ok((ports, coflows))
}

/// Whether the decimal `text` (digits, an optional point and exponent) is exactly above 2^53,
/// which its `f64` may not show: `9007199254740993` and `9007199254740992.5` round to 2^53.
/// Text that is not such a decimal is left to the `f64` parse (false).
pub fn text_above_2_53(text: &str) -> bool {
    const TWO_53: &[u8] = b"9007199254740992";
    let t = text.strip_prefix('+').unwrap_or(text);
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => match t[i + 1..].parse::<i64>() {
            Ok(e) => (&t[..i], e),
            Err(_) => return false,
        },
        None => (t, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return false;
    }
    let digits: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
    let Some(first) = digits.iter().position(|&b| b != b'0') else {
        return false; // zero
    };
    // value = 0.digits[first..] x 10^point
    let point = (int.len() as i64 - first as i64).saturating_add(exp);
    let digits = &digits[first..];
    let len = TWO_53.len() as i64;
    if point != len {
        return point > len;
    }
    for (i, &want) in TWO_53.iter().enumerate() {
        let got = digits.get(i).copied().unwrap_or(b'0');
        if got != want {
            return got > want;
        }
    }
    digits[TWO_53.len().min(digits.len())..]
        .iter()
        .any(|&b| b != b'0')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Adversarial pass 32, A5: a 10 MB header line was quoted whole in the error.
    #[test]
    fn a_long_header_is_quoted_bounded() {
        let long = "9".repeat(1 << 20);
        for text in [
            long.clone(),
            format!("{long} 3"),
            format!("4 {long}"),
            format!("4 3 {long}"),
        ] {
            let e = parse_header("f", 1, &text).unwrap_err().to_string();
            assert!(e.len() < 400, "{} bytes: {}", e.len(), &e[..200]);
            assert!(e.contains("bytes)"), "{e}");
        }
        // Short input is still quoted whole.
        let e = parse_header("f", 1, "4 x").unwrap_err().to_string();
        assert!(e.contains("`x`"), "{e}");
    }

    #[test]
    fn fields_are_one_based_and_named() {
        let mut l = Line::new("f", 3, "7 x");
        assert_eq!(l.id("coflow id").unwrap().1, 7);
        let e = l.id("arrival ms").unwrap_err().to_string();
        assert!(e.starts_with("f:3: field 2 (arrival ms): `x`"), "{e}");
    }

    #[test]
    fn sizes_infinite_in_bytes_and_inexact_times_are_refused() {
        let l = Line::new("f", 2, "");
        let e = l.mb_of(Field::new(5, "reducer MB"), "1e308").unwrap_err();
        assert!(
            e.to_string().starts_with("f:2: field 5 (reducer MB)"),
            "{e}"
        );
        assert!(l.mb_of(Field::new(5, "reducer MB"), "8589934592").is_ok());
        for huge in ["1e300", "8589934593", "99999999999999999999999"] {
            let e = l.mb_of(Field::new(5, "reducer MB"), huge).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with(&format!("f:2: field 5 (reducer MB): size `{huge}` MB")),
                "{e}"
            );
        }
        // The message quotes the text, not its 309 digits.
        assert!(e.to_string().len() < 200, "{e}");
        for above in [
            "9007199254740993",
            "9007199254740992.5",
            "9007199254740992.0000001",
            "9.007199254740993e15",
            "90071992547409921e-1",
            "+9007199254740993",
        ] {
            assert!(text_above_2_53(above), "{above}");
            let mut l = Line::new("f", 4, above);
            let e = l.ms("arrival ms").unwrap_err().to_string();
            assert!(
                e.starts_with(&format!("f:4: field 1 (arrival ms): `{above}`")),
                "{e}"
            );
        }
        for within in [
            "9007199254740992",
            "9007199254740992.000",
            "9.007199254740992e15",
            "0009007199254740991.99",
            "0",
            "-0",
            "1.5",
            "1e3",
        ] {
            assert!(!text_above_2_53(within), "{within}");
            assert!(
                Line::new("f", 4, within).ms("arrival ms").is_ok(),
                "{within}"
            );
        }
        let mut l = Line::new("f", 3, "1e17 9007199254740992");
        let e = l.ms("arrival ms").unwrap_err().to_string();
        assert!(e.starts_with("f:3: field 1 (arrival ms): `1e17`"), "{e}");
        assert!(l.ms("arrival ms").is_ok());
    }

    /// Adversarial pass 32, A11: 1e-300 MB was read (a count of no byte) while 0 was refused.
    #[test]
    fn sizes_above_zero_and_below_one_byte_are_refused_by_field() {
        let l = Line::new("f", 4, "");
        for tiny in ["1e-300", "5e-324", "0.0000009"] {
            let e = l
                .mb_of(Field::new(7, "reducer MB"), tiny)
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with(&format!(
                    "f:4: field 7 (reducer MB): size `{tiny}` MB is less than one byte"
                )),
                "{e}"
            );
        }
        // One byte and 0 are read.
        let one = format!("{}", 1.0 / crate::units::MB);
        assert_eq!(
            l.mb_of(Field::new(7, "reducer MB"), &one).unwrap(),
            1.0 / crate::units::MB
        );
        assert_eq!(l.mb_of(Field::new(7, "reducer MB"), "0").unwrap(), 0.0);
        let e = crate::trace::parse_str("2 1\n7 0 1 0 1 1:1e-300\n", "t.txt")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("t.txt:2: field 6 (reducer MB)") && e.contains("less than one byte"),
            "{e}"
        );
    }

    #[test]
    fn negative_zero_reads_as_zero_and_a_coflow_of_no_bytes_is_refused() {
        let l = Line::new("f", 2, "");
        let z = l.mb_of(Field::new(5, "reducer MB"), "-0").unwrap();
        assert!(z == 0.0 && z.is_sign_positive());
        assert!(l.mb_of(Field::new(5, "reducer MB"), "-0.0001").is_err());
        for text in [
            "2 1\n7 0 1 0 1 1:0\n",
            "2 1\n7 0 1 0 1 1:-0\n",
            "2 1\n7 0 1 1 1 0 1 -0\n",
        ] {
            let e = crate::trace::parse_str(text, "t.txt")
                .unwrap_err()
                .to_string();
            assert!(
                e.starts_with("t.txt:2: field 1 (coflow id): coflow 7 has no bytes"),
                "{text:?}: {e}"
            );
        }
        // A zero flow beside others is still fine.
        let t = crate::trace::parse_str("3 1\n7 0 1 0 2 1:0 2:1\n", "t.txt").unwrap();
        assert_eq!(t.coflows[0].flows.len(), 2);
    }

    #[test]
    fn blank_lines_keep_their_numbers() {
        let v: Vec<_> = data_lines("a\n\n  \nb\r\n").collect();
        assert_eq!(v, vec![(1, "a"), (4, "b")]);
    }
}
