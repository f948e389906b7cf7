//! valsort's report, line for line: the first unordered record (when there is one), then the
//! record count and checksum, then either the duplicate count and SUCCESS or the ERROR line with
//! the number of unordered records. valsort prints these on standard error.

use crate::{checksum::checksum_hex, Summary};

impl Summary {
    /// valsort 1.5's report of this summary, each line ending in `\n`.
    pub fn valsort_report(&self) -> String {
        let mut out = String::new();
        if let Some(first) = self.first_unordered {
            out += &format!("First unordered record is record {first}\n");
        }
        out += &format!("Records: {}\n", self.records);
        out += &format!("Checksum: {}\n", checksum_hex(self.checksum));
        if self.unordered != 0 {
            out += &format!("ERROR - there are {} unordered records\n", self.unordered);
        } else {
            out += &format!("Duplicate keys: {}\n", self.duplicates);
            out += "SUCCESS - all records are in order\n";
        }
        out
    }
}
