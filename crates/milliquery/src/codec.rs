//! The bytes of shuffle and gather messages: little-endian integers and length-prefixed
//! UTF-8 strings, nothing else. A reader returns `None` on a short or invalid message; the
//! caller names the sender.

#[derive(Default, Clone)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    pub fn str(&mut self, s: &str) {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
    }
}

pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Reader<'a> {
        Reader { buf }
    }
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.buf.len() < n {
            return None;
        }
        let (a, b) = self.buf.split_at(n);
        self.buf = b;
        Some(a)
    }
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    pub fn f64(&mut self) -> Option<f64> {
        self.u64().map(f64::from_bits)
    }
    pub fn str(&mut self) -> Option<&'a str> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_short_input() {
        let mut w = Writer::default();
        w.u32(7);
        w.str("héllo");
        w.u64(u64::MAX);
        w.f64(1.5);
        let mut r = Reader::new(&w.0);
        assert_eq!(r.u32(), Some(7));
        assert_eq!(r.str(), Some("héllo"));
        assert_eq!(r.u64(), Some(u64::MAX));
        assert_eq!(r.f64(), Some(1.5));
        assert!(r.is_empty());
        let cut = &w.0[..w.0.len() - 1];
        let mut r = Reader::new(cut);
        r.u32();
        r.str();
        r.u64();
        assert_eq!(r.f64(), None);
    }
}
