//! Which of gensort's four record flavours to generate.

/// The record flavours of gensort 1.5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordKind {
    /// gensort's default: every byte pseudo-random (key: the top 10 bytes of one number).
    Binary,
    /// `gensort -a`: printable keys, the record number in hex, hex filler, CR LF.
    Ascii,
    /// `gensort -s`: binary records whose keys start with a prefix shared by many records.
    Skewed,
    /// `gensort -a -s`: ASCII records with skewed keys.
    AsciiSkewed,
}

impl RecordKind {
    /// The kind gensort picks for its `-a` and `-s` flags.
    pub const fn from_flags(ascii: bool, skewed: bool) -> RecordKind {
        match (ascii, skewed) {
            (false, false) => RecordKind::Binary,
            (true, false) => RecordKind::Ascii,
            (false, true) => RecordKind::Skewed,
            (true, true) => RecordKind::AsciiSkewed,
        }
    }

    pub const fn is_ascii(self) -> bool {
        matches!(self, RecordKind::Ascii | RecordKind::AsciiSkewed)
    }

    pub const fn is_skewed(self) -> bool {
        matches!(self, RecordKind::Skewed | RecordKind::AsciiSkewed)
    }

    /// gensort's flags for this kind, e.g. `["-a", "-s"]` (for messages and scripts).
    pub fn gensort_flags(self) -> &'static [&'static str] {
        match self {
            RecordKind::Binary => &[],
            RecordKind::Ascii => &["-a"],
            RecordKind::Skewed => &["-s"],
            RecordKind::AsciiSkewed => &["-a", "-s"],
        }
    }
}
