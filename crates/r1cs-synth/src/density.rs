//! Density bit vectors: which variables a query needs a base point for.

/// A growable bit vector, least significant bit first in 64-bit words, with a running popcount.
///
/// Same layout and meaning as bellperson's density tracker: bit `i` is set when variable `i` appears with a non-zero coefficient in the query's linear combinations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Density {
    words: Vec<u64>,
    len: usize,
    ones: usize,
}

impl Density {
    /// An empty vector.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty vector with room for `bits` bits.
    pub fn with_capacity(bits: usize) -> Self {
        Self {
            words: Vec::with_capacity(bits.div_ceil(64)),
            len: 0,
            ones: 0,
        }
    }

    /// Makes room for `bits` more bits.
    pub fn reserve(&mut self, bits: usize) {
        let words = (self.len + bits).div_ceil(64);
        self.words
            .reserve_exact(words.saturating_sub(self.words.len()));
    }

    /// Empties the vector, keeping its memory.
    pub fn clear(&mut self) {
        self.words.clear();
        self.len = 0;
        self.ones = 0;
    }

    /// Appends one unset bit.
    #[inline]
    pub fn push_unset(&mut self) {
        if self.len % 64 == 0 {
            self.words.push(0);
        }
        self.len += 1;
    }

    /// Sets bit `i`.
    ///
    /// # Panics
    /// If `i >= self.len()`.
    #[inline]
    pub fn set(&mut self, i: usize) {
        assert!(i < self.len, "density bit {i} out of range {}", self.len);
        let (w, b) = (i / 64, i % 64);
        let mask = 1u64 << b;
        if self.words[w] & mask == 0 {
            self.words[w] |= mask;
            self.ones += 1;
        }
    }

    /// Bit `i`.
    #[inline]
    pub fn get(&self, i: usize) -> bool {
        i < self.len && self.words[i / 64] >> (i % 64) & 1 == 1
    }

    /// Number of bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no bit.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> usize {
        self.ones
    }

    /// The words, least significant bit first.
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    /// Indices of the set bits, ascending.
    pub fn iter_ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(w, &word)| {
            let mut word = word;
            std::iter::from_fn(move || {
                if word == 0 {
                    return None;
                }
                let b = word.trailing_zeros() as usize;
                word &= word - 1;
                Some(w * 64 + b)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_count_and_iterate() {
        let mut d = Density::new();
        for _ in 0..130 {
            d.push_unset();
        }
        for i in [0, 63, 64, 129, 64] {
            d.set(i);
        }
        assert_eq!(d.len(), 130);
        assert_eq!(d.count_ones(), 4);
        assert!(d.get(63) && d.get(64) && !d.get(65) && !d.get(1000));
        assert_eq!(d.iter_ones().collect::<Vec<_>>(), vec![0, 63, 64, 129]);
        assert_eq!(d.words(), &[1 | 1 << 63, 1, 2]);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn set_out_of_range_panics() {
        let mut d = Density::new();
        d.push_unset();
        d.set(1);
    }
}
