//! Sets of ports as bit rows: which peers a port still has waiting flows towards, which ports
//! have spare capacity. A scan intersects the two a 64-port word at a time instead of walking
//! every flow.

#[derive(Debug, Default, Clone)]
pub struct PortBits {
    words: usize,
    bits: Vec<u64>,
}

impl PortBits {
    /// `rows` empty rows of `cols` bits each.
    pub fn reset(&mut self, rows: usize, cols: usize) {
        self.words = cols.div_ceil(64);
        self.bits.clear();
        self.bits.resize(rows * self.words, 0);
    }

    pub fn words(&self) -> usize {
        self.words
    }

    /// Word `i` of row `row`.
    pub fn word(&self, row: usize, i: usize) -> u64 {
        self.bits[row * self.words + i]
    }

    /// The columns set in `row`, in order.
    pub fn row(&self, row: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.words).flat_map(move |i| ones(i, self.word(row, i)))
    }

    pub fn contains(&self, row: usize, col: usize) -> bool {
        self.word(row, col / 64) >> (col % 64) & 1 == 1
    }

    pub fn set(&mut self, row: usize, col: usize, on: bool) {
        let w = &mut self.bits[row * self.words + col / 64];
        let bit = 1u64 << (col % 64);
        if on {
            *w |= bit;
        } else {
            *w &= !bit;
        }
    }
}

/// The positions of the ones of `word`, the `i`-th word of a row, as column indices.
pub fn ones(i: usize, mut word: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (word != 0).then(|| {
            let b = word.trailing_zeros() as usize;
            word &= word - 1;
            i * 64 + b
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_independent_and_ones_come_in_order() {
        let mut b = PortBits::default();
        b.reset(2, 130);
        for c in [0, 63, 64, 129] {
            b.set(1, c, true);
        }
        b.set(1, 63, false);
        assert!(!b.contains(0, 0) && b.contains(1, 0) && !b.contains(1, 63));
        let got: Vec<usize> = (0..b.words()).flat_map(|i| ones(i, b.word(1, i))).collect();
        assert_eq!(got, vec![0, 64, 129]);
    }
}
