use crate::schedule::barrier;
use crate::{Group, GroupError};

impl Group {
    /// Returns only after every member has entered the barrier (dissemination: ceil(log2 M)
    /// rounds of one empty message each).
    pub fn barrier(&mut self) -> Result<(), GroupError> {
        let size = self.size();
        let rounds = barrier::rounds(size);
        let base = self.reserve(rounds);
        for j in 0..rounds {
            let rd = barrier::round(size, self.rank(), j);
            let to = rd.send_to.expect("dissemination always sends");
            let from = rd.recv_from.expect("dissemination always receives");
            self.xchg(base, j, vec![(to, Vec::new())], &[from], None)?;
        }
        Ok(())
    }
}
